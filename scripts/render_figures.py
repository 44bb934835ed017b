#!/usr/bin/env python
"""Render the comparison figures of the documentation (docs/img/) from real TREC runs.

    python scripts/render_figures.py        # options: --real DIR, --out DIR

The data are the TREC Common Core 2018 qrels and its two runs (title + RM3 and
description + RM3, from capreolus), as kept gzipped in tests/data/real (the same
bytes as shared/conformance/real; see its README for their origin), and a third
run made here from those two: their reciprocal rank fusion (each document scored
``1/(60 + rank)`` summed over the two runs, the top 1,000 kept). Measures follow
trec_eval's rules (``--preset trec_eval``); 10,000 resamples, seed 0.

* ``docs/img/compare-core18.png``: ``fastndcg compare`` of the three runs
  (baseline: title + RM3) on nDCG@10, nDCG@20, AP and P@10, drawn by ``--plot``
  (the command is printed as it runs);
* ``docs/img/compare-core18-segments.png``: the same runs on nDCG@10 with the
  queries split in two at the median number of relevant documents judged
  (``fastndcg.compare(..., segment={query: segment})``, then ``Comparison.plot``).
"""

from __future__ import annotations

import argparse
import gzip
import os
import shlex
import subprocess
import sys
import tempfile
from collections import defaultdict

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REAL = os.path.join(REPO, "tests", "data", "real")
OUT = os.path.join(REPO, "docs", "img")
MEASURES = "nDCG@10 nDCG@20 AP P@10"
RESAMPLES = 10_000


def _find(real: str, rel: str) -> str:
    """``real/rel``, or its gzipped copy (tests/data/real keeps ``.gz`` files)."""
    path = os.path.join(real, rel)
    if os.path.exists(path) or not os.path.exists(path + ".gz"):
        return path
    return path + ".gz"


def _open(path: str):
    if path.endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8")
    return open(path, encoding="utf-8")


def _run(path: str) -> dict[str, list[str]]:
    """query -> documents in rank order (by score descending, as trec_eval reads a run)."""
    rows = defaultdict(list)
    with _open(path) as f:
        for line in f:
            q, _, doc, _, score, _ = line.split()
            rows[q].append((-float(score), doc))
    return {q: [d for _, d in sorted(r)] for q, r in rows.items()}


def write_fusion(paths: list[str], out: str, depth: int = 1000, k: int = 60) -> None:
    """Reciprocal rank fusion of the runs ``paths`` into the TREC run ``out``."""
    runs = [_run(p) for p in paths]
    with open(out, "w", encoding="utf-8") as f:
        for q in sorted(set().union(*runs), key=int):
            score = defaultdict(float)
            for run in runs:
                for rank, doc in enumerate(run.get(q, []), 1):
                    score[doc] += 1 / (k + rank)
            top = sorted(score.items(), key=lambda x: (-x[1], x[0]))[:depth]
            for rank, (doc, s) in enumerate(top, 1):
                f.write(f"{q} Q0 {doc} {rank} {s:.8f} rrf\n")


def relevant_halves(qrels: str) -> dict[str, str]:
    """query -> "few relevant (≤ M)" or "many relevant (> M)", M the median count."""
    count = defaultdict(int)
    with _open(qrels) as f:
        for line in f:
            q, _, _, grade = line.split()
            count[q] += int(grade) > 0
    ordered = sorted(count.values())
    median = ordered[(len(ordered) - 1) // 2]
    return {q: (f"few relevant (≤ {median})" if n <= median else f"many relevant (> {median})")
            for q, n in count.items()}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--real", default=REAL,
                        help="the real TREC data folder (default tests/data/real)")
    parser.add_argument("--out", default=OUT, help="where the PNGs go (default docs/img)")
    args = parser.parse_args(argv)
    qrels = _find(args.real, "qrels/qrels.core18.txt")
    title = _find(args.real, "runs/core18_title_rm3.run")
    desc = _find(args.real, "runs/core18_desc_rm3.run")
    os.makedirs(args.out, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        fused = os.path.join(tmp, "core18_rrf.run")
        write_fusion([title, desc], fused)

        # 1. the command line, as a user runs it
        png = os.path.join(args.out, "compare-core18.png")
        cmd = [sys.executable, "-m", "fastndcg", "compare", "--qrels", qrels,
               f"title_rm3={title}", f"desc_rm3={desc}", f"rrf_title_desc={fused}",
               "--preset", "trec_eval", "-m", MEASURES, "--resamples", str(RESAMPLES),
               "--quiet", "--plot", png]
        print("$ fastndcg " + shlex.join(cmd[3:]), flush=True)
        subprocess.run(cmd, check=True)

        # 2. segments (the Python API: a mapping from query id to segment)
        import fastndcg

        halves = relevant_halves(qrels)
        c = fastndcg.compare(None, {"title_rm3": title, "desc_rm3": desc,
                                    "rrf_title_desc": fused},
                             qrels=qrels, preset="trec_eval", measure="nDCG@10",
                             segment=halves, n_resamples=RESAMPLES)
        print(c.format_table())
        png2 = os.path.join(args.out, "compare-core18-segments.png")
        c.plot(png2)
        print(f"plot: {png2}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
