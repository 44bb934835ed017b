"""Means that no finite input overflows: query weights (and values) anywhere in
float64's range, from the subnormals to the largest float.

The expected means are computed here with exact rational arithmetic
(:class:`fractions.Fraction`), rounded to a float once at the end; ordinary
inputs are checked bit for bit against ``math.fsum`` and against the plain
float64 sums the means were computed from before.
"""

from __future__ import annotations

import json
import math
import sys
import warnings
from fractions import Fraction

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings, strategies as st

import fastndcg
from fastndcg import cli
from fastndcg.report import Totals
from fastndcg.synth import synthetic_log

from strategies import examples

NAMES = ["ndcg@1", "ndcg@3"]
BIG = sys.float_info.max


def exact_means(values: np.ndarray, weights=None, names=NAMES) -> dict:
    """Each column's mean over its non-NaN values (weighted when ``weights`` is
    given), computed exactly and rounded once."""
    out = {}
    for c in range(values.shape[1]):
        num = den = Fraction(0)
        for i in range(len(values)):
            v = float(values[i, c])
            if math.isnan(v):
                continue
            w = Fraction(1) if weights is None else Fraction(float(weights[i]))
            num += w * Fraction(v)
            den += w
        out[names[c]] = float(num / den) if den else math.nan
    return out


def totals(values: np.ndarray, weights=None) -> Totals:
    return Totals.of(NAMES[:values.shape[1]], values, np.zeros(len(values), bool), len(values),
                     weight=None if weights is None else np.asarray(weights, np.float64))


def parts(values: np.ndarray, weights, cuts) -> list[Totals]:
    """Totals of the pieces of the queries between the cut points."""
    bounds = [0, *sorted(set(cuts)), len(values)]
    return [totals(values[a:b], None if weights is None else weights[a:b])
            for a, b in zip(bounds, bounds[1:]) if b > a]


def groupings(pieces: list[Totals]) -> dict[str, Totals]:
    """The pieces merged in several orders and groupings."""
    weighted = pieces[0].wsums is not None

    def fold(seq):
        out = Totals.empty(pieces[0].names, weighted=weighted)
        for t in seq:
            out = out.merge(t)
        return out

    def tree(seq):
        if len(seq) == 1:
            return seq[0]
        mid = len(seq) // 2
        return tree(seq[:mid]).merge(tree(seq[mid:]))

    right = pieces[-1]
    for t in reversed(pieces[:-1]):
        right = t.merge(right)
    return {"left": fold(pieces), "reversed": fold(pieces[::-1]), "tree": tree(pieces),
            "right": right}


def same(got: dict, want: dict) -> bool:
    """Equal bit for bit (NaN equal to NaN)."""
    return got.keys() == want.keys() and all(
        (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
        for a, b in ((got[k], want[k]) for k in got))


# --------------------------------------------------------------------------- huge weights

def test_two_queries_weighted_near_the_largest_float():
    values = np.array([[0.5, 1.0], [1.0, 0.25]])
    assert 1e308 + 1e308 == math.inf  # a plain sum of the weights overflows
    for w in ([1e308, 1e308], [BIG, BIG], [BIG, 1e308]):
        got = totals(values, np.array(w)).mean
        want = exact_means(values, w)
        assert all(math.isfinite(x) for x in got.values()), got
        assert got == pytest.approx(want, rel=4 * sys.float_info.epsilon)
    # equal weights: the unweighted means, exactly
    assert totals(values, np.array([1e308, 1e308])).mean == {"ndcg@1": 0.75, "ndcg@3": 0.625}


def test_many_queries_of_weight_1e300():
    n = 1 << 20
    values = (np.arange(n) % 8 / 8.0)[:, None]  # 0, 1/8, ..., 7/8: mean 7/16
    chunk = totals(values, np.full(n, 1e300))
    merged = chunk
    for _ in range(9):  # 2**29 queries: their weights sum to 5.4e308
        merged = merged.merge(merged)
    assert merged.n_queries == 1 << 29
    assert 1e300 * (1 << 29) == math.inf
    assert merged.mean == pytest.approx({"ndcg@1": 0.4375}, rel=1e-14)
    # the sum of the weights is kept, scaled: 2**29 * 1e300 within rounding
    total = Fraction(float(merged.weights[0])) * Fraction(2) ** int(merged.weights_exp[0])
    assert float(total / (1 << 29)) == pytest.approx(1e300, rel=1e-12)


def test_tiny_weights_keep_their_precision():
    values = np.array([[0.3, 0.1], [0.9, 0.7], [0.55, np.nan]])
    for w in ([1e-320, 3e-320, 2e-320], [5e-324, 1e-323, 5e-324], [1e-300, 3e-300, 2e-310]):
        got = totals(values, np.array(w)).mean
        assert got == pytest.approx(exact_means(values, w), rel=1e-15)


MIXED_W = np.array([3 * 2.0 ** 1022, 1e-300, 5 * 2.0 ** 1000, 7e-300, 2.0 ** 1023, 0.0,
                    1.0, 5e-324, 9 * 2.0 ** 1019, 2e-310])  # the huge ones sum past 2**1024
MIXED_V = np.array([[0.5, 0.125], [1.0, np.nan], [0.25, 0.75], [0.0, 1.0], [0.875, np.nan],
                    [1.0, 1.0], [0.375, 0.0], [1.0, 0.5], [0.625, 0.25], [0.75, np.nan]])


@pytest.mark.parametrize("cuts", [[], [1], [5], [1, 2, 3, 4, 5, 6, 7, 8, 9], [2, 7], [3, 4, 9]])
def test_mixed_tiny_and_huge_weights_in_any_grouping(cuts):
    want = exact_means(MIXED_V, MIXED_W)
    assert sum(MIXED_W.tolist()) == math.inf
    # the huge weights are multiples of powers of two and the values eighths, so
    # every sum of them is exact: each grouping gives the exact mean, bit for bit
    one_shot = totals(MIXED_V, MIXED_W).mean
    assert same(one_shot, want), (one_shot, want)
    for how, t in groupings(parts(MIXED_V, MIXED_W, cuts)).items():
        assert t.n_queries == len(MIXED_V)
        assert same(t.mean, want), (how, t.mean, want)


def test_subtract_takes_queries_out_exactly():
    whole = totals(MIXED_V, MIXED_W)
    for cut in (1, 4, 8):
        rest = whole.subtract(totals(MIXED_V[:cut], MIXED_W[:cut]))
        assert rest.n_queries == len(MIXED_V) - cut
        assert same(rest.mean, exact_means(MIXED_V[cut:], MIXED_W[cut:]))


WEIGHTS = st.one_of(st.floats(1e-300, 1e308),
                    st.sampled_from([0.0, 5e-324, 1e-310, 1e-300, 1.0, 1e300, 1e308, BIG]))
ROWS = st.lists(st.tuples(WEIGHTS, st.floats(0, 1), st.one_of(st.floats(0, 1), st.just(math.nan))),
                min_size=1, max_size=30)


@settings(max_examples=examples(1.5), deadline=None)
@given(rows=ROWS, cuts=st.lists(st.integers(1, 29), max_size=6))
def test_weighted_means_match_exact_arithmetic(rows, cuts):
    w = np.array([r[0] for r in rows])
    values = np.array([[r[1], r[2]] for r in rows])
    want = exact_means(values, w)
    got = {"one shot": totals(values, w)}
    got.update(groupings(parts(values, w, [c for c in cuts if c < len(rows)])))
    for how, t in got.items():
        mean = t.mean
        for name, exact in want.items():
            if math.isnan(exact):  # no weight in this column
                assert math.isnan(mean[name]), (how, name)
                continue
            # subnormal products keep fewer bits: means far below any NDCG there is
            assert mean[name] == pytest.approx(exact, rel=1e-12, abs=1e-300), (how, name)


# --------------------------------------------------------------------------- huge values

def test_values_near_the_largest_float():
    values = np.array([[1e308, 0.5], [1.5e308, 1.0], [BIG, 0.25]])
    with np.errstate(over="ignore"):
        assert values[:, 0].sum() == math.inf  # a plain sum of the values overflows
    plain = totals(values).mean
    assert plain == pytest.approx(exact_means(values), rel=4 * sys.float_info.epsilon)
    w = np.array([1e308, 2.0, BIG])
    assert totals(values, w).mean == pytest.approx(exact_means(values, w),
                                                   rel=4 * sys.float_info.epsilon)


# --------------------------------------------------------------------------- end to end

def huge_log() -> pa.Table:
    # four queries of two items; the top item's linear gain over the best one gives
    # NDCG@1 of 1, 1/2, 1/4 and 0
    labels = [4, 4, 2, 4, 1, 4, 0, 2]
    return pa.table({"query_id": np.repeat(np.arange(4), 2), "doc_id": np.tile([1, 2], 4),
                     "score": np.tile([0.9, 0.1], 4), "label": labels,
                     "w": np.repeat([1e308, 1e308, BIG, 1e300], 2)})


def test_evaluate_with_huge_weights():
    table = huge_log()
    report = fastndcg.evaluate(table, weight="w", k=[1, 2], gain="linear")
    per = report.per_query
    assert per["ndcg@1"].to_pylist() == [1.0, 0.5, 0.25, 0.0]
    w = per["w"].to_numpy()
    values = np.column_stack([per["ndcg@1"].to_numpy(), per["ndcg@2"].to_numpy()])
    want = exact_means(values, w, names=["ndcg@1", "ndcg@2"])
    assert report.mean == pytest.approx(want, rel=4 * sys.float_info.epsilon)
    assert all(math.isfinite(x) for x in report.mean.values())
    # weights that are powers of two: every sum is exact, and so is the mean
    pow2 = table.set_column(4, "w", pa.array(np.repeat([2.0 ** 1023, 2.0 ** 1022, 2.0 ** 1023, 1.0], 2)))
    exact = fastndcg.evaluate(pow2, weight="w", k=[1], gain="linear")
    want = exact_means(values[:, :1], [2.0 ** 1023, 2.0 ** 1022, 2.0 ** 1023, 1.0])
    assert exact.mean == {"ndcg@1": want["ndcg@1"]}
    assert want["ndcg@1"] == 0.6  # in units of 2**1022: (1*2 + 1/2*1 + 1/4*2) / 5


def test_command_line_prints_the_weighted_mean(capsys, tmp_path):
    import pyarrow.parquet as pq
    pq.write_table(huge_log(), tmp_path / "log.parquet")
    code = cli.main(["evaluate", str(tmp_path / "log.parquet"), "--weight-col", "w", "-k", "1",
                     "--gain", "linear", "--format", "json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    got = json.loads(out.out)["ndcg@1"]
    w = [1e308, 1e308, BIG, 1e300]
    want = exact_means(np.array([[1.0], [0.5], [0.25], [0.0]]), w)["ndcg@1"]
    assert got == pytest.approx(want, rel=4 * sys.float_info.epsilon)


def test_a_value_beyond_float64_is_an_error_naming_it():
    # with negative labels kept, DCG@1 is -1e308 and IDCG@1 1e-300: NDCG@1 is -1e608
    table = pa.table({"query_id": [7, 7], "doc_id": [1, 2], "score": [0.9, 0.1],
                      "label": [-1e308, 1e-300]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # numpy's, on the overflowing quotient
        with pytest.raises(ValueError, match=r"ndcg@1 of query 7 is -inf.*beyond float64's "
                                             r"range.*labels into a narrower range"):
            fastndcg.evaluate(table, k=[1, 2], negative_labels="keep", gain="linear")


# --------------------------------------------------------------------------- ordinary inputs

def previous_means(pieces_values: list[np.ndarray], pieces_weights: list) -> dict:
    """What the plain float64 sums gave: each piece summed by numpy, the pieces
    added in order to zero, then one division."""
    s = np.zeros(pieces_values[0].shape[1])
    d = np.zeros_like(s)
    for v, w in zip(pieces_values, pieces_weights):
        ok = ~np.isnan(v)
        clean = np.where(ok, v, 0.0)
        if w is None:
            s, d = s + clean.sum(axis=0), d + ok.sum(axis=0)
        else:
            ww = np.where(ok, np.asarray(w, np.float64)[:, None], 0.0)
            s, d = s + (clean * ww).sum(axis=0), d + ww.sum(axis=0)
    return {n: float(a / b) if b else math.nan for n, a, b in zip(NAMES, s, d)}


@pytest.mark.parametrize("weighted", [True, False])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ordinary_inputs_give_the_same_bits_as_plain_sums(weighted, seed):
    rng = np.random.default_rng(seed)
    n = 500
    values = rng.random((n, 2))
    values[rng.random(n) < 0.1, 1] = np.nan
    w = rng.random(n) * 10 ** rng.uniform(-3, 6) if weighted else None
    cuts = sorted(rng.choice(np.arange(1, n), 7, replace=False))
    bounds = [0, *cuts, n]
    pv = [values[a:b] for a, b in zip(bounds, bounds[1:])]
    pw = [None if w is None else w[a:b] for a, b in zip(bounds, bounds[1:])]
    got = groupings(parts(values, w, cuts))["left"].mean
    assert same(got, previous_means(pv, pw))
    # and within a few roundings of the correctly rounded sums
    if weighted:
        want = {NAMES[c]: math.fsum(w[ok] * values[ok, c]) / math.fsum(w[ok])
                for c in range(2) for ok in [~np.isnan(values[:, c])]}
    else:
        want = {NAMES[c]: math.fsum(values[ok, c]) / ok.sum()
                for c in range(2) for ok in [~np.isnan(values[:, c])]}
    assert got == pytest.approx(want, rel=1e-13)


def test_ordinary_dyadic_inputs_equal_fsum_bit_for_bit():
    rng = np.random.default_rng(5)
    n = 300
    values = rng.integers(0, 65, (n, 2)) / 64.0
    w = rng.integers(0, 1000, n) / 4.0
    want = {NAMES[c]: math.fsum(w * values[:, c]) / math.fsum(w) for c in range(2)}
    for how, t in groupings(parts(values, w, [10, 11, 150, 299])).items():
        assert same(t.mean, want), how
    plain = {NAMES[c]: math.fsum(values[:, c]) / n for c in range(2)}
    assert same(totals(values).mean, plain)


def test_evaluate_ordinary_weights_equal_fsum_bit_for_bit():
    # NDCG@1 with linear gains of labels 0, 1, 2, 4: the top gain over the best, a
    # power of two (or 0); weights in quarters: every sum is exact
    rng = np.random.default_rng(9)
    n = 200
    labels = rng.choice([0, 1, 2, 4], (n, 3))
    labels[:, 0] = np.where(labels.max(axis=1) == 0, 1, labels[:, 0])
    w = rng.integers(1, 4000, n) / 4.0
    table = pa.table({"query_id": np.repeat(np.arange(n), 3), "doc_id": np.tile([1, 2, 3], n),
                      "score": np.tile([0.9, 0.5, 0.1], n), "label": labels.ravel(),
                      "w": np.repeat(w, 3)})
    report = fastndcg.evaluate(table, weight="w", k=[1], gain="linear", batch_rows=37)
    v = labels[:, 0] / labels.max(axis=1)
    assert report.per_query["ndcg@1"].to_numpy().tolist() == v.tolist()
    assert same(report.mean, {"ndcg@1": math.fsum(w * v) / math.fsum(w)})
    plain = fastndcg.evaluate(table, k=[1], gain="linear", batch_rows=37)
    assert same(plain.mean, {"ndcg@1": math.fsum(v) / n})


def ordinary_log(shuffle: bool = False) -> pa.Table:
    t = synthetic_log(300, seed=7, mean_docs=5)
    q = t["query_id"].to_numpy()
    w = np.random.default_rng(11).random(q.max() + 1) * 100
    w[::17] = 0.0
    t = t.append_column("w", pa.array(w[q]))
    if shuffle:  # queries scattered: regrouped and their totals rebuilt
        t = t.take(pa.array(np.random.default_rng(3).permutation(t.num_rows)))
    return t


# the means of ordinary_log() as the plain float64 sums gave them, bit for bit
BEFORE = {
    "weighted": (dict(weight="w", k=[1, 3, 10], zero_idcg="nan", batch_rows=53),
                 {"ndcg@1": "0x1.a49ba17667af6p-1", "ndcg@3": "0x1.c77b72ab18733p-1",
                  "ndcg@10": "0x1.d9809474a3d37p-1"}),
    "unweighted": (dict(k=[1, 3, 10], zero_idcg="nan", batch_rows=53),
                   {"ndcg@1": "0x1.a414f6ba414f7p-1", "ndcg@3": "0x1.c382f58db7a23p-1",
                    "ndcg@10": "0x1.d901d0ccbf22bp-1"}),
    "measures": (dict(weight="w", measure="ndcg_cut.5 map recip_rank P.5",
                      batch_rows=101),
                 {"ndcg@5": "0x1.8758da80f4fe3p-1", "ap": "0x1.7ff9825f23bbfp-1",
                  "rr": "0x1.95bd5eb45d11bp-1", "p@5": "0x1.87676e37e6736p-2"}),
    "scattered": (dict(weight="w", k=[3], batch_rows=64), {"ndcg@3": "0x1.78c1d8b73048bp-1"}),
}


@pytest.mark.parametrize("case", sorted(BEFORE))
def test_ordinary_evaluations_keep_their_bits(case):
    kw, want = BEFORE[case]
    got = fastndcg.evaluate(ordinary_log(shuffle=case == "scattered"), **kw).mean
    assert {k: v.hex() for k, v in got.items()} == want


def test_sklearn_drop_ins_with_huge_weights():
    """ndcg_score/dcg_score with weights near the float64 maximum: the weighted mean
    of equal weights is the plain mean (scikit-learn's np.average gives 0.0 here)."""
    import fastndcg

    y_true = [[1, 0, 2], [0, 1, 1], [3, 0, 0]]
    y_score = [[0.3, 0.2, 0.1], [0.1, 0.2, 0.3], [0.5, 0.9, 0.1]]
    for func in (fastndcg.ndcg_score, fastndcg.dcg_score):
        plain = func(y_true, y_score)
        huge = func(y_true, y_score, sample_weight=[1e308, 1e308, 1e308])
        assert math.isfinite(huge)
        assert huge == pytest.approx(plain, rel=1e-15)
        # unequal huge weights: the same as the same ratios at ordinary scale
        assert func(y_true, y_score, sample_weight=[4e307, 1e308, 2e307]) == pytest.approx(
            func(y_true, y_score, sample_weight=[0.4, 1.0, 0.2]), rel=1e-14)


@settings(max_examples=examples(2), deadline=None)
@given(st.integers(0, 2000), st.integers(1, 5), st.integers(0, 2**32 - 1),
       st.sampled_from([0, 40, 600, -600]))
def test_totals_of_a_batch_equal_numpy_over_the_columns(n, n_cols, seed, spread):
    # Totals.of's compiled pass (two or more C-ordered columns) against the NumPy
    # formulation it replaced: the same sums to the bit (signed zeros included),
    # counts and scaling exponents
    rng = np.random.default_rng(seed)
    values = rng.random((n, n_cols)) * np.exp2(rng.integers(-abs(spread), abs(spread) + 1,
                                                            (n, n_cols)))
    values[rng.random((n, n_cols)) < 0.1] = np.nan
    values[rng.random((n, n_cols)) < 0.05] = -0.0
    if spread < 0:
        values = -values
    got = Totals.of([f"m{i}" for i in range(n_cols)], values, np.zeros(n, bool), 0)
    ok = ~np.isnan(values)
    clean = np.where(ok, values, 0.0)
    big = np.max(np.abs(clean), axis=0, initial=0.0)
    e = np.frexp(big)[1].astype(np.int64)
    e = np.where((big > 0) & ((e > 448) | (e <= -64)), e, 0)
    want = np.ldexp(clean, -e).sum(axis=0)
    assert np.array_equal(got.sums, want)
    assert np.array_equal(np.signbit(got.sums), np.signbit(want))
    assert np.array_equal(got.counts, ok.sum(axis=0))
    assert np.array_equal(got.sums_exp, e)


def test_counts_are_summed_unweighted_as_trec_eval_prints_them():
    """num_ret and num_rel_ret average as trec_eval's all line: their sums over the
    queries, whatever the weights (a count is not weighted)."""
    t = ordinary_log()
    got = fastndcg.evaluate(t, weight="w", measure="num_ret num_rel_ret P.5", batch_rows=101).mean
    assert got["num_ret"] == t.num_rows
    assert got["num_rel_ret"] == int(np.count_nonzero(t["label"].to_numpy() >= 1))
