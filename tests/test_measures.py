"""Measures named in the tools' own language: trec_eval (``ndcg``, ``ndcg_cut.5,10``)
and ir_measures (``nDCG@10``, ``nDCG(dcg='exp-log2')@10``), in Python and on the
command line. Output columns keep fastndcg's names.

The expected values come from ``evaluate`` called with the equivalent ``k`` and
``gain`` (the names must mean exactly that), and from ir_measures itself where it
runs here (its default provider for nDCG is pytrec_eval).
"""

from __future__ import annotations

import re

import json

import numpy as np
import pyarrow as pa
import pytest

import fastndcg
from fastndcg import cli
from fastndcg.measures import TREC_CUTOFFS as TREC_NDCG_CUTOFFS, parse


@pytest.mark.parametrize("spec,cutoffs,gain", [
    ("ndcg", [None], "linear"),
    ("ndcg_cut.5,10", [5, 10], "linear"),
    ("ndcg_cut_10", [10], "linear"),
    ("ndcg_cut", list(TREC_NDCG_CUTOFFS), "linear"),
    ("ndcg ndcg_cut.1,3", [None, 1, 3], "linear"),
    (["ndcg_cut.5", "ndcg_cut.5,20"], [5, 20], "linear"),
    ("nDCG", [None], "linear"),
    ("nDCG@10", [10], "linear"),
    ("nDCG(dcg='log2')@3", [3], "linear"),
    ("nDCG(dcg='exp-log2')@3", [3], "exp2"),
    ('nDCG(dcg="exp-log2")', [None], "exp2"),
    ("nDCG(cutoff=7)", [7], "linear"),
    ("nDCG(gains={0: 0, 1: 1, 2: 5})@5", [5], [0.0, 1.0, 5.0]),
    (["nDCG@1", "nDCG@10"], [1, 10], "linear"),
])
def test_parse(spec, cutoffs, gain):
    parsed = parse(spec)
    assert (parsed.ndcg, parsed.gain, parsed.others) == (cutoffs, gain, [])


@pytest.mark.parametrize("spec,fragment", [
    ("mapp", "'mapp' is not a measure fastndcg knows"),
    ("NDCG@10", "'NDCG' is not a measure fastndcg knows"),
    ("ndcg_cut.", "no cutoff after ndcg_cut."),
    ("ndcg_cut.0", "must be >= 1"),
    ("nDCG@0", "must be >= 1"),
    ("nDCG(judged_only=True)@5", "'judged_only' is not supported"),
    ("nDCG(dcg='log2',dcg='exp-log2')@3", "parameter 'dcg' is given twice"),
    ("nDCG(cutoff=x)", "cutoff 'x' is not a whole number"),
    ("AP(rel=1.5)", "rel '1.5' is not a whole number"),
    ("Rprec@5", "Rprec takes no cutoff"),
    ("P@5(rel=2)", "parameters before the cutoff"),
    ("map.5", "map takes no parameters"),
    ("nDCG(gains={0: 1, 10**9: 2})", "expected ':' after label 10 in gains"),
    ("nDCG(gains={0: 1, 99999999: 2})", "labels up to 65535"),
    ("nDCG(dcg='exp')@5", "dcg='exp' is not one of"),
    ("nDCG(cutoff=3)@5", "cutoff is given twice"),
    ("nDCG(gains=[1, 2])@5", "gains must map labels"),
    ("nDCG(gains={0: x})@5", "the gain of label 0, 'x', is not a number"),
    ("nDCG(gains={0: 1)@5", "unbalanced brackets"),
    ("", "measure is empty"),
    ("nDCG@10 nDCG(dcg='exp-log2')@10", "use different gains"),
])
def test_parse_errors_say_what_and_how(spec, fragment):
    with pytest.raises(ValueError, match=fragment.replace("(", r"\(").replace(")", r"\)")
                       .replace("[", r"\[").replace("]", r"\]")):
        parse(spec)


@pytest.mark.parametrize("bad", [10, None, ["nDCG@10", 3], b"ndcg"])
def test_parse_type_errors(bad):
    with pytest.raises(TypeError, match="measure takes a measure name"):
        parse(bad)


@pytest.mark.parametrize("spec,columns", [
    ("map", ["ap"]),
    ("map_cut.5,100", ["ap@5", "ap@100"]),
    ("recip_rank", ["rr"]),
    ("P.5,10 recall_1000", ["p@5", "p@10", "r@1000"]),
    ("success", ["success@1", "success@5", "success@10"]),
    ("Rprec num_ret num_rel num_rel_ret", ["rprec", "num_ret", "num_rel", "num_rel_ret"]),
    (["AP", "AP@100", "RR@10", "P@5", "R@1000", "Success@10"],
     ["ap", "ap@100", "rr@10", "p@5", "r@1000", "success@10"]),
    (["AP(rel=2)", "RR(rel=2)@10", "R(rel=2)@1000", "NumRelRet(rel=2)", "Judged@10"],
     ["ap(rel=2)", "rr@10(rel=2)", "r@1000(rel=2)", "num_rel_ret(rel=2)", "judged@10"]),
    (["ap@100(rel=2)", "p@5", "ndcg@10", "NumRet", "NumRel"],
     ["ndcg@10", "ap@100(rel=2)", "p@5", "num_ret", "num_rel"]),
    ("AP AP(rel=1) map", ["ap"]),  # one measure named three ways is one column
])
def test_parse_every_measure(spec, columns):
    assert parse(spec).columns == columns


def test_default_threshold_names_the_columns():
    assert parse("map P.5 AP(rel=1) ndcg_cut.3", rel=2).columns == [
        "ndcg@3", "ap(rel=2)", "p@5(rel=2)", "ap"]
    for bad in (-1, 1.5, True, "2"):
        with pytest.raises(ValueError, match=r"rel must be an integer from 0 to \d+ .*got " + re.escape(repr(bad))):
            parse("map", rel=bad)


@pytest.fixture(scope="module")
def run_and_qrels():
    rng = np.random.default_rng(5)
    rows = []
    for q in range(12):
        for d in range(int(rng.integers(1, 25))):
            rows.append((f"q{q}", f"d{d:03d}", float(rng.choice([0.1, 0.5, 0.5, 1.0, 2.0]))))
    run = pa.table({"query_id": [r[0] for r in rows], "doc_id": [r[1] for r in rows],
                    "score": [r[2] for r in rows]})
    judged = [(q, d, int(rng.integers(0, 4))) for q, d, _ in rows if rng.random() < 0.6]
    judged += [("q3", "zz-unretrieved", 3), ("q99", "d000", 1)]
    qrels = pa.table({"query_id": [j[0] for j in judged], "doc_id": [j[1] for j in judged],
                      "label": [j[2] for j in judged]})
    return run, qrels


@pytest.mark.parametrize("measure,k,gain", [
    ("ndcg_cut.5,10", [5, 10], "linear"),
    (["ndcg", "ndcg_cut.3"], [None, 3], "linear"),
    ("nDCG(dcg='exp-log2')@5", [5], "exp2"),
    ("nDCG(gains={0: 0, 1: 2, 2: 4, 3: 9})@4", [4], [0, 2, 4, 9]),
])
def test_evaluate_measure_equals_k_and_gain(run_and_qrels, measure, k, gain):
    run, qrels = run_and_qrels
    got = fastndcg.evaluate(run, qrels=qrels, measure=measure, ties="trec")
    want = fastndcg.evaluate(run, qrels=qrels, k=k, gain=gain, ties="trec")
    assert got.per_query.equals(want.per_query)
    assert got.per_query.column_names[2:] == ["ndcg" if c is None else f"ndcg@{c}" for c in k]


def test_measure_and_k_or_gain_conflict(run_and_qrels):
    run, qrels = run_and_qrels
    with pytest.raises(ValueError, match="give the measures once"):
        fastndcg.evaluate(run, qrels=qrels, k=[5], measure="ndcg_cut.5")
    with pytest.raises(ValueError, match="means gain='linear', but gain='exp2'"):
        fastndcg.evaluate(run, qrels=qrels, measure="ndcg_cut.5", gain="exp2")
    # the same gain spelled out is no conflict
    fastndcg.evaluate(run, qrels=qrels, measure="ndcg_cut.5", gain="linear")


def test_against_ir_measures(run_and_qrels):
    """ir_measures' own numbers (its default nDCG provider, pytrec_eval) per query."""
    ir_measures = pytest.importorskip("ir_measures")
    run, qrels = run_and_qrels
    names = ["nDCG@5", "nDCG@10", "nDCG"]
    measures = [ir_measures.parse_measure(n) for n in names]
    ir_run = [ir_measures.ScoredDoc(*r) for r in zip(*run.to_pydict().values())]
    ir_qrels = [ir_measures.Qrel(*j) for j in zip(*qrels.to_pydict().values())]
    theirs = {(m.query_id, str(m.measure)): m.value
              for m in ir_measures.iter_calc(measures, ir_qrels, ir_run)}
    report = fastndcg.evaluate(run, qrels=qrels, measure=names, preset="pytrec_eval")
    per = report.per_query.to_pydict()
    checked = 0
    for i, q in enumerate(per["query_id"]):
        for name, col in zip(names, ["ndcg@5", "ndcg@10", "ndcg"]):
            assert per[col][i] == pytest.approx(theirs[(q, name)], rel=1e-12, abs=1e-15), (q, name)
            checked += 1
    assert checked == 3 * len(per["query_id"]) > 20


def test_command_line_measures(capsys, tmp_path, run_and_qrels):
    run, qrels = run_and_qrels
    run_path, qrels_path = tmp_path / "run.txt", tmp_path / "qrels.txt"
    r = run.to_pydict()
    run_path.write_text("".join(f"{q} Q0 {d} {i} {s} t\n" for i, (q, d, s) in
                                enumerate(zip(r["query_id"], r["doc_id"], r["score"]))))
    j = qrels.to_pydict()
    qrels_path.write_text("".join(f"{q} 0 {d} {lab}\n" for q, d, lab in
                                  zip(j["query_id"], j["doc_id"], j["label"])))
    code = cli.main(["evaluate", str(run_path), "--qrels", str(qrels_path), "--preset",
                     "trec_eval", "-m", "ndcg_cut.5,10", "-m", "ndcg", "--format", "json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    got = json.loads(out.out)
    want = fastndcg.evaluate(str(run_path), qrels=str(qrels_path), preset="trec_eval",
                             k=[5, 10, None])
    assert {k: got[k] for k in want.mean} == want.mean
    for args, fragment in [(["-m", "ndcg_cut.5", "-k", "5"], "-k (NDCG cutoffs) or -m"),
                           (["-m", "mapp"], "'mapp' is not a measure"),
                           (["-m", "Judged@5", "-l", "-1"], "must be an integer from 0 to"),
                           (["-m", "nDCG@5", "--gain", "exp2"], "means --gain 'linear'")]:
        code = cli.main(["evaluate", str(run_path), "--qrels", str(qrels_path), *args])
        err = capsys.readouterr().err
        assert code == 2 and fragment in err and err.count("\n") == 1, err
