"""``fastndcg warmup``: it reaches every kernel variant that real jobs reach.

A fresh process runs the warm-up, notes every compiled signature of every
kernel, then runs a varied set of jobs (every input dtype pair, read-only,
strided and Arrow inputs, search logs and qrels with integer and string ids, trec
ties, every measure, comparisons): none of them may need a signature the warm-up
did not produce. The process shares the suite's compile cache, so it loads rather
than compiles what earlier tests compiled."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import pytest

import fastndcg
from fastndcg import cli

CHILD = r"""
import json, sys
import numpy as np
import pyarrow as pa
sys.path.insert(0, sys.argv[1])
import fastndcg
from fastndcg._warmup import _dispatchers
import test_inputs as T

def signatures():
    return {f"{d.py_func.__module__}.{d.py_func.__name__}{s}" for d in _dispatchers()
            for s in d.signatures}

report = fastndcg.warmup()
after_warmup = signatures()

rng = np.random.default_rng(5)
_, _, offsets = T.base_batch()
n = int(offsets[-1])
for s_type, l_type in T.DTYPE_PAIRS:
    s, l = T.typed_scores(s_type, rng, n), T.typed_labels(l_type, rng, offsets)
    fastndcg.ndcg(s, l, offsets, k=[1, 10, None], ties="pessimistic")
    fastndcg.ndcg(pa.array(s), pa.array(l), offsets, k=5)
    fastndcg.ndcg(np.repeat(s, 2)[::2], l, offsets, k=5, ties="stable")
    fastndcg.measure(s, np.abs(l), offsets, measure=["ap", "rr@10", "p@5", "r@5", "success@1"])
    fastndcg.idcg(np.abs(l), offsets, k=3)
for nan_case in (np.array([np.nan, 1.0, -np.inf]), np.array([np.nan, 1.0, 2.0], np.float32)):
    fastndcg.ndcg(nan_case, [1, 0, 2], [0, 3], nan_scores="last")
q = np.repeat(np.arange(30), 10)
d = np.tile(np.arange(10), 30)
for ids in ("int", "str"):
    qid = pa.array(q) if ids == "int" else pa.array([f"q{v}" for v in q])
    did = pa.array(d) if ids == "int" else pa.array([f"doc{v}" for v in d])
    sc = np.round(rng.random(len(q)), 1)
    lab = rng.integers(0, 3, len(q))
    log = pa.table({"query_id": qid, "doc_id": did, "score": sc, "score_b": sc[::-1].copy(),
                    "label": lab})
    qrels = pa.table({"query_id": qid, "doc_id": did, "label": lab.astype(np.int64)})
    run = pa.table({"query_id": qid, "doc_id": did, "score": sc.astype(np.float32)})
    fastndcg.evaluate(log, k=[1, 10])
    fastndcg.evaluate(run, qrels=qrels, preset="trec_eval", measure=["ndcg_cut.10", "map", "P.5", "judged@10"])
    fastndcg.evaluate(run, qrels=qrels, k=10, ties="average")
    fastndcg.compare(log, ["score", "score_b"], k=10, n_resamples=300)
    fastndcg.agreement(qrels, qrels.set_column(2, "label", pa.array(lab[::-1] / 2)))
    if ids == "int":  # a chunk large enough for the check of tied scores
        big_q = np.repeat(np.arange(1500), 100)
        big = pa.table({"query_id": big_q, "doc_id": np.tile(np.arange(100), 1500),
                        "score": rng.random(len(big_q))})
        for dtype in ("float64", "float32"):
            fastndcg.evaluate(big.set_column(2, "score", big.column(2).cast(dtype)),
                              qrels=qrels, ties="trec", k=10, per_query=False)
            # ranx's order where scores tie; whole lists from the groups of gains
            fastndcg.evaluate(big.set_column(2, "score", big.column(2).cast(dtype)),
                              qrels=qrels, preset="ranx", measure=["ndcg", "ndcg@100", "map"],
                              per_query=False)
    # the trec_eval command on its own text files (all_trec: relstring; -M)
    import contextlib, io, os, tempfile
    from fastndcg import cli
    with tempfile.TemporaryDirectory() as tmp:
        rp, qp = os.path.join(tmp, "run.txt"), os.path.join(tmp, "qrels.txt")
        with open(rp, "w") as f:
            f.write("".join(f"q{a} Q0 d{b} {b} {s} t\n" for a, b, s in zip(q, d, sc)))
        with open(qp, "w") as f:
            f.write("".join(f"q{a} 0 d{b} {g}\n" for a, b, g in zip(q, d, lab)))
        with contextlib.redirect_stdout(io.StringIO()):
            assert cli.main(["trec_eval", "-q", "-m", "all_trec", qp, rp]) == 0
            assert cli.main(["trec_eval", "-q", "-M", "5", "-m", "official", qp, rp]) == 0
        with open(rp, "w") as f:  # -M on a run of many queries
            f.write("".join(f"q{a} Q0 d{b} {b} {s} t\n"
                            for a in range(400) for b, s in enumerate(sc[:3])))
        with open(qp, "w") as f:
            f.write("".join(f"q{a} 0 d1 1\n" for a in range(400)))
        with contextlib.redirect_stdout(io.StringIO()):
            assert cli.main(["trec_eval", "-q", "-c", "-M", "2", "-m", "P.5", qp, rp]) == 0

new = sorted(signatures() - after_warmup)
print("REPORT " + json.dumps({"new": new, "describe": report.describe(),
                              "n": len(after_warmup)}))
"""


@pytest.mark.heavy
def test_warmup_reaches_every_variant_jobs_use():
    tests_dir = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(os.path.abspath(fastndcg.__file__)))
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, "-c", CHILD, tests_dir], env=env, cwd=root,
                          capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads([l for l in done.stdout.splitlines() if l.startswith("REPORT ")][-1][7:])
    assert report["n"] > 20
    assert report["new"] == [], report["new"]


@pytest.mark.heavy
def test_warmup_command(capsys):
    assert cli.main(["warmup", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "kernel variants compiled" in out and "loaded from the cache" in out


def test_warmup_function_reports():
    stream = io.StringIO()
    fastndcg.warmup()
    report = fastndcg.warmup(progress=True, stream=stream)  # everything is in memory now
    assert report.steps == len(report.names) >= 9
    assert report.compiled == report.loaded == 0, report
    assert report.cache_dir.startswith(fastndcg._cache.cache_dir())
    assert "done" in stream.getvalue()


def test_warmup_reaches_the_agreement_kernel():
    """After warmup, agreement compiles nothing, whatever its inputs take: integer or
    text ids (short ones packed into integers, long ones hashed), whole or
    fractional grades."""
    import pyarrow as pa

    from fastndcg._kernels import agreement as A
    from fastndcg._kernels import join as J

    dispatchers = [getattr(mod, name) for mod in (A, J) for name in dir(mod)
                   if hasattr(getattr(mod, name), "signatures")]
    assert any(d is A.pair_codes for d in dispatchers)
    fastndcg.warmup()
    warmed = {d: list(d.signatures) for d in dispatchers}
    for qid, did in ((["q1"] * 3 + ["q2"] * 2, ["d1", "d2", "d3", "d1", "d2"]),
                     ([1, 1, 1, 2, 2], [11, 12, 13, 11, 12]),
                     (["q1"] * 3 + ["q2"] * 2, [f"clueweb12-{i:08d}" for i in (1, 2, 3, 1, 2)])):
        human = pa.table({"query_id": qid, "doc_id": did, "label": [2, 1, 0, 1, 0]})
        for labels in ([1.5, 1.0, 0.0, 0.5, 0.0], [1, 1, 0, 2, 0]):
            fastndcg.agreement(human, human.set_column(2, "label", pa.array(labels)))
    left = {d.__name__: d.signatures[len(warmed[d]):] for d in dispatchers
            if list(d.signatures) != warmed[d]}
    assert not left, left  # nothing left to compile


def test_warmup_bad_arguments():
    with pytest.raises(TypeError, match="portable must be True or False"):
        fastndcg.warmup(portable="yes")


def test_portable_refused_once_code_for_this_cpu_exists(monkeypatch, tmp_path):
    fastndcg.ndcg([1.0, 0.5], [1, 0], [0, 2])  # this process now compiles for its CPU
    monkeypatch.delenv("NUMBA_CPU_NAME", raising=False)
    monkeypatch.setenv("FASTNDCG_CACHE_DIR", str(tmp_path))
    with pytest.raises(ValueError, match="fresh process"):
        fastndcg.warmup(portable=True)


def test_warmup_without_disk_cache(monkeypatch):
    monkeypatch.setattr(fastndcg._cache, "CACHE", False)
    with pytest.raises(ValueError, match="FASTNDCG_CACHE"):
        fastndcg.warmup()


@pytest.mark.heavy
def test_warmup_in_several_processes():
    """jobs=2: every step in its own process, sharing the cache through its locks."""
    fastndcg.warmup()  # whatever the suite has not compiled yet is compiled here, once
    report = fastndcg.warmup(jobs=2)
    assert report.compiled == 0, report  # the processes found everything in the cache
    assert report.loaded >= report.steps  # each process loaded its step's kernels
    assert report.cpu_s > 0


def test_warmup_jobs_must_be_a_positive_int():
    for bad in (0, -1):
        with pytest.raises(ValueError, match=f"jobs must be >= 1, got {bad}"):
            fastndcg.warmup(jobs=bad)
    for bad in (1.5, True, "2"):
        with pytest.raises(TypeError, match=f"jobs must be an int >= 1, got {bad!r}"):
            fastndcg.warmup(jobs=bad)
    with pytest.raises(ValueError, match="jobs must be <= 256, got 257"):
        fastndcg.warmup(jobs=257)
