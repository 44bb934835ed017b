"""Benchmark input files: Parquet search logs, and Parquet runs with their qrels.

* :func:`cache_dir` -- where full-size inputs are kept between runs
  (``$FASTNDCG_BENCH_CACHE``, else ``~/.cache/fastndcg-bench``);
* :func:`cached_log` -- a seeded synthetic log (``fastndcg.synth``) written once
  into a folder and reused while its schema and sizes match;
* :func:`write_run_qrels` -- a Parquet run (query id, doc id, score; ~100
  documents a query) and its Parquet qrels (query id, doc id, label; ~30% of the
  run's rows judged, plus judged documents the run does not retrieve), with
  int64 or string ids;
* :func:`cached_run_qrels` -- the same pair, cached like :func:`cached_log`;
* :func:`unpacked` -- a gzip file of ``tests/data/real`` (:data:`CORE18_RUN`, Anserini's
  Core 2018 title + RM3 run, 50 queries x 1,000 documents, and :data:`CORE18_QRELS`)
  as the plain text file trec_eval reads;
* :func:`perturbed_runs` -- copies of a TREC run, each with its own run tag and its
  scores moved by seeded noise: many distinct runs of one real shape.

The fixtures in ``benchmarks/conftest.py`` put quick-size inputs in pytest's
temporary folder and full-size ones (``FASTNDCG_BENCH_FULL=1``) in :func:`cache_dir`.
"""

from __future__ import annotations

import gzip
import os
import shutil
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from fastndcg.io import read_trec_run
from fastndcg.synth import SCHEMA, write_synthetic_log

REAL = Path(__file__).resolve().parents[1] / "tests" / "data" / "real"
CORE18_RUN = REAL / "runs" / "core18_title_rm3.run.gz"
CORE18_QRELS = REAL / "qrels" / "qrels.core18.txt.gz"


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def cache_dir() -> Path:
    """``$FASTNDCG_BENCH_CACHE``, else ``~/.cache/fastndcg-bench`` (created)."""
    folder = Path(os.environ.get("FASTNDCG_BENCH_CACHE")
                  or Path.home() / ".cache" / "fastndcg-bench")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _replace_atomically(path: Path, write) -> None:
    """``write(tmp)`` then rename ``tmp`` to ``path`` (no half-written file is ever reused)."""
    tmp = path.with_name(f"{path.name}.tmp-{os.getpid()}")
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def cached_log(folder: str | os.PathLike, n_queries: int, row_group_rows: int, seed: int = 0,
               mean_docs: int | None = None) -> tuple[str, int]:
    """(path, rows) of the synthetic log, written into ``folder`` unless present.

    ``mean_docs`` None is the synthetic log's default list length (~50 rows a
    query: uniform on 1..99); ``mean_docs=10`` gives 1..19 rows a query.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    shape = "" if mean_docs is None else f"-md{mean_docs}"
    path = folder / f"synth-{n_queries}q{shape}-seed{seed}-rg{row_group_rows}.parquet"
    if path.exists():
        try:
            meta = pq.ParquetFile(path).metadata
            last = meta.row_group(meta.num_row_groups - 1).column(0).statistics
            if (meta.schema.to_arrow_schema().remove_metadata().equals(SCHEMA)
                    and last is not None and last.has_min_max and last.max == n_queries - 1
                    and meta.row_group(0).num_rows == min(row_group_rows, meta.num_rows)):
                return str(path), meta.num_rows
        except (OSError, pa.ArrowException, IndexError):
            pass
        say(f"{path} is not the expected log; writing it again")
    say(f"writing {path}: {n_queries:,} queries"
        f"{'' if mean_docs is None else f' of ~{mean_docs} rows'} ...")
    t0 = time.perf_counter()
    extra = {} if mean_docs is None else {"mean_docs": mean_docs}
    _replace_atomically(path, lambda tmp: write_synthetic_log(
        tmp, n_queries, seed=seed, row_group_rows=row_group_rows, **extra))
    rows = pq.ParquetFile(path).metadata.num_rows
    say(f"  {rows:,} rows, {path.stat().st_size / 2**20:,.0f} MiB in "
        f"{time.perf_counter() - t0:.1f} s")
    return str(path), rows


# --------------------------------------------------------------------------- run + qrels

RUN_SCHEMA = {"int64": pa.schema([("query_id", pa.int64()), ("doc_id", pa.int64()),
                                  ("score", pa.float64())]),
              "string": pa.schema([("query_id", pa.string()), ("doc_id", pa.string()),
                                   ("score", pa.float64())])}
QRELS_SCHEMA = {"int64": pa.schema([("query_id", pa.int64()), ("doc_id", pa.int64()),
                                    ("label", pa.int64())]),
                "string": pa.schema([("query_id", pa.string()), ("doc_id", pa.string()),
                                     ("label", pa.int64())])}
_QRELS_BLOCK = 8192  # queries per generated block (the seed stream is per block)


def _ids(numbers: np.ndarray, prefix: str, kind: str) -> pa.Array:
    """int64 ids as they are, or as strings ``prefix<number>``."""
    if kind == "int64":
        return pa.array(numbers, pa.int64())
    return pc.binary_join_element_wise(prefix, pc.cast(pa.array(numbers), pa.string()), "")


def _run_qrels_block(first: int, n_q: int, n_docs: int, extra: int, judged_share: float,
                     unjudged: np.ndarray, seed: int, kind: str,
                     decimals: int | None = 1) -> tuple[pa.Table, pa.Table]:
    rng = np.random.default_rng([seed, first // _QRELS_BLOCK])
    pool = n_docs + extra
    # distinct document numbers of varied digit counts, so that trec_eval's tie rule
    # (document id descending as strings) differs from numeric order
    docs = (10.0 ** rng.uniform(2.0, 9.0, size=(n_q, pool))).astype(np.int64)
    docs = docs - docs % pool + np.arange(pool)  # distinct within a query
    relevance = rng.choice(4, size=(n_q, pool), p=[0.55, 0.25, 0.13, 0.07])
    noise = rng.normal(0.0, 0.6, size=(n_q, n_docs))
    scores = 0.5 * relevance[:, :n_docs] + noise
    if decimals is not None:  # (1 decimal: many ties)
        scores = np.round(scores, decimals) + 0.0
    order = np.argsort(-scores, axis=1, kind="stable")  # rows by rank, ties in random order
    qnum = np.arange(first, first + n_q, dtype=np.int64)
    run = pa.table([_ids(np.repeat(qnum, n_docs), "q", kind),
                    _ids(np.take_along_axis(docs[:, :n_docs], order, axis=1).ravel(), "doc", kind),
                    pa.array(np.take_along_axis(scores, order, axis=1).ravel())],
                   schema=RUN_SCHEMA[kind])
    judged = np.zeros((n_q, pool), bool)
    judged[:, :n_docs] = rng.random((n_q, n_docs)) < judged_share
    judged[:, n_docs:] = True
    judged[unjudged[first:first + n_q]] = False
    qi, di = np.nonzero(judged)
    qrels = pa.table([_ids(qnum[qi], "q", kind), _ids(docs[qi, di], "doc", kind),
                      pa.array(relevance[qi, di].astype(np.int64))], schema=QRELS_SCHEMA[kind])
    return run, qrels


def write_run_qrels(folder: str | os.PathLike, n_queries: int, kind: str = "int64", *,
                    n_docs: int = 100, extra: int = 10, judged_share: float = 0.30,
                    seed: int = 0, row_group_rows: int = 1 << 20,
                    suffix: str = "", decimals: int | None = 1) -> tuple[str, str, int, int]:
    """A Parquet run and its Parquet qrels in ``folder``; (run, qrels, run rows, judgments).

    * run ``run-<kind>.parquet``: ``query_id``, ``doc_id``, ``score`` (float64,
      ``decimals`` decimals: with 1, scores tie and trec_eval's rule decides; with
      None, all digits, as a model's scores, which do not tie); ``n_queries``
      queries of ``n_docs`` rows, in rank order (score descending, ties in
      random order); ids int64 (``kind="int64"``) or strings ``q<n>`` /
      ``doc<n>`` (``kind="string"``); document numbers have 1..9 digits
      (log-uniform);
    * qrels ``qrels-<kind>.parquet``: ``query_id``, ``doc_id``, ``label``
      (int64 grades 0..3): ``judged_share`` of the run's rows plus ``extra``
      documents a query that the run does not retrieve;
    * the last 1% of the queries have no judgments at all (left out of the means).
    """
    if kind not in RUN_SCHEMA:
        raise ValueError(f"kind must be 'int64' or 'string', got {kind!r}")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    run_path = folder / f"run-{kind}{suffix}.parquet"
    qrels_path = folder / f"qrels-{kind}{suffix}.parquet"
    unjudged = np.zeros(n_queries, bool)
    unjudged[n_queries - max(1, n_queries // 100):] = True
    n_run = n_judged = 0
    with pq.ParquetWriter(run_path, RUN_SCHEMA[kind]) as run_w, \
            pq.ParquetWriter(qrels_path, QRELS_SCHEMA[kind]) as qrels_w:
        pending: list[pa.Table] = []
        for first in range(0, n_queries, _QRELS_BLOCK):
            n_q = min(_QRELS_BLOCK, n_queries - first)
            run, qrels = _run_qrels_block(first, n_q, n_docs, extra, judged_share, unjudged,
                                          seed, kind, decimals)
            pending.append(run)
            if sum(t.num_rows for t in pending) >= row_group_rows:
                run_w.write_table(pa.concat_tables(pending), row_group_size=row_group_rows)
                pending = []
            qrels_w.write_table(qrels, row_group_size=row_group_rows)
            n_run += run.num_rows
            n_judged += qrels.num_rows
        if pending:
            run_w.write_table(pa.concat_tables(pending), row_group_size=row_group_rows)
    return str(run_path), str(qrels_path), n_run, n_judged


def cached_run_qrels(folder: str | os.PathLike, n_queries: int, kind: str = "int64",
                     **options) -> tuple[str, str, int, int]:
    """:func:`write_run_qrels` into ``folder``, reused while the files are complete."""
    folder = Path(folder)
    name = f"runqrels-{n_queries}q-{kind}" + "".join(
        f"-{k}{v}" for k, v in sorted(options.items()))
    sub = folder / name
    done = sub / "done"
    if done.exists():
        run, qrels, n_run, n_judged = done.read_text().split("\n")[:4]
        if os.path.exists(run) and os.path.exists(qrels):
            return run, qrels, int(n_run), int(n_judged)
    say(f"writing a Parquet run and qrels ({kind} ids) in {sub}: {n_queries:,} queries ...")
    t0 = time.perf_counter()
    out = write_run_qrels(sub, n_queries, kind, **options)
    done.write_text("\n".join(map(str, out)) + "\n")
    say(f"  {out[2]:,} run rows, {out[3]:,} judgments in {time.perf_counter() - t0:.1f} s")
    return out


def unpacked(path: Path, folder: str | os.PathLike) -> Path:
    """The gzip file ``path`` decompressed into ``folder`` (its name without ``.gz``)."""
    out = Path(folder) / Path(path).name.removesuffix(".gz")
    with gzip.open(path, "rb") as src, open(out, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return out


def perturbed_runs(run: Path, folder: str | os.PathLike, n: int, seed: int = 0,
                   noise: float = 0.05) -> list[Path]:
    """``n`` copies of the TREC run ``run`` in ``folder`` (``run-000.txt``, ...), copy
    i with run tag ``copy-i`` and each score moved by Gaussian noise of ``noise``
    standard deviations of the run's scores (seeded), rounded to 6 decimals as the
    original, documents re-ranked (rank field renumbered) by the new scores: runs of
    the original's size and shape, distinct from each other."""
    import pyarrow.csv as pacsv

    table = read_trec_run(run)
    ids, docs = table["query_id"].combine_chunks(), table["doc_id"].combine_chunks()
    scores = table["score"].to_numpy()
    n_rows = len(scores)
    new = np.ones(n_rows, bool)
    new[1:] = pc.not_equal(ids.slice(1), ids.slice(0, n_rows - 1)).to_numpy(zero_copy_only=False)
    query = np.cumsum(new) - 1  # queries are contiguous in a TREC run
    first = np.flatnonzero(new)
    rng = np.random.default_rng(seed)
    spread = noise * float(np.std(scores))
    width = len(str(n - 1))
    paths = []
    for i in range(n):
        moved = np.round(scores + rng.normal(0.0, spread, n_rows), 6)
        order = np.lexsort((-moved, query))
        rank = np.arange(n_rows) - first[query[order]] + 1
        out = pa.table({"qid": ids.take(order), "q0": pa.repeat(pa.scalar("Q0"), n_rows),
                        "docno": docs.take(order), "rank": rank, "score": moved[order],
                        "tag": pa.repeat(pa.scalar(f"copy-{i:0{width}d}"), n_rows)})
        path = Path(folder) / f"run-{i:0{width}d}.txt"
        pacsv.write_csv(out, path, write_options=pacsv.WriteOptions(
            include_header=False, delimiter=" ", quoting_style="none"))
        paths.append(path)
    return paths
