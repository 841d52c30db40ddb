"""The console scripts' entry points (setup.py ``console_scripts``).

Each imports its command inside a ``try``: Ctrl-C at any moment of start-up -- importing the
command, numpy, scipy and the extensions takes about a second -- prints one line and exits
with status 130, as Ctrl-C during the work does (svmmap.cli._run).  This module imports
nothing but the standard library, so the handling is in place before any heavy import.
"""

import importlib
import sys


def _command(prog, module, function):
    def main():
        try:
            return getattr(importlib.import_module(module), function)()
        except KeyboardInterrupt:
            print(f"{prog}: interrupted", file=sys.stderr)
            return 130

    main.__name__ = main.__qualname__ = function
    main.__doc__ = f"``{prog}``: {module}.{function}, Ctrl-C at start-up included."
    return main


learn_main = _command("svmmap_learn", "svmmap.cli", "learn_main")
classify_main = _command("svmmap_classify", "svmmap.cli", "classify_main")
baseline_learn_main = _command("svmmap_baseline_learn", "svmmap.baselines.cli", "learn_main")
baseline_classify_main = _command("svmmap_baseline_classify", "svmmap.baselines.cli",
                                  "classify_main")
