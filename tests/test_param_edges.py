"""Measure parameters checked where they are read, the same way on every surface
(:func:`fastndcg.measures.check_param`: the API's ``measure=``, ``fastndcg
trec_eval``'s ``-m``), RBP's names read as their tools read them, and ERR computed
without overflow at any grade."""

from __future__ import annotations

import contextlib
import io
import re

import numpy as np
import pyarrow as pa
import pytest

import fastndcg
from fastndcg import cli, reference
from fastndcg.measures import parse


def _trec_eval(args):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = cli.main(["trec_eval", *args])
    return status, out.getvalue(), err.getvalue()


@pytest.fixture
def files(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 2\nq1 0 d2 0\nq1 0 d3 1\n")
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 d1 1 0.9 r\nq1 Q0 d2 2 0.8 r\nq1 Q0 d3 3 0.7 r\n")
    return str(qrels), str(run)


OUT_OF_RANGE = [
    ("RBP(rel=1,p=1.5)", "p 1.5 is out of range"), ("RBP(rel=1,p=0)", "p 0.0 is out of range"),
    ("RBP(rel=1,p=1)", "p 1.0 is out of range"), ("RBP(rel=1,p=-0.2)", "p -0.2 is out of range"),
    ("rbp.p=1.5", "p 1.5 is out of range"), ("rbp_resid.p=0", "p 0.0 is out of range"),
    ("rbp_residual(p=2)", "p 2.0 is out of range"),
    ("IPrec@-0.5", "recall -0.5 is out of range"), ("IPrec@1.5", "recall 1.5 is out of range"),
    ("iprec_at_recall.0.5,1.2", "recall 1.2 is out of range"),
    ("set_F.-1", "beta -1.0 is out of range"), ("Rprec_mult.-0.5", "mult -0.5 is out of range"),
]


@pytest.mark.parametrize("name,words", OUT_OF_RANGE, ids=[n for n, _ in OUT_OF_RANGE])
def test_parameters_out_of_range_are_refused(name, words, files):
    with pytest.raises(ValueError) as err:
        parse(name)
    assert words in str(err.value) and "e.g." in str(err.value)
    with pytest.raises(ValueError) as api:
        fastndcg.evaluate(files[1], qrels=files[0], measure=name)
    assert str(api.value) == str(err.value)
    if "(" not in name and "@" not in name:  # trec_eval's names: its command line too
        status, out, stderr = _trec_eval(["-m", name, *files])
        assert status == 2 and out == "" and words in stderr
        assert stderr.count("\n") == 1


def test_iprec_at_the_ends_is_read(files):
    assert parse("IPrec@0 IPrec@1").columns == ["iprec(recall=0.0)", "iprec(recall=1.0)"]


def test_rbp_without_rel_is_refused_as_ir_measures_pipeline_refuses_it():
    """ir_measures reads RBP without rel as graded RBP, and its own pipeline refuses
    it (the cwl provider needs rel); fastndcg says so and gives both forms."""
    ir_measures = pytest.importorskip("ir_measures")
    qrels = {"q1": {"d1": 2, "d2": 0}}
    run = {"q1": {"d1": 0.5, "d2": 0.9}}
    import fastndcg.ir_measures as fim
    fim.use(False)  # ir_measures' own pipeline
    with pytest.raises(ValueError, match="Unsupported measures"):
        ir_measures.calc_aggregate([ir_measures.RBP(p=0.8)], qrels, run)
    for name in ("RBP", "RBP(p=0.8)", "RBP(p=0.5)"):
        with pytest.raises(ValueError, match=r"graded RBP.*RBP\(rel=1,p=0\.\d\) for binary RBP, "
                                             r"or trec_eval's rbp\.p=0\.\d for graded"):
            parse(name)
    with pytest.raises(ValueError, match="graded RBP"):
        fastndcg.evaluate(run, qrels=qrels, measure="RBP(p=0.8)")
    # with rel=, ir_measures' value (cwl_eval's binary RBP)
    want = ir_measures.calc_aggregate([ir_measures.RBP(rel=1, p=0.8)], qrels, run)
    got = fastndcg.evaluate(run, qrels=qrels, measure="RBP(rel=1,p=0.8)").mean
    assert got["rbp_bin"] == pytest.approx(list(want.values())[0], abs=1e-12)


def test_a_refusal_example_is_itself_accepted():
    """Each fix a parameter refusal gives reads: ERR takes no rel, and its example
    must not name one."""
    for name in ("ERR(rel=2)@10", "ERR(p=1)@10", "NumRet(rel=2)", "RBP(rel=1,p=0.8)@10"):
        with pytest.raises(ValueError) as err:
            parse(name)
        example = re.split(r"e\.g\. |; write ", str(err.value))[-1]
        parse(example)


@pytest.mark.parametrize("grade", [1100, 2 ** 40, 1e300])
def test_err_of_a_huge_grade_is_a_number(grade):
    """ERR's stop probability (2^g - 1) / 2^top is computed as 2^(g - top) - 2^-top:
    a grade of 1100 or 2**40 (linear gain) gives a number, as the reference does,
    never NaN left out of the mean."""
    s = np.array([0.9, 0.5, 0.1])
    r = np.array([grade, 1.0, 0.0])
    out = fastndcg.measure(s, r, [0, 3], measure="ERR@10", ties="stable", gain="linear")
    want = reference.err_query(s.tolist(), r.tolist(), 10, ties="stable")
    assert np.isfinite(out["err@10"][0]) and out["err@10"][0] == pytest.approx(want, abs=1e-12)
    assert want == pytest.approx(1.0)  # the top grade stops the user at rank 1
    log = pa.table({"query_id": [1, 1, 1, 2, 2], "score": [0.9, 0.5, 0.1, 0.3, 0.2],
                    "label": [grade, 1.0, 0.0, 2.0, 0.0]})
    report = fastndcg.evaluate(log, measure="ERR@10", ties="stable", gain="linear")
    assert report.n_queries == 2 and np.isfinite(report.mean["err@10"])


@pytest.mark.parametrize("name,fix", [("G(x=1)", "G.1=0,2=3"), ("ndcg_cut@10", "ndcg_cut.10"),
                                      ("map(rel=2)", "AP(rel=2)@10"),
                                      ("Rprec_mult(mult=0.2)", "Rprec_mult.0.2")])
def test_trec_eval_names_written_as_ir_measures_names_get_a_fix_that_reads(name, fix):
    with pytest.raises(ValueError, match="is trec_eval's name") as err:
        parse(name)
    assert fix in str(err.value) and "did you mean" not in str(err.value)
    parse(fix)


def test_a_negative_threshold_is_said_to_be_below_0():
    with pytest.raises(ValueError, match="rel -1 must be >= 0"):
        parse("RBP(rel=-1,p=0.5)")
