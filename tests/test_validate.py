"""The shared validators (``fastndcg._validate``) and the entry points that use
them: one output guard for every written path (links followed), empty values
refused on the command line, bounded work, NUL bytes named, contradictions
refused. Every case checks the message names the parameter and the value or the
fix, and that no input file changed."""

from __future__ import annotations

import hashlib
import os
import re
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

from strategies import examples


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
@settings(max_examples=examples(2), deadline=None)
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


def test_report_write_never_over_its_inputs(log, tmp_path):
    """A report remembers the files its evaluation read; write() refuses them, links
    followed (before, this overwrote the log)."""
    link = tmp_path / "results.parquet"
    os.symlink(log, link)
    before = digest(log)
    report = fastndcg.evaluate(str(log), k=3)
    for target in (log, link):
        with pytest.raises(ValueError, match=r"path .* which this command reads"):
            report.write(target)
    assert digest(log) == before


@pytest.mark.parametrize("special", ["fifo", "/dev/null"])
def test_fifo_or_device_as_an_input_is_refused_before_opening(special, log, tmp_path, capsys):
    path = str(tmp_path / "pipe") if special == "fifo" else special
    if special == "fifo":
        os.mkfifo(path)  # opening it to read would block for ever
    kind = "a FIFO" if special == "fifo" else "a device"
    shown = re.escape(V.shown(path))  # a long path is shortened in the middle
    with pytest.raises(ValueError, match=rf"source {shown} is {kind}, not a file"):
        fastndcg.evaluate(path)
    with pytest.raises(ValueError, match=rf"qrels {shown} is {kind}"):
        fastndcg.evaluate(str(log), qrels=path)
    err = one_line_error(["evaluate", path, "--qrels", str(log)], capsys)
    assert V.shown(path) in err and kind in err, err


def test_synth_replaces_only_a_synthetic_log(log, tmp_path, capsys):
    before = digest(log)
    link = tmp_path / "new.parquet"
    os.symlink(log, link)
    for out in (log, link):  # someone's data, directly or through a link
        err = one_line_error(["synth", "--queries", "5", "--out", str(out), "--quiet"], capsys)
        assert "--out" in err and "not a synthetic log" in err, err
        err = one_line_error(["demo", "--queries", "5", "--keep", str(out), "--quiet"], capsys)
        assert "--keep" in err and "not a synthetic log" in err, err
    assert digest(log) == before
    own = tmp_path / "deep" / "er" / "synth.parquet"  # missing folders are made
    assert cli.main(["synth", "--queries", "5", "--out", str(own), "--quiet"]) == 0
    assert cli.main(["synth", "--queries", "7", "--out", str(own), "--quiet"]) == 0  # its own
    assert len(set(pq.read_table(own)["query_id"].to_pylist())) == 7


def test_yes_no_parameters_take_bools_only(log):
    for name in ("progress", "complete"):
        with pytest.raises(TypeError, match=rf"{name} must be True or False, got 'no'"):
            fastndcg.evaluate(str(log), **{name: "no"})
    assert fastndcg.evaluate(str(log), k=3, progress=np.bool_(False)).n_queries == 20
    with pytest.raises(TypeError, match="portable must be True or False, got 1"):
        fastndcg.warmup(portable=1)
    with pytest.raises(TypeError, match="stream must be a text stream"):
        fastndcg.warmup(stream=5)


def test_cutoffs_and_thresholds_share_their_bounds(log, capsys):
    s, r, o = [0.5, 0.2], [1, 0], [0, 2]
    with pytest.raises(ValueError, match=r"k must be <= 1,000,000,000, got 10,000,000,000"):
        fastndcg.ndcg(s, r, o, k=10 ** 10)
    with pytest.raises(ValueError, match=r"k\[1\] must be <= "):
        fastndcg.evaluate(str(log), k=[3, 2 ** 63])
    with pytest.raises(ValueError, match=r"rel must be an integer from 0 to 9007199254740992"):
        fastndcg.measure(s, r, o, measure="P@1", rel=2 ** 60)
    err = one_line_error(["evaluate", str(log), "-k", str(10 ** 10)], capsys)
    assert "-k" in err and "1000000000" in err, err
    err = one_line_error(["evaluate", str(log), "-l", str(2 ** 60)], capsys)
    assert "--rel" in err and str(2 ** 60) in err, err
    with pytest.raises(ValueError, match=r"batch_rows must be <= "):
        fastndcg.evaluate(str(log), batch_rows=10 ** 30)


def test_an_unread_doc_column_is_refused(log):
    with pytest.raises(ValueError, match=r"doc='docno' names the document column, which is "
                                         r"read only with qrels="):
        fastndcg.evaluate(str(log), doc="docno")
    assert fastndcg.evaluate(str(log), k=3, doc="doc_id", ties="trec").n_queries == 20


def test_command_line_speaks_in_flags(log, capsys):
    err = one_line_error(["evaluate", str(log), "--log-base", "1"], capsys)
    assert "--log-base must be" in err and "--log-base 2" in err and "log_base" not in err, err
    err = one_line_error(["evaluate", str(log), "--doc-col", "docno"], capsys)
    assert err.startswith("fastndcg: error: --doc-col 'docno'"), err
    err = one_line_error(["evaluate", str(log), "--doc-col=--"], capsys)
    assert "--doc-col takes one value" in err, err


def test_sklearn_dropin_weights(tmp_path):
    args = ([[1, 0, 2], [0, 1, 1]], [[0.1, 0.2, 0.3], [0.3, 0.2, 0.1]])
    for weights, pattern in [("", "sample_weight must be a 1-D array of numbers"),
                             ([np.nan, 1], r"sample_weight\[0\] is nan"),
                             ([[1, 2]], "sample_weight must be 1-D"),
                             ([1, -1], "sample_weight sums to zero")]:
        with pytest.raises((TypeError, ValueError), match=pattern):
            fastndcg.ndcg_score(*args, sample_weight=weights)
    with pytest.raises(ValueError, match=r"^y_true: Input contains NaN\.$"):
        fastndcg.ndcg_score([[1, np.nan, 2]], [[0.1, 0.2, 0.3]])
