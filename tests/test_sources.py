"""Sources of fastndcg.evaluate and the TREC readers: every bad input is the right
exception, and its message names the file, column, query or line, and the fix.

Small tables only, float32/float64 scores with int8/int64 labels (no new compiled
specialisations)."""

from __future__ import annotations

import gzip
import math
import os
import re

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import fastndcg
from fastndcg.io import read_trec_qrels, read_trec_run
from fastndcg.synth import synthetic_log


def esc(text: str) -> str:
    return re.escape(text)


@pytest.fixture(scope="module")
def log() -> pa.Table:
    return synthetic_log(12, seed=7, mean_docs=5)


def simple(n_queries=4, rows=3) -> pa.Table:
    """float64 scores, int64 labels, query ids 100, 101, ... each with ``rows`` rows."""
    n = n_queries * rows
    return pa.table({"query_id": np.repeat(np.arange(100, 100 + n_queries), rows),
                     "doc_id": np.arange(n),
                     "score": np.linspace(1.0, 0.0, n),
                     "label": (np.arange(n) % 3).astype(np.int64)})


# --------------------------------------------------------------------------- paths

def test_missing_file(tmp_path):
    path = tmp_path / "nope.parquet"
    with pytest.raises(FileNotFoundError, match=esc(repr(str(path))) + ".*does not exist.*"
                                                "check the path"):
        fastndcg.evaluate(path)
    with pytest.raises(FileNotFoundError, match=esc(repr(str(path)))):
        fastndcg.evaluate(str(path))


def test_missing_qrels_file(tmp_path, log):
    path = tmp_path / "qrels.txt"
    with pytest.raises(FileNotFoundError, match=esc(repr(str(path))) + ".*does not exist"):
        fastndcg.evaluate(log, qrels=path)


def test_empty_glob(tmp_path):
    (tmp_path / "other.csv").write_text("x")
    pattern = str(tmp_path / "part-*.parquet")
    with pytest.raises(FileNotFoundError, match=esc(f"no files match {pattern!r}") +
                       ".*check the pattern"):
        fastndcg.evaluate(pattern)


def test_glob_matching_only_hidden_files(tmp_path):
    (tmp_path / "_SUCCESS").write_bytes(b"")
    (tmp_path / ".part-0.crc").write_bytes(b"")
    with pytest.raises(FileNotFoundError, match="no files match"):
        fastndcg.evaluate(str(tmp_path / "*"))


def test_directory_without_files(tmp_path):
    with pytest.raises(FileNotFoundError, match=esc(f"directory {str(tmp_path)!r} holds no "
                                                    f"data files")):
        fastndcg.evaluate(tmp_path)
    # only markers and hidden folders: still nothing to read
    (tmp_path / "_SUCCESS").write_bytes(b"")
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "part-0.parquet").write_bytes(b"PAR1")
    (tmp_path / "_temporary").mkdir()
    (tmp_path / "_temporary" / "part-0.parquet").write_bytes(b"PAR1")
    with pytest.raises(FileNotFoundError, match="holds no data files"):
        fastndcg.evaluate(tmp_path)


def test_non_parquet_file_without_qrels(tmp_path):
    path = tmp_path / "run.txt"
    path.write_text("q1 Q0 d1 1 2.5 tag\n")
    with pytest.raises(ValueError, match=esc(f"{str(path)!r} is not a Parquet file") +
                       r".*TREC run text file together with qrels"):
        fastndcg.evaluate(path)


def test_non_parquet_file_in_directory_is_named(tmp_path, log):
    pq.write_table(log, tmp_path / "part-000.parquet")
    (tmp_path / "README.txt").write_text("about this log")
    with pytest.raises(ValueError, match=esc(repr(str(tmp_path / "README.txt"))) +
                       " is not a Parquet file"):
        fastndcg.evaluate(tmp_path)


def test_existing_file_with_glob_characters_in_its_name(tmp_path, log):
    """A file that exists is read even when its name contains '[' (it is not a pattern
    that matches nothing)."""
    path = tmp_path / "log[2024].parquet"
    pq.write_table(log, path)
    report = fastndcg.evaluate(str(path))
    assert report.n_rows == log.num_rows


# --------------------------------------------------------------------------- columns

@pytest.mark.parametrize("role,value,shown", [("query", "qid", "query ids"),
                                              ("score", "s", "scores"),
                                              ("label", "relevance", "labels")])
def test_missing_column_lists_the_columns(log, role, value, shown):
    pattern = (esc(f"column {value!r} ({shown}) not found in the Arrow table; it has columns "
                   f"'query_id', 'doc_id', 'score', 'label'") + ".*" + esc(f"{role}="))
    with pytest.raises(ValueError, match=pattern):
        fastndcg.evaluate(log, **{role: value})


def test_missing_doc_column_for_trec_ties(log):
    table = log.drop_columns(["doc_id"])
    with pytest.raises(ValueError, match=r"column 'doc_id' \(document ids\) not found.*"
                                         r"'query_id', 'score', 'label'.*doc="):
        fastndcg.evaluate(table, ties="trec")
    fastndcg.evaluate(table)  # not needed otherwise


def test_missing_column_in_one_parquet_file_names_the_file(tmp_path, log):
    pq.write_table(log.slice(0, 20), tmp_path / "part-000.parquet")
    pq.write_table(log.slice(20).rename_columns(["query_id", "doc_id", "pred", "label"]),
                   tmp_path / "part-001.parquet")
    with pytest.raises(ValueError, match=esc(f"column 'score' (scores) not found in "
                                             f"{str(tmp_path / 'part-001.parquet')!r}") +
                       r".*'query_id', 'doc_id', 'pred', 'label'"):
        fastndcg.evaluate(tmp_path)


def test_missing_column_in_qrels(log):
    qrels = pa.table({"query_id": [1], "doc_id": [2], "grade": [1]})
    with pytest.raises(ValueError, match=r"column 'label' \(labels\) not found.*'query_id', "
                                         r"'doc_id', 'grade'.*label="):
        fastndcg.evaluate(log, qrels=qrels)


@pytest.mark.parametrize("column,values,shown", [
    ("score", lambda n: pa.array([str(i) for i in range(n)]), "scores must be numbers"),
    ("label", lambda n: pa.array(["1"] * n), "labels must be numbers"),
    ("query_id", lambda n: pa.array(np.arange(n) * 0.5), "query ids must be integers or strings"),
    ("score", lambda n: pa.array([[1.0]] * n), "scores must be numbers"),
])
def test_wrong_column_type(log, column, values, shown):
    table = log.set_column(log.column_names.index(column), column, values(log.num_rows))
    pattern = esc(f"column {column!r} of the Arrow table has type ") + r".*" + esc(shown) + \
        r".*cast it"
    with pytest.raises(TypeError, match=pattern):
        fastndcg.evaluate(table)


def test_wrong_column_type_in_parquet(tmp_path, log):
    path = tmp_path / "log.parquet"
    pq.write_table(log.set_column(2, "score", pa.array(["x"] * log.num_rows)), path)
    with pytest.raises(TypeError, match=esc(f"column 'score' of {str(path)!r} has type string, "
                                            f"but scores must be numbers")):
        fastndcg.evaluate(path)


def test_same_column_twice(log):
    with pytest.raises(ValueError, match=r"columns must be different.*query='score'"):
        fastndcg.evaluate(log, query="score")


# --------------------------------------------------------------------------- nulls

def with_nulls(table: pa.Table, column: str, rows: list[int]) -> pa.Table:
    values = table[column].to_pylist()
    for r in rows:
        values[r] = None
    return table.set_column(table.column_names.index(column), column,
                            pa.array(values, table.schema.field(column).type))


@pytest.mark.parametrize("column", ["score", "label"])
def test_nulls_counted_over_the_whole_source(log, column):
    rows = [4, 30, 31, 45]  # batches of 10 rows: nulls in three different batches
    table = with_nulls(log, column, rows)
    qid = log["query_id"][rows[0]].as_py()
    pattern = esc(f"column {column!r} has {len(rows)} null value(s) (first in query {qid!r}, "
                  f"row {rows[0]})") + r".*fill_null"
    with pytest.raises(ValueError, match=pattern):
        fastndcg.evaluate(table, batch_rows=10)
    with pytest.raises(ValueError, match=pattern):
        fastndcg.evaluate(table)


def test_nulls_first_in_a_later_batch_and_over_files(tmp_path, log):
    rows = [25, 26, 50]
    table = with_nulls(log, "score", rows)
    pq.write_table(table.slice(0, 40), tmp_path / "part-000.parquet", row_group_size=8)
    pq.write_table(table.slice(40), tmp_path / "part-001.parquet", row_group_size=8)
    qid = log["query_id"][25].as_py()
    pattern = esc(f"column 'score' has 3 null value(s) (first in query {qid!r}, row 25)")
    with pytest.raises(ValueError, match=pattern):
        fastndcg.evaluate(tmp_path, batch_rows=6)
    with pytest.raises(ValueError, match=pattern):
        fastndcg.evaluate(tmp_path)


def test_null_query_ids(log):
    table = with_nulls(log, "query_id", [7, 33])
    with pytest.raises(ValueError, match=esc("column 'query_id' has 2 null query id(s) (first "
                                             "at row 7)") + ".*fill or drop"):
        fastndcg.evaluate(table, batch_rows=10)


def test_null_doc_ids_with_trec_ties(log):
    table = with_nulls(log, "doc_id", [12])
    qid = log["query_id"][12].as_py()
    with pytest.raises(ValueError, match=esc(f"column 'doc_id' has 1 null value(s) (first in "
                                             f"query {qid!r}, row 12)")):
        fastndcg.evaluate(table, ties="trec")


def test_null_labels_in_qrels_row_is_counted_over_the_whole_table():
    run = pa.table({"query_id": ["a", "a", "b", "b", "c", "c"],
                    "doc_id": ["x", "y", "x", "y", "x", "y"],
                    "score": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]})
    first = pa.table({"query_id": ["a", "a", "b"], "doc_id": ["x", "y", "x"],
                      "label": pa.array([1, 0, 1], pa.int64())})
    second = pa.table({"query_id": ["b", "c", "c"], "doc_id": ["y", "x", "y"],
                       "label": pa.array([1, None, None], pa.int64())})
    qrels = pa.concat_tables([first, second])  # two chunks: two batches
    whole = qrels.combine_chunks()
    message = esc("column 'label' has 2 null value(s) (first in query 'c', row 4)")
    with pytest.raises(ValueError, match=message):
        fastndcg.evaluate(run, qrels=whole)
    with pytest.raises(ValueError, match=message):
        fastndcg.evaluate(run, qrels=qrels)


# --------------------------------------------------------------------------- corrupt Parquet

def test_corrupt_parquet(tmp_path):
    path = tmp_path / "log.parquet"
    path.write_bytes(b"PAR1" + np.random.default_rng(0).bytes(2000))
    with pytest.raises(ValueError, match=esc(f"cannot read {str(path)!r} as Parquet") +
                       r".*not corrupt\? Write it again"):
        fastndcg.evaluate(path)


def test_truncated_parquet(tmp_path, log):
    good = tmp_path / "good.parquet"
    pq.write_table(log, good)
    data = good.read_bytes()
    cut = tmp_path / "cut.parquet"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match=esc(f"cannot read {str(cut)!r} as Parquet") +
                       r".*complete and not corrupt"):
        fastndcg.evaluate(cut)
    # in a directory, the bad file is named
    os.rename(good, tmp_path / "part-000.parquet")
    with pytest.raises(ValueError, match=esc(repr(str(cut)))):
        fastndcg.evaluate(tmp_path)


def test_corrupt_data_pages(tmp_path):
    """A valid footer with garbage in the column data: the error comes while reading
    batches, still a ValueError naming the source."""
    n = 2000
    rng = np.random.default_rng(1)
    table = pa.table({"query_id": np.repeat(np.arange(n // 5), 5), "score": rng.random(n),
                      "label": rng.integers(0, 3, n)})
    path = tmp_path / "log.parquet"
    pq.write_table(table, path, compression="snappy")
    column = pq.ParquetFile(path).metadata.row_group(0).column(1)
    data = bytearray(path.read_bytes())
    start = column.data_page_offset
    for i in range(start, start + min(400, column.total_compressed_size)):
        data[i] = (data[i] * 7 + 13) % 256
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError, match=esc(f"cannot read {str(path)!r}") +
                       r".*not corrupt\? Write it again"):
        fastndcg.evaluate(path)


# --------------------------------------------------------------------------- values, options

def test_nan_scores_error_and_last():
    table = simple()
    score = table["score"].to_numpy().copy()
    score[[4, 5]] = np.nan  # both in query 101
    table = table.set_column(2, "score", pa.array(score))
    with pytest.raises(ValueError, match=r"NaN.*query 101\b.*nan_scores='last'"):
        fastndcg.evaluate(table, batch_rows=2)
    report = fastndcg.evaluate(table, nan_scores="last", batch_rows=2, k=[1, 2, 3])
    want = fastndcg.ndcg(score, table["label"].to_numpy(), query_ids=table["query_id"].to_numpy(),
                         k=[1, 2, 3], nan_scores="last")
    for i, name in enumerate(["ndcg@1", "ndcg@2", "ndcg@3"]):
        np.testing.assert_array_equal(report.per_query[name].to_numpy(), want[:, i])
    assert not any(math.isnan(v) for v in report.mean.values())


def test_nan_label_is_an_error():
    table = simple()
    label = table["label"].to_numpy().astype(np.float64)
    label[7] = np.nan
    table = table.set_column(3, "label", pa.array(label))
    with pytest.raises(ValueError, match=r"labels must be finite.*query 102\b"):
        fastndcg.evaluate(table)


@pytest.mark.parametrize("k,error,pattern", [
    (0, ValueError, "k must be >= 1, got 0"),
    (-1, ValueError, "k must be >= 1, got -1"),
    ("x", TypeError, "k must be an int, None or a sequence of ints, got 'x'"),
    ([], ValueError, "k is an empty sequence; pass at least one cutoff"),
    ([3, 0], ValueError, "k[1] must be >= 1, got 0"),
    ([1, "5"], TypeError, "k[1] must be an int >= 1, got '5'"),
    (2.5, TypeError, "k must be an int, None or a sequence of ints, got 2.5"),
    (True, TypeError, "k must be an int >= 1 or None, got True"),
    ([5, 5], ValueError, "k lists a cutoff twice"),
])
def test_bad_k(log, k, error, pattern):
    with pytest.raises(error, match=esc(pattern)):
        fastndcg.evaluate(log, k=k)


@pytest.mark.parametrize("option,value", [("ties", "random"), ("zero_idcg", "inf"),
                                          ("nan_scores", "first"), ("negative_labels", "clip"),
                                          ("gain", "exp")])
def test_bad_option_names_it(log, option, value):
    with pytest.raises(ValueError, match=esc(option) + r".*" + esc(repr(value))):
        fastndcg.evaluate(log, **{option: value})


def test_complete_without_qrels(log):
    with pytest.raises(ValueError, match=r"complete=True.*needs qrels=\.\.\."):
        fastndcg.evaluate(log, complete=True)


@pytest.mark.parametrize("batch_rows,error", [(0, ValueError), (-5, ValueError), (2.5, TypeError),
                                              (True, TypeError), (1 << 40, ValueError),
                                              (10 ** 30, ValueError)])
def test_bad_batch_rows(log, batch_rows, error):
    with pytest.raises(error, match=r"batch_rows must be .*got " + esc(f"{batch_rows:,}"
                                                                       if error is ValueError and batch_rows > 0
                                                                       else repr(batch_rows))):
        fastndcg.evaluate(log, batch_rows=batch_rows)


@pytest.mark.parametrize("source,name", [([1, 2, 3], "list"), ({"query_id": [1]}, "dict"),
                                         (42, "int"), (None, "NoneType"),
                                         (np.zeros((3, 3)), "ndarray")])
def test_unsupported_source_type(source, name):
    with pytest.raises(TypeError, match=esc(f"source: cannot read a {name} as a search log; pass a "
                                            f"Parquet file")):
        fastndcg.evaluate(source)


def test_column_name_not_a_string(log):
    with pytest.raises(TypeError, match=r"query must be a string \(a column name\), got 3"):
        fastndcg.evaluate(log, query=3)


def test_qrels_without_judgments(tmp_path, log):
    path = tmp_path / "qrels.txt"
    path.write_text("\n\n")
    with pytest.raises(ValueError, match=r"hold no judgments"):
        fastndcg.evaluate(log, qrels=path)


# --------------------------------------------------------------------------- TREC readers

RUN_ROWS = [("q1", "d1", 2.5), ("q1", "d2", 1.5), ("007", "d3", -0.03), ("q2", "D-4", 1e-3)]


def run_lines(sep=" ", extra="") -> str:
    return "".join(f"{q}{sep}Q0{sep}{d}{sep}{i + 1}{sep}{s!r}{sep}tag{extra}\n"
                   for i, (q, d, s) in enumerate(RUN_ROWS))


def expected_run(query="query_id", doc="doc_id", score="score") -> dict:
    return {query: [r[0] for r in RUN_ROWS], doc: [r[1] for r in RUN_ROWS],
            score: [r[2] for r in RUN_ROWS]}


@pytest.mark.parametrize("text", [
    run_lines(" "),
    run_lines("\t"),
    run_lines("   "),
    run_lines(" \t "),
    run_lines(" ", extra=" extra fields 7"),
    run_lines("\t", extra="\textra"),
    "\n" + run_lines(" ").replace("\n", "\n\n") + "   \n",
    run_lines(" ").replace("\n", "\r\n"),
    run_lines(" ").rstrip("\n"),
])
def test_read_trec_run_formats(tmp_path, text):
    path = tmp_path / "run.txt"
    path.write_text(text)
    table = read_trec_run(path)
    assert table.to_pydict() == expected_run()
    assert table.schema.field("score").type == pa.float64()
    for name in ("query_id", "doc_id"):
        t = table.schema.field(name).type
        assert pa.types.is_string(t) or pa.types.is_large_string(t)


def test_read_trec_run_gz_and_names(tmp_path):
    path = tmp_path / "run.txt.gz"
    with gzip.open(path, "wt") as f:
        f.write(run_lines("\t"))
    assert read_trec_run(str(path)).to_pydict() == expected_run()
    path2 = tmp_path / "run2.gz"
    with gzip.open(path2, "wt") as f:
        f.write(run_lines("  ", extra=" x"))
    assert read_trec_run(path2, query="q", doc="d", score="s").to_pydict() == \
        expected_run("q", "d", "s")


QREL_ROWS = [("1", "d1", 1), ("1", "d2", 0), ("007", "d1", 3), ("2", "x", 2)]


@pytest.mark.parametrize("sep,extra,blank", [(" ", "", False), ("\t", "", False),
                                             ("  ", "", True), (" ", " trailing", False),
                                             ("\t ", "\tmore fields", True)])
def test_read_trec_qrels_formats(tmp_path, sep, extra, blank):
    lines = [f"{q}{sep}0{sep}{d}{sep}{r}{extra}\n" for q, d, r in QREL_ROWS]
    text = ("\n" if blank else "").join(lines)
    path = tmp_path / "qrels.txt"
    path.write_text(text)
    table = read_trec_qrels(path)
    assert table.to_pydict() == {"query_id": [r[0] for r in QREL_ROWS],
                                 "doc_id": [r[1] for r in QREL_ROWS],
                                 "label": [r[2] for r in QREL_ROWS]}
    assert table.schema.field("label").type == pa.int64()


def test_read_trec_qrels_gz_and_fractional(tmp_path):
    path = tmp_path / "qrels.gz"
    with gzip.open(path, "wt") as f:
        f.write("1 0 d1 1\n1 0 d2 0.5\n2 0 d3 2.0\n")
    table = read_trec_qrels(path, label="rel")
    assert table.to_pydict() == {"query_id": ["1", "1", "2"], "doc_id": ["d1", "d2", "d3"],
                                 "rel": [1.0, 0.5, 2.0]}


@pytest.mark.parametrize("sep", [" ", "\t", "  "])
@pytest.mark.parametrize("reader,lines,line_no,pattern", [
    (read_trec_run, ["q1 Q0 d1 1 2.5 tag", "", "q1 Q0 d2 2", "q1 Q0 d3 3 1.0 tag"], 3,
     "expected 6 whitespace-separated fields (qid Q0 docno rank score tag), got 'q1 Q0 d2 2'"),
    (read_trec_run, ["q1 Q0 d1 1 2.5 tag", "", "", "q1 Q0 d2 2 abc tag"], 4,
     "field score must be a number, got 'abc'"),
    (read_trec_run, ["q1 Q0 d1 1 2.5 tag", "q1 Q0 d2 2 1,5 tag"], 2,
     "field score must be a number, got '1,5'"),
    (read_trec_qrels, ["1 0 d1 1", "1 0 d2 0", "", "1 0 d3"], 4,
     "expected 4 whitespace-separated fields (qid iter docno rel), got '1 0 d3'"),
    (read_trec_qrels, ["1 0 d1 1", "1 0 d2 high"], 2, "field rel must be a number, got 'high'"),
])
def test_trec_malformed_line(tmp_path, sep, reader, lines, line_no, pattern):
    path = tmp_path / "file.txt"
    path.write_text("\n".join(line.replace(" ", sep) for line in lines) + "\n")
    head = pattern.split(", got ")[0]
    with pytest.raises(ValueError, match=esc(f"{path}:{line_no}: {head}")) as err:
        reader(path)
    bad_line = lines[line_no - 1]
    # the offending line (or field) is shown as it is in the file
    if head.startswith("expected"):
        assert f"got {bad_line.replace(' ', sep)!r}" in str(err.value)
    else:
        assert "got " + pattern.split(", got ")[1] in str(err.value)
    assert "fix or remove the line" in str(err.value)


def test_trec_malformed_gz_line_number(tmp_path):
    path = tmp_path / "run.gz"
    with gzip.open(path, "wt") as f:
        f.write("q1 Q0 d1 1 2.5 tag\n\nq1 Q0 d2 2 x tag\n")
    with pytest.raises(ValueError, match=esc(f"{path}:3: field score must be a number, got 'x'")):
        read_trec_run(path)


def test_trec_missing_file_and_directory(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        read_trec_run(tmp_path / "none.txt")
    with pytest.raises(ValueError, match=esc(f"{str(tmp_path)!r} is a directory")):
        read_trec_qrels(tmp_path)


def test_trec_not_utf8(tmp_path):
    path = tmp_path / "run.txt"
    path.write_bytes(b"\xff\xfeq\x001 Q0 d1 1 2.5 tag\n")
    with pytest.raises(ValueError, match=r"not UTF-8 text"):
        read_trec_run(path)


def test_malformed_trec_run_through_evaluate(tmp_path):
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 d1 1 2.5 tag\nq1 Q0 d2 2 two tag\n")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\n")
    with pytest.raises(ValueError, match=esc(f"{run}:2: field score must be a number")):
        fastndcg.evaluate(run, qrels=qrels)
    qrels.write_text("q1 0 d1 1\nq1 0\n")
    run.write_text("q1 Q0 d1 1 2.5 tag\n")
    with pytest.raises(ValueError, match=esc(f"{qrels}:2: expected 4")):
        fastndcg.evaluate(run, qrels=qrels)


def test_a_table_s_chunks_do_not_move_its_means(log):
    """An Arrow table is read in batches of batch_rows rows wherever its chunks
    begin: the same rows cut into chunks of odd sizes give the same means, to the
    bit, as the table in one chunk."""
    whole = log.combine_chunks()
    cut = pa.Table.from_batches([b for start in range(0, log.num_rows, 37)
                                 for b in whole.slice(start, 37).to_batches()])
    assert cut.column(0).num_chunks > 1
    for batch_rows in (None, 50):
        extra = {} if batch_rows is None else {"batch_rows": batch_rows}
        a = fastndcg.evaluate(whole, k=[1, 5], **extra)
        b = fastndcg.evaluate(cut, k=[1, 5], **extra)
        same = [{k: v for k, v in r.to_dict().items() if k != "seconds"} for r in (a, b)]
        assert repr(same[0]) == repr(same[1])
