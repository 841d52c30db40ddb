"""svmmap_baseline_classify: svmmap_classify (svmmap.commands.classify) under the baselines'
name; it reads a model file of any kind, so the two commands are one."""

from __future__ import annotations

from .classify import classify_main as _classify_main

__all__ = ["classify_main"]


def classify_main(argv: list[str] | None = None) -> int:
    """svmmap_baseline_classify: svmmap_classify under another name (it reads every kind)."""
    return _classify_main(argv, prog="svmmap_baseline_classify")
