"""Differential tests of every binary measure: the compiled accumulators (through
``fastndcg.measure`` in list mode and ``fastndcg.evaluate`` in qrels mode) against
the plain functions of ``fastndcg.reference``, over tie-heavy generated batches,
every tie rule, several thresholds and cutoffs, long lists (the selecting and
sorting paths) and the dtypes that reach the kernels."""

from __future__ import annotations

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
CUT_KINDS = ["ap", "rr", "p", "r", "success", "relative_p", "f1"]  # take a cutoff
WHOLE_KINDS = ["num_q", "rprec", "num_ret", "num_rel", "num_rel_ret", "bpref", "set_p",
               "set_recall", "set_relative_p", "set_map", "num_nonrel_judged_ret",
               "bpref_ranx", "f1"]


# measures with number parameters: (kind, params as named, the reference's keywords)
PARAM_KINDS = [
    ("rprec_mult", "mult=0.2", {"mult": 0.2}), ("rprec_mult", "mult=1.4", {"mult": 1.4}),
    ("rprec_mult", "mult=2.0", {"mult": 2.0}),
    ("set_f", "beta=1.0", {"beta": 1.0}), ("set_f", "beta=0.25", {"beta": 0.25}),
    ("utility", "a=2,b=-1,c=-0.5,d=0.25,n=50", {"a": 2.0, "b": -1.0, "c": -0.5, "d": 0.25,
                                                "n_docs": 50}),
    ("iprec", "recall=0.0", {"recall": 0.0}), ("iprec", "recall=0.3", {"recall": 0.3}),
    ("iprec", "recall=0.5", {"recall": 0.5}), ("iprec", "recall=1.0", {"recall": 1.0}),
    ("rbp_resid", "p=0.9", {"p": 0.9}), ("rbp_resid", "p=0.5", {"p": 0.5}),
    ("rbp", "p=0.9", {"p": 0.9}), ("rbp", "p=0.5", {"p": 0.5}),
    ("rbp_bin", "p=0.8", {"p": 0.8}), ("rbp_bin", "p=0.5", {"p": 0.5}),
    ("rbp_residual", "p=0.8", {"p": 0.8}), ("rbp_residual", "p=0.5", {"p": 0.5}),
]
PLAIN_NEW = ["gm_map", "gm_bpref", "11pt_avg", "bing", "infap", "g", "ndcg_rel", "rndcg"]
GRADED = ("rbp", "g", "ndcg_rel", "rndcg", "err")  # read gains: the labels (gain="linear")


def _cut_kinds(ties):
    return CUT_KINDS + (["err"] if _offered("err", ties) else [])


def _offered(kind, ties, keep=False):
    """``keep``: negative labels kept as negative gains (list mode's test)."""
    return not ((ties == "average" and kind in reference.NO_AVERAGE)
                or (ties == "average" and keep and kind in reference.NO_AVERAGE_NEGATIVE)
                or (ties in ("optimistic", "pessimistic") and kind in reference.NO_BOUNDS))


def _param_measures(ties):
    return [(k, p, kw) for k, p, kw in PARAM_KINDS if _offered(k, ties)]


def _plain_new(ties, keep=False):
    return [k for k in PLAIN_NEW if _offered(k, ties, keep)]


def _names(cutoffs, rel, ties="average", keep=False):
    """ir_measures-style names of every binary measure at these cutoffs (and
    fastndcg's names of those ir_measures lacks)."""
    names = [f"AP(rel={rel})", f"RR(rel={rel})", f"Rprec(rel={rel})", "NumRet", "NumQ",
             f"NumRel(rel={rel})", f"NumRelRet(rel={rel})", f"Bpref(rel={rel})",
             f"SetP(rel={rel})", f"SetR(rel={rel})", f"SetRelP(rel={rel})", f"SetAP(rel={rel})",
             f"num_nonrel_judged_ret(rel={rel})", f"bpref_ranx(rel={rel})", f"f1(rel={rel})"]
    names += [f"{k}(rel={rel})" if REGISTRY[k].binary else k for k in _plain_new(ties, keep)]
    names += [f"{k}({p},rel={rel})" if REGISTRY[k].binary else f"{k}({p})"
              for k, p, _ in _param_measures(ties)]
    for c in cutoffs:
        names += [f"AP(rel={rel})@{c}", f"RR(rel={rel})@{c}", f"P(rel={rel})@{c}",
                  f"R(rel={rel})@{c}", f"Success(rel={rel})@{c}", f"relative_p@{c}(rel={rel})",
                  f"f1@{c}(rel={rel})"]
        names += [f"ERR@{c}"] if _offered("err", ties) else []
    return names


def _param_column(kind, params, rel):
    from fastndcg.measures import parse
    return parse(f"{kind}({params})", rel).columns[0]


def _expected(kind, cutoff, scores, labels, offsets, rel, ties, **extra):
    out = []
    for q in range(len(offsets) - 1):
        s = scores[offsets[q]:offsets[q + 1]]
        r = labels[offsets[q]:offsets[q + 1]]
        out.append(reference.measure_query(kind, s, r, cutoff, rel=rel, ties=ties,
                                           nan_scores="error", **extra))
    return np.array(out, float)


def _check(out, scores, labels, offsets, cutoffs, rel, ties, keep=False):
    from fastndcg.measures import column_name
    kinds = [(k, None, None, {}) for k in ("ap", "rr", *WHOLE_KINDS, *_plain_new(ties, keep))]
    kinds += [(k, c, None, {}) for c in cutoffs for k in _cut_kinds(ties)]
    kinds += [(k, None, p, kw) for k, p, kw in _param_measures(ties)]
    for kind, c, params, kw in kinds:
        col = column_name(kind, c, rel) if params is None else _param_column(kind, params, rel)
        np.testing.assert_allclose(out[col], _expected(kind, c, scores, labels, offsets, rel,
                                                       ties, **kw),
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
    out = fastndcg.measure(s, r, o, measure=_names(cutoffs, rel, ties, keep=True), ties=ties,
                           negative_labels="keep", gain="linear")
    _check(out, s.tolist(), r.tolist(), o.tolist(), cutoffs, rel, ties, keep=True)


@SETTINGS
@given(batch=batches(max_queries=3, max_rows=6, long_rows=400), ties=st.sampled_from(TIES),
       cutoffs=st.lists(st.integers(1, 300), min_size=1, max_size=3, unique=True),
       rel=st.sampled_from([1, 2]))
def test_long_lists_match_reference(batch, ties, cutoffs, rel):
    """Lists longer than the counting path (selection, packed keys, introsort)."""
    s, r, o = as_arrays(batch, np.float32, np.int8)
    out = fastndcg.measure(s, r, o, measure=_names(cutoffs, rel, ties), ties=ties,
                           gain="linear")
    _check(out, s.tolist(), r.tolist(), o.tolist(), cutoffs, rel, ties)


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
    names = _names([1, 3, 7], rel, ties) + ["Judged@3", "Judged@20", "unj.3,20"]
    report = fastndcg.evaluate(run_t, qrels=qrels_t, measure=names, ties=ties,
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
        checks = [(k, None, None, {}) for k in ("ap", "rr", *WHOLE_KINDS, *_plain_new(ties))]
        checks += [(k, c, None, {}) for c in (1, 3, 7) for k in _cut_kinds(ties)]
        checks += [(k, None, p, kw) for k, p, kw in _param_measures(ties)]
        # bpref's N: the query's judged non-relevant documents (labels 0..rel-1)
        n_nonrel = sum(0 <= g < rel for g in grades.values())
        for kind, c, params, kw in checks:
            extra = {"n_nonrel": n_nonrel} if kind in ("bpref", "gm_bpref") else {}
            if kind == "bpref_ranx":  # ranx's N: every judged document not relevant
                extra = {"n_judged": len(grades)}
            if kind in GRADED:  # gains: the labels, negative ones zeroed; the ideal: every
                extra = {"ideal_labels": list(grades.values()),  # judgment of the query
                         "negative_labels": "zero"}
            want = reference.measure_query(kind, scores, labels, c, **opts, **extra, **kw)
            col = column_name(kind, c, rel) if params is None else _param_column(kind, params,
                                                                                 rel)
            got = row[col]
            assert got == pytest.approx(want, abs=1e-12, nan_ok=True), (col, row["query_id"])
        for c in (3, 20):
            want = reference.measure_query("judged", scores, labels, c, **opts)
            assert row[f"judged@{c}"] == pytest.approx(want, abs=1e-12)
            want = reference.measure_query("unj", scores, labels, c, **opts)
            assert row[f"unj@{c}"] == pytest.approx(want, abs=1e-12), ("unj", c)


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
            col = (_param_column("iprec", f"recall={x}", rel) if x is not None
                   else column_name("11pt_avg", None, rel))
            np.testing.assert_allclose(out[col], want, rtol=1e-12, atol=1e-12,
                                       err_msg=f"{col} preset={preset} ties={ties}")
