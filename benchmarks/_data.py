"""Seeded benchmark inputs and sizes, shared by the modules of ``benchmarks/``.

* :func:`ragged` -- a CSR batch of search queries (scores, labels, offsets), with
  chosen dtypes, equal list lengths (``fixed=True``) or no tied scores
  (``tie_free=True``);
* :func:`skewed` -- one huge query among many small ones;
* :func:`tie_free` -- the same batch with distinct scores inside every query;
* :func:`as_dense` -- a batch of equal-length queries as ``(y_true, y_score)`` matrices;
* :func:`dense` -- a tie-heavy ``(n_rows, n_cols)`` matrix pair for ``ndcg_score``;
* :func:`parallel_sum` -- the memory-bandwidth probe: a Numba ``prange`` loop that
  reads the same two arrays ``fastndcg.ndcg`` reads, once, and does nothing else;
* :func:`record_rows_per_s` -- stores rows/s in a pytest-benchmark ``extra_info``;
* :func:`describe` -- stores what a benchmark is for ``scripts/bench_report.py``:
  the system, its role (``"fastndcg"``, ``"peer"`` or ``"bound"``) and the case it
  is compared within.

Sizes: :func:`sizes` and :func:`shapes` give small sizes by default, so the test
suite (and CI) runs the benchmarks quickly with ``--benchmark-disable``;
``FASTNDCG_BENCH_FULL=1`` (or ``quick=False``) gives the full sizes that the
targets refer to (1,000,000 queries of ~50 rows; a 20,000 x 50 matrix; ~50M rows
for each shape of a real log).
"""

from __future__ import annotations

import os

import numba
import numpy as np

FULL_SIZES = {"n_queries": 1_000_000, "dense_rows": 20_000, "dense_cols": 50}
QUICK_SIZES = {"n_queries": 20_000, "dense_rows": 500, "dense_cols": 50}

# The shapes of real logs: rows a query -> queries, for the kernel (in memory), the
# Parquet logs (list mode: evaluate, its bare-read bound, DuckDB and polars) and the
# Parquet runs of qrels mode (~100 documents a query). Full sizes are ~50M rows a
# shape (10M at ~5 rows a query); quick ones ~200k-1M rows.
KERNEL_QUERIES = {"quick": {5: 40_000, 10: 20_000, 50: 20_000, 1000: 200},
                  "full": {5: 2_000_000, 10: 5_000_000, 50: 1_000_000, 1000: 50_000}}
LOG_QUERIES = {"quick": {10: 20_000, 50: 20_000}, "full": {10: 5_000_000, 50: 1_000_000}}
LOG_ROW_GROUP_ROWS = {"quick": 1 << 17, "full": 1 << 20}
QRELS_QUERIES = {"quick": 2_000, "full": 200_000}


def is_quick() -> bool:
    """Small sizes unless ``FASTNDCG_BENCH_FULL=1`` (read at call time)."""
    return os.environ.get("FASTNDCG_BENCH_FULL", "").strip().lower() not in ("1", "true", "yes", "on")


def sizes(quick: bool | None = None) -> dict:
    """Benchmark sizes; ``quick=None`` follows ``FASTNDCG_BENCH_FULL``."""
    if quick is None:
        quick = is_quick()
    return dict(QUICK_SIZES if quick else FULL_SIZES)


def shapes(quick: bool | None = None) -> dict:
    """Sizes of the real-log shapes: ``kernel_queries`` and ``log_queries`` (rows a
    query -> queries), ``log_row_group_rows`` and ``qrels_queries``."""
    if quick is None:
        quick = is_quick()
    mode = "quick" if quick else "full"
    return {"kernel_queries": dict(KERNEL_QUERIES[mode]), "log_queries": dict(LOG_QUERIES[mode]),
            "log_row_group_rows": LOG_ROW_GROUP_ROWS[mode], "qrels_queries": QRELS_QUERIES[mode]}


def ragged(n_queries: int, mean_rows: int = 50, seed: int = 0, *, score_dtype=np.float32,
           label_dtype=np.int8, fixed: bool = False, tie_free: bool = False):
    """A ragged batch of ``n_queries`` queries.

    Query sizes are uniform on ``mean_rows // 2 .. mean_rows + mean_rows // 2``
    (25..75 for the default 50, so ~50 rows on average), or all ``mean_rows`` with
    ``fixed=True``; scores are in [0, 1) rounded to 2 decimals (so ties occur
    inside a query), labels uniform on 0..4. Integer ``label_dtype`` gives the
    integers 0..4, a float one the halves 0, 0.5, .., 4 (fractional labels).
    ``tie_free=True`` replaces the scores by :func:`tie_free`'s.

    Returns ``(scores, labels, offsets int64)`` with ``len(offsets) == n_queries + 1``
    and ``offsets[-1] == len(scores)``; the defaults give float32 scores and int8
    labels (the same values whatever the other options' defaults).
    """
    rng = np.random.default_rng(seed)
    half = mean_rows // 2
    if fixed:
        lengths = np.full(n_queries, mean_rows, dtype=np.int64)
    else:
        lengths = rng.integers(mean_rows - half, mean_rows + half + 1, size=n_queries,
                               dtype=np.int64)
    offsets = np.zeros(n_queries + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    n_rows = int(offsets[-1])
    scores = np.round(rng.random(n_rows, dtype=np.float32), 2).astype(score_dtype, copy=False)
    if np.dtype(label_dtype).kind == "f":
        labels = (rng.integers(0, 9, size=n_rows, dtype=np.int8) / 2).astype(label_dtype)
    else:
        labels = rng.integers(0, 5, size=n_rows, dtype=np.int8).astype(label_dtype, copy=False)
    if tie_free:
        scores = _tie_free(scores, offsets, seed=seed)
    return scores, labels, offsets


def skewed(n_small: int, big_rows: int, small_rows: int = 10, seed: int = 0, **options):
    """One query of ``big_rows`` rows in the middle of ``n_small`` queries of ~``small_rows``.

    ``options`` go to :func:`ragged` (dtypes, ``tie_free``). Returns
    ``(scores, labels, offsets, big)`` where ``big`` is the index of the huge query.
    """
    s1, l1, o1 = ragged(n_small, small_rows, seed, **options)
    s2, l2, o2 = ragged(1, big_rows, seed + 1, fixed=True, **options)
    big = n_small // 2
    cut = int(o1[big])
    scores = np.concatenate([s1[:cut], s2, s1[cut:]])
    labels = np.concatenate([l1[:cut], l2, l1[cut:]])
    offsets = np.concatenate([o1[:big + 1], o1[big:] + big_rows])
    return scores, labels, offsets, big


def tie_free(scores: np.ndarray, offsets: np.ndarray, seed: int = 0) -> np.ndarray:
    """Scores with no tie inside any query, in ``scores``' dtype.

    Each query's scores become a random permutation of 0 .. n-1 (exact in float32
    up to 2**24 rows per query), so every tie-breaking rule gives the same order --
    needed where a peer breaks ties arbitrarily (ranx; scikit-learn's
    ``ignore_ties=True``).
    """
    n_q = len(offsets) - 1
    lengths = np.diff(offsets)
    query = np.repeat(np.arange(n_q, dtype=np.float64), lengths)
    order = np.argsort(query + np.random.default_rng(seed).random(len(query)), kind="stable")
    rank = np.arange(len(query), dtype=np.int64) - np.repeat(offsets[:-1], lengths)
    out = np.empty(len(query), dtype=scores.dtype)
    out[order] = rank
    return out


_tie_free = tie_free  # for ragged(), whose tie_free argument shadows the function


def as_dense(scores: np.ndarray, labels: np.ndarray, offsets: np.ndarray):
    """An equal-length batch as ``(y_true, y_score)`` of shape ``(n_queries, length)``.

    Views, not copies. Raises ``ValueError`` if the queries differ in length.
    """
    lengths = np.diff(offsets)
    if len(lengths) == 0 or (lengths != lengths[0]).any():
        raise ValueError("as_dense needs queries of equal length (ragged(..., fixed=True))")
    shape = (len(lengths), int(lengths[0]))
    return labels.reshape(shape), scores.reshape(shape)


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


ROLES = ("fastndcg", "peer", "bound")


def describe(benchmark, system: str, role: str = "fastndcg", case: str = "", **info) -> None:
    """Say in ``extra_info`` what ``benchmark`` measures, for the report.

    ``system`` names it in tables; ``role`` is ``"fastndcg"`` (the thing under
    test), ``"peer"`` (another tool doing the same work: the report gives
    fastndcg's speed-up over it) or ``"bound"`` (a floor on the work, such as a
    bare read or a parallel sum: the report gives fastndcg's fraction of its
    speed); ``case`` pairs entries of one group (fastndcg's entries are compared
    with the others of the same case; an entry with an empty case is compared
    with every fastndcg entry of its group). ``info`` is stored as given.
    """
    if role not in ROLES:
        raise ValueError(f"role must be one of {ROLES}, got {role!r}")
    benchmark.extra_info.update(system=system, role=role, case=case, **info)

