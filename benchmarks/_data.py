"""Seeded benchmark inputs, shared by ``benchmarks/`` and ``scripts/bench_core.py``.

* :func:`ragged` -- a CSR batch of search queries (scores, labels, offsets);
* :func:`dense` -- a tie-heavy ``(n_rows, n_cols)`` matrix pair for ``ndcg_score``;
* :func:`parallel_sum` -- the memory-bandwidth probe: a Numba ``prange`` loop that
  reads the same two arrays ``fastndcg.ndcg`` reads, once, and does nothing else;
* :func:`record_rows_per_s` -- stores rows/s in a pytest-benchmark ``extra_info``.

Sizes: :func:`sizes` gives small sizes (20,000 queries; 500 x 50) by default, so
the test suite (and CI) runs the benchmarks quickly with ``--benchmark-disable``;
``FASTNDCG_BENCH_FULL=1`` (or ``quick=False``) gives the full sizes (1,000,000
queries of ~50 rows; a 20,000 x 50 matrix) that the targets refer to.
"""

from __future__ import annotations

import os

import numba
import numpy as np

FULL_SIZES = {"n_queries": 1_000_000, "dense_rows": 20_000, "dense_cols": 50}
QUICK_SIZES = {"n_queries": 20_000, "dense_rows": 500, "dense_cols": 50}


def is_quick() -> bool:
    """Small sizes unless ``FASTNDCG_BENCH_FULL=1`` (read at call time)."""
    return os.environ.get("FASTNDCG_BENCH_FULL", "").strip().lower() not in ("1", "true", "yes", "on")


def sizes(quick: bool | None = None) -> dict:
    """Benchmark sizes; ``quick=None`` follows ``FASTNDCG_BENCH_FULL``."""
    if quick is None:
        quick = is_quick()
    return dict(QUICK_SIZES if quick else FULL_SIZES)


def ragged(n_queries: int, mean_rows: int = 50, seed: int = 0):
    """A ragged batch of ``n_queries`` queries.

    Query sizes are uniform on ``mean_rows // 2 .. mean_rows + mean_rows // 2``
    (25..75 for the default 50, so ~50 rows on average); scores are float32 in
    [0, 1) rounded to 2 decimals (so ties occur inside a query), labels int8
    uniform on 0..4.

    Returns ``(scores float32, labels int8, offsets int64)`` with
    ``len(offsets) == n_queries + 1`` and ``offsets[-1] == len(scores)``.
    """
    rng = np.random.default_rng(seed)
    half = mean_rows // 2
    lengths = rng.integers(mean_rows - half, mean_rows + half + 1, size=n_queries, dtype=np.int64)
    offsets = np.zeros(n_queries + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    n_rows = int(offsets[-1])
    scores = np.round(rng.random(n_rows, dtype=np.float32), 2)
    labels = rng.integers(0, 5, size=n_rows, dtype=np.int8)
    return scores, labels, offsets


def dense(n_rows: int = 20_000, n_cols: int = 50, seed: int = 0):
    """A tie-heavy dense pair for ``ndcg_score``: ``(y_true, y_score)``.

    ``y_true`` holds int64 labels uniform on 0..4; ``y_score`` float64 in [0, 1)
    rounded to 1 decimal, so each row of 50 has many tied scores (11 values).
    """
    rng = np.random.default_rng(seed)
    y_true = rng.integers(0, 5, size=(n_rows, n_cols), dtype=np.int64)
    y_score = np.round(rng.random((n_rows, n_cols)), 1)
    return y_true, y_score


@numba.njit(parallel=True)
def parallel_sum(scores, labels):
    """Sum of ``scores[i] + labels[i]``: one parallel pass over both arrays."""
    total = 0.0
    for i in numba.prange(len(scores)):
        total += scores[i] + labels[i]
    return total


def record_rows_per_s(benchmark, n_rows: int, n_queries: int | None = None) -> None:
    """Record ``n_rows`` (and ``n_queries``) in ``benchmark.extra_info``, with rows/s.

    ``rows_per_s_best`` and ``rows_per_s_mean`` come from the best and the mean
    round; they are absent with ``--benchmark-disable``, where the function ran
    once, untimed, and ``benchmark`` has no ``stats``.
    """
    benchmark.extra_info["n_rows"] = n_rows
    if n_queries is not None:
        benchmark.extra_info["n_queries"] = n_queries
    stats = getattr(benchmark, "stats", None)
    if stats is None:  # --benchmark-disable: the function ran once, untimed
        return
    benchmark.extra_info["rows_per_s_best"] = n_rows / stats.stats.min
    benchmark.extra_info["rows_per_s_mean"] = n_rows / stats.stats.mean
