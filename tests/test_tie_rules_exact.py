"""The tie rules of trec_eval's ndcg_rel and Rndcg: the reference's closed forms
(the mean gain of a tie group for Rndcg, the pair terms for ndcg_rel's
expectation) and its order of a tie group by gain for "optimistic"/"pessimistic"
equal the brute force over every ordering of the tied items
(:func:`fastndcg.reference.over_orderings`); the kernels equal the reference on
the same lists through the tie-heavy tests of ``test_measures_vs_reference``, and
here on lists whose groups are small enough to enumerate. G and infAP are not
monotone: no order of a tie group gives their bounds, and they stay refused."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fastndcg
from fastndcg import reference

from strategies import examples

SETTINGS = settings(max_examples=examples(1.5), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
HOW = {"average": "mean", "optimistic": "max", "pessimistic": "min"}
FUNCS = {"ndcg_rel": reference.ndcg_rel_query, "rndcg": reference.rndcg_query}


@st.composite
def tied_queries(draw, negative=False):
    """A list of at most 7 items, scores from a 3-value alphabet (ties in every
    group), labels 0..3 (-1..3 with ``negative``), and for qrels mode a judged
    flag per item and judged documents the run lacks."""
    n = draw(st.integers(1, 7))
    scores = draw(st.lists(st.sampled_from([0.1, 0.5, 0.9]), min_size=n, max_size=n))
    labels = draw(st.lists(st.integers(-1 if negative else 0, 3), min_size=n, max_size=n))
    return scores, labels


@SETTINGS
@given(query=tied_queries(), ties=st.sampled_from(list(HOW)), kind=st.sampled_from(list(FUNCS)))
def test_list_mode_rules_equal_brute_force(query, ties, kind):
    scores, labels = query
    fn = FUNCS[kind]
    want = reference.over_orderings(fn, scores, labels, how=HOW[ties])
    assert fn(scores, labels, ties=ties) == pytest.approx(want, rel=1e-12, abs=1e-12,
                                                          nan_ok=True)


@SETTINGS
@given(query=tied_queries(), ties=st.sampled_from(list(HOW)), kind=st.sampled_from(list(FUNCS)),
       data=st.data())
def test_qrels_mode_rules_equal_brute_force(query, ties, kind, data):
    """Unjudged items (gain 0), and judged documents the run does not retrieve (in
    the ideal list, and in R)."""
    scores, labels = query
    judged = data.draw(st.lists(st.booleans(), min_size=len(labels), max_size=len(labels)))
    missing = data.draw(st.lists(st.integers(0, 3), max_size=3))
    ideal = [g for g, j in zip(labels, judged) if j] + missing
    n_rel = sum(g >= 1 for g in ideal)
    fn = FUNCS[kind]
    opts = dict(judged=judged, ideal_labels=ideal, n_rel=n_rel)
    want = reference.over_orderings(fn, scores, labels, how=HOW[ties], **opts)
    assert fn(scores, labels, ties=ties, **opts) == pytest.approx(want, rel=1e-12, abs=1e-12,
                                                                  nan_ok=True)


@SETTINGS
@given(query=tied_queries(), ties=st.sampled_from(list(HOW)))
def test_kernels_equal_brute_force(query, ties):
    scores, labels = query
    out = fastndcg.measure(np.array(scores), np.array(labels), [0, len(scores)],
                           measure="ndcg_rel Rndcg", ties=ties, gain="linear")
    for kind, fn in FUNCS.items():
        want = reference.over_orderings(fn, scores, labels, how=HOW[ties])
        assert out[kind][0] == pytest.approx(want, rel=1e-12, abs=1e-12, nan_ok=True), kind


def test_g_is_not_monotone_so_its_bounds_stay_refused():
    """trec_eval's G: a tie group ordered by grade, highest first, is not its
    largest value (here a 1 ranked above the tied 3 and 2 gives more)."""
    scores, grades = [0.1, 0.5, 0.5, 0.9, 0.5], [1, 3, 2, 1, 1]
    opts = dict(ideal_labels=grades + [1])
    best = reference.over_orderings(reference.g_query, scores, grades, how="max", **opts)
    order = sorted(range(5), key=lambda i: (-scores[i], -grades[i]))
    by_grade = reference.g_query([scores[i] for i in order], [grades[i] for i in order],
                                 ties="stable", **opts)
    assert best > by_grade + 1e-3
    s, r = np.array(scores), np.array(grades)
    for ties in ("average", "optimistic", "pessimistic"):
        with pytest.raises(ValueError, match=f"'g' is not offered with ties='{ties}'"):
            fastndcg.measure(s, r, [0, 5], measure="G", ties=ties)


def test_over_orderings_refuses_too_many():
    with pytest.raises(ValueError, match="orderings"):
        reference.over_orderings(reference.rr_query, [0.5] * 9, [1] * 9)


def test_ndcg_rel_average_with_negative_gains_is_refused():
    """A negative gain can make ndcg_rel's sum fall below 0 (read as 0) for some
    orderings of a tie group and not others: the expectation is then not the
    closed form, so the rule is refused by name; the bounds stay exact."""
    s, r = np.array([0.5, 0.5, 0.5, 0.1]), np.array([-1, 0, 0, 2])
    with pytest.raises(ValueError, match="ndcg_rel' is not offered with ties='average' and "
                                         "negative_labels='keep'.*negative_labels='zero'"):
        fastndcg.measure(s, r, [0, 4], measure="ndcg_rel", negative_labels="keep",
                         gain="linear")
    for ties, how in (("optimistic", "max"), ("pessimistic", "min")):
        out = fastndcg.measure(s, r, [0, 4], measure="ndcg_rel", negative_labels="keep",
                               gain="linear", ties=ties)
        want = reference.over_orderings(reference.ndcg_rel_query, s.tolist(), r.tolist(),
                                        how=how)
        assert out["ndcg_rel"][0] == pytest.approx(want, rel=1e-12)
