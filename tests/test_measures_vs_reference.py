"""Differential tests of every binary measure: the compiled accumulators (through
``fastndcg.measure`` in list mode and ``fastndcg.evaluate`` in qrels mode) against
the plain functions of ``fastndcg.reference``, over tie-heavy generated batches,
every tie rule, several thresholds and cutoffs, long lists (the selecting and
sorting paths) and the dtypes that reach the kernels."""

from __future__ import annotations

import inspect

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fastndcg
from fastndcg import reference
from fastndcg.measures import REGISTRY

from strategies import (DTYPES, NEGATIVE_LABELS, as_arrays, batches, examples,
                        integral_scores)

SETTINGS = settings(max_examples=examples(1.2), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
TIES = ["average", "stable", "optimistic", "pessimistic"]
# the values each number parameter is checked at beside its default (a kind with one
# value per measure, Kind.each, at these only; several parameters: the first of each)
VALUES = {"mult": (0.2, 1.4, 2.0), "recall": (0.0, 0.3, 0.5, 1.0), "beta": (0.25,),
          "p": (0.5,), "a": (2.0,), "b": (-1.0,), "c": (-0.5,), "d": (0.25,), "n": (50.0,)}


def _points(kind):
    """The parameter values a kind is checked at: None (its defaults) and others."""
    if not kind.params:
        return [None]
    if kind.each:
        return [(v,) for v in VALUES[kind.params[0].name]]
    if len(kind.params) == 1:
        return [None] + [(v,) for v in VALUES[kind.params[0].name]]
    return [None, tuple(VALUES[p.name][0] for p in kind.params)]


def _offered(kind, ties, keep=False):
    """``keep``: negative labels kept as negative gains (list mode's test)."""
    k = REGISTRY[kind]
    return not ((ties == "average" and not k.average)
                or (ties == "average" and keep and not k.average_negative)
                or (ties in ("optimistic", "pessimistic") and not k.bounds))


def measures(cutoffs, ties, qrels=False, keep=False):
    """(kind, cutoff, params) of every registry row the kernels compute (NDCG is
    test_vs_reference's) under ``ties``, at these cutoffs and at its parameter
    points; the rows that need qrels in qrels mode only."""
    out = []
    for kind in REGISTRY.values():
        if kind.family == "ndcg" or (kind.judgments and not qrels) \
                or not _offered(kind.name, ties, keep):
            continue
        cuts = {"none": [None], "optional": [None, *cutoffs], "required": list(cutoffs)}
        out += [(kind.name, c, params) for c in cuts[kind.cutoff] for params in _points(kind)]
    return out


def _names(checked, rel):
    """fastndcg's column names of ``checked``, read back as measure names."""
    from fastndcg.measures import column_name
    return [column_name(kind, c, rel, params) for kind, c, params in checked]


def _keywords(kind, params):
    """The reference function's keywords for a kind's parameter values."""
    k = REGISTRY[kind]
    return {} if params is None else {p.reference_keyword: v for p, v in zip(k.params, params)}


def _reference(kind, scores, labels, cutoff, **options):
    """The measure of one query by its row's function in ``fastndcg.reference``."""
    row = REGISTRY[kind]
    function = getattr(reference, row.reference)
    if row.cutoff == "none":
        return function(scores, labels, **options)
    return function(scores, labels, cutoff, **options)


def _expected(kind, cutoff, scores, labels, offsets, rel, ties, **extra):
    out = []
    for q in range(len(offsets) - 1):
        s = scores[offsets[q]:offsets[q + 1]]
        r = labels[offsets[q]:offsets[q + 1]]
        out.append(_reference(kind, s, r, cutoff, rel=rel, ties=ties, nan_scores="error",
                              **extra))
    return np.array(out, float)


def _check(out, checked, scores, labels, offsets, rel, ties):
    from fastndcg.measures import column_name
    for kind, c, params in checked:
        col = column_name(kind, c, rel, params)
        np.testing.assert_allclose(out[col], _expected(kind, c, scores, labels, offsets, rel,
                                                       ties, **_keywords(kind, params)),
                                   rtol=1e-12, atol=1e-12, err_msg=f"{col} ties={ties}")


@pytest.mark.parametrize("score_dtype,label_dtype", DTYPES)
@SETTINGS
@given(batch=batches(labels=NEGATIVE_LABELS), ties=st.sampled_from(TIES),
       cutoffs=st.lists(st.integers(1, 14), min_size=1, max_size=3, unique=True),
       rel=st.sampled_from([0, 1, 2]))
def test_list_mode_matches_reference(score_dtype, label_dtype, batch, ties, cutoffs, rel):
    if np.dtype(score_dtype).kind in "iu":
        batch = integral_scores(batch)
    if np.dtype(label_dtype).kind == "u":
        batch = (batch[0], [max(0, v) for v in batch[1]], batch[2])
    s, r, o = as_arrays(batch, score_dtype, label_dtype)
    checked = measures(cutoffs, ties, keep=True)
    out = fastndcg.measure(s, r, o, measure=_names(checked, rel), ties=ties,
                           negative_labels="keep", gain="linear")
    _check(out, checked, s.tolist(), r.tolist(), o.tolist(), rel, ties)


@SETTINGS
@given(batch=batches(max_queries=3, max_rows=6, long_rows=400), ties=st.sampled_from(TIES),
       cutoffs=st.lists(st.integers(1, 300), min_size=1, max_size=3, unique=True),
       rel=st.sampled_from([1, 2]))
def test_long_lists_match_reference(batch, ties, cutoffs, rel):
    """Lists longer than the counting path (selection, packed keys, introsort)."""
    s, r, o = as_arrays(batch, np.float32, np.int8)
    checked = measures(cutoffs, ties)
    out = fastndcg.measure(s, r, o, measure=_names(checked, rel), ties=ties, gain="linear")
    _check(out, checked, s.tolist(), r.tolist(), o.tolist(), rel, ties)


@pytest.mark.parametrize("ties", TIES)
@pytest.mark.parametrize("spread", [12, 60, 150, 400, 2000])
def test_many_flagged_groups_match_reference(spread, ties):
    """Queries whose flagged items fall in many tie groups: a row's group is then
    counted across up to 128 groups and searched for beyond, and the flagged scores
    are sorted by insertion up to 64 values and by a heap beyond. Scores are drawn
    from ``spread`` values (from a few groups to hundreds, ties still common),
    queries of 1 to 700 rows, half of them relevant."""
    rng = np.random.default_rng(spread)
    sizes = [1, 9, 70, 130, 300, 700]
    o = np.concatenate([[0], np.cumsum(sizes)])
    s = rng.integers(0, spread, o[-1]).astype(np.float64)
    r = rng.choice([0, 0, 1, 2, 3], o[-1]).astype(np.int64)
    checked = measures([5, 100], ties)
    for rel in (1, 2):
        out = fastndcg.measure(s, r, o, measure=_names(checked, rel), ties=ties, gain="linear")
        _check(out, checked, s.tolist(), r.tolist(), o.tolist(), rel, ties)


@SETTINGS
@given(batch=batches(max_queries=5, max_rows=10), ties=st.sampled_from(TIES + ["trec"]),
       rel=st.sampled_from([0, 1, 2]), data=st.data())
def test_qrels_mode_matches_reference(batch, ties, rel, data):
    """Qrels mode: unjudged documents, judged documents not retrieved (R from the
    qrels), negative grades (not relevant, whatever negative_labels does to gains)."""
    s, _, o = batch
    run, qrels = [], []
    expected_rows = {}
    for q in range(len(o) - 1):
        docs = [f"d{i:02d}" for i in range(o[q + 1] - o[q])]
        if not docs:
            continue
        grades = {}
        for d in docs:
            if data.draw(st.booleans()):
                grades[d] = data.draw(st.integers(-2, 3))
        for extra in range(data.draw(st.integers(0, 2))):
            grades[f"x{extra}"] = data.draw(st.integers(0, 3))
        if not grades:
            continue
        run += [(f"q{q}", d, float(s[o[q] + i])) for i, d in enumerate(docs)]
        qrels += [(f"q{q}", d, g) for d, g in grades.items()]
        expected_rows[f"q{q}"] = (docs, [float(v) for v in s[o[q]:o[q + 1]]], grades)
    if not run:
        return
    run_t = pa.table({"query_id": [x[0] for x in run], "doc_id": [x[1] for x in run],
                      "score": [x[2] for x in run]})
    qrels_t = pa.table({"query_id": [x[0] for x in qrels], "doc_id": [x[1] for x in qrels],
                        "label": [x[2] for x in qrels]})
    checked = measures(QRELS_CUTOFFS, ties, qrels=True)
    report = fastndcg.evaluate(run_t, qrels=qrels_t, measure=_names(checked, rel), ties=ties,
                               negative_labels="zero", gain="linear")
    table = report.per_query.to_pylist()
    assert [row["query_id"] for row in table] == list(expected_rows)
    from fastndcg.measures import column_name
    for row in table:
        docs, scores, grades = expected_rows[row["query_id"]]
        labels = [grades.get(d, 0) for d in docs]
        judged = [d in grades for d in docs]
        n_rel = sum(g >= rel for g in grades.values())
        opts = dict(rel=rel, ties=ties, n_rel=n_rel, judged=judged, doc_ids=docs)
        for kind, c, params in checked:
            want = _reference(kind, scores, labels, c, **opts, **_judgments(kind, grades, rel),
                              **_keywords(kind, params))
            col = column_name(kind, c, rel, params)
            assert row[col] == pytest.approx(want, abs=1e-12, nan_ok=True), (col, row["query_id"])


QRELS_CUTOFFS = (1, 3, 7, 20)


def _judgments(kind, grades, rel):
    """What a reference function reads of the query's judgments beyond the list, by
    the keywords it takes: bpref's N (the judged non-relevant documents, labels
    0..rel-1), ranx's bpref's (every judged document not relevant: the judged ones,
    n_judged), and for the measures that read gains the ideal (every judgment of the
    query, negative ones zeroed)."""
    takes = inspect.signature(getattr(reference, REGISTRY[kind].reference)).parameters
    extra = {}
    if "n_nonrel" in takes:
        extra["n_nonrel"] = sum(0 <= g < rel for g in grades.values())
    if "n_judged" in takes:
        extra["n_judged"] = len(grades)
    if "ideal_labels" in takes:
        extra.update(ideal_labels=list(grades.values()), negative_labels="zero")
    return extra


@SETTINGS
@given(batch=batches(max_queries=6, max_rows=12, long_rows=200), ties=st.sampled_from(TIES),
       cutoffs=st.lists(st.integers(1, 150), min_size=1, max_size=3, unique=True))
def test_dcg_beside_gain_measures_is_bit_identical(batch, ties, cutoffs):
    """With a gain measure asked for, DCG is read off the whole ranking the gain
    step makes: every NDCG value has the bits it has alone (float64 scores, the
    general ranking path; whole-list and deep cutoffs)."""
    s, r, o = as_arrays(batch, np.float64, np.int8)
    ndcg = ["nDCG"] + [f"nDCG@{c}" for c in cutoffs]
    alone = fastndcg.measure(s, r, o, measure=ndcg, ties=ties, gain="linear")
    gain = "g" if _offered("g", ties) else "rbp"
    both = fastndcg.measure(s, r, o, measure=ndcg + [gain], ties=ties, gain="linear")
    for col in alone:
        a = np.asarray(alone[col], np.float64)
        b = np.asarray(both[col], np.float64)
        assert a.tobytes() == b.tobytes(), (col, ties)


def test_one_ranking_any_measure_set_compiles_nothing_new():
    """A second measure set runs on the kernels the first compiled (measures are
    dispatched at run time)."""
    from fastndcg import _kernels as K
    s, r, o = as_arrays(([0.5, 0.1, 0.5], [1, 0, 2], [0, 3]), np.float64, np.int64)
    fastndcg.measure(s, r, o, measure="nDCG@3 AP")
    before = len(K.measures_chunk.signatures)
    fastndcg.measure(s, r, o, measure="P@1 RR(rel=2) Rprec NumRelRet R@2 Success@1")
    assert len(K.measures_chunk.signatures) == before


@pytest.mark.parametrize("name", ["iprec_at_recall", "IPrec@0.5", "11pt_avg", "infAP", "ERR@10"])
def test_average_is_refused_where_no_exact_expectation(name):
    s, r, o = as_arrays(([0.5, 0.1, 0.5], [1, 0, 2], [0, 3]), np.float64, np.int64)
    works = "'stable'" if name == "infAP" else "'pessimistic'"
    with pytest.raises(ValueError, match=f"not offered with ties='average'.*{works}"):
        fastndcg.measure(s, r, o, measure=name)
    with pytest.raises(ValueError, match="not offered with ties='average'"):
        fastndcg.evaluate(pa.table({"query_id": [1, 1], "score": [0.5, 0.5], "label": [1, 0]}),
                          measure=name, ties="average")
    out = fastndcg.measure(s, r, o, measure=name, ties="stable")
    assert all(np.isfinite(v[0]) for v in out.values())


@pytest.mark.parametrize("ties", ["optimistic", "pessimistic"])
def test_bounds_are_refused_where_no_order_gives_them(ties):
    s, r, o = as_arrays(([0.5, 0.1, 0.5], [1, 0, 2], [0, 3]), np.float64, np.int64)
    with pytest.raises(ValueError, match=f"infap' is not offered with ties='{ties}'.*'stable'"):
        fastndcg.measure(s, r, o, measure="infAP", ties=ties)


@SETTINGS
@given(batch=batches(labels=NEGATIVE_LABELS, long_rows=120),
       ties=st.sampled_from(["stable", "optimistic", "pessimistic"]),
       levels=st.lists(st.sampled_from([0.0, 0.1, 0.2, 0.3, 0.33, 0.5, 0.7, 0.9, 1.0]),
                       min_size=1, max_size=3, unique=True),
       rel=st.sampled_from([1, 2]))
def test_trec_eval_9_interpolated_precision_matches_reference(batch, ties, levels, rel):
    """preset="pytrec_eval": iprec and 11pt_avg read trec_eval 9's relevant item,
    int(level x R + 0.9), as the reference's trec9=True does (and trec_eval 10's
    otherwise)."""
    from fastndcg.measures import column_name
    s, r, o = as_arrays(batch, np.float64, np.int64)
    names = [f"iprec(recall={x},rel={rel})" for x in levels] + [f"11pt_avg(rel={rel})"]
    for preset, trec9 in ((None, False), ("pytrec_eval", True)):
        out = fastndcg.measure(s, r, o, measure=names, ties=ties, negative_labels="keep",
                               gain="linear", preset=preset, score_precision="float64")
        for name, x in zip(names, levels + [None]):
            want = [reference.iprec_query(s[a:b].tolist(), r[a:b].tolist(), recall=x, rel=rel,
                                          ties=ties, trec9=trec9) if x is not None else
                    reference.iprec_11pt_query(s[a:b].tolist(), r[a:b].tolist(), rel=rel,
                                               ties=ties, trec9=trec9)
                    for a, b in zip(o[:-1], o[1:])]
            col = (column_name("iprec", None, rel, (float(x),)) if x is not None
                   else column_name("11pt_avg", None, rel))
            np.testing.assert_allclose(out[col], want, rtol=1e-12, atol=1e-12,
                                       err_msg=f"{col} preset={preset} ties={ties}")
