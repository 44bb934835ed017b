"""RBP and its residual against cwl_eval itself (the C/W/L framework ir_measures runs
for ``RBP(rel=..., p=...)``): on a real run of each collection of ``tests/data/real``, each query's
RBP and residual from cwl's own ``RBPCWLMetric`` (``residuals=True``), fed as
ir_measures feeds it (its qrels handler: grades binarised at ``rel``, negative ones
read as 0, so judged; documents in ir_measures' order: score descending, ties in file order,
fastndcg's ``ties="stable"``), must equal fastndcg's ``RBP(rel=r, p=x)`` and
``rbp_residual(p=x)`` to 1e-12.

cwl stops at rank 1,000 and scales its weights by the sum of p^i to there; fastndcg's
RBP runs to the end of the list, and its residual counts every rank past it. On these
runs (at most 1,000 documents a query) the two differ by about p^1000: nothing at
the persistences checked here.
"""

from __future__ import annotations

import gzip
from collections import defaultdict
from pathlib import Path

import pytest

import fastndcg

pytest.importorskip("cwl")
ir_measures = pytest.importorskip("ir_measures")

REAL = Path(__file__).parent / "data" / "real"
QRELS_OF = {"core18_": "qrels.core18.txt.gz", "cedr-wt_": "qrels.cedr-wt.txt.gz",
            "rag24": "qrels.rag24.txt.gz"}
# one run of each collection (cwl builds its rankings in Python: a few seconds a run)
RUNS = ["core18_title_rm3", "cedr-wt_test.wt12", "rag24"]


def _qrels_path(run: str) -> Path:
    return REAL / "qrels" / next(q for prefix, q in QRELS_OF.items() if run.startswith(prefix))


def _cwl(run: str, rel: int, p: float) -> dict[str, tuple[float, float]]:
    """query -> (RBP, residual) as cwl computes them, fed as ir_measures feeds it."""
    from cwl.ruler.measures.cwl_rbp import RBPCWLMetric
    from cwl.ruler.ranking import RankingMaker
    from ir_measures.providers.cwl_eval import IrmQrelHandler

    handler = IrmQrelHandler(rel, None, None)
    judged = set()
    with gzip.open(_qrels_path(run), "rt") as f:
        for line in f:
            if line.strip():
                q, _, d, r = line.split()
                handler.put_value(q, d, max(int(r), 0))
                judged.add(q)
    docs = defaultdict(list)
    with gzip.open(REAL / "runs" / f"{run}.run.gz", "rt") as f:
        for line in f:
            if line.strip():
                q, _, d, _, s, *_ = line.split()
                docs[q].append((float(s), d))
    out = {}
    for q, items in docs.items():
        if q not in judged:
            continue
        maker = RankingMaker(q, handler, None, max_gain=1.0, min_gain=0.0, max_cost=1.0,
                             min_cost=1.0, max_n=1000)
        for _, d in sorted(items, key=lambda x: x[0], reverse=True):  # stable: file order
            maker.add(d, "_")
        metric = RBPCWLMetric(p)
        metric.residuals = True
        value = metric.measure(maker.get_ranking())
        out[q] = (value, metric.residual_expected_utility)
    return out


@pytest.mark.parametrize("p", [0.5, 0.95])
@pytest.mark.parametrize("rel", [1, 2])
@pytest.mark.parametrize("run", RUNS)
def test_rbp_and_residual_equal_cwl(run, rel, p):
    want = _cwl(run, rel, p)
    report = fastndcg.evaluate(REAL / "runs" / f"{run}.run.gz", qrels=_qrels_path(run),
                               measure=[f"RBP(rel={rel},p={p})", f"rbp_residual(p={p})"],
                               ties="stable", negative_labels="zero")
    names = fastndcg.measures.parse([f"RBP(rel={rel},p={p})", f"rbp_residual(p={p})"]).columns
    table = report.per_query
    got = {q: (a, b) for q, a, b in zip(table.column("query_id").cast("string").to_pylist(),
                                        table.column(names[0]).to_pylist(),
                                        table.column(names[1]).to_pylist())}
    assert set(want) == set(got)
    bad = [f"{q}: fastndcg {got[q]} vs cwl {v}" for q, v in want.items()
           if not (abs(got[q][0] - v[0]) <= 1e-12 and abs(got[q][1] - v[1]) <= 1e-12)]
    assert not bad, f"{len(bad)} of {len(want)} differ: {bad[:5]}"
