"""fastndcg's ``preset="pytrec_eval"`` against pytrec_eval and ir_measures on real TREC data.

1. pytrec_eval (trec_eval 9 in a Python extension), every IR measure fastndcg computes,
   per query to 1e-9, on every run of ``tests/data/real/runs/`` with its qrels, at the
   default relevance level and at ``relevance_level=2`` (fastndcg ``rel=2``). fastndcg is
   given trec_eval's measure names without cutoffs (``map_cut``, ``P``, ...), so the
   default cutoffs must match pytrec_eval's too. pytrec_eval scores the run queries that
   have judgments; fastndcg without ``complete`` the same ones.
2. ir_measures, with its own parser (``ir_measures.parse_measure``) and providers, on two
   real runs, each ir_measures name evaluated alone by fastndcg and read from the column
   ``fastndcg.measures.parse([name]).columns[0]`` (checked against the expected name).

No expected number is hard-coded: every reference value comes from pytrec_eval or
ir_measures.
"""

from __future__ import annotations

import gzip
from collections import defaultdict
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

import fastndcg
from fastndcg.measures import parse, summary_of

pytrec_eval = pytest.importorskip("pytrec_eval")

HERE = Path(__file__).parent
REAL = HERE / "data" / "real"
RUNS_DIR = REAL / "runs"
QRELS_DIR = REAL / "qrels"

# which qrels goes with which run (tests/data/real/README.md)
QRELS_OF = {"core18_": "qrels.core18.txt.gz", "cedr-wt_": "qrels.cedr-wt.txt.gz",
            "rag24": "qrels.rag24.txt.gz"}
RUN_NAMES = sorted(p.name[:-len(".run.gz")] for p in RUNS_DIR.glob("*.run.gz"))
TOL = 1e-9


def _paths(run: str) -> tuple[Path, Path]:
    matches = [q for prefix, q in QRELS_OF.items() if run.startswith(prefix)]
    assert len(matches) == 1, f"no qrels known for run {run!r}; extend QRELS_OF"
    return RUNS_DIR / f"{run}.run.gz", QRELS_DIR / matches[0]


@lru_cache(maxsize=None)
def _read_run(path: Path) -> dict[str, dict[str, float]]:
    run: dict[str, dict[str, float]] = defaultdict(dict)
    with gzip.open(path, "rt") as f:
        for line in f:
            fields = line.split()
            if fields:
                qid, _, doc, _, score, _ = fields
                assert doc not in run[qid], f"{path.name}: {qid} {doc} retrieved twice"
                run[qid][doc] = float(score)
    return dict(run)


@lru_cache(maxsize=None)
def _read_qrels(path: Path) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = defaultdict(dict)
    with gzip.open(path, "rt") as f:
        for line in f:
            fields = line.split()
            if fields:
                qid, _, doc, label = fields
                assert doc not in qrels[qid], f"{path.name}: {qid} {doc} judged twice"
                qrels[qid][doc] = int(label)
    return dict(qrels)


def _by_query(report) -> dict[str, dict]:
    rows = report.per_query.to_pylist()
    out = {r["query_id"]: r for r in rows}
    assert len(out) == len(rows), "a query id appears twice in per_query"
    return out


# --------------------------------------------------------------------------- 1. pytrec_eval

PYTREC_MEASURES = {"map", "map_cut", "recip_rank", "P", "recall", "success", "Rprec", "num_ret",
                   "num_rel", "num_rel_ret", "ndcg_cut", "ndcg"}
# pytrec_eval's output stem -> (fastndcg column stem, the measure reads a relevance threshold)
STEMS = {"map": ("ap", True), "map_cut": ("ap", True), "recip_rank": ("rr", True),
         "P": ("p", True), "recall": ("r", True), "success": ("success", True),
         "Rprec": ("rprec", True), "num_ret": ("num_ret", False),
         "num_rel": ("num_rel", True), "num_rel_ret": ("num_rel_ret", True),
         "ndcg": ("ndcg", False), "ndcg_cut": ("ndcg", False)}


def _column(key: str, rel: int) -> str:
    """pytrec_eval's ``map_cut_10`` -> fastndcg's ``ap@10`` (``ap@10(rel=2)`` at rel 2)."""
    if key in STEMS:
        stem, cut = key, None
    else:
        stem, _, cut = key.rpartition("_")
        assert stem in STEMS and cut.isdigit(), f"unexpected pytrec_eval key {key!r}"
    kind, binary = STEMS[stem]
    name = kind if cut is None else f"{kind}@{cut}"
    return name + (f"(rel={rel})" if binary and rel != 1 else "")


@pytest.mark.parametrize("rel", [1, 2], ids=["rel1", "rel2"])
@pytest.mark.parametrize("run_name", RUN_NAMES)
def test_every_measure_matches_pytrec_eval(run_name, rel):
    run_path, qrels_path = _paths(run_name)
    run, qrels = _read_run(run_path), _read_qrels(qrels_path)
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, PYTREC_MEASURES, relevance_level=rel)
    expected = evaluator.evaluate(run)
    judged_run_queries = set(run) & set(qrels)
    assert set(expected) == judged_run_queries  # pytrec_eval: run queries with judgments

    # trec_eval's names, without cutoffs: fastndcg expands them to trec_eval's defaults
    report = fastndcg.evaluate(run_path, qrels=qrels_path, preset="pytrec_eval",
                               measure=sorted(PYTREC_MEASURES), rel=None if rel == 1 else rel)
    got = _by_query(report)
    assert set(got) == judged_run_queries

    keys = set(next(iter(expected.values())))
    columns = {key: _column(key, rel) for key in keys}
    assert set(report.per_query.column_names) == {"query_id", "n_docs", *columns.values()}

    bad = []
    for q in sorted(judged_run_queries):
        assert got[q]["n_docs"] == len(run[q])
        for key, column in columns.items():
            if not abs(got[q][column] - expected[q][key]) <= TOL:
                bad.append(f"query {q} {key}: fastndcg {got[q][column]!r} "
                           f"vs pytrec_eval {expected[q][key]!r}")
    assert not bad, f"{run_name} rel={rel}: {len(bad)} differ:\n" + "\n".join(bad[:20])

    for key, column in columns.items():  # report.mean: over the same queries, the mean (the
        # sum for the counts, as trec_eval and pytrec_eval's aggregates give them)
        total = sum(expected[q][key] for q in judged_run_queries)
        want = total if summary_of(column) == "sum" else total / len(judged_run_queries)
        assert report.mean[column] == pytest.approx(want, rel=1e-12, abs=1e-12), key


# --------------------------------------------------------------------------- 2. ir_measures

# ir_measures name -> fastndcg's column for it
IR_NAMES = {
    "AP": "ap", "AP@10": "ap@10", "AP@100": "ap@100", "AP(rel=2)": "ap(rel=2)",
    "AP(rel=2)@100": "ap@100(rel=2)",
    "RR": "rr", "RR@10": "rr@10", "RR(rel=2)": "rr(rel=2)", "RR(rel=2)@10": "rr@10(rel=2)",
    "P@5": "p@5", "P@10": "p@10", "P(rel=2)@5": "p@5(rel=2)",
    "R@100": "r@100", "R(rel=2)@100": "r@100(rel=2)",
    "Success@1": "success@1", "Success@10": "success@10",
    "Success(rel=2)@10": "success@10(rel=2)",
    "Rprec": "rprec", "Rprec(rel=2)": "rprec(rel=2)",
    "NumRet": "num_ret", "NumRel": "num_rel", "NumRelRet": "num_rel_ret",
    "NumRelRet(rel=2)": "num_rel_ret(rel=2)",
    "Judged@10": "judged@10",
    "nDCG@10": "ndcg@10", "nDCG": "ndcg",
}
# ir_measures computes these with providers that break ties their own way: RR@k with its
# msmarco provider and Judged@k with its judged provider both sort by (-score, doc id)
# (doc id ascending, scores as doubles), where trec_eval 9 / pytrec_eval sorts by float32
# score then doc id descending. Their values can differ only on queries whose top k holds
# tied scores, so for these (and only these) the comparison is restricted to the queries
# without a float32 tie reaching into the top k. Every other name comes from the
# pytrec_eval provider, and is compared on every query.
OWN_TIES = {"RR@10": 10, "RR(rel=2)@10": 10, "Judged@10": 10}
# core18_title_rm3: no tied scores at all; cedr-wt_test.wt13: ties in the top 10 of 15
# of its 50 queries, and 248 judged queries missing from the run
IR_RUNS = ["core18_title_rm3", "cedr-wt_test.wt13"]


def _tied_in_top(scores: dict[str, float], k: int) -> bool:
    """Whether a float32 tie (trec_eval 9's comparison) involves a document of the top k."""
    s = np.sort(np.asarray(list(scores.values()), dtype=np.float32))[::-1]
    top = set(s[:k].tolist())
    values, counts = np.unique(s, return_counts=True)
    return any(c > 1 and v in top for v, c in zip(values.tolist(), counts.tolist()))


def test_ir_measures_column_names():
    for name, column in IR_NAMES.items():
        assert parse([name]).columns == [column], name


@pytest.mark.parametrize("run_name", IR_RUNS)
def test_ir_measures_names_match_ir_measures(run_name):
    ir_measures = pytest.importorskip("ir_measures")
    run_path, qrels_path = _paths(run_name)
    run, qrels = _read_run(run_path), _read_qrels(qrels_path)
    parsed = {name: ir_measures.parse_measure(name) for name in IR_NAMES}
    expected: dict = defaultdict(dict)
    for metric in ir_measures.iter_calc(list(parsed.values()), qrels, run):
        expected[metric.measure][metric.query_id] = metric.value

    judged_run_queries = set(run) & set(qrels)
    tie_free = {k: {q for q in judged_run_queries if not _tied_in_top(run[q], k)}
                for k in set(OWN_TIES.values())}
    bad = []
    for name, column in IR_NAMES.items():
        report = fastndcg.evaluate(run_path, qrels=qrels_path, preset="pytrec_eval",
                                   measure=[name])
        assert report.per_query.column_names == ["query_id", "n_docs", column], name
        got = {q: r[column] for q, r in _by_query(report).items()}
        assert set(got) == judged_run_queries, name
        ours = expected[parsed[name]]
        # ir_measures also lists judged queries missing from the run (with its default, 0)
        assert set(ours) == set(qrels), name
        queries = judged_run_queries
        if name in OWN_TIES:
            queries = tie_free[OWN_TIES[name]]
            assert queries, "no tie-free query left to compare"
        for q in sorted(queries):
            if not abs(got[q] - ours[q]) <= TOL:
                bad.append(f"{name} query {q}: fastndcg {got[q]!r} vs ir_measures {ours[q]!r}")
    assert not bad, f"{run_name}: {len(bad)} differ:\n" + "\n".join(bad[:20])


@pytest.mark.parametrize("rel", [1, 2], ids=["rel1", "rel2"])
@pytest.mark.parametrize("run_name", RUN_NAMES)
def test_interpolated_precision_matches_pytrec_eval(run_name, rel):
    """iprec_at_recall (its 11 default levels) and 11pt_avg: trec_eval 9, inside
    pytrec_eval, reads the relevant item int(level x R + 0.9) where trec_eval 10
    reads round(level x R); preset="pytrec_eval" reads pytrec_eval's."""
    run_path, qrels_path = _paths(run_name)
    run, qrels = _read_run(run_path), _read_qrels(qrels_path)
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"iprec_at_recall", "11pt_avg"},
                                               relevance_level=rel)
    expected = evaluator.evaluate(run)
    report = fastndcg.evaluate(run_path, qrels=qrels_path, preset="pytrec_eval",
                               measure=["iprec_at_recall", "11pt_avg"],
                               rel=None if rel == 1 else rel, ties="trec")
    got = _by_query(report)
    assert set(got) == set(expected)
    suffix = "" if rel == 1 else f",rel={rel}"
    keys = sorted(next(iter(expected.values())))
    assert len(keys) == 12
    bad = []
    for key in keys:
        if key == "11pt_avg":
            column = "11pt_avg" + (f"(rel={rel})" if rel != 1 else "")
        else:
            level = float(key.rpartition("_")[2])
            column = f"iprec(recall={level!r}{suffix})"
        for q in expected:
            if not abs(got[q][column] - expected[q][key]) <= TOL:
                bad.append(f"query {q} {key}: fastndcg {got[q][column]!r} vs pytrec_eval "
                           f"{expected[q][key]!r}")
    assert not bad, f"{run_name} rel={rel}: {len(bad)} differ:\n" + "\n".join(bad[:20])
