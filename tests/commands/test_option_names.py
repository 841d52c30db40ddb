"""One name per concept: every command-line option that sets an estimator parameter is named
as the parameter (``--max-iter`` / ``max_iter``; other spellings are aliases), and the manual's
glossary lists it."""

import re

import pytest

from svmmap import SVMMap
from svmmap.baselines import AdaRank, PRank, RankBoost
from svmmap.commands import baseline_learn as baseline_cli
from svmmap.features import BinnedFeatureMap
from svmmap.model_selection import SVMMapCV

from conftest import ROOT

GLOSSARY = ROOT / "docs" / "pages" / "glossary.md"


def glossary():
    """The command-line column of the manual's glossary table (docs/pages/glossary.md), as one
    string."""
    text = GLOSSARY.read_text(encoding="utf-8")
    table = text[text.index("# One name per concept"):]
    table = table[:table.index("\n## ")] if "\n## " in table else table
    # a | inside a code span (`-w 0|3|4`) is not a cell border (Python-Markdown's tables)
    rows = [re.sub(r"`[^`]*`", lambda m: m.group(0).replace("|", "\\|"), row)
            for row in table.splitlines() if row.startswith("| ")]
    cells = [re.split(r"(?<!\\)\|", row) for row in rows]
    return " ".join(row[2] for row in cells if len(row) >= 5)


#: options of the learn commands that set no estimator parameter: how the command runs, where
#: its inputs are and how they are stored (--dtype: load_svmlight's dtype), and svmmap_learn's
#: --acc-variant (a shorthand for cost_ratio / feature_map)
COMMAND_ONLY = {"help", "debug", "group", "query_weights", "dask_workers", "scheduler",
                "acc_variant", "method", "force", "dtype"}


def parameter_options(parser, estimators):
    """(destination, its long option strings) of every option that is not COMMAND_ONLY:
    each must set a parameter of one of ``estimators`` or fit's ``eval_set``."""
    names = {"eval_set"}.union(*(e().get_params(deep=False) for e in estimators))
    for action in parser._actions:
        if action.option_strings and action.dest not in COMMAND_ONLY:
            assert action.dest in names, f"{action.option_strings} sets no parameter"
            yield action.dest, [o for o in action.option_strings if o.startswith("--")]


def learn_parsers():
    from svmmap.commands import learn as cli

    return [("svmmap_learn", cli.learn_parser(), (SVMMap, SVMMapCV, BinnedFeatureMap)),
            ("svmmap_baseline_learn", baseline_cli._learn_parser(),
             (AdaRank, RankBoost, PRank))]


@pytest.mark.parametrize("command, parser, estimators", learn_parsers())
def test_options_are_named_as_their_parameters(command, parser, estimators):
    found = list(parameter_options(parser, estimators))
    assert len(found) >= 5
    listed = glossary()
    for dest, longs in found:
        canonical = "--" + dest.replace("_", "-")
        assert longs and longs[0] == canonical, f"{command}: {longs} sets {dest}"
        assert re.search(f"`{re.escape(canonical)}\\b", listed), \
            f"{command} {canonical} is not in the manual's glossary"
