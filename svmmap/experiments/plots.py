"""Figures of the experiments (matplotlib, the optional ``plot`` extra, imported lazily).

* :func:`ap_scatter`: per-query AP of SVM-MAP (y axis) against a baseline (x axis), with the
  diagonal; points above it are queries SVM-MAP wins.
* :func:`pr_curves`: mean 11-point interpolated precision-recall curve of every method.

    python -m svmmap.experiments.plots --results DIR [--baseline svm-roc]

reads ``letor.json`` or ``trials.json`` from DIR (written by :mod:`.letor` / :mod:`.trials`)
and writes ``ap_scatter_<baseline>.png`` and ``precision_recall.png`` there.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..commands.common import ArgumentParser
from ..commands.console import print_output
from ..errors import SVMMapError
from ..metrics import RECALL_LEVELS

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from ..core._typing import PathLike, Vector


def _pyplot():
    try:
        import matplotlib
    except ImportError:
        raise SVMMapError("plots need matplotlib: pip install 'svmmap[plot]' "
                          "(or pip install matplotlib)") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def ap_scatter(path: PathLike, ap_map: Vector, ap_other: Vector, label_other: str,
               title: str = "", measure: str = "AP") -> None:
    """Scatter of a per-query measure (``measure``: "AP", or e.g. "AP summed over 50 trials"),
    SVM-MAP (y) against ``label_other`` (x); saves a PNG."""
    plt = _pyplot()
    ours, theirs = np.asarray(ap_map), np.asarray(ap_other)
    top = max(1.0, float(np.max(ours, initial=0)), float(np.max(theirs, initial=0)))
    fig, ax = plt.subplots(figsize=(5, 5), dpi=120)
    ax.plot([0, top], [0, top], color="0.6", linewidth=1, zorder=1)
    ax.scatter(theirs, ours, s=14, alpha=0.7, edgecolors="none", zorder=2)
    wins, losses = int((ours > theirs).sum()), int((ours < theirs).sum())
    ax.set(xlim=(0, top), ylim=(0, top), aspect="equal", xlabel=f"{label_other}: {measure}",
           ylabel=f"SVM-MAP: {measure}",
           title=f"{title}\nper query: SVM-MAP above the diagonal {wins}, below {losses}")
    ax.grid(True, color="0.92")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def pr_curves(path: PathLike, curves: Mapping[str, Sequence[float]], title: str = "") -> None:
    """Mean interpolated precision at recall 0, 0.1, ..., 1 of each method
    (``{label: 11 values}``); saves a PNG."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6, 4.5), dpi=120)
    for label, values in curves.items():
        ax.plot(RECALL_LEVELS, values, marker="o", markersize=3, label=label)
    ax.set(xlim=(0, 1), ylim=(0, 1), xlabel="recall", ylabel="interpolated precision",
           title=title or "11-point interpolated precision-recall")
    ax.grid(True, color="0.92")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def describe(results: Mapping[str, Any], source: str) -> tuple[str, str]:
    """(title, per-query measure) of a letor.json / trials.json result: the data set, which
    test queries (folds, or trials of the train/vali/test sizes) and the convention."""
    data = Path(str(results["data"]).split()[0]).name
    if source == "trials.json":
        n, sizes = results["trials"], results["sizes"]
        return (f"{data}: test queries of {n} trials ({sizes[0]}/{sizes[1]}/{sizes[2]} "
                "train/vali/test), LETOR convention", "AP summed over the trials testing it")
    folds = sorted({str(f) for m in results["methods"].values() for f in m["folds"]},
                   key=lambda f: (len(f), f))
    return (f"{data}: test queries of fold{'s' if len(folds) > 1 else ''} "
            f"{', '.join(folds)}, LETOR convention", "AP")


def _read_results(path):
    """(results, describe(results)) of a letor.json / trials.json, or the one-line error
    naming the file when it is not JSON or not such a result (e.g. ``{}``): every method needs
    a label, 11 interpolated precisions and a number for each query, the same queries for
    every method."""
    try:
        results = json.loads(path.read_text(encoding="utf-8"))
        queries = None
        for name, method in results["methods"].items():
            per_query = {str(q): float(v) for q, v in dict(method["per_query"]).items()}
            if not isinstance(method["label"], str) or \
                    len([float(v) for v in method["pr11"]]) != len(RECALL_LEVELS):
                raise ValueError(f"method {name!r}: a label and {len(RECALL_LEVELS)} "
                                 "precisions (pr11) are needed")
            if queries is not None and set(per_query) != queries:
                raise ValueError(f"method {name!r}: per_query holds other queries than the "
                                 "first method's")
            queries = set(per_query)
        return results, describe(results, path.name)
    except (ValueError, KeyError, TypeError, AttributeError, IndexError) as exc:
        what = "not JSON" if isinstance(exc, json.JSONDecodeError) else \
            f"{type(exc).__name__}: {exc}"
        raise SVMMapError(f"{path}: not a result file of python -m svmmap.experiments.letor "
                          f"or .trials ({what})") from None


def plot_results(folder: PathLike, baselines: Iterable[str] | None = None) -> list[Path]:
    """Draw the figures of a letor/trials result folder; returns the written paths."""
    folder = Path(folder)
    found = [folder / name for name in ("letor.json", "trials.json") if (folder / name).exists()]
    if not found:
        raise SVMMapError(f"{folder}: no letor.json or trials.json")
    results, (title, measure) = _read_results(found[0])
    methods = results["methods"]
    if "svm-map" not in methods:
        raise SVMMapError(f"{found[0]}: no svm-map results to compare against")
    written = []
    ref = methods["svm-map"]["per_query"]
    for name in baselines or [n for n in methods if n != "svm-map"]:
        if name not in methods:
            raise SVMMapError(f"{found[0]}: no results for {name!r}")
        keys = sorted(ref)
        path = folder / f"ap_scatter_{name}.png"
        ap_scatter(path, [ref[k] for k in keys], [methods[name]["per_query"][k] for k in keys],
                   methods[name]["label"], title, measure)
        written.append(path)
    path = folder / "precision_recall.png"
    pr_curves(path, {m["label"]: m["pr11"] for m in methods.values()},
              f"{title}\nmean 11-point interpolated precision-recall")
    written.append(path)
    return written


def main(argv: Sequence[str] | None = None) -> int:
    """The command (module docstring); its exit status."""
    parser = ArgumentParser(prog="python -m svmmap.experiments.plots",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", required=True, help="output folder of letor or trials")
    parser.add_argument("--baseline", action="append",
                        help="method to scatter against SVM-MAP (repeatable; default all)")
    args = parser.parse_args(argv)
    try:
        written = plot_results(args.results, args.baseline)
    except SVMMapError as err:
        parser.exit(1, f"error: {err}\n")
    return print_output(parser.prog, "\n".join(map(str, written)))


if __name__ == "__main__":
    sys.exit(main())
