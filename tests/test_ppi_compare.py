"""Prediction-powered differences of systems: ``compare(..., qrels=llm, human_qrels=human)``
against ppi_py on the per-query differences of separate evaluations."""

from __future__ import annotations

import gzip
import json
import os

import numpy as np
import pytest
from scipy.stats import norm

import fastndcg
from benchmarks.test_bench_ppi import judge_files
from fastndcg.compare.arguments import settings
from inprocess import run as cli

ppi_py = pytest.importorskip("ppi_py")

REAL = os.path.join(os.path.dirname(__file__), "data", "real")
RUN_A = os.path.join(REAL, "runs", "core18_title_rm3.run.gz")
RUN_B = os.path.join(REAL, "runs", "core18_desc_rm3.run.gz")
MEASURES = "nDCG@10 AP P@10"
COLS = ["ndcg@10", "ap", "p@10"]


@pytest.fixture(scope="module")
def judged(tmp_path_factory):
    """core18's qrels as the LLM's (a synthetic judge) and a human sample of 15 queries,
    and three runs: two real ones and a third, run A with its scores shuffled within
    each query by a seeded generator."""
    d = tmp_path_factory.mktemp("ppi_compare")
    llm, human = judge_files(str(d))
    rng = np.random.default_rng(7)
    third = os.path.join(str(d), "shuffled.run")
    with gzip.open(RUN_A, "rt") as f, open(third, "w") as out:
        for line in f:
            q, it, doc, rank, score, tag = line.split()
            out.write(f"{q} {it} {doc} {rank} {float(score) + rng.normal(0, 0.5):.6f} x\n")
    runs = {"a": RUN_A, "b": RUN_B, "c": third}
    return llm, human, runs, d


def _values(run, qrels):
    """{query: {measure: value}} of one separate evaluation."""
    t = fastndcg.evaluate(run, qrels=qrels, measure=MEASURES).per_query.to_pylist()
    return {r["query_id"]: r for r in t}


def _oracle(runs, llm, human, system, baseline, measure, confidence, lam):
    """ppi_py on the per-query differences system - baseline of separate evaluations:
    (estimate, low, high, p-value by the normal approximation from ppi_py's estimate and
    the standard error its interval's width gives)."""
    la, lb = _values(runs[baseline], llm), _values(runs[system], llm)
    ha, hb = _values(runs[baseline], human), _values(runs[system], human)
    queries = sorted(la)
    lab = [q for q in queries if q in ha]
    unl = [q for q in queries if q not in ha]
    y = np.array([hb[q][measure] - ha[q][measure] for q in lab])
    yhat = np.array([lb[q][measure] - la[q][measure] for q in lab])
    yhat_u = np.array([lb[q][measure] - la[q][measure] for q in unl])
    alpha = 1 - confidence
    lo, hi = ppi_py.ppi_mean_ci(y, yhat, yhat_u, alpha=alpha, lam=lam)
    est = float(np.squeeze(ppi_py.ppi_mean_pointestimate(y, yhat, yhat_u, lam=lam)))
    lo, hi = float(np.squeeze(lo)), float(np.squeeze(hi))
    se = (hi - lo) / (2 * norm.ppf(1 - alpha / 2))
    return est, lo, hi, float(2 * norm.sf(abs(est) / se)), len(lab), len(unl)


@pytest.mark.parametrize("ppi,lam,confidence", [("tuned", None, 0.95), (1.0, 1.0, 0.9),
                                                 (0.3, 0.3, 0.95)])
def test_equals_ppi_py_on_every_pair(judged, ppi, lam, confidence):
    llm, human, runs, _ = judged
    c = fastndcg.compare(None, runs, qrels=llm, human_qrels=human, measure=MEASURES,
                         n_resamples=200, confidence=confidence, ppi=ppi,
                         correction="bonferroni")
    rows = c.tests.to_pylist()
    assert len(rows) == 2 * len(COLS)
    for r in rows:
        est, lo, hi, p, n, N = _oracle(runs, llm, human, r["system"], "a", r["measure"],
                                       confidence, lam)
        assert r["ppi_diff"] == pytest.approx(est, abs=1e-12, rel=0)
        assert r["ppi_low"] == pytest.approx(lo, abs=1e-12, rel=0)
        assert r["ppi_high"] == pytest.approx(hi, abs=1e-12, rel=0)
        assert r["p_ppi"] == pytest.approx(p, rel=1e-8, abs=1e-14)
        assert (r["ppi_n"], r["ppi_N"]) == (n, N) == (15, 35)
        if lam is not None:
            assert r["ppi_lambda"] == lam
        # Bonferroni across every pair reported
        assert r["p_ppi_adj"] == pytest.approx(min(1.0, r["p_ppi"] * len(rows)), rel=1e-15)
    assert c.ppi["confidence"] == confidence and c.ppi["ppi"] == ppi


def test_holm_across_pairs_and_baseline(judged):
    llm, human, runs, _ = judged
    c = fastndcg.compare(None, runs, qrels=llm, human_qrels=human, measure=MEASURES,
                         n_resamples=200, baseline="b")
    rows = c.tests.to_pylist()
    assert {r["system"] for r in rows} == {"a", "c"}
    for r in rows:
        est, lo, hi, _, _, _ = _oracle(runs, llm, human, r["system"], "b", r["measure"], 0.95,
                                       None)
        assert r["ppi_diff"] == pytest.approx(est, abs=1e-12, rel=0)
        assert (r["ppi_low"], r["ppi_high"]) == pytest.approx((lo, hi), abs=1e-12, rel=0)
    p = np.array([r["p_ppi"] for r in rows])
    order = np.argsort(p)
    holm = np.minimum(1, np.maximum.accumulate((len(p) - np.arange(len(p))) * p[order]))
    expected = np.empty_like(p)
    expected[order] = holm
    assert [r["p_ppi_adj"] for r in rows] == pytest.approx(expected.tolist(), rel=1e-15)


def test_segments_each_on_their_queries(judged):
    llm, human, runs, _ = judged
    ids = sorted(_values(RUN_A, llm))
    seg = {q: ("even" if i % 2 == 0 else "odd") for i, q in enumerate(ids)}
    c = fastndcg.compare(None, runs, qrels=llm, human_qrels=human, measure="nDCG@10",
                         n_resamples=200, segment=seg)
    la, lb = _values(RUN_A, llm), _values(RUN_B, llm)
    ha, hb = _values(RUN_A, human), _values(RUN_B, human)
    for r in c.tests.to_pylist():
        if r["system"] != "b":
            continue
        qs = [q for q in ids if seg[q] == r["segment"]]
        lab = [q for q in qs if q in ha]
        unl = [q for q in qs if q not in ha]
        y = np.array([hb[q]["ndcg@10"] - ha[q]["ndcg@10"] for q in lab])
        yhat = np.array([lb[q]["ndcg@10"] - la[q]["ndcg@10"] for q in lab])
        yhat_u = np.array([lb[q]["ndcg@10"] - la[q]["ndcg@10"] for q in unl])
        lo, hi = ppi_py.ppi_mean_ci(y, yhat, yhat_u, alpha=0.05)
        assert (r["ppi_n"], r["ppi_N"]) == (len(lab), len(unl))
        assert (r["ppi_low"], r["ppi_high"]) == pytest.approx(
            (float(np.squeeze(lo)), float(np.squeeze(hi))), abs=1e-12, rel=0)


def test_outputs(judged):
    llm, human, runs, _ = judged
    c = fastndcg.compare(None, runs, qrels=llm, human_qrels=human, measure="nDCG@10",
                         n_resamples=200)
    d = json.loads(json.dumps(c.to_dict()))
    assert d["ppi"]["method"] == "PPI++ (power-tuned λ)"
    assert "uniform random sample" in d["ppi"]["assumption"]
    assert {"ppi_diff", "ppi_low", "ppi_high", "p_ppi", "p_ppi_adj", "ppi_n", "ppi_N",
            "ppi_lambda", "ppi_se"} <= set(d["tests"][0])
    text = c.format_table()
    assert "prediction-powered" in text and "p PPI" in text and "uniform random sample" in text
    assert "p PPI" in c.to_markdown() and "p PPI" in c.to_latex()
    plain = fastndcg.compare(None, runs, qrels=llm, measure="nDCG@10", n_resamples=200)
    assert plain.ppi is None and "ppi" not in plain.to_dict()
    assert not [n for n in plain.tests.column_names if "ppi" in n]
    assert "prediction-powered" not in plain.format_table()
    # the other columns are those of the comparison without human judgments
    same = [n for n in plain.tests.column_names]
    assert c.tests.select(same).equals(plain.tests)


# ---------------------------------------------------------------------------- bad input

def test_no_overlap(judged):
    llm, _, runs, d = judged
    other = os.path.join(str(d), "elsewhere.txt")
    with open(other, "w") as f:
        f.write("nosuchquery 0 doc1 1\nnosuchquery2 0 doc2 1\n")
    with pytest.raises(ValueError, match="human_qrels: none of the 50 queries"):
        fastndcg.compare(None, runs, qrels=llm, human_qrels=other, n_resamples=10)


def test_one_human_query(judged):
    llm, human, runs, d = judged
    with open(human) as f:
        lines = f.read().splitlines()
    q = lines[0].split()[0]
    one = os.path.join(str(d), "one.txt")
    with open(one, "w") as f:
        f.write("\n".join(x for x in lines if x.split()[0] == q) + "\n")
    with pytest.raises(ValueError, match="judge 1 of the 50 queries.*at least 2"):
        fastndcg.compare(None, runs, qrels=llm, human_qrels=one, n_resamples=10)


def test_every_query_human_judged(judged):
    llm, _, runs, _ = judged
    with pytest.raises(ValueError, match="every query has human judgments"):
        fastndcg.compare(None, runs, qrels=llm, human_qrels=llm, n_resamples=10)


@pytest.mark.parametrize("ppi", [1.5, -0.1, "plain", True, float("nan")])
def test_ppi_out_of_range(judged, ppi):
    llm, human, runs, _ = judged
    with pytest.raises(ValueError, match="ppi takes 'tuned'"):
        fastndcg.compare(None, runs, qrels=llm, human_qrels=human, ppi=ppi)


def test_ppi_without_human_qrels(judged):
    llm, _, runs, _ = judged
    with pytest.raises(ValueError, match="need human_qrels"):
        fastndcg.compare(None, runs, qrels=llm, ppi=0.5)


def test_refused_where_values_are_not_kept(judged):
    llm, human, runs, _ = judged
    with pytest.raises(ValueError, match="method='buckets' does not keep"):
        fastndcg.compare(None, runs, qrels=llm, human_qrels=human, method="buckets")
    for where in ("fastndcg.dask.compare", "fastndcg.spark.compare"):
        with pytest.raises(ValueError, match=r"does not take human_qrels=.*fastndcg.compare"):
            settings(["a", "b"], where, human_qrels=human)
    with pytest.raises(ValueError, match="needs qrels"):  # a log's labels: no LLM qrels
        fastndcg.compare({"query_id": [1], "a": [1.0], "b": [2.0], "label": [1]}, ["a", "b"],
                         human_qrels=human)


def test_command_line(judged):
    llm, human, runs, _ = judged
    out = cli(["compare", RUN_A, RUN_B, "--qrels", llm, "--human-qrels", human, "-m",
               "nDCG@10", "--ppi", "1", "--resamples", "100", "--format", "json"])
    assert out.returncode == 0, out.stderr
    d = json.loads(out.stdout)
    api = fastndcg.compare(None, [RUN_A, RUN_B], qrels=llm, human_qrels=human,
                           measure="nDCG@10", ppi=1.0, n_resamples=100)
    assert d["ppi"] == api.ppi
    assert d["tests"][0]["ppi_diff"] == api.tests["ppi_diff"][0].as_py()
    out = cli(["compare", RUN_A, RUN_B, "--qrels", llm, "--human-qrels", human, "--ppi", "2"])
    assert out.returncode == 2 and "ppi takes 'tuned'" in out.stderr
