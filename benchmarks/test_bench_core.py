"""Core benchmarks (pytest-benchmark).

Group "kernel": ``fastndcg.ndcg`` on a ragged batch (1,000,000 queries x ~50 rows)
beside a Numba parallel sum over the same two arrays (the memory-bandwidth
probe); both record rows/s in ``extra_info``.

Group "sklearn": ``fastndcg.ndcg_score`` against ``sklearn.metrics.ndcg_score``
on a tie-heavy 20,000 x 50 matrix, after checking the two agree to 1e-12.

Every function is called once before it is timed, so Numba compilation (or
loading the on-disk cache) is never part of a measurement.

The inputs are small by default (the test suite and CI run them with
``--benchmark-disable``, from pyproject's addopts); full size and timings:
``FASTNDCG_BENCH_FULL=1 pytest benchmarks --benchmark-enable``.
"""

from __future__ import annotations

import numpy as np
import pytest

import fastndcg
from benchmarks import _data

K = [1, 3, 5, 10]


@pytest.fixture(scope="module")
def ragged_batch():
    return _data.ragged(_data.sizes()["n_queries"])


@pytest.fixture(scope="module")
def dense_pair():
    s = _data.sizes()
    return _data.dense(s["dense_rows"], s["dense_cols"])


# --------------------------------------------------------------------------- kernel

@pytest.mark.benchmark(group="kernel")
def test_ndcg_ragged(benchmark, ragged_batch):
    scores, labels, offsets = ragged_batch
    warm = fastndcg.ndcg(scores, labels, offsets, k=K)  # compile / load the cache
    assert warm.shape == (len(offsets) - 1, len(K))
    result = benchmark(fastndcg.ndcg, scores, labels, offsets, k=K)
    np.testing.assert_array_equal(result, warm)
    _data.record_rows_per_s(benchmark, len(scores), len(offsets) - 1)


@pytest.mark.benchmark(group="kernel")
def test_parallel_sum_probe(benchmark, ragged_batch):
    scores, labels, _ = ragged_batch
    expected = float(scores.sum(dtype=np.float64) + labels.sum(dtype=np.int64))
    warm = _data.parallel_sum(scores, labels)  # compile
    assert warm == pytest.approx(expected, rel=1e-9)
    result = benchmark(_data.parallel_sum, scores, labels)
    assert result == pytest.approx(expected, rel=1e-9)
    _data.record_rows_per_s(benchmark, len(scores))


# --------------------------------------------------------------------------- sklearn

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
    _data.record_rows_per_s(benchmark, y_true.shape[0])


@pytest.mark.benchmark(group="sklearn")
def test_sklearn_ndcg_score(benchmark, dense_pair):
    metrics = pytest.importorskip("sklearn.metrics")
    y_true, y_score = dense_pair
    _check_against_sklearn(y_true, y_score)
    result = benchmark.pedantic(metrics.ndcg_score, args=(y_true, y_score), rounds=3,
                                iterations=1)
    assert 0.0 <= result <= 1.0
    _data.record_rows_per_s(benchmark, y_true.shape[0])
