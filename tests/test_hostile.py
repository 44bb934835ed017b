"""The classes of bad or odd input that once gave a silent answer or a raw error,
each now a clear error (or the right answer) at its root, through the API and the
command line. Each case asserts the error names what is wrong."""

from __future__ import annotations

import gzip

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import fastndcg

import inprocess

S = [0.5, 0.2, 0.9, 0.1]
L = [1, 0, 1, 0]


@pytest.mark.parametrize("ids,fragment", [
    ([1.0, np.nan, 1.0, 2.0], "missing id"),
    (np.array([1.0, np.nan, 1.0, 2.0]), "missing id"),
    (["a", None, "a", "b"], "missing id"),
])
def test_missing_query_ids_are_errors(ids, fragment):
    with pytest.raises(ValueError, match=fragment):
        fastndcg.ndcg(S, L, query_ids=ids)


def test_missing_query_ids_from_pandas():
    pd = pytest.importorskip("pandas")
    for ids in (pd.Series([1, None, 1, 2], dtype="Int64"), pd.Series([1.0, None, 1.0, 2.0]),
                pd.array(["a", pd.NA, "a", "b"], dtype="string")):
        with pytest.raises(ValueError, match="missing id"):
            fastndcg.ndcg(S, L, query_ids=ids)


def test_zero_and_negative_zero_ids_are_one_query():
    got = fastndcg.ndcg(S, L, query_ids=[0.0, -0.0, 1.0, 1.0], k=3)
    want = fastndcg.ndcg(S, L, offsets=[0, 2, 4], k=3)
    np.testing.assert_array_equal(got, want)


def test_categorical_ids_group_by_value_in_first_appearance_order():
    pd = pytest.importorskip("pandas")
    ids = pd.Categorical(["b", "b", "a", "a"], categories=["z", "a", "b"])  # "z" unused
    dictionary = pa.DictionaryArray.from_arrays(pa.array([2, 2, 1, 1], pa.int32()),
                                                pa.array(["z", "a", "b"]))
    want = fastndcg.ndcg(S, L, offsets=[0, 2, 4], k=3)
    for given in (ids, dictionary):
        np.testing.assert_array_equal(fastndcg.ndcg(S, L, query_ids=given, k=3), want)


@pytest.mark.parametrize("which", ["scores", "labels", "query_ids"])
def test_masked_arrays_with_masked_values_are_errors(which):
    args = dict(scores=np.array(S), labels=np.array(L), query_ids=np.array([1, 1, 2, 2]))
    args[which] = np.ma.array(args[which], mask=[0, 1, 0, 0])
    with pytest.raises(ValueError, match=f"{which} is a masked array with 1 masked value"):
        fastndcg.ndcg(args["scores"], args["labels"], query_ids=args["query_ids"])
    args[which] = np.ma.array(np.ma.getdata(args[which]), mask=False)  # nothing masked: fine
    fastndcg.ndcg(args["scores"], args["labels"], query_ids=args["query_ids"])


def test_negative_gain_table_is_an_error():
    with pytest.raises(ValueError, match=r"gains >= 0, got gain\[1\] = -1.0"):
        fastndcg.ndcg(S, L, gain=[0, -1])


def test_ids_above_int64_are_kept():
    big = np.array([2**63 + 5, 2**63 + 5, 7, 7], np.uint64)
    table = pa.table({"query_id": pa.array(big), "score": S, "label": L})
    for t in (table, table.take(pa.array([0, 2, 1, 3]))):  # also scattered
        per = fastndcg.evaluate(t, k=[3]).per_query
        assert per["query_id"].to_pylist() == [2**63 + 5, 7]
        assert per["query_id"].type == pa.uint64()


def test_non_utf8_binary_ids_and_duplicate_columns():
    table = pa.table({"query_id": pa.array([b"\xff", b"\xff", b"a", b"a"], pa.binary()),
                      "score": S, "label": L})
    with pytest.raises(ValueError, match="'query_id' hold bytes that are not UTF-8"):
        fastndcg.evaluate(table)
    dup = pa.Table.from_arrays([pa.array([1, 1]), pa.array([0.5, 0.1]), pa.array([1, 0]),
                                pa.array([0.3, 0.2])], names=["query_id", "score", "label", "score"])
    with pytest.raises(ValueError, match="'score' \\(scores\\) appears 2 times"):
        fastndcg.evaluate(dup)


@pytest.fixture()
def files(tmp_path):
    d = tmp_path
    (d / "qrels.txt").write_text("q1 0 d1 1\nq1 0 d2 2\nq2 0 d1 1\n")
    (d / "run.txt").write_text("q1 Q0 d1 1 2.5 t\nq1 Q0 d2 2 1.5 t\nq2 Q0 d1 1 1 t\n")
    # CR-only line ends, a byte-order mark and irregular whitespace at once
    (d / "cr_bom.txt").write_bytes(b"\xef\xbb\xbfq1  Q0 d1 1 2.5 t\rq1 Q0 d2 2 1.5 t\rq2 Q0 d1 1 1 t\r")
    (d / "qrels_inf.txt").write_text("q1 0 d1 inf\n")
    with gzip.open(d / "run.txt.gz", "wb") as f:
        f.write((d / "run.txt").read_bytes())
    (d / "truncated.txt.gz").write_bytes((d / "run.txt.gz").read_bytes()[:20])
    (d / "nocommon.qrels").write_text("x1 0 d1 1\n")
    pq.write_table(pa.table({"query_id": pa.array([], pa.int64()),
                             "score": pa.array([], pa.float64()),
                             "label": pa.array([], pa.int64())}), d / "empty.parquet")
    return d


def test_cr_and_bom_lines_are_all_read(files):
    want = fastndcg.evaluate(str(files / "run.txt"), qrels=str(files / "qrels.txt"), k=[2])
    got = fastndcg.evaluate(str(files / "cr_bom.txt"), qrels=str(files / "qrels.txt"), k=[2])
    assert got.per_query.equals(want.per_query) and got.n_rows == 3


def cli(*args, cwd):
    """``fastndcg ARGS`` in this process (tests/inprocess.py)."""
    return inprocess.run(args, cwd=cwd, timeout=120)


@pytest.mark.parametrize("args,fragment", [
    (["evaluate", "run.txt", "--qrels", "run.txt"], "run.txt:1: 'q1 Q0 d1 1 2.5 t' is a TREC run line"),
    (["evaluate", "qrels.txt", "--qrels", "qrels.txt"], "is this a qrels file given as the run?"),
    (["evaluate", "run.txt", "--qrels", "qrels_inf.txt"], "labels must be finite"),
    (["evaluate", "truncated.txt.gz", "--qrels", "qrels.txt"], "'truncated.txt.gz'"),
    (["evaluate", "run.txt", "--qrels", "nocommon.qrels"], "none of the 2 queries"),
    (["evaluate", "empty.parquet"], "holds no rows"),
])
def test_command_line_errors(files, args, fragment):
    proc = cli(*args, cwd=files)
    assert proc.returncode == 1, (proc.returncode, proc.stderr)
    assert proc.stdout == "" and proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert fragment in proc.stderr, proc.stderr


def test_non_utf8_file_names_are_named(tmp_path):
    import os
    d = os.fsencode(str(tmp_path))
    log = os.path.join(d, b"\xfflog.parquet")
    pq.write_table(pa.table({"query_id": [1, 1], "score": [0.5, 0.1], "label": [1, 0]}),
                   str(tmp_path / "ok.parquet"))
    os.replace(os.fsencode(str(tmp_path / "ok.parquet")), log)
    run = os.path.join(d, b"\xferun.txt")
    with open(run, "wb") as f:
        f.write(b"q1 Q0 d1 1 2.5 t\n")
    (tmp_path / "q.txt").write_text("q1 0 d1 1\n")
    for call in (lambda: fastndcg.evaluate(os.fsdecode(log)),
                 lambda: fastndcg.evaluate(str(tmp_path), per_query=False),
                 lambda: fastndcg.evaluate(os.fsdecode(run), qrels=str(tmp_path / "q.txt"))):
        with pytest.raises(ValueError, match="is not valid UTF-8.*rename the file"):
            call()
    proc = cli("evaluate", os.fsdecode(log), cwd=tmp_path)
    assert proc.returncode == 1 and "not valid UTF-8" in proc.stderr
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
