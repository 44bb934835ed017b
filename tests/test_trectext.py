"""The compiled TREC text reader and printer (fastndcg.trectext) against their
specifications: C's printf and strtod (through ctypes, from the C library), and
the exact line-by-line readers of fastndcg trec_eval and fastndcg.io on random,
tie-heavy TREC text."""

from __future__ import annotations

import ctypes
import ctypes.util
import math
import struct

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings, strategies as st

from strategies import examples

from fastndcg import io, treceval
from fastndcg.trectext import print_lines, read_text

_LIBC = ctypes.CDLL(ctypes.util.find_library("c"))
_LIBC.snprintf.restype = ctypes.c_int
_LIBC.strtod.restype = ctypes.c_double
_LIBC.strtod.argtypes = [ctypes.c_char_p, ctypes.c_void_p]


def c_printf(fmt: bytes, value) -> str:
    buf = ctypes.create_string_buffer(512)
    arg = ctypes.c_double(value) if isinstance(value, float) else ctypes.c_long(value)
    _LIBC.snprintf(buf, 512, fmt, arg)
    return buf.value.decode()


def c_strtod(text: str) -> float:
    return _LIBC.strtod(text.encode(), None)


def bits(x: float) -> int:
    return struct.unpack("<q", struct.pack("<d", x))[0]


def printed(values, kind: str = "fixed4") -> list[str]:
    """Each value as print_lines prints it (the text after the query id)."""
    text = print_lines(["x\t"], [kind], [values], [str(i) for i in range(len(values))])
    return [line.split("\t")[2] for line in text.decode().splitlines()]


EDGES = [0.0, -0.0, 0.03125, 0.96875, 0.99995, 0.99994999999999999, 0.00005, 2.5e-5,
         1.5e-5, 0.5, 123.45675, 1e15, 1e16 + 2, 2.0 ** 63, 2.0 ** 64, 1e300, -1e20,
         1.7976931348623157e308, 5e-324, -5e-324, 0.1, 0.7, 1 / 3, -2 / 3, 9.99995, 99999.99995,
         math.inf, -math.inf, math.nan, -math.nan, 0.00015, 0.00025, 0.00035]


def test_fixed4_is_c_printf_on_edges():
    assert printed(EDGES) == [c_printf(b"%6.4f", v) for v in EDGES]


@settings(max_examples=examples(4), deadline=None)
@given(st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=1, max_size=50))
def test_fixed4_is_c_printf(values):
    assert printed(values) == [c_printf(b"%6.4f", v) for v in values]


@settings(max_examples=examples(4), deadline=None)
@given(st.lists(st.integers(0, 10 ** 8).map(lambda k: k / 10 ** 8 + 0.0), min_size=1,
                max_size=50))
def test_fixed4_at_the_rounding_point_is_c_printf(values):
    # values near a half of the 4th decimal: the rounding of the exact binary value counts
    near = [v + d for v in values for d in (0.0, 0.00005, -0.00005)]
    assert printed(near) == [c_printf(b"%6.4f", v) for v in near]


def test_long_is_c_printf():
    values = [0, 1, -1, 10, 2 ** 63 - 1, -2 ** 63, 123456789]
    assert printed(values, "long") == [c_printf(b"%ld", v) for v in values]


def test_lines_have_trec_evals_layout():
    text = print_lines([f"{'map':<22}\t", f"{'a_name_longer_than_22_chars':<22}\t", "r\t"],
                       ["fixed4", "long", "text"], [[0.5, 1.0], [3, 4], ["'1-'", "''"]],
                       ["q1", "q2"])
    assert text == (b"map                   \tq1\t0.5000\n"
                    b"a_name_longer_than_22_chars\tq1\t3\nr\tq1\t'1-'\n"
                    b"map                   \tq2\t1.0000\n"
                    b"a_name_longer_than_22_chars\tq2\t4\nr\tq2\t''\n")


# --------------------------------------------------------------------------- reading

DECIMALS = st.builds(
    lambda sign, whole, frac, exp: f"{sign}{whole}{frac}{exp}",
    st.sampled_from(["", "-", "+"]),
    st.sampled_from(["", "0", "1", "13", "007", "9007199254740993", "123456789012345678901"]),
    st.sampled_from([".", ".5", ".591", ".054600", ".1234567890123456789", ".000001", ""]),
    st.sampled_from(["", "e5", "E-3", "e+22", "e-22", "e23", "e-30", "e308", "e-320", "e999"]),
).filter(lambda t: any(c.isdigit() for c in t.split("e")[0].split("E")[0]))


@settings(max_examples=examples(4), deadline=None)
@given(st.lists(DECIMALS, min_size=1, max_size=30))
def test_scores_are_strtods_bits(scores):
    data = "".join(f"q Q0 d{i} 1 {s} t\n" for i, s in enumerate(scores)).encode()
    got = read_text(data, "run", "trec_eval").table.column("score").to_pylist()
    assert [bits(x) for x in got] == [bits(c_strtod(s)) for s in scores]


IDS = st.sampled_from(["1", "2", "10", "q1", "a-b", "\ufeffq", "é", "x" * 30])
SEPS = st.sampled_from([" ", "\t", "  ", " \t", "\r ", "\v", "\f"])
SCORES = st.sampled_from(["1", "1.0", "-0", "0.5", "2.5e-1", ".5", "1e400", "13.591",
                          "0.12345678901234567891", "3"])
GRADES = st.sampled_from(["0", "1", "2", "-1", "+3", "007", "99999999999999999999",
                          "-99999999999999999999"])


def _line(fields, seps, lead, trail):
    text = lead
    for i, f in enumerate(fields):
        text += f + (seps[i % len(seps)] if i < len(fields) - 1 else "")
    return text + trail


RUN_LINES = st.builds(
    lambda q, d, s, seps, lead, trail, extra: _line([q, "Q0", d, "1", s, "tag", *extra],
                                                     seps, lead, trail),
    IDS, IDS, SCORES, st.lists(SEPS, min_size=1, max_size=3), st.sampled_from(["", " "]),
    st.sampled_from(["", " ", "\r"]), st.sampled_from([[], ["x"]]))
QREL_LINES = st.builds(
    lambda q, d, g, seps, lead, trail: _line([q, "0", d, g], seps, lead, trail),
    IDS, IDS, GRADES, st.lists(SEPS, min_size=1, max_size=3), st.sampled_from(["", " "]),
    st.sampled_from(["", " ", "\r"]))


@settings(max_examples=examples(4), deadline=None)
@given(st.lists(RUN_LINES, min_size=1, max_size=30), st.booleans())
def test_run_reads_as_trec_evals_parser(lines, blank):
    data = ("\n".join(lines) + ("\n\n" if blank else "\n")).encode()
    got = read_text(data, "run", "trec_eval")
    table, tag, _ = treceval._line_by_line(data, "results", "run")
    assert got is not None
    assert got.table.equals(table) and got.tag == tag


@settings(max_examples=examples(4), deadline=None)
@given(st.lists(QREL_LINES, min_size=1, max_size=30))
def test_qrels_read_as_trec_evals_parser(lines):
    data = ("\n".join(lines) + "\n").encode()
    got = read_text(data, "qrels", "trec_eval")
    table, _, warning = treceval._line_by_line(data, "qrels", "qrels")
    assert got is not None and warning is None
    assert got.table.equals(table)


@pytest.mark.parametrize("data", [
    b"q 0 d 1\n\nq 0 e 1\n",          # a blank qrels line: refused line by line
    b"# c\nq 0 d 1\n",                 # a comment
    b"q 0 d 1.5\n",                    # a grade that is not whole: a warning
    b"q 0 d\n", b"q 0 d 1 x\n",        # not four fields
])
def test_unusual_qrels_go_line_by_line(data):
    assert read_text(data, "qrels", "trec_eval") is None


@pytest.mark.parametrize("data", [
    b"q Q0 d 1 1.5x t\n", b"q Q0 d 1 nan t\n", b"q Q0 d 1 0x10 t\n", b"q Q0 d 1 1.5\n",
    b"  # c\nq Q0 d 1 1 t\n", b"q Q0 \xff 1 1 t\n",
])
def test_unusual_runs_go_line_by_line(data):
    assert read_text(data, "run", "trec_eval") is None


IO_SEPS = st.sampled_from([" ", "\t", "  ", " \t"])


@settings(max_examples=examples(4), deadline=None)
@given(st.lists(st.builds(
    lambda q, d, s, seps, end, extra: _line([q, "Q0", d, "1", s, "tag", *extra], seps, "",
                                            end),
    st.sampled_from(["1", "q1", "a-b", "x" * 30]), st.sampled_from(["1", "d", "10"]),
    SCORES, st.lists(IO_SEPS, min_size=1, max_size=3), st.sampled_from(["", "\r", " "]),
    st.sampled_from([[], ["x"]])), min_size=1, max_size=30), st.booleans(), st.booleans())
def test_io_run_reads_as_before(tmp_path_factory, lines, blank, tag):
    path = tmp_path_factory.mktemp("io") / "run.txt"
    path.write_bytes(("\n".join(lines) + ("\n\n" if blank else "\n")).encode())
    take = io.run_columns()
    if tag:
        take[5] = ("tag", pa.large_string())
    want = io._slow_read(str(path), io._RUN_FIELDS, take)
    got = io.read_trec_run(path, tag="tag" if tag else None)
    assert got.equals(want)


def test_io_reads_by_the_compiled_reader(tmp_path):
    path = tmp_path / "qrels.txt"
    path.write_bytes(b"q1 0 d1 2\r\nq1 0 d2 0\r\n\r\n")
    assert read_text(path.read_bytes(), "qrels", "io").table.equals(io.read_trec_qrels(path))


def _cut_after(data: bytes, every: int) -> list:
    """Pieces of ``data`` cut right after every ``every``-th newline."""
    ends = [i + 1 for i, b in enumerate(data) if b == 10]
    return [0] + [e for e in ends[every - 1::every] if e < len(data)] + [len(data)]


@settings(max_examples=examples(4), deadline=None)
@given(st.lists(st.one_of(RUN_LINES, RUN_LINES, st.just(""), st.just("  ")), min_size=1,
                max_size=40),
       st.lists(QREL_LINES, min_size=1, max_size=40), st.integers(1, 5),
       st.sampled_from(["trec_eval", "io"]), st.none() | st.integers(0, 40))
def test_a_file_read_in_pieces_reads_as_in_one(runs, qrels, every, rules, odd):
    """Large files are read in several pieces at once and put together: whatever
    the cuts (a piece of blank lines only, a piece that is unusual, hard numbers in
    several pieces), the result is the one-piece reading's."""
    import fastndcg.trectext as T

    if odd is not None:  # an unusual line somewhere: the whole file is not read here
        runs = runs[:odd] + ["q Q0 d 1 1.5x t"] + runs[odd:]
    for what, lines in (("run", runs), ("qrels", qrels)):
        data = ("\n".join(lines) + "\n").encode()
        whole = read_text(data, what, rules, tag=True)
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(T, "_pieces", lambda d: _cut_after(d, every))
            pieces = read_text(data, what, rules, tag=True)
        assert (whole is None) == (pieces is None)
        if whole is not None:
            assert pieces.table.equals(whole.table) and pieces.tag == whole.tag
            pieces.table.validate(full=True)


def test_large_files_are_cut_into_pieces_at_line_starts():
    import fastndcg.trectext as T

    data = b"q Q0 d 1 1 t\n" * ((3 << 22) // 13)
    cuts = T._pieces(data)
    assert cuts[0] == 0 and cuts[-1] == len(data) and cuts == sorted(set(cuts))
    assert all(data[c - 1] == 10 for c in cuts[1:-1])


@pytest.mark.parametrize("rules", ["trec_eval", "io"])
def test_files_of_the_shortest_lines_fill_their_buffers(rules, monkeypatch):
    """The buffers are sized for the most rows a piece's bytes can hold (a run line
    of six one-byte fields, a qrels line of four): files of such lines only, whole
    and in pieces, and one with an incomplete last line."""
    import fastndcg.trectext as T

    run = b"1 0 2 3 4 5\n" * 50
    qrels = b"1 0 2 3\n" * 50
    assert len(run) // 50 == 12 and len(qrels) // 50 == 8
    for cut in (None, 1, 7):
        if cut:
            monkeypatch.setattr(T, "_pieces", lambda d, c=cut: _cut_after(d, c))
        got = read_text(run, "run", rules)
        assert got.table.num_rows == 50 and got.table.column("score").to_pylist() == [4.0] * 50
        got = read_text(qrels, "qrels", rules)
        assert got.table.num_rows == 50 and got.table.column("label").to_pylist() == [3] * 50
        assert read_text(run + b"1 0 2 3 4", "run", rules) is None  # five fields
        assert read_text(qrels + b"1 0 2", "qrels", rules) is None


def test_a_large_file_scores_as_when_read_in_one_piece(tmp_path, monkeypatch):
    """A file large enough to be read in pieces (several chunks a column) is scored
    as the same file read whole, by evaluate and by the trec_eval command."""
    import contextlib
    import io as _io

    import numba

    import fastndcg
    import fastndcg.trectext as T
    from fastndcg import cli

    rng = np.random.default_rng(3)
    n_q, per = 2000, 60
    lines = [f"{q} Q0 doc{d} {i} {s:.3f} run\n" for q in range(n_q) for i, (d, s) in
             enumerate(zip(rng.choice(10**6, per, replace=False), rng.random(per)))]
    run = tmp_path / "run.txt"
    run.write_text("".join(lines))
    if numba.get_num_threads() < 2:
        pytest.skip("one thread: files are read in one piece")
    monkeypatch.setattr(T, "_PIECE", run.stat().st_size // 3)
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 {line.split()[2]} {rng.integers(0, 3)}\n"
                             for q, line in zip(np.repeat(np.arange(n_q), per), lines)
                             if rng.random() < 0.3))

    def both():
        report = fastndcg.evaluate(str(run), qrels=str(qrels), preset="trec_eval",
                                   measure=["map", "ndcg_cut.10", "P.5"])
        out = _io.StringIO()
        with contextlib.redirect_stdout(out):
            assert cli.main(["trec_eval", "-q", "-m", "all_trec", str(qrels), str(run)]) == 0
        return report.per_query, out.getvalue()

    assert fastndcg.io.read_trec_run(run).column("doc_id").num_chunks > 1  # pieces
    pieces = both()
    monkeypatch.setattr(T, "_PIECE", 1 << 40)
    whole = both()
    assert pieces[0].equals(whole[0]) and pieces[1] == whole[1]
