"""Prediction-powered means in flat memory: peak RSS at 10x the queries.

A log of Q queries, two documents each, labelled row by row by an LLM (the run's
``label`` column: list mode), is streamed to ``fastndcg.evaluate`` as a
``pyarrow.RecordBatchReader`` that makes its batches as they are read (nothing
of the log is held), with ``human_qrels=`` the true grades of 1,000 queries drawn
uniformly, ``per_query=False``. Each size runs in a fresh process, and its peak
resident memory is read from the kernel. The sums of the prediction-powered
means are added chunk by chunk, so nothing grows with Q. Target: the peak at
10x the queries within 1.3x of the peak at 1x.

The LLM's judgments are in the run here because a qrels table of every query
(``qrels=``) is itself held in memory, and grows with the queries whatever the
means do. Quick sizes (1M and 10M queries) by default; ``FASTNDCG_BENCH_FULL=1``
for 10M and 100M::

    FASTNDCG_BENCH_FULL=1 pytest benchmarks/test_bench_ppi_memory.py --benchmark-enable
    python -m benchmarks.test_bench_ppi_memory 10000000 100000000
"""

from __future__ import annotations

import json
import sys

import pytest

from benchmarks import _data, _procs

SAMPLE = 1_000
DOCS = 2
BATCH_QUERIES = 500_000

CHILD = r"""
import json, sys, time
import numpy as np, pyarrow as pa
import fastndcg

Q, SAMPLE, DOCS, BATCH = (int(a) for a in sys.argv[1:5])
schema = pa.schema([("query_id", pa.int64()), ("doc_id", pa.int64()), ("score", pa.float64()),
                    ("label", pa.float64())])

def truth(q):  # each query's true grades: a function of its id, so the sample can be made
    return ((q[:, None] * 7 + np.arange(DOCS)[None, :]) % 3).astype(np.float64)

def batches():
    for start in range(0, Q, BATCH):
        q = np.arange(start, min(start + BATCH, Q), dtype=np.int64)
        g = truth(q)
        llm = np.clip(g + (((q[:, None] * 13 + np.arange(DOCS)) % 5) == 0), 0, 2)
        yield pa.record_batch([pa.array(np.repeat(q, DOCS)),
                               pa.array(np.tile(np.arange(DOCS, dtype=np.int64), len(q))),
                               pa.array(np.tile(np.arange(DOCS, 0, -1, dtype=np.float64), len(q))),
                               pa.array(llm.ravel())], schema=schema)

rng = np.random.default_rng(0)
sample = np.sort(rng.choice(Q, SAMPLE, replace=False)).astype(np.int64)
human = pa.table({"query_id": np.repeat(sample, DOCS),
                  "doc_id": np.tile(np.arange(DOCS, dtype=np.int64), SAMPLE),
                  "label": truth(sample).ravel()})
t0 = time.perf_counter()
report = fastndcg.evaluate(pa.RecordBatchReader.from_batches(schema, batches()),
                           human_qrels=human, k=[10], per_query=False)
e = report.ppi.measures["ndcg@10"]
print(json.dumps({"queries": Q, "seconds": time.perf_counter() - t0, "n": e.n, "N": e.N,
                  "estimate": e.estimate, "low": e.low, "high": e.high}))
"""


def measure(queries: int) -> dict:
    """One fresh process scoring ``queries`` queries: its result and peak RSS."""
    cmd = _procs.python_command(CHILD) + [str(queries), str(SAMPLE), str(DOCS),
                                          str(BATCH_QUERIES)]
    peak, wall, out = _procs.run_peak_rss(cmd)
    row = _procs.last_json(out)
    row.update(peak_rss=peak, wall=wall)
    return row


def sizes() -> tuple[int, int]:
    return (1_000_000, 10_000_000) if _data.is_quick() else (10_000_000, 100_000_000)


@pytest.mark.benchmark(group="ppi-memory")
def test_ppi_memory_is_flat(benchmark):
    small, large = sizes()
    rows = {}

    def both():
        rows["small"], rows["large"] = measure(small), measure(large)
    benchmark.pedantic(both, rounds=1, iterations=1)
    for size, row in ((small, rows["small"]), (large, rows["large"])):
        assert (row["n"], row["N"]) == (SAMPLE, size - SAMPLE)
        assert row["low"] <= row["estimate"] <= row["high"]
    ratio = rows["large"]["peak_rss"] / rows["small"]["peak_rss"]
    benchmark.extra_info.update(small=rows["small"], large=rows["large"], rss_ratio=ratio)
    assert ratio <= 1.3, rows


def main(argv: list[str]) -> None:
    for q in (int(a) for a in argv) if argv else sizes():
        row = measure(q)
        print(json.dumps(row))


if __name__ == "__main__":
    main(sys.argv[1:])
