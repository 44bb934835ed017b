"""Inputs that used to be dropped, merged or read in pieces without a word: a flag
that takes a file given twice, two human samples given as one, run options without
runs, one path given as a list of runs. Each is refused (or, for a flag documented
to take several values, every value is taken), never answered from part of what
was given."""

from __future__ import annotations

import contextlib
import io
import random

import pytest

import fastndcg
from fastndcg import cli


def _files(tmp_path, n_runs: int = 3) -> tuple[list[str], str, str, str]:
    rng = random.Random(7)
    runs = []
    for name in "abcd"[:n_runs]:
        path = tmp_path / f"run_{name}.txt"
        path.write_text("".join(f"q{q} Q0 d{d} {d + 1} {rng.random():.4f} {name}\n"
                                for q in range(12) for d in range(8)))
        runs.append(str(path))
    qrels = []
    for name, queries in (("llm", range(12)), ("p", range(6)), ("q", range(3, 9))):
        path = tmp_path / f"qrels_{name}.txt"
        path.write_text("".join(f"q{q} 0 d{d} {rng.randint(0, 3)}\n"
                                for q in queries for d in range(8)))
        qrels.append(str(path))
    return runs, *qrels


def _command(args) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = cli.main(args)
    return status, out.getvalue(), err.getvalue()


def test_two_human_samples_are_refused_by_compare_as_by_evaluate(tmp_path):
    runs, llm, p, q = _files(tmp_path)
    two = {"p": p, "q": q}
    with pytest.raises(TypeError, match=r"human_qrels takes one source of human judgments"):
        fastndcg.compare(None, runs[:2], qrels=llm, human_qrels=two, n_resamples=50)
    with pytest.raises(TypeError, match=r"human_qrels takes one source of human judgments"):
        fastndcg.evaluate(runs[0], qrels=llm, human_qrels=two)


@pytest.mark.parametrize("flag", ["--human-qrels", "--qrels", "-k", "--preset"])
def test_a_flag_that_takes_one_value_given_twice_is_refused(tmp_path, flag):
    runs, llm, p, q = _files(tmp_path)
    values = {"--human-qrels": [p, q], "--qrels": [llm, p], "-k": ["3", "5"],
              "--preset": ["trec_eval", "ranx"]}[flag]
    base = ["compare", *runs[:2]] if flag == "--qrels" else ["evaluate", runs[0]]
    if flag != "--qrels":
        base += ["--qrels", llm]
    status, out, err = _command([*base, flag, values[0], flag, values[1]])
    assert (status, out) == (2, ""), err
    assert err.count("\n") == 1 and f"{flag} is given twice; give it once" in err


def test_runs_given_in_two_flags_are_all_taken(tmp_path):
    """--runs takes two or more runs: given again, it takes those too (all compared)."""
    runs, llm, p, q = _files(tmp_path)
    status, once, err = _command(["agreement", p, llm, "--runs", *runs, "-m", "ndcg_cut.5"])
    assert status == 0, err
    status, twice, err = _command(["agreement", p, llm, "--runs", runs[0], runs[1],
                                   "--runs", runs[2], "-m", "ndcg_cut.5"])
    assert status == 0, err
    assert twice == once and "\nc " in once


def test_agreement_refuses_run_options_without_runs(tmp_path):
    runs, llm, p, q = _files(tmp_path)
    with pytest.raises(ValueError, match=r"runid= names runs, and none were given"):
        fastndcg.agreement(p, llm, runid="file")
    with pytest.raises(ValueError, match=r"runid= names runs"):
        fastndcg.agreement(p, llm, runid=1)


@pytest.mark.parametrize("call", [
    lambda runs, p, llm: fastndcg.agreement(p, llm, runs=runs[0]),
    lambda runs, p, llm: fastndcg.evaluate_runs(runs[0], qrels=llm),
])
def test_one_path_given_as_runs_is_refused_not_read_letter_by_letter(tmp_path, call):
    runs, llm, p, q = _files(tmp_path)
    with pytest.raises(TypeError, match=r"runs takes several runs .* got the one path"):
        call(runs, p, llm)


@pytest.mark.parametrize("bad", [5, 2.5, True])
def test_a_number_given_as_runs_is_refused_by_name(tmp_path, bad):
    runs, llm, p, q = _files(tmp_path)
    with pytest.raises(TypeError, match=rf"runs must be a list of runs .* got {bad!r}"):
        fastndcg.agreement(p, llm, runs=bad)


def test_numpy_unsigned_values_in_a_dict_are_not_read_as_signed():
    """pyarrow reads np.uint64(2**64 - 1) as -1: such a score would rank last."""
    np = pytest.importorskip("numpy")
    qrels = {"q1": {"d1": 1, "d2": 0}}
    small = fastndcg.evaluate({"q1": {"d1": np.uint64(7), "d2": np.uint64(5)}}, qrels=qrels,
                              measure="ndcg@1")
    assert small.mean["ndcg@1"] == 1.0
    with pytest.raises(TypeError, match=r"must be a number within the range of a double"):
        fastndcg.evaluate({"q1": {"d1": np.uint64(2 ** 64 - 1), "d2": np.uint64(5)}},
                          qrels=qrels, measure="ndcg@1")
    with pytest.raises((TypeError, ValueError)):
        fastndcg.evaluate({"q1": {"d1": 3.0, "d2": 2.0}}, preset="ranx",
                          qrels={"q1": {"d1": np.uint64(2 ** 64 - 1), "d2": 1}})
