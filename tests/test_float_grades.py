"""Grades that are not whole numbers (an LLM judge's 0.5, a mean of judges' 2.7).

fastndcg's own semantics use them as they are (gain "linear" is the grade, "exp2"
2**grade - 1), checked against :mod:`fastndcg.reference` in qrels mode on tie-heavy
data; each preset reads them as its tool does, checked against the tools themselves:
the real trec_eval 10 (its C ``atol``: the whole part, byte for byte), pytrec_eval
(refuses), ranx (casts to int), LightGBM and XGBoost (refuse). A truncated grade is
said in one warning naming the file and line (or the argument, query and document);
NaN and infinite grades are refused by name everywhere.
"""

from __future__ import annotations

import math
import subprocess
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fastndcg
from fastndcg import cli, reference
from fastndcg.presets import GradeWarning

from strategies import examples

RUN = "q1 Q0 d1 1 3 r\nq1 Q0 d2 2 2 r\nq1 Q0 d3 3 1 r\n"
QRELS = "q1 0 d1 0.5\nq1 0 d2 2.7\nq1 0 d3 1\n"  # trec_eval: ndcg_cut_3 0.6697
SETTINGS = settings(max_examples=examples(1), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow,
                                           HealthCheck.function_scoped_fixture])


def _write(tmp_path, qrels: str, run: str = RUN) -> tuple[str, str]:
    q, r = tmp_path / "qrels.txt", tmp_path / "run.txt"
    q.write_text(qrels)
    r.write_text(run)
    return str(q), str(r)


def _one_warning(record) -> str:
    grade = [w for w in record if issubclass(w.category, GradeWarning)]
    assert len(grade) == 1, [str(w.message) for w in record]
    return str(grade[0].message)


# ---------------------------------------------------------------- fastndcg's own semantics

def test_float_grades_are_used_as_they_are(tmp_path):
    """No preset: gain linear is the grade, exp2 is 2**grade - 1 of the float; the ideal
    list is every judged grade (0.5 and 2.7 included), and nothing is said."""
    q, r = _write(tmp_path, QRELS)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for gain in ("linear", "exp2"):
            got = fastndcg.evaluate(r, qrels=q, k=3, gain=gain, ties="trec",
                                    negative_labels="zero").per_query["ndcg@3"][0].as_py()
            want = reference.ndcg_query([3, 2, 1], [0.5, 2.7, 1.0], 3, gain=gain,
                                        ties="trec", doc_ids=["d1", "d2", "d3"])
            assert got == pytest.approx(want, rel=1e-12)
    d = (0.5 + 2.7 / math.log2(3) + 1 / 2) / (2.7 + 1 / math.log2(3) + 0.5 / 2)
    assert fastndcg.evaluate(r, qrels=q, k=3, gain="linear").per_query["ndcg@3"][0].as_py() \
        == pytest.approx(d, rel=1e-12)


def test_a_gain_table_maps_exact_grades_only():
    """A gain table has a gain for each whole grade; a grade between two is an error."""
    with pytest.raises(ValueError, match=r"labels must be integers 0\.\.3.*2\.5"):
        fastndcg.ndcg([2.0, 1.0], [1, 2.5], gain=[0, 1, 3, 7])


GRADES = st.sampled_from([0.0, 0.25, 0.5, 1.0, 1.5, 2.0, 2.7, 3.0])


@st.composite
def judged_runs(draw):
    """(run rows, qrels rows): a few queries, tied scores, float grades, documents
    retrieved but unjudged and judged but not retrieved."""
    run, qrels = [], []
    for q in range(draw(st.integers(1, 4))):
        docs = [f"d{i}" for i in range(draw(st.integers(1, 8)))]
        for d in docs:
            if draw(st.booleans()):
                run.append((f"q{q}", d, draw(st.sampled_from([0.0, 0.5, 1.0, 2.0]))))
            if draw(st.integers(0, 3)):
                qrels.append((f"q{q}", d, draw(GRADES)))
        if not any(row[0] == f"q{q}" for row in run):
            run.append((f"q{q}", docs[0], 1.0))
    return run, qrels


def _reference(run, qrels, k, **options) -> dict:
    """{query: NDCG@k} by the reference, IDCG from all judged grades (qrels mode)."""
    judged = {}
    for q, d, g in qrels:
        judged.setdefault(q, {})[d] = g
    out = {}
    for q in dict.fromkeys(row[0] for row in run):
        if q not in judged:
            continue
        rows = [row for row in run if row[0] == q]
        out[q] = reference.ndcg_query([s for _, _, s in rows],
                                      [judged[q].get(d, 0.0) for _, d, _ in rows], k,
                                      doc_ids=[d for _, d, _ in rows],
                                      ideal_labels=list(judged[q].values()), **options)
    return out


def _tables(run, qrels):
    return (pd.DataFrame(run, columns=["query_id", "doc_id", "score"]),
            pd.DataFrame(qrels, columns=["query_id", "doc_id", "label"]))


@SETTINGS
@given(case=judged_runs(), k=st.sampled_from([1, 3, 5, None]),
       ties=st.sampled_from(["average", "stable", "trec"]),
       gain=st.sampled_from(["linear", "exp2"]))
def test_qrels_mode_float_grades_match_reference(case, k, ties, gain):
    run, qrels = case
    if not qrels:
        return
    run_t, qrels_t = _tables(run, qrels)
    got = fastndcg.evaluate(run_t, qrels=qrels_t, k=[k], gain=gain, ties=ties)
    name = got.per_query.column_names[2]
    values = dict(zip(got.per_query["query_id"].to_pylist(), got.per_query[name].to_pylist()))
    want = _reference(run, qrels, k, gain=gain, ties=ties)
    assert values.keys() == want.keys()
    for q in want:
        assert values[q] == pytest.approx(want[q], rel=1e-12, abs=1e-15), q


@SETTINGS
@given(case=judged_runs(), k=st.sampled_from([1, 3, 5, None]))
def test_trec_eval_preset_is_the_reference_on_whole_parts(case, k):
    """preset="trec_eval" scores the whole part of each grade (the reference on
    math.trunc of the grades), and says so once when any grade had a fraction."""
    run, qrels = case
    if not qrels:
        return
    run_t, qrels_t = _tables(run, qrels)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        got = fastndcg.evaluate(run_t, qrels=qrels_t, k=[k], preset="trec_eval")
    fractions = [g for _, _, g in qrels if g != int(g)]
    if fractions:
        text = _one_warning(record)
        first = next(row for row in qrels_t.itertuples() if row.label != int(row.label))
        assert f"query {first.query_id!r}" in text and f"document {first.doc_id!r}" in text
        assert f"{len(fractions):,} grades" in text or len(fractions) == 1
    else:
        assert not [w for w in record if issubclass(w.category, GradeWarning)]
    name = got.per_query.column_names[2]
    values = dict(zip(got.per_query["query_id"].to_pylist(), got.per_query[name].to_pylist()))
    whole = [(q, d, float(math.trunc(g))) for q, d, g in qrels]
    want = _reference(run, whole, k, gain="linear", ties="trec")
    for q in want:
        assert values[q] == pytest.approx(want[q], rel=1e-12, abs=1e-15), q


# ---------------------------------------------------------------- trec_eval, for real

def _run_binary(binary, args) -> subprocess.CompletedProcess:
    return subprocess.run([str(binary), *args], capture_output=True, text=True, timeout=120)


def _binary(binary, args) -> str:
    out = _run_binary(binary, args)
    assert out.returncode == 0, out.stderr
    return out.stdout


def _command(args) -> tuple[int, str, str]:
    import contextlib
    import io
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = cli.main(args)
    return status, out.getvalue(), err.getvalue()


def test_grades_half_and_2_7_against_trec_eval(trec_eval_bin, tmp_path):
    """Grades 0.5 and 2.7: trec_eval reads 0 and 2 and prints ndcg_cut_3 0.6697; the
    command prints the same bytes, with one line on stderr naming the file and line 1;
    preset="trec_eval" gives the numbers of the whole grades, bit for bit."""
    q, r = _write(tmp_path, QRELS)
    want = _binary(trec_eval_bin, ["-m", "ndcg_cut.3", q, r])
    assert want == "ndcg_cut_3            \tall\t0.6697\n"
    status, out, err = _command(["trec_eval", "-m", "ndcg_cut.3", q, r])
    assert (status, out) == (0, want)
    assert err.count("\n") == 1 and f"{q}:1:" in err and "'0.5' read as 0" in err
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        got = fastndcg.evaluate(r, qrels=q, measure="ndcg_cut_3", preset="trec_eval")
    text = _one_warning(record)
    assert text.startswith(f"{q}:1: grade '0.5' read as 0, as trec_eval reads it")
    assert "2 grades are not whole numbers" in text
    whole = tmp_path / "whole"
    whole.mkdir()
    wq, wr = _write(whole, QRELS.replace("0.5", "0").replace("2.7", "2"))
    plain = fastndcg.evaluate(wr, qrels=wq, measure="ndcg_cut_3", preset="trec_eval")
    assert got.per_query["ndcg@3"].to_pylist() == plain.per_query["ndcg@3"].to_pylist()
    assert f"{got.per_query['ndcg@3'][0].as_py():.4f}" == "0.6697"


@st.composite
def grade_texts(draw):
    """A grade field as written: whole, decimal, negative, exponent forms."""
    return draw(st.sampled_from(["0", "1", "2", "3", "0.5", "2.7", "1.0", "-0.5", "-1.7",
                                 "+2", "1e1", "27e-1", ".9", "3.", "-0"]))


@pytest.mark.parametrize("measures", [["ndcg_cut.1,3,5,10", "ndcg"], ["all_trec"]])
@SETTINGS
@given(data=st.data())
def test_float_qrels_are_byte_identical_to_trec_eval(trec_eval_bin, tmp_path_factory,
                                                     measures, data):
    """Random qrels with grades written every way, against the real binary: the
    command's stdout is trec_eval's byte for byte, and evaluate(preset="trec_eval")
    gives exactly the numbers of the grades trec_eval reads (C's atol)."""
    from fastndcg.io import c_atol

    run, qrels = data.draw(judged_runs())
    if not qrels:
        return
    texts = [data.draw(grade_texts()) for _ in qrels]
    tmp = tmp_path_factory.mktemp("float")
    q, r = _write(tmp, "".join(f"{a} 0 {d} {t}\n" for (a, d, _), t in zip(qrels, texts)),
                  "".join(f"{a} Q0 {d} {i} {s} run\n" for i, (a, d, s) in enumerate(run)))
    args = ["-q", *[x for m in measures for x in ("-m", m)], q, r]
    want = _run_binary(trec_eval_bin, args)
    status, out, err = _command(["trec_eval", *args])
    odd = [t for t in texts if not t.lstrip("+-").isdigit()]
    # where trec_eval stops (a first query whose grades all read negative, ...) the
    # command stops too, with its status and what it printed before, and says why in
    # one line on stderr (that line alone)
    assert (status, out) == (want.returncode, want.stdout), (want.stderr, err)
    assert err.count("\n") == (1 if odd or want.returncode else 0), err
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        got = fastndcg.evaluate(r, qrels=q, measure=["ndcg_cut_3", "ndcg", "map", "P_5"],
                                preset="trec_eval")
    if odd:
        line = next(i for i, t in enumerate(texts, 1) if not t.lstrip("+-").isdigit())
        assert _one_warning(record).startswith(f"{q}:{line}: grade {texts[line - 1]!r}")
    wq, wr = _write(tmp_path_factory.mktemp("whole"), "".join(
        f"{a} 0 {d} {c_atol(t)}\n" for (a, d, _), t in zip(qrels, texts)), open(r).read())
    plain = fastndcg.evaluate(wr, qrels=wq, measure=["ndcg_cut_3", "ndcg", "map", "P_5"],
                              preset="trec_eval")
    assert got.per_query.equals(plain.per_query)
    if want.returncode != 0:  # trec_eval printed no values to compare with
        return
    # and trec_eval's own printed values for those queries
    printed = {(m, qid): v for m, qid, v in (line.split() for line in
               _binary(trec_eval_bin, ["-q", "-m", "ndcg_cut.3", q, r]).splitlines())}
    for qid, value in zip(got.per_query["query_id"].to_pylist(),
                          got.per_query["ndcg@3"].to_pylist()):
        assert f"{value:.4f}" == printed[("ndcg_cut_3", qid)]


# ---------------------------------------------------------------- pytrec_eval, ranx, LTR

def test_pytrec_eval_preset_refuses_as_pytrec_eval_does(tmp_path):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    with pytest.raises(TypeError) as theirs:
        pytrec_eval.RelevanceEvaluator({"q1": {"d1": 0.5, "d2": 2}}, {"ndcg_cut"})
    q, r = _write(tmp_path, QRELS)
    with pytest.raises(ValueError) as file_err:
        fastndcg.evaluate(r, qrels=q, measure="ndcg_cut_3", preset="pytrec_eval")
    assert str(file_err.value).startswith(f"{q}:1: grade '0.5' is not a whole number")
    assert str(theirs.value) in str(file_err.value)  # pytrec_eval's own words
    with pytest.raises(ValueError, match=r"qrels=, column 'label', query 'q1', document 'd2'"):
        fastndcg.evaluate(r, qrels={"q1": {"d1": 1, "d2": 2.7}}, preset="pytrec_eval")
    # whole grades, even as floats, are read (the same numbers as integers)
    a = fastndcg.evaluate(r, qrels={"q1": {"d1": 1.0, "d2": 2.0}}, preset="pytrec_eval")
    b = fastndcg.evaluate(r, qrels={"q1": {"d1": 1, "d2": 2}}, preset="pytrec_eval")
    assert a.per_query.equals(b.per_query)


@pytest.mark.parametrize("metrics", [["ndcg@3", "ndcg@5", "map", "precision@3"],
                                     ["ndcg_burges@3", "recall@2", "mrr"]])
def test_ranx_preset_casts_as_ranx_does(metrics):
    """ranx's Qrels casts a dict's float grades to int (toward zero: 2.7 -> 2, -1.7 ->
    -1); preset="ranx" scores the same, per query, with one warning."""
    ranx = pytest.importorskip("ranx")
    qrels = {"q1": {"d1": 0.5, "d2": 2.7, "d3": 1, "d4": -0.5, "d5": -1.7},
             "q2": {"d1": 1.9, "d3": 0.99, "d6": 3.2}}
    run = {"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0, "d4": 0.5, "d5": 0.2, "d7": 0.1},
           "q2": {"d1": 0.3, "d2": 0.9, "d3": 0.6, "d6": 0.1}}
    assert ranx.Qrels(qrels).to_dict()["q1"] == {"d1": 0, "d2": 2, "d3": 1, "d4": 0, "d5": -1}
    want = ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), metrics, return_mean=False)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        got = fastndcg.evaluate(run, qrels=qrels, preset="ranx", measure=metrics)
    text = _one_warning(record)
    assert "query 'q1', document 'd1'" in text and "grade 0.5 read as 0, as ranx" in text
    assert "7 grades are not whole numbers" in text
    for m in metrics:
        column = fastndcg.measures.parse([m], ranx=True).columns[0]
        np.testing.assert_allclose(got.per_query[column].to_numpy(), want[m], rtol=1e-12)


@pytest.mark.parametrize("preset,words", [
    ("lightgbm", "label should be int type"),
    ("xgboost", "label must be either 0 or positive integer"),
    ("xgboost-", "label must be either 0 or positive integer"),
])
def test_learning_to_rank_presets_refuse_as_their_tools_do(preset, words):
    log = pd.DataFrame({"query_id": ["a", "a", "b"], "score": [1.0, 2.0, 3.0],
                        "label": [1, 2.5, 0]})
    for call in (lambda: fastndcg.evaluate(log, k=3, preset=preset),
                 lambda: fastndcg.ndcg([1.0, 2.0, 3.0], [1, 2.5, 0], [0, 2, 3], preset=preset)):
        with pytest.raises(ValueError, match=words) as err:
            call()
        assert "grade 2.5 is not a whole number" in str(err.value)
        assert "query 'a'" in str(err.value) or "query 0" in str(err.value)


def test_lightgbm_really_refuses_a_fractional_label():
    lgb = pytest.importorskip("lightgbm")
    data = lgb.Dataset(np.zeros((3, 1)), label=[1, 2.5, 0], group=[3],
                       params={"verbose": -1})
    with pytest.raises(lgb.basic.LightGBMError, match="label should be int type"):
        lgb.train({"objective": "lambdarank", "metric": "ndcg", "verbose": -1}, data, 1)


def test_sklearn_preset_uses_float_grades_as_sklearn_does():
    from sklearn.metrics import ndcg_score
    labels, scores = [0.5, 2.7, 1.0, 0.0], [3.0, 2.0, 1.0, 0.5]
    assert fastndcg.ndcg(scores, labels, k=3, preset="sklearn")[0] == pytest.approx(
        ndcg_score([labels], [scores], k=3), rel=1e-12)


def test_list_mode_trec_eval_preset_warns_once_per_call():
    log = pd.DataFrame({"query_id": ["a", "a", "b", "b"], "doc_id": ["x", "y", "x", "y"],
                        "score": [1.0, 2.0, 3.0, 1.0], "label": [1, 2.5, 0.5, 1]})
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        got = fastndcg.evaluate(log, k=2, preset="trec_eval", batch_rows=1)
    text = _one_warning(record)
    assert text.startswith("column 'label', query 'a' (its row 1): grade 2.5 read as 2")
    whole = log.assign(label=[1, 2, 0, 1])
    assert got.per_query.equals(fastndcg.evaluate(whole, k=2, preset="trec_eval").per_query)


# ---------------------------------------------------------------- NaN and infinities

@pytest.mark.parametrize("bad", ["nan", "inf", "-inf", "NaN", "Infinity"])
@pytest.mark.parametrize("preset", [None, "trec_eval", "ranx", "pytrec_eval"])
def test_nan_and_infinite_grades_are_refused_by_name(tmp_path, bad, preset):
    """Refused everywhere, but in a qrels file as trec_eval, ranx and pytrec_eval read
    one (C's atol: 0; Python's int(): refused as not a whole number; see
    test_*_reads_a_file_grade_as_*)."""
    q, r = _write(tmp_path, f"q1 0 d1 1\nq1 0 d2 {bad}\n")
    if preset != "trec_eval":
        words = r"finite" if preset is None else r"is not a whole number"
        with pytest.raises(ValueError, match=words) as err:
            fastndcg.evaluate(r, qrels=q, preset=preset)
        assert bad.lower()[:3] in str(err.value).lower()
    value = float(bad)
    with pytest.raises(ValueError, match=r"finite"):
        fastndcg.evaluate(r, qrels={"q1": {"d1": 1, "d2": value}}, preset=preset)
    log = pd.DataFrame({"query_id": ["a", "a"], "doc_id": ["x", "y"], "score": [1.0, 2.0],
                        "label": [1, value]})
    # (pandas' NaN is a missing value: refused as a null in the column)
    with pytest.raises(ValueError, match=r"finite" if value == value else r"null value"):
        fastndcg.evaluate(log, preset=preset if preset != "ranx" else None)
    with pytest.raises(ValueError, match=r"finite"):
        fastndcg.ndcg([1.0, 2.0], [1, value])


def test_command_line_says_a_truncated_grade_in_one_line(tmp_path):
    q, r = _write(tmp_path, QRELS)
    base = ["evaluate", r, "--qrels", q, "-m", "ndcg_cut.3", "--format", "json"]
    status, with_preset, err = _command([*base, "--preset", "trec_eval"])
    assert status == 0 and err.count("\n") == 1
    assert err.startswith(f"fastndcg: warning: {q}:1: grade '0.5' read as 0")
    status, out, err = _command([*base, "--preset", "pytrec_eval"])
    assert status == 1 and out == "" and err.count("\n") == 1
    assert err.startswith(f"fastndcg: error: {q}:1: grade '0.5' is not a whole number")


def test_where_trec_eval_stops_on_truncated_grades(trec_eval_bin, tmp_path):
    """A first query whose only grade is -1.7 reads -1 in trec_eval, which then stops
    (exit 4) on -m all_trec: the command stops with the same status and output, one
    line on stderr."""
    q, r = _write(tmp_path, "q0 0 d0 -1.7\nq1 0 d0 1.0\n", "q0 Q0 d1 0 0.0 run\n")
    args = ["-q", "-m", "all_trec", q, r]
    want = _run_binary(trec_eval_bin, args)
    assert want.returncode == 4
    status, out, err = _command(["trec_eval", *args])
    assert (status, out) == (want.returncode, want.stdout)
    assert err.count("\n") == 1 and "negative" in err, err


# ---------------------------------------------------------------- what each tool takes

# a qrels file's grade fields as written, beyond the plain ones
ODD_TEXTS = ["3", "+3", "-1", "007", "1_0", "3.0", "1e3", "1e300", "0x10", "abc", "nan",
             "2147483647", "2147483648", "9223372036854775807", "9223372036854775808",
             "-2147483649", "-9223372036854775808"]


def _ranx_file_value(ranx, q: str, r: str):
    """ranx's NDCG@3 on the files, or None where its reader refuses the qrels."""
    try:
        qrels = ranx.Qrels.from_file(q, kind="trec")
    except (ValueError, OverflowError):
        return None
    return ranx.evaluate(qrels, ranx.Run.from_file(r, kind="trec"), "ndcg@3")


def _ours(r: str, q: str, preset: str):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GradeWarning)
        try:
            return fastndcg.evaluate(r, qrels=q, k=3, preset=preset).mean["ndcg@3"]
        except ValueError as err:
            return err


# trec_eval and pytrec_eval keep a count for every grade up to a query's highest: past
# this grade the real tools are not run (2**31 - 1 would take 16 GiB)
_TABLE_GRADES = 1 << 20


def _huge_ndcg3(g: int) -> float:
    """NDCG@3 of the lists below by its definition (linear gain, log2 discount): grade g
    at rank 1, 0 at rank 2, 1 at rank 3; ideally g, then 1 at rank 2."""
    import math
    return (g + 1 / math.log2(4)) / (g + 1 / math.log2(3))


@pytest.mark.parametrize("text", ODD_TEXTS)
def test_ranx_preset_reads_a_file_grade_as_ranx_does(tmp_path, text):
    """ranx's from_file reads a grade with Python's int(): '0x10', '1e300' and '3.0' are
    refused there, '+3' and '1_0' taken; past 64 bits it overflows. preset="ranx"
    takes exactly the grades ranx takes, with its numbers."""
    ranx = pytest.importorskip("ranx")
    q, r = _write(tmp_path, f"q1 0 d1 {text}\nq1 0 d2 0\nq1 0 d3 1\n")
    want, got = _ranx_file_value(ranx, q, r), _ours(r, q, "ranx")
    if text == str(-2 ** 63):  # ranx scores it as relevant (an overflow): refused here
        assert want > 0.5, want  # (a grade scored as not relevant gives 0.5)
        want = None
    if want is None:
        assert isinstance(got, ValueError) and f"{q}:1: grade" in str(got), got
        assert "ranx" in str(got)
    else:
        assert not isinstance(got, Exception), got
        assert got == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("text", ODD_TEXTS)
def test_pytrec_eval_preset_reads_a_file_grade_as_its_readers_do(tmp_path, text):
    """pytrec_eval reads no files: its users read qrels with ir_measures (Python's
    int() of the field) and pass ints. A grade of 2**31 or more needs a table of over
    16 GiB there, wraps past 2**32 and crashes it past about 2**62, so it is not run
    on those. preset="pytrec_eval" takes what that path takes, with pytrec_eval's
    numbers."""
    ir_measures = pytest.importorskip("ir_measures")
    pytrec_eval = pytest.importorskip("pytrec_eval")
    q, r = _write(tmp_path, f"q1 0 d1 {text}\nq1 0 d2 0\nq1 0 d3 1\n")
    got = _ours(r, q, "pytrec_eval")
    try:
        qrels = {"q1": {j.doc_id: j.relevance for j in ir_measures.read_trec_qrels(q)}}
    except ValueError:
        assert isinstance(got, ValueError) and f"{q}:1: grade {text!r}" in str(got), got
        return
    if qrels["q1"]["d1"] >= 2 ** 31:  # 16 GiB there, wrong past 2**32, a crash past ~2**62
        assert isinstance(got, ValueError) and "16 GiB" in str(got), got
        return
    if qrels["q1"]["d1"] >= _TABLE_GRADES:  # gigabytes there: the definition instead
        assert got == pytest.approx(_huge_ndcg3(qrels["q1"]["d1"]), rel=1e-12), got
        return
    run = {"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}}
    want = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.3"}).evaluate(run)["q1"]
    assert not isinstance(got, Exception), got
    assert got == pytest.approx(want["ndcg_cut_3"], abs=1e-12)


@pytest.mark.parametrize("text", ODD_TEXTS)
def test_trec_eval_preset_reads_a_file_grade_as_trec_eval_does(trec_eval_bin, tmp_path, text):
    """trec_eval reads any grade field with C's atol ('0x10', 'abc' and 'nan' are 0,
    '1e300' 1), and stops where its table of grade counts would pass 16 GiB (a grade of
    2**31 or more): preset="trec_eval" prints its numbers, or refuses where it stops."""
    q, r = _write(tmp_path, f"q1 0 d1 {text}\nq1 0 d2 0\nq1 0 d3 1\n")
    got = _ours(r, q, "trec_eval")
    from fastndcg.io import c_atol
    grade = c_atol(text)
    if grade >= 2 ** 31:
        assert isinstance(got, ValueError) and "16 GiB" in str(got), got
        return
    if grade >= _TABLE_GRADES:  # the tool would take gigabytes: the definition instead
        assert got == pytest.approx(_huge_ndcg3(grade), rel=1e-12), got
        return
    out = _binary(trec_eval_bin, ["-m", "ndcg_cut.3", q, r])
    assert not isinstance(got, Exception), got
    assert f"{got:.4f}" == out.split()[-1]


LTR_LABELS = [0, 30, 31, 32, 1 + 1e-9, 30.9999999, 31.0000001, 1.5, -1, 1e300, 2.000001,
              2.0000015, 1e-6, 1.9999995, -1e-7, 31.000001]


def _lightgbm_takes(label) -> bool:
    lgb = pytest.importorskip("lightgbm")
    y = np.array([label, 0.0, 1.0])
    data = lgb.Dataset(np.arange(3.0).reshape(-1, 1), label=y, group=[3],
                       params={"verbose": -1})
    try:
        lgb.train({"objective": "lambdarank", "metric": "ndcg", "verbose": -1,
                   "min_data_in_leaf": 1}, data, 1, valid_sets=[data])
    except lgb.basic.LightGBMError:
        return False
    return True


def _xgboost_takes(label) -> bool:
    xgb = pytest.importorskip("xgboost")
    try:
        d = xgb.DMatrix(np.arange(3.0).reshape(-1, 1), label=np.array([label, 0.0, 1.0]))
        d.set_group([3])
        xgb.train({"objective": "rank:ndcg", "eval_metric": "ndcg"}, d, 1, evals=[(d, "t")],
                  verbose_eval=False)
    except xgb.core.XGBoostError:
        return False
    return True


@pytest.mark.parametrize("label", LTR_LABELS)
@pytest.mark.parametrize("preset,takes", [("lightgbm", _lightgbm_takes),
                                          ("xgboost", _xgboost_takes)])
def test_learning_to_rank_presets_take_the_labels_their_tools_take(preset, takes, label):
    """LightGBM and XGBoost hold labels as 32-bit floats (1 + 1e-9 is 1 there, and
    30.9999999 is 31); LightGBM's default label_gain covers labels 0-30, XGBoost's
    exponential gain labels up to 31. The presets refuse exactly what the tools refuse,
    in evaluate and in ndcg alike."""
    log = pd.DataFrame({"query_id": ["a"] * 3, "score": [3.0, 2.0, 1.0],
                        "label": [label, 0.0, 1.0]})
    want = takes(label)
    for call in (lambda: fastndcg.evaluate(log, k=3, preset=preset).mean["ndcg@3"],
                 lambda: fastndcg.ndcg([3.0, 2.0, 1.0], [label, 0.0, 1.0], k=3, preset=preset)):
        if want:
            call()
        else:
            with pytest.raises(ValueError, match=preset.replace("lightgbm", "LightGBM")
                               .replace("xgboost", "XGBoost")):
                call()


def test_xgboost_reads_a_label_just_past_a_whole_number_as_that_number():
    """XGBoost reads 2.000001 as 2 (its kRtEps, 1e-6): the same numbers as label 2."""
    for preset in ("xgboost", "xgboost-"):
        a = fastndcg.ndcg([3.0, 2.0, 1.0], [2.000001, 0, 1e-6], k=3, preset=preset)
        b = fastndcg.ndcg([3.0, 2.0, 1.0], [2.0, 0, 0], k=3, preset=preset)
        assert a.tolist() == b.tolist()


def test_a_label_read_as_a_32_bit_float_scores_as_that_float():
    """1 + 1e-9 is 1.0 as LightGBM and XGBoost hold it: the same numbers as label 1."""
    a = fastndcg.ndcg([3.0, 2.0, 1.0], [1 + 1e-9, 0, 2], k=3, preset="lightgbm")
    b = fastndcg.ndcg([3.0, 2.0, 1.0], [1.0, 0, 2], k=3, preset="lightgbm")
    assert a.tolist() == b.tolist()
    labels = np.array([1 + 1e-9, 0, 2])
    fastndcg.ndcg([3.0, 2.0, 1.0], labels, k=3, preset="xgboost")
    assert labels[0] == 1 + 1e-9  # the caller's array is not changed


@pytest.mark.parametrize("preset,bad", [("pytrec_eval", 2.0 ** 31), ("ranx", 1e300),
                                        ("ranx", 2.0 ** 63)])
def test_presets_refuse_a_table_grade_their_tool_cannot_hold(preset, bad):
    """A dict's grade past what the tool keeps (pytrec_eval's 32-bit C int, ranx's
    64-bit int: 'Python int too large to convert to C long') is refused by name."""
    run = {"q1": {"d1": 3.0, "d2": 2.0}}
    with pytest.raises(ValueError, match=r"query 'q1', document 'd1': grade .* is outside"):
        fastndcg.evaluate(run, qrels={"q1": {"d1": bad, "d2": 1}}, preset=preset)
    if preset == "ranx":
        ranx = pytest.importorskip("ranx")
        with pytest.raises(OverflowError):
            ranx.Qrels({"q1": {"d1": bad, "d2": 1}})
