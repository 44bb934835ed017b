"""Differential tests: the compiled kernels against the pure-Python oracle
(fastndcg.reference) over many generated, tie-heavy batches and every mode."""

from __future__ import annotations

import importlib
import math
from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fastndcg
from fastndcg import reference

from strategies import (DTYPES, FRACTIONAL_LABELS, NAN_ALPHABET, NEGATIVE_LABELS, as_arrays,
                        batches, cutoffs, examples, integral_scores)

SETTINGS = settings(max_examples=examples(1.5), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
TIES = ["average", "stable", "optimistic", "pessimistic"]
RTOL = ATOL = 1e-12


def close(actual, expected):
    actual = np.asarray(actual, dtype=float)
    expected = np.asarray(expected, dtype=float)
    if expected.size == 0:  # no queries: the oracle's [] has no column shape
        expected = expected.reshape(actual.shape)
    np.testing.assert_allclose(actual, expected, rtol=RTOL, atol=ATOL, equal_nan=True)


@pytest.mark.parametrize("score_dtype,label_dtype", DTYPES)
@SETTINGS
@given(batch=batches(), k=cutoffs(), ties=st.sampled_from(TIES),
       gain=st.sampled_from(["exp2", "linear", (0.0, 1.0, 3.0, 7.0, 2.0)]),
       zero_idcg=st.sampled_from(["zero", "one", "nan"]))
def test_ndcg_matches_reference(score_dtype, label_dtype, batch, k, ties, gain, zero_idcg):
    if np.dtype(score_dtype).kind in "iu":
        batch = integral_scores(batch)
    s, r, o = as_arrays(batch, score_dtype, label_dtype)
    expected = reference.ndcg(s.tolist(), r.tolist(), o.tolist(), k=k, gain=gain, ties=ties,
                              zero_idcg=zero_idcg)
    close(fastndcg.ndcg(s, r, o, k=k, gain=gain, ties=ties, zero_idcg=zero_idcg), expected)


@SETTINGS
@given(batch=batches(labels=FRACTIONAL_LABELS), k=cutoffs(), ties=st.sampled_from(TIES),
       gain=st.sampled_from(["exp2", "linear"]),
       log_base=st.sampled_from([2.0, math.e, 10.0, 1.5]))
def test_dcg_and_idcg_match_reference(batch, k, ties, gain, log_base):
    s, r, o = as_arrays(batch)
    close(fastndcg.dcg(s, r, o, k=k, gain=gain, ties=ties, log_base=log_base),
          reference.dcg(s.tolist(), r.tolist(), o.tolist(), k=k, gain=gain, ties=ties,
                        log_base=log_base))
    close(fastndcg.idcg(r, o, k=k, gain=gain, log_base=log_base),
          reference.idcg(r.tolist(), o.tolist(), k=k, gain=gain, log_base=log_base))


@SETTINGS
@given(batch=batches(scores=st.sampled_from(NAN_ALPHABET)), k=cutoffs(),
       ties=st.sampled_from(TIES))
def test_nan_scores_last_matches_reference(batch, k, ties):
    for dtype in (np.float64, np.float32):
        s, r, o = as_arrays(batch, dtype, np.int64)
        expected = reference.ndcg(s.tolist(), r.tolist(), o.tolist(), k=k, ties=ties,
                                  nan_scores="last")
        close(fastndcg.ndcg(s, r, o, k=k, ties=ties, nan_scores="last"), expected)


@SETTINGS
@given(batch=batches(labels=NEGATIVE_LABELS), k=cutoffs(), ties=st.sampled_from(TIES),
       policy=st.sampled_from(["zero", "keep"]), gain=st.sampled_from(["exp2", "linear"]))
def test_negative_labels_match_reference(batch, k, ties, policy, gain):
    s, r, o = as_arrays(batch, np.float64, np.int64)
    expected = reference.ndcg(s.tolist(), r.tolist(), o.tolist(), k=k, ties=ties, gain=gain,
                              negative_labels=policy, zero_idcg="nan")
    close(fastndcg.ndcg(s, r, o, k=k, ties=ties, gain=gain, negative_labels=policy,
                        zero_idcg="nan"), expected)


@settings(max_examples=examples(0.25), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(batch=batches(max_queries=4, max_rows=40, long_rows=3000),
       k=st.one_of(st.none(), st.integers(1, 1000),
                   st.lists(st.integers(1, 1000), min_size=1, max_size=3)),
       ties=st.sampled_from(TIES), labels=st.sampled_from(["small", "wide"]),
       score_dtype=st.sampled_from([np.float64, np.float32, np.int32, np.uint16]))
def test_long_lists_and_large_k(batch, k, ties, labels, score_dtype):
    """float32 and integer scores of <= 32 bits take the packed-key selection on large
    cuts; float64 the comparator one."""
    s, r, o = as_arrays(batch, np.float64, np.int64)
    if np.dtype(score_dtype).kind in "iu":  # the same order, as integers >= 0
        s = np.asarray(integral_scores(batch)[0], np.int64) + 4
    s = s.astype(score_dtype)
    if labels == "wide":  # labels past the histogram range take the selection path
        r = r * 20
    gain = "linear" if labels == "wide" else "exp2"
    expected = reference.ndcg(s.tolist(), r.tolist(), o.tolist(), k=k, ties=ties, gain=gain)
    close(fastndcg.ndcg(s, r, o, k=k, ties=ties, gain=gain), expected)


@pytest.mark.parametrize("order", ["shuffled", "ascending", "descending"])
@pytest.mark.parametrize("n,k", [(5000, 10), (5000, 32), (3000, 200), (100, 1000), (60, 1000)])
@pytest.mark.parametrize("score_dtype", [np.float64, np.float32])
def test_selection_paths_on_long_lists(order, n, k, score_dtype):
    """Long lists in adversarial orders exercise the insertion list, its fallback to
    quickselect, the full sort, and (float32) the packed-key selection."""
    rng = np.random.default_rng(n + k)
    scores = np.round(rng.normal(size=n), 1).astype(score_dtype)  # heavy ties
    if order == "ascending":
        scores = np.sort(scores)
    elif order == "descending":
        scores = np.sort(scores)[::-1].copy()
    labels = rng.integers(0, 40, n)  # beyond the histogram: selection for IDCG too
    for ties in TIES:
        got = fastndcg.ndcg(scores, labels, k=[1, k], ties=ties, gain="linear")
        want = reference.ndcg(scores.tolist(), labels.tolist(), k=[1, k], ties=ties,
                              gain="linear")
        close(got, want)


@SETTINGS
@given(batch=batches(), k=cutoffs(), data=st.data())
def test_query_ids_group_scattered_rows(batch, k, data):
    """Rows of one id form one query wherever they are; queries in first-appearance order."""
    s, r, o = as_arrays(batch, np.float64, np.int64)
    n_q = len(o) - 1
    ids = np.repeat(np.arange(n_q) * 7 + 3, np.diff(o))
    perm = np.asarray(data.draw(st.permutations(range(len(s)))), dtype=np.int64)
    s, r, ids = s[perm], r[perm], ids[perm]
    got = fastndcg.ndcg(s, r, query_ids=ids, k=k, ties="stable")
    want = reference.ndcg(s.tolist(), r.tolist(), query_ids=ids.tolist(), k=k, ties="stable")
    close(got, want)
    # string ids group the same way
    close(fastndcg.ndcg(s, r, query_ids=ids.astype(str), k=k, ties="stable"), want)


@settings(max_examples=examples(0.6), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(batch=batches(max_queries=6, max_rows=40,
                     scores=st.sampled_from([-1.5, -0.0, 0.0, 0.25, 0.5, 2.0, float("inf")])),
       k=st.one_of(st.none(), st.integers(1, 45),
                   st.lists(st.integers(1, 45), min_size=1, max_size=4)),
       ties=st.sampled_from(["average", "stable"]), score_dtype=st.sampled_from([np.float32, np.int16]))
def test_counting_path_for_short_lists(batch, k, ties, score_dtype):
    """Lists of up to 32 rows with scores of <= 32 bits are ranked by counting; the
    same values as float64 take the selecting path: both equal the reference, and
    each other to the last bit (sums per tie group in input order on both paths)."""
    s, r, o = as_arrays(batch, np.float64, np.int8)
    if score_dtype is np.int16:
        s = np.where(np.isinf(s), 1000.0, s * 4)  # integers, same order and ties
    short = fastndcg.ndcg(s.astype(score_dtype), r, o, k=k, ties=ties)
    wide = fastndcg.ndcg(s.astype(score_dtype).astype(np.float64), r, o, k=k, ties=ties)
    np.testing.assert_array_equal(short, wide)
    expected = reference.ndcg(s.astype(score_dtype).astype(float).tolist(), r.tolist(),
                              o.tolist(), k=k, ties=ties)
    close(short, expected)


@settings(max_examples=examples(0.3), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(batch=batches(max_queries=4, max_rows=70, long_rows=600,
                     labels=st.sampled_from([0] * 12 + [1, 2, 3, -1])),
       k=st.one_of(st.none(), st.integers(65, 700),
                   st.lists(st.one_of(st.none(), st.integers(1, 700)), min_size=1, max_size=4)),
       ties=st.sampled_from(["average", "stable"]), gain=st.sampled_from(["exp2", "linear"]),
       score_dtype=st.sampled_from([np.float64, np.float32]))
def test_deep_cuts_from_the_groups_of_items_with_a_gain(batch, k, ties, gain, score_dtype):
    """Deep cuts and whole lists where few items have a gain (as in a search log) are
    scored from the tie groups of those items alone, the others only counted (a
    query with many such items is ranked whole): equal to the reference, and bit
    for bit to DCG read off a whole ranking of each query (the one the graded
    measures make, asked for beside it). Scores tie heavily; a negative label has
    a non-zero gain too."""
    s, r, o = as_arrays(batch, np.float64, np.int64)
    s = s.astype(score_dtype)
    kk = k if isinstance(k, list) else [k]
    expected = reference.ndcg(s.tolist(), r.tolist(), o.tolist(), k=kk, ties=ties, gain=gain,
                              negative_labels="keep", zero_idcg="nan")
    opts = dict(ties=ties, gain=gain, negative_labels="keep", zero_idcg="nan")
    got = fastndcg.ndcg(s, r, o, k=kk, **opts)
    close(got, expected)
    # bit for bit the values of the route that ranks every query (packed keys for
    # float32, the selection for float64), as before the groups of gains were used
    score = importlib.import_module("fastndcg._kernels.score")
    choose = score.choose_route

    def ranking_route(lists, *args):
        route = choose(lists, *args)
        return route._replace(sparse=False, packed=lists.scores.dtype == np.float32) \
            if route.sparse else route

    with mock.patch.object(score, "choose_route", ranking_route):
        ranked = fastndcg.ndcg(s, r, o, k=kk, **opts)
    np.testing.assert_array_equal(got, ranked)
