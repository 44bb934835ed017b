"""Comparisons at scale: mergeable paired statistics and the bucket methods.

What is checked, and against what:

* the fixed-point sums equal the exact rational sum of the per-query values (and of
  the differences and their squares), computed here with ``fractions.Fraction``, on
  hypothesis-drawn values with many ties, tiny and large magnitudes;
* the merged statistics are the same bits whatever the partitioning, order,
  batch size and thread count (partitions scored separately and merged in another
  order), and a streamed comparison equals the query-level one up to 1,000,000
  queries (the switch is tested with a lowered size);
* the bucket method's t-test and effect size equal ``scipy.stats.ttest_rel`` on the
  per-query values; its bootstrap interval is within Monte Carlo error of
  ``scipy.stats.bootstrap`` resampling the same buckets (ratio of sums); query-level
  and bucket intervals and randomization p-values agree within their Monte Carlo
  error;
* in a simulation with known truth (2,000 synthetic paired logs with no effect,
  1,000 with an effect; 4,000 queries each, the default 1,000 buckets), the
  intervals cover at their nominal rate and the tests keep their level, within
  binomial error (exact binomial tests at the 0.001 level);
* Wilcoxon is refused by name above the size, with a message saying why and what
  to use; scattered queries fall back to the query-level path or are refused.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings, strategies as st

import fastndcg
from fastndcg import _kernels as K
from fastndcg._compare import arguments
from fastndcg._compare.arguments import settings as compare_settings
from fastndcg._compare.buckets import bucket_tests
from fastndcg._compare.paired import Plan, Stats, bucket_key
from fastndcg.parts import Rows

from test_compare import make_log
from strategies import examples

scipy_stats = pytest.importorskip("scipy.stats")

SYSTEMS = ["score_a", "score_b", "score_c"]


def stats_of(values: np.ndarray, ids: np.ndarray, *, n_buckets=64, seed=0, base=0,
             parts=1, order=None) -> Stats:
    """Stats of (n, S) values (one measure), added in ``parts`` slices (in ``order``)
    into separate Stats, then merged."""
    n, S = values.shape
    plan = Plan([f"s{i}" for i in range(S)], base, ["m"], n_buckets, seed, 0)
    order = np.arange(n) if order is None else order
    total = Stats.empty(plan)
    for idx in np.array_split(order, parts):
        s = Stats.empty(plan)
        rows = Rows(pa.array(ids[idx]), np.zeros(len(idx), np.int64),
                    np.ascontiguousarray(values[idx]), np.zeros(len(idx), bool))
        s.add(rows, bucket_key(seed), base)
        s.normalize()
        total.merge(s)
    return total


def fixed(x: float) -> Fraction:
    """x as the sums take it: exact when |x| >= 2**-171, else rounded (half away
    from zero) to a multiple of 2**-FIX_SHIFT, as the module documents."""
    q = Fraction(float(x)) * (1 << K.FIX_SHIFT)
    if q.denominator == 1:
        return Fraction(float(x))
    k = math.floor(abs(q) + Fraction(1, 2))
    return Fraction(k if x > 0 else -k, 1 << K.FIX_SHIFT)


def exact(limbs_row) -> Fraction:
    return Fraction(K.fix_to_int(limbs_row), 1 << K.FIX_SHIFT)


# --------------------------------------------------------------------------- exact sums

finite = st.one_of(st.sampled_from([0.0, 0.25, 0.5, 1.0, 1 / 3]),
                   st.floats(-1e6, 1e6, allow_nan=False, allow_subnormal=False),
                   st.floats(1e-40, 1e-10))


@settings(max_examples=examples(0.6), deadline=None)
@given(st.lists(st.tuples(finite, finite), min_size=1, max_size=80), st.integers(1, 5))
def test_fixed_point_sums_are_exact(pairs, n_buckets):
    values = np.array(pairs, np.float64)
    ids = np.arange(len(values), dtype=np.int64)
    s = stats_of(values, ids, n_buckets=n_buckets)
    total = s.limbs[0].sum(axis=0)
    K.fix_normalize(total)
    d = values[:, 1] - values[:, 0]  # the difference as each query has it (float64)
    for q, want in ((0, values[:, 0]), (1, values[:, 1]), (2, d)):
        assert exact(total[q]) == sum(fixed(x) for x in want)
    assert exact(s.squares[0, 0]) == sum(fixed(x * x) for x in d)
    assert s.counts.sum() == len(values)
    assert s.wtl[0, 0].tolist() == [int((d > 0).sum()), int((d == 0).sum()),
                                    int((d < 0).sum())]


def test_a_value_beyond_the_sums_is_refused():
    values = np.array([[0.5, 0.25], [2.0 ** 91, 0.0]])
    with pytest.raises(ValueError, match=r"query 1 has a value .* 2\*\*90"):
        stats_of(values, np.arange(2))


@settings(max_examples=examples(0.25), deadline=None)
@given(st.integers(2, 400), st.integers(1, 7), st.integers(0, 2 ** 32))
def test_merge_is_the_same_bits_for_any_partitioning(n, parts, seed):
    rng = np.random.default_rng(seed)
    values = rng.integers(0, 5, (n, 3)) / 4 + rng.random((n, 3)) * (rng.random((n, 3)) < 0.3)
    ids = rng.permutation(10 * n)[:n].astype(np.int64)
    one = stats_of(values, ids, n_buckets=16)
    many = stats_of(values, ids, n_buckets=16, parts=parts, order=rng.permutation(n))
    for name in ("limbs", "counts", "squares", "wtl"):
        assert np.array_equal(getattr(one, name), getattr(many, name)), name


# --------------------------------------------------------------------------- whole comparisons

@pytest.fixture(scope="module")
def big_log() -> pa.Table:
    return make_log(4000, n_systems=3, n_segments=3, seed=5)


def test_streamed_is_bit_identical_across_batches_and_threads(big_log):
    import numba
    kw = dict(method="buckets", n_resamples=500, k=[5, 10], segment="market")
    want = fastndcg.compare(big_log, SYSTEMS, **kw)
    old = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        got = fastndcg.compare(big_log, SYSTEMS, batch_rows=777, **kw)
    finally:
        numba.set_num_threads(old)
    assert got.method == "buckets" and got.per_query is None
    assert got.systems.equals(want.systems) and got.tests.equals(want.tests)


def test_up_to_the_size_the_query_level_answers_are_unchanged(big_log):
    kw = dict(n_resamples=500, k=[5, 10], segment="market", seed=2)
    streamed = fastndcg.compare(big_log, SYSTEMS, **kw)  # auto: one pass, values kept
    held = fastndcg.compare(big_log, SYSTEMS, method="queries", **kw)  # every system read
    assert streamed.method == held.method == "queries"
    assert streamed.systems.equals(held.systems) and streamed.tests.equals(held.tests)
    assert streamed.per_query.equals(held.per_query)


def test_above_the_size_the_buckets_are_used(big_log, monkeypatch):
    monkeypatch.setattr(arguments, "SCALE_QUERIES", 1000)
    got = fastndcg.compare(big_log, SYSTEMS, n_resamples=300)
    assert got.method == "buckets" and got.n_buckets == 1000
    assert got.tests_run == ("randomization", "t")
    assert got.tests.column("p_wilcoxon").null_count == got.tests.num_rows
    text = got.format_table()
    assert "over 1,000 hashed buckets of queries" in text and "Wilcoxon not run" in text
    assert got.to_dict()["method"] == "buckets"
    pytest.importorskip("matplotlib")
    fig = got.plot()
    assert "over 1,000 hashed buckets of queries" in fig._supxlabel.get_text()
    with pytest.raises(ValueError, match=r"Wilcoxon signed-rank test ranks every query.*"
                                         r"4,000 queries, above the 1,000.*randomization and t"):
        fastndcg.compare(big_log, SYSTEMS, n_resamples=300, tests=["t", "wilcoxon"])


def test_wilcoxon_by_name_with_buckets_is_refused_before_reading(big_log):
    with pytest.raises(ValueError, match=r"method='buckets' keeps no per-query values"):
        fastndcg.compare("no-such-file.parquet", SYSTEMS, method="buckets", tests="wilcoxon")


@pytest.mark.parametrize("kwargs, match", [
    (dict(method="fast"), r"method must be one of 'auto', 'queries', 'buckets'; got 'fast'"),
    (dict(buckets=1), r"buckets must be a whole number from 2 to 1048576.*got 1"),
    (dict(buckets=2.5), r"buckets must be a whole number"),
])
def test_bad_method_arguments(big_log, kwargs, match):
    with pytest.raises(ValueError, match=match):
        fastndcg.compare(big_log, SYSTEMS, **kwargs)


def test_t_test_on_exact_sums_equals_scipy(big_log):
    held = fastndcg.compare(big_log, SYSTEMS, method="queries", n_resamples=100,
                            tests=["t"], k=[10], segment="market")
    got = fastndcg.compare(big_log, SYSTEMS, method="buckets", n_resamples=100, tests=["t"],
                           k=[10], segment="market")
    pq_ = held.per_query
    for row in got.tests.to_pylist():
        seg = pq_.filter(pa.compute.equal(pq_.column("segment"), row["segment"]))
        a = seg.column(f"ndcg@10 {row['baseline']}").to_numpy()
        b = seg.column(f"ndcg@10 {row['system']}").to_numpy()
        ref = scipy_stats.ttest_rel(b, a)
        assert row["p_t"] == pytest.approx(ref.pvalue, rel=1e-10)
        d = b - a
        assert row["mean_diff"] == pytest.approx(d.mean(), rel=1e-13)
        assert row["effect_size"] == pytest.approx(d.mean() / d.std(ddof=1), rel=1e-10)
        assert (row["wins"], row["ties"], row["losses"]) == (
            int((d > 0).sum()), int((d == 0).sum()), int((d < 0).sum()))
    for row in got.systems.to_pylist():
        seg = pq_.filter(pa.compute.equal(pq_.column("segment"), row["segment"]))
        assert row["mean"] == pytest.approx(
            seg.column(f"ndcg@10 {row['system']}").to_numpy().mean(), rel=1e-14)


def test_bucket_interval_equals_scipy_bootstrap_of_the_buckets():
    """The bucket bootstrap is the percentile bootstrap of the ratio of sums over
    buckets: scipy.stats.bootstrap on the same bucket sums agrees within Monte Carlo
    error."""
    rng = np.random.default_rng(3)
    n = 20_000
    values = np.column_stack([rng.random(n), rng.random(n) * 1.1])
    s = stats_of(values, np.arange(n, dtype=np.int64), n_buckets=200)
    sums = K.fix_to_float(s.limbs)[0]  # (B, Q)
    counts = s.counts[0].astype(float)
    R = 20_000
    boot = K.bucket_bootstrap(sums[None], counts[None], R, np.uint64(1))[0]
    for q in range(3):
        lo, hi = np.quantile(boot[:, q], [0.025, 0.975])
        ref = scipy_stats.bootstrap((sums[:, q], counts), lambda x, c: x.sum() / c.sum(),
                                    paired=True, vectorized=False, n_resamples=R,
                                    method="percentile", random_state=0).confidence_interval
        width = ref.high - ref.low
        # two independent Monte Carlo estimates of each 2.5% quantile: their error is
        # about 2% of the width each at 20,000 resamples; 8% is four standard errors
        assert abs(lo - ref.low) < 0.08 * width and abs(hi - ref.high) < 0.08 * width


def test_query_level_and_buckets_agree_within_monte_carlo_error():
    log = make_log(20_000, n_systems=2, n_segments=1, seed=11, tie_heavy=False)
    kw = dict(n_resamples=10_000, k=[10])
    q = fastndcg.compare(log, ["score_a", "score_b"], method="queries", **kw)
    b = fastndcg.compare(log, ["score_a", "score_b"], method="buckets", **kw)
    for table in ("systems", "tests"):
        for rq, rb in zip(getattr(q, table).to_pylist(), getattr(b, table).to_pylist()):
            width = rq["ci_high"] - rq["ci_low"]
            # Monte Carlo error of each endpoint ~2% of the width (10,000 resamples),
            # the buckets' estimate of the spread ~sqrt(1/2000) = 2.2%: 12% is > 4 sd
            assert abs(rq["ci_low"] - rb["ci_low"]) < 0.12 * width
            assert abs(rq["ci_high"] - rb["ci_high"]) < 0.12 * width
    pq_, pb = q.tests["p_randomization"][0].as_py(), b.tests["p_randomization"][0].as_py()
    # both estimate the same p; each has Monte Carlo sd sqrt(p(1-p)/R) <= 0.005
    assert abs(pq_ - pb) < max(0.03, 0.2 * pq_)
    assert q.tests["p_t"][0].as_py() == pytest.approx(b.tests["p_t"][0].as_py(), rel=1e-9)


# --------------------------------------------------------------------------- simulation

def _simulate(effect: float, reps: int, seed: int) -> dict:
    """Coverage and rejection rates of the bucket methods over ``reps`` synthetic
    paired logs of per-query values (NDCG-like: in [0, 1], many ties)."""
    rng = np.random.default_rng(seed)
    cover_diff = cover_mean = rej_rand = rej_t = 0
    n = 4000  # queries a log, in the default 1,000 buckets
    for r in range(reps):
        base = np.round(rng.beta(2, 2, n) * 8) / 8  # 9 levels: ties
        if effect == 0:  # exchangeable pairs: each difference symmetric about 0
            other = np.round(rng.beta(2, 2, n) * 8) / 8
            same = rng.random(n) < 0.2
            other[same] = base[same]
            flip = rng.random(n) < 0.5
            a, b = np.where(flip, base, other), np.where(flip, other, base)
            true_diff, true_mean = 0.0, 0.5
        else:
            a = base
            b = base + effect + rng.normal(0, 0.2, n)
            true_diff, true_mean = effect, 0.5
        s = stats_of(np.column_stack([a, b]), rng.integers(0, 1 << 62, n), n_buckets=1000,
                     seed=r)
        st_r = compare_settings(["a", "b"], n_resamples=999, seed=r, method="buckets",
                                tests=["randomization", "t"])
        systems, tests = bucket_tests(s, st_r, ["m"])
        row = tests.to_pylist()[0]
        cover_diff += row["ci_low"] <= true_diff <= row["ci_high"]
        rej_rand += row["p_randomization"] < 0.05
        rej_t += row["p_t"] < 0.05
        sa = systems.to_pylist()[0]
        cover_mean += sa["ci_low"] <= true_mean <= sa["ci_high"]
    return dict(diff=cover_diff / reps, mean=cover_mean / reps, rand=rej_rand / reps,
                t=rej_t / reps)


def _binomial_ok(rate: float, p: float, reps: int) -> bool:
    """Whether ``rate`` of ``reps`` trials is consistent with probability ``p``
    (two-sided exact binomial test at the 0.001 level)."""
    k = round(rate * reps)
    return scipy_stats.binomtest(k, reps, p).pvalue > 0.001


@pytest.mark.heavy
def test_simulation_intervals_cover_and_tests_keep_their_level():
    reps = 2000
    null = _simulate(0.0, reps, seed=1)
    assert _binomial_ok(null["diff"], 0.95, reps), null
    assert _binomial_ok(null["mean"], 0.95, reps), null
    assert _binomial_ok(null["rand"], 0.05, reps), null
    assert _binomial_ok(null["t"], 0.05, reps), null
    alt = _simulate(0.01, reps // 2, seed=2)
    assert _binomial_ok(alt["diff"], 0.95, reps // 2), alt
    assert _binomial_ok(alt["mean"], 0.95, reps // 2), alt
    assert alt["rand"] > 0.5 and alt["t"] > 0.5, alt  # an effect of 0.01 is mostly found


# --------------------------------------------------------------------------- odd logs

def test_scattered_queries_fall_back_or_are_refused(big_log, tmp_path):
    idx = np.arange(big_log.num_rows)
    moved = np.concatenate([idx[5:], idx[:5]])  # query 3's first rows at the end
    t = big_log.take(pa.array(moved))
    want = fastndcg.compare(t, SYSTEMS, method="queries", n_resamples=200)
    got = fastndcg.compare(t, SYSTEMS, n_resamples=200)
    assert got.tests.equals(want.tests) and got.systems.equals(want.systems)
    with pytest.raises(ValueError, match=r"the rows of query 3 are not adjacent.*sort the log "
                                         r"by 'query_id'"):
        fastndcg.compare(t, SYSTEMS, method="buckets", n_resamples=200)


def test_segment_mapping_and_single_query_segment_with_buckets(big_log):
    ids = pc_unique(big_log.column("query_id"))
    mapping = {int(q): ("x" if i % 2 else "y") for i, q in enumerate(ids)}
    got = fastndcg.compare(big_log, SYSTEMS, method="buckets", segment=mapping, n_resamples=100)
    want = fastndcg.compare(big_log, SYSTEMS, method="queries", segment=mapping, n_resamples=100)
    assert got.tests.column("segment").to_pylist() == want.tests.column("segment").to_pylist()
    assert got.tests.column("p_t").to_pylist() == pytest.approx(
        want.tests.column("p_t").to_pylist(), rel=1e-9)
    mapping[int(ids[0])] = "solo"
    with pytest.raises(ValueError, match=r"segment 'solo' has a single query; a paired test"):
        fastndcg.compare(big_log, SYSTEMS, method="buckets", segment=mapping, n_resamples=100)


def pc_unique(col):
    import pyarrow.compute as pc
    return pc.unique(col).to_numpy()


def test_cli_method_buckets(tmp_path, big_log):
    from test_compare import run_cli
    path = tmp_path / "log.parquet"
    pq.write_table(big_log, path)
    out = run_cli("compare", path, "--systems", "score_a,score_b", "--method", "buckets",
                  "--buckets", "50", "--resamples", "200")
    assert out.returncode == 0, out.stderr
    assert "over 50 hashed buckets" in out.stdout
    out = run_cli("compare", path, "--systems", "score_a,score_b", "--method", "buckets",
                  "--tests", "wilcoxon")
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and "--method queries" in out.stderr


# --------------------------------------------------------------------------- the reference

@settings(max_examples=examples(0.25), deadline=None)
@given(st.integers(1, 3), st.integers(1, 140), st.integers(1, 3), st.integers(1, 12),
       st.integers(0, 2 ** 64 - 1), st.integers(0, 2 ** 32))
def test_bucket_resampling_kernels_equal_the_reference(n_groups, n_buckets, n_cols, n_resamples,
                                                        seed, data_seed):
    from fastndcg import reference
    rng = np.random.default_rng(data_seed)
    counts = rng.integers(0, 4, (n_groups, n_buckets)) * (rng.random((n_groups, n_buckets)) < 0.7)
    sums = rng.integers(-8, 9, (n_groups, n_buckets, n_cols)) / 4 * (counts[..., None] > 0)
    got = K.bucket_bootstrap(sums, counts.astype(float), n_resamples, np.uint64(seed))
    want = reference.bucket_bootstrap(sums.tolist(), counts.tolist(), n_resamples, seed)
    np.testing.assert_array_equal(got, np.array(want))
    got = K.bucket_signflip(np.ascontiguousarray(sums), n_resamples, np.uint64(seed))
    want = reference.bucket_signflip(sums.tolist(), n_resamples, seed)
    np.testing.assert_array_equal(got, np.array(want))


@settings(max_examples=examples(0.2), deadline=None)
@given(st.lists(st.integers(-2 ** 63, 2 ** 63 - 1), min_size=1, max_size=60, unique=True),
       st.integers(0, 2 ** 64 - 1), st.integers(1, 50))
def test_queries_go_to_the_reference_bucket(ids, seed, n_buckets):
    from fastndcg import reference
    values = np.full((len(ids), 2), 0.5)
    s = stats_of(values, np.array(ids, np.int64), n_buckets=n_buckets, seed=seed)
    want = np.zeros(n_buckets, np.int64)
    for q in ids:
        h = reference._mix(q & ((1 << 64) - 1))  # the stable hash of an integer id
        want[reference.bucket_of(h, seed, n_buckets)] += 1
    assert s.counts[0].tolist() == want.tolist()
