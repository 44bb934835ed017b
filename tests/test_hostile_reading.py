"""Hostile checks of reading TREC files in pieces (``fastndcg.trectext``).

A file of ``_PIECE`` bytes or more is cut into one piece a thread, each piece's
rows a chunk of the columns; whatever the cut, the file must read, and score, as
when read whole. ``_PIECE`` is made small here so that small files are read in
pieces, and the thread count is fixed so that the pieces do not depend on the
machine.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import fastndcg
import fastndcg._kernels.threads as threads
import fastndcg.trectext as T
from fastndcg.trectext import read_text


def _canon(text):
    """A read file as plain values (doubles by their bits), chunks joined."""
    if text is None:
        return None
    table = text.table.combine_chunks()
    out = {}
    for name in table.column_names:
        column = table.column(name)
        if pa.types.is_floating(column.type):
            out[name] = np.asarray(column.to_numpy()).view(np.int64).tolist()
        else:
            out[name] = column.to_pylist()
    return out, text.tag


def _both(monkeypatch, data: bytes, what: str, rules: str):
    """``data`` read in pieces (of about 40 bytes, on 5 threads) and read whole."""
    monkeypatch.setattr(threads, "thread_count", lambda: 5)
    monkeypatch.setattr(T, "_PIECE", 40)
    assert len(T._pieces(data if data.endswith(b"\n") else data + b"\n")) > 2 or len(data) < 80
    pieces = _canon(read_text(data, what, rules))
    monkeypatch.setattr(T, "_PIECE", 1 << 40)
    whole = _canon(read_text(data, what, rules))
    return pieces, whole


def _shuffled_files(tmp_path, seed: int = 1, n_q: int = 300):
    """A run whose lines are in no order of queries (each query's rows spread over
    every piece), and its qrels."""
    rng = np.random.default_rng(seed)
    lines, judged = [], []
    for q in range(n_q):
        for i, d in enumerate(rng.permutation(50)[:rng.integers(1, 30)]):
            lines.append(f"{q} Q0 D{d} {i} {rng.random():.3f} run\n")
        judged += [f"{q} 0 D{d} {rng.integers(0, 4)}\n" for d in rng.permutation(50)[:10]]
    rng.shuffle(lines)
    run, qrels = tmp_path / "run.txt", tmp_path / "qrels.txt"
    run.write_text("".join(lines))
    qrels.write_text("".join(judged))
    return run, qrels


def _means(report) -> dict:
    return {k: v.hex() for k, v in report.to_dict().items()
            if isinstance(v, float) and k != "seconds"}


# --------------------------------------------------------------------------- defects


def test_mean_of_a_file_read_in_pieces_has_the_bits_of_the_file_read_whole(tmp_path,
                                                                           monkeypatch):
    """The same run file gives the same means, to the bit, read in pieces as read
    whole: an in-memory table is read in batches of ``batch_rows`` rows wherever
    its chunks (here, the pieces) begin, so the means are summed in the same
    order."""
    run, qrels = _shuffled_files(tmp_path)
    measures = ["ndcg@10", "ap", "rr", "p@5", "bpref"]
    monkeypatch.setattr(threads, "thread_count", lambda: 4)
    monkeypatch.setattr(T, "_PIECE", 1000)
    assert fastndcg.io.read_trec_run(run).column("doc_id").num_chunks > 1
    pieces = fastndcg.evaluate(str(run), qrels=str(qrels), measure=measures)
    monkeypatch.setattr(T, "_PIECE", 1 << 40)
    whole = fastndcg.evaluate(str(run), qrels=str(qrels), measure=measures)
    assert pieces.per_query.equals(whole.per_query)
    assert _means(pieces) == _means(whole)


def test_mean_of_a_large_file_does_not_depend_on_the_thread_count(tmp_path, monkeypatch):
    """A run file large enough to be read in one piece a thread gets the same
    means on one thread as on two (through the command line's ``evaluate`` this
    once printed ndcg@10 0.04418817795729169 on one thread and
    0.044188177957292296 on two)."""
    rng = np.random.default_rng(7)
    n_q = 18000
    lines, judged = [], []
    for q in range(n_q):
        docs = rng.permutation(200)[:rng.integers(5, 25)]
        lines += [f"q{q} Q0 doc{d} {i} {s:.6f} myrun\n"
                  for i, (d, s) in enumerate(zip(docs, rng.random(len(docs))))]
        judged += [f"q{q} 0 doc{d} {rng.integers(0, 3)}\n" for d in rng.permutation(200)[:15]]
    rng.shuffle(lines)
    run, qrels = tmp_path / "big_run.txt", tmp_path / "q.txt"
    run.write_text("".join(lines))
    qrels.write_text("".join(judged))
    assert run.stat().st_size >= 2 * T._PIECE  # (two pieces on two threads)
    measures = ["ndcg@10", "ap", "rr"]
    got = {}
    for n in (1, 2):
        monkeypatch.setattr(threads, "thread_count", lambda n=n: n)
        got[n] = _means(fastndcg.evaluate(str(run), qrels=str(qrels), measure=measures))
    assert got[1] == got[2]


# --------------------------------------------------------------------------- edges that hold
# (passing tests: edges of the reading in pieces checked and found right, not
# covered elsewhere)


@pytest.mark.parametrize("rules", ["trec_eval", "io"])
def test_holds_cuts_next_to_blank_lines_crlf_and_no_final_newline(monkeypatch, rules):
    """pieces cut right before and after blank lines, lines
    ending in \\r\\n, and no final newline read as the file read whole."""
    lines = [f"q{i // 7} Q0 d{i} {i} {i / 3:.5f} tag{i}" for i in range(60)]
    for end in ("\n", "\r\n"):
        body = end.join(lines)
        for blanks in ("", end * 3, " \t" + end):
            data = (blanks + body.replace(f"{end}q3 ", f"{end}{blanks}q3 ") + blanks).encode()
            for tail in (b"", end.encode()):
                pieces, whole = _both(monkeypatch, data + tail, "run", rules)
                assert pieces == whole
                if rules == "io" or end == "\n":
                    assert whole is not None and len(whole[0]["query_id"]) == 60


@pytest.mark.parametrize("rules", ["trec_eval", "io"])
@pytest.mark.parametrize("odd", [b"# a comment\n", b"q9 Q0 d\xff 1 1 t\n", b"q9 Q0 d 1 nan t\n",
                                 b"q9 Q0 d 1 1\n", b"q9 Q0 d\x00 1 1 t\n"])
def test_holds_an_unusual_line_only_in_the_last_piece(monkeypatch, rules, odd):
    """a comment, invalid UTF-8, a NaN score, a field missing or
    a NUL byte in the last line only sends the whole file to the exact path (None),
    read in pieces or whole."""
    data = b"".join(b"q%d Q0 d%d %d %d.25 t\n" % (i, i, i, i) for i in range(200)) + odd
    pieces, whole = _both(monkeypatch, data, "run", rules)
    assert pieces is None and whole is None


@pytest.mark.parametrize("rules", ["trec_eval", "io"])
def test_holds_hard_numbers_in_every_piece(monkeypatch, rules):
    """scores the fast parser hands back as text (20+ digits,
    exponents past 1e22, 1e400, subnormals, halfway cases) in every piece, with
    the bits of Python's correctly rounded float()."""
    hard = ["12345678901234567890123.5", "1e400", "-1e400", "4.9e-324",
            "2.4703282292062328e-324", "1.7976931348623159e308", "1.e30", "-.5e-30",
            "0.1000000000000000055511151231257827", "1e0000000000000000000000000030"]
    texts = [hard[i % len(hard)] for i in range(120)]
    data = "".join(f"q{i % 9} Q0 d{i} {i} {t} r\n" for i, t in enumerate(texts)).encode()
    pieces, whole = _both(monkeypatch, data, "run", rules)
    assert pieces == whole
    want = np.array([float(t) for t in texts]).view(np.int64).tolist()
    assert whole[0]["score"] == want


def test_holds_minimal_lines_and_huge_grades_in_pieces(monkeypatch):
    """the shortest lines the row buffers are sized for
    ("1 0 2 3 4 5", "1 0 2 3"), and grades past 64 bits (C's atol holds them), in
    pieces as whole."""
    run = b"1 0 2 3 4 5\n" * 500
    pieces, whole = _both(monkeypatch, run, "run", "trec_eval")
    assert pieces == whole and len(whole[0]["score"]) == 500
    grades = [b"1", b"-3", b"9" * 25, b"-" + b"9" * 25, b"123456789012345"]
    qrels = b"".join(b"1 0 %d %s\n" % (i, grades[i % 5]) for i in range(400))
    for rules in ("trec_eval", "io"):
        pieces, whole = _both(monkeypatch, qrels, "qrels", rules)
        assert pieces == whole


def test_holds_duplicate_in_a_late_piece_through_the_command(tmp_path, monkeypatch, capsys):
    """a run that lists a document twice for a late query (in the
    last piece) stops ``fastndcg trec_eval`` with exit 4 after printing the queries
    before it (-q), read in pieces as whole; -M 1 drops the duplicate."""
    from fastndcg import cli

    lines = [f"{q} Q0 d{d} {d} {d / 10:.1f} r\n" for q in range(20) for d in range(8)]
    lines.append("19 Q0 d3 9 0.05 r\n")
    run, qrels = tmp_path / "run.txt", tmp_path / "qrels.txt"
    run.write_text("".join(lines))
    qrels.write_text("".join(f"{q} 0 d{d} {d % 3}\n" for q in range(20) for d in range(0, 8, 2)))
    monkeypatch.setattr(threads, "thread_count", lambda: 5)
    outs = []
    for piece in (200, 1 << 40):
        monkeypatch.setattr(T, "_PIECE", piece)
        for extra in ([], ["-M", "1"]):
            status = cli.main(["trec_eval", "-q", "-m", "map", *extra, str(qrels), str(run)])
            out, err = capsys.readouterr()
            outs.append((status, out, err.count("\n")))
    assert outs[:2] == outs[2:]
    assert outs[0][0] == 4 and outs[0][2] == 1 and out.count("\n") == 21
    assert outs[1][0] == 0
