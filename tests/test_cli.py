"""The ``fastndcg`` command line: ``evaluate``, ``demo`` and ``synth``.

The outputs run the command in a fresh interpreter (``python -m fastndcg``, once the
``fastndcg`` console script next to ``sys.executable``), as a user would, with its
stdout and stderr on pipes; the error cases call :func:`fastndcg.cli.main` in this
process, a few of them again in a fresh interpreter.

What is checked:

* ``evaluate`` on a small synthetic Parquet log: the table and the JSON output, whose
  numbers equal :func:`fastndcg.evaluate` computed here; ``--per-query`` to Parquet
  and CSV equals ``Report.per_query``; qrels mode on trec_eval's own test files;
* ``synth`` writes the documented schema, row count and row groups; ``demo`` runs;
* every bad input is one line on stderr starting ``fastndcg: error:``, no traceback,
  exit status 2 for a usage error and 1 for bad data;
* the progress bar is drawn only when stderr is a terminal and not ``--quiet``.

The inputs keep the synthetic log's column types (float32 scores, int8 labels) so
no extra Numba specialisations are compiled. The error cases run in this process
(``tests/inprocess.py``), a few of them again in their own interpreters.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

import fastndcg
from fastndcg import cli
from fastndcg.synth import SCHEMA, synthetic_log, write_synthetic_log

import inprocess

TREC_DIR = Path(__file__).parent / "data" / "trec_eval"
K = [1, 3, 5, 10]
N_QUERIES = 300
TIMEOUT = 180  # seconds per subprocess (a cold Numba cache compiles for a while)


# --------------------------------------------------------------------------- helpers

def run_cli(args, *, cwd=None, script: bool = False, **kwargs) -> subprocess.CompletedProcess:
    """Run the command line in a fresh interpreter, stdout and stderr on pipes."""
    if script:
        exe = console_script()
        cmd = [str(exe), *map(str, args)]
    else:
        cmd = [sys.executable, "-m", "fastndcg", *map(str, args)]
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT,
                          **kwargs)


def console_script() -> Path:
    """The ``fastndcg`` script installed beside this interpreter (skip when absent)."""
    folder = Path(sys.executable).parent
    for name in ("fastndcg", "fastndcg.exe"):
        if (folder / name).is_file():
            return folder / name
    pytest.skip(f"no fastndcg console script next to {sys.executable}; "
                f"install the package (pip install -e .)")


def assert_one_line_error(stderr: str, *, must_contain: tuple = ()) -> str:
    """stderr is exactly one line, ``fastndcg: error: ...``, without a traceback."""
    assert "Traceback" not in stderr, stderr
    assert stderr.startswith("fastndcg: error: "), stderr
    assert stderr.endswith("\n") and stderr.count("\n") == 1, f"not one line: {stderr!r}"
    for text in must_contain:
        assert text in stderr, f"{text!r} not in {stderr!r}"
    return stderr


def assert_no_progress_bar(*streams: str) -> None:
    for text in streams:
        assert "\r" not in text, repr(text[:300])
        assert not re.search(r"\[[# ]{20}\]", text), repr(text[:300])


def json_line(stdout: str) -> dict:
    lines = stdout.strip().splitlines()
    assert len(lines) == 1, f"--format json prints one line, got {stdout!r}"
    return json.loads(lines[0])


def assert_json_matches(out: dict, report: fastndcg.Report) -> None:
    """The JSON printed equals what ``fastndcg.evaluate`` returns in this process."""
    assert out["n_queries"] == report.n_queries
    assert out["n_zero_idcg"] == report.n_zero_idcg
    assert out["n_rows"] == report.n_rows
    assert isinstance(out["seconds"], (int, float)) and out["seconds"] >= 0
    means = {k: v for k, v in out.items() if k.startswith("ndcg")}
    assert list(means) == list(report.mean)  # same cutoffs, same order
    for name, value in report.mean.items():
        if math.isnan(value):
            assert means[name] is None, (name, means[name])
        else:
            assert means[name] == value, (name, means[name], value)


def main_inprocess(capsys, *args) -> tuple[int, str, str]:
    code = cli.main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# --------------------------------------------------------------------------- data

@pytest.fixture(scope="module")
def data_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("cli")


@pytest.fixture(scope="module")
def log(data_dir) -> Path:
    """300 queries, ~2,400 rows in row groups of 500 rows (queries straddle them)."""
    path = data_dir / "log.parquet"
    write_synthetic_log(path, N_QUERIES, seed=3, mean_docs=8, row_group_rows=500)
    return path


@pytest.fixture(scope="module")
def expected(log) -> fastndcg.Report:
    return fastndcg.evaluate(log, k=K)


@pytest.fixture(scope="module")
def bad_files(log, data_dir) -> Path:
    """Broken inputs for the error cases, next to ``log.parquet``."""
    table = pq.read_table(log)
    d = data_dir

    def with_column(name, values, type_):
        i = table.schema.get_field_index(name)
        return table.set_column(i, name, pa.array(values, type_))

    pq.write_table(table.rename_columns(["qid", "doc_id", "score", "label"]), d / "renamed.parquet")
    pq.write_table(with_column("score", [f"{s:.2f}" for s in table["score"].to_pylist()],
                               pa.string()), d / "str_score.parquet")
    scores = table["score"].to_pylist()
    scores[5] = None
    pq.write_table(with_column("score", scores, pa.float32()), d / "null_score.parquet")
    labels = table["label"].to_pylist()
    labels[7] = None
    pq.write_table(with_column("label", labels, pa.int8()), d / "null_label.parquet")
    scores = table["score"].to_pylist()
    scores[9] = float("nan")
    pq.write_table(with_column("score", scores, pa.float32()), d / "nan_score.parquet")

    data = log.read_bytes()
    (d / "truncated.parquet").write_bytes(data[: len(data) // 2])
    (d / "truncated_tail.parquet").write_bytes(data[:-3])
    (d / "garbage.parquet").write_bytes(b"PAR1" + bytes(range(256)) * 4)
    # header and footer intact, every data page overwritten: the footer reads, the pages do not
    footer_len = int.from_bytes(data[-8:-4], "little")
    body = bytearray(data)
    body[4: len(data) - 8 - footer_len] = b"\xff" * (len(data) - 12 - footer_len)
    (d / "corrupt_pages.parquet").write_bytes(bytes(body))
    (d / "not_parquet.parquet").write_text("query_id,score,label\n1,0.5,1\n")

    (d / "bad.run").write_text("q1 Q0 d1 1 2.5 tag\nq1 Q0 d2 2 1.5 tag\nq1 Q0 d3\n")
    (d / "bad_score.run").write_text("q1 Q0 d1 1 2.5 tag\nq1 Q0 d2 2 high tag\n")
    (d / "ok.qrels").write_text("q1 0 d1 1\nq1 0 d2 0\n")
    (d / "ok.run").write_text("q1 Q0 d1 1 2.5 tag\nq1 Q0 d2 2 1.5 tag\n")
    pq.write_table(pa.table({"query_id": ["q1"], "doc_id": ["d1"], "label": [1]}),
                   d / "qrels.parquet")
    return d


# --------------------------------------------------------------------------- evaluate

def test_evaluate_table(log, expected):
    proc = run_cli(["evaluate", log], cwd=log.parent)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""  # pipes: no progress bar even without --quiet
    assert_no_progress_bar(proc.stdout)
    lines = proc.stdout.splitlines()
    assert lines[0] == str(log)
    table = dict(re.split(r"\s{2,}", line.strip(), maxsplit=1) for line in lines[1:])
    for name, value in expected.mean.items():
        assert table[name] == f"{value:.4f}", (name, table[name], value)
    assert table["queries"] == f"{N_QUERIES:,}"
    assert table["rows"] == f"{expected.n_rows:,}"
    assert table["zero-IDCG queries"] == f"{expected.n_zero_idcg:,}"
    assert re.fullmatch(r"[\d.]+ s \([\d,.]+M rows/s\)", table["time"]), table["time"]


def test_evaluate_json_console_script(log, expected):
    """The installed ``fastndcg`` script, JSON: the numbers equal fastndcg.evaluate's."""
    proc = run_cli(["evaluate", log, "--format", "json"], cwd=log.parent, script=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    out = json_line(proc.stdout)
    assert_json_matches(out, expected)
    assert out["n_queries"] == N_QUERIES
    assert "n_unjudged" not in out  # list mode: no qrels counts


def test_evaluate_json_inprocess_options(capsys, log):
    """Options reach fastndcg.evaluate: cutoffs, gain, ties, zero-IDCG policy."""
    code, out, err = main_inprocess(capsys, "evaluate", log, "-k", "all", "--gain", "linear",
                                    "--ties", "stable", "--zero-idcg", "nan", "--format", "json")
    assert (code, err) == (0, "")
    report = fastndcg.evaluate(log, k=None, gain="linear", ties="stable", zero_idcg="nan")
    got = json_line(out)
    assert_json_matches(got, report)
    assert list(k for k in got if k.startswith("ndcg")) == ["ndcg"]
    assert report.n_zero_idcg > 0  # the log has queries without a relevant item ...
    assert report.per_query["ndcg"].null_count == 0
    assert np.isnan(report.per_query["ndcg"].to_numpy()).sum() == report.n_zero_idcg  # ... left out


def test_evaluate_json_nan_means_are_null(capsys, data_dir):
    path = data_dir / "no_relevant.parquet"
    pq.write_table(pa.table({"query_id": [1, 1, 2], "doc_id": [1, 2, 3],
                             "score": [0.5, 0.25, 0.75], "label": [0, 0, 0]}, schema=SCHEMA), path)
    code, out, err = main_inprocess(capsys, "evaluate", path, "--zero-idcg", "nan",
                                    "--format", "json", "-k", "1,3,5,10")
    assert (code, err) == (0, "")
    assert "NaN" not in out  # strict JSON
    got = json_line(out)
    assert got["n_zero_idcg"] == 2 and got["n_queries"] == 2
    assert all(got[f"ndcg@{c}"] is None for c in K)


def test_evaluate_renamed_columns(capsys, bad_files, expected):
    code, out, err = main_inprocess(capsys, "evaluate", bad_files / "renamed.parquet",
                                    "--query-col", "qid", "--format", "json")
    assert (code, err) == (0, "")
    got = json_line(out)
    assert got["n_queries"] == expected.n_queries
    # renamed.parquet has other row groups than the log, so the per-query values
    # (bit-identical) are summed in other groups: means agree to 1e-12, the contract
    for name, value in expected.mean.items():
        assert got[name] == pytest.approx(value, rel=1e-12, abs=0), name


@pytest.mark.parametrize("ext", [".parquet", ".csv"])
def test_per_query_output(capsys, log, expected, tmp_path, ext):
    out_path = tmp_path / f"per-query{ext}"
    code, out, err = main_inprocess(capsys, "evaluate", log, "--per-query", out_path)
    assert (code, err) == (0, "")
    assert f"per-query results: {out_path}" in out
    want = expected.per_query
    if ext == ".parquet":
        got = pq.read_table(out_path)
        assert got.column_names == want.column_names == ["query_id", "n_docs", *expected.mean]
        assert got.equals(want), (got.schema, want.schema)
    else:
        got = pacsv.read_csv(out_path)
        assert got.column_names == want.column_names
        assert got.num_rows == want.num_rows == N_QUERIES
        for name in want.column_names:
            assert got[name].to_pylist() == want[name].to_pylist(), name


def test_per_query_json_format_and_pq_extension(capsys, log, expected, tmp_path):
    out_path = tmp_path / "results.PQ"  # extension case does not matter
    code, out, err = main_inprocess(capsys, "evaluate", log, "--per-query", out_path,
                                    "--format", "json", "--quiet")
    assert (code, err) == (0, "")
    assert_json_matches(json_line(out), expected)
    assert pq.read_table(out_path).equals(expected.per_query)


# --------------------------------------------------------------------------- qrels mode

@pytest.fixture(scope="module")
def trec_files() -> tuple[Path, Path]:
    run, qrels = TREC_DIR / "results.test", TREC_DIR / "qrels.test"
    if not (run.is_file() and qrels.is_file()):
        pytest.skip(f"trec_eval's test files are not in {TREC_DIR}")
    return run, qrels


def _trec_eval_all(name: str, measure: str) -> float | None:
    """trec_eval's own 'all' line for ``measure`` (4 decimals), if the file is there."""
    path = TREC_DIR / name
    if not path.is_file():
        return None
    for line in path.read_text().splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] == measure and parts[1] == "all":
            return float(parts[2])
    return None


def test_qrels_mode_trec_eval_files(trec_files):
    run, qrels = trec_files
    proc = run_cli(["evaluate", run, "--qrels", qrels, "-k", "5,10", "--gain", "linear",
                    "--ties", "trec", "--format", "json"], cwd=TREC_DIR)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    out = json_line(proc.stdout)
    report = fastndcg.evaluate(str(run), qrels=str(qrels), k=[5, 10], gain="linear",
                               ties="trec")
    assert_json_matches(out, report)
    assert out["complete"] is False
    assert out["n_unjudged"] == report.n_unjudged
    assert out["n_missing"] == report.n_missing
    assert out["n_rows"] == 1500 and out["n_queries"] == 3
    for c in (5, 10):  # and trec_eval agrees, to its 4 printed decimals
        theirs = _trec_eval_all("out.test.aq", f"ndcg_cut_{c}")
        if theirs is not None:
            assert abs(out[f"ndcg@{c}"] - theirs) <= 5e-5, (c, out[f"ndcg@{c}"], theirs)


def test_qrels_mode_table_and_complete(capsys, trec_files):
    run, qrels = trec_files
    code, out, err = main_inprocess(capsys, "evaluate", run, "--qrels", qrels, "-k", "5,10",
                                    "--gain", "linear", "--ties", "trec", "--complete")
    assert (code, err) == (0, "")
    report = fastndcg.evaluate(str(run), qrels=str(qrels), k=[5, 10], gain="linear",
                               ties="trec", complete=True)
    assert out.splitlines()[0] == f"{run}  (qrels {qrels})"
    for name, value in report.mean.items():
        assert re.search(rf"^{re.escape(name)}\s+{value:.4f}$", out, re.M), (name, out)
    assert re.search(r"^unjudged queries \(left out\)\s+\d+$", out, re.M), out
    assert re.search(r"^judged queries not in run \(scored 0\)\s+\d+$", out, re.M), out


# --------------------------------------------------------------------------- synth, demo

def test_synth_writes_the_documented_log(tmp_path):
    path = tmp_path / "synth.parquet"
    proc = run_cli(["synth", "--queries", 40, "--out", path, "--seed", 7, "--mean-docs", 5,
                    "--row-group-rows", 64], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    m = re.fullmatch(rf"wrote {re.escape(str(path))}: 40 queries, ([\d,]+) rows \([\d.]+ s\)\n",
                     proc.stdout)
    assert m, proc.stdout
    rows = int(m.group(1).replace(",", ""))
    f = pq.ParquetFile(path)
    assert f.schema_arrow.remove_metadata().equals(SCHEMA), f.schema_arrow
    assert f.metadata.num_rows == rows
    sizes = [f.metadata.row_group(i).num_rows for i in range(f.metadata.num_row_groups)]
    assert sizes[:-1] == [64] * (len(sizes) - 1) and 0 < sizes[-1] <= 64, sizes
    table = f.read()
    assert table.equals(synthetic_log(40, seed=7, mean_docs=5))  # seeded: same log
    qid = table["query_id"].to_numpy()
    assert (np.diff(qid) >= 0).all() and np.unique(qid).tolist() == list(range(40))
    assert set(table["label"].to_pylist()) <= {0, 1, 2, 3, 4}


def test_synth_inprocess_quiet(capsys, tmp_path):
    path = tmp_path / "q.parquet"
    code, out, err = main_inprocess(capsys, "synth", "--queries", 10, "--out", path,
                                    "--mean-docs", 3, "--quiet")
    assert (code, err) == (0, "")
    assert out.startswith(f"wrote {path}: 10 queries, ")
    assert pq.read_table(path).equals(synthetic_log(10, seed=0, mean_docs=3))


def test_demo(tmp_path):
    proc = run_cli(["demo", "--queries", 2000, "--sample", 200], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert_no_progress_bar(proc.stdout)
    out = proc.stdout
    assert "1. building a synthetic search log: 2,000 queries (seed 0)" in out
    for c in K:
        assert re.search(rf"^\s+ndcg@{c}\s+0\.\d{{4}}$", out, re.M), (c, out)
    assert re.search(r"^\s+queries\s+2,000$", out, re.M), out
    assert "the pure-Python reference (fastndcg.reference) on the first 200 queries" in out
    diff = re.search(r"largest difference from fastndcg: (\S+)$", out, re.M)
    assert diff and float(diff.group(1)) <= 1e-12, out
    assert re.search(r"fastndcg was [\d,]+x faster \([\d.]+ s end to end", out), out
    assert list(tmp_path.iterdir()) == []  # the temporary log is gone


def test_demo_keep_inprocess(capsys, tmp_path):
    path = tmp_path / "kept.parquet"
    code, out, err = main_inprocess(capsys, "demo", "--queries", 300, "--sample", 20,
                                    "--seed", 5, "--keep", path, "--quiet")
    assert (code, err) == (0, ""), err
    assert f"to {path}" in out
    assert pq.read_table(path).equals(synthetic_log(300, seed=5))


def test_help_exits_zero(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    for command in ("evaluate", "demo", "synth"):
        assert command in out


def _arguments(command: str) -> dict:
    """dest -> argparse action of a subcommand, from the parser itself."""
    import argparse
    sub = next(a for a in cli.build_parser()._actions
               if isinstance(a, argparse._SubParsersAction)).choices[command]
    return {a.dest: a for a in sub._actions}


@pytest.mark.parametrize("command", ["evaluate", "compare"])
def test_the_option_arguments_come_from_the_specification(command):
    """Each evaluation option a subcommand takes is the argument its specification
    declares: flags, help, choices and default; evaluate takes every option,
    compare those it passes on to every system (not the score, weight or explain
    columns of one evaluation)."""
    import inspect
    from fastndcg.options import OPTIONS
    from fastndcg.presets import PRESETS
    actions = _arguments(command)
    own = inspect.signature(fastndcg.compare).parameters  # compare's own (--confidence)
    for option in OPTIONS.values():
        if command == "compare" and option.compared is not True:
            assert option.dest not in actions or option.name in own, option.name
            continue
        action = actions[option.dest]
        assert tuple(action.option_strings) == option.flags, option.name
        if not (command == "compare" and option.name in ("k", "qrels")):  # worded for compare
            assert action.help == option.help and action.default is option.default, option.name
        assert action.choices == (None if option.choices is None else list(option.choices))
    assert actions["preset"].choices == list(PRESETS)
    if command == "compare":  # fastndcg.compare's k=10
        assert actions["k"].default == [10] and "each is tested" in actions["k"].help
        assert actions["qrels"].help == ("judgments: compare the runs given against them, or "
                                         "with --systems judge the log's documents")


def test_options_given_on_the_command_line_reach_evaluate_as_given():
    """Every option the evaluate subcommand parses becomes the keyword of the same
    name, its text read into the value the Python API takes."""
    from fastndcg.options import OPTIONS, from_args
    argv = ["evaluate", "run.txt", "--qrels", "q.txt", "-m", "map", "-m", "P@5", "-l", "2",
            "--preset", "trec_eval", "--gain", "0,1,3", "--ties", "stable", "--zero-idcg",
            "one", "--log-base", "10", "--nan-scores", "last", "--negative-labels", "keep",
            "--score-precision", "float32", "--complete", "--query-col", "q", "--doc-col", "d",
            "--label-col", "l", "--score-col", "s", "--explain", "--weight-col", "w",
            "--human-qrels", "h.txt", "--confidence", "0.9", "--ppi", "0.5"]
    options = from_args(cli.build_parser().parse_args(argv))
    assert options == {"qrels": "q.txt", "human_qrels": "h.txt", "confidence": 0.9,
                       "ppi": 0.5, "k": (1, 3, 5, 10), "measure": ["map", "P@5"],
                       "rel": 2, "preset": "trec_eval", "gain": [0.0, 1.0, 3.0],
                       "ties": "stable", "zero_idcg": "one", "log_base": 10.0,
                       "nan_scores": "last", "negative_labels": "keep",
                       "score_precision": "float32", "complete": True, "query": "q", "doc": "d",
                       "label": "l", "score": "s", "explain": True, "weight": "w"}
    assert set(options) == set(OPTIONS)
    explain = from_args(cli.build_parser().parse_args(["evaluate", "x", "--explain", "dcg,idcg"]))
    assert explain["explain"] == "dcg,idcg" and explain["k"] is fastndcg.presets.DEFAULT_K


# --------------------------------------------------------------------------- bad input

# (id, arguments, exit status, texts the message must contain); {d} is the data folder
ERROR_CASES = [
    ("missing-file", ["evaluate", "{d}/nope.parquet"], 2, ["nope.parquet", "does not exist"]),
    ("missing-qrels-file", ["evaluate", "{d}/log.parquet", "--qrels", "{d}/nope.qrels"], 2,
     ["nope.qrels"]),
    ("glob-no-match", ["evaluate", "{d}/*.nomatch"], 2, ["no files match"]),
    ("missing-column", ["evaluate", "{d}/renamed.parquet"], 1,
     ["'query_id'", "not found", "'qid', 'doc_id', 'score', 'label'", "--query-col"]),
    ("missing-column-option", ["evaluate", "{d}/log.parquet", "--label-col", "grade"], 1,
     ["'grade'", "'query_id', 'doc_id', 'score', 'label'"]),
    ("wrong-column-type", ["evaluate", "{d}/str_score.parquet"], 1,
     ["'score'", "string", "numbers"]),
    ("null-score", ["evaluate", "{d}/null_score.parquet"], 1, ["'score'", "null"]),
    ("null-label", ["evaluate", "{d}/null_label.parquet"], 1, ["'label'", "null"]),
    ("nan-score", ["evaluate", "{d}/nan_score.parquet"], 1, ["NaN"]),
    ("corrupt-parquet", ["evaluate", "{d}/garbage.parquet"], 1, ["garbage.parquet"]),
    ("corrupt-pages", ["evaluate", "{d}/corrupt_pages.parquet"], 1, ["corrupt_pages.parquet"]),
    ("truncated-parquet", ["evaluate", "{d}/truncated.parquet"], 1, ["truncated.parquet"]),
    ("truncated-tail", ["evaluate", "{d}/truncated_tail.parquet"], 1, ["truncated_tail.parquet"]),
    ("not-parquet", ["evaluate", "{d}/not_parquet.parquet"], 1, ["not a Parquet file"]),
    ("k-zero", ["evaluate", "{d}/log.parquet", "-k", "0"], 2, ["-k", "'0'"]),
    ("k-letter", ["evaluate", "{d}/log.parquet", "-k", "x"], 2, ["-k", "'x'"]),
    ("k-empty", ["evaluate", "{d}/log.parquet", "-k", ""], 2, ["-k", "''"]),
    ("k-negative", ["evaluate", "{d}/log.parquet", "-k", "5,-1"], 2, ["-k"]),
    ("bad-gain", ["evaluate", "{d}/log.parquet", "--gain", "cubic"], 2, ["--gain", "'cubic'"]),
    ("bad-ties", ["evaluate", "{d}/log.parquet", "--ties", "random"], 2, ["--ties", "'random'"]),
    ("trec-line", ["evaluate", "{d}/bad.run", "--qrels", "{d}/ok.qrels"], 1,
     ["{d}/bad.run:3:", "6 whitespace-separated fields", "'q1 Q0 d3'"]),
    ("trec-score", ["evaluate", "{d}/bad_score.run", "--qrels", "{d}/ok.qrels"], 1,
     ["{d}/bad_score.run:2:", "'high'"]),
    ("per-query-extension", ["evaluate", "{d}/log.parquet", "--per-query", "{d}/out.txt"], 2,
     ["--per-query", "out.txt"]),
    ("per-query-unwritable", ["evaluate", "{d}/log.parquet", "--per-query",
                              "{d}/log.parquet/out.csv"], 1, ["out.csv", "writable"]),
    ("per-query-is-input", ["evaluate", "{d}/log.parquet", "--per-query", "{d}/log.parquet"], 2,
     ["log.parquet", "reads", "another path"]),
    ("per-query-holds-input", ["evaluate", "{d}/log.parquet", "--per-query", "{d}"], 2,
     ["reads"]),
    ("per-query-is-qrels", ["evaluate", "{d}/ok.run", "--qrels", "{d}/qrels.parquet",
                            "--per-query", "{d}/qrels.parquet"], 2, ["qrels.parquet", "reads"]),
    ("per-query-text-extension", ["evaluate", "{d}/ok.run", "--qrels", "{d}/ok.qrels",
                                  "--per-query", "{d}/ok.qrels"], 2, ["--per-query"]),
    ("per-query-twice", ["evaluate", "{d}/log.parquet", "--per-query", "{d}/o.parquet",
                         "--no-per-query"], 2, ["--no-per-query"]),
    ("scheduler-and-workers", ["evaluate", "{d}/log.parquet", "--scheduler", "tcp://127.0.0.1:1",
                               "--workers", "2"], 2, ["--workers"]),
    ("scheduler-unreachable", ["evaluate", "{d}/log.parquet", "--scheduler",
                               "tcp://127.0.0.1:9"], 1, ["scheduler", "tcp://127.0.0.1:9"]),
    ("workers-zero", ["evaluate", "{d}/log.parquet", "--workers", "0"], 2, ["--workers"]),
    ("unknown-subcommand", ["frobnicate"], 2, ["frobnicate", "evaluate"]),
    ("no-subcommand", [], 2, ["required"]),
    ("evaluate-no-source", ["evaluate"], 2, ["source"]),
    ("unknown-option", ["evaluate", "{d}/log.parquet", "--fast"], 2, ["--fast"]),
    ("synth-missing-out", ["synth", "--queries", "5"], 2, ["--out", "required"]),
    ("synth-missing-queries", ["synth", "--out", "{d}/x.parquet"], 2, ["--queries", "required"]),
    ("synth-zero-queries", ["synth", "--queries", "0", "--out", "{d}/x.parquet"], 2,
     ["--queries", "'0'"]),
    ("synth-out-directory", ["synth", "--queries", "5", "--out", "{d}"], 2, ["directory"]),
    ("demo-bad-sample", ["demo", "--sample", "many"], 2, ["--sample", "'many'"]),
]


@pytest.fixture(scope="module")
def error_runs(bad_files) -> dict[str, subprocess.CompletedProcess]:
    """Every error case through ``fastndcg.cli.main`` in this process
    (``inprocess.run_many``); ``test_errors_in_a_real_process`` runs a few again as the
    command does."""
    d = str(bad_files)
    return inprocess.run_many({name: [a.format(d=d) for a in args]
                               for name, args, _, _ in ERROR_CASES}, cwd=d, timeout=TIMEOUT)


@pytest.mark.parametrize("name, args, status, texts", ERROR_CASES,
                         ids=[c[0] for c in ERROR_CASES])
def test_bad_input_is_one_line_error(error_runs, bad_files, name, args, status, texts):
    proc = error_runs[name]
    assert_one_line_error(proc.stderr, must_contain=[t.format(d=bad_files) for t in texts])
    assert proc.returncode == status, (proc.returncode, proc.stderr)
    assert proc.stdout == "", proc.stdout
    if name.startswith("synth"):
        assert not (bad_files / "x.parquet").exists()


@pytest.mark.parametrize("name", ["missing-file", "nan-score", "unknown-option", "no-subcommand"])
def test_errors_in_a_real_process(error_runs, bad_files, name):
    """A few error cases in their own interpreters, the command's exit status and its one
    line on stderr: the same as the same case in this process."""
    _, args, status, texts = next(case for case in ERROR_CASES if case[0] == name)
    proc = run_cli([a.format(d=bad_files) for a in args], cwd=bad_files)
    assert_one_line_error(proc.stderr, must_contain=[t.format(d=bad_files) for t in texts])
    assert (proc.returncode, proc.stdout) == (status, "")
    assert (proc.returncode, proc.stdout, proc.stderr) == \
        (error_runs[name].returncode, error_runs[name].stdout, error_runs[name].stderr)


@pytest.mark.parametrize("args", [["evaluate", "{d}/nan_score.parquet"],
                                  ["evaluate", "{d}/bad.run", "--qrels", "{d}/ok.qrels"],
                                  ["evaluate", "{d}/log.parquet", "-k", "0"]],
                         ids=["data-error", "trec-error", "usage-error"])
def test_bad_input_inprocess(capsys, bad_files, args):
    """main() returns the status (no SystemExit, no exception) and prints one line."""
    code, out, err = main_inprocess(capsys, *[a.format(d=bad_files) for a in args])
    assert code == (2 if "-k" in args else 1)
    assert out == ""
    assert_one_line_error(err)


def test_nan_scores_last_is_accepted(capsys, bad_files):
    code, out, err = main_inprocess(capsys, "evaluate", bad_files / "nan_score.parquet",
                                    "--nan-scores", "last", "--format", "json")
    assert (code, err) == (0, "")
    assert json_line(out)["n_queries"] == N_QUERIES


# --------------------------------------------------------------------------- progress bar

# The bar is drawn once a run has lasted 0.5 s; the child sets that delay to 0 so a
# small log would show it, then runs the command line.
PROGRESS_CHILD = """
import sys
import fastndcg._progress
fastndcg._progress.Progress.__init__.__kwdefaults__["delay"] = 0.0
from fastndcg.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _run_with_tty_stderr(args, cwd) -> tuple[int, str, str]:
    """Run PROGRESS_CHILD with stderr on a pseudo-terminal; (status, stdout, stderr)."""
    pty = pytest.importorskip("pty")
    master, slave = pty.openpty()
    try:
        proc = subprocess.Popen([sys.executable, "-c", PROGRESS_CHILD, *map(str, args)],
                                cwd=cwd, stdout=subprocess.PIPE, stderr=slave,
                                stdin=subprocess.DEVNULL)
    finally:
        os.close(slave)
    chunks = []
    try:
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
    finally:
        os.close(master)
    out = proc.stdout.read().decode()
    proc.stdout.close()
    code = proc.wait(timeout=TIMEOUT)
    return code, out, b"".join(chunks).decode(errors="replace")


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
def test_progress_bar_only_on_a_terminal(log, expected):
    n = f"{expected.n_rows:,}"
    # stderr a terminal: the bar is drawn, on stderr only
    code, out, err = _run_with_tty_stderr(["evaluate", log, "--format", "json"], log.parent)
    assert code == 0, err
    assert f"{n} / {n} rows 100.0%" in err and "rows/s" in err, repr(err)
    assert_no_progress_bar(out)
    assert json_line(out)["n_rows"] == expected.n_rows
    # terminal, --quiet: no bar
    code, out, err = _run_with_tty_stderr(["evaluate", log, "--format", "json", "--quiet"],
                                          log.parent)
    assert code == 0, err
    assert err == "" and json_line(out)["n_rows"] == expected.n_rows
    # pipes, without --quiet: no bar either
    proc = subprocess.run([sys.executable, "-c", PROGRESS_CHILD, "evaluate", str(log)],
                          cwd=log.parent, capture_output=True, text=True, timeout=TIMEOUT)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert_no_progress_bar(proc.stdout)
    assert f"rows  {n}" in re.sub(r" {2,}", "  ", proc.stdout)


# --------------------------------------------------------------------------- usage errors

# Option values that are wrong whatever the data are usage errors: exit status 2 and a
# message naming the option (fastndcg.cli: "exit status 2 for a usage error, 1 for bad
# data"). Checked in this process; these come last so the rest runs first under -x.
@pytest.mark.parametrize("args, option", [
    (["evaluate", "{d}/log.parquet", "-k", "1,1"], "-k"),
    (["evaluate", "{d}/log.parquet", "--log-base", "1"], "--log-base"),
    (["evaluate", "{d}/log.parquet", "--complete"], "--complete"),
    (["synth", "--queries", "3", "--out", "{d}/neg-seed.parquet", "--seed", "-1"], "--seed"),
    (["demo", "--queries", "3", "--seed", "-1", "--quiet"], "--seed"),
], ids=["k-repeated", "log-base-1", "complete-without-qrels", "synth-negative-seed",
        "demo-negative-seed"])
def test_invalid_option_value_is_usage_error(capsys, bad_files, args, option):
    code, out, err = main_inprocess(capsys, *[a.format(d=bad_files) for a in args])
    assert_one_line_error(err)
    assert re.search(option.lstrip("-").replace("-", "[-_]"), err), f"{option} not named: {err!r}"
    assert code == 2, (code, err)
    assert not (bad_files / "neg-seed.parquet").exists()


# --------------------------------------------------------------------------- on Dask

def test_evaluate_on_a_local_dask_cluster(capsys, log, expected, tmp_path):
    """--workers N: the same numbers from a LocalCluster of worker processes, the
    per-query parts written by the workers into the --per-query directory."""
    pytest.importorskip("distributed")
    out = tmp_path / "per_query"
    code, stdout, err = main_inprocess(capsys, "evaluate", log, "--workers", "2", "--format",
                                       "json", "--quiet", "--per-query", out)
    assert code == 0, err
    got = json_line(stdout)
    assert got["n_queries"] == expected.n_queries and got["n_rows"] == expected.n_rows
    for name, value in expected.mean.items():
        assert got[name] == pytest.approx(value, rel=1e-12)
    parts = sorted(os.listdir(out))
    assert parts and all(p.startswith("part-") and p.endswith(".parquet") for p in parts)
    table = pa.concat_tables([pq.read_table(out / p) for p in parts])
    assert table.equals(expected.per_query)
    # a file is not a place for the workers' parts
    code, stdout, err = main_inprocess(capsys, "evaluate", log, "--workers", "2",
                                       "--per-query", tmp_path / "x.csv")
    assert code == 2 and "directory" in err and stdout == ""
