"""End-to-end benchmarks of ``fastndcg.evaluate`` (pytest-benchmark).

Groups ``evaluate-10rows`` and ``evaluate-50rows``: ``fastndcg.evaluate(path,
k=[1, 3, 5, 10])`` on a Parquet log written by ``fastndcg.synth.write_synthetic_log``
(``query_id`` int64, ``doc_id`` int64, ``score`` float32, ``label`` int8) of ~10 and
~50 rows a query (quick: 20,000 queries; full: ~50M rows each, 5,000,000 and
1,000,000 queries, row groups of 1,048,576 rows), beside pyarrow's bare read of
the same three columns of the same file, two ways: ``pq.ParquetFile(path).
iter_batches(columns=...)`` consumed fully, and ``read_row_group(i, columns=...)``
one row group at a time. The report takes the faster of the two as the bound and
gives evaluate's fraction of it. Before timing, evaluate's row and query counts
are checked, and its first queries against the pure-Python reference.

Group "trec": qrels mode from TREC text files (quick: 500 queries x 100 documents;
full: 20,000 x 100), ``fastndcg.evaluate(run, qrels=..., gain="linear",
ties="trec", k=[1, 3, 5, 10])`` against pytrec_eval's ``parse_qrel`` +
``parse_run`` + ``RelevanceEvaluator({"ndcg_cut.1,3,5,10"}).evaluate``, each end to
end (the files are opened and parsed inside the timed function). Before anything
is timed the per-query values of the two are asserted equal to 1e-12.

Every function is called once before it is timed (Numba compilation or loading the
on-disk cache is never part of a measurement). Small by default, since the suite
runs with ``--benchmark-disable``; full size and timings:
``FASTNDCG_BENCH_FULL=1 pytest benchmarks/test_bench_evaluate.py --benchmark-enable``.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

import fastndcg
from benchmarks import _data, _peers
from fastndcg import reference

K = [1, 3, 5, 10]
TOLERANCE = 1e-12

QUICK_SIZES = {"trec_queries": 500, "trec_docs": 100}
FULL_SIZES = {"trec_queries": 20_000, "trec_docs": 100}
LOG_COLUMNS = ["query_id", "score", "label"]  # what list mode reads


def sizes(quick: bool | None = None) -> dict:
    """Sizes of this module's inputs; ``quick=None`` follows ``FASTNDCG_BENCH_FULL``."""
    if quick is None:
        quick = _data.is_quick()
    return dict(QUICK_SIZES if quick else FULL_SIZES)


# --------------------------------------------------------------------------- TREC files

def write_trec_files(folder: str | os.PathLike, n_queries: int, n_docs: int = 100,
                     seed: int = 0) -> tuple[Path, Path, int]:
    """A seeded TREC run and qrels pair in ``folder``; returns (run, qrels, run rows).

    * run: ``n_queries`` queries ``Q0000000 ..`` of ``n_docs`` documents each, sorted
      by score (rank = position); scores are rounded to 1 decimal, so many tie and
      trec_eval's tie rule (document id descending) decides the order;
    * qrels: graded 0..3; about 30% of the retrieved documents are judged, plus 10
      judged documents per query that the run does not retrieve;
    * the last 1% of the run's queries have no judgments (left out by both tools),
      and 1% more judged queries are not in the run (left out too, no ``-c``).
    """
    folder = Path(folder)
    rng = np.random.default_rng(seed)
    n_extra = 10
    pool = n_docs + n_extra
    # distinct document numbers per query (so document order differs from rank order)
    numbers = np.argsort(rng.random((n_queries, 4 * pool), dtype=np.float32), axis=1)[:, :pool]
    relevance = rng.choice(4, size=(n_queries, pool), p=[0.55, 0.25, 0.13, 0.07])
    noise = rng.normal(0.0, 0.6, size=(n_queries, n_docs))
    scores = np.round(0.5 * relevance[:, :n_docs] + noise, 1) + 0.0  # + 0.0: no "-0.0"
    order = np.argsort(-scores, axis=1, kind="stable")
    qnames = np.char.add("Q", np.char.zfill(np.arange(n_queries).astype(str), 7))
    docnames = np.char.add(np.char.add(np.repeat(qnames, pool).reshape(n_queries, pool), "-D"),
                           np.char.zfill(numbers.astype(str), 4))

    rows = np.take_along_axis(np.arange(n_docs)[None, :].repeat(n_queries, 0), order, axis=1)
    run = pa.table({
        "qid": np.repeat(qnames, n_docs),
        "q0": pa.array(["Q0"] * (n_queries * n_docs)),
        "docno": np.take_along_axis(docnames[:, :n_docs], rows, axis=1).ravel(),
        "rank": np.tile(np.arange(1, n_docs + 1), n_queries),
        "score": np.take_along_axis(scores, rows, axis=1).ravel(),
        "tag": pa.array(["bench"] * (n_queries * n_docs)),
    })
    judged = np.zeros((n_queries, pool), bool)
    judged[:, :n_docs] = rng.random((n_queries, n_docs)) < 0.30
    judged[:, n_docs:] = True
    judged[n_queries - max(1, n_queries // 100):] = False  # unjudged run queries
    qi, di = np.nonzero(judged)
    extra_q = max(1, n_queries // 100)  # judged queries absent from the run
    extra_names = np.char.add("X", np.char.zfill(np.arange(extra_q).astype(str), 7))
    qrels = pa.table({
        "qid": np.concatenate([qnames[qi], np.repeat(extra_names, 5)]),
        "iter": pa.array(["0"] * (len(qi) + 5 * extra_q)),
        "docno": np.concatenate([docnames[qi, di],
                                 np.char.add(np.repeat(extra_names, 5),
                                             np.tile(["-a", "-b", "-c", "-d", "-e"], extra_q))]),
        "rel": np.concatenate([relevance[qi, di], np.tile([0, 1, 2, 3, 1], extra_q)]),
    })
    options = pacsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    run_path, qrels_path = folder / "bench.run", folder / "bench.qrels"
    pacsv.write_csv(run, run_path, options)
    pacsv.write_csv(qrels, qrels_path, options)
    return run_path, qrels_path, run.num_rows


def fastndcg_trec(run: str | os.PathLike, qrels: str | os.PathLike) -> fastndcg.Report:
    """fastndcg in qrels mode with trec_eval's rules (linear gain, trec ties)."""
    return _peers.fastndcg_trec_files(run, qrels, K).call()


def pytrec_end_to_end(run: str | os.PathLike, qrels: str | os.PathLike) -> dict:
    """pytrec_eval from the two files: parse both, then evaluate ndcg_cut."""
    return _peers.pytrec_eval_files(run, qrels, K).call()


def assert_same_as_pytrec(report: fastndcg.Report, theirs: dict, tol: float = TOLERANCE) -> None:
    """The same queries, and per-query NDCG@k equal to ``tol``."""
    ids = report.per_query.column(0).to_pylist()
    assert len(ids) == len(set(ids))
    assert set(ids) == set(theirs), (sorted(set(ids) ^ set(theirs))[:5])
    for c in K:
        ours = report.per_query[f"ndcg@{c}"].to_numpy()
        ref = np.array([theirs[q][f"ndcg_cut_{c}"] for q in ids])
        diff = np.abs(ours - ref)
        worst = int(np.argmax(diff)) if len(diff) else 0
        assert not len(diff) or diff[worst] <= tol, (
            f"ndcg@{c} of query {ids[worst]!r}: fastndcg {ours[worst]!r}, "
            f"pytrec_eval {ref[worst]!r}")


def have_pytrec_eval() -> bool:
    return importlib.util.find_spec("pytrec_eval") is not None


# --------------------------------------------------------------------------- fixtures

@pytest.fixture(scope="session")
def trec_files(tmp_path_factory) -> tuple[Path, Path, int]:
    s = sizes()
    return write_trec_files(tmp_path_factory.mktemp("bench-trec"), s["trec_queries"],
                            s["trec_docs"])


@pytest.fixture(scope="session")
def trec_expected(trec_files) -> fastndcg.Report:
    """fastndcg's report (the warm-up call), checked against pytrec_eval when installed."""
    run, qrels, n_rows = trec_files
    report = fastndcg_trec(run, qrels)
    n_q = sizes()["trec_queries"]
    assert report.n_rows == n_rows
    assert report.n_unjudged == max(1, n_q // 100)
    assert report.n_missing == max(1, n_q // 100)
    assert report.n_queries == n_q - report.n_unjudged
    if have_pytrec_eval():
        assert_same_as_pytrec(report, pytrec_end_to_end(run, qrels))
    return report


# --------------------------------------------------------------------------- evaluate

def _check_against_reference(path: Path, report: fastndcg.Report, n_check: int = 100) -> None:
    """The first queries of the log, scored by the pure-Python reference."""
    first = next(pq.ParquetFile(path).iter_batches(batch_size=n_check * 200,
                                                   columns=["query_id", "score", "label"]))
    qid = first["query_id"].to_numpy()
    take = int(np.searchsorted(qid, qid[0] + n_check))
    expected = np.asarray(reference.ndcg(first["score"].to_numpy()[:take].tolist(),
                                         first["label"].to_numpy()[:take].tolist(),
                                         query_ids=qid[:take].tolist(), k=K))
    got = np.column_stack([report.per_query[f"ndcg@{c}"].to_numpy()[:n_check] for c in K])
    np.testing.assert_allclose(got, expected, rtol=0, atol=TOLERANCE)


@pytest.fixture(scope="module", params=[10, 50], ids=lambda n: f"{n}rows")
def log(request, parquet_log) -> tuple[int, str, int, int]:
    """(rows a query, path, rows, queries) of the log; evaluate's warm-up call and
    checks happen here."""
    path, n_rows, n_queries = parquet_log(request.param)
    warm = fastndcg.evaluate(path, k=K)  # compile / load the cache
    assert (warm.n_rows, warm.n_queries) == (n_rows, n_queries)
    _check_against_reference(path, warm)
    return request.param, path, n_rows, n_queries


def test_evaluate_parquet_log(benchmark, log):
    rows_per_query, path, n_rows, n_queries = log
    benchmark.group = f"evaluate-{rows_per_query}rows"
    report = benchmark(fastndcg.evaluate, path, k=K)
    assert (report.n_rows, report.n_queries) == (n_rows, n_queries)
    _data.describe(benchmark, "fastndcg.evaluate(path)", "fastndcg", k=K,
                   rows_per_query=rows_per_query)
    _data.record_rows_per_s(benchmark, n_rows, n_queries)


def read_iter_batches(path) -> int:
    """pyarrow's bare read: the three columns, all batches of ``iter_batches``; rows."""
    return sum(b.num_rows for b in pq.ParquetFile(path).iter_batches(columns=LOG_COLUMNS))


def read_row_groups(path) -> int:
    """pyarrow's bare read: the three columns, one ``read_row_group`` at a time; rows."""
    f = pq.ParquetFile(path)
    return sum(f.read_row_group(i, columns=LOG_COLUMNS).num_rows
               for i in range(f.num_row_groups))


@pytest.mark.parametrize("how", ["iter_batches", "read_row_group"])
def test_bare_read(benchmark, log, how):
    rows_per_query, path, n_rows, n_queries = log
    benchmark.group = f"evaluate-{rows_per_query}rows"
    read = read_iter_batches if how == "iter_batches" else read_row_groups
    assert read(path) == n_rows  # warm the page cache the same way for both
    assert benchmark(read, path) == n_rows
    _data.describe(benchmark, f"pyarrow bare read ({how})", "bound", columns=LOG_COLUMNS,
                   rows_per_query=rows_per_query)
    _data.record_rows_per_s(benchmark, n_rows, n_queries)


# --------------------------------------------------------------------------- trec

@pytest.mark.benchmark(group="trec")
def test_fastndcg_qrels_mode(benchmark, trec_files, trec_expected):
    run, qrels, n_rows = trec_files
    report = benchmark(fastndcg_trec, run, qrels)
    assert report.per_query.equals(trec_expected.per_query)
    _data.describe(benchmark, "fastndcg.evaluate(run, qrels=...) from TREC files", "fastndcg",
                   k=K, gain="linear", ties="trec")
    _data.record_rows_per_s(benchmark, n_rows, report.n_queries)


@pytest.mark.benchmark(group="trec")
def test_pytrec_eval_end_to_end(benchmark, trec_files, trec_expected):
    pytest.importorskip("pytrec_eval", reason="pytrec_eval is not installed "
                                              "(pip install pytrec-eval-terrier); nothing to "
                                              "compare fastndcg's qrels mode with")
    run, qrels, n_rows = trec_files
    theirs = benchmark.pedantic(pytrec_end_to_end, args=(run, qrels), rounds=3, iterations=1)
    assert_same_as_pytrec(trec_expected, theirs)
    _data.describe(benchmark, "pytrec_eval parse + RelevanceEvaluator", "peer", k=K)
    _data.record_rows_per_s(benchmark, n_rows, len(theirs))
