"""trec_eval's gain parameters (``-m ndcg.1=0,2=3``, ``G``, ``ndcg_rel``, ``Rndcg``,
``rbp.p=0.9,2=5``): ``fastndcg trec_eval`` prints what the real trec_eval 10 prints,
byte for byte, with ``-q`` and ``-c``, on the real runs of ``tests/data/real``; the
same names given to ``measure=`` mean the same gains; and the pairs where
trec_eval's numbers would not follow the gains are refused by name, by the one
parser every surface shares (:func:`fastndcg.measures.parse`).

trec_eval's rbp reads two variables it never sets (``min`` and ``max`` in
``m_rbp.c``): its values then depend on what the measures computed before it left
on the stack. fastndcg reads them as 0, which is what trec_eval prints for rbp
alone and within ``all_trec``; rbp is checked here alone."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

import fastndcg
import test_trec_eval_measures as T
from fastndcg.measures import parse
from test_trec_eval_command import _command, _files, plain  # noqa: F401 (a fixture)

GAIN_CASES = {
    "ndcg": ["-m", "ndcg.1=0,2=3"],
    "G": ["-m", "G.1=0,2=3"],
    "Rndcg": ["-m", "Rndcg.2=5"],
    "ndcg_rel": ["-m", "ndcg_rel.1=3,2=1"],
    "rbp": ["-m", "rbp.p=0.9,2=5"],
    "rbp-absent-grade": ["-m", "rbp.p=0.8,4=2"],   # a listed grade no query has: still scales
    "rbp-equal": ["-m", "rbp.1=2,2=2"],
    "together": ["-m", "ndcg.1=3,2=7", "-m", "ndcg_cut.10", "-m", "G.2=5", "-m",
                 "ndcg_rel.1=1,2=4,3=4", "-m", "Rndcg.3=10", "-m", "map", "-m", "ndcg"],
    "zero-and-whole": ["-m", "ndcg.0=0,1=1,3=6,2=4.0", "-m", "G.5=9"],
    "zero-gains": ["-m", "Rndcg.1=0,2=0", "-m", "ndcg_rel.2=0"],  # Rndcg: C's -nan (0 / 0)
    "own-gains": ["-m", "Rndcg.2=2", "-m", "G.1=1"],               # pairs equal to the grades
    "level-names": ["-m", "Rprec_mult.100000,99999.999,2"],      # cut as trec_eval cuts them
    "malformed-pairs": ["-m", "rbp_resid.0.5"],                   # trec_eval stops (exit 2)
}
VARIANTS = {"q": ["-q"], "q-c": ["-q", "-c"], "c-l2": ["-c", "-l", "2"]}
# every real run: with -q -c, and -c -l 2 (Rndcg reads the threshold); -q alone (which
# stops at a judged query the run lacks, exit 4) on the quick runs
CASES = [(run, case, v) for run in T.RUN_NAMES for case in GAIN_CASES for v in ("q-c", "c-l2")]
QUICK = ([("core18_title_rm3", case, "q-c") for case in GAIN_CASES]
         + [("rag24", "together", "q"), ("cedr-wt_test.wt12", "together", "q")])


def _same_as_binary(trec_eval_bin, plain, run, case, variant):  # noqa: F811
    args = [*VARIANTS[variant], *GAIN_CASES[case], *_files(plain, run)]
    want = subprocess.run([str(trec_eval_bin), *args], capture_output=True, text=True,
                          timeout=600)
    got = _command(args)
    assert got.returncode == want.returncode, (got.stderr, want.stderr)
    assert got.stdout == want.stdout


@pytest.mark.parametrize("run,case,variant", QUICK, ids=[f"{r}-{c}-{v}" for r, c, v in QUICK])
def test_prints_what_trec_eval_prints(trec_eval_bin, plain, run, case, variant):  # noqa: F811
    _same_as_binary(trec_eval_bin, plain, run, case, variant)


@pytest.mark.heavy
@pytest.mark.parametrize("run,case,variant", CASES, ids=[f"{r}-{c}-{v}" for r, c, v in CASES])
def test_prints_what_trec_eval_prints_on_every_real_run(trec_eval_bin, plain, run, case,  # noqa: F811
                                                        variant):
    _same_as_binary(trec_eval_bin, plain, run, case, variant)


def test_printed_as_trec_eval_prints_the_name(plain):  # noqa: F811
    proc = _command(["-m", "ndcg.1=0,2=3", "-m", "rbp.p=0.9,2=5",
                     *_files(plain, "core18_title_rm3")])
    assert proc.returncode == 0, proc.stderr
    names = [line.split("\t")[0].rstrip() for line in proc.stdout.splitlines()]
    assert names == ["ndcg_1=0,2=3", "rbp_p=0.9,2=5"]


def test_a_measure_name_means_the_same_gains(plain):  # noqa: F811
    """``measure="ndcg.1=0,2=3"`` is NDCG with the table of those gains (grades not
    listed keep themselves); G, ndcg_rel, Rndcg likewise: bit for bit."""
    qrels, run = _files(plain, "core18_title_rm3")
    table = [0.0, 0.0, 3.0]  # the core18 grades are 0..2
    for name, plain_name in [("ndcg.1=0,2=3", "nDCG(gains={0: 0, 1: 0, 2: 3})"), ("G.1=0,2=3", "G"),
                             ("ndcg_rel.1=0,2=3", "ndcg_rel"), ("Rndcg.1=0,2=3", "Rndcg")]:
        named = fastndcg.evaluate(run, qrels=qrels, preset="trec_eval", measure=name)
        tabled = fastndcg.evaluate(run, qrels=qrels, preset="trec_eval", measure=plain_name,
                                   gain=None if "gains" in plain_name else table)
        col = parse(name).columns[0]
        a = np.asarray(named.per_query.column(col))
        b = np.asarray(tabled.per_query.column(col))
        assert a.tobytes() == b.tobytes(), name
        default = name.partition(".")[0]
        assert not np.array_equal(a, np.asarray(fastndcg.evaluate(
            run, qrels=qrels, preset="trec_eval", measure=default).per_query.column(col)))


REFUSED = [
    ("ndcg.0=1", "a gain of 1 for grade 0"),
    ("ndcg.-1=2", "a gain for grade -1"),
    ("G.1=-3", "grade 1 has a negative gain"),
    ("ndcg.1=0.5", "grade 1's gain 0.5 and grade 0's gain 0"),
    ("Rndcg.1=3.5,2=9,4=7", "grade 1's gain 3.5 and grade 3's gain 3"),
    ("ndcg_rel.1=2,2=2.5", "grade 1's gain 2.0 and grade 2's gain 2.5"),
    ("ndcg.1=2,1=3", "grade 1 is given twice"),
    ("ndcg.x=1", "'x' is not a grade"),
    ("ndcg.1", "'1' is not GRADE=GAIN"),
    ("ndcg.1=abc", "'abc' is not a finite number"),
    ("rbp.p=1.5,2=3", "p 1.5 is out of range"),
    ("rbp.p=0.9,p=0.8", "p is given twice"),
    ("ndcg.1=3000000000", "2**31 or more"),
    ("ndcg.70000=1", "above 65535"),
]


@pytest.mark.parametrize("name,words", REFUSED, ids=[n for n, _ in REFUSED])
def test_quirky_pairs_are_refused_alike_everywhere(plain, name, words):  # noqa: F811
    with pytest.raises(ValueError, match=None) as err:
        parse(name)
    assert words in str(err.value)
    proc = _command(["-m", name, *_files(plain, "core18_title_rm3")])
    assert proc.returncode == 2 and proc.stdout == ""  # trec_eval's "Cannot initialize"
    assert str(err.value) in proc.stderr and proc.stderr.count("\n") == 1
    qrels, run = _files(plain, "core18_title_rm3")
    with pytest.raises(ValueError) as api:
        fastndcg.evaluate(run, qrels=qrels, preset="trec_eval", measure=name)
    assert str(api.value) == str(err.value)


def test_close_gains_are_refused_because_trec_eval_misorders_them(trec_eval_bin, plain):  # noqa: F811
    """Why gains closer than 1 are refused: trec_eval's sort leaves grade 1's gain 0.5
    below grade 0's 0 and ends its ideal ranking there, so its NDCG is not the NDCG
    of those gains."""
    qrels, run = _files(plain, "core18_title_rm3")
    out = subprocess.run([str(trec_eval_bin), "-m", "ndcg.1=0.5", qrels, run],
                         capture_output=True, text=True, timeout=600).stdout
    theirs = float(out.split()[-1])
    ours = fastndcg.evaluate(run, qrels=qrels, preset="trec_eval",
                             measure="nDCG(gains={0: 0, 1: 0.5, 2: 2})").mean["ndcg"]
    assert abs(theirs - ours) > 1e-3


def test_trec_eval_default_gains_and_listed_gains_need_separate_calls(plain):  # noqa: F811
    with pytest.raises(ValueError, match="'ndcg.1=0,2=3' and 'G' use different gains"):
        parse("ndcg.1=0,2=3 G")
    with pytest.raises(ValueError, match="use different gains"):
        parse(["G.1=0,2=3", "rbp.2=5"])
    assert parse("ndcg.1=0,2=3 G.2=3,1=0").gain == parse("ndcg.1=0,2=3").gain
    assert parse("ndcg.1=1,2=2").gain == "linear"  # the grades' own gains


def test_pairs_equal_to_the_grades_are_trec_eval_gains_without_a_preset(plain):  # noqa: F811
    """``Rndcg.2=2`` names trec_eval's own gains (the grades): linear, whatever the
    evaluation's default gain, and rbp keeps the largest listed gain as its scale."""
    qrels, run = _files(plain, "core18_title_rm3")
    for name, plain_name in [("Rndcg.2=2", "Rndcg"), ("G.1=1", "G"), ("ndcg_rel.2=2", "ndcg_rel")]:
        got = fastndcg.evaluate(run, qrels=qrels, measure=name, ties="trec")
        want = fastndcg.evaluate(run, qrels=qrels, measure=plain_name, ties="trec",
                                 gain="linear")
        col = parse(name).columns[0]
        assert (np.asarray(got.per_query.column(col)).tobytes()
                == np.asarray(want.per_query.column(col)).tobytes()), name


def test_a_long_list_of_pairs_reads_fast_enough_to_use():
    """The closeness check compares neighbours in gain order, not every pair."""
    pairs = ",".join(f"{g}={3 * g}" for g in range(1, 9000))
    assert len(parse(f"G.{pairs}").gain) == 8999
