"""The shared validators (``fastndcg._validate``) and the entry points that use
them: one output guard for every written path (links followed), empty values
refused on the command line, bounded work, NUL bytes named, contradictions
refused. Every case checks the message names the parameter and the value or the
fix, and that no input file changed."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings, strategies as st

import fastndcg
from fastndcg import _validate as V
from fastndcg import cli


def digest(path) -> str:
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


@pytest.fixture()
def log(tmp_path):
    rng = np.random.default_rng(0)
    q = np.repeat(np.arange(20), 5)
    table = pa.table({"query_id": q, "doc_id": np.arange(len(q)),
                      "score": rng.random(len(q)), "score_b": rng.random(len(q)),
                      "label": rng.integers(0, 3, len(q))})
    path = tmp_path / "log.parquet"
    pq.write_table(table, path)
    return path


def one_line_error(argv, capsys) -> str:
    rc = cli.main(argv)
    err = capsys.readouterr().err
    assert rc != 0, argv
    assert err.startswith("fastndcg: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    return err


@pytest.mark.parametrize("argv,named", [
    (["evaluate", "{log}", "--per-query", ""], "--per-query"),
    (["evaluate", "{log}", "--per-query", "   "], "--per-query"),
    (["evaluate", "{log}", "--explain", ""], "--explain"),
    (["evaluate", "{log}", "--scheduler", ""], "--scheduler"),
    (["evaluate", ""], "an input"),
    (["evaluate", "{log}", "--score-col", ""], "--score-col"),
    (["compare", "{log}", "--systems", "score,score_b", "--plot", ""], "--plot"),
])
def test_empty_values_are_refused_on_the_command_line(argv, named, log, capsys):
    before = digest(log)
    err = one_line_error([a.replace("{log}", str(log)) for a in argv], capsys)
    assert named in err and "empty" in err, err
    assert digest(log) == before


def test_per_query_empty_string_in_python(log, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match=r"per_query is an empty path \(''\)"):
        fastndcg.evaluate(str(log), per_query="")
    assert sorted(os.listdir(tmp_path)) == ["log.parquet"]  # nothing written here


def test_plot_onto_a_link_to_the_log_is_refused(log, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    link = tmp_path / "plot.png"
    os.symlink(log, link)
    before = digest(log)
    err = one_line_error(["compare", str(log), "--systems", "score,score_b", "-k", "3",
                          "--resamples", "100", "--plot", str(link)], capsys)
    assert "--plot" in err and "which this command reads" in err, err
    result = fastndcg.compare(str(log), ["score", "score_b"], k=3, n_resamples=100)
    with pytest.raises(ValueError, match=r"path .*plot.png.* which this command reads"):
        result.plot(link)
    assert digest(log) == before


def test_plot_extension_and_directory(log, tmp_path):
    pytest.importorskip("matplotlib")
    result = fastndcg.compare(str(log), ["score", "score_b"], k=3, n_resamples=100)
    with pytest.raises(ValueError, match=r"path must name a \.png.*out\.parquet'"):
        result.plot(tmp_path / "out.parquet")
    with pytest.raises(ValueError, match="is a directory; name a file"):
        result.plot(tmp_path)


def test_per_query_through_a_link_to_the_input(log, tmp_path):
    link = tmp_path / "results.parquet"
    os.symlink(log, link)
    before = digest(log)
    with pytest.raises(ValueError, match=r"per_query .*results.parquet.* which this command "
                                         r"reads \(links followed\)"):
        fastndcg.evaluate(str(log), per_query=str(link))
    assert digest(log) == before


def test_fifo_output_is_refused(tmp_path):
    fifo = tmp_path / "pipe.parquet"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match="not a regular file or directory"):
        V.output_path(str(fifo), "per_query", exts=(".parquet",))


@pytest.mark.parametrize("queries,named", [(10 ** 23, "queries"), (10 ** 9 + 1, "queries")])
def test_synthetic_log_size_is_bounded(queries, named, tmp_path, capsys):
    err = one_line_error(["synth", "--queries", str(queries), "--out",
                          str(tmp_path / "x.parquet")], capsys)
    assert named in err and "<=" in err, err
    assert not os.path.exists(tmp_path / "x.parquet")


def test_synthetic_log_that_cannot_fit_is_refused(tmp_path, capsys):
    err = one_line_error(["synth", "--queries", str(10 ** 9), "--mean-docs", "1000", "--out",
                          str(tmp_path / "x.parquet")], capsys)
    assert "x.parquet" in err and "GiB" in err, err


def test_nul_bytes_are_named():
    with pytest.raises(ValueError, match="NUL byte"):
        fastndcg.evaluate("log\0.parquet")
    with pytest.raises(ValueError, match="per_query contains a NUL byte"):
        V.output_path("a\0b.parquet", "per_query")
    with pytest.raises(ValueError, match="NUL byte"):
        V.text("col\0umn", "score")


@given(st.one_of(st.text(max_size=30), st.binary(max_size=10), st.integers(), st.none(),
                 st.floats(allow_nan=True)))
@settings(max_examples=200, deadline=None)
def test_output_path_never_leaks_a_raw_error(value):
    """Any value either passes or raises TypeError/ValueError naming the parameter."""
    try:
        V.output_path(value, "per_query", exts=(".parquet",))
    except (TypeError, ValueError) as err:
        assert "per_query" in str(err), err


def test_count_bounds_and_kinds():
    assert V.count(5, "n", hi=10) == 5
    for bad, kind in [(0, ValueError), (11, ValueError), (True, TypeError), (2.0, TypeError),
                      ("3", TypeError)]:
        with pytest.raises(kind, match="n must be"):
            V.count(bad, "n", hi=10)


def test_shown_shortens_long_values():
    text = V.shown("x" * 500)
    assert len(text) == V.MAX_SHOWN and "..." in text and text.endswith("xx'")


def test_python_m_fastndcg_empty_option_is_one_line(log):
    done = subprocess.run([sys.executable, "-m", "fastndcg", "evaluate", str(log),
                           "--per-query", ""], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr.startswith("fastndcg: error: --per-query is empty")
    assert done.stderr.count("\n") == 1


def test_report_write_goes_through_the_guard(log, tmp_path):
    report = fastndcg.evaluate(str(log), k=3, per_query=None)
    with pytest.raises(ValueError, match=r"path must name a \.parquet, \.pq, \.csv file"):
        report.write(tmp_path / "out.txt")
    with pytest.raises(ValueError, match="is a directory; name a file"):
        report.write(tmp_path)
    with pytest.raises(ValueError, match="empty path"):
        report.write("")
    report.write(tmp_path / "out.csv")
    assert open(tmp_path / "out.csv").readline().startswith('"query_id"')
    report.write(tmp_path / "out.parquet")
    assert pq.read_table(tmp_path / "out.parquet").num_rows == 20
