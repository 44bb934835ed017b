"""The kernel on the shapes of real logs, and ``ndcg_score`` against scikit-learn.

Groups ``kernel-5rows``, ``kernel-10rows``, ``kernel-50rows``: ``fastndcg.ndcg(scores,
labels, offsets, k=[1, 3, 5, 10])`` on a ragged batch of ~5, ~10 and ~50 rows a
query (``_data.ragged``: float32 scores rounded to 2 decimals, so scores tie;
int8 labels 0..4; list lengths uniform on n/2..3n/2), beside the Numba parallel
sum over the same two arrays (the memory-bandwidth bound). Quick: 200k-1M rows;
full (``FASTNDCG_BENCH_FULL=1``): 10M rows at ~5 rows a query, 50M rows at ~10
and ~50 (sizes in ``_data.shapes()``).

Group ``kernel-1000rows``: lists of exactly 1,000 rows (full: 50,000 queries,
50M rows), ``k=100`` beside ``k=10`` on the same lists, and the parallel sum.

Group ``sklearn``: ``fastndcg.ndcg_score`` against ``sklearn.metrics.ndcg_score``
on a tie-heavy 20,000 x 50 matrix (quick: 500 x 50), after checking the two
agree to 1e-12.

Before anything is timed, fastndcg's answer on the first queries is checked
against the pure-Python reference, and every function is called once, so Numba
compilation (or loading the on-disk cache) is never part of a measurement. Each
benchmark records rows/s and what it is (``_data.describe``) in ``extra_info``.
"""

from __future__ import annotations

import numpy as np
import pytest

import fastndcg
from benchmarks import _data, _peers

K = [1, 3, 5, 10]
REFERENCE_ROWS = 20_000  # fastndcg's answers on this many first rows checked against the reference

KERNEL_SHAPES = [5, 10, 50]


def _shape_batch(rows_per_query: int) -> tuple:
    n_q = _data.shapes()["kernel_queries"][rows_per_query]
    if rows_per_query == 1000:
        return _data.ragged(n_q, 1000, fixed=True)
    return _data.ragged(n_q, rows_per_query)


def _check_reference(scores, labels, offsets, k) -> np.ndarray:
    """fastndcg's answer (its warm-up call), its first queries equal to the reference."""
    got = _peers.as_2d(fastndcg.ndcg(scores, labels, offsets, k=k))
    n = max(1, int(np.searchsorted(offsets, min(len(scores), REFERENCE_ROWS), "right")) - 1)
    ref = _peers.reference_kernel(scores[:offsets[n]], labels[:offsets[n]], offsets[:n + 1], k,
                                  gain="exp2")
    _peers.assert_same(ref.per_query(), got[:n], what="fastndcg.ndcg vs the reference")
    return got


@pytest.fixture(scope="module", params=KERNEL_SHAPES + [1000], ids=lambda n: f"{n}rows")
def shape_batch(request):
    """(rows a query, scores, labels, offsets): one shape alive at a time."""
    batch = _shape_batch(request.param)
    yield (request.param, *batch)
    del batch


def _kernel_case(benchmark, rows_per_query, scores, labels, offsets, k, case=""):
    benchmark.group = f"kernel-{rows_per_query}rows"
    expected = _check_reference(scores, labels, offsets, k)
    result = benchmark(fastndcg.ndcg, scores, labels, offsets, k=k)
    np.testing.assert_array_equal(_peers.as_2d(result), expected)
    _data.describe(benchmark, "fastndcg.ndcg", "fastndcg", case=case, k=list(k),
                   rows_per_query=rows_per_query, dtypes="float32/int8")
    _data.record_rows_per_s(benchmark, len(scores), len(offsets) - 1)


def test_kernel(benchmark, shape_batch):
    rows_per_query, scores, labels, offsets = shape_batch
    if rows_per_query == 1000:
        _kernel_case(benchmark, rows_per_query, scores, labels, offsets, [10], case="k=10")
    else:
        _kernel_case(benchmark, rows_per_query, scores, labels, offsets, K)


def test_kernel_k100(benchmark, shape_batch):
    rows_per_query, scores, labels, offsets = shape_batch
    if rows_per_query != 1000:
        pytest.skip("k=100 is measured on the 1,000-row lists")
    _kernel_case(benchmark, rows_per_query, scores, labels, offsets, [100], case="k=100")


def test_parallel_sum_probe(benchmark, shape_batch):
    rows_per_query, scores, labels, offsets = shape_batch
    benchmark.group = f"kernel-{rows_per_query}rows"
    expected = float(scores.sum(dtype=np.float64) + labels.sum(dtype=np.int64))
    warm = _data.parallel_sum(scores, labels)  # compile
    assert warm == pytest.approx(expected, rel=1e-9)
    result = benchmark(_data.parallel_sum, scores, labels)
    assert result == pytest.approx(expected, rel=1e-9)
    _data.describe(benchmark, "Numba parallel sum (bandwidth bound)", "bound",
                   rows_per_query=rows_per_query)
    _data.record_rows_per_s(benchmark, len(scores), len(offsets) - 1)


# --------------------------------------------------------------------------- sklearn

@pytest.fixture(scope="module")
def dense_pair():
    s = _data.sizes()
    return _data.dense(s["dense_rows"], s["dense_cols"])


def _check_against_sklearn(y_true, y_score) -> None:
    """fastndcg and scikit-learn agree to 1e-12 (checked only where sklearn imports)."""
    ours = fastndcg.ndcg_score(y_true, y_score)  # also compiles / loads the kernels
    try:
        from sklearn.metrics import ndcg_score as sk_ndcg_score
    except ImportError:
        return
    theirs = sk_ndcg_score(y_true, y_score)
    assert abs(ours - theirs) <= 1e-12, (ours, theirs)


@pytest.mark.benchmark(group="sklearn")
def test_fastndcg_ndcg_score(benchmark, dense_pair):
    y_true, y_score = dense_pair
    _check_against_sklearn(y_true, y_score)  # also the warm-up call of ndcg_score
    result = benchmark(fastndcg.ndcg_score, y_true, y_score)
    assert 0.0 <= result <= 1.0
    _data.describe(benchmark, "fastndcg.ndcg_score", "fastndcg")
    _data.record_rows_per_s(benchmark, y_true.size, y_true.shape[0])


@pytest.mark.benchmark(group="sklearn")
def test_sklearn_ndcg_score(benchmark, dense_pair):
    metrics = pytest.importorskip("sklearn.metrics")
    y_true, y_score = dense_pair
    _check_against_sklearn(y_true, y_score)
    result = benchmark.pedantic(metrics.ndcg_score, args=(y_true, y_score), rounds=3,
                                iterations=1)
    assert 0.0 <= result <= 1.0
    _data.describe(benchmark, "scikit-learn ndcg_score (tie-aware)", "peer")
    _data.record_rows_per_s(benchmark, y_true.size, y_true.shape[0])
