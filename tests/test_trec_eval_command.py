"""``fastndcg trec_eval`` against the real trec_eval 10: byte-identical standard output.

Two oracles, neither written by fastndcg:

* trec_eval's stored outputs of every real run (``tests/data/real/trec_eval_out``,
  ``-q`` with the measures of ``test_trec_eval_measures.MEASURES`` in four variants):
  the command, given the same arguments, prints the very same bytes (no compiler
  needed);
* the binary built from ``tests/trec_eval`` (skipped without a C compiler): its
  default (``official``) set, ``-M``, ``-n``, long names, nicknames, and the inputs it
  refuses (the same exit status, and no output).
"""

from __future__ import annotations

import contextlib
import gzip
import io
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import test_trec_eval_measures as T
from fastndcg import cli, treceval

# every measure the command supports, some with parameters (and a name past 22 characters)
EVERYTHING = ["-m", "official", "-m", "set", "-m", "relative_P", "-m", "Rprec_mult",
              "-m", "11pt_avg", "-m", "unj", "-m", "ndcg", "-m", "ndcg_cut", "-m", "map_cut",
              "-m", "recall", "-m", "success", "-m", "gm_bpref", "-m", "num_nonrel_judged_ret",
              "-m", "utility.1.0,-1.0,0.5,0.0", "-m", "binG", "-m", "rbp_resid.p=0.8", "-m", "infAP", "-m", "rbp", "-m", "G",
              "-m", "ndcg_rel", "-m", "Rndcg"]


def _command(args: list[str]) -> subprocess.CompletedProcess:
    """``fastndcg trec_eval ARGS`` in this process (what the command runs: its main)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = cli.main(["trec_eval", *args])
    return subprocess.CompletedProcess(args, status, out.getvalue(), err.getvalue())


def test_the_command_line_runs_it(plain):
    """The installed entry point, as a user runs it (one process)."""
    args = ["-q", *_files(plain, "rag24")]
    proc = subprocess.run([sys.executable, "-m", "fastndcg", "trec_eval", *args],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0 and proc.stdout == _command(args).stdout
    assert proc.stdout.startswith("num_ret               \t")


@pytest.fixture(scope="module")
def plain(tmp_path_factory) -> dict[str, Path]:
    """Uncompressed runs and qrels (trec_eval reads plain text only)."""
    out = tmp_path_factory.mktemp("plain")
    paths = {}
    for src in [*T.RUNS_DIR.glob("*.run.gz"), *T.QRELS_DIR.glob("*.txt.gz")]:
        dst = out / src.name[:-len(".gz")]
        with gzip.open(src, "rb") as fin, open(dst, "wb") as fout:
            shutil.copyfileobj(fin, fout)
        paths[src.name] = dst
    return paths


def _files(plain, run: str) -> list[str]:
    return [str(plain[T._qrels_for(run).name]), str(plain[f"{run}.run.gz"])]


@pytest.mark.parametrize("run,variant", T.CASES, ids=T.CASE_IDS)
def test_prints_trec_eval_stored_output(plain, run, variant):
    stored = T._stored_path(run, variant)
    proc = _command(["-q", *T.VARIANTS[variant][0], *T.TREC_ARGS, *_files(plain, run)])
    if not stored.is_file():  # trec_eval 10 stops there (a judged query the run lacks)
        assert proc.returncode == 4 and proc.stdout == "", (proc.returncode, proc.stderr)
        assert "is judged in" in proc.stderr and "pass -c" in proc.stderr
        assert proc.stderr.count("\n") == 1
        return
    assert proc.returncode == 0, proc.stderr
    with gzip.open(stored, "rt") as f:
        assert proc.stdout == f.read()


ARGS = {
    "all_trec": ["-q", "-m", "all_trec"],
    "all_trec-c-l2": ["-q", "-c", "-l", "2", "-m", "all_trec"],
    "all_trec-c-M100": ["-q", "-c", "-M", "100", "-m", "all_trec", "-m", "relstring.15"],
    "all_trec-J": ["-q", "-J", "-m", "all_trec"],
    "all_trec-c-J-l2-M50": ["-q", "-c", "-J", "-l", "2", "-M", "50", "-m", "all_trec", "-m",
                            "utility.1,1,2,1", "-m", "relstring.4", "-N", "100000"],
    "official": [],
    "official-q": ["-q"],
    "everything": ["-q", *EVERYTHING],
    "everything-c-l2-N": ["-q", "-c", "-l", "2", "-N", "5000", *EVERYTHING],
    "M100": ["-q", "-M", "100", *EVERYTHING],
    "M7-c": ["-q", "-c", "-M", "7", "-m", "official", "-m", "unj", "-m", "rbp_resid"],
    "n": ["-n", "-q", "-m", "P.5,10", "-m", "map"],
    "params": ["-q", "-m", "iprec_at_recall.0.25,.5", "-m", "P.1000,5", "-m", "set_F.0.5",
               "-m", "Rprec_mult.1.5"],
}
BINARY_CASES = [(run, name) for run in T.RUN_NAMES for name in ARGS]


@pytest.mark.parametrize("run,name", BINARY_CASES, ids=[f"{r}-{n}" for r, n in BINARY_CASES])
def test_prints_what_the_binary_prints(trec_eval_bin, plain, run, name):
    args = [*ARGS[name], *_files(plain, run)]
    want = subprocess.run([str(trec_eval_bin), *args], capture_output=True, text=True,
                          timeout=600)
    got = _command(args)
    assert got.returncode == want.returncode, (got.stderr, want.stderr)
    assert got.stdout == want.stdout
    if want.returncode:
        assert got.stdout == "" and got.stderr.count("\n") == 1


@pytest.mark.parametrize("args,status,words", [
    (["-m", "relstring.x"], 1, "relstring"),
    (["-m", "G.1=2.5"], 2, "G"),
    (["-Z", "zfile"], 1, "z-scores"),
    (["-m", "prefs"], 1, "preference"),
    (["-m", "nosuch"], 1, "nosuch"),
    (["-m", "P.5,5"], 2, "twice"),
    (["-l", "x"], 1, "-l takes a whole number"),
])
def test_refused_in_one_line(plain, args, status, words):
    run = "core18_title_rm3"
    proc = _command([*args, *_files(plain, run)])
    assert proc.returncode == status and proc.stdout == ""
    assert words in proc.stderr and proc.stderr.count("\n") == 1, proc.stderr


def test_wrong_number_of_files_is_a_usage_error():
    proc = _command(["-q", "only_one_file"])
    assert proc.returncode == 1 and "expected the qrels file and the run file" in proc.stderr


def test_missing_file_names_it(tmp_path):
    proc = _command([str(tmp_path / "no_qrels"), str(tmp_path / "no_run")])
    assert proc.returncode == 2 and "no_run" in proc.stderr and proc.stdout == ""


def test_c_float_is_printf():
    from fastndcg.trectext import print_lines

    values = [0.03125, float("nan"), -float("nan"), 12.5]
    text = print_lines(["x\t"], ["fixed4"], [values], ["a", "b", "c", "d"]).decode()
    # a tie: to even, as glibc
    assert [line.split("\t")[2] for line in text.splitlines()] == [
        "0.0312", "   nan", "  -nan", "12.5000"]
