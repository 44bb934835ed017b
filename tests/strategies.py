"""Hypothesis strategies shared by the tests: ragged batches whose scores come from a
small alphabet, so ties (within a query and across the cutoff) are the common case."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import settings, strategies as st


def examples(scale: float = 1.0) -> int:
    """How many examples a property test draws: ``scale`` times the loaded hypothesis
    profile's ``max_examples`` (``tests/conftest.py``: ``dev`` 25, ``ci`` 100, ``long``
    1,000), at least one. A test that needs more examples than most says so with a
    larger scale, never with a number of its own.

    >>> examples(2) == 2 * settings.default.max_examples
    True
    """
    return max(1, round(scale * settings.default.max_examples))


def profile() -> str:
    """The name of the loaded hypothesis profile (``dev``, ``ci`` or ``long``)."""
    return settings.get_current_profile_name().split("-with-")[0]

# a few values, including the awkward ones: signed zeros and infinities are ordinary scores
SCORE_ALPHABET = [-math.inf, -1.5, -0.0, 0.0, 0.25, 1.0, 3.0, math.inf]
NAN_ALPHABET = SCORE_ALPHABET + [math.nan]
INT_LABELS = st.integers(0, 4)
FRACTIONAL_LABELS = st.sampled_from([0.0, 0.5, 1.0, 1.25, 2.0, 3.5])
NEGATIVE_LABELS = st.integers(-2, 3)

# (score dtype, label dtype) pairs exercised by the differential tests. Each pair is one
# compiled specialisation, so the list is short on purpose.
DTYPES = [
    (np.float64, np.int64),
    (np.float32, np.int8),
    (np.float64, np.float64),
    (np.int32, np.uint8),
]


@st.composite
def batches(draw, *, labels=INT_LABELS, scores=st.sampled_from(SCORE_ALPHABET),
            max_queries=8, max_rows=12, long_rows=0):
    """A ragged batch: (scores list, labels list, offsets list). Queries may be empty."""
    n_queries = draw(st.integers(0, max_queries))
    sizes = draw(st.lists(st.integers(0, max_rows), min_size=n_queries, max_size=n_queries))
    if long_rows and n_queries and draw(st.booleans()):
        sizes[draw(st.integers(0, n_queries - 1))] = draw(st.integers(max_rows, long_rows))
    n = sum(sizes)
    s = draw(st.lists(scores, min_size=n, max_size=n))
    r = draw(st.lists(labels, min_size=n, max_size=n))
    offsets = [0]
    for size in sizes:
        offsets.append(offsets[-1] + size)
    return s, r, offsets


def cutoffs(max_k=15):
    """k as None, an int, or a list of ints (possibly repeated, unsorted)."""
    one = st.integers(1, max_k)
    return st.one_of(st.none(), one, st.lists(one, min_size=1, max_size=4))


def as_arrays(batch, score_dtype=np.float64, label_dtype=np.float64):
    s, r, offsets = batch
    return (np.asarray(s, dtype=score_dtype), np.asarray(r, dtype=label_dtype),
            np.asarray(offsets, dtype=np.int64))


def integral_scores(batch):
    """The batch with scores mapped to integers that keep their order (for int dtypes)."""
    s, r, offsets = batch
    table = {v: i - 4 for i, v in enumerate(SCORE_ALPHABET)}
    return [table[v] for v in s], r, offsets
