"""``fastndcg trec_eval`` against the real trec_eval 10, whole processes timed from
outside (start-up, reading, scoring and printing included), ``benchmark.pedantic``
over a few rounds after one warm-up round; the report takes medians.

Group ``trec-eval-command``, on a generated run with real qrels: the MS MARCO passage
dev-subset qrels of ``tests/data/real`` (6,980 queries, about one judgment each) and a
run of 1,000 documents for each of their queries (full: all 6,980 queries, ~7M lines,
~230 MB; quick: 300 queries), scores with three decimals (so they tie, and
trec_eval's rule decides), every judged document placed at a seeded rank. Cases:

* ``trec_eval -q -m all_trec QRELS RUN`` (built from ``tests/trec_eval``);
* ``fastndcg trec_eval -q -m all_trec QRELS RUN``, its output checked first to be
  trec_eval's, byte for byte;
* the same two with trec_eval's default measures (``-q``, the official set).

The run is written once into the benchmark cache (full) or pytest's temporary folder.
"""

from __future__ import annotations

import gzip
import subprocess

import numpy as np
import pyarrow as pa
import pyarrow.csv as csv
import pytest

from . import _data, _files, _procs

QRELS = _files.REAL / "qrels" / "qrels.msmarco-passage.dev-subset.txt.gz"
DOCS = 1000


def _n_queries() -> int | None:
    return 300 if _data.is_quick() else None


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """(qrels, run, lines): plain text files trec_eval reads."""
    n_q = _n_queries()
    folder = _files.cache_dir() if n_q is None else tmp_path_factory.mktemp("trec_cmd")
    tag = "all" if n_q is None else str(n_q)
    qrels_path = folder / f"msmarco-dev-qrels-{tag}.txt"
    run_path = folder / f"msmarco-dev-run-{tag}x{DOCS}.txt"
    judged: dict = {}
    with gzip.open(QRELS, "rt") as f:
        lines = [line for line in f if line.strip()]
    for line in lines:
        q, _, d, _ = line.split()
        judged.setdefault(q, []).append(d)
    qids = sorted(judged)[:n_q] if n_q else sorted(judged)
    keep = set(qids)
    if not qrels_path.exists():
        qrels_path.write_text("".join(line for line in lines if line.split()[0] in keep))
    if not run_path.exists():
        rng = np.random.default_rng(1)
        n = len(qids) * DOCS
        docs = (9_000_000 + (np.arange(n) * 1009) % 8_800_000).astype(str).astype(object)
        for i, q in enumerate(qids):  # the judged documents at seeded ranks
            for p, d in zip(rng.choice(DOCS, len(judged[q]), replace=False), judged[q]):
                docs[i * DOCS + p] = d
        table = pa.table({"q": pa.array(np.repeat(np.array(qids, object), DOCS), pa.string()),
                          "z": pa.array(["Q0"] * n), "d": pa.array(docs, pa.string()),
                          "r": np.tile(np.arange(1, DOCS + 1), len(qids)),
                          "s": np.round(rng.normal(10, 3, n), 3), "t": pa.array(["gen"] * n)})
        tmp = run_path.with_name(run_path.name + ".tmp")
        csv.write_csv(table, tmp, csv.WriteOptions(include_header=False, delimiter=" ",
                                                   quoting_style="none"))
        tmp.rename(run_path)
    return str(qrels_path), str(run_path), len(qids) * DOCS


def _timed(benchmark, cmd: list[str]) -> str:
    rounds = 2 if _data.is_quick() else 3

    def once():
        return subprocess.run(cmd, capture_output=True, text=True, check=True,
                              env=_procs.child_env()).stdout

    return benchmark.pedantic(once, rounds=rounds, iterations=1, warmup_rounds=1)


ARGS = {"all_trec": ["-q", "-m", "all_trec"], "official": ["-q"]}


@pytest.fixture(scope="module")
def expected(generated, trec_eval_binary) -> dict:
    qrels, run, _ = generated
    return {name: subprocess.run([trec_eval_binary, *args, qrels, run], capture_output=True,
                                 text=True, check=True).stdout for name, args in ARGS.items()}


@pytest.mark.benchmark(group="trec-eval-command")
@pytest.mark.parametrize("name", list(ARGS))
def test_trec_eval_itself(benchmark, generated, trec_eval_binary, expected, name):
    qrels, run, lines = generated
    out = _timed(benchmark, [trec_eval_binary, *ARGS[name], qrels, run])
    assert out == expected[name]
    _data.describe(benchmark, f"trec_eval {' '.join(ARGS[name])}", "peer", case=name)
    _data.record_rows_per_s(benchmark, lines)


@pytest.mark.benchmark(group="trec-eval-command")
@pytest.mark.parametrize("name", list(ARGS))
def test_fastndcg_trec_eval(benchmark, generated, expected, name):
    qrels, run, lines = generated
    cli, _ = _procs.cli_command()
    out = _timed(benchmark, [*cli, "trec_eval", *ARGS[name], qrels, run])
    assert out == expected[name]  # byte for byte
    _data.describe(benchmark, f"fastndcg trec_eval {' '.join(ARGS[name])}", "fastndcg",
                   case=name)
    _data.record_rows_per_s(benchmark, lines)


# --------------------------------------------------------------------------- one pass

@pytest.fixture(scope="module")
def parquet_pair(generated, tmp_path_factory):
    """The same run and qrels as Parquet, and the measures of ``-m all_trec`` as
    fastndcg names."""
    import pyarrow.parquet as pq

    from fastndcg import io, treceval

    qrels, run, lines = generated
    folder = tmp_path_factory.mktemp("trec_parquet")
    run_pq, qrels_pq = folder / "run.parquet", folder / "qrels.parquet"
    pq.write_table(io.read_trec_run(run), run_pq)
    pq.write_table(io.read_trec_qrels(qrels), qrels_pq)
    args = treceval.parse_args(["-m", "all_trec", qrels, run])
    names = treceval._measure_names(args, treceval.lines(args))
    import fastndcg
    for measure in (names, "ndcg"):  # the kernels in the cache
        fastndcg.evaluate(str(run_pq), qrels=str(qrels_pq), preset="trec_eval",
                          measure=measure, per_query=False)
    return str(run_pq), str(qrels_pq), names, lines


@pytest.mark.benchmark(group="all-trec-one-pass")
@pytest.mark.parametrize("which", ["all_trec", "ndcg"])
def test_all_trec_in_one_pass(benchmark, parquet_pair, which):
    """Every measure of all_trec (one ranking of each query for the binary ones, a
    second for the gain ones) against trec_eval's whole-list ndcg alone."""
    import fastndcg

    run, qrels, names, lines = parquet_pair
    measure = names if which == "all_trec" else "ndcg"
    benchmark.pedantic(lambda: fastndcg.evaluate(run, qrels=qrels, preset="trec_eval",
                                                 measure=measure, per_query=False),
                       rounds=3, iterations=1)
    _data.describe(benchmark, f"evaluate, {which}", "fastndcg" if which == "all_trec"
                   else "bound", case="parquet")
    _data.record_rows_per_s(benchmark, lines)
