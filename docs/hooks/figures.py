"""MkDocs hook: the manual's figures are drawn when the site is built.

Every script ``docs/examples/NAME.py`` is run as ``python docs/examples/NAME.py OUT.png``
(from the repository root, with the interpreter that runs mkdocs, so with the installed
svmmap) and its picture is served as ``figures/NAME.png``; a page shows it with
``![...](figures/NAME.png)`` (from a page in a subfolder, ``../figures/NAME.png``).  A script
that fails, or writes no PNG, fails the build with the script's last lines of output.
"""

import subprocess
import sys
import tempfile
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
ROOT = EXAMPLES.parents[1]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def draw(script, out):
    """Run one example script; the bytes of the PNG it writes to ``out``."""
    proc = subprocess.run([sys.executable, str(script), str(out)], cwd=ROOT,
                          capture_output=True, text=True)
    picture = out.read_bytes() if out.is_file() else b""
    if proc.returncode != 0 or not picture.startswith(PNG_SIGNATURE):
        tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-15:])
        raise PluginError(f"docs/examples/{script.name} (exit status {proc.returncode}) "
                          f"drew no figure:\n{tail}")
    return picture


def on_files(files, config):
    with tempfile.TemporaryDirectory(prefix="svmmap-figures-") as scratch:
        for script in sorted(EXAMPLES.glob("*.py")):
            picture = draw(script, Path(scratch) / f"{script.stem}.png")
            files.append(File.generated(config, f"figures/{script.stem}.png",
                                        content=picture))
    return files
