"""fastndcg.agreement: two label sets, per label and on the order of systems.

The label statistics are checked against scikit-learn's ``cohen_kappa_score`` and
``confusion_matrix`` and the ``krippendorff`` package (two coders), overall and on
each query alone; the system statistics against ``scipy.stats`` (kendalltau,
spearmanr, ttest_rel), fastndcg.evaluate's means, and tau_AP against a plain
transcription of Yilmaz, Aslam & Robertson's definition written here.
"""

from __future__ import annotations

import gzip
import itertools
import json
import math
import warnings
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fastndcg
from fastndcg import grade_agreement, kendall_tau_b, spearman_rho, tau_ap
from fastndcg._agreement import STATISTICS
from strategies import examples
from test_cli import assert_one_line_error, main_inprocess

krippendorff = pytest.importorskip("krippendorff")
metrics = pytest.importorskip("sklearn.metrics")
stats = pytest.importorskip("scipy.stats")

REAL = Path(__file__).parent / "data" / "real"
CORE_QRELS = REAL / "qrels" / "qrels.core18.txt.gz"
CORE_RUNS = [REAL / "runs" / "core18_desc_rm3.run.gz", REAL / "runs" / "core18_title_rm3.run.gz"]
TOL = dict(rel=1e-12, abs=1e-12)


# --------------------------------------------------------------------------- oracles


def oracle(ga: np.ndarray, gb: np.ndarray) -> dict:
    """The six statistics of two aligned grade arrays from scikit-learn and
    krippendorff (kappa reads the grades' codes: scikit-learn refuses float classes,
    and kappa depends only on the order of the values)."""
    values = np.unique(np.concatenate([ga, gb]))
    ca, cb = np.searchsorted(values, ga), np.searchsorted(values, gb)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = {"kappa": metrics.cohen_kappa_score(ca, cb),
               "kappa_linear": metrics.cohen_kappa_score(ca, cb, weights="linear"),
               "kappa_quadratic": metrics.cohen_kappa_score(ca, cb, weights="quadratic")}
    for level in ("nominal", "ordinal", "interval"):
        try:
            out[f"alpha_{level}"] = float(krippendorff.alpha(
                reliability_data=np.array([ga, gb], np.float64), level_of_measurement=level))
        except ValueError:  # a single value: the package refuses, fastndcg says NaN
            out[f"alpha_{level}"] = math.nan
    return out


def assert_stats(got: dict, expected: dict) -> None:
    for name in STATISTICS:
        if math.isnan(expected[name]):
            assert math.isnan(got[name]), (name, got[name])
        else:
            assert got[name] == pytest.approx(expected[name], **TOL), name


def table(q, d, g) -> pa.Table:
    return pa.table({"query_id": pa.array(q), "doc_id": pa.array(d), "label": pa.array(g)})


def pairs_by_hand(a: pa.Table, b: pa.Table) -> dict:
    """(query, doc) -> (grade a, grade b) for the pairs both judge."""
    ja = {(q, d): g for q, d, g in zip(*(a.column(c).to_pylist() for c in a.column_names))}
    jb = {(q, d): g for q, d, g in zip(*(b.column(c).to_pylist() for c in b.column_names))}
    return {k: (ja[k], jb[k]) for k in ja if k in jb}


@st.composite
def label_sets(draw):
    """Two label sets over a few queries, overlapping partly, with grades drawn from a
    small set of integers or floats (ties, single-valued queries and all)."""
    n = draw(st.integers(1, 60))
    floats = draw(st.booleans())
    pool = draw(st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.25, 3.0, -1.0, 7.0]) if floats
                         else st.integers(-2, 6), min_size=1, max_size=5, unique=True))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    q = rng.integers(0, draw(st.integers(1, 6)), n)
    d = np.arange(n)
    ga = rng.choice(pool, n)
    noise = draw(st.sampled_from(["same", "shift", "shuffle"]))
    gb = {"same": ga.copy(), "shuffle": rng.permutation(ga),
          "shift": np.where(rng.random(n) < 0.3, rng.choice(pool, n), ga)}[noise]
    keep_a = rng.random(n) < 0.9
    keep_b = rng.random(n) < 0.9
    keep_a[0] = keep_b[0] = True  # at least one shared document
    ids = (lambda x: [f"q{v}" for v in x]) if draw(st.booleans()) else (lambda x: x)
    return (table(ids(q[keep_a]), d[keep_a], ga[keep_a]),
            table(ids(q[keep_b]), d[keep_b], gb[keep_b]))


# --------------------------------------------------------------------------- labels


@settings(max_examples=examples(), deadline=None)
@given(label_sets())
def test_labels_equal_sklearn_and_krippendorff_overall_and_per_query(sets):
    a, b = sets
    got = fastndcg.agreement(a, b)
    shared = pairs_by_hand(a, b)
    ga = np.array([v[0] for v in shared.values()], np.float64)
    gb = np.array([v[1] for v in shared.values()], np.float64)
    assert (got.n_both, got.n_only_a, got.n_only_b) == (
        len(shared), a.num_rows - len(shared), b.num_rows - len(shared))
    assert_stats(got.overall, oracle(ga, gb))
    values = np.unique(np.concatenate([ga, gb]))
    assert got.values.tolist() == values.tolist()
    with warnings.catch_warnings():  # a single grade: scikit-learn warns, and counts it
        warnings.simplefilter("ignore")
        expected_cm = metrics.confusion_matrix(np.searchsorted(values, ga),
                                               np.searchsorted(values, gb),
                                               labels=np.arange(len(values)))
    assert got.confusion.tolist() == expected_cm.tolist()
    # per query: every query with a shared document, each statistic on it alone
    queries = sorted({q for q, _ in shared}, key=str)
    rows = {r["query_id"]: r for r in got.per_query.to_pylist()}
    assert sorted(rows, key=str) == queries
    for q in queries:
        mine = [v for (qq, _), v in shared.items() if qq == q]
        qa, qb = np.array(mine, np.float64).T
        assert rows[q]["n_both"] == len(mine)
        assert rows[q]["n_only_a"] == sum(x == q for x in a.column("query_id").to_pylist()) - len(mine)
        assert rows[q]["n_only_b"] == sum(x == q for x in b.column("query_id").to_pylist()) - len(mine)
        assert_stats(rows[q], oracle(qa, qb))


def test_integer_grades_equal_sklearn_on_the_grades_themselves():
    rng = np.random.default_rng(3)
    n = 5000
    ga = rng.integers(0, 4, n)
    gb = np.clip(ga + rng.integers(-1, 2, n), 0, 3)
    q = np.arange(n) % 40
    got = fastndcg.agreement(table(q, np.arange(n), ga), table(q, np.arange(n), gb))
    assert grade_agreement(ga, gb) == got.overall  # the same arrays, lined up by hand
    for w, name in ((None, "kappa"), ("linear", "kappa_linear"), ("quadratic", "kappa_quadratic")):
        assert got.overall[name] == pytest.approx(metrics.cohen_kappa_score(ga, gb, weights=w), **TOL)
    for level in ("nominal", "ordinal", "interval"):
        assert got.overall[f"alpha_{level}"] == pytest.approx(
            krippendorff.alpha(np.array([ga, gb], float), level_of_measurement=level), **TOL)


def test_label_sets_from_trec_files_equal_the_same_tables(tmp_path):
    rng = np.random.default_rng(5)
    q, d = rng.integers(0, 9, 300), np.arange(300)
    ga, gb = rng.integers(0, 3, 300), rng.integers(0, 3, 300)
    for name, g in (("a.txt", ga), ("b.txt", gb)):
        (tmp_path / name).write_text("".join(f"q{x} 0 d{y} {z}\n" for x, y, z in zip(q, d, g)))
    from_files = fastndcg.agreement(tmp_path / "a.txt", tmp_path / "b.txt")
    from_tables = fastndcg.agreement(table([f"q{x}" for x in q], [f"d{y}" for y in d], ga),
                                     table([f"q{x}" for x in q], [f"d{y}" for y in d], gb))
    assert from_files.names == ("a.txt", "b.txt")
    assert from_files.overall == from_tables.overall
    assert from_files.per_query.equals(from_tables.per_query)
    import pyarrow.parquet as pq
    pq.write_table(table([f"q{x}" for x in q], [f"d{y}" for y in d], ga), tmp_path / "a.parquet")
    from_parquet = fastndcg.agreement(tmp_path / "a.parquet", tmp_path / "b.txt")
    assert from_parquet.overall == from_files.overall
    with pytest.raises(ValueError, match="which this command reads"):
        from_parquet.write(tmp_path / "a.parquet")  # never over a label set


def test_output_text_json_and_per_query(tmp_path):
    a = table(["q1"] * 4 + ["q2"] * 3, ["d1", "d2", "d3", "d4", "d1", "d2", "d3"],
              [2, 1, 0, 0, 1, 0, 2])
    b = table(["q1"] * 4 + ["q2"] * 2 + ["q3"], ["d1", "d2", "d3", "d4", "d1", "d3", "d9"],
              [2, 0, 0, 1, 1, 2, 1])
    got = fastndcg.agreement(a, b, names=("human", "llm"))
    text = got.format_table()
    assert "documents judged by both 6 (in 2 queries); by human only 1; by llm only 1" in text
    assert "confusion matrix (rows: human, columns: llm)" in text
    data = json.loads(json.dumps(got.to_dict()))
    assert data["confusion"] == [[1, 1, 0], [1, 1, 0], [0, 0, 2]]
    assert data["n_queries_b"] == 3 and data["kappa"] == pytest.approx(0.5)
    got.write(tmp_path / "pq.parquet")
    import pyarrow.parquet as pq
    assert pq.read_table(tmp_path / "pq.parquet").equals(got.per_query)


# --------------------------------------------------------------------------- systems


def tau_ap_by_definition(reference, other) -> float:
    """Yilmaz, Aslam & Robertson (2008), eq. 3, on the order being judged: tau_AP =
    2/(N-1) * sum_{i=2..N} C(i)/(i-1) - 1, C(i) the systems above rank i of
    ``other``'s order that ``reference`` also scores higher than the system at rank
    i. Ties in ``other``: the mean over every order of its tied systems, each
    order enumerated; a pair tied in both: NaN."""
    n = len(reference)
    if any(reference[i] == reference[j] and other[i] == other[j]
           for i in range(n) for j in range(i + 1, n)):
        return math.nan
    groups = [[s for s in range(n) if other[s] == v] for v in sorted(set(other), reverse=True)]
    values = []
    for orders in itertools.product(*(itertools.permutations(g) for g in groups)):
        order = [s for g in orders for s in g]
        total = 0.0
        for i in range(1, n):
            total += sum(1 for j in range(i) if reference[order[j]] > reference[order[i]]) / i
        values.append(2.0 / (n - 1) * total - 1.0)
    return sum(values) / len(values)


def test_tau_ap_walks_the_order_being_judged():
    # the paper's definition by hand: other ranks 1, 2, 3, 4, 0; items 1-3 each have
    # every item above them right (1/1, 2/2, 3/3), item 0 none (0/4): 2/4 * 3 - 1
    assert tau_ap([0.9, 0.8, 0.7, 0.6, 0.5], [0.5, 0.9, 0.8, 0.7, 0.6]) == 0.5
    # the reference exchanged with the order judged: a different value (not symmetric)
    assert tau_ap([0.5, 0.9, 0.8, 0.7, 0.6], [0.9, 0.8, 0.7, 0.6, 0.5]) != 0.5
    # ircor's documented example (julian-urbano/ircor README): tauAP(x, y) = 0.7491182
    x = [0.06, 0.2, 0.27, 0.37, 0.57, 0.63, 0.66, 0.9, 0.91, 0.94]
    y = [0.37, 0.06, 0.2, 0.27, 0.57, 0.66, 0.63, 0.91, 0.9, 0.94]
    assert tau_ap(x, y) == pytest.approx(0.7491182, abs=5e-8)


def test_tau_ap_is_nan_where_the_order_is_undefined():
    assert math.isnan(tau_ap([0.5, 0.5], [0.3, 0.3]))          # tied under both sets
    assert math.isnan(tau_ap([0.5, 0.5, 0.9], [0.3, 0.3, 0.1]))
    assert math.isnan(tau_ap([0.5], [0.3]))
    with pytest.raises(ValueError, match="same length"):
        tau_ap([0.5, 0.4], [0.3])


@pytest.mark.parametrize("f", [tau_ap, kendall_tau_b, spearman_rho])
def test_system_correlations_refuse_what_is_not_two_scorings(f):
    for a, b in ((["a", "b"], [1, 2]), ([1, 2], {"x": 1})):
        with pytest.raises(TypeError, match="must be sequences of numbers"):
            f(a, b)
    for a, b in (([1, 2], [1, 2, 3]), ([[1, 2]], [[1, 2]]), (None, None), ([1, 2], None)):
        with pytest.raises((TypeError, ValueError), match="must be"):
            f(a, b)
    # tied only in the order judged: the two orders give +1 and -1, their mean 0
    assert tau_ap([0.5, 0.4], [0.3, 0.3]) == 0.0
    # ties in the order judged: independent of the order the systems are given in
    x, y = [0.9, 0.1, 0.5, 0.3], [0.2, 0.2, 0.7, 0.2]
    for perm in itertools.permutations(range(4)):
        assert tau_ap([x[p] for p in perm], [y[p] for p in perm]) == pytest.approx(
            tau_ap(x, y), **TOL)


def test_extreme_scores_and_grades_neither_overflow_nor_read_text():
    """Scores of +-1e308 and equal infinities rank as numbers (a difference of them
    overflowed, or was NaN); grades spanning -1e308..1e308 give interval alpha as
    krippendorff gives it on the same grades halved 1024 times (alpha is the same for
    grades scaled alike; the scaling by a power of two is exact); text is refused,
    never parsed."""
    x = [1.0, math.inf, math.inf, 0.0, -math.inf]
    y = [1.0, 2.0, 3.0, 4.0, 5.0]
    assert kendall_tau_b(x, y) == pytest.approx(stats.kendalltau(x, y).statistic, **TOL)
    assert spearman_rho(x, y) == pytest.approx(stats.spearmanr(x, y).statistic, **TOL)
    big = [1e308, -1e308, 1e308, 5.0]
    assert kendall_tau_b(big, y[:4]) == pytest.approx(stats.kendalltau(big, y[:4]).statistic,
                                                      **TOL)
    assert tau_ap(big, y[:4]) == pytest.approx(tau_ap_by_definition(big, y[:4]), **TOL)
    ga, gb = np.array([1e308, -1e308, 1e308, 0.0]), np.array([1.0, 2.0, 3.0, 1e308])
    got = grade_agreement(ga, gb)["alpha_interval"]
    scaled = np.ldexp(np.array([ga, gb]), -1024)
    want = krippendorff.alpha(reliability_data=scaled, level_of_measurement="interval")
    assert math.isfinite(got) and got == pytest.approx(want, rel=1e-9)
    for f in (tau_ap, kendall_tau_b, spearman_rho, grade_agreement):
        with pytest.raises(TypeError):
            f(["1", "2"], [1, 2])
        with pytest.raises((TypeError, ValueError), match=r"\b(a|x|reference)\b"):
            f([[1], [1, 2]], [1, 2])


@settings(max_examples=examples(2), deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4)), min_size=2, max_size=7))
def test_tau_ap_equals_the_definition_over_the_orders_of_ties(pairs):
    x = [p[0] / 7 for p in pairs]
    y = [p[1] / 7 for p in pairs]
    want = tau_ap_by_definition(x, y)
    got = tau_ap(x, y)
    assert (math.isnan(got) and math.isnan(want)) or got == pytest.approx(want, **TOL)


@settings(max_examples=examples(2), deadline=None)
@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6)), min_size=2, max_size=25))
def test_system_correlations_equal_scipy_and_the_definition(pairs):
    x = np.array([p[0] for p in pairs], float) / 7
    y = np.array([p[1] for p in pairs], float) / 7
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tau, rho = stats.kendalltau(x, y).statistic, stats.spearmanr(x, y).statistic
    for mine, theirs in ((kendall_tau_b(x, y), tau), (spearman_rho(x, y), rho)):
        if math.isnan(theirs):
            assert math.isnan(mine)
        else:
            assert mine == pytest.approx(theirs, **TOL)


def perturbed(qrels: Path, out: Path, seed: int, flip: float) -> Path:
    rng = np.random.default_rng(seed)
    lines = []
    for line in gzip.open(qrels, "rt"):
        q, it, d, g = line.split()
        if rng.random() < 0.05:
            continue
        g = int(rng.integers(0, 3)) if rng.random() < flip else int(g)
        lines.append(f"{q} {it} {d} {g}\n")
    out.write_text("".join(lines))
    return out


@pytest.fixture(scope="module")
def systems(tmp_path_factory):
    """Six runs from the two real core18 runs (their scores, and the same with noise
    of growing size), and a synthetic judge that disagrees with the real one."""
    import pyarrow.compute as pc
    from fastndcg.io import read_trec_run
    tmp = tmp_path_factory.mktemp("agreement")
    rng = np.random.default_rng(11)
    runs = {}
    for path in CORE_RUNS:
        base = read_trec_run(path)
        for noise in (0.0, 1.0, 3.0):
            score = pc.add(base.column("score"),
                           pa.array(rng.normal(0, noise, base.num_rows) if noise else
                                    np.zeros(base.num_rows)))
            name = f"{path.name.split('_')[1]}-{noise:g}"
            runs[name] = base.set_column(base.schema.get_field_index("score"), "score", score)
    return runs, perturbed(CORE_QRELS, tmp / "llm.txt", 3, 0.4)  # seed 3 flips a pair


def test_runs_read_once_for_both_sets(systems):
    runs, llm = systems
    given = fastndcg.agreement(CORE_QRELS, llm, runs=runs, measure="P.5")
    once = fastndcg.agreement(CORE_QRELS, llm, runs=iter(list(runs.items())), measure="P.5")
    (s,), (t,) = given.systems, once.systems
    assert t.systems == s.systems == list(runs)
    assert t.mean_a.tolist() == s.mean_a.tolist() and t.mean_b.tolist() == s.mean_b.tolist()


def test_systems_means_correlations_and_flips(systems):
    runs, llm = systems
    got = fastndcg.agreement(CORE_QRELS, llm, runs=runs, measure=["ndcg_cut.10", "P.5"])
    assert [s.measure for s in got.systems] == ["ndcg@10", "p@5"]
    names = list(runs)
    for s in got.systems:
        assert s.systems == names
        for i, name in enumerate(names):
            for qrels, means in ((CORE_QRELS, s.mean_a), (llm, s.mean_b)):
                alone = fastndcg.evaluate(runs[name], qrels=qrels, measure=["ndcg_cut.10", "P.5"])
                assert means[i] == alone.mean[s.measure]  # the same call: the same bits
        assert s.kendall_tau_b == pytest.approx(stats.kendalltau(s.mean_a, s.mean_b).statistic, **TOL)
        assert s.spearman_rho == pytest.approx(stats.spearmanr(s.mean_a, s.mean_b).statistic, **TOL)
        assert s.tau_ap == pytest.approx(tau_ap_by_definition(list(s.mean_a), list(s.mean_b)), **TOL)
        flipped = {(f.first, f.second): f for f in s.flips}
        for i in range(len(names)):
            for j in range(i + 1, len(names)):
                da, db = s.mean_a[i] - s.mean_a[j], s.mean_b[i] - s.mean_b[j]
                assert ((names[i], names[j]) in flipped) == (da * db < 0)
        for f in s.flips:
            for qrels, p in ((CORE_QRELS, f.p_a), (llm, f.p_b)):
                x, y = (fastndcg.evaluate(runs[n], qrels=qrels, measure=["ndcg_cut.10", "P.5"])
                        .per_query.sort_by("query_id").column(s.measure).to_numpy()
                        for n in (f.first, f.second))
                assert p == pytest.approx(stats.ttest_rel(x, y).pvalue, **TOL)
    assert any(s.flips for s in got.systems), "the noisy judge should flip some pair"


# --------------------------------------------------------------------------- bad input


def test_sets_that_share_no_judged_document_are_refused():
    a = table(["q1", "q1"], ["d1", "d2"], [1, 0])
    b = table(["q1", "q2"], ["d3", "d1"], [1, 0])
    with pytest.raises(ValueError, match="share no judged document"):
        fastndcg.agreement(a, b)


def test_a_set_given_twice_is_refused(tmp_path):
    a = table(["q1", "q1"], ["d1", "d2"], [1, 0])
    with pytest.raises(ValueError, match="given twice"):
        fastndcg.agreement(a, a)
    path = tmp_path / "q.txt"
    path.write_text("q1 0 d1 1\nq1 0 d2 0\n")
    with pytest.raises(ValueError, match="given twice"):
        fastndcg.agreement(path, str(path))


def _judged_twice(which: str, doc: str, query: str, n: int) -> str:
    """The message of a label set judging a document twice, as a load of that set
    alone (fastndcg.evaluate's qrels=) words it."""
    how_many = "1 query has" if n == 1 else f"{n} queries have"
    return (f"label set {which!r}: qrels: the qrels judge document {doc!r} of query {query} "
            f"more than once ({how_many} such duplicates); keep one judgment per "
            f"(query, document)")


_A = table(["q1"] * 3 + ["q2"] * 2, ["d1", "d2", "d3", "d1", "d2"], [1, 0, 2, 1, 0])
_B = table(["q1"] * 3 + ["q3"] * 2, ["d1", "d2", "d3", "d1", "d2"], [1, 1, 2, 1, 0])


@pytest.mark.parametrize("a, b, expected", [
    # the first set: the earliest repeat of its first such query, and how many have one
    (table(["q1"] * 4 + ["q2"] * 2, ["d1", "d2", "d3", "d2", "d1", "d1"], [1, 0, 2, 1, 0, 1]),
     _B, _judged_twice("a", "d2", "'q1'", 2)),
    # the second set: a document the first judges too, one only it judges, a query
    # the first does not judge
    (_A, table(["q1"] * 4 + ["q3"] * 2, ["d1", "d2", "d3", "d2", "d1", "d2"], [1, 0, 2, 1, 0, 1]),
     _judged_twice("b", "d2", "'q1'", 1)),
    (_A, table(["q1"] * 4 + ["q3"] * 2, ["d1", "d7", "d3", "d7", "d1", "d2"], [1, 0, 2, 1, 0, 1]),
     _judged_twice("b", "d7", "'q1'", 1)),
    (_A, table(["q1"] * 3 + ["q3"] * 3, ["d1", "d2", "d3", "d1", "d2", "d1"], [1, 0, 2, 1, 0, 1]),
     _judged_twice("b", "d1", "'q3'", 1)),
    # both: the first set's is said
    (table(["q1"] * 4 + ["q2"] * 2, ["d1", "d2", "d3", "d3", "d1", "d1"], [1, 0, 2, 1, 0, 1]),
     table(["q1"] * 4 + ["q3"] * 2, ["d1", "d2", "d3", "d2", "d1", "d1"], [1, 0, 2, 1, 0, 1]),
     _judged_twice("a", "d3", "'q1'", 2)),
    # before a bad grade of either set, as two loads one after the other say it
    (table(["q1"] * 4, ["d1", "d2", "d3", "d3"], [1, 0, 2, 1]),
     table(["q1"] * 2, ["d1", "d2"], [1.0, math.nan]), _judged_twice("a", "d3", "'q1'", 1)),
    (table(["q1"] * 4, ["d1", "d2", "d3", "d3"], [1.0, 0.0, math.nan, 1.0]), _B,
     _judged_twice("a", "d3", "'q1'", 1)),
    (_A, table(["q1"] * 4, ["d1", "d2", "d3", "d3"], [1.0, 0.0, math.nan, 1.0]),
     _judged_twice("b", "d3", "'q1'", 1)),
    # integer ids, and integers meeting strings (matched as text)
    (table([1, 1, 2], [5, 6, 5], [1, 0, 1]), table([1, 1, 1, 3], [5, 6, 6, 7], [1, 1, 0, 1]),
     _judged_twice("b", "6", "1", 1)),
    (table([1, 1, 2], [5, 6, 5], [1, 0, 1]),
     table(["1", "1", "1", "3"], ["5", "6", "6", "7"], [1, 1, 0, 1]),
     _judged_twice("b", "6", "'1'", 1)),
    # text ids longer than 7 bytes (matched as text, not packed as integers)
    (table(["q1"] * 3, ["document-1", "document-2", "document-1"], [1, 0, 1]), _B,
     _judged_twice("a", "document-1", "'q1'", 1)),
    (_A, table(["q1"] * 3, ["d1", "document-2", "document-2"], [1, 0, 1]),
     _judged_twice("b", "document-2", "'q1'", 1)),
])
def test_a_document_judged_twice_is_refused_naming_the_set(a, b, expected):
    with pytest.raises(ValueError) as err:
        fastndcg.agreement(a, b)
    assert str(err.value) == expected


def test_a_bad_grade_of_the_second_set_comes_after_a_document_the_first_judges_twice():
    a = table(["q1"] * 3, ["d1", "d2", "d1"], [1, 0, 1])
    b = table(["q1"] * 2, ["d1", "d2"], [1.0, math.nan])
    with pytest.raises(ValueError, match="label set 'a'.*more than once"):
        fastndcg.agreement(a, b)
    with pytest.raises(ValueError, match="label set 'b'.*finite"):
        fastndcg.agreement(table(["q1"] * 2, ["d1", "d2"], [1, 0]), b)


def _doc_ids(t: pa.Table, kind: str) -> pa.Table:
    """t with its (integer) document ids as ``kind``: int64, short text (up to 7
    bytes: matched packed as integers), long text, text of both lengths, or text
    with NUL bytes ("7" and "7\\0" differ)."""
    d = t.column("doc_id").to_pylist()
    made = {"int64": lambda: d, "short": lambda: [str(x) for x in d],
            "long": lambda: [f"clueweb09-en0000-{x}" for x in d],
            "both": lambda: [str(x) if x % 3 else f"doc-{x:08d}" for x in d],
            "nul": lambda: [str(x // 2) + "\0" * (x % 2) for x in d]}[kind]()
    return t.set_column(1, "doc_id", pa.array(made, pa.int64() if kind == "int64" else None))


@settings(max_examples=examples(), deadline=None)
@given(label_sets(), st.sampled_from([("int64", "int64"), ("short", "short"), ("long", "long"),
                                      ("both", "both"), ("nul", "nul"), ("short", "long"),
                                      ("int64", "short")]))
def test_lining_up_equals_joining_one_set_as_a_run_to_the_other(sets, kinds):
    """qrels.line_up (one pass: both sets checked and lined up) gives the match the
    run join gives when the first set is read as a run of the second, whatever the
    ids (integers, text short and long, integers meeting text)."""
    from fastndcg.chunks import Chunk
    from fastndcg.qrels import line_up, load_qrels
    from fastndcg import _core as C
    a, b = (_doc_ids(t, kind) for t, kind in zip(sets, kinds))
    load = lambda t: load_qrels(t, "query_id", "doc_id", "label", C.parse_gain("linear"), "keep")
    qa, qb = load(a), load(b)
    match, judged_q, duplicates = line_up(qa, qb)
    expected, _, expected_q = qb.match(Chunk(qa.ids, qa.offsets, pa.table({"doc_id": qa.docs})),
                                       "doc_id")
    assert match.tolist() == expected.tolist()
    assert judged_q.tolist() == expected_q.tolist()
    assert duplicates == (None, None)


def test_grade_agreement_refuses_arrays_it_cannot_line_up():
    with pytest.raises(ValueError, match="same non-zero length"):
        grade_agreement([1, 2], [1])
    with pytest.raises(ValueError, match=r"b\[1\] is nan"):
        grade_agreement([1.0, 2.0], [1.0, math.nan])
    with pytest.raises(TypeError, match="must hold numbers"):
        grade_agreement(["x"], ["y"])


def test_grades_of_too_many_distinct_values_are_refused():
    from fastndcg._agreement import MAX_GRADES
    n = MAX_GRADES + 1
    a = table(["q1"] * n, np.arange(n), np.arange(n) / n)
    with pytest.raises(ValueError, match=f"{n:,} distinct grades.*round the grades"):
        fastndcg.agreement(a, table(["q1"] * n, np.arange(n), np.zeros(n)))


@pytest.mark.parametrize("bad", [math.nan, math.inf])
def test_nan_and_inf_grades_are_refused(bad):
    a = table(["q1", "q1"], ["d1", "d2"], [1.0, 0.0])
    b = table(["q1", "q1"], ["d1", "d2"], [bad, 0.0])
    with pytest.raises(ValueError, match="label set 'b'.*finite"):
        fastndcg.agreement(a, b)


def test_runs_without_queries_in_common_are_refused():
    qrels = table(["q1", "q1", "q2", "q2"], ["d1", "d2", "d1", "d2"], [1, 0, 0, 1])
    llm = table(["q1", "q1", "q2", "q2"], ["d1", "d2", "d1", "d2"], [1, 1, 0, 1])
    one = pa.table({"query_id": ["q1", "q1"], "doc_id": ["d1", "d2"], "score": [1.0, 2.0]})
    two = pa.table({"query_id": ["q2", "q2"], "doc_id": ["d1", "d2"], "score": [1.0, 2.0]})
    with pytest.raises(ValueError, match="no query in common"):
        fastndcg.agreement(qrels, llm, runs={"one": one, "two": two})


def test_fewer_than_two_systems_and_unknown_keywords_are_refused():
    a = table(["q1", "q1"], ["d1", "d2"], [1, 0])
    b = table(["q1", "q1"], ["d1", "d2"], [1, 1])
    run = pa.table({"query_id": ["q1", "q1"], "doc_id": ["d1", "d2"], "score": [1.0, 2.0]})
    with pytest.raises(ValueError, match="two or more runs"):
        fastndcg.agreement(a, b, runs={"only": run})
    with pytest.raises(TypeError, match="bogus"):
        fastndcg.agreement(a, b, bogus=1)
    with pytest.raises(TypeError, match="does not take qrels=: .* as those"):
        fastndcg.agreement(a, b, qrels=a)
    # options of evaluate that agreement has no use for are refused, not ignored
    for name, value in [("human_qrels", a), ("ppi", 0.5), ("confidence", 0.9),
                        ("explain", True), ("weight", "w")]:
        with pytest.raises(TypeError, match=f"does not take {name}="):
            fastndcg.agreement(a, b, **{name: value})
    with pytest.raises(ValueError, match="measure= scores runs"):
        fastndcg.agreement(a, b, measure="ndcg_cut.10")


def test_command_line_has_no_flags_for_what_agreement_refuses(capsys):
    from fastndcg.cli import main
    for flag in ("--human-qrels", "--ppi", "--confidence", "--explain", "--weight"):
        assert main(["agreement", "a.txt", "b.txt", flag, "x"]) == 2
        assert f"unrecognized arguments: {flag}" in capsys.readouterr().err


# --------------------------------------------------------------------------- command line


def test_command_line_end_to_end(systems, tmp_path, capsys):
    runs, llm = systems
    paths = []
    for name, t in list(runs.items())[:3]:
        import pyarrow.parquet as pq
        pq.write_table(t, tmp_path / f"{name}.parquet")
        paths.append(f"{name}={tmp_path / f'{name}.parquet'}")
    code, out, err = main_inprocess(capsys, "agreement", f"human={CORE_QRELS}", f"llm={llm}",
                                    "--runs", *paths, "-m", "ndcg_cut.10", "--format", "json")
    assert code == 0, err
    api = fastndcg.agreement(CORE_QRELS, llm, names=("human", "llm"),
                             runs={n: runs[n] for n in list(runs)[:3]}, measure="ndcg_cut.10")
    got = json.loads(out)
    expected = api.to_dict()
    assert got["systems"] == json.loads(json.dumps(expected["systems"]))
    assert got["kappa"] == expected["kappa"] and got["confusion"] == expected["confusion"]
    code, out, err = main_inprocess(capsys, "agreement", CORE_QRELS, llm, "--per-query",
                                    tmp_path / "pq.csv")
    assert code == 0 and "label agreement: qrels.core18.txt.gz vs llm.txt" in out
    assert (tmp_path / "pq.csv").read_text().startswith('"query_id","n_both"')


@pytest.mark.parametrize("args, text, status", [
    (["--runs", "RUN"], "--runs needs two or more runs", 2),
    (["-m", "P.5"], "score runs: give two or more with --runs", 2),
    (["--bogus"], "unrecognized arguments", 2),
])
def test_command_line_refusals(args, text, status, systems, capsys):
    _, llm = systems
    args = [str(CORE_RUNS[0]) if a == "RUN" else a for a in args]
    code, _, err = main_inprocess(capsys, "agreement", CORE_QRELS, llm, *args)
    assert code == status
    assert_one_line_error(err, must_contain=(text,))


def test_command_line_refuses_sets_without_shared_documents(tmp_path, capsys):
    (tmp_path / "a.txt").write_text("q1 0 d1 1\n")
    (tmp_path / "b.txt").write_text("q1 0 d2 1\n")
    code, _, err = main_inprocess(capsys, "agreement", tmp_path / "a.txt", tmp_path / "b.txt")
    assert code == 1
    assert_one_line_error(err, must_contain=("share no judged document",))


@pytest.mark.parametrize("huge", [1e300, 1.7e308])
def test_interval_alpha_of_huge_grades_does_not_overflow(huge):
    """Interval alpha does not change when every grade is scaled by one factor; the
    krippendorff package's squared differences of grades near 1e300 overflow (NaN),
    so the truth is its alpha of the grades divided by the largest."""
    krippendorff = pytest.importorskip("krippendorff")
    a = [huge, 0, 1, 2, huge]
    b = [huge, 1, 0, huge, 3]
    table = lambda g: pa.table({"query_id": ["q1", "q1", "q1", "q2", "q2"],  # noqa: E731
                                "doc_id": ["d1", "d2", "d3", "d1", "d2"], "label": g})
    got = fastndcg.agreement(table(a), table(b)).overall["alpha_interval"]
    want = krippendorff.alpha(np.array([a, b]) / huge, level_of_measurement="interval")
    assert math.isfinite(got)
    assert got == pytest.approx(want, rel=1e-12)


def test_the_options_agreement_refuses_are_not_offered():
    """Nothing agreement refuses is in its signature or its docstring; given, even at
    its default, each is refused with the reason."""
    import inspect
    import re
    from fastndcg.options import AGREEMENT_REFUSES, OPTIONS
    params = inspect.signature(fastndcg.agreement).parameters
    for name, why in AGREEMENT_REFUSES.items():
        assert name not in params
        assert not re.search(rf"^    {name} : ", fastndcg.agreement.__doc__, re.M)
        with pytest.raises(TypeError, match=rf"^fastndcg\.agreement\(\) does not take "
                                            rf"{name}=: {re.escape(why)}$"):
            fastndcg.agreement("a.txt", "b.txt", **{name: OPTIONS[name].default})
    assert {"k", "measure", "preset", "ties"} <= set(params)


@pytest.mark.parametrize("base,step", [(1e15, 1.0), (1.0, 2.0 ** -52), (1e300, 1e300),
                                       (0.0, 1e-300), (1e-200, 1e-200), (7.0, 2.5)])
def test_interval_alpha_is_exact_for_close_huge_and_tiny_grades(base, step):
    """Interval alpha does not change when grades are shifted and scaled alike: grades
    base + step * code give the alpha of the codes (0, 1, 2), as the krippendorff
    package computes it on the codes. Close grades (1e15 and 1e15 + 1) lost their
    deviations to rounding, tiny ones (1e-300) underflowed to a ZeroDivisionError."""
    krippendorff = pytest.importorskip("krippendorff")
    ca = [0, 1, 0, 1, 1, 2, 0, 0, 2]
    cb = [0, 0, 1, 1, 1, 2, 0, 2, 1]
    grades = lambda codes: [base + step * c for c in codes]  # noqa: E731
    assert len(set(grades([0, 1, 2]))) == 3  # three distinct grades
    table = lambda g: pa.table({"query_id": ["q1"] * 9,  # noqa: E731
                                "doc_id": [f"d{i}" for i in range(9)], "label": g})
    got = fastndcg.agreement(table(grades(ca)), table(grades(cb))).overall
    want = krippendorff.alpha(np.array([ca, cb], float), level_of_measurement="interval")
    assert got["alpha_interval"] == pytest.approx(want, rel=1e-9)
    plain = fastndcg.agreement(table(ca), table(cb)).overall
    assert got["kappa"] == pytest.approx(plain["kappa"], rel=1e-12)


def test_integer_grades_past_2_53_are_refused_not_merged():
    """2**62 and 2**62 + 1 are one double: they would agree where they differ."""
    g = lambda v: pa.table({"query_id": ["q"] * 4, "doc_id": list("abcd"),  # noqa: E731
                            "label": pa.array(v, pa.int64())})
    a, b = [2 ** 62, 2 ** 62 + 1, 2 ** 62, 2 ** 62 + 1], [2 ** 62, 2 ** 62, 2 ** 62 + 1, 2 ** 62 + 1]
    with pytest.raises(ValueError, match=r"label set 'a': grade 4611686018427387904 is an "
                                         r"integer past 2\*\*53"):
        fastndcg.agreement(g(a), g(b))
