"""The parameter table (svmmap.core.params.PARAMETERS) is the one place a training parameter is
declared: every estimator's signature, svmmap_learn's options and the manual's glossary and
command-line page agree with it, and the checks fail on a copy that does not."""

import dataclasses
import inspect
import re

import pytest

from svmmap import SVMMap
from svmmap.commands.learn_options import learn_parser
from svmmap.core import params as table
from svmmap.model_selection import SVMMapCV

from conftest import ROOT

PAGES = ROOT / "docs" / "pages"


def _stage_defaults():
    pyterrier = pytest.importorskip("svmmap.pyterrier")
    return pyterrier._defaults()


def _dask_signature():
    dask = pytest.importorskip("svmmap.dask")
    return _signature(dask.DaskSVMMap)


def _signature(cls):
    return {name: p.default for name, p in inspect.signature(cls.__init__).parameters.items()
            if name != "self"}


#: place -> its parameters and their defaults, as the code has them
PLACES = {
    table.SVMMAP: lambda: _signature(SVMMap),
    table.SVMMAP_CV: lambda: _signature(SVMMapCV),
    table.DASK: _dask_signature,
    table.STAGE: _stage_defaults,
    table.LEARN: lambda: {a.dest: a.default for a in learn_parser()._actions
                          if a.dest in table.defaults_for(table.LEARN)},
}


def mismatches(place, parameters, found):
    """What differs between the defaults ``found`` at ``place`` and the table
    ``parameters``: names missing on either side and defaults that differ."""
    declared = {p.name: p.default_in(place) for p in parameters if place in p.places
                and (place != table.LEARN or p.flags)}
    problems = [f"{name}: not in the table" for name in found.keys() - declared.keys()]
    problems += [f"{name}: declared, not at {place}" for name in declared.keys() - found.keys()]
    problems += [f"{name}: default {found[name]!r}, the table's {declared[name]!r}"
                 for name in found.keys() & declared.keys() if found[name] != declared[name]]
    return problems


@pytest.mark.parametrize("place", PLACES)
def test_every_place_takes_the_tables_parameters_with_its_defaults(place):
    assert mismatches(place, table.PARAMETERS, PLACES[place]()) == []


def _wrong_copies():
    """The table with one row changed: another default, a place left out, a row more."""
    rows = list(table.PARAMETERS)
    k = next(i for i, p in enumerate(rows) if p.name == "max_iter")
    yield "default", [*rows[:k], dataclasses.replace(rows[k], default=5), *rows[k + 1:]]
    yield "place", [*rows[:k], dataclasses.replace(rows[k], places=frozenset({table.SVMMAP})),
                    *rows[k + 1:]]
    yield "extra", [*rows, dataclasses.replace(rows[k], name="max_rounds")]


@pytest.mark.parametrize("kind, wrong", list(_wrong_copies()))
@pytest.mark.parametrize("place", [table.SVMMAP, table.SVMMAP_CV, table.LEARN])
def test_a_wrong_table_is_caught(place, kind, wrong):
    if kind == "place" and place == table.SVMMAP:
        pytest.skip("the changed row still applies to SVMMap")
    assert mismatches(place, wrong, PLACES[place]())


def test_the_rules_and_defaults_validation_uses_come_from_the_table():
    assert table.SVMMAP_RULES == table.rules_for(table.SVMMAP)
    assert SVMMap._parameter_rules == table.rules_for(table.SVMMAP)
    assert SVMMapCV._parameter_rules == table.rules_for(table.SVMMAP_CV)
    assert table.SVMMAP_DEFAULTS == _signature(SVMMap)
    assert set(table.SVMMAP_SCOPES) == {"cache_size", "cost_ratio"}


def test_svmmap_learn_has_one_option_per_row_in_the_tables_order():
    rows = [p for p in table.PARAMETERS if p.flags]
    options = [a for a in learn_parser()._actions if a.dest in {p.name for p in rows}]
    assert [a.dest for a in options] == [p.name for p in rows]
    for action, row in zip(options, rows):
        assert action.option_strings[:len(row.flags)] == list(row.flags)
        assert action.help and action.help == row.argparse()[1]["help"]


def _table_cells(page):
    """The rows of a page's Markdown table, as lists of cells (a | inside a code span is not a
    cell border)."""
    rows = [re.sub(r"`[^`]*`", lambda m: m.group(0).replace("|", "\\|"), line)
            for line in (PAGES / page).read_text(encoding="utf-8").splitlines()
            if line.startswith("| ")]
    return [re.split(r"(?<!\\)\|", row)[1:-1] for row in rows]


@pytest.mark.parametrize("row", [p for p in table.PARAMETERS if p.flags or p.via],
                         ids=lambda p: p.name)
def test_the_glossary_lists_every_option_of_the_table(row):
    """Each option's long name is in the glossary's command-line column, and an estimator
    parameter's name in the same row's Python column."""
    cells = _table_cells("glossary.md")
    flags = row.flags or table.parameter(row.via).flags
    long = next(f for f in flags if f.startswith("--"))
    assert any(f"`{long}" in c[1] for c in cells), f"{long} is not in the glossary"
    if row.rules is not None:
        matches = [c for c in cells if any(re.search(f"`{re.escape(f)}(?![-\\w])", c[1])
                                           for f in flags)]
        assert any(f"`{row.name}`" in c[2] or f"{row.name}=" in c[2] for c in matches), \
            f"{row.name} is not in the glossary row of {flags}"


@pytest.mark.parametrize("row", [p for p in table.PARAMETERS if p.flags], ids=lambda p: p.name)
def test_the_command_line_page_names_every_option_of_the_table(row):
    page = (PAGES / "command-line.md").read_text(encoding="utf-8")
    assert any(re.search(f"{re.escape(flag)}(?![-\\w])", page) for flag in row.flags), \
        f"docs/pages/command-line.md names none of {row.flags}"
