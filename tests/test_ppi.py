"""Prediction-powered means (``human_qrels=``): against ppi_py, merged exactly, end to
end through evaluate and the command line, hostile inputs, and coverage by simulation."""

from __future__ import annotations

import json
import os

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fastndcg
import fastndcg.dask
from benchmarks.test_bench_ppi import judge_files
from fastndcg import evaluate_runs
from fastndcg.io import read_trec_run
from fastndcg.ppi import Sums, lined_up
from inprocess import run as cli
from strategies import examples

ppi_py = pytest.importorskip("ppi_py")

REAL = os.path.join(os.path.dirname(__file__), "data", "real")
RUN = os.path.join(REAL, "runs", "core18_title_rm3.run.gz")
QRELS = os.path.join(REAL, "qrels", "qrels.core18.txt.gz")
MEASURES = "nDCG@10 AP P@10 RR"


def _oracle(y, yhat, yhat_u, confidence, lam):
    """ppi_py's estimate and interval, and its classical interval of y alone."""
    alpha = 1 - confidence
    lo, hi = ppi_py.ppi_mean_ci(y, yhat, yhat_u, alpha=alpha, lam=lam)
    est = ppi_py.ppi_mean_pointestimate(y, yhat, yhat_u, lam=lam)
    c_lo, c_hi = ppi_py.classical_mean_ci(y, alpha=alpha)
    return (float(np.squeeze(est)), float(np.squeeze(lo)), float(np.squeeze(hi)),
            float(c_lo), float(c_hi))


def _ours(y, yhat, yhat_u, confidence, ppi):
    sums = Sums.empty(["m"])
    llm = np.concatenate([yhat, yhat_u])[:, None]
    human = np.concatenate([y, np.full(len(yhat_u), np.nan)])[:, None]
    sums.add(llm, human, np.arange(len(llm)) < len(y))
    return sums.estimate(confidence, ppi).measures["m"]


def _check(e, oracle):
    est, lo, hi, c_lo, c_hi = oracle
    assert e.estimate == pytest.approx(est, abs=1e-12, rel=0)
    assert e.low == pytest.approx(lo, abs=1e-12, rel=0)
    assert e.high == pytest.approx(hi, abs=1e-12, rel=0)
    assert e.human_low == pytest.approx(c_lo, abs=1e-12, rel=0)
    assert e.human_high == pytest.approx(c_hi, abs=1e-12, rel=0)


# ---------------------------------------------------------------------------- the oracle

@settings(max_examples=examples(2), deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 60), N=st.integers(1, 400),
       noise=st.sampled_from([0.0, 0.05, 0.3, 1.0]), bias=st.sampled_from([0.0, 0.2, -0.3]),
       ppi=st.sampled_from(["tuned", 1.0, 0.0, 0.37]),
       confidence=st.sampled_from([0.95, 0.9, 0.5, 0.999]), grades=st.booleans())
def test_equals_ppi_py(seed, n, N, noise, bias, ppi, confidence, grades):
    rng = np.random.default_rng(seed)
    truth = rng.beta(2, 3, n + N)
    if grades:  # values on a coarse grid, many of them tied (as P@10)
        truth = np.round(truth * 10) / 10
    judged = truth + bias + noise * rng.normal(size=n + N)
    y, yhat, yhat_u = truth[:n], judged[:n], judged[n:]
    if np.ptp(np.concatenate([yhat, yhat_u])) == 0:
        return  # ppi_py divides 0 by 0 there (see test_judge_without_variance)
    e = _ours(y, yhat, yhat_u, confidence, ppi)
    _check(e, _oracle(y, yhat, yhat_u, confidence, None if ppi == "tuned" else ppi))
    assert (e.n, e.N) == (n, N)
    assert e.llm_mean == pytest.approx(judged.mean(), abs=1e-12, rel=0)
    if ppi != "tuned":
        assert e.lam == ppi
    assert 0 <= e.lam <= 1


def test_tuned_lambda_is_clipped():
    """A judge anti-correlated with people gets λ = 0 (PPI++ clips at 0): the classical
    interval; a very good one λ near 1, never above."""
    rng = np.random.default_rng(3)
    y = rng.random(40)
    worse = _ours(y[:20], 1 - y[:20], 1 - y[20:], 0.95, "tuned")
    assert worse.lam == 0.0
    assert worse.estimate == pytest.approx(worse.human_mean, abs=1e-15)
    assert (worse.low, worse.high) == pytest.approx((worse.human_low, worse.human_high),
                                                    abs=1e-15)
    y = rng.random(2020)
    good = _ours(y[:20], y[:20] + 1e-3, y[20:], 0.95, "tuned")
    assert 0.5 < good.lam <= 1.0


def test_judge_without_variance():
    """An LLM giving every query the same value carries no information: λ = 0 and the
    estimate is the human sample's (ppi_py's formula is 0 / 0 there)."""
    y = np.array([0.2, 0.5, 0.9])
    e = _ours(y, np.full(3, 0.5), np.full(10, 0.5), 0.95, "tuned")
    assert e.lam == 0.0
    assert e.estimate == pytest.approx(y.mean(), abs=1e-15)


def test_sums_are_exact_and_merge_exactly():
    """Sums of squares and products are exact, so splitting the queries in any way and
    merging gives the same bits; the moments need no compensation (values near 1 that
    differ by 1e-9 keep their variance)."""
    rng = np.random.default_rng(7)
    llm = 0.9 + 1e-9 * rng.random((1000, 2))
    human = 0.9 + 1e-9 * rng.random((1000, 2))
    lab = rng.random(1000) < 0.2
    whole = Sums.empty(["a", "b"])
    whole.add(llm, human, lab)
    order = rng.permutation(1000)
    parts = Sums.empty(["a", "b"])
    for idx in np.array_split(order, 7):
        piece = Sums.empty(["a", "b"])
        piece.add(llm[idx], human[idx], lab[idx])
        parts.merge(piece)
    assert np.array_equal(whole.labelled, parts.labelled)
    assert np.array_equal(whole.unlabelled, parts.unlabelled)
    e = whole.estimate(0.95, 1.0).measures["a"]
    d = human[lab, 0] - llm[lab, 0]
    # the rectifier's spread, from exact sums: within rounding of the two-pass value
    rect_se = np.sqrt(d.var() / lab.sum() + llm[~lab, 0].var() / (~lab).sum())
    assert e.se == pytest.approx(rect_se, rel=1e-9)


def test_lined_up_by_query_id():
    """The human values are matched to the LLM's by query id, whatever their order;
    human queries the LLM did not score are counted and left out."""
    llm = pa.table({"q": ["a", "b", "c", "d", "e"], "ndcg@10": [0.9, 0.5, 0.7, 0.2, 0.4],
                    "num_ret": [10.0] * 5})
    human = pa.table({"q": ["zz", "c", "a"], "ndcg@10": [0.0, 0.6, 0.8], "num_ret": [10.0] * 3})
    r = lined_up(llm, human, "q", ppi=1.0)
    e = r.measures["ndcg@10"]
    assert (e.n, e.N, r.n_human_only, r.left_out) == (2, 3, 1, ["num_ret"])
    expected = _oracle(np.array([0.9 - 0.1, 0.7 - 0.1]), np.array([0.9, 0.7]),
                       np.array([0.5, 0.2, 0.4]), 0.95, 1.0)
    _check(e, expected)


# ---------------------------------------------------------------------------- end to end

@pytest.fixture(scope="module")
def judged(tmp_path_factory):
    """core18's qrels as the LLM's (a synthetic judge: 30% of the grades moved by one)
    and a human sample of 15 queries with their true grades (the benchmark's files)."""
    d = tmp_path_factory.mktemp("ppi")
    llm, human = judge_files(str(d))
    return llm, human, d


def test_evaluate_equals_ppi_py_on_separate_evaluations(judged):
    """``evaluate(run, qrels=llm, human_qrels=human)``: the report is the LLM one, and
    report.ppi equals ppi_py on the per-query values of two separate evaluations."""
    llm, human, _ = judged
    report = fastndcg.evaluate(RUN, qrels=llm, human_qrels=human, measure=MEASURES,
                               per_query=False)
    alone = fastndcg.evaluate(RUN, qrels=llm, measure=MEASURES)
    by_human = fastndcg.evaluate(RUN, qrels=human, measure=MEASURES)
    assert report.mean == alone.mean
    ids = alone.per_query["query_id"].to_pylist()
    sample = set(by_human.per_query["query_id"].to_pylist())
    lab = np.array([q in sample for q in ids])
    for m in ["ndcg@10", "ap", "p@10", "rr"]:
        yhat = np.asarray(alone.per_query[m])
        y = dict(zip(by_human.per_query["query_id"].to_pylist(), by_human.per_query[m]))
        y = np.array([y[q].as_py() for q in np.array(ids)[lab]])
        e = report.ppi.measures[m]
        _check(e, _oracle(y, yhat[lab], yhat[~lab], 0.95, None))
        assert (e.n, e.N) == (15, 35)
        assert e.llm_mean == pytest.approx(alone.mean[m], abs=1e-15)
    with pytest.raises(ValueError, match="per_query=False"):
        report.per_query


def test_options_reach_the_estimate(judged):
    llm, human, _ = judged
    r = fastndcg.evaluate(RUN, qrels=llm, human_qrels=human, k=10, confidence=0.8, ppi=0.5)
    e = r.ppi.measures["ndcg@10"]
    assert (e.lam, r.ppi.confidence, r.ppi.method) == (0.5, 0.8, "PPI with λ = 0.5")
    y = r.per_query  # kept in memory by default, as without human_qrels
    assert y.column_names == ["query_id", "n_docs", "ndcg@10"] and len(y) == 50


def test_per_query_written_only_on_success(judged, tmp_path):
    llm, human, d = judged
    out = tmp_path / "pq.parquet"
    r = fastndcg.evaluate(RUN, qrels=llm, human_qrels=human, k=10, per_query=str(out))
    assert out.exists() and r.per_query_path == str(out) and len(r.per_query) == 50
    assert sorted(os.listdir(tmp_path)) == ["pq.parquet"]  # no staging left
    one = d / "one.txt"
    with open(human) as f:
        first = f.readline().split()[0]
        one.write_text("".join(line for line in open(human) if line.split()[0] == first))
    out2 = tmp_path / "pq2.parquet"
    with pytest.raises(ValueError, match="human sample of at least 2"):
        fastndcg.evaluate(RUN, qrels=llm, human_qrels=str(one), k=10, per_query=str(out2))
    assert not out2.exists() and sorted(os.listdir(tmp_path)) == ["pq.parquet"]
    # failures found once the run is scored come before anything is committed too
    run = read_trec_run(RUN)
    but_one = sorted({line.split()[0] for line in open(human)})[1:]
    short = run.filter(pc.invert(pc.is_in(run["query_id"], pa.array(but_one))))
    for source, judges, message in ((short, human, "judge 1 of the 36 queries scored"),
                                    (RUN, QRELS, "every query has human judgments")):
        with pytest.raises(ValueError, match=message):
            fastndcg.evaluate(source, qrels=llm, human_qrels=judges, k=10,
                              per_query=str(out2))
        assert not out2.exists() and sorted(os.listdir(tmp_path)) == ["pq.parquet"]


def test_output_text_and_json(judged):
    llm, human, _ = judged
    r = fastndcg.evaluate(RUN, qrels=llm, human_qrels=human, k=10, per_query=False)
    text = r.format_table()
    assert "prediction-powered means: PPI++ (power-tuned λ)" in text
    assert "uniform random sample" in text
    d = r.to_dict()["ppi"]
    assert d["measures"]["ndcg@10"]["n"] == 15 and d["ppi"] == "tuned"
    assert "uniform random sample" in d["assumption"]
    json.dumps(r.to_dict(), allow_nan=False)


def test_command_line(judged):
    llm, human, _ = judged
    out = cli(["evaluate", RUN, "--qrels", llm, "--human-qrels", human, "-m", "nDCG@10",
               "--ppi", "1", "--confidence", "0.9", "--format", "json"])
    assert out.returncode == 0, out.stderr
    d = json.loads(out.stdout)["ppi"]
    api = fastndcg.evaluate(RUN, qrels=llm, human_qrels=human, measure="nDCG@10", ppi=1.0,
                            confidence=0.9, per_query=False).ppi.to_dict()
    assert d == json.loads(json.dumps(api))
    out = cli(["evaluate", RUN, "--qrels", llm, "--human-qrels", human, "-k", "10"])
    assert out.returncode == 0 and "prediction-powered means" in out.stdout
    for bad in (["--ppi", "2"], ["--ppi", "fast"], ["--confidence", "1"]):
        out = cli(["evaluate", RUN, "--qrels", llm, "--human-qrels", human, *bad])
        assert out.returncode == 2 and ("ppi" in out.stderr or "confidence" in out.stderr), \
            out.stderr


# ---------------------------------------------------------------------------- bad input

@pytest.mark.parametrize("ppi", [-0.1, 1.5, "fast", True, float("nan"), None])
def test_ppi_out_of_range(judged, ppi):
    llm, human, _ = judged
    with pytest.raises(ValueError, match="ppi takes 'tuned'.* from 0 to 1"):
        fastndcg.evaluate(RUN, qrels=llm, human_qrels=human, ppi=ppi)


@pytest.mark.parametrize("confidence", [0, 1, 1.5, -0.5, True, "0.9"])
def test_confidence_out_of_range(judged, confidence):
    llm, human, _ = judged
    with pytest.raises(ValueError, match="confidence must be a number between 0 and 1"):
        fastndcg.evaluate(RUN, qrels=llm, human_qrels=human, confidence=confidence)


def test_human_qrels_without_overlap(judged):
    llm, _, d = judged
    other = d / "other.txt"
    other.write_text("nosuchquery 0 doc1 1\nnosuchquery2 0 doc2 1\n")
    with pytest.raises(ValueError, match="human_qrels judge 0 of the 50 queries"):
        fastndcg.evaluate(RUN, qrels=llm, human_qrels=str(other), k=10)


def test_human_sample_of_one_query(judged):
    llm, human, d = judged
    first = open(human).readline().split()[0]
    one = d / "one1.txt"
    one.write_text("".join(line for line in open(human) if line.split()[0] == first))
    with pytest.raises(ValueError, match="judge 1 of the 50 queries.*at least 2"):
        fastndcg.evaluate(RUN, qrels=llm, human_qrels=str(one), k=10)


def test_human_sample_outside_the_run(judged):
    """Human judgments of queries the LLM judges but the run lacks are checked after
    the one pass: a sample of 1 scored query, or of none, is refused."""
    llm, human, _ = judged
    run = read_trec_run(RUN)
    sample = sorted({line.split()[0] for line in open(human)})
    for keep, message in ((1, r"human_qrels judge 1 of the 36 queries scored with the "
                               r"LLM's judgments.*at least 2"),
                          (0, r"none of the queries .* has a judgment in human_qrels")):
        t = run.filter(pc.invert(pc.is_in(run["query_id"],
                                                          pa.array(sample[keep:]))))
        with pytest.raises(ValueError, match=message):
            fastndcg.evaluate(t, qrels=llm, human_qrels=human, k=10)


def test_human_qrels_beside_label_sets_refused(judged):
    """The LLM's judgments are one source: label sets beside human_qrels= are refused
    before anything is read."""
    llm, human, _ = judged
    with pytest.raises(ValueError, match="not with label sets"):
        fastndcg.evaluate(RUN, qrels={"llm": llm, "other": llm}, human_qrels=human, k=10)


def test_every_query_human_judged(judged):
    llm, _, _ = judged
    with pytest.raises(ValueError, match="every query has human judgments"):
        fastndcg.evaluate(RUN, qrels=llm, human_qrels=QRELS, k=10)


def test_options_that_need_each_other(judged):
    llm, human, _ = judged
    with pytest.raises(ValueError, match="ppi=0.5 set the prediction-powered means, which "
                                         "need human_qrels"):
        fastndcg.evaluate(RUN, qrels=llm, ppi=0.5)
    with pytest.raises(ValueError, match="confidence=0.9 set"):
        fastndcg.evaluate(RUN, qrels=llm, confidence=0.9)
    log = pa.table({"query_id": [1, 1], "score": [1.0, 0.5], "label": [1, 0]})
    with pytest.raises(ValueError, match="doc_id"):  # the human labels join by document
        fastndcg.evaluate(log, human_qrels=human)
    wlog = pa.table({"query_id": ["1", "1"], "doc_id": ["a", "b"], "score": [1.0, 0.5],
                     "w": [1.0, 1.0]})
    with pytest.raises(ValueError, match="weighted ones"):
        fastndcg.evaluate(wlog, qrels=llm, human_qrels=human, weight="w")
    with pytest.raises(TypeError, match="evaluate_runs\\(\\) does not take human_qrels="):
        evaluate_runs([RUN], qrels=llm, human_qrels=human)
    # Dask's and Spark's evaluate take them (test_dask_* here, tests/test_spark.py);
    # compare takes them on every engine (tests/test_ppi_compare.py), with the LLM's qrels
    with pytest.raises(ValueError, match="human_qrels=... needs qrels="):
        fastndcg.dask.compare(RUN, ["a", "b"], human_qrels=human)


def test_one_shot_reader(judged):
    """The run is read once for both sets of judgments, so a RecordBatchReader (read
    only once) is taken, and gives the numbers its rows give as a Table."""
    llm, human, _ = judged
    run = read_trec_run(RUN)
    table = fastndcg.evaluate(run, qrels=llm, human_qrels=human, measure=MEASURES)
    reader = pa.RecordBatchReader.from_batches(run.schema, run.to_batches(max_chunksize=997))
    streamed = fastndcg.evaluate(reader, qrels=llm, human_qrels=human, measure=MEASURES)
    assert streamed.mean == table.mean
    assert streamed.per_query.equals(table.per_query)
    assert streamed.ppi.to_dict() == table.ppi.to_dict()
    assert streamed.ppi.measures["ndcg@10"].n == 15
    by_human = fastndcg.evaluate(run, qrels=human, measure=MEASURES)
    assert streamed.ppi.measures["ap"].human_mean == pytest.approx(by_human.mean["ap"],
                                                                   abs=1e-15, rel=0)


def _scattered(run: pa.Table) -> pa.Table:
    """The run with every query's rows in two places: its odd rows after all the
    even ones."""
    odd = pa.array(np.arange(len(run)) % 2 == 1)
    return pa.concat_tables([run.filter(pc.invert(odd)), run.filter(odd)])


def _check_against_separate(r, llm, human, run, measures, **kw):
    """``r.ppi`` equals ppi_py on the per-query values of two separate evaluations
    of ``run`` (``llm`` None: the run's own labels), lined up here by query id."""
    alone = fastndcg.evaluate(run, **({} if llm is None else {"qrels": llm}),
                              measure=measures, **kw).per_query
    by_human = fastndcg.evaluate(run, qrels=human, measure=measures, **kw).per_query
    ids = alone["query_id"].to_pylist()
    human_of = {q: i for i, q in enumerate(by_human["query_id"].to_pylist())}
    lab = np.array([q in human_of for q in ids])
    rows = [human_of[q] for q in np.array(ids)[lab]]
    for m, e in r.ppi.measures.items():
        yhat = np.asarray(alone[m])
        y = np.asarray(by_human[m])[rows]
        _check(e, _oracle(y, yhat[lab], yhat[~lab], 0.95, None))
        assert (e.n, e.N) == (int(lab.sum()), int((~lab).sum()))
    return alone, by_human


@pytest.mark.parametrize("per_query", [None, False, "path"])
def test_scattered_queries(judged, per_query, tmp_path):
    """A run whose queries' rows are not adjacent: the sums added as the run is
    scored saw fragments, so they are made again from whole queries, whatever
    happens to the per-query results (kept, written, or not kept)."""
    llm, human, _ = judged
    run = _scattered(read_trec_run(RUN))
    kw = {"per_query": str(tmp_path / "pq.parquet")} if per_query == "path" else (
        {} if per_query is None else {"per_query": False})
    r = fastndcg.evaluate(run, qrels=llm, human_qrels=human, measure=MEASURES, **kw)
    assert r.n_scattered == 50
    _check_against_separate(r, llm, human, read_trec_run(RUN), MEASURES)
    whole = fastndcg.evaluate(RUN, qrels=llm, human_qrels=human, measure=MEASURES)
    assert r.ppi.to_dict() == whole.ppi.to_dict()  # exact sums: the order of rows is moot


def test_complete_counts_queries_the_run_lacks(judged):
    """complete=True: the judged queries the run lacks count with a value of 0, under
    each set of judgments, and are lined up by id like the others."""
    llm, human, _ = judged
    run = read_trec_run(RUN)
    ids = pc.unique(run["query_id"]).to_pylist()
    short = run.filter(pc.invert(pc.is_in(run["query_id"], value_set=pa.array(ids[:6]))))
    r = fastndcg.evaluate(short, qrels=llm, human_qrels=human, measure=MEASURES,
                          complete=True)
    alone, _ = _check_against_separate(r, llm, human, short, MEASURES, complete=True)
    assert len(alone) == 50 and r.n_missing == 6


def _labelled_inline(run: pa.Table, qrels_path: str) -> pa.Table:
    """The run with a label column: the grades of ``qrels_path`` (0 where unjudged),
    as a log labelled by an LLM row by row."""
    from fastndcg.io import read_trec_qrels
    q = read_trec_qrels(qrels_path).select(["query_id", "doc_id", "label"])
    joined = run.join(q, ["query_id", "doc_id"], join_type="left outer")
    joined = joined.sort_by([("query_id", "ascending"), ("score", "descending"),
                             ("doc_id", "ascending")])
    return joined.set_column(joined.schema.get_field_index("label"), "label",
                             pc.fill_null(joined["label"], 0))


@pytest.mark.parametrize("ties", ["average", "trec"])
def test_llm_labels_in_the_run(judged, ties):
    """Without qrels, the run's own label column is the LLM's: a log judged row by row
    by an LLM, corrected by a small human sample (human_qrels joined by document)."""
    llm, human, _ = judged
    run = _labelled_inline(read_trec_run(RUN), llm)
    r = fastndcg.evaluate(run, human_qrels=human, measure=MEASURES, ties=ties)
    assert r.mean == fastndcg.evaluate(run, measure=MEASURES, ties=ties).mean
    alone, _ = _check_against_separate(r, None, human, run, MEASURES, ties=ties)
    assert len(alone) == 50
    with pytest.raises(ValueError, match="none of the queries of .* has a judgment in "
                                         "human_qrels \\(e.g. run query '321'\\)"):
        fastndcg.evaluate(run, human_qrels=pa.table({"query_id": ["x"], "doc_id": ["d"],
                                                     "label": [1]}), measure=MEASURES)
    one = pc.equal(run["query_id"], run["query_id"][0])
    with pytest.raises(ValueError, match="human_qrels judge 1 of the 50 queries of the run "
                                         "\\(scored with its labels, the LLM's\\).*at least 2"):
        fastndcg.evaluate(run, human_qrels=run.filter(one).select(["query_id", "doc_id",
                                                                   "label"]),
                          measure=MEASURES)


def test_llm_labels_in_the_run_on_the_command_line(judged, tmp_path):
    """``fastndcg evaluate LOG --human-qrels H`` without --qrels: the log's labels are
    the LLM's; the JSON equals the API's, and a log without a document column is
    one line on stderr naming the column and the fix."""
    import pyarrow.parquet as pq
    llm, human, _ = judged
    log = tmp_path / "log.parquet"
    pq.write_table(_labelled_inline(read_trec_run(RUN), llm), log)
    out = cli(["evaluate", str(log), "--human-qrels", human, "-m", "nDCG@10 AP",
               "--format", "json"])
    assert out.returncode == 0, out.stderr
    api = fastndcg.evaluate(str(log), human_qrels=human, measure="nDCG@10 AP",
                            per_query=False).ppi.to_dict()
    assert json.loads(out.stdout)["ppi"] == json.loads(json.dumps(api))
    nodoc = tmp_path / "nodoc.parquet"
    pq.write_table(pq.read_table(log).drop_columns(["doc_id"]), nodoc)
    out = cli(["evaluate", str(nodoc), "--human-qrels", human, "-k", "10"])
    assert out.returncode == 1 and out.stdout == ""  # bad data
    assert out.stderr.count("\n") == 1 and "'doc_id'" in out.stderr, out.stderr
    assert out.stderr.rstrip().endswith("Name the right one with --doc-col"), out.stderr


# ---------------------------------------------------------------------------- simulation

def _simulate(rng, n_logs, n, N, judge):
    """``n_logs`` simulated logs of n + N queries: each query's human NDCG Y ~ Beta(2, 3)
    (mean 0.4), and the judge's Ŷ from it. Returns the estimates of each log."""
    out = []
    for _ in range(n_logs):
        y = rng.beta(2, 3, n + N)
        yhat = np.clip(judge(rng, y), 0, 1)
        sums = Sums.empty(["ndcg"])
        sums.add(yhat[:, None], y[:, None], np.arange(n + N) < n)
        out.append(sums.estimate(0.95, "tuned").measures["ndcg"])
    return out


def _good(rng, y):
    return y + 0.05 * rng.normal(size=len(y))


def _biased(rng, y):  # grades everything 0.15 higher, and noisier
    return y + 0.15 + 0.1 * rng.normal(size=len(y))


@pytest.mark.parametrize("judge", [_good, _biased], ids=["correlated", "biased"])
def test_coverage_by_simulation(judge):
    """2,000 simulated logs: the 95% prediction-powered intervals cover the human-label
    mean (0.4) 95% of the time, within 3 Monte Carlo standard errors (0.0049); the
    biased judge's error is corrected (the estimates centre on 0.4, the LLM means on
    0.55); and with the correlated judge the intervals are narrower than the human
    sample's."""
    truth, n_logs = 0.4, 2000
    est = _simulate(np.random.default_rng(2024), n_logs, 200, 2000, judge)
    covered = np.mean([e.low <= truth <= e.high for e in est])
    mc = np.sqrt(0.95 * 0.05 / n_logs)
    assert abs(covered - 0.95) <= 3 * mc, covered
    human_covered = np.mean([e.human_low <= truth <= e.human_high for e in est])
    assert abs(human_covered - 0.95) <= 3 * mc + 0.005, human_covered  # n = 200: the CLT
    centre = np.mean([e.estimate for e in est])
    assert abs(centre - truth) < 0.002, centre
    llm = np.mean([e.llm_mean for e in est])
    width = np.mean([e.high - e.low for e in est])
    human_width = np.mean([e.human_high - e.human_low for e in est])
    if judge is _good:
        assert abs(llm - truth) < 0.002
        assert width < 0.5 * human_width, (width, human_width)
    else:
        assert llm - truth > 0.1  # the LLM alone is off ...
        llm_covered = np.mean([abs(e.llm_mean - truth) <= (e.high - e.low) / 2 for e in est])
        assert llm_covered == 0.0  # ... and an interval around it would never cover
        assert width < human_width  # the bias costs nothing: the rectifier absorbs it


# ---------------------------------------------------------------------------- on Dask

def _bits(ppi) -> str:
    """The prediction-powered means to the bit: ``repr`` writes each float so that
    it reads back exactly (and tells -0.0 from 0.0)."""
    return repr(ppi.to_dict())


def _parquet_run(tmp_path) -> str:
    """The real run as a directory of Parquet files of 1,000-row groups, so the
    pieces of a Dask run are row groups and queries straddle them."""
    import pyarrow.parquet as pq
    d = tmp_path / "run"
    d.mkdir()
    run = read_trec_run(RUN)
    half = len(run) // 2 + 321  # files cut inside a query too
    pq.write_table(run.slice(0, half), d / "a.parquet", row_group_size=1000)
    pq.write_table(run.slice(half), d / "b.parquet", row_group_size=1000)
    return str(d)


@pytest.mark.parametrize("source, partition_rows", [(RUN, 500), (RUN, 3000), (RUN, 1 << 24),
                                                    ("parquet", 2000)],
                         ids=["500-rows", "3000-rows", "one-partition", "parquet-row-groups"])
def test_dask_equals_one_machine(judged, dask_client, tmp_path, source, partition_rows):
    """``fastndcg.dask.evaluate(..., human_qrels=)``: each partition's sums, merged,
    with the queries stitched across partitions added on the client, are one
    machine's to the bit, however the log is cut (the real run is 50 queries of
    up to 1,000 rows: 500-row partitions cut every query)."""
    llm, human, _ = judged
    if source == "parquet":
        source = _parquet_run(tmp_path)
    one = fastndcg.evaluate(source, qrels=llm, human_qrels=human, measure=MEASURES)
    got = fastndcg.dask.evaluate(source, qrels=llm, human_qrels=human, measure=MEASURES,
                                 client=dask_client, partition_rows=partition_rows)
    assert _bits(got.ppi) == _bits(one.ppi)
    assert got.ppi.measures["ndcg@10"].n == 15 and got.ppi.measures["ndcg@10"].N == 35
    assert got.per_query.equals(one.per_query)  # the report is the LLM judgments' one
    assert got.n_queries == one.n_queries == 50


def test_dask_options_reach_the_estimate(judged, dask_client):
    llm, human, _ = judged
    kw = dict(qrels=llm, human_qrels=human, measure="nDCG@10 AP", confidence=0.8, ppi=0.5)
    got = fastndcg.dask.evaluate(RUN, client=dask_client, partition_rows=3000,
                                 per_query=False, **kw)
    assert got.ppi.method == "PPI with λ = 0.5" and got.ppi.confidence == 0.8
    assert _bits(got.ppi) == _bits(fastndcg.evaluate(RUN, **kw).ppi)


@pytest.mark.parametrize("per_query", [None, False, "path"])
def test_dask_scattered_queries(judged, dask_client, per_query, tmp_path):
    """A log whose queries' rows are not adjacent: the partitions' sums saw
    fragments, which are taken out exactly and the whole queries put in, so the
    answer is one machine's, and the whole run's, to the bit."""
    llm, human, _ = judged
    run = _scattered(read_trec_run(RUN))
    kw = {"per_query": str(tmp_path / "pq")} if per_query == "path" else (
        {} if per_query is None else {"per_query": False})
    got = fastndcg.dask.evaluate(run, qrels=llm, human_qrels=human, measure=MEASURES,
                                 client=dask_client, partition_rows=3000, **kw)
    one = fastndcg.evaluate(run, qrels=llm, human_qrels=human, measure=MEASURES)
    assert got.n_scattered == one.n_scattered == 50
    assert _bits(got.ppi) == _bits(one.ppi)
    whole = fastndcg.evaluate(RUN, qrels=llm, human_qrels=human, measure=MEASURES,
                              per_query=False)
    assert _bits(got.ppi) == _bits(whole.ppi)
    if per_query is not False:
        assert got.per_query.equals(one.per_query)


@pytest.mark.parametrize("partition_rows", [3000, 1 << 24])
def test_dask_complete(judged, dask_client, partition_rows):
    """complete=True: the judged queries the run lacks are lined up on the client,
    as one machine lines them up after its pass."""
    llm, human, _ = judged
    run = read_trec_run(RUN)
    ids = pc.unique(run["query_id"]).to_pylist()
    short = run.filter(pc.invert(pc.is_in(run["query_id"], value_set=pa.array(ids[:6]))))
    kw = dict(qrels=llm, human_qrels=human, measure=MEASURES, complete=True)
    got = fastndcg.dask.evaluate(short, client=dask_client, partition_rows=partition_rows,
                                 **kw)
    one = fastndcg.evaluate(short, **kw)
    assert got.n_missing == one.n_missing == 6
    assert _bits(got.ppi) == _bits(one.ppi)
    assert got.ppi.measures["ap"].n + got.ppi.measures["ap"].N == 50


def _error(fn, *args, **kwargs) -> tuple[type, str]:
    with pytest.raises((ValueError, TypeError)) as err:
        fn(*args, **kwargs)
    return err.type, str(err.value)


def _run_file(tmp_path, run: pa.Table) -> str:
    path = tmp_path / "run.txt"
    with open(path, "w") as f:
        for q, d, s in zip(*(run[c].to_pylist() for c in ("query_id", "doc_id", "score"))):
            f.write(f"{q} Q0 {d} 0 {s!r} tag\n")
    return str(path)


def test_dask_refuses_as_one_machine(judged, dask_client, tmp_path):
    """Every bad input gets one machine's error, word for word: a human sample of
    fewer than 2 queries (of the qrels, or of the queries the run holds), no
    overlap, ppi or confidence out of range, label sets beside human_qrels, every
    query judged by people; and nothing is written when it fails."""
    llm, human, d = judged
    first = open(human).readline().split()[0]
    one = tmp_path / "one.txt"
    one.write_text("".join(line for line in open(human) if line.split()[0] == first))
    other = tmp_path / "other.txt"
    other.write_text("nosuchquery 0 doc1 1\nnosuchquery2 0 doc2 1\n")
    run = read_trec_run(RUN)
    sample = sorted({line.split()[0] for line in open(human)})
    outside = {keep: _run_file(tmp_path / str(keep), run.filter(pc.invert(pc.is_in(
        run["query_id"], pa.array(sample[keep:]))))) for keep in (0, 1)
        if not (tmp_path / str(keep)).mkdir()}
    cases = [
        (RUN, dict(human_qrels=str(one)), "judge 1 of the 50 queries judged by the LLM"),
        (RUN, dict(human_qrels=str(other)), "human_qrels judge 0 of the 50 queries"),
        (outside[1], dict(human_qrels=human), "judge 1 of the 36 queries scored with"),
        (outside[0], dict(human_qrels=human), "none of the queries of "),
        (outside[0], dict(human_qrels=human), "has a judgment in human_qrels"),
        (RUN, dict(human_qrels=human, ppi=1.5), "ppi takes 'tuned'"),
        (RUN, dict(human_qrels=human, ppi="fast"), "ppi takes 'tuned'"),
        (RUN, dict(human_qrels=human, confidence=1), "confidence must be a number between"),
        (RUN, dict(human_qrels=QRELS), "every query has human judgments"),
        (RUN, dict(qrels={"llm": llm, "other": llm}, human_qrels=human), "not with label sets"),
    ]
    for source, kw, expect in cases:
        kw = {"qrels": llm, "k": 10, **kw}
        out = tmp_path / "out"
        alone = _error(fastndcg.evaluate, source, per_query=str(out / "pq.parquet"), **kw)
        assert expect in alone[1], alone
        got = _error(fastndcg.dask.evaluate, source, client=dask_client, partition_rows=3000,
                     per_query=str(out), **kw)
        assert got == alone
        assert not out.exists(), (kw, os.listdir(out))  # nothing written, nothing left


def test_dask_command_line(judged, dask_client):
    """``fastndcg evaluate --scheduler ... --human-qrels``: the prediction-powered
    means of one machine."""
    llm, human, _ = judged
    args = ["evaluate", RUN, "--qrels", llm, "--human-qrels", human, "-m", "nDCG@10",
            "--format", "json"]
    alone = cli(args)
    got = cli([*args, "--scheduler", dask_client.scheduler.address])
    assert got.returncode == alone.returncode == 0, got.stderr
    assert json.loads(got.stdout)["ppi"] == json.loads(alone.stdout)["ppi"]
    assert json.loads(got.stdout)["ppi"]["measures"]["ndcg@10"]["n"] == 15
