"""The manual (docs/): ``mkdocs build --strict -f docs/mkdocs.yml`` builds it with its
figures, every figure a page shows is drawn by an example script that the page names, and a
script that fails fails the build.  tests/commands/test_readme.py runs the pages' ``$``
commands and Python blocks."""

import importlib.util
import re
import subprocess
import sys
from html.parser import HTMLParser

import pytest

from conftest import ROOT

DOCS = ROOT / "docs"
PAGES = DOCS / "pages"
EXAMPLES = DOCS / "examples"
FIGURE = re.compile(r"!\[[^\]]*\]\(((?:\.\./)*)figures/([\w-]+)\.png\)")
IMAGE = re.compile(r"!\[[^\]]*\]\(([^)\s]+)\)")
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def pages():
    return sorted(PAGES.rglob("*.md"))


def figure_references():
    """[(page, name)] of every ``![...](figures/NAME.png)`` of the pages."""
    found = []
    for page in pages():
        for up, name in FIGURE.findall(page.read_text(encoding="utf-8")):
            depth = len(page.relative_to(PAGES).parts) - 1
            assert up == "../" * depth, f"{page}: figures/{name}.png from the wrong folder"
            found.append((page, name))
    return found


def test_every_image_is_a_drawn_figure():
    """A page shows no picture but the figures the examples draw (nothing else is built)."""
    for page in pages():
        for target in IMAGE.findall(page.read_text(encoding="utf-8")):
            assert FIGURE.fullmatch(f"![]({target})"), f"{page}: {target} is not figures/*.png"


def test_every_figure_is_drawn_by_the_example_its_page_names():
    references = figure_references()
    shown = {name for _, name in references}
    scripts = {path.stem for path in EXAMPLES.glob("*.py")}
    assert len(shown) >= 4
    assert shown == scripts, f"figures without a script: {shown - scripts}; " \
        f"scripts no page shows: {scripts - shown}"
    for page, name in references:
        text = page.read_text(encoding="utf-8")
        assert f"python docs/examples/{name}.py {name}.png" in text, \
            f"{page} shows figures/{name}.png without the command that draws it"


def _figures_hook():
    spec = importlib.util.spec_from_file_location("figures_hook", DOCS / "hooks" / "figures.py")
    module = importlib.util.module_from_spec(spec)
    pytest.importorskip("mkdocs", reason="mkdocs is not installed: pip install -e '.[docs]'")
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("body", [
    "import sys\nprint('drawing'); sys.exit(3)\n",
    "import sys\nopen(sys.argv[1], 'w').write('not a picture')\n",
    "print('forgot to save')\n",
])
def test_a_script_that_draws_no_figure_fails_the_build(body, tmp_path):
    hook = _figures_hook()
    script = tmp_path / "broken.py"
    script.write_text(body)
    from mkdocs.exceptions import PluginError
    with pytest.raises(PluginError, match=r"docs/examples/broken\.py \(exit status \d\) "
                                          r"drew no figure"):
        hook.draw(script, tmp_path / "broken.png")


class _Images(HTMLParser):
    def __init__(self):
        super().__init__()
        self.sources = []

    def handle_starttag(self, tag, attrs):
        if tag == "img":
            self.sources.append(dict(attrs)["src"])


def test_mkdocs_build_strict_makes_the_site_with_its_figures(tmp_path):
    for module in ("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers.python",
                   "matplotlib"):
        pytest.importorskip(module, reason=f"{module} is not installed (the docs extra): "
                                           "pip install -e '.[docs]'")
    site = tmp_path / "site"
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict",
                           "-f", str(DOCS / "mkdocs.yml"), "-d", str(site)],
                          cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-5000:]
    for name in {name for _, name in figure_references()}:
        assert (site / "figures" / f"{name}.png").read_bytes().startswith(PNG_SIGNATURE)
    shown = 0
    for html in site.rglob("*.html"):
        parser = _Images()
        parser.feed(html.read_text(encoding="utf-8"))
        for src in parser.sources:
            if src.startswith(("http:", "https:", "data:")):
                continue
            target = (html.parent / src).resolve()
            assert target.is_file(), f"{html.relative_to(site)} shows {src}, not built"
            shown += src.endswith(".png")
    assert shown >= len({name for _, name in figure_references()})
    # the API reference is generated from the docstrings, not empty
    reference = (site / "reference" / "estimators.html").read_text(encoding="utf-8")
    assert 'id="svmmap.estimator.SVMMap.fit"' in reference


def test_front_door_is_short_and_links_into_the_manual():
    """README.md, the front door: at most 200 lines, and every relative link resolves."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200
    links = re.findall(r"\]\(([^)\s#]+)(?:#[^)]*)?\)", text)
    local = [link for link in links if not link.startswith(("http:", "https:"))]
    assert any(link.startswith("docs/pages/") for link in local)
    for link in local:
        assert (ROOT / link).exists(), f"README.md links to missing {link}"
