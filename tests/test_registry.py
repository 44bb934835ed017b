"""The measure registry is complete and is read: every row names a reference
function that ``fastndcg.reference`` has and dispatches to for that measure, every
row is exercised by the differential tests of the kernels against the reference
(``test_measures_vs_reference``, which iterates over the registry; NDCG by
``test_vs_reference``) and by the brute-force tie checks of the reference
(``test_reference_measures``), and every row's declarations are well formed. A row
added without its reference function or its test fails here."""

from __future__ import annotations

import inspect

import pytest

import test_measures_vs_reference as T
import test_reference_measures as TR
from fastndcg import reference
from fastndcg import treceval
from fastndcg.measures import BITS, FAMILIES, PRINTS, REGISTRY, Kind, Param

CUTOFFS = (1, 3)


def _exercised() -> set:
    """The rows the differential tests check, over every tie rule, list and qrels mode."""
    rules = T.TIES + ["trec"]
    seen = {kind for ties in T.TIES for keep in (False, True)
            for kind, _, _ in T.measures(CUTOFFS, ties, keep=keep)}
    seen |= {kind for ties in rules for kind, _, _ in T.measures(CUTOFFS, ties, qrels=True)}
    return seen | {"ndcg"}  # test_vs_reference


def test_every_row_has_its_reference_function():
    for name, kind in REGISTRY.items():
        assert kind.reference, f"{name}: no reference function named"
        function = getattr(reference, kind.reference, None)
        assert callable(function), f"{name}: reference.{kind.reference} does not exist"


@pytest.mark.parametrize("name", [n for n, k in REGISTRY.items() if k.family != "ndcg"])
def test_the_reference_dispatches_each_row_to_its_function(name):
    """``reference.measure_query(name, ...)`` is the row's function, with its cutoff
    where the row takes one (two queries that tell the cutoff apart)."""
    kind = REGISTRY[name]
    function = getattr(reference, kind.reference)
    takes_k = "k" in inspect.signature(function).parameters and kind.cutoff != "none"
    scores, labels = [0.9, 0.8, 0.7, 0.6, 0.5], [0, 2, -1, 1, 3]
    judged = [True, True, True, False, True]
    extra = {"n_nonrel": 2} if "n_nonrel" in inspect.signature(function).parameters else {}
    for k in (1, 3, None):
        got = reference.measure_query(name, scores, labels, k, judged=judged, ties="stable",
                                      **extra)
        want = (function(scores, labels, k, judged=judged, ties="stable", **extra) if takes_k
                else function(scores, labels, judged=judged, ties="stable", **extra))
        assert got == pytest.approx(want, nan_ok=True), (name, k)
    assert name in reference.BINARY_MEASURES


def test_every_row_is_exercised_against_the_reference():
    missing = sorted(set(REGISTRY) - _exercised())
    assert not missing, f"registry rows no differential test exercises: {missing}"


def test_every_row_is_checked_over_the_orderings_of_ties():
    missing = sorted(set(REGISTRY) - set(TR.KINDS) - {"ndcg"})
    assert not missing, f"registry rows the brute-force tie test leaves out: {missing}"


def test_every_row_says_what_it_computes():
    for name, kind in REGISTRY.items():
        assert kind.doc, f"{name}: no doc line"
        refuses = not (kind.average and kind.bounds and kind.average_negative)
        assert bool(kind.refusal) == refuses, f"{name}: say why it refuses a tie rule"
        for p in kind.params:
            assert p.doc, f"{name}: parameter {p.name} says nothing"


def test_rows_are_keyword_only_and_well_formed():
    with pytest.raises(TypeError):
        Kind("x", 0, "basic", reference="x_query", doc="x")  # noqa: the point
    with pytest.raises(TypeError):
        Param("p", float, 0.5, "x")  # noqa: the point
    trec_names = []
    for name, kind in REGISTRY.items():
        assert kind.name == name
        assert kind.family in FAMILIES or kind.family == "ndcg", name
        assert (kind.code == -1) == (kind.family == "ndcg"), name
        assert set(kind.reads) <= set(BITS) and len(kind.reads) <= 3, name
        assert kind.cutoff in ("none", "optional", "required"), name
        assert kind.summary in ("mean", "sum", "gm"), name
        assert kind.trec_prints in PRINTS, name
        if kind.trec_cutoffs or (kind.trec_cut and not kind.each):
            assert kind.trec_cut and kind.cutoff != "none", name
        if kind.each:
            assert len(kind.params) == 1 and isinstance(kind.params[0].default, tuple), name
        else:
            assert all(isinstance(p.default, p.type) for p in kind.params), name
        for p in kind.params:
            assert p.range is None or p.example, f"{name}: {p.name} has a range, no example"
        trec_names += [n for n in (kind.trec, kind.trec_cut) if n]
    assert len(trec_names) == len(set(trec_names)), "a trec_eval name on two rows"
    for field in ("irm", "ranx"):
        names = [getattr(k, field) for k in REGISTRY.values() if getattr(k, field)]
        assert len(names) == len(set(names)), f"an {field} name on two rows"


def test_every_trec_eval_name_is_in_trec_eval_s_table():
    """``fastndcg trec_eval`` prints in trec_eval's order: each trec_eval name of the
    registry is one of trec_eval's, and prints as its row says."""
    for kind in REGISTRY.values():
        for name in (kind.trec, kind.trec_cut):
            if name:
                assert name in treceval.MEASURES_C, name
                assert treceval.TABLE[name] == kind.prints(name), name
