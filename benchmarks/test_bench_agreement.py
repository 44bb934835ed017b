"""Benchmarks of ``fastndcg.agreement`` (pytest-benchmark): the target for two label sets.

Group "agreement": ``fastndcg.agreement(a, b)`` on two label sets of 10,000,000
judgments each (Arrow tables: int64 query ids, 100 string document ids a query,
grades 0-3, the second set the first with a third of its grades moved by one,
and 5% of each set's judgments dropped, so that each set judges documents the
other does not): reading both, joining them on (query, document), the confusion
matrix, kappa at three weightings and alpha at three levels, overall and per
query. Beside it, scikit-learn's ``cohen_kappa_score`` plus
``krippendorff.alpha`` (the package's default level, interval) on the grades of
the documents both judged, already lined up as two NumPy arrays (the join is not
theirs to pay). Before timing, fastndcg's kappa and interval alpha are asserted
equal to theirs. Target: fastndcg >= 10x faster, medians.

``fastndcg.grade_agreement`` on the same two lined-up arrays (the six
statistics overall, no reading or join) is timed beside them too: the
statistics alone, array for array.

Quick sizes (the default, as the suite runs with ``--benchmark-disable``): 200,000
judgments. Full: ``FASTNDCG_BENCH_FULL=1 pytest benchmarks/test_bench_agreement.py
--benchmark-enable``. Every function is called once before it is timed (Numba
compilation is never measured).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import fastndcg
from benchmarks import _data

FULL, QUICK = 10_000_000, 200_000
DOCS = 100  # judgments a query


def label_sets(n: int, seed: int = 0) -> tuple[pa.Table, pa.Table, np.ndarray, np.ndarray]:
    """(a, b, grades of a, grades of b) where the last two are the grades of the
    documents both sets judge, in a's order."""
    rng = np.random.default_rng(seed)
    q = np.arange(n, dtype=np.int64) // DOCS
    d = pa.array(np.char.add("d", (np.arange(n) % DOCS).astype(str)).astype(object),
                 pa.string())
    ga = rng.integers(0, 4, n).astype(np.int8)
    move = rng.random(n) < 1 / 3
    gb = np.clip(ga + move * rng.choice(np.array([-1, 1], np.int8), n), 0, 3).astype(np.int8)
    keep_a, keep_b = rng.random(n) >= 0.05, rng.random(n) >= 0.05
    both = keep_a & keep_b

    def table(keep, g):
        rows = pa.array(np.flatnonzero(keep))
        return pa.table({"query_id": pa.array(q).take(rows), "doc_id": d.take(rows),
                         "label": pa.array(g).take(rows)})

    return table(keep_a, ga), table(keep_b, gb), ga[both], gb[both]


@pytest.fixture(scope="module")
def sets():
    return label_sets(QUICK if _data.is_quick() else FULL)


def peers(ga: np.ndarray, gb: np.ndarray) -> tuple[float, float]:
    import krippendorff
    from sklearn.metrics import cohen_kappa_score
    return (cohen_kappa_score(ga, gb),
            float(krippendorff.alpha(reliability_data=np.vstack([ga, gb]).astype(np.float64))))


@pytest.mark.benchmark(group="agreement")
def test_agreement(benchmark, sets):
    a, b, ga, gb = sets
    result = fastndcg.agreement(a, b)
    assert result.n_both == len(ga)  # its values: beside the peers' timing, below
    benchmark.pedantic(fastndcg.agreement, args=(a, b), rounds=5, iterations=1)
    _data.describe(benchmark, "fastndcg.agreement (kappa x3, alpha x3, overall and per query)",
                   "fastndcg", "agreement", judgments=a.num_rows, both=len(ga))


@pytest.mark.benchmark(group="agreement")
def test_grade_agreement_on_the_same_arrays(benchmark, sets):
    from fastndcg import grade_agreement
    a, b, ga, gb = sets
    assert grade_agreement(ga, gb) == fastndcg.agreement(a, b).overall
    benchmark.pedantic(grade_agreement, args=(ga, gb), rounds=5, iterations=1)
    _data.describe(benchmark, "fastndcg.grade_agreement (the same arrays)",
                   "fastndcg", "arrays", both=len(ga))


@pytest.mark.benchmark(group="agreement")
def test_sklearn_kappa_plus_krippendorff_alpha(benchmark, sets):
    a, b, ga, gb = sets
    pytest.importorskip("krippendorff")
    pytest.importorskip("sklearn")
    kappa, alpha = peers(ga, gb)
    result = fastndcg.agreement(a, b)
    assert result.overall["kappa"] == pytest.approx(kappa, rel=1e-12)
    assert result.overall["alpha_interval"] == pytest.approx(alpha, rel=1e-12)
    benchmark.pedantic(peers, args=(ga, gb), rounds=3, iterations=1)
    _data.describe(benchmark, "sklearn cohen_kappa_score + krippendorff.alpha", "peer",
                   "agreement", judgments=a.num_rows, both=len(ga))
