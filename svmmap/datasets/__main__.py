"""``python -m svmmap.datasets list`` names the bundled data sets;
``python -m svmmap.datasets path NAME [SPLIT]`` prints a file's path, for the command line:

    svmmap_learn -c 10 "$(python -m svmmap.datasets path mq2008 train)" model.json
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from ..commands.console import print_output
from . import DATASETS, path

if TYPE_CHECKING:
    from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """The command (module docstring); its exit status."""
    parser = argparse.ArgumentParser(prog="python -m svmmap.datasets",
                                     description="The small real data sets bundled with svmmap.")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("list", help="name, split and path of every bundled file")
    where = commands.add_parser("path", help="print the path of one bundled file")
    where.add_argument("name", choices=sorted(DATASETS))
    where.add_argument("split", nargs="?", help="train, vali or test (mq2008); none otherwise")
    args = parser.parse_args(argv)
    try:
        if args.command == "list":
            lines = [f"{name}\t{split}\t{path(name, split)}"
                     for name, splits in DATASETS.items() for split in splits]
        else:
            lines = [str(path(args.name, args.split))]
    except (ValueError, FileNotFoundError) as err:
        parser.error(str(err))
    return print_output(parser.prog, "\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
