"""The binary measures of ``fastndcg.reference`` (AP, RR, P, R, Success, Rprec,
Judged, num_*), checked three ways:

1. ``ties="average"`` against brute force: the mean of the measure over every
   ordering of the tied items (each ordering scored with ``ties="stable"``), and
   ``"optimistic"`` / ``"pessimistic"`` against the max / min over those orderings;
2. small cases worked out by hand from the definitions;
3. ir_measures (pytrec_eval, msmarco and its judged provider) on tie-free queries.
"""

from __future__ import annotations

import itertools
import math
import random

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from fastndcg import reference
from fastndcg.measures import REGISTRY
from fastndcg.reference import (ap_query, judged_query, measure, measure_query, num_rel_query,
                                num_rel_ret_query, num_ret_query, precision_query, recall_query,
                                rprec_query, rr_query, success_query)

from strategies import examples

# every measure of the registry but NDCG (checked by test_tie_rules_exact and
# test_vs_reference), each as its row says: whether it takes a cutoff, the tie rules it
# offers, its number parameters
KINDS = tuple(k.name for k in REGISTRY.values() if k.family != "ndcg")
# the values each number parameter is checked at beside its default (a kind with one
# value per measure, Kind.each, at these only; several parameters: the first of each)
VALUES = {"mult": (0.2, 1.0, 1.6), "recall": (0.0, 0.3, 0.5, 1.0), "beta": (0.25,),
          "p": (0.5,), "a": (2.0,), "b": (-1.0,), "c": (-0.5,), "d": (0.25,), "n": (20.0,)}


def _takes_cutoff(kind: str) -> bool:
    return REGISTRY[kind].cutoff != "none"


def _params(kind: str) -> list:
    """The reference function's keywords at each parameter point of ``kind``."""
    row = REGISTRY[kind]
    if not row.params:
        return [{}]
    keyword = [p.reference_keyword for p in row.params]
    if row.each:
        return [{keyword[0]: v} for v in VALUES[row.params[0].name]]
    points = [dict(zip(keyword, row.defaults))]
    if len(row.params) == 1:
        return points + [{keyword[0]: v} for v in VALUES[row.params[0].name]]
    return points + [{k: VALUES[p.name][0] for k, p in zip(keyword, row.params)}]


# --------------------------------------------------------------------------- 1. brute force

def _tie_groups(scores):
    """Positions grouped by equal score (NaN with NaN), groups in rank order."""
    order = sorted(range(len(scores)), key=lambda i: reference._score_rank_key(scores[i]))
    groups = []
    for i in order:
        if groups and reference._score_rank_key(scores[groups[-1][-1]]) == \
                reference._score_rank_key(scores[i]):
            groups[-1].append(i)
        else:
            groups.append([i])
    return groups


def _orderings(scores):
    """Every rank order of the positions that keeps the score order: permutations
    within each tie group, product across groups."""
    per_group = [list(itertools.permutations(g)) for g in _tie_groups(scores)]
    for choice in itertools.product(*per_group):
        yield [i for group in choice for i in group]


@st.composite
def tied_queries(draw):
    n = draw(st.integers(0, 7))
    nan_last = draw(st.booleans())
    alphabet = [0.0, 1.0, 2.5, -math.inf] + ([math.nan] if nan_last else [])
    scores = draw(st.lists(st.sampled_from(alphabet), min_size=n, max_size=n))
    labels = draw(st.lists(st.integers(-1, 3), min_size=n, max_size=n))
    judged = draw(st.lists(st.booleans(), min_size=n, max_size=n)
                  if draw(st.booleans()) else st.none())
    rel = draw(st.sampled_from([0, 1, 2]))
    in_list = sum(1 for i in range(n) if (judged is None or judged[i]) and labels[i] >= rel)
    n_rel = draw(st.one_of(st.none(), st.integers(in_list, in_list + 3)))
    ks = [None, n + 2] + draw(st.lists(st.integers(1, max(1, n)), min_size=1, max_size=3))
    nan_scores = "last" if nan_last else "error"
    return scores, labels, judged, rel, n_rel, ks, nan_scores


@settings(max_examples=examples(3), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tied_queries())
def test_average_is_the_mean_over_orderings_and_extremes_are_max_min(case):
    scores, labels, judged, rel, n_rel, ks, nan_scores = case
    orderings = list(_orderings(scores))
    assume(len(orderings) <= 720)
    common = dict(rel=rel, n_rel=n_rel, nan_scores=nan_scores)
    for kind, k, params in [(kind, k, p) for kind in KINDS for p in _params(kind)
                            for k in (ks if _takes_cutoff(kind) else [None])]:
        values = []
        for order in orderings:
            permuted = dict(
                scores=[scores[i] for i in order], labels=[labels[i] for i in order],
                judged=None if judged is None else [judged[i] for i in order])
            values.append(measure_query(kind, permuted["scores"], permuted["labels"], k,
                                        judged=permuted["judged"], ties="stable", **common,
                                        **params))
        mean = math.fsum(values) / len(values)
        row = REGISTRY[kind]
        if not row.bounds:  # neither average nor the bounds: refused
            for ties in ("average", "optimistic", "pessimistic"):
                with pytest.raises(ValueError, match="not offered with ties="):
                    measure_query(kind, scores, labels, k, judged=judged, ties=ties, **common,
                                  **params)
            continue
        rules = ("optimistic", "pessimistic")
        negative = any(g < 0 and (judged is None or judged[i]) for i, g in enumerate(labels))
        if not row.average:
            with pytest.raises(ValueError, match="not offered with ties='average'"):
                measure_query(kind, scores, labels, k, judged=judged, **common, **params)
        elif not row.average_negative and negative:  # negative gains kept:
            try:  # refused where the expectation is reached (a positive ideal gain)
                measure_query(kind, scores, labels, k, judged=judged, ties="average",
                              **common, **params)
                rules += ("average",)
            except ValueError as err:
                assert "exact for gains >= 0 only" in str(err)
        else:
            rules += ("average",)
        got = {ties: measure_query(kind, scores, labels, k, judged=judged, ties=ties, **common,
                                   **params) for ties in rules}
        where = f"{kind} {params} k={k} rel={rel} n_rel={n_rel}"
        # (Rndcg is trec_eval's 0 / 0 on every ordering where it has no point to take)
        if "average" in got:
            assert got["average"] == pytest.approx(mean, abs=1e-12, rel=1e-12,
                                                   nan_ok=True), where
        assert got["optimistic"] == pytest.approx(max(values), abs=1e-12, nan_ok=True), where
        assert got["pessimistic"] == pytest.approx(min(values), abs=1e-12, nan_ok=True), where


def test_brute_force_sees_ties_across_the_cutoff():
    # one explicit case: a group of 4 with 2 relevant straddling k = 2
    scores, labels = [5.0, 1.0, 1.0, 1.0, 1.0], [0, 1, 0, 1, 0]
    for kind in ("ap", "rr", "p", "r", "success", "judged"):
        values = [measure_query(kind, [scores[i] for i in o], [labels[i] for i in o], 2,
                                ties="stable") for o in _orderings(scores)]
        want = math.fsum(values) / len(values)
        assert measure_query(kind, scores, labels, 2) == pytest.approx(want, abs=1e-12)


# --------------------------------------------------------------------------- 2. by hand

# A list of five, ranked as given (strict scores), labels and relevance at rel=1:
#   rank:   1  2  3  4  5
#   label:  2  0  1 -1  3      relevant: 1, 3, 5 (the -1 is simply not relevant)
S5 = [0.9, 0.8, 0.7, 0.6, 0.5]
L5 = [2, 0, 1, -1, 3]


def test_precision_by_hand():
    assert precision_query(S5, L5, 1) == 1.0            # 1/1
    assert precision_query(S5, L5, 3) == 2 / 3          # ranks 1, 3
    assert precision_query(S5, L5, 10) == 3 / 10        # 3 relevant, divided by k=10, not 5
    assert precision_query(S5, L5) == 3 / 5             # k=None: divided by n
    assert precision_query(S5, L5, 3, rel=2) == 1 / 3   # only label 2 (rank 1) in the top 3
    assert precision_query(S5, L5, 5, rel=0) == 4 / 5   # every label >= 0: all but the -1
    assert precision_query([], []) == 0.0               # empty, k=None
    assert precision_query([], [], 5) == 0.0
    # unjudged rank 1: not relevant whatever its label
    assert precision_query(S5, L5, 3, judged=[False, True, True, True, True]) == 1 / 3


def test_recall_by_hand():
    assert recall_query(S5, L5, 1) == 1 / 3             # R = 3 from the list
    assert recall_query(S5, L5, 3) == 2 / 3
    assert recall_query(S5, L5, 3, n_rel=8) == 2 / 8    # qrels mode: 5 more unretrieved
    assert recall_query(S5, L5, 10) == 1.0
    assert recall_query(S5, [0, 0, 0, -1, 0], 3) == 0.0  # R == 0
    assert recall_query(S5, L5, 5, rel=3) == 1.0        # one label-3 item, at rank 5


def test_success_by_hand():
    assert success_query(S5, L5, 1) == 1.0
    assert success_query(S5, [0, 0, 1, 0, 0], 2) == 0.0
    assert success_query(S5, [0, 0, 1, 0, 0], 3) == 1.0
    assert success_query(S5, L5, 4, rel=3) == 0.0       # the 3 is at rank 5
    assert success_query([], [], 3) == 0.0
    # average: a group of 3 tied with one relevant, k=2 -> 2 of 3 positions inside
    assert success_query([1.0, 1.0, 1.0], [0, 1, 0], 2) == pytest.approx(2 / 3)
    # 1 - (2/4)(1/3): a group of 4 with 2 relevant, k=2 -> 1 - P(both top ranks non-rel)
    assert success_query([1.0] * 4, [1, 0, 1, 0], 2) == pytest.approx(1 - (2 / 4) * (1 / 3))


def test_rr_by_hand():
    assert rr_query(S5, L5) == 1.0
    assert rr_query(S5, L5, rel=3) == 1 / 5
    assert rr_query(S5, L5, 4, rel=3) == 0.0            # first relevant below the cut
    assert rr_query(S5, [0, 0, 0, 0, 0]) == 0.0
    # average: [x, tie(a, b, c)] with one relevant in the tie -> ranks 2, 3, 4 equally
    want = (1 / 2 + 1 / 3 + 1 / 4) / 3
    assert rr_query([2.0, 1.0, 1.0, 1.0], [0, 0, 1, 0]) == pytest.approx(want)
    # same, cut at 3: rank 4 contributes 0
    assert rr_query([2.0, 1.0, 1.0, 1.0], [0, 0, 1, 0], 3) == pytest.approx((1 / 2 + 1 / 3) / 3)
    # tie of 3 with 2 relevant: first relevant at 1 w.p. 2/3, at 2 w.p. 1/3
    assert rr_query([1.0] * 3, [1, 1, 0]) == pytest.approx(2 / 3 + (1 / 3) / 2)


def test_ap_by_hand():
    # relevant at 1, 3, 5: precisions 1/1, 2/3, 3/5
    assert ap_query(S5, L5) == pytest.approx((1 + 2 / 3 + 3 / 5) / 3)
    assert ap_query(S5, L5, 3) == pytest.approx((1 + 2 / 3) / 3)     # map_cut.3: still / R = 3
    assert ap_query(S5, L5, n_rel=6) == pytest.approx((1 + 2 / 3 + 3 / 5) / 6)
    assert ap_query(S5, L5, rel=2) == pytest.approx((1 + 2 / 5) / 2)  # labels 2 and 3: ranks 1, 5
    assert ap_query(S5, [0] * 5) == 0.0
    assert ap_query([], [], n_rel=4) == 0.0
    # average: a tie of 2 with 1 relevant -> rank 1 or 2 equally: (1 + 1/2) / 2
    assert ap_query([1.0, 1.0], [1, 0]) == pytest.approx(0.75)
    # a tie of 3 with 2 relevant, orderings (r = relevant, n = not):
    #   rrn: 1 + 1 = 2;  rnr: 1 + 2/3;  nrr: 1/2 + 2/3;  each of these twice of 6 -> mean / R=2
    want = (2 + (1 + 2 / 3) + (1 / 2 + 2 / 3)) / 3 / 2
    assert ap_query([1.0] * 3, [1, 1, 0]) == pytest.approx(want)


def test_rprec_by_hand():
    assert rprec_query(S5, L5) == 2 / 3                 # R = 3: ranks 1, 3 in the top 3
    assert rprec_query(S5, L5, n_rel=10) == 3 / 10      # top 10 is the whole list
    assert rprec_query(S5, L5, rel=3) == 0.0            # R = 1: rank 1 has label 2
    assert rprec_query(S5, [0] * 5) == 0.0
    # average: tie of 4 with 2 relevant, R=2: expected relevant in top 2 = 2 * 2/4
    assert rprec_query([1.0] * 4, [1, 0, 0, 1]) == pytest.approx(0.5)


def test_judged_by_hand():
    j = [True, False, True, False, True]
    assert judged_query(S5, L5, 2, judged=j) == 1 / 2
    assert judged_query(S5, L5, 3, judged=j) == 2 / 3
    assert judged_query(S5, L5, 10, judged=j) == 3 / 5  # ir_measures: / min(k, n) = 5
    assert judged_query(S5, L5, judged=j) == 3 / 5
    assert judged_query(S5, [-1] * 5, 2) == 1.0         # judged, even with negative labels
    assert judged_query([], [], 5) == 0.0
    # optimistic / pessimistic sort judged first / last among ties
    assert judged_query([1.0, 1.0], [0, 0], 1, judged=[False, True], ties="optimistic") == 1.0
    assert judged_query([1.0, 1.0], [0, 0], 1, judged=[True, False], ties="pessimistic") == 0.0
    assert judged_query([1.0, 1.0], [0, 0], 1, judged=[True, False]) == 0.5


def test_counts_by_hand():
    assert num_ret_query(S5, L5) == 5.0
    assert num_rel_query(S5, L5) == 3.0
    assert num_rel_query(S5, L5, n_rel=7) == 7.0
    assert num_rel_query(S5, L5, rel=2) == 2.0
    assert num_rel_ret_query(S5, L5, n_rel=7) == 3.0
    assert num_rel_ret_query(S5, L5, judged=[False] * 5) == 0.0
    assert num_ret_query([], []) == 0.0


def test_trec_ties_use_doc_ids_descending():
    # tie of two: doc "b" > "a" as strings, so "b" (not relevant) goes first
    assert rr_query([1.0, 1.0], [1, 0], ties="trec", doc_ids=["a", "b"]) == 0.5
    assert rr_query([1.0, 1.0], [1, 0], ties="stable") == 1.0
    with pytest.raises(ValueError, match="doc_ids"):
        rr_query([1.0, 1.0], [1, 0], ties="trec")


def test_nan_scores():
    with pytest.raises(ValueError, match="NaN"):
        ap_query([math.nan, 1.0], [1, 0])
    # NaN last: the relevant item ranks 2nd
    assert rr_query([math.nan, 1.0], [1, 0], nan_scores="last") == 0.5


def test_bad_arguments():
    with pytest.raises(ValueError):
        ap_query([1.0], [1], n_rel=0)                   # fewer than the list's relevant
    with pytest.raises(ValueError):
        ap_query([1.0], [1], rel=-1)
    with pytest.raises(ValueError):
        precision_query([1.0], [1], 0)
    with pytest.raises(ValueError):
        ap_query([1.0], [1, 0])
    with pytest.raises(ValueError):
        ap_query([1.0], [1], ties="random")
    with pytest.raises(ValueError):
        measure_query("map", [1.0], [1])


def test_batch_matches_the_per_query_functions():
    scores = [0.9, 0.8, 0.7, 0.5, 0.4, 0.4]
    labels = [1, 0, 2, 0, 1, 0]
    offsets = [0, 3, 3, 6]
    for kind in KINDS:
        ties = "average" if REGISTRY[kind].average else "stable"
        got = measure(kind, scores, labels, offsets, k=[1, 2], ties=ties)
        for q, (lo, hi) in enumerate(zip(offsets, offsets[1:])):
            s, r = scores[lo:hi], labels[lo:hi]
            if not _takes_cutoff(kind):
                assert got[q] == measure_query(kind, s, r, ties=ties)
            else:
                assert got[q] == [measure_query(kind, s, r, 1, ties=ties),
                                  measure_query(kind, s, r, 2, ties=ties)]
    by_id = measure("ap", scores, labels, query_ids=["a", "b", "a", "b", "a", "b"])
    assert by_id == [ap_query([0.9, 0.7, 0.4], [1, 2, 1]), ap_query([0.8, 0.5, 0.4], [0, 0, 0])]


# --------------------------------------------------------------------------- 3. ir_measures

IR_NAMES = {  # ir_measures name -> (kind, k)
    "AP": ("ap", None), "AP@3": ("ap", 3), "AP@10": ("ap", 10),
    "RR": ("rr", None), "RR@2": ("rr", 2), "RR@5": ("rr", 5),
    "P@1": ("p", 1), "P@5": ("p", 5), "P@20": ("p", 20),
    "R@3": ("r", 3), "R@20": ("r", 20),
    "Success@1": ("success", 1), "Success@5": ("success", 5),
    "Rprec": ("rprec", None),
    "Judged@3": ("judged", 3), "Judged@20": ("judged", 20),
    "NumRet": ("num_ret", None), "NumRel": ("num_rel", None), "NumRelRet": ("num_rel_ret", None),
    "Bpref": ("bpref", None), "SetP": ("set_p", None), "SetR": ("set_recall", None),
    "SetRelP": ("set_relative_p", None), "SetAP": ("set_map", None),
}
REL2_NAMES = ("AP", "AP@3", "RR", "RR@5", "P@5", "R@3", "Success@5", "Rprec", "NumRelRet",
              "Bpref", "SetP", "SetR", "SetRelP", "SetAP")


def _ir_name(name, rel):
    if rel == 1:
        return name
    base, _, cut = name.partition("@")
    return f"{base}(rel={rel})" + (f"@{cut}" if cut else "")


@st.composite
def tie_free_batches(draw):
    rng = random.Random(draw(st.integers(0, 2**32 - 1)))
    queries = []
    for q in range(draw(st.integers(1, 10))):
        n = rng.randint(1, 12)
        scores = [x / 7 for x in rng.sample(range(-500, 500), n)]  # distinct
        docs = [f"d{i}" for i in range(n)]
        judged = [rng.random() < 0.7 for _ in range(n)]
        labels = [rng.randint(-1, 3) if judged[i] else 0 for i in range(n)]
        extra = [rng.randint(-1, 3) for _ in range(rng.randint(0, 4))]  # judged, not retrieved
        queries.append((f"q{q}", scores, docs, labels, judged, extra))
    return queries


@settings(max_examples=examples(0.4), deadline=None)
@given(tie_free_batches())
def test_against_ir_measures(queries):
    ir_measures = pytest.importorskip("ir_measures")
    qrels, run = [], []
    for qid, scores, docs, labels, judged, extra in queries:
        for i, doc in enumerate(docs):
            run.append(ir_measures.ScoredDoc(qid, doc, scores[i]))
            if judged[i]:
                qrels.append(ir_measures.Qrel(qid, doc, labels[i]))
        for j, label in enumerate(extra):
            qrels.append(ir_measures.Qrel(qid, f"unretrieved{j}", label))
    wanted = {}
    for rel in (1, 2):
        for name in (IR_NAMES if rel == 1 else REL2_NAMES):
            wanted[_ir_name(name, rel)] = IR_NAMES[name] + (rel,)
    parsed = {str(ir_measures.parse_measure(n)): n for n in wanted}
    compared = 0
    for metric in ir_measures.iter_calc([ir_measures.parse_measure(n) for n in wanted], qrels, run):
        kind, k, rel = wanted[parsed[str(metric.measure)]]
        qid, scores, docs, labels, judged, extra = next(
            q for q in queries if q[0] == metric.query_id)
        n_rel = sum(1 for i in range(len(docs)) if judged[i] and labels[i] >= rel) + \
            sum(1 for label in extra if label >= rel)
        # bpref's N: judged non-relevant documents (labels 0..rel-1), retrieved or not
        extra_opts = {"n_nonrel": sum(1 for i in range(len(docs))
                                      if judged[i] and 0 <= labels[i] < rel)
                      + sum(1 for label in extra if 0 <= label < rel)} if kind == "bpref" else {}
        ours = measure_query(kind, scores, labels, k, rel=rel, n_rel=n_rel, judged=judged,
                             ties="stable", **extra_opts)
        assert ours == pytest.approx(metric.value, abs=1e-9), (qid, parsed[str(metric.measure)])
        compared += 1
    # ir_measures leaves out queries without qrels (and msmarco's RR@k those without a
    # relevant document); queries here all have retrieved items, most have qrels.
    with_qrels = sum(1 for q in queries if any(q[4]) or q[5])
    assert compared >= with_qrels * len(wanted) * 0.5
