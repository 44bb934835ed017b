"""ir_measures and PyTerrier with fastndcg first in the pipeline, against their
own default pipeline, in one process (medians of a few rounds, ratios of medians).

Group ``ir-measures``: ``ir_measures.calc_aggregate`` of nDCG@10, AP, RR@10, P@10,
R@1000 on a run given as pandas DataFrames (ir_measures' columns), converting the
inputs included: ir_measures' default pipeline (pytrec_eval for four measures,
msmarco for RR@10) against the same call after ``fastndcg.ir_measures.use()``.
Group ``pt-experiment``: ``pt.Experiment`` of three such runs with ``baseline=0``
and Holm's correction, with and without ``use()``.

Group ``ranx-preset``: ``fastndcg.evaluate(run, qrels=qrels, preset="ranx")`` of
ranx's ndcg@10, map@100, mrr@10, precision@5 and recall@100 against
``ranx.evaluate`` of the same ``Run`` and ``Qrels`` objects (built once, untimed:
what a ranx user holds), and from the dicts of dicts (ranx building its objects,
fastndcg reading the dicts), on tie-heavy scores (20 values), each query's values
checked against ranx's; 10,000 queries x 100 documents (quick: 1,000 x 100).

Sizes: full (``FASTNDCG_BENCH_FULL=1``) 10,000 queries x 1,000 documents
(``FASTNDCG_BENCH_IRM_QUERIES`` sets the queries); quick 200 x 100. Scores have three decimals (ties decided by each provider's rule), 30
judged documents a query with labels 0-2, 10 of them retrieved. Every answer is
checked against the default pipeline's first.

    FASTNDCG_BENCH_FULL=1 python -m pytest benchmarks/test_bench_ir_measures.py \\
        --benchmark-enable
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from . import _data

ir_measures = pytest.importorskip("ir_measures")
from ir_measures import AP, RR, P, R, nDCG  # noqa: E402

MEASURES = [nDCG @ 10, AP, RR @ 10, P @ 10, R @ 1000]


def _size() -> tuple[int, int]:
    """(queries, documents a query); ``FASTNDCG_BENCH_IRM_QUERIES`` sets the
    queries of a full run (PyTerrier's Experiment of three full-size runs takes
    ir_measures about 6 minutes a round)."""
    if _data.is_quick():
        return 200, 100
    return int(os.environ.get("FASTNDCG_BENCH_IRM_QUERIES", "10000")), 1_000


def _frames(seed: int):
    import pandas as pd

    n_q, n_d = _size()
    rng = np.random.default_rng(seed)
    q = np.repeat(np.arange(n_q), n_d)
    d = np.tile(np.arange(n_d), n_q)
    run = pd.DataFrame({"query_id": q.astype(str), "doc_id": (d * 7 + q).astype(str),
                        "score": np.round(rng.random(n_q * n_d), 3)})
    judged = 30
    qq = np.repeat(np.arange(n_q), judged)
    dd = np.tile(np.arange(judged), n_q) * 3  # a third of them retrieved in the top 100
    qrels = pd.DataFrame({"query_id": qq.astype(str), "doc_id": (dd * 7 + qq).astype(str),
                          "relevance": rng.integers(0, 3, len(qq))})
    return run, qrels


@pytest.fixture(scope="module")
def data():
    runs = [_frames(seed)[0] for seed in (1, 2, 3)]
    _, qrels = _frames(1)
    return runs, qrels


def _close(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for m in a:
        assert a[m] == pytest.approx(b[m], abs=1e-12), m


@pytest.mark.benchmark(group="ir-measures")
@pytest.mark.parametrize("which", ["ir_measures", "fastndcg"])
def test_calc_aggregate(benchmark, data, which):
    import fastndcg.ir_measures as fim

    runs, qrels = data
    want = ir_measures.calc_aggregate(MEASURES, qrels, runs[0]) if which == "fastndcg" else None
    if which == "fastndcg":
        fim.use()
    try:
        got = benchmark.pedantic(lambda: ir_measures.calc_aggregate(MEASURES, qrels, runs[0]),
                                 rounds=3, iterations=1, warmup_rounds=1 if which == "fastndcg"
                                 else 0)
    finally:
        fim.use(False)
    if want is not None:
        _close(got, want)
    n_q, n_d = _size()
    _data.describe(benchmark, f"ir_measures.calc_aggregate ({which})",
                   "fastndcg" if which == "fastndcg" else "peer", case=f"{n_q}x{n_d}")
    _data.record_rows_per_s(benchmark, n_q * n_d, n_q)


@pytest.mark.benchmark(group="pt-experiment")
@pytest.mark.parametrize("which", ["ir_measures", "fastndcg"])
def test_pt_experiment(benchmark, data, which):
    pt = pytest.importorskip("pyterrier")
    import fastndcg.ir_measures as fim

    runs, qrels = data
    frames = [r.rename(columns={"query_id": "qid", "doc_id": "docno"}) for r in runs]
    pt_qrels = qrels.rename(columns={"query_id": "qid", "doc_id": "docno",
                                     "relevance": "label"})
    import pandas as pd
    topics = pd.DataFrame({"qid": frames[0]["qid"].unique(), "query": "q"})
    systems = [pt.Transformer.from_df(f) for f in frames]

    def experiment():
        return pt.Experiment(systems, topics, pt_qrels, MEASURES, names=["a", "b", "c"],
                             baseline=0, correction="holm")

    want = experiment() if which == "fastndcg" else None
    if which == "fastndcg":
        fim.use()
    try:
        got = benchmark.pedantic(experiment, rounds=3 if _data.is_quick() else 1,
                                 iterations=1)
    finally:
        fim.use(False)
    if want is not None:
        assert got.to_string() == want.to_string()
    n_q, n_d = _size()
    _data.describe(benchmark, f"pt.Experiment, 3 runs ({which})",
                   "fastndcg" if which == "fastndcg" else "peer", case=f"{n_q}x{n_d}")
    _data.record_rows_per_s(benchmark, 3 * n_q * n_d, n_q)


RANX_METRICS = ["ndcg@10", "map@100", "mrr@10", "precision@5", "recall@100"]


@pytest.fixture(scope="module")
def ranx_data():
    ranx = pytest.importorskip("ranx")
    n_q, n_d = (1_000, 100) if _data.is_quick() else (10_000, 100)
    rng = np.random.default_rng(7)
    run = {f"q{i}": {f"d{j}": float(v) / 4 for j, v in enumerate(rng.integers(0, 20, n_d))}
           for i in range(n_q)}
    qrels = {f"q{i}": {f"d{j}": int(rng.integers(0, 4)) for j in rng.choice(n_d, 20, False)}
             for i in range(n_q)}
    return qrels, run, ranx.Qrels(qrels), ranx.Run(run)


@pytest.mark.benchmark(group="ranx-preset")
@pytest.mark.parametrize("given", ["objects", "dicts"])
@pytest.mark.parametrize("which", ["ranx", "fastndcg"])
def test_ranx_preset(benchmark, ranx_data, which, given):
    """``objects``: the Run and Qrels built beforehand (untimed); ``dicts``: from the
    dicts of dicts, building them (ranx) or reading the dicts (fastndcg) timed."""
    import ranx

    import fastndcg

    qrels_d, run_d, qrels, run = ranx_data
    want = ranx.evaluate(qrels, run, RANX_METRICS, return_mean=False, save_results_in_run=False)
    if which == "ranx" and given == "objects":
        def call():
            return ranx.evaluate(qrels, run, RANX_METRICS, save_results_in_run=False)
    elif which == "ranx":
        def call():
            return ranx.evaluate(ranx.Qrels(qrels_d), ranx.Run(run_d), RANX_METRICS)
    else:
        source, judged = (run, qrels) if given == "objects" else (run_d, qrels_d)

        def call():
            return fastndcg.evaluate(source, qrels=judged, preset="ranx", measure=RANX_METRICS)
        got = call().per_query
        row = {q: i for i, q in enumerate(got.column("query_id").to_pylist())}
        at = np.array([row[q] for q in run.get_query_ids()])  # ranx's query order
        columns = fastndcg.measures.parse(RANX_METRICS, ranx=True).columns
        for m, c in zip(RANX_METRICS, columns):  # ties in the Run's order: the same values
            np.testing.assert_allclose(got.column(c).to_numpy()[at], want[m], rtol=0,
                                       atol=1e-12)
    call()
    benchmark.pedantic(call, rounds=5 if given == "objects" else 3, iterations=1)
