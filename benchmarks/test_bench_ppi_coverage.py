"""Prediction-powered intervals by simulation: coverage, width and time (pytest-benchmark).

Group "ppi-coverage": simulated logs of n hand-judged and N LLM-judged queries and
two systems, A and B. Each query's human values are Y_A ~ Beta(2, 3) (mean 0.4)
and Y_B = 0.7 Y_A + 0.3 Z, Z ~ Beta(3, 2) (mean 0.46, correlated with A's), so
the human-label means are known exactly: 0.4 for A and -0.06 for the difference
A - B. Two judges give the LLM's values Ŷ (clipped to [0, 1]):

* **correlated**: Ŷ = Y + N(0, 0.05);
* **biased**: Ŷ = Y + 0.15 + N(0, 0.1), grading everything higher.

Each log goes through :class:`fastndcg.ppi.Sums` (PPI++'s tuned λ, 95%) for three
measures: A's value, B's and the per-query difference A - B (a paired difference
of two systems is the mean of the per-query differences, estimated as any mean).
Reported, per judge: the share of the 95% intervals that cover the human-label
mean (for A and for A - B; the human sample's own interval beside them), the
mean width of the prediction-powered interval over the human-only one, the mean
of the LLM-label means and of the estimates, and the time a log. The benchmark
asserts each coverage within 3 Monte Carlo standard errors of 95%.

Quick sizes (the default): 2,000 logs of n = 200, N = 2,000. Full
(``FASTNDCG_BENCH_FULL=1``): 10,000 logs of n = 200, N = 20,000::

    pytest benchmarks/test_bench_ppi_coverage.py --benchmark-enable
    python -m benchmarks.test_bench_ppi_coverage          # the table, quick sizes
    FASTNDCG_BENCH_FULL=1 python -m benchmarks.test_bench_ppi_coverage
"""

from __future__ import annotations

import time

import numpy as np
import pytest

from benchmarks import _data
from fastndcg.ppi import Sums

TRUTH = {"a": 0.4, "a-b": 0.4 - (0.7 * 0.4 + 0.3 * 0.6)}   # the human-label means
CONFIDENCE = 0.95


def sizes() -> dict:
    """Logs and queries a log: quick, or full with ``FASTNDCG_BENCH_FULL=1``."""
    if _data.is_quick():
        return {"logs": 2_000, "n": 200, "N": 2_000}
    return {"logs": 10_000, "n": 200, "N": 20_000}


def correlated(rng: np.random.Generator, y: np.ndarray) -> np.ndarray:
    """A judge close to people: their value plus N(0, 0.05)."""
    return y + 0.05 * rng.normal(size=y.shape)


def biased(rng: np.random.Generator, y: np.ndarray) -> np.ndarray:
    """A lenient judge: 0.15 higher than people, and noisier."""
    return y + 0.15 + 0.1 * rng.normal(size=y.shape)


JUDGES = {"correlated": correlated, "biased": biased}


def simulate(judge, logs: int, n: int, N: int, seed: int = 2024) -> dict:
    """``logs`` simulated logs through :class:`Sums`: per measure ("a", "b", "a-b")
    arrays of each log's estimate, interval, human-only interval and LLM mean, and
    ``seconds``, the time of the estimates alone."""
    rng = np.random.default_rng(seed)
    names = ["a", "b", "a-b"]
    fields = ("estimate", "low", "high", "human_low", "human_high", "llm_mean")
    out = {m: {f: np.empty(logs) for f in fields} for m in names}
    labelled = np.arange(n + N) < n
    seconds = 0.0
    for i in range(logs):
        y_a = rng.beta(2, 3, n + N)
        y_b = 0.7 * y_a + 0.3 * rng.beta(3, 2, n + N)
        human = np.column_stack([y_a, y_b, y_a - y_b])
        yhat = np.clip(judge(rng, human[:, :2]), 0, 1)
        llm = np.column_stack([yhat, yhat[:, 0] - yhat[:, 1]])
        start = time.perf_counter()
        sums = Sums.empty(names)
        sums.add(llm, human, labelled)
        estimates = sums.estimate(CONFIDENCE, "tuned").measures
        seconds += time.perf_counter() - start
        for m in names:
            for f in fields:
                out[m][f][i] = getattr(estimates[m], f)
    return {"measures": out, "seconds": seconds, "logs": logs}


def summary(sim: dict) -> dict:
    """Per measure with a known truth ("a", "a-b"): coverage of the PPI and of the
    human-only intervals, their mean width ratio, the mean LLM mean and estimate."""
    rows = {}
    for m, truth in TRUTH.items():
        v = sim["measures"][m]
        rows[m] = {"coverage": float(np.mean((v["low"] <= truth) & (truth <= v["high"]))),
                   "human_coverage": float(np.mean((v["human_low"] <= truth)
                                                   & (truth <= v["human_high"]))),
                   "width_ratio": float(np.mean(v["high"] - v["low"])
                                        / np.mean(v["human_high"] - v["human_low"])),
                   "llm_mean": float(np.mean(v["llm_mean"])),
                   "estimate": float(np.mean(v["estimate"])), "truth": truth}
    return rows


def monte_carlo_se(logs: int) -> float:
    """The standard error of a 95% coverage measured on ``logs`` logs."""
    return float(np.sqrt(0.95 * 0.05 / logs))


@pytest.mark.parametrize("judge", list(JUDGES))
def test_ppi_coverage(benchmark, judge):
    benchmark.group = "ppi-coverage"
    s = sizes()
    sim = benchmark.pedantic(simulate, args=(JUDGES[judge], s["logs"], s["n"], s["N"]),
                             rounds=1, iterations=1)
    rows = summary(sim)
    benchmark.extra_info.update(sizes=s, seconds_per_log=sim["seconds"] / sim["logs"],
                                **{f"{m}_{k}": v for m, r in rows.items() for k, v in r.items()})
    mc = monte_carlo_se(s["logs"])
    for m, r in rows.items():
        assert abs(r["coverage"] - 0.95) <= 3 * mc, (m, r)
        assert abs(r["estimate"] - r["truth"]) < 0.002, (m, r)  # the bias is taken off
        assert r["width_ratio"] < 1, (m, r)
    if judge == "biased":
        assert rows["a"]["llm_mean"] - TRUTH["a"] > 0.1  # the LLM alone is off


def main() -> None:
    s = sizes()
    print(f"{s['logs']:,} logs a judge, n = {s['n']:,} hand-judged and N = {s['N']:,} "
          f"LLM-judged queries, 95% intervals (Monte Carlo s.e. of a coverage "
          f"{monte_carlo_se(s['logs']):.4f})")
    print("| judge | measure | PPI coverage | human-only coverage | width / human-only | "
          "mean of LLM means | mean of estimates | human-label mean | time a log |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, judge in JUDGES.items():
        sim = simulate(judge, s["logs"], s["n"], s["N"])
        per_log = sim["seconds"] / sim["logs"] * 1e3
        for m, r in summary(sim).items():
            what = "mean of A" if m == "a" else "difference A − B"
            print(f"| {name} | {what} | {r['coverage']:.1%} | {r['human_coverage']:.1%} | "
                  f"{r['width_ratio']:.2f} | {r['llm_mean']:.3f} | {r['estimate']:.3f} | "
                  f"{r['truth']:.3f} | {per_log:.2f} ms |")


if __name__ == "__main__":
    main()
