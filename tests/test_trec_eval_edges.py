"""``fastndcg trec_eval`` on the edges of its inputs, against the real trec_eval 10.

Each input is given to the binary built from ``tests/trec_eval`` (the oracle) and to
the command: the same standard output, byte for byte, and the same exit status.
Where trec_eval crashes (a signal, no status to copy) the command refuses: a status
other than 0, nothing on standard output, one line on standard error naming the
file and line. Messages are checked for what they name and the fix they offer: the
command's give fixes that apply on its command line (the trec_eval options, the
files), never the Python API's; the API's name the user's objects (``qrels=``,
``source=``, the file and line) and a fix.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import subprocess
import sys
import types
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import given, settings, strategies as st

from strategies import examples

import fastndcg
from fastndcg import cli

QRELS = b"q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 2\nq2 0 d1 1\nq2 0 d4 0\n"
RUN = (b"q1 Q0 d1 1 0.5 run\nq1 Q0 d2 2 0.9 run\nq1 Q0 d3 3 0.1 run\n"
       b"q2 Q0 d4 1 3 run\nq2 Q0 d5 2 1 run\nq2 Q0 d1 3 0.5 run\n")
ALL = ["-q", "-m", "all_trec"]


def _command(args: list[str], stdin: bytes | None = None) -> subprocess.CompletedProcess:
    """``fastndcg trec_eval ARGS`` in this process (standard input ``stdin``)."""
    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdin
    if stdin is not None:
        sys.stdin = types.SimpleNamespace(buffer=io.BytesIO(stdin))
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = cli.main(["trec_eval", *args])
    finally:
        sys.stdin = saved
    return subprocess.CompletedProcess(args, status, out.getvalue(), err.getvalue())


def _files(tmp_path: Path, qrels: bytes, run: bytes) -> list[str]:
    q, r = tmp_path / "qrels.txt", tmp_path / "run.txt"
    q.write_bytes(qrels)
    r.write_bytes(run)
    return [str(q), str(r)]


def _both(binary: Path, args: list[str], stdin: bytes | None = None) -> tuple:
    want = subprocess.run([str(binary), *args], input=stdin or b"", capture_output=True,
                          timeout=120)
    return want, _command(args, stdin)


def _same(binary: Path, args: list[str], stdin: bytes | None = None) -> subprocess.CompletedProcess:
    """The command prints what trec_eval prints and exits as it exits."""
    want, got = _both(binary, args, stdin)
    assert want.returncode >= 0, (args, want.returncode)  # trec_eval did not crash
    assert (got.returncode, got.stdout) == (want.returncode, want.stdout.decode()), (
        args, got.stderr, want.stderr)
    if got.returncode:
        assert got.stderr.count("\n") == 1, got.stderr
    return got


def _crash(binary: Path, args: list[str], status: int, *words: str) -> str:
    """trec_eval crashes (killed by a signal); the command refuses with ``status``,
    printing nothing, in one line holding ``words``."""
    want, got = _both(binary, args)
    assert want.returncode < 0, (args, want.returncode)
    assert (got.returncode, got.stdout) == (status, ""), got.stderr
    assert got.stderr.count("\n") == 1 and all(w in got.stderr for w in words), got.stderr
    return got.stderr


def test_grades_and_scores_are_read_as_trec_eval_reads_them(trec_eval_bin, tmp_path):
    """The grade is C's atol of the field ('1.5' -> 1, '2.7' -> 2, '-0.5' -> 0, '1e3'
    -> 1, 'abc' -> 0), with one warning naming the qrels file and the first such line;
    the score is C's atof ('abc' -> 0, '1.5x' -> 1.5, '0x1p3' -> 8, '1e' -> 1), and
    the rank and iter fields are not read (anything goes)."""
    qrels = (b"q1 0 d1 1\nq1 0 d2 1.5\nq1 0 d3 2.7\nq2 0 d1 -0.5\nq2 0 d4 1e3\n"
             b"q2 0 d5 abc\nq2 0 d6 2\n")
    args = [*ALL, "-m", "relstring", *_files(tmp_path, qrels, RUN)]
    got = _same(trec_eval_bin, args)
    assert got.stderr.count("\n") == 1 and got.stderr.startswith("fastndcg trec_eval: warning:")
    assert f"{args[-2]}:2:" in got.stderr and "'1.5'" in got.stderr  # the first such line
    # the numbers are those of the grades atol reads, without a warning then
    whole = qrels.replace(b"1.5", b"1").replace(b"2.7", b"2").replace(b"-0.5", b"0") \
                 .replace(b"1e3", b"1").replace(b"abc", b"0")
    (tmp_path / "whole").mkdir()
    plain = _command([*ALL, "-m", "relstring", *_files(tmp_path / "whole", whole, RUN)])
    assert plain.stderr == "" and plain.stdout == got.stdout
    run = (b"q1 Q0 d1 x abc run\nq1 Q0 d2 2 1.5x run\nq1 Q0 d3 - 0x1p3 run\n"
           b"q2 iter d4 1 1e run\nq2 Q0 d5 2 -.5e1 run extra fields\nq2 Q0 d1 3 INF run\n")
    got = _same(trec_eval_bin, [*ALL, *_files(tmp_path, QRELS, run)])
    assert got.stderr.count("\n") == 1 and ":1: score 'abc' read as 0.0" in got.stderr


def test_comment_lines_as_trec_eval_reads_them(trec_eval_bin, tmp_path):
    """trec_eval's qrels reader skips a line starting with '#' and reads the next line
    as a judgment whatever it holds; its run reader skips every line whose first
    non-blank character is '#' (the tag is the last real line's)."""
    cases = [
        (b"# judgments\n" + QRELS, RUN),
        (QRELS[:20] + b"# in the middle\n" + QRELS[20:], RUN),
        (b"# a b c\n# x y z\n" + QRELS, RUN),         # '# x y z' judges: a query named '#'
        (b"# first\n# second comment\n" + QRELS, RUN),  # 3 fields: trec_eval stops (2)
        (b"# a b c\n# x y z\n" + QRELS, RUN + b"# Q0 y 1 1 run\n"),
        (QRELS, b"# run comment\n" + RUN[:38] + b"  # indented 1 2 3 4 5\n\n   \n" + RUN[38:]
         + b"# last comment naming another tag\n"),
    ]
    for i, (qrels, run) in enumerate(cases):
        d = tmp_path / str(i)
        d.mkdir()
        for extra in ([], ["-c"]):
            _same(trec_eval_bin, [*ALL, *extra, *_files(d, qrels, run)])


def test_where_trec_eval_stops_the_command_stops(trec_eval_bin, tmp_path):
    """A grade past the 64-bit range, a first query whose grades are all negative and a
    document judged twice stop trec_eval (exit 4, the queries before it printed with
    -q); a byte-order mark is part of the first query id (a query the run lacks); a NUL
    byte inside a line crashes trec_eval, and the command refuses it (exit 2)."""
    big = b"q1 0 d1 99999999999999999999\n" + QRELS[10:]
    _same(trec_eval_bin, [*ALL, *_files(tmp_path, big, RUN)])
    _crash(trec_eval_bin, [*ALL, *_files(tmp_path, QRELS + b"q3 0 d1 99999999999999999999\n",
                                          RUN + b"q3 Q0 d1 1 1 run\n")], 4, "'q3'")
    _same(trec_eval_bin, [*ALL, *_files(tmp_path, b"q0 0 d1 -1\n" + QRELS,
                                        RUN + b"q0 Q0 d1 1 1 run\n")])
    _same(trec_eval_bin, [*ALL, *_files(tmp_path, QRELS + b"q2 0 d1 2\n", RUN)])
    _same(trec_eval_bin, [*ALL, *_files(tmp_path, QRELS, RUN + b"q2 Q0 d4 9 0 run\n")])
    bom = _same(trec_eval_bin, [*ALL, *_files(tmp_path, b"\xef\xbb\xbf" + QRELS, RUN)])
    assert "byte-order mark" in bom.stderr and bom.stdout  # q2's lines, then the stop
    _same(trec_eval_bin, [*ALL, "-c", *_files(tmp_path, b"\xef\xbb\xbf" + QRELS, RUN)])
    _same(trec_eval_bin, [*ALL, *_files(tmp_path, QRELS, b"\xef\xbb\xbf" + RUN)])
    nul = QRELS.replace(b"d2 0", b"d2\0x 0")
    files = _files(tmp_path, nul, RUN)
    _crash(trec_eval_bin, [*ALL, *files], 2, f"{files[0]}:2:", "NUL")
    files = _files(tmp_path, QRELS, RUN.replace(b"d5", b"d\x005"))
    _crash(trec_eval_bin, [*ALL, *files], 2, f"{files[1]}:5:", "NUL")
    # at the start of a line, a NUL ends the file for trec_eval
    _same(trec_eval_bin, [*ALL, *_files(tmp_path, QRELS, RUN[:38] + b"\0" + RUN[38:])])


def test_inputs_trec_eval_takes_are_taken(trec_eval_bin, tmp_path):
    """-M 0 (every ranking empty), -c -M 0, -J leaving every query without a
    document, -c -J, and '-' for standard input (the run; a qrels file named '-' is a
    file) print what trec_eval prints."""
    files = _files(tmp_path, QRELS, RUN)
    unjudged = RUN.replace(b" d1 ", b" u1 ").replace(b" d2 ", b" u2 ").replace(b" d3 ", b" u3 ") \
                  .replace(b" d4 ", b" u4 ")
    lacking = b"".join(line + b"\n" for line in unjudged.splitlines() if line.startswith(b"q1"))
    for extra in (["-M", "0"], ["-c", "-M", "0"], ["-J", "-M", "0"],
                  ["-m", "utility.1,-1,2,1", "-N", "100", "-m", "relstring.3", "-M", "0"]):
        _same(trec_eval_bin, [*ALL, *extra, *files])
    _same(trec_eval_bin, ["-c", "-M", "0", *files])
    _same(trec_eval_bin, [*ALL, "-J", *_files(tmp_path, QRELS, unjudged)])
    _same(trec_eval_bin, [*ALL, "-c", "-J", *_files(tmp_path, QRELS, lacking)])
    _same(trec_eval_bin, [*ALL, files[0], "-"], stdin=RUN)
    _same(trec_eval_bin, [*ALL, files[0], "-"], stdin=b"# only a comment\n")
    missing = _same(trec_eval_bin, [*ALL, "-", files[1]], stdin=QRELS)
    assert "qrels file '-'" in missing.stderr


def test_command_messages_give_command_line_fixes(trec_eval_bin, tmp_path):
    """What the shared readers and evaluate would say in the Python API's words
    (nan_scores='last', rel=2, "the Arrow table") is said in the command's: the file
    and line, and a fix on the command line or in the file."""
    nan = RUN.replace(b"0.9", b"nan")
    files = _files(tmp_path, QRELS, nan)
    got = _command([*ALL, *files])
    assert got.returncode == 2 and got.stdout == "" and got.stderr.count("\n") == 1
    assert f"{files[1]}:2:" in got.stderr and "nan_scores" not in got.stderr
    assert "run file" in got.stderr
    # a level past every grade: nothing relevant, as trec_eval prints it (not 'rel=2')
    files = _files(tmp_path, QRELS, RUN)
    got = _same(trec_eval_bin, ["-q", "-m", "map", "-m", "P.5", "-m", "ndcg",
                                "-l", "100000000000000000", *files])
    assert got.stderr == ""
    for args in (["-m", "map", *files[:1], str(tmp_path / "absent.run")],
                 ["-m", "map", *_files(tmp_path, QRELS, b"q1 Q0 d1 1 0.5\n")]):
        got = _same(trec_eval_bin, args)
        assert not any(w in got.stderr for w in ("=", "Arrow", "Error:", "nan_scores"))
        assert "run" in got.stderr


def test_api_messages_name_the_users_objects(tmp_path):
    """evaluate's messages name the argument (qrels=, source=) or the file and line,
    and a fix; never its internals."""
    run = pa.table({"query_id": ["q1", "q1", "q2"], "doc_id": ["d1", "d2", "d1"],
                    "score": [1.0, 2.0, 1.0]})
    qrels = pa.table({"query_id": ["q1", "q1", "q2"], "doc_id": ["d1", "d2", "d1"],
                      "label": [1, 0, 1]})
    run_file = tmp_path / "run.txt"
    run_file.write_text("q1 Q0 d1 1 0.5 r\nq1 Q0 d2 2 high r\n")
    cases = [
        (dict(source=run, qrels=qrels.slice(0, 0)), ValueError, "qrels=", "row per judgment"),
        (dict(source=run.slice(0, 0), qrels=qrels), ValueError, "source=", "rows to score"),
        (dict(source=run, qrels=qrels.drop_columns(["doc_id"])), ValueError, "qrels=", "doc="),
        (dict(source=run, qrels=qrels.set_column(2, "label", pa.array(["1", "0", "1"]))),
         TypeError, "qrels=", "cast it"),
        (dict(source=str(run_file), qrels=qrels), ValueError, f"{run_file}:2:", "fix or remove"),
        (dict(source=itertools.tee(iter([1, 2]))[0], qrels=qrels), TypeError, "source:",
         "pass a Parquet file"),
        (dict(source=run, qrels=itertools.tee(iter([1, 2]))[0]), TypeError, "qrels:",
         "pass a TREC qrels file"),
        (dict(source=run, qrels=pa.concat_tables([qrels, qrels])), ValueError, "qrels:",
         "keep one judgment"),
        (dict(source=run, qrels=qrels.set_column(1, "doc_id", pa.array(["d1", None, "d1"]))),
         ValueError, "qrels:", "fill"),
    ]
    internal = ("the qrels the", "_tee", "ArrowInvalid", "ArrowTypeError", "KeyError",
                "could not convert", "cannot read a _")
    for kwargs, error, names, fix in cases:
        source = kwargs.pop("source")
        with pytest.raises(error) as err:
            fastndcg.evaluate(source, **kwargs)
        text = str(err.value)
        assert names in text and fix in text, text
        assert not any(word in text for word in internal), text


@settings(max_examples=examples(2), deadline=None)
@given(st.lists(st.lists(st.sampled_from([0.0, -0.0, 0.5, 1.0, 1.0, 2.0, -3.0, float("inf"),
                                          float("nan")]), min_size=1, max_size=30),
                min_size=1, max_size=8), st.integers(1, 12))
def test_top_rows_of_each_query_as_numpy_partitions(groups, k):
    """-M's selection (a compiled pass per query) keeps, in each query longer than
    -M, the rows at or above its -M-th largest score, as NumPy's partition finds it
    (NaN ordered last), on tie-heavy scores."""
    import numpy as np

    from fastndcg._core import at_or_above_kth

    offsets = np.cumsum([0] + [len(g) for g in groups]).astype(np.int64)
    scores = np.array([s for g in groups for s in g], np.float64)
    longer = np.flatnonzero(np.diff(offsets) > k).astype(np.int64)
    keep, unsure = at_or_above_kth(offsets, longer, scores, k)
    for j, g in enumerate(longer):
        part = scores[offsets[g]:offsets[g + 1]]
        assert unsure[j] == bool(np.isnan(part).any())
        if not unsure[j]:
            kth = -np.partition(-part, k - 1)[k - 1]
            assert keep[offsets[g]:offsets[g + 1]].tolist() == (part >= kth).tolist()


def test_a_document_listed_twice_stops_where_trec_eval_stops(trec_eval_bin, tmp_path):
    """The run's documents listed twice are found by the evaluation itself, and where
    trec_eval stops is then found again: the same output and status as trec_eval's
    wherever the duplicate is (the first query, after a query the run lacks, before
    a grade trec_eval cannot count), with and without -q, -c, -M (which may drop one
    copy) and -J."""
    qrels = QRELS + b"q3 0 d1 1\nq4 0 d2 1\n"
    twice_q1 = RUN + b"q1 Q0 d2 4 0.05 run\n"
    twice_q2 = RUN + b"q2 Q0 d4 9 0 run\n"
    later = RUN + b"q4 Q0 d2 1 1 run\nq4 Q0 d2 2 0.5 run\n"  # q3 lacking before it
    sooner = twice_q1 + b"q4 Q0 d2 1 1 run\n"                 # q3 lacking after it
    huge = qrels + b"q4 0 d9 99999999999999999999\n"          # q4's grades: no table
    cases = [(QRELS, twice_q1), (QRELS, twice_q2), (qrels, later), (qrels, sooner),
             (huge, twice_q2 + b"q3 Q0 d1 1 1 run\nq4 Q0 d2 1 1 run\n")]
    options = [ALL, ["-m", "map"], ["-q", "-c", "-m", "all_trec"],
               ["-q", "-M", "2", "-m", "all_trec"], ["-q", "-J", "-m", "all_trec"],
               ["-q", "-m", "relstring"], ["-q", "-m", "runid"]]
    for i, (q, r) in enumerate(cases):
        d = tmp_path / str(i)
        d.mkdir()
        files = _files(d, q, r)
        for extra in options:
            want, got = _both(trec_eval_bin, [*extra, *files])
            if want.returncode < 0:  # trec_eval crashed: the command refuses instead
                assert got.returncode > 0 and got.stdout == "", (extra, i)
                assert got.stderr.count("\n") == 1, got.stderr
            else:
                assert (got.returncode, got.stdout) == (want.returncode, want.stdout.decode()), (
                    extra, i, got.stderr, want.stderr)
