"""Text to index terms: lower-case, split on non-alphanumerics, drop stop words and
one-character tokens, stem.

* Tokens: maximal runs of ``[a-z0-9]`` after lower-casing (so ``lift-drag`` is two tokens and
  ``/destalling/`` is one).
* Stop list: scikit-learn's English list (``sklearn.feature_extraction.text.ENGLISH_STOP_WORDS``,
  318 words, from the Glasgow IR group's list), the same for every collection.
* Stemmer: the Snowball English ("Porter2") stemmer of PyStemmer (the ``experiments`` extra:
  ``pip install 'svmmap[experiments]'``), imported when the first text is analysed.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

if TYPE_CHECKING:
    from collections.abc import Iterable

from ..errors import SVMMapError

_TOKEN = re.compile(r"[a-z0-9]+")


class Analyzer:
    """``analyze(text) -> [term]``: the terms of one text, in text order (module docstring)."""

    def __init__(self, stop_words: Iterable[str] = ENGLISH_STOP_WORDS) -> None:
        self.stop_words = frozenset(stop_words)
        self._stemmer = None

    def _stem(self, tokens):
        if self._stemmer is None:
            try:
                import Stemmer
            except ImportError:
                raise SVMMapError("the retrieval runs need PyStemmer: pip install "
                                  "'svmmap[experiments]' (or pip install PyStemmer)") from None
            self._stemmer = Stemmer.Stemmer("english")
        return self._stemmer.stemWords(tokens)

    def analyze(self, text: str) -> list[str]:
        """The terms of ``text``, in text order (module docstring)."""
        tokens = [t for t in _TOKEN.findall(text.lower())
                  if len(t) > 1 and t not in self.stop_words]
        return self._stem(tokens)
