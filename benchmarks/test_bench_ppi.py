"""Prediction-powered means against the same call without them (pytest-benchmark).

Group "ppi": core18's title+RM3 run (``tests/data/real``, 50 queries, 1,000
documents each) with a synthetic judge: core18's qrels with 30% of the grades
moved by one (kept in 0..2) as the LLM's judgments, and the true grades of 15
queries as the human sample. Two calls, the same work but the interval:
``fastndcg.evaluate(run, qrels=llm, human_qrels=human)`` and
``fastndcg.evaluate(run, qrels={"llm": llm, "human": human})`` (both label sets,
no PPI). Before timing, the LLM means of the two are asserted equal, and the
human sample's mean under PPI equal to the human set's. Target: the PPI call
takes <= 1.1x the time of the label-set call (medians).

pytest-benchmark times each call alone; for the ratio, the two calls are better
timed in alternation on one machine (a ratio of medians, each round timing one
then the other, so that drift affects both alike)::

    python -m benchmarks.test_bench_ppi --rounds 41
"""

from __future__ import annotations

import argparse
import gzip
import os
import statistics
import tempfile
import time

import numpy as np
import pytest

import fastndcg

REAL = os.path.join(os.path.dirname(__file__), os.pardir, "tests", "data", "real")
RUN = os.path.normpath(os.path.join(REAL, "runs", "core18_title_rm3.run.gz"))
QRELS = os.path.normpath(os.path.join(REAL, "qrels", "qrels.core18.txt.gz"))
MEASURES = "nDCG@10 AP P@10 RR"


def judge_files(folder: str, sample: int = 15, seed: int = 0) -> tuple[str, str]:
    """(the LLM's qrels, the human qrels) written to ``folder``: core18's qrels with
    30% of the grades moved by -1..+1 (kept in 0..2), and the true grades of
    ``sample`` queries drawn at random."""
    rng = np.random.default_rng(seed)
    with gzip.open(QRELS, "rt") as f:
        rows = [line.split() for line in f if line.strip()]
    queries = sorted({r[0] for r in rows})
    chosen = set(rng.choice(queries, sample, replace=False).tolist())
    llm, human = os.path.join(folder, "llm.txt"), os.path.join(folder, "human.txt")
    with open(llm, "w") as fl, open(human, "w") as fh:
        for q, it, doc, g in rows:
            moved = int(g)
            if rng.random() < 0.3:
                moved = min(2, max(0, moved + int(rng.integers(-1, 2))))
            fl.write(f"{q} {it} {doc} {moved}\n")
            if q in chosen:
                fh.write(f"{q} {it} {doc} {g}\n")
    return llm, human


def with_ppi(llm: str, human: str):
    return fastndcg.evaluate(RUN, qrels=llm, human_qrels=human, measure=MEASURES)


def label_sets(llm: str, human: str):
    return fastndcg.evaluate(RUN, qrels={"llm": llm, "human": human}, measure=MEASURES)


def check(llm: str, human: str) -> None:
    """The two calls score the same: the LLM means, and the human sample's."""
    ppi, sets = with_ppi(llm, human), label_sets(llm, human)
    assert ppi.mean == sets["llm"].mean
    for m, e in ppi.ppi.measures.items():
        assert e.human_mean == pytest.approx(sets["human"].mean[m], abs=1e-15, rel=0), m
        assert e.n == sets["human"].n_queries


def alternating(llm: str, human: str, rounds: int) -> dict:
    """Medians of ``rounds`` alternating timings of the two calls (each called once
    before, so that compilation is not timed), and their ratio."""
    times = {"ppi": [], "label_sets": []}
    calls = {"ppi": with_ppi, "label_sets": label_sets}
    for call in calls.values():
        call(llm, human)
    for i in range(rounds):
        order = ("ppi", "label_sets") if i % 2 == 0 else ("label_sets", "ppi")
        for name in order:
            start = time.perf_counter()
            calls[name](llm, human)
            times[name].append(time.perf_counter() - start)
    medians = {k: statistics.median(v) for k, v in times.items()}
    return medians | {"ratio": medians["ppi"] / medians["label_sets"]}


@pytest.fixture(scope="module")
def judged(tmp_path_factory):
    llm, human = judge_files(str(tmp_path_factory.mktemp("bench-ppi")))
    check(llm, human)
    return llm, human


@pytest.mark.parametrize("how", ["human_qrels", "label-sets"])
def test_ppi(benchmark, judged, how):
    benchmark.group = "ppi"
    benchmark(with_ppi if how == "human_qrels" else label_sets, *judged)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=21)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        llm, human = judge_files(folder)
        check(llm, human)
        got = alternating(llm, human, args.rounds)
    print(f"human_qrels= {got['ppi'] * 1e3:.1f} ms, qrels={{llm, human}} "
          f"{got['label_sets'] * 1e3:.1f} ms (medians of {args.rounds} alternating rounds): "
          f"ratio {got['ratio']:.3f}")


if __name__ == "__main__":
    main()
