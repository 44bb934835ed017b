"""Invariances of ndcg / dcg / idcg that need no oracle: thread count, batch split,
row order, monotone score transforms, bounds, tie-mode ordering, multi-k, and calls
from several Python threads.

Inputs are float64 scores with int64 labels (fractional labels: float64) so this file
compiles few kernel specialisations."""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fastndcg

from strategies import (FRACTIONAL_LABELS, SCORE_ALPHABET, as_arrays, batches, cutoffs,
                        examples)

SETTINGS = settings(max_examples=examples(), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
TIES = ["average", "stable", "optimistic", "pessimistic"]
GAINS = ["exp2", "linear", (0.0, 1.0, 3.0, 7.0, 2.0)]  # the table is not monotone on purpose
TOL = 1e-12


def same(a, b):
    """Bit-identical (NaN equal to NaN), with matching shapes."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype == np.float64
    assert a.shape == b.shape
    assert np.array_equal(a, b, equal_nan=True), (a, b)


def int_batch(batch):
    return as_arrays(batch, np.float64, np.int64)


def big_batch(seed: int, n_queries: int = 3000):
    """A few thousand tie-heavy queries of mixed lengths (a few long ones), with some
    queries whose labels go past the IDCG histogram range (selection path)."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(0, 40, n_queries)
    sizes[rng.choice(n_queries, 6, replace=False)] = rng.integers(500, 4000, 6)
    offsets = np.zeros(n_queries + 1, np.int64)
    np.cumsum(sizes, out=offsets[1:])
    n = int(offsets[-1])
    alphabet = np.array(SCORE_ALPHABET)
    scores = np.where(rng.random(n) < 0.5, alphabet[rng.integers(0, len(alphabet), n)],
                      np.round(rng.normal(size=n), 1))
    labels = rng.integers(0, 5, n)
    wide = np.repeat(rng.random(n_queries) < 0.1, sizes)
    labels[wide] = rng.integers(0, 60, int(wide.sum()))
    return scores, labels.astype(np.int64), offsets


K_LIST = [1, 3, 5, 10, 32, 33, 100, 1000]


def all_results(scores, labels, offsets, **extra):
    """Every mode's ndcg plus dcg and idcg, as a dict of arrays."""
    out = {}
    for ties in TIES:
        for gain in ["exp2", "linear"]:
            out[ties, gain] = fastndcg.ndcg(scores, labels, offsets, k=K_LIST, ties=ties,
                                            gain=gain, **extra)
        out[ties, "dcg"] = fastndcg.dcg(scores, labels, offsets, k=None, ties=ties, **extra)
    out["idcg"] = fastndcg.idcg(labels, offsets, k=K_LIST)
    out["idcg-none"] = fastndcg.idcg(labels, offsets, k=None, gain="linear")
    return out


# --------------------------------------------------------------------------- threads

@pytest.fixture
def restore_threads():
    before = numba.get_num_threads()
    yield
    numba.set_num_threads(before)


def test_thread_count_does_not_change_results(restore_threads):
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("Numba was started with fewer than 2 threads")
    scores, labels, offsets = big_batch(1)
    numba.set_num_threads(1)
    one = all_results(scores, labels, offsets)
    numba.set_num_threads(2)
    two = all_results(scores, labels, offsets)
    assert one.keys() == two.keys()
    for key in one:
        same(one[key], two[key])
    # the batch is non-trivial: not everything is 0 or 1
    values = one["average", "exp2"]
    assert ((values > 0) & (values < 1)).mean() > 0.3


# --------------------------------------------------------------------------- batch split

def split(scores, labels, offsets, q):
    """The batch as two batches, split before query q (offsets of the second rebased)."""
    cut = offsets[q]
    return ((scores[:cut], labels[:cut], offsets[:q + 1]),
            (scores[cut:], labels[cut:], offsets[q:] - cut))


def test_batch_split_big():
    scores, labels, offsets = big_batch(2)
    whole = all_results(scores, labels, offsets)
    n_q = len(offsets) - 1
    for q in [0, 1, n_q // 3, n_q - 1, n_q]:
        first, second = split(scores, labels, offsets, q)
        a, b = all_results(*first), all_results(*second)
        for key in whole:
            same(whole[key], np.concatenate([a[key], b[key]]))


@SETTINGS
@given(batch=batches(long_rows=300), k=cutoffs(), ties=st.sampled_from(TIES),
       gain=st.sampled_from(GAINS), data=st.data())
def test_batch_split(batch, k, ties, gain, data):
    s, r, o = int_batch(batch)
    q = data.draw(st.integers(0, len(o) - 1), label="split before query")
    (s1, r1, o1), (s2, r2, o2) = split(s, r, o, q)
    kw = dict(k=k, ties=ties, gain=gain, zero_idcg="nan")
    same(fastndcg.ndcg(s, r, o, **kw),
         np.concatenate([fastndcg.ndcg(s1, r1, o1, **kw), fastndcg.ndcg(s2, r2, o2, **kw)]))
    kw.pop("zero_idcg")
    same(fastndcg.dcg(s, r, o, **kw),
         np.concatenate([fastndcg.dcg(s1, r1, o1, **kw), fastndcg.dcg(s2, r2, o2, **kw)]))
    kw.pop("ties")
    same(fastndcg.idcg(r, o, **kw),
         np.concatenate([fastndcg.idcg(r1, o1, **kw), fastndcg.idcg(r2, o2, **kw)]))


# --------------------------------------------------------------------------- row order

@SETTINGS
@given(batch=batches(long_rows=200), k=cutoffs(), gain=st.sampled_from(GAINS), data=st.data())
def test_row_order_within_query_average(batch, k, gain, data):
    s, r, o = int_batch(batch)
    perm = np.arange(len(s))
    for q in range(len(o) - 1):
        lo, hi = o[q], o[q + 1]
        perm[lo:hi] = lo + np.asarray(data.draw(st.permutations(range(hi - lo))), dtype=np.int64)
    assert sorted(perm.tolist()) == list(range(len(s)))
    sp, rp = s[perm], r[perm]
    # ties="average": a tie group contributes its mean gain, and the sum of its gains
    # may be accumulated in another order after the permutation, which can change the
    # last bit -- hence a relative tolerance (no absolute one: gains are >= 0, so there
    # is no cancellation and an exact 0 stays an exact 0).
    np.testing.assert_allclose(fastndcg.ndcg(sp, rp, o, k=k, gain=gain),
                               fastndcg.ndcg(s, r, o, k=k, gain=gain), rtol=TOL, atol=0)
    np.testing.assert_allclose(fastndcg.dcg(sp, rp, o, k=k, gain=gain),
                               fastndcg.dcg(s, r, o, k=k, gain=gain), rtol=TOL, atol=0)
    # the ideal order is the gains sorted: one sequence whatever the input order
    same(fastndcg.idcg(rp, o, k=k, gain=gain), fastndcg.idcg(r, o, k=k, gain=gain))


# --------------------------------------------------------------------------- score transforms

INT_SCORES = st.one_of(st.integers(-20, 20).map(float), st.sampled_from([-math.inf, math.inf]))


@SETTINGS
@given(batch=batches(scores=INT_SCORES, long_rows=200), k=cutoffs(),
       ties=st.sampled_from(TIES), gain=st.sampled_from(GAINS),
       shift=st.integers(-10**6, 10**6), power=st.integers(-30, 30))
def test_shift_and_scale_of_scores(batch, k, ties, gain, shift, power):
    # integer-valued scores with |score| <= 20: adding an integer below 1e6 or multiplying
    # by 2**power is exact in float64, so no ties are created or destroyed
    s, r, o = int_batch(batch)
    kw = dict(k=k, ties=ties, gain=gain)
    base = fastndcg.ndcg(s, r, o, **kw)
    shifted, scaled = s + float(shift), s * 2.0 ** power
    finite = np.isfinite(s)
    assert np.array_equal(shifted[finite] - shift, s[finite])
    assert np.array_equal(scaled / 2.0 ** power, s)
    same(fastndcg.ndcg(shifted, r, o, **kw), base)
    same(fastndcg.ndcg(scaled, r, o, **kw), base)
    same(fastndcg.dcg(shifted, r, o, **kw), fastndcg.dcg(s, r, o, **kw))


# --------------------------------------------------------------------------- bounds

@SETTINGS
@given(batch=batches(long_rows=200), k=cutoffs(), ties=st.sampled_from(TIES),
       gain=st.sampled_from(GAINS), log_base=st.sampled_from([1.5, 2.0, math.e, 10.0]),
       zero_idcg=st.sampled_from(["zero", "one"]))
def test_score_at_most_ideal_int_labels(batch, k, ties, gain, log_base, zero_idcg):
    s, r, o = int_batch(batch)
    check_bounds(s, r, o, k=k, ties=ties, gain=gain, log_base=log_base, zero_idcg=zero_idcg)


@SETTINGS
@given(batch=batches(labels=FRACTIONAL_LABELS, long_rows=200), k=cutoffs(),
       ties=st.sampled_from(TIES), gain=st.sampled_from(["exp2", "linear"]))
def test_score_at_most_ideal_fractional_labels(batch, k, ties, gain):
    s, r, o = as_arrays(batch, np.float64, np.float64)
    check_bounds(s, r, o, k=k, ties=ties, gain=gain, log_base=2.0, zero_idcg="zero")


def check_bounds(s, r, o, *, zero_idcg, **kw):
    n = fastndcg.ndcg(s, r, o, zero_idcg=zero_idcg, **kw)
    assert np.all(n >= 0), n
    assert np.all(n <= 1 + TOL), n
    d = fastndcg.dcg(s, r, o, **kw)
    kw.pop("ties")
    i = fastndcg.idcg(r, o, **kw)
    assert d.shape == i.shape == n.shape
    assert np.all(d >= 0)
    assert np.all(d <= i * (1 + TOL)), (d, i)


# --------------------------------------------------------------------------- tie modes

@SETTINGS
@given(batch=batches(long_rows=200), k=cutoffs(), gain=st.sampled_from(GAINS),
       log_base=st.sampled_from([2.0, 10.0]))
def test_optimistic_average_pessimistic_order(batch, k, gain, log_base):
    s, r, o = int_batch(batch)
    kw = dict(k=k, gain=gain, log_base=log_base)
    for func in (fastndcg.ndcg, fastndcg.dcg):
        v = {t: func(s, r, o, ties=t, **kw) for t in TIES}
        scale = np.maximum(1.0, np.abs(v["average"]))
        # average is the mean over tie orders, stable is one of them: both lie between
        # the best (optimistic) and worst (pessimistic) order
        for middle in ("average", "stable"):
            assert np.all(v["optimistic"] >= v[middle] - TOL * scale), (middle, v)
            assert np.all(v[middle] >= v["pessimistic"] - TOL * scale), (middle, v)


def test_tie_modes_differ_on_a_tie():
    # one query, all scores tied, labels 0 and 1, k=1 (exp2 gains 0 and 1):
    # optimistic puts the 1 first -> 1; pessimistic the 0 -> 0; average: mean gain 1/2
    # at rank 1 over IDCG@1 = 1 -> 0.5; stable keeps input order (0 first) -> 0.
    s, r = np.array([1.0, 1.0]), np.array([0, 1], np.int64)
    got = {t: fastndcg.ndcg(s, r, k=1, ties=t)[0] for t in TIES}
    assert got == {"optimistic": 1.0, "average": 0.5, "stable": 0.0, "pessimistic": 0.0}


# --------------------------------------------------------------------------- multi-k

@SETTINGS
@given(batch=batches(long_rows=300),
       ks=st.lists(st.one_of(st.integers(1, 15), st.integers(16, 400)), min_size=1, max_size=5),
       ties=st.sampled_from(TIES), gain=st.sampled_from(GAINS))
def test_multi_k_equals_separate_calls(batch, ks, ties, gain):
    s, r, o = int_batch(batch)
    kw = dict(ties=ties, gain=gain)
    n_q = len(o) - 1
    for func, args, extra in [(fastndcg.ndcg, (s, r, o), dict(kw, zero_idcg="nan")),
                              (fastndcg.dcg, (s, r, o), kw),
                              (fastndcg.idcg, (r, o), dict(gain=gain))]:
        multi = func(*args, k=ks, **extra)
        assert multi.shape == (n_q, len(ks))
        for j, kj in enumerate(ks):
            same(multi[:, j], func(*args, k=kj, **extra))


@pytest.mark.parametrize("ks", [[1, 65], [63, 64, 65], [64, 66, 200], [2, 64], [65]])
@pytest.mark.parametrize("ties", TIES)
def test_cutoffs_either_side_of_the_prefix_sums(ks, ties):
    # cutoffs of at most 64 ranks are read off prefix sums that end at rank 64;
    # one deeper beside them is summed rank by rank: each alone or together,
    # the same bits (one tie group of 94 rows, distinct scores, two groups)
    rng = np.random.default_rng(len(ks))
    labels = rng.integers(0, 3, 282)
    scores = np.concatenate([np.zeros(94), rng.permutation(94).astype(float),
                             np.repeat([1.0, 0.0], 47)])
    offsets = [0, 94, 188, 282]
    for func, args in [(fastndcg.ndcg, (scores, labels, offsets)),
                       (fastndcg.dcg, (scores, labels, offsets)),
                       (fastndcg.idcg, (labels, offsets))]:
        kw = {} if func is fastndcg.idcg else {"ties": ties}
        multi = func(*args, k=ks, **kw)
        for j, kj in enumerate(ks):
            same(multi[:, j], func(*args, k=kj, **kw))


# --------------------------------------------------------------------------- Python threads

def test_concurrent_calls_match_sequential():
    jobs = []
    for i in range(16):
        scores, labels, offsets = big_batch(100 + i, n_queries=400 + 50 * i)
        kw = dict(k=[1, 5, 10, 50], ties=TIES[i % 4], gain=["exp2", "linear"][i // 8])
        jobs.append((scores, labels, offsets, kw))
    sequential = [fastndcg.ndcg(s, r, o, **kw) for s, r, o, kw in jobs]
    with ThreadPoolExecutor(max_workers=4) as pool:
        futures = [pool.submit(fastndcg.ndcg, s, r, o, **kw) for s, r, o, kw in jobs]
        concurrent = [f.result() for f in futures]
    for a, b, (_, _, offsets, _) in zip(sequential, concurrent, jobs):
        assert a.shape == (len(offsets) - 1, 4)
        same(a, b)
