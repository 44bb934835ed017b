"""The measure registry is complete: every row names a reference function that
``fastndcg.reference`` has (and dispatches to for that measure), and every row is
exercised by the differential tests of the kernels against the reference
(``test_measures_vs_reference``'s kinds; NDCG by ``test_vs_reference``). A row
added without its reference function or its test fails here."""

from __future__ import annotations

import test_measures_vs_reference as T
from fastndcg import reference
from fastndcg.measures import REGISTRY

EXERCISED = (set(T.CUT_KINDS) | set(T.WHOLE_KINDS) | set(T.PLAIN_NEW) | set(T.GRADED)
             | {kind for kind, _, _ in T.PARAM_KINDS} | {"judged", "unj"}  # qrels mode
             | {"ndcg"})                                                  # test_vs_reference


def test_every_row_has_its_reference_function():
    for name, kind in REGISTRY.items():
        assert kind.reference, f"{name}: no reference function named"
        function = getattr(reference, kind.reference, None)
        assert callable(function), f"{name}: reference.{kind.reference} does not exist"
        if name != "ndcg":  # the other measures are dispatched by name
            assert reference._MEASURE_QUERY[name] is function, name


def test_every_row_is_exercised_against_the_reference():
    missing = sorted(set(REGISTRY) - EXERCISED)
    assert not missing, f"registry rows no differential test exercises: {missing}"


def test_every_row_says_what_it_computes():
    for name, kind in REGISTRY.items():
        if name != "ndcg":
            assert kind.doc, f"{name}: no doc line"
