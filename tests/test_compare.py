"""``fastndcg.compare``: paired tests, intervals, segments, outputs and bad input.

What is checked, and against what:

* the resampling kernels give the same numbers whatever the thread count, and the
  two-stage bootstrap draws each row with probability 1/n (block edges, a
  one-row last block) -- against the exact moments of the bootstrap mean;
* bootstrap intervals are within Monte Carlo error of ``scipy.stats.bootstrap``
  (percentile), randomization p-values within Monte Carlo error of
  ``scipy.stats.permutation_test(permutation_type="samples")`` and equal to its
  exact p-value when every sign pattern is enumerated;
* t-test and Wilcoxon p-values equal ``scipy.stats.ttest_rel`` and
  ``scipy.stats.wilcoxon`` (defaults) to 1e-10, per segment as well;
* corrections equal a plain Holm / Benjamini-Hochberg written here;
* means, wins/ties/losses against ``fastndcg.evaluate`` of each system, and TREC
  runs against qrels (core18) against the per-query values of evaluate;
* every bad input named by the issue is a clear error; the command line prints
  table / json / markdown / LaTeX and draws a PNG;
* the plot draws, from the Comparison's own tables, one interval a system on its
  own row, the differences with a line at zero and the significant ones marked,
  counts of queries on whole-number ticks, and long names that fit.
"""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import fastndcg
from fastndcg import _kernels as K
from fastndcg import reference
from hypothesis import given, settings, strategies as st

import inprocess
from strategies import examples

scipy_stats = pytest.importorskip("scipy.stats")

REAL = Path(__file__).parent / "data" / "real"  # gzipped copies of shared/conformance/real
CORE18 = (REAL / "qrels" / "qrels.core18.txt.gz", REAL / "runs" / "core18_title_rm3.run.gz",
          REAL / "runs" / "core18_desc_rm3.run.gz")


def make_log(n_queries: int, n_systems: int = 3, n_segments: int = 4, seed: int = 0,
             tie_heavy: bool = True) -> pa.Table:
    """A log with float32 score columns score_a, score_b, ... of increasing quality,
    int8 labels and a string market column constant within each query."""
    rng = np.random.default_rng(seed)
    lens = rng.integers(2, 12, n_queries)
    n = int(lens.sum())
    label = (rng.integers(0, 4, n) * (rng.random(n) < 0.5)).astype(np.int8)
    cols = {"query_id": np.repeat(np.arange(n_queries, dtype=np.int64) * 7 + 3, lens)}
    for s in range(n_systems):
        noise = rng.integers(0, 4, n) if tie_heavy else rng.random(n)
        cols[f"score_{'abcdefgh'[s]}"] = (label * (0.5 * s) + noise).astype(np.float32)
    cols["label"] = label
    markets = np.array([f"m{g}" for g in range(n_segments)])
    cols["market"] = markets[np.repeat(rng.integers(0, n_segments, n_queries), lens)]
    return pa.table(cols)


@pytest.fixture(scope="module")
def log() -> pa.Table:
    return make_log(600)


@pytest.fixture(scope="module")
def result(log):
    return fastndcg.compare(log, ["score_a", "score_b", "score_c"], k=[5, 10],
                            segment="market", n_resamples=2000, seed=3)


def per_query(log, column, k=(5, 10), **kw):
    rep = fastndcg.evaluate(log, score=column, k=list(k), **kw)
    t = rep.per_query.sort_by("query_id")
    return t.column("query_id").to_numpy(), {f"ndcg@{c}": t.column(f"ndcg@{c}").to_numpy()
                                             for c in k}


# --------------------------------------------------------------------------- kernels

def test_resampling_is_identical_whatever_the_thread_count():
    import numba
    rng = np.random.default_rng(1)
    values = rng.random((3, 9000))
    offsets = np.array([0, 5, 4100, 9000], np.int64)
    diffs = np.ascontiguousarray(values[1:] - values[:1])
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        b1 = K.bootstrap_means(values, offsets, 50, np.uint64(11))
        f1 = K.signflip_means(diffs, offsets, 50, np.uint64(11), K.sign_table())
        numba.set_num_threads(before)
        b2 = K.bootstrap_means(values, offsets, 50, np.uint64(11))
        f2 = K.signflip_means(diffs, offsets, 50, np.uint64(11), K.sign_table())
    finally:
        numba.set_num_threads(before)
    np.testing.assert_array_equal(b1, b2)
    np.testing.assert_array_equal(f1, f2)
    # another seed, another stream
    assert not np.array_equal(b1, K.bootstrap_means(values, offsets, 50, np.uint64(12)))


@pytest.mark.parametrize("n", [7, 2048, 4097, 10_000])
def test_bootstrap_draws_every_row_with_probability_one_over_n(n):
    # sorted values make blocks differ: a block (or the one-row last block of
    # n = 4097) drawn with the wrong weight shifts the mean of the resample means
    x = np.sort(np.random.default_rng(n).random(n)) ** 3
    R = 20_000
    means = K.bootstrap_means(x[None, :].copy(), np.array([0, n], np.int64), R, np.uint64(5))[0, :, 0]
    var = x.var() / n  # exact variance of the bootstrap mean (multinomial draws)
    assert abs(means.mean() - x.mean()) < 5 * math.sqrt(var / R)
    # the sample variance of R draws: relative standard error about sqrt(2 / R)
    assert abs(means.var() / var - 1) < 5 * math.sqrt(2 / R)


@st.composite
def groups(draw):
    """Tie-heavy values (multiples of 1/4) of 1-3 systems in 1-3 groups whose sizes
    cover one row, odd sizes, whole blocks of 2,048 and a partial last block."""
    sizes = draw(st.lists(st.one_of(st.integers(1, 70), st.sampled_from([2048, 2049, 4095,
                                                                         4097, 6000])),
                          min_size=1, max_size=3))
    n_sys = draw(st.integers(1, 3))
    seed = draw(st.integers(0, 2 ** 64 - 1))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    values = rng.integers(-4, 5, (n_sys, sum(sizes))) / 4
    offsets = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    return values, offsets, seed


@settings(max_examples=examples(0.25), deadline=None)
@given(groups(), st.integers(1, 20))
def test_resampling_kernels_equal_the_reference(case, n_resamples):
    values, offsets, seed = case
    got = K.bootstrap_means(values, offsets, n_resamples, np.uint64(seed))
    want = reference.bootstrap_means(values.tolist(), offsets.tolist(), n_resamples, seed)
    np.testing.assert_allclose(got, np.array(want), rtol=1e-12, atol=1e-15)
    got = K.signflip_means(values, offsets, n_resamples, np.uint64(seed), K.sign_table())
    want = reference.signflip_means(values.tolist(), offsets.tolist(), n_resamples, seed)
    np.testing.assert_allclose(got, np.array(want), rtol=1e-12, atol=1e-15)


def test_signflip_exact_enumerates_every_pattern():
    d = np.array([0.5, -0.25, 0.125, 0.0, 1.0])
    every = K.signflip_exact(d)
    assert len(every) == 32
    assert every[-1] == d.mean()
    signs = np.array([[1 if (m >> i) & 1 else -1 for i in range(5)] for m in range(32)])
    np.testing.assert_allclose(every, (signs * d).mean(axis=1), rtol=0, atol=1e-15)


# --------------------------------------------------------------------------- against scipy

def test_bootstrap_intervals_match_scipy_within_monte_carlo_error():
    log = make_log(400, n_systems=2, tie_heavy=False, seed=4)
    res = fastndcg.compare(log, ["score_a", "score_b"], k=10, n_resamples=20_000, seed=1,
                           tests=["t"])
    _, a = per_query(log, "score_a", k=[10])
    _, b = per_query(log, "score_b", k=[10])
    a, b = a["ndcg@10"], b["ndcg@10"]
    rng = np.random.default_rng(7)
    for row, data, stat in (
            (res.systems.to_pylist()[0], (a,), np.mean),
            (res.systems.to_pylist()[1], (b,), np.mean),
            (res.tests.to_pylist()[0], (b - a,), np.mean)):
        ref = scipy_stats.bootstrap(data, stat, n_resamples=20_000, method="percentile",
                                    confidence_level=0.95, random_state=rng)
        sigma = float(np.std(data[0]) / math.sqrt(len(data[0])))
        # each endpoint's Monte Carlo sd is about 0.02 sigma at 20,000 resamples
        assert abs(row["ci_low"] - ref.confidence_interval.low) < 0.15 * sigma
        assert abs(row["ci_high"] - ref.confidence_interval.high) < 0.15 * sigma
        assert row["ci_low"] < float(np.mean(data[0])) < row["ci_high"]


def two_item_log(wins: int, ties: int, losses: int) -> pa.Table:
    """Queries of two items, labels (1, 0): a system that ranks the relevant item
    first scores 1, else 1/log2(3). System b beats a on ``wins`` queries, ties on
    ``ties`` (both rank it first) and loses on ``losses``."""
    n = wins + ties + losses
    a_first = np.r_[np.zeros(wins), np.ones(ties + losses)]
    b_first = np.r_[np.ones(wins + ties), np.zeros(losses)]
    return pa.table({
        "query_id": np.repeat(np.arange(n), 2),
        "a": np.column_stack([a_first, 1 - a_first]).ravel().astype(np.float32),
        "b": np.column_stack([b_first, 1 - b_first]).ravel().astype(np.float32),
        "label": np.tile(np.array([1, 0], np.int8), n)})


def test_randomization_p_matches_scipy_permutation_test():
    log = two_item_log(60, 95, 45)  # a sign test would give p ~ 0.17
    R = 20_000
    ours = fastndcg.compare(log, ["a", "b"], k=2, n_resamples=R, seed=2,
                            tests=["randomization"])
    _, a = per_query(log, "a", k=[2])
    _, b = per_query(log, "b", k=[2])
    ref = _perm_p(b["ndcg@2"] - a["ndcg@2"], R, 3)
    p = ours.tests["p_randomization"][0].as_py()
    assert 0.05 < ref < 0.4
    # the sd of each estimate is sqrt(p(1-p)/R); allow 5 sd of their difference
    assert abs(p - ref) < 5 * math.sqrt(2 * ref * (1 - ref) / R)


def _perm_p(d, n_resamples, seed):
    res = scipy_stats.permutation_test(
        (d, np.zeros_like(d)), lambda x, y, axis: np.mean(x - y, axis=axis),
        permutation_type="samples", vectorized=True, n_resamples=n_resamples,
        alternative="two-sided", random_state=np.random.default_rng(seed))
    return res.pvalue


@pytest.mark.parametrize("n", [2, 5, 9, 13])
def test_randomization_exact_equals_scipy_exact(n):
    rng = np.random.default_rng(n)
    log = make_log(n, n_systems=2, seed=n + 100, tie_heavy=True)
    res = fastndcg.compare(log, ["score_a", "score_b"], k=3, n_resamples=2 ** n,
                           tests=["randomization"])
    _, a = per_query(log, "score_a", k=[3])
    _, b = per_query(log, "score_b", k=[3])
    d = b["ndcg@3"] - a["ndcg@3"]
    if not np.any(d):
        assert res.tests["p_randomization"][0].as_py() == 1.0
        return
    ref = _perm_p(d, 2 ** n, 0)  # scipy enumerates all 2**n patterns: exact
    assert res.tests["p_randomization"][0].as_py() == pytest.approx(ref, rel=1e-12)


def test_t_and_wilcoxon_equal_scipy_per_segment(log, result):
    ids = {}
    vals = {}
    for col in ("score_a", "score_b", "score_c"):
        ids[col], vals[col] = per_query(log, col)
    market = log.group_by("query_id").aggregate([("market", "min")]).sort_by("query_id")
    seg = np.asarray(market.column("market_min").to_pylist())
    checked = 0
    for row in result.tests.to_pylist():
        mask = seg == row["segment"]
        a = vals[row["baseline"]][row["measure"]][mask]
        b = vals[row["system"]][row["measure"]][mask]
        d = b - a
        assert row["n_queries"] == mask.sum()
        assert row["mean_diff"] == pytest.approx(d.mean(), rel=1e-12, abs=1e-15)
        assert (row["wins"], row["ties"], row["losses"]) == (
            int((d > 0).sum()), int((d == 0).sum()), int((d < 0).sum()))
        assert row["effect_size"] == pytest.approx(d.mean() / d.std(ddof=1), rel=1e-10)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert row["p_t"] == pytest.approx(scipy_stats.ttest_rel(b, a).pvalue,
                                               rel=1e-10, abs=1e-300)
            assert row["p_wilcoxon"] == pytest.approx(scipy_stats.wilcoxon(b, a).pvalue,
                                                      rel=1e-10, abs=1e-300)
        checked += 1
    assert checked == 4 * 2 * 2  # segments x systems x measures
    for row in result.systems.to_pylist():
        mask = seg == row["segment"]
        x = vals[row["system"]][row["measure"]][mask]
        assert row["mean"] == pytest.approx(x.mean(), rel=1e-12)
        assert row["ci_low"] <= row["mean"] <= row["ci_high"]


def _holm(p):
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    out = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = running
    return out


def _bh(p):
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i], reverse=True)
    out = [0.0] * m
    running = 1.0
    for pos, i in enumerate(order):
        rank = m - pos
        running = min(running, p[i] * m / rank)
        out[i] = min(1.0, running)
    return out


@pytest.mark.parametrize("correction", ["holm", "bh", "bonferroni", "none"])
def test_corrections_across_every_reported_test(log, correction):
    res = fastndcg.compare(log, ["score_a", "score_b", "score_c"], k=[5, 10],
                           segment="market", n_resamples=500, correction=correction)
    for col in ("p_randomization", "p_t", "p_wilcoxon"):
        raw = res.tests[col].to_pylist()
        assert len(raw) == 16
        want = {"holm": _holm, "bh": _bh, "bonferroni": lambda p: [min(1.0, len(p) * x)
                                                                   for x in p],
                "none": list}[correction](raw)
        np.testing.assert_allclose(res.tests[col + "_adj"].to_pylist(), want, rtol=1e-12)


# --------------------------------------------------------------------------- results

def test_tables_have_the_documented_columns(result):
    assert result.systems.column_names == ["system", "segment", "measure", "n_queries", "mean",
                                           "ci_low", "ci_high"]
    assert result.tests.column_names == [
        "system", "baseline", "segment", "measure", "n_queries", "mean_diff", "ci_low",
        "ci_high", "effect_size", "p_randomization", "p_t", "p_wilcoxon",
        "p_randomization_adj", "p_t_adj", "p_wilcoxon_adj", "wins", "ties", "losses"]
    assert result.systems.num_rows == 4 * 3 * 2
    assert set(result.tests.column("baseline").to_pylist()) == {"score_a"}
    assert sorted(set(result.tests.column("segment").to_pylist())) == ["m0", "m1", "m2", "m3"]


def test_means_equal_evaluate_and_the_seed_repeats(log):
    res = fastndcg.compare(log, ["score_b", "score_a"], k=10, n_resamples=300, seed=9)
    again = fastndcg.compare(log, ["score_b", "score_a"], k=10, n_resamples=300, seed=9)
    assert res.systems.equals(again.systems) and res.tests.equals(again.tests)
    other = fastndcg.compare(log, ["score_b", "score_a"], k=10, n_resamples=300, seed=10)
    assert other.systems.column("ci_low") != res.systems.column("ci_low")
    for row in res.systems.to_pylist():
        mean = fastndcg.evaluate(log, score=row["system"], k=10).mean["ndcg@10"]
        assert row["mean"] == pytest.approx(mean, rel=1e-12)
    assert res.baseline == "score_b"
    assert res.tests.column("system").to_pylist() == ["score_a"]
    assert res.tests.column("segment").null_count == 1


def test_progress_says_when_resampling(log, capsys):
    fastndcg.compare(log, ["score_a", "score_b"], n_resamples=50, progress=True)
    err = capsys.readouterr().err
    assert "resampling 600 queries: 50 bootstrap and randomization resamples" in err
    assert "resampling done in" in err
    fastndcg.compare(log, ["score_a", "score_b"], n_resamples=50)
    assert capsys.readouterr().err == ""


def test_measure_names_the_cutoffs(log):
    res = fastndcg.compare(log, ["score_a", "score_b"], measure="ndcg_cut.5,10",
                           n_resamples=100)
    assert res.measures == ["ndcg@5", "ndcg@10"]
    assert res.tests["measure"].to_pylist() == ["ndcg@5", "ndcg@10"]
    # trec_eval's ndcg_cut means linear gain
    want = fastndcg.evaluate(log, score="score_b", k=[5, 10], gain="linear").mean["ndcg@10"]
    assert res.systems.to_pylist()[3]["mean"] == pytest.approx(want, rel=1e-12)
    with pytest.raises(ValueError, match="give the measures once"):
        fastndcg.compare(log, ["score_a", "score_b"], k=5, measure="ndcg_cut.5", n_resamples=10)


def test_identical_systems_give_p_one_and_all_ties(log):
    t = log.append_column("copy", log.column("score_a"))
    res = fastndcg.compare(t, ["score_a", "copy"], k=10, n_resamples=200)
    row = res.tests.to_pylist()[0]
    assert (row["p_randomization"], row["p_t"], row["p_wilcoxon"]) == (1.0, 1.0, 1.0)
    assert row["mean_diff"] == 0 and row["effect_size"] == 0
    assert row["ties"] == row["n_queries"] and row["wins"] == row["losses"] == 0


def test_zero_idcg_nan_queries_are_left_out_and_counted(log):
    res = fastndcg.compare(log, ["score_a", "score_b"], k=10, n_resamples=200,
                           zero_idcg="nan")
    rep = fastndcg.evaluate(log, score="score_a", k=10, zero_idcg="nan")
    assert res.n_left_out == rep.n_zero_idcg > 0
    assert res.tests["n_queries"][0].as_py() == rep.n_queries - rep.n_zero_idcg


def test_runs_against_qrels_core18():
    qrels, title, desc = map(str, CORE18)
    res = fastndcg.compare(None, {"title": title, "desc": desc}, qrels=qrels, k=[10, 20],
                           n_resamples=2000, gain="linear", ties="trec")
    a = fastndcg.evaluate(title, qrels=qrels, k=[10, 20], gain="linear", ties="trec")
    b = fastndcg.evaluate(desc, qrels=qrels, k=[10, 20], gain="linear", ties="trec")
    ta, tb = a.per_query.sort_by("query_id"), b.per_query.sort_by("query_id")
    assert ta.column("query_id").equals(tb.column("query_id"))
    for row in res.tests.to_pylist():
        x = ta.column(row["measure"]).to_numpy()
        y = tb.column(row["measure"]).to_numpy()
        assert row["n_queries"] == len(x) == a.n_queries
        assert row["p_t"] == pytest.approx(scipy_stats.ttest_rel(y, x).pvalue, rel=1e-10)
        assert row["p_wilcoxon"] == pytest.approx(scipy_stats.wilcoxon(y, x).pvalue, rel=1e-10)
    # a list of paths names runs by file name
    res2 = fastndcg.compare(None, [title, desc], qrels=qrels, k=10, n_resamples=100)
    assert res2.tests["system"][0].as_py() == Path(desc).name


def test_runs_with_different_queries(tmp_path):
    qrels = pa.table({"query_id": [1, 1, 2, 2, 3], "doc_id": ["a", "b", "a", "c", "d"],
                      "label": [1, 0, 2, 1, 1]})
    run_a = pa.table({"query_id": [1, 1, 2, 2, 3], "doc_id": ["a", "b", "a", "c", "d"],
                      "score": [2.0, 1.0, 1.0, 2.0, 1.0]})
    run_b = run_a.filter(pa.compute.not_equal(run_a["query_id"], 3))
    with pytest.raises(ValueError, match=r"query 3 is scored for system 'a' but not for 'b'"
                                         r".*complete=True"):
        fastndcg.compare(None, {"a": run_a, "b": run_b}, qrels=qrels, n_resamples=10)
    res = fastndcg.compare(None, {"a": run_a, "b": run_b}, qrels=qrels, n_resamples=10,
                           complete=True)
    assert res.tests["n_queries"][0].as_py() == 3
    assert res.tests["losses"][0].as_py() == 1  # query 3 scores 0 for b


def test_left_out_queries_are_counted_and_said():
    qrels = pa.table({"query_id": [1, 1, 2, 2, 3, 9], "doc_id": ["a", "b", "a", "c", "d", "z"],
                      "label": [1, 0, 2, 1, 1, 1]})
    run_a = pa.table({"query_id": [1, 1, 2, 2, 3, 4], "doc_id": ["a", "b", "a", "c", "d", "q"],
                      "score": [2.0, 1.0, 1.0, 2.0, 1.0, 1.0]})
    run_b = run_a.set_column(2, "score", pa.array([1.0, 2.0, 2.0, 1.0, 2.0, 1.0]))
    res = fastndcg.compare(None, {"a": run_a, "b": run_b}, qrels=qrels, n_resamples=10)
    assert (res.n_unjudged, res.n_missing, res.tests["n_queries"][0].as_py()) == (1, 1, 3)
    text = res.format_table()
    assert "1 run queries without judgments left out" in text
    assert "1 judged queries in no run left out (complete=True scores them 0)" in text
    res = fastndcg.compare(None, {"a": run_a, "b": run_b}, qrels=qrels, n_resamples=10,
                           complete=True)
    assert res.tests["n_queries"][0].as_py() == 4 and "scored 0" in res.format_table()


def test_segment_as_a_mapping_for_runs():
    qrels = pa.table({"query_id": [1, 1, 2, 2, 3, 3, 4], "doc_id": list("ababcad"),
                      "label": [1, 0, 2, 1, 1, 0, 1]})
    run_a = pa.table({"query_id": [1, 1, 2, 2, 3, 3, 4], "doc_id": list("ababcad"),
                      "score": [2.0, 1.0, 1.0, 2.0, 1.0, 2.0, 1.0]})
    run_b = run_a.set_column(2, "score", pa.array([1.0, 2.0, 2.0, 1.0, 2.0, 1.0, 1.0]))
    res = fastndcg.compare(None, {"a": run_a, "b": run_b}, qrels=qrels, n_resamples=16,
                           segment={1: "x", 2: "x", 3: "y", 4: "y"})
    assert res.tests["segment"].to_pylist() == ["x", "y"]
    with pytest.raises(ValueError, match="query 4 has no segment"):
        fastndcg.compare(None, {"a": run_a, "b": run_b}, qrels=qrels, n_resamples=16,
                         segment={1: "x", 2: "x", 3: "y"})


def test_text_markdown_latex_json(result):
    text = result.format_table()
    assert "market = 'm0', ndcg@5" in text and "vs score_a" in text and "Holm" in text
    md = result.to_markdown()
    assert md.count("| system |") == 8 and "|---|" in md
    tex = result.to_latex()
    assert tex.count(r"\begin{tabular}") == 16 and r"score\_b" in tex
    data = json.loads(json.dumps(result.to_dict()))
    assert len(data["tests"]) == 16 and data["correction"] == "holm"


# --------------------------------------------------------------------------- plots

def _drawn(fig, gid_prefix):
    """{axes gid: [(y, x_low, x_high) of each interval whose gid starts with gid_prefix]}."""
    out = {}
    for ax in fig.axes:
        for coll in ax.collections:
            if (coll.get_gid() or "").startswith(gid_prefix):
                for seg in coll.get_segments():
                    (x0, y0), (x1, y1) = seg
                    assert y0 == y1, "an interval is horizontal"
                    out.setdefault(ax.get_gid(), []).append((y0, min(x0, x1), max(x0, x1)))
    return out


def _axes(fig, gid):
    return next(ax for ax in fig.axes if ax.get_gid() == gid)


@pytest.fixture(scope="module")
def plain(log):
    return fastndcg.compare(log, ["score_a", "score_b", "score_c"], k=[1, 3, 10],
                            n_resamples=200)


def test_plot_one_interval_a_system_each_on_its_own_row(tmp_path, plain):
    pytest.importorskip("matplotlib")
    out = tmp_path / "cmp.png"
    fig = plain.plot(out)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    means = _drawn(fig, "mean-interval")["means"]
    assert len(means) == 3 * 3  # systems x measures, every measure by default
    assert len({y for y, _, _ in means}) == len(means), "two means drawn on one row"
    want = sorted((r["ci_low"], r["ci_high"]) for r in plain.systems.to_pylist())
    assert np.array(sorted((lo, hi) for _, lo, hi in means)) == pytest.approx(np.array(want))
    diffs = _drawn(fig, "difference-interval")["differences"]
    assert len(diffs) == 2 * 3  # every system but the baseline, each measure
    assert len({y for y, _, _ in diffs}) == len(diffs)
    want = sorted((r["ci_low"], r["ci_high"]) for r in plain.tests.to_pylist())
    assert np.array(sorted((lo, hi) for _, lo, hi in diffs)) == pytest.approx(np.array(want))
    # a difference sits on its system's row of means
    assert {y for y, _, _ in diffs} < {y for y, _, _ in means}
    zero = [ln for ln in _axes(fig, "differences").lines if ln.get_gid() == "zero"]
    assert len(zero) == 1 and list(zero[0].get_xdata()) == [0, 0]
    one = plain.plot(measure="ndcg@3")
    assert len(_drawn(one, "mean-interval")["means"]) == 3
    assert "ndcg@3" in _axes(one, "means").get_title()


def test_plot_marks_what_the_tests_found(log):
    pytest.importorskip("matplotlib")
    twin = log.append_column("score_a_again", log.column("score_a"))  # no difference
    cmp = fastndcg.compare(twin, ["score_a", "score_a_again", "score_c"], k=[3, 10],
                           n_resamples=200)
    fig = cmp.plot()
    rows = cmp.tests.to_pylist()
    alpha = 1 - cmp.confidence
    n_sig = sum(r["p_randomization_adj"] < alpha for r in rows)
    assert 0 < n_sig < len(rows), "the data should give both kinds"
    sig = _drawn(fig, "difference-interval-significant").get("differences", [])
    assert len(sig) == n_sig
    labels = [t.get_text() for t in _axes(fig, "p-values").get_yticklabels()]
    assert sum(label.endswith("*") for label in labels) == n_sig
    for r in rows:
        assert any(f"{r['mean_diff']:+.3f}" in lab and f"p={r['p_randomization_adj']:.3f}"
                   in lab for lab in labels), (r, labels)


def _tick_values(ax, axis="x"):
    ax.figure.canvas.draw()
    ticks = ax.get_xticklabels() if axis == "x" else ax.get_yticklabels()
    lo, hi = ax.get_xlim() if axis == "x" else ax.get_ylim()
    return [t.get_text().replace("\u2212", "-") for t in ticks
            if min(lo, hi) <= (t.get_position()[0] if axis == "x" else t.get_position()[1])
            <= max(lo, hi)]


def test_plot_counts_queries_in_whole_numbers():
    pytest.importorskip("matplotlib")
    few = fastndcg.compare(make_log(3, n_systems=2), ["score_a", "score_b"], k=3,
                           n_resamples=50)
    fig = few.plot()
    counts = _axes(fig, "counts")
    ticks = _tick_values(counts)
    assert len(ticks) >= 2 and all(t.lstrip("-").isdigit() for t in ticks), ticks
    row = few.tests.to_pylist()[0]
    widths = {p.get_gid(): p.get_width() for p in counts.patches}
    assert widths == {"count-wins": row["wins"], "count-ties": row["ties"],
                      "count-losses": row["losses"]}


def test_plot_segments(result):
    pytest.importorskip("matplotlib")
    fig = result.plot()  # with segments: the last measure, one block a segment
    means = _drawn(fig, "mean-interval")["means"]
    assert len(means) == 3 * 4 and len({y for y, _, _ in means}) == 12
    heads = [t.get_text() for t in _axes(fig, "means").get_yticklabels(minor=True)]
    assert [h.split(":")[0] for h in heads] == [f"market = m{g}" for g in range(4)]
    n = {r["segment"]: r["n_queries"] for r in result.systems.to_pylist()}
    assert heads[0] == f"market = m0: {n['m0']} queries"
    both = result.plot(measure=["ndcg@5", "ndcg@10"])
    assert len(_drawn(both, "mean-interval")["means"]) == 3 * 4 * 2
    assert len(_drawn(both, "difference-interval")["differences"]) == 2 * 4 * 2
    counts = _axes(both, "counts")
    assert all(t.lstrip("-").isdigit() for t in _tick_values(counts))


def _overlap(a, b) -> bool:
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


def test_plot_many_systems_with_long_names_fit():
    pytest.importorskip("matplotlib")
    names = {f"{'ranker_with_a_rather_long_configuration_name_' * 2}{i}": f"score_{c}"
             for i, c in enumerate("abcdef")}
    names["bm25"] = names.pop(next(iter(names)))
    names["costs $5 a $1k$ run"] = names.pop(next(iter(names)))  # no mathematics
    cmp = fastndcg.compare(make_log(60, n_systems=6), names, baseline=next(iter(names)),
                           k=[5, 10], n_resamples=50)
    fig = cmp.plot()
    assert len(_drawn(fig, "mean-interval")["means"]) == 6 * 2
    from matplotlib.cbook import is_math_text
    shown = [t.get_text() for t in _axes(fig, "means").get_yticklabels()]
    assert "costs \\$5 a \\$1k\\$ run" in shown and not any(map(is_math_text, shown))
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    box = fig.bbox
    from matplotlib.text import Text
    texts = [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
    for t in texts:  # nothing cut off at the figure's edge
        e = t.get_window_extent(renderer)
        assert e.x0 >= box.x0 - 1 and e.x1 <= box.x1 + 1 and e.y0 >= box.y0 - 1 \
            and e.y1 <= box.y1 + 1, t.get_text()
    for gid in ("means", "p-values"):  # the rows' labels do not run into one another
        ax = _axes(fig, gid)
        labels = [t for t in ax.get_yticklabels() + ax.get_yticklabels(minor=True)
                  if t.get_text()]
        extents = [t.get_window_extent(renderer) for t in labels]
        for i in range(len(extents)):
            for j in range(i + 1, len(extents)):
                assert not _overlap(extents[i], extents[j]), (labels[i], labels[j])
    for t in _axes(fig, "means").get_yticklabels():
        lines = t.get_text().removesuffix(" (baseline)").split("\n")
        assert all(len(line) <= 24 for line in lines), t.get_text()
    for ax in fig.axes:  # titles and axis labels stay over their own panel
        panel = ax.get_window_extent(renderer)
        for text in (ax.title, ax.xaxis.label):
            e = text.get_window_extent(renderer)
            assert e.x0 >= panel.x0 - 30 and e.x1 <= panel.x1 + 30, text.get_text()
    titles = [ax.title.get_window_extent(renderer) for ax in fig.axes if ax.get_title()]
    assert not any(_overlap(a, b) for i, a in enumerate(titles) for b in titles[i + 1:])


def test_plot_refuses_a_measure_it_does_not_hold(plain):
    pytest.importorskip("matplotlib")
    with pytest.raises(ValueError, match="measure='ndcg@7'"):
        plain.plot(measure="ndcg@7")
    with pytest.raises(TypeError, match="measure must name"):
        plain.plot(measure=3)


# --------------------------------------------------------------------------- bad input

@pytest.mark.parametrize("kwargs, error, match", [
    (dict(systems=["score_a"]), ValueError, r"at least two systems, got 1"),
    (dict(systems="score_a"), TypeError, r"at least two systems"),
    (dict(systems=["score_a", "nope"]), ValueError, r"column 'nope' \(a system's scores\) not "
                                                    r"found.*systems="),
    (dict(segment="nope"), ValueError, r"column 'nope' \(segment values\) not found"),
    (dict(baseline="score_z"), ValueError, r"baseline='score_z' is not among the systems"),
    (dict(confidence=1.0), ValueError, r"confidence must be a number between 0 and 1"),
    (dict(confidence=0), ValueError, r"confidence must be"),
    (dict(n_resamples=0), ValueError, r"n_resamples must be a whole number >= 1, got 0"),
    (dict(tests=["anova"]), ValueError, r"tests must be one of 'randomization', 't', "
                                        r"'wilcoxon'; got 'anova'"),
    (dict(correction="sidak"), ValueError, r"correction must be one of .*; got 'sidak'"),
    (dict(score="score_a"), TypeError, r"does not take score="),
    (dict(seed=-1), ValueError, r"seed must be"),
    (dict(n_resamples=10 ** 9), ValueError, r"n_resamples=1,000,000,000 would hold 22.4 GiB"),
    (dict(systems=["score_a", "score_a"]), ValueError, r"'score_a' is named twice"),
])
def test_bad_arguments(log, kwargs, error, match):
    args = dict(systems=["score_a", "score_b"], n_resamples=10)
    args.update(kwargs)
    with pytest.raises(error, match=match):
        fastndcg.compare(log, **args)


def test_system_column_with_nulls(log):
    b = log.column("score_b").to_pylist()
    b[5] = None
    t = log.set_column(log.column_names.index("score_b"), "score_b",
                       pa.array(b, pa.float32()))
    with pytest.raises(ValueError, match=r"column 'score_b' has 1 null value"):
        fastndcg.compare(t, ["score_a", "score_b"], n_resamples=10)


def test_segment_with_a_single_query(log):
    m = log.column("market").to_pylist()
    qid = log.column("query_id").to_pylist()
    first = qid[0]
    m = ["solo" if q == first else x for q, x in zip(qid, m)]
    t = log.set_column(log.column_names.index("market"), "market", pa.array(m))
    with pytest.raises(ValueError, match=rf"segment 'solo' has a single query \({first}\)"):
        fastndcg.compare(t, ["score_a", "score_b"], segment="market", n_resamples=10)


def test_segment_varying_within_a_query(log):
    m = log.column("market").to_pylist()
    m[1] = "elsewhere" if m[0] != "elsewhere" else "m0"
    t = log.set_column(log.column_names.index("market"), "market", pa.array(m))
    with pytest.raises(ValueError, match=r"column 'market' \(segment\) varies within query 3"):
        fastndcg.compare(t, ["score_a", "score_b"], segment="market", n_resamples=10)


def test_runs_need_no_source_and_no_column_segment():
    # with a log, qrels judge its documents and the systems are its score columns
    with pytest.raises(FileNotFoundError, match="source 'log.parquet' does not exist"):
        fastndcg.compare("log.parquet", {"a": "x.run", "b": "y.run"}, qrels="q.txt")
    with pytest.raises(TypeError, match="a system is a score column of the log"):
        fastndcg.compare("log.parquet", {"a": 1, "b": 2}, qrels="q.txt")
    with pytest.raises(ValueError, match="names a column of a log"):
        fastndcg.compare(None, {"a": "x.run", "b": "y.run"}, qrels="q.txt", segment="m")


# --------------------------------------------------------------------------- command line

def run_cli(*args):
    """``fastndcg ARGS`` in this process (tests/inprocess.py)."""
    return inprocess.run(args, timeout=300)


@pytest.fixture(scope="module")
def log_file(tmp_path_factory, log):
    path = tmp_path_factory.mktemp("cmp") / "log.parquet"
    pq.write_table(log, path)
    return path


def test_cli_formats_and_plot(log_file, tmp_path):
    out = run_cli("compare", log_file, "--systems", "score_a,score_b", "--segment", "market",
                  "--resamples", "500", "--format", "json", "-k", "5,10")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    ref = fastndcg.compare(pq.read_table(log_file), ["score_a", "score_b"], segment="market",
                           n_resamples=500, k=[5, 10])
    assert [r["p_t"] for r in data["tests"]] == pytest.approx(
        ref.tests["p_t"].to_pylist(), rel=1e-12)
    assert [r["ci_low"] for r in data["tests"]] == ref.tests["ci_low"].to_pylist()
    for fmt, marker in (("markdown", "| system |"), ("latex", r"\begin{tabular}"),
                        ("table", "vs score_a")):
        out = run_cli("compare", log_file, "--systems", "score_a,score_b", "--resamples", "100",
                      "--format", fmt)
        assert out.returncode == 0 and marker in out.stdout, out.stderr
    pytest.importorskip("matplotlib")
    png = tmp_path / "c.png"
    out = run_cli("compare", log_file, "--systems", "score_a,score_b,score_c", "--resamples",
                  "100", "-k", "1,3,5,10", "--plot", png)
    assert out.returncode == 0, out.stderr
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_cli_run_with_an_empty_name():
    """``=PATH``: the name before '=' is empty (not "the file '=PATH' does not exist")."""
    qrels, title, desc = map(str, CORE18)
    out = run_cli("compare", "--qrels", qrels, f"={title}", f"desc={desc}")
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert out.stderr.count("\n") == 1
    assert "the name before '=' is empty" in out.stderr and repr(title) in out.stderr


def test_cli_runs_against_qrels():
    qrels, title, desc = map(str, CORE18)
    out = run_cli("compare", "--qrels", qrels, f"title={title}", f"desc={desc}", "--resamples",
                  "200", "--format", "json", "--gain", "linear")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["baseline"] == "title" and data["tests"][0]["system"] == "desc"


@pytest.mark.parametrize("args, status, text", [
    (["--systems", "score_a"], 1, "at least two systems"),
    (["--systems", "score_a,score_b", "--confidence", "2"], 2, "confidence"),
    (["--systems", "score_a,score_b", "--baseline", "zz"], 2, "--baseline 'zz'"),
    (["--systems", "score_a,nope"], 1, "column 'nope'"),
    ([], 2, "--systems"),
    (["--systems", "score_a,score_b", "--plot", "out.txt"], 2, "--plot"),
])
def test_cli_errors_are_one_line(log_file, args, status, text):
    out = run_cli("compare", log_file, *args)
    assert out.returncode in (1, 2) and "Traceback" not in out.stderr
    assert out.stderr.startswith("fastndcg: error: ") and out.stderr.count("\n") == 1
    assert text in out.stderr
