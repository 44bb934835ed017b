"""Prediction-powered differences of systems: ``compare(..., qrels=llm, human_qrels=human)``
against ppi_py on the per-query differences of separate evaluations."""

from __future__ import annotations

import gzip
import json
import os

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from scipy.stats import norm

import fastndcg
from benchmarks.test_bench_ppi import judge_files
from fastndcg._compare.arguments import settings
from fastndcg._compare.ppi import PPI_COLUMNS
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
    with pytest.raises(ValueError, match="none of the 50 queries .* has a judgment in human_qrels"):
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


def test_refused_without_llm_qrels(judged):
    llm, human, runs, _ = judged
    with pytest.raises(ValueError, match="method='buckets' streams a log"):  # runs: in memory
        fastndcg.compare(None, runs, qrels=llm, human_qrels=human, method="buckets")
    with pytest.raises(ValueError, match="needs qrels"):  # a log's labels: no LLM qrels
        fastndcg.compare({"query_id": [1], "a": [1.0], "b": [2.0], "label": [1]}, ["a", "b"],
                         human_qrels=human)
    for where in ("fastndcg.dask.compare", "fastndcg.spark.compare"):
        with pytest.raises(ValueError, match="needs qrels"):
            settings(["a", "b"], where, human_qrels=human)


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


# ------------------------------------------------ a log of the runs, streamed in partitions

PPI_COLS = ["segment", "system", "measure", *PPI_COLUMNS]
LOG_SYSTEMS = ["a", "b", "c"]


def _scores(path):
    with gzip.open(path, "rt") as f:
        return {(q, doc): float(score) for q, _, doc, _, score, _ in map(str.split, f)}


@pytest.fixture(scope="module")
def wide(judged):
    """The runs as one log, a score column a system: core18's two real runs (a
    document one run did not retrieve has a NaN score, ranked last) and run A with
    noise added; and a query the LLM's qrels do not judge, which the human qrels do
    (left out of the comparison, counted as judged by people only). Written as
    Parquet in row groups of 3,000 rows, so that queries straddle partitions."""
    llm, human, _, d = judged
    a, b = _scores(RUN_A), _scores(RUN_B)
    keys = sorted(set(a) | set(b))
    keys += [("999", f"extra{i}") for i in range(5)]
    score_a = np.array([a.get(k, np.nan) for k in keys])
    score_a[-5:] = np.arange(5.0)
    noisy = score_a + np.random.default_rng(3).normal(0, 0.5, len(keys))
    log = pa.table({"query_id": [k[0] for k in keys], "doc_id": [k[1] for k in keys],
                    "a": score_a, "b": [b.get(k, np.nan) for k in keys], "c": noisy,
                    "half": ["low" if k[0] < "400" else "high" for k in keys]})
    log = log.set_column(3, "b", pa.array(np.where(np.isnan(log["b"].to_numpy()) & (
        np.array([k[0] == "999" for k in keys])), 1.0, log["b"].to_numpy())))
    path = os.path.join(str(d), "log.parquet")
    pq.write_table(log, path, row_group_size=3000)
    with_extra = os.path.join(str(d), "human_extra.txt")
    with open(human) as f, open(with_extra, "w") as out:
        out.write(f.read() + "999 0 extra1 2\n999 0 extra3 1\n")
    return log, path, llm, with_extra


def _log_compare(wide, **kw):
    log, _, llm, human = wide
    kw = {"measure": MEASURES, "n_resamples": 200, "nan_scores": "last", "buckets": 20, **kw}
    return fastndcg.compare(log, LOG_SYSTEMS, qrels=llm, human_qrels=human, **kw)


def _ppi_part(c):
    return c.tests.select(PPI_COLS)


@pytest.mark.parametrize("ppi,segment", [("tuned", None), (1.0, None), (0.3, "half")])
def test_buckets_equal_queries_bit_for_bit(wide, ppi, segment):
    """method='buckets' (the log streamed once, each system scored under both qrels
    from one ranking, nothing kept per query) gives the very bits of the query-level
    method, which evaluates every system under each qrels and holds the values."""
    queries = _log_compare(wide, method="queries", ppi=ppi, segment=segment)
    for method in ("buckets", "auto"):
        other = _log_compare(wide, method=method, ppi=ppi, segment=segment)
        assert _ppi_part(other).equals(_ppi_part(queries)), method
        assert other.ppi == queries.ppi
    assert queries.ppi["n_human_only"] == 1  # query 999: judged by people, not by the LLM
    assert len(queries.tests) == 2 * len(COLS) * (1 if segment is None else 2)


def test_streamed_equals_ppi_py(wide):
    """The streamed differences are ppi_py's on the per-query differences of separate
    evaluations of the log's score columns."""
    log, _, llm, human = wide
    c = _log_compare(wide, method="buckets", confidence=0.9)

    def values(col, qrels):
        t = fastndcg.evaluate(log, score=col, qrels=qrels, measure=MEASURES,
                              nan_scores="last").per_query.to_pylist()
        return {r["query_id"]: r for r in t}
    by = {(s, j): values(s, q) for s in LOG_SYSTEMS for j, q in (("llm", llm), ("h", human))}
    for r in c.tests.to_pylist():
        m, s = r["measure"], r["system"]
        queries = sorted(by["a", "llm"])
        lab = [q for q in queries if q in by["a", "h"]]
        unl = [q for q in queries if q not in by["a", "h"]]
        y = np.array([by[s, "h"][q][m] - by["a", "h"][q][m] for q in lab])
        yhat = np.array([by[s, "llm"][q][m] - by["a", "llm"][q][m] for q in lab])
        yhat_u = np.array([by[s, "llm"][q][m] - by["a", "llm"][q][m] for q in unl])
        lo, hi = ppi_py.ppi_mean_ci(y, yhat, yhat_u, alpha=0.1)
        est = ppi_py.ppi_mean_pointestimate(y, yhat, yhat_u)
        assert (r["ppi_n"], r["ppi_N"]) == (15, 35)
        assert r["ppi_diff"] == pytest.approx(float(np.squeeze(est)), abs=1e-12, rel=0)
        assert (r["ppi_low"], r["ppi_high"]) == pytest.approx(
            (float(np.squeeze(lo)), float(np.squeeze(hi))), abs=1e-12, rel=0)


def test_sums_do_not_grow_with_the_queries():
    """What a streamed comparison keeps for its prediction-powered differences is the
    same size for 200 queries as for 20,000: sums, nothing per query."""
    import pickle

    from fastndcg._compare.arguments import settings as make
    from fastndcg._compare.stream import streamed

    def kept(n):
        rng = np.random.default_rng(n)
        q = np.repeat(np.arange(n), 4)
        log = pa.table({"query_id": q, "doc_id": np.tile(np.arange(4), n),
                        "a": rng.random(4 * n), "b": rng.random(4 * n)})
        grades = rng.integers(0, 3, 4 * n)
        llm = pa.table({"query_id": q, "doc_id": np.tile(np.arange(4), n), "label": grades})
        human = llm.filter(pa.array(q % 10 == 0))
        st = make(["a", "b"], "fastndcg.compare", True, qrels=llm, human_qrels=human,
                  method="buckets", n_resamples=10)
        stats, _ = streamed(log, st, False)
        assert stats.kept is None and stats.ppi.n_queries == n
        arrays = [a for sums in stats.ppi.groups.values()
                  for a in (sums.n, sums.N, sums.labelled, sums.unlabelled)]
        held = [v for v in vars(stats.ppi).values() if isinstance(v, (np.ndarray, pa.Array))]
        return sum(a.nbytes for a in arrays + held), len(pickle.dumps(stats.ppi)) // 100
    assert kept(200) == kept(20_000)


def test_dask_gives_the_same_bits(wide, dask_client):
    import fastndcg.dask as fdask

    log, path, llm, human = wide
    for method in ("buckets", "auto"):
        one = _log_compare(wide, method=method, segment="half")
        kw = dict(qrels=llm, human_qrels=human, measure=MEASURES, n_resamples=200,
                  nan_scores="last", buckets=20, method=method, segment="half")
        on = fdask.compare(path, LOG_SYSTEMS, client=dask_client, partition_rows=3000, **kw)
        assert on.tests.equals(one.tests), method
        assert on.ppi == one.ppi


def test_spark_gives_the_same_bits(wide, spark):
    import fastndcg.spark as fspark

    log, path, llm, human = wide
    one = _log_compare(wide, method="buckets")
    kw = dict(qrels=llm, human_qrels=human, measure=MEASURES, n_resamples=200,
              nan_scores="last", buckets=20, method="buckets")
    for source in (path, spark.read.parquet(path)):  # read by tasks; shuffled by Spark
        on = fspark.compare(source, LOG_SYSTEMS, spark=spark, **kw)
        assert _ppi_part(on).equals(_ppi_part(one))
        assert on.tests.equals(one.tests)
        assert on.ppi == one.ppi


# ----------------------------------------------------------- bad input, streamed as well

@pytest.mark.parametrize("method", ["queries", "buckets"])
def test_log_hostile_inputs(wide, method):
    log, _, llm, human = wide
    d = os.path.dirname(llm)
    nowhere = os.path.join(d, "nowhere.txt")
    with open(nowhere, "w") as f:
        f.write("nosuchquery 0 doc1 1\nnosuchquery2 0 doc2 1\n")
    with open(human) as f:
        lines = f.read().splitlines()
    one = os.path.join(d, "one_human.txt")
    with open(one, "w") as f:
        f.write("\n".join(x for x in lines if x.split()[0] == lines[0].split()[0]) + "\n")
    kw = dict(qrels=llm, n_resamples=10, nan_scores="last", method=method)
    # each system evaluated against them (queries), or the sums of the stream (buckets)
    with pytest.raises(ValueError, match={"queries": "none of the 51 queries .* has a judgment in human_qrels",
                                          "buckets": "human_qrels judge 0 of the 50 queries "
                                                     "compared"}[method]):
        fastndcg.compare(log, LOG_SYSTEMS, human_qrels=nowhere, **kw)
    with pytest.raises(ValueError, match="judge 1 of the 50 queries.*at least 2"):
        fastndcg.compare(log, LOG_SYSTEMS, human_qrels=one, **kw)
    with pytest.raises(ValueError, match="every query has human judgments"):
        fastndcg.compare(log, LOG_SYSTEMS, human_qrels=llm, **kw)
    with pytest.raises(ValueError, match="ppi takes 'tuned'"):
        fastndcg.compare(log, LOG_SYSTEMS, human_qrels=human, ppi=2, **kw)
    with pytest.raises(ValueError, match="systems of a log are scored on the queries it holds"):
        fastndcg.compare(log, LOG_SYSTEMS, human_qrels=human, complete=True, **kw)
    with pytest.raises(ValueError, match="one source of judgments"):
        fastndcg.compare(log, LOG_SYSTEMS, **{**kw, "qrels": {"x": llm, "y": human}})
    with pytest.raises(ValueError, match={"queries": "none of the 51 queries",
                                          "buckets": "none of the queries of .* has a judgment "
                                                     "in the qrels"}[method]):
        fastndcg.compare(log, LOG_SYSTEMS, **{**kw, "qrels": nowhere})


def test_log_on_the_command_line(wide):
    """``fastndcg compare LOG --systems ... --qrels LLM --human-qrels HUMAN``: the log's
    documents judged by the qrels, streamed, as the API gives it."""
    _, path, llm, human = wide
    out = cli(["compare", path, "--systems", "a,b,c", "--qrels", llm, "--human-qrels", human,
               "-m", "nDCG@10", "--nan-scores", "last", "--method", "buckets", "--buckets",
               "20", "--resamples", "100", "--format", "json"])
    assert out.returncode == 0, out.stderr
    d = json.loads(out.stdout)
    api = _log_compare(wide, measure="nDCG@10", method="buckets", n_resamples=100)
    assert d["ppi"] == api.ppi
    assert [r["ppi_diff"] for r in d["tests"]] == api.tests["ppi_diff"].to_pylist()
    out = cli(["compare", path, path, "--systems", "a,b", "--qrels", llm])
    assert out.returncode == 2 and "with --systems, compare reads one log" in out.stderr
