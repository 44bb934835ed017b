"""fastndcg and its peers behind one interface, for the benchmark suite.

Each system is wrapped in a :class:`Runner`: ``runner.call()`` is exactly what a
user of that system would run (the thing that is timed), and
``runner.per_query()`` gives the comparable answer, a float64 array of shape
``(n_queries, len(cutoffs))`` (queries in the batch's order, which is also the
order of their ids), so that callers can assert two systems equal before
timing either. Cutoffs are always a list: ``k=10`` means ``[10]``.

Availability (peers are the optional extra ``pip install fastndcg[bench]``)::

    ok, reason = available("ranx")        # "sklearn", "ranx", "pytrec_eval", "duckdb", "polars"
    module = require("ranx")              # pytest.skip(reason) when missing

Inputs (built on :mod:`benchmarks._data`: ``ragged``, ``skewed``, ``tie_free``,
``as_dense``)::

    data = qrels_run(scores, labels, offsets, unretrieved=0)   # QrelsRun: tables + dicts
    write_log_parquet(data, path)                              # one Parquet log of it

Runners (``k`` an int or a list; ``gain`` "linear" or "exp2")::

    fastndcg_kernel(scores, labels, offsets, k, gain=)   fastndcg.ndcg on CSR
    reference_kernel(scores, labels, offsets, k, gain=)  fastndcg.reference (pure Python, small inputs)
    bandwidth_probe(scores, labels)                      _data.parallel_sum (no per-query answer)
    fastndcg_dense(y_true, y_score, k, ignore_ties=)     fastndcg.ndcg_score, once per cutoff
    sklearn_dense(y_true, y_score, k, ignore_ties=)      sklearn.metrics.ndcg_score, once per cutoff
    fastndcg_qrels(data, k)                              fastndcg.evaluate(run table, qrels=table, gain="linear")
    ranx_end_to_end(data, k)                             ranx Qrels/Run.from_dict + ranx.evaluate
    ranx_evaluate(data, k)                               ranx.evaluate alone (Qrels/Run built beforehand)
    fastndcg_log(path, k)                                fastndcg.evaluate(Parquet log, gain="linear")
    ranx_log(path, k)                                    ranx from the log via pandas (Qrels/Run.from_df) + ranx.evaluate
    fastndcg_trec_files(run, qrels, k)                   fastndcg.evaluate(run file, qrels=file, ties="trec")
    pytrec_eval_files(run, qrels, k)                     pytrec_eval parse_qrel/parse_run + RelevanceEvaluator
    fastndcg_parquet(path, k, qrels=, ties=)             fastndcg.evaluate from Parquet, one cutoff (exp2 gain)
    duckdb_list(path, k) / duckdb_qrels(run, qrels, k)   DuckDB SQL (DUCKDB_LIST_SQL / DUCKDB_QRELS_SQL)
    polars_list(path, k) / polars_qrels(run, qrels, k)   polars lazy frames, written as a user would

    fastndcg_log(path, k, query_ids) / ranx_log(path, k, n_rows, n_queries) take the sizes
    for rows/s; the TREC runners' per_query() is in sorted query-id order. The Parquet
    runners of the last three lines return the mean from call() and a (query_id, ndcg)
    table sorted by id from per_query(), compared with assert_same_keyed().

Helpers: :func:`assert_same` (per-query equality to ``TOLERANCE`` = 1e-12, naming
the worst query), :func:`check` (``assert_same`` of two runners' answers),
:func:`cutoffs`, :func:`as_2d`, :func:`ranx_metrics`, :func:`ranx_build`,
:func:`versions`. A :class:`Runner` also carries ``system`` (its name in
reports), ``n_rows``, ``n_queries``, ``note`` (what its input differs in) and
``role`` ("fastndcg", "peer" or "bound", as in ``_data.describe``).

Semantics where they meet. scikit-learn's ``ndcg_score`` is linear gain, tie-aware
(``ties="average"``) by default, 0 where IDCG is 0; with ``ignore_ties=True`` it
orders ties arbitrarily (``np.argsort``), so it is compared on tie-free scores
only. ranx's ``"ndcg@k"`` is linear gain (Järvelin & Kekäläinen; ``"ndcg_burges@k"``
is exp2), its IDCG comes from the qrels (documents with relevance >= 1), 0 where
IDCG is 0 -- fastndcg's qrels mode with ``gain="linear"``; ranx orders a query's
documents with an unstable ``np.argsort`` of the scores, so ties are broken
arbitrarily and ranx is only ever given tie-free data (:func:`_data.tie_free`).
pytrec_eval's ``ndcg_cut`` is trec_eval's: linear gain, ties by document id
descending (fastndcg ``ties="trec"``).
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numba
import numpy as np
import pyarrow as pa

import fastndcg
from fastndcg import reference

from . import _data

INSTALL_HINT = "pip install fastndcg[bench]"
PEERS = ("sklearn", "ranx", "pytrec_eval", "duckdb", "polars")
_MODULES = {"sklearn": "sklearn.metrics", "ranx": "ranx", "pytrec_eval": "pytrec_eval",
            "duckdb": "duckdb", "polars": "polars"}
_DISTRIBUTIONS = {"sklearn": "scikit-learn", "ranx": "ranx",
                  "pytrec_eval": "pytrec-eval-terrier", "duckdb": "duckdb", "polars": "polars"}
TOLERANCE = 1e-12


# --------------------------------------------------------------------------- availability

def available(name: str) -> tuple[bool, str]:
    """``(True, "")`` if peer ``name`` imports, else ``(False, why + how to install)``."""
    if name not in _MODULES:
        raise ValueError(f"unknown peer {name!r}; known: {', '.join(PEERS)}")
    hint = f"{INSTALL_HINT} (or pip install {_DISTRIBUTIONS[name]})"
    try:
        importlib.import_module(_MODULES[name])
    except ModuleNotFoundError:
        return False, f"{name} not installed: {hint}"
    except Exception as err:  # a broken install
        return False, f"{name} does not import ({type(err).__name__}: {err}): {hint}"
    return True, ""


def require(name: str):
    """The peer's module, or ``pytest.skip`` with :func:`available`'s reason."""
    ok, reason = available(name)
    if not ok:
        import pytest

        pytest.skip(reason)
    return importlib.import_module(_MODULES[name])


def versions() -> dict[str, str]:
    """Installed version of fastndcg, its dependencies, pytest-benchmark and every peer
    ("not installed" if absent)."""
    from ._report import version

    names = {"fastndcg": "fastndcg", "numba": "numba", "numpy": "numpy", "pyarrow": "pyarrow",
             "pytest-benchmark": "pytest-benchmark", **_DISTRIBUTIONS, "pandas": "pandas",
             "matplotlib": "matplotlib"}
    modules = {"sklearn": "sklearn", "pytest-benchmark": "pytest_benchmark"}
    return {n: version(dist, modules.get(n, n)) for n, dist in names.items()}


def fastndcg_path() -> str:
    """Where the imported fastndcg package lives (the suite may run a checkout's copy)."""
    return os.path.dirname(os.path.abspath(fastndcg.__file__))


# --------------------------------------------------------------------------- runners

@dataclass(frozen=True)
class Runner:
    """One system on one input.

    ``call()`` is the timed call (what a user of ``system`` writes); ``per_query()``
    returns the comparable answer, float64 ``(n_queries, len(cutoffs))``, or
    ``None`` for the bandwidth probe. ``n_rows`` / ``n_queries`` size the input
    (rows/s; 0 where the runner does not know, as for TREC files); ``note`` says
    what differs from fastndcg's own input, if anything.
    """

    system: str
    call: Callable[[], Any]
    per_query: Callable[[], np.ndarray | None]
    n_rows: int
    n_queries: int
    note: str = ""
    info: dict = field(default_factory=dict)
    role: str = "peer"  # "fastndcg", "peer" or "bound" (see _data.describe)


def cutoffs(k) -> list:
    """``k`` as a list of cutoffs (``10`` -> ``[10]``; ``None``, the whole list, -> ``[None]``)."""
    if k is None:
        return [None]
    return [int(k)] if isinstance(k, (int, np.integer)) else [int(c) for c in k]


def _k_arg(ks: list):
    """The ``k`` fastndcg takes for a list of cutoffs (``[None]`` -> ``None``)."""
    return None if ks == [None] else ks


def as_2d(values) -> np.ndarray:
    """Per-query values as float64 ``(n_queries, n_cutoffs)`` (a 1-D array is one cutoff)."""
    out = np.asarray(values, dtype=np.float64)
    return out[:, None] if out.ndim == 1 else out


def fastndcg_kernel(scores, labels, offsets, k, *, gain="linear", ties="average") -> Runner:
    """``fastndcg.ndcg(scores, labels, offsets, k=[...])``: the kernel, one call."""
    ks = cutoffs(k)

    def call():
        return fastndcg.ndcg(scores, labels, offsets, k=_k_arg(ks), gain=gain, ties=ties)

    return Runner("fastndcg", call, lambda: as_2d(call()), len(scores), len(offsets) - 1,
                  role="fastndcg")


def reference_kernel(scores, labels, offsets, k, *, gain="linear", ties="average") -> Runner:
    """``fastndcg.reference.ndcg`` (pure Python): feasible up to ~1e5 rows."""
    ks = cutoffs(k)

    def call():
        return reference.ndcg(scores.tolist(), labels.tolist(), offsets.tolist(), k=ks,
                              gain=gain, ties=ties)

    return Runner("fastndcg.reference", call, lambda: as_2d(call()), len(scores),
                  len(offsets) - 1, note="pure Python; lists converted inside the timing")


def bandwidth_probe(scores, labels) -> Runner:
    """A Numba parallel sum over the same two arrays: the memory-bandwidth bound."""
    return Runner("parallel sum (bandwidth bound)", lambda: _data.parallel_sum(scores, labels),
                  lambda: None, len(scores), 0, role="bound")


def _dense_offsets(y_true) -> np.ndarray:
    n, m = y_true.shape
    return np.arange(0, (n + 1) * m, m, dtype=np.int64)


def fastndcg_dense(y_true, y_score, k, *, ignore_ties: bool = False) -> Runner:
    """``fastndcg.ndcg_score`` (the scikit-learn drop-in), one call per cutoff.

    ``per_query`` is ``fastndcg.ndcg`` on the same rows (linear gain; ``ties="stable"``
    for ``ignore_ties``, which equals scikit-learn only on tie-free rows).
    """
    ks = cutoffs(k)

    def call():
        return [fastndcg.ndcg_score(y_true, y_score, k=c, ignore_ties=ignore_ties) for c in ks]

    def per_query():
        return as_2d(fastndcg.ndcg(y_score.ravel(), y_true.ravel(), _dense_offsets(y_true),
                                      k=_k_arg(ks), gain="linear",
                                      ties="stable" if ignore_ties else "average"))

    return Runner("fastndcg", call, per_query, y_true.size, y_true.shape[0], role="fastndcg")


def sklearn_dense(y_true, y_score, k, *, ignore_ties: bool = False) -> Runner:
    """``sklearn.metrics.ndcg_score``, one call per cutoff (it takes one ``k``).

    ``per_query`` uses scikit-learn's own per-row function (``_ndcg_sample_scores``,
    what ``ndcg_score`` averages), so the comparison is per query, not of means.
    """
    from sklearn.metrics import ndcg_score
    from sklearn.metrics._ranking import _ndcg_sample_scores

    ks = cutoffs(k)

    def call():
        return [ndcg_score(y_true, y_score, k=c, ignore_ties=ignore_ties) for c in ks]

    def per_query():
        return np.column_stack([_ndcg_sample_scores(y_true, y_score, k=c,
                                                    ignore_ties=ignore_ties) for c in ks])

    name = "scikit-learn" + (" ignore_ties" if ignore_ties else " tie-aware")
    return Runner(name, call, per_query, y_true.size, y_true.shape[0],
                  note="tie-free scores (ignore_ties orders ties arbitrarily)" if ignore_ties else "")


# --------------------------------------------------------------------------- qrels + run

@dataclass
class QrelsRun:
    """A run and its judgments, as Arrow tables (fastndcg) and dicts (ranx).

    ``run``: ``query_id`` (string), ``doc_id`` (string), ``score`` (float64);
    ``qrels``: ``query_id``, ``doc_id``, ``label`` (int64). ``run_dict`` /
    ``qrels_dict`` are ``{query: {doc: value}}`` (``ranx.Run/Qrels.from_dict``'s
    input). ``query_ids`` are sorted, and in the run's order.
    """

    run: pa.Table
    qrels: pa.Table
    run_dict: dict
    qrels_dict: dict
    query_ids: list
    n_rows: int

    @property
    def n_queries(self) -> int:
        return len(self.query_ids)


def qrels_run(scores, labels, offsets, *, unretrieved: int = 0, seed: int = 0) -> QrelsRun:
    """A :class:`QrelsRun` from a CSR batch (give tie-free scores where ranx will read it).

    Every run row is judged with its label; ``unretrieved`` more judged documents
    per query (labels 1..4) are not in the run, so they count in the IDCG of qrels
    mode only. With ``unretrieved=0`` qrels mode equals ``fastndcg.ndcg`` on the
    batch (list mode), so ranx can be compared with the kernel too.
    Query ids are ``"q00000000"``.. (sorted = batch order), document ids ``"d<row>"``.
    Labels must be integers (``ValueError`` otherwise).
    """
    n_q, n_rows = len(offsets) - 1, len(scores)
    if not np.array_equal(labels, np.floor(labels)):
        raise ValueError("qrels_run needs integer labels: TREC qrels and ranx.Qrels hold "
                         "integer relevance only")
    lengths = np.diff(offsets)
    qnames = [f"q{q:08d}" for q in range(n_q)]
    docs = [f"d{i}" for i in range(n_rows)]
    score_list = np.asarray(scores, dtype=np.float64).tolist()
    label_list = np.asarray(labels).astype(np.int64).tolist()
    qid_rows = np.repeat(np.array(qnames, dtype=object), lengths).tolist()
    run = pa.table({"query_id": pa.array(qid_rows, pa.string()),
                    "doc_id": pa.array(docs, pa.string()),
                    "score": pa.array(score_list, pa.float64())})
    q_ids, q_docs, q_labels = list(qid_rows), list(docs), list(label_list)
    extra_labels = np.random.default_rng(seed).integers(1, 5, size=(n_q, unretrieved)).tolist()
    for q in range(n_q if unretrieved else 0):
        for j in range(unretrieved):
            q_ids.append(qnames[q])
            q_docs.append(f"u{q}-{j}")
            q_labels.append(extra_labels[q][j])
    qrels = pa.table({"query_id": pa.array(q_ids, pa.string()),
                      "doc_id": pa.array(q_docs, pa.string()),
                      "label": pa.array(q_labels, pa.int64())})
    run_dict, qrels_dict = {}, {}
    off = offsets.tolist()
    for q, name in enumerate(qnames):
        a, b = off[q], off[q + 1]
        run_dict[name] = dict(zip(docs[a:b], score_list[a:b]))
        judged = dict(zip(docs[a:b], label_list[a:b]))
        for j in range(unretrieved):
            judged[f"u{q}-{j}"] = extra_labels[q][j]
        qrels_dict[name] = judged
    return QrelsRun(run, qrels, run_dict, qrels_dict, qnames, n_rows)


def write_log_parquet(data: QrelsRun, path: str | os.PathLike) -> str:
    """``data``'s run with each row's label, as one Parquet log (``query_id``,
    ``doc_id``, ``score`` float64, ``label`` int64; judged documents not in the run
    are dropped, so list mode and ranx's qrels agree)."""
    import pyarrow.parquet as pq

    labels = pa.array([data.qrels_dict[q][d] for q, d in zip(data.run["query_id"].to_pylist(),
                                                              data.run["doc_id"].to_pylist())],
                      pa.int64())
    pq.write_table(data.run.append_column("label", labels), path)
    return str(path)


def _reportas_2d(report: fastndcg.Report, ks: Sequence[int], ids: list | None) -> np.ndarray:
    per_query = report.per_query
    if ids is not None:
        got = per_query.column(0).to_pylist()
        if got != ids:
            raise AssertionError(f"fastndcg's queries differ from the input's: {got[:3]}.. vs "
                                 f"{ids[:3]}..")
    names = per_query.column_names[2:]  # the query id, n_docs, then one column per cutoff
    assert len(names) == len(ks), (names, ks)
    return np.column_stack([per_query[n].to_numpy() for n in names])


def fastndcg_qrels(data: QrelsRun, k) -> Runner:
    """``fastndcg.evaluate(run, qrels=qrels, gain="linear", k=[...])`` on Arrow tables."""
    ks = cutoffs(k)

    def call():
        return fastndcg.evaluate(data.run, qrels=data.qrels, gain="linear", k=_k_arg(ks))

    return Runner("fastndcg", call, lambda: _reportas_2d(call(), ks, data.query_ids),
                  data.n_rows, data.n_queries, role="fastndcg")


def fastndcg_log(path: str | os.PathLike, k, query_ids: list | None = None) -> Runner:
    """``fastndcg.evaluate(path, gain="linear", k=[...])``: a Parquet log, end to end."""
    import pyarrow.parquet as pq

    ks = cutoffs(k)
    meta = pq.ParquetFile(path).metadata

    def call():
        return fastndcg.evaluate(path, gain="linear", k=_k_arg(ks))

    return Runner("fastndcg", call, lambda: _reportas_2d(call(), ks, query_ids),
                  meta.num_rows, len(query_ids) if query_ids is not None else 0,
                  role="fastndcg")


def ranx_metrics(k, gain: str = "linear") -> list[str]:
    """ranx metric names: ``"ndcg@k"`` (linear gain) or ``"ndcg_burges@k"`` (exp2)."""
    name = {"linear": "ndcg", "exp2": "ndcg_burges"}[gain]
    return [name if c is None else f"{name}@{c}" for c in cutoffs(k)]


class _NumbaThreads:
    """ranx calls ``numba.set_num_threads(1)`` for fewer than 10 queries and never
    restores it; keep the caller's thread count around every ranx call."""

    def __enter__(self):
        self.n = numba.get_num_threads()

    def __exit__(self, *exc):
        numba.set_num_threads(self.n)


def _ranx_scores(result, metrics: list[str]) -> np.ndarray:
    if len(metrics) == 1:
        result = {metrics[0]: result}
    return np.column_stack([np.asarray(result[m], dtype=np.float64) for m in metrics])


def ranx_build(data: QrelsRun):
    """``(ranx.Qrels.from_dict(...), ranx.Run.from_dict(...))`` of ``data``."""
    import ranx

    with _NumbaThreads():
        return ranx.Qrels.from_dict(data.qrels_dict), ranx.Run.from_dict(data.run_dict)


def ranx_end_to_end(data: QrelsRun, k) -> Runner:
    """ranx from in-memory dicts: ``Qrels.from_dict`` + ``Run.from_dict`` (its fast
    path; ``from_df`` goes through a pandas groupby into the same dicts) +
    ``ranx.evaluate(qrels, run, ["ndcg@k", ..], return_mean=False)``."""
    import ranx

    metrics = ranx_metrics(k)

    def call():
        with _NumbaThreads():
            qrels = ranx.Qrels.from_dict(data.qrels_dict)
            run = ranx.Run.from_dict(data.run_dict)
            return ranx.evaluate(qrels, run, metrics, return_mean=False)

    return Runner("ranx end to end", call, lambda: _ranx_scores(call(), metrics), data.n_rows,
                  data.n_queries, note="tie-free scores (ranx breaks ties arbitrarily)")


def ranx_evaluate(data: QrelsRun, k) -> Runner:
    """``ranx.evaluate`` alone, on Qrels/Run built (once, untimed) by this function."""
    import ranx

    metrics = ranx_metrics(k)
    qrels, run = ranx_build(data)

    def call():
        with _NumbaThreads():
            return ranx.evaluate(qrels, run, metrics, return_mean=False)

    return Runner("ranx evaluate", call, lambda: _ranx_scores(call(), metrics), data.n_rows,
                  data.n_queries, note="tie-free scores; Qrels/Run built beforehand")


def ranx_log(path: str | os.PathLike, k, n_rows: int = 0, n_queries: int = 0) -> Runner:
    """ranx from the Parquet log: ``pandas.read_parquet`` + ``Qrels.from_df`` (label
    column) + ``Run.from_df`` (score column) + ``ranx.evaluate``.

    This is what ``Qrels/Run.from_parquet`` do, read once instead of twice, with
    the id columns cast to ``object``: with pandas >= 3 strings are read as the
    ``str`` dtype, which ranx's ``from_df`` rejects (and ``from_parquet`` cannot be
    told otherwise; it passes its ``pd_kwargs`` positionally).
    """
    import pandas as pd
    import ranx

    metrics = ranx_metrics(k)
    path = str(path)

    def call():
        df = pd.read_parquet(path)
        df = df.astype({"query_id": object, "doc_id": object})
        with _NumbaThreads():
            qrels = ranx.Qrels.from_df(df, q_id_col="query_id", doc_id_col="doc_id",
                                       score_col="label")
            run = ranx.Run.from_df(df, q_id_col="query_id", doc_id_col="doc_id",
                                   score_col="score")
            return ranx.evaluate(qrels, run, metrics, return_mean=False)

    return Runner("ranx from Parquet", call, lambda: _ranx_scores(call(), metrics), n_rows,
                  n_queries, note="tie-free scores (ranx breaks ties arbitrarily)")


# --------------------------------------------------------------------------- TREC files

def fastndcg_trec_files(run: str | os.PathLike, qrels: str | os.PathLike, k) -> Runner:
    """fastndcg's qrels mode from TREC files with trec_eval's rules (linear, ties="trec")."""
    ks = cutoffs(k)

    def call():
        return fastndcg.evaluate(run, qrels=qrels, gain="linear", ties="trec", k=_k_arg(ks))

    def per_query():
        report = call()
        order = np.argsort(np.array(report.per_query.column(0).to_pylist(), dtype=object))
        return _reportas_2d(report, ks, None)[order]

    return Runner("fastndcg", call, per_query, 0, 0, role="fastndcg")


def pytrec_eval_files(run: str | os.PathLike, qrels: str | os.PathLike, k) -> Runner:
    """pytrec_eval end to end: ``parse_qrel`` + ``parse_run`` from the files +
    ``RelevanceEvaluator(qrels, {"ndcg_cut.k,.."}).evaluate(run)``; ``per_query`` in
    sorted query-id order (as :func:`fastndcg_trec_files`)."""
    import pytrec_eval

    ks = cutoffs(k)
    if None in ks:
        raise ValueError("pytrec_eval's ndcg_cut needs cutoffs; for the whole list use "
                         "measure 'ndcg' instead")
    measure = "ndcg_cut." + ",".join(map(str, ks))

    def call():
        with open(qrels) as f:
            judgments = pytrec_eval.parse_qrel(f)
        with open(run) as f:
            ranking = pytrec_eval.parse_run(f)
        return pytrec_eval.RelevanceEvaluator(judgments, {measure}).evaluate(ranking)

    def per_query():
        result = call()
        return np.array([[result[q][f"ndcg_cut_{c}"] for c in ks] for q in sorted(result)],
                        dtype=np.float64).reshape(-1, len(ks))

    return Runner("pytrec_eval end to end", call, per_query, 0, 0)


# --------------------------------------------------------------------------- SQL, DataFrames

# NDCG@k written the way a user of DuckDB would write it: ranks by row_number()
# over each query (ties broken by the row's position in the file: list mode; or by
# document id descending as strings: trec_eval's rule in qrels mode), the ideal
# ranks by label, exp2 gains, 1/log2(rank + 1) discounts down to rank k, DCG and
# IDCG summed per query, 0 where IDCG is 0.
# NDCG@k from ``ranked`` and ``ideal`` (query_id, label, rnk): what both SQL peers share
_DUCKDB_NDCG_SQL = """
dcg as (
    select query_id, sum((pow(2, label) - 1) / log2(rnk + 1)) as dcg
    from ranked where rnk <= {k} group by query_id),
idcg as (
    select query_id, sum((pow(2, label) - 1) / log2(rnk + 1)) as idcg
    from ideal where rnk <= {k} group by query_id),
per_query as (
    select query_id, case when idcg > 0 then dcg / idcg else 0 end as ndcg
    from dcg join idcg using (query_id))
"""

DUCKDB_LIST_SQL = """
with log as (
    select {query} as query_id, {score} as score, {label} as label, file_row_number as pos
    from read_parquet({path}, file_row_number = true)),
ranked as (
    select query_id, label,
           row_number() over (partition by query_id order by score desc, pos) as rnk
    from log),
ideal as (
    select query_id, label,
           row_number() over (partition by query_id order by label desc) as rnk
    from log),""" + _DUCKDB_NDCG_SQL

# qrels mode: the run left-joined to its judgments (unjudged = grade 0), the ideal
# list from every judged document of the query (retrieved or not), trec_eval's tie
# rule; queries of the run without any judgment are left out (as fastndcg does).
DUCKDB_QRELS_SQL = """
with run as (
    select {query} as query_id, {doc} as doc_id, {score} as score from read_parquet({run})),
qrels as (
    select {query} as query_id, {doc} as doc_id, {label} as label from read_parquet({qrels})),
judged as (
    select r.query_id, r.doc_id, r.score, coalesce(q.label, 0) as label
    from run r left join qrels q on r.query_id = q.query_id and r.doc_id = q.doc_id),
ranked as (
    select query_id, label,
           row_number() over (partition by query_id
                              order by score desc, cast(doc_id as varchar) desc) as rnk
    from judged),
ideal as (
    select query_id, label,
           row_number() over (partition by query_id order by label desc) as rnk
    from qrels),""" + _DUCKDB_NDCG_SQL


def _sql_text(value: str) -> str:
    return "'" + str(value).replace("'", "''") + "'"


def _one_cutoff(k) -> int:
    ks = cutoffs(k)
    if len(ks) != 1 or ks[0] is None:
        raise ValueError(f"the SQL and DataFrame peers compute one cutoff, got k={k!r}")
    return ks[0]


def sorted_by_id(table: pa.Table, id_column: str, value_column: str) -> pa.Table:
    """``(query_id, ndcg)`` of a per-query table, sorted by query id."""
    out = pa.table({"query_id": table[id_column], "ndcg": table[value_column]})
    return out.sort_by("query_id")


def _duckdb_runner(system: str, sql: str, n_rows: int) -> Runner:
    import duckdb

    con = duckdb.connect()

    def call():  # what a user wants: the mean
        return con.sql(sql + "select avg(ndcg) from per_query").fetchall()[0][0]

    def per_query():
        rel = con.sql(sql + "select query_id, ndcg from per_query order by query_id")
        # to_arrow_table: DuckDB >= 1.4 (fetch_arrow_table is deprecated there)
        return (getattr(rel, "to_arrow_table", None) or rel.fetch_arrow_table)()

    return Runner(system, call, per_query, n_rows, 0,
                  note="SQL: row_number() over (partition by query ...), mean only")


def duckdb_list(path, k=10, *, query="query_id", score="score", label="label",
                n_rows: int = 0) -> Runner:
    """DuckDB SQL, list mode from a Parquet log: NDCG@k (exp2 gain) with input order
    breaking score ties (fastndcg ``ties="stable"``). ``call()`` returns the mean,
    ``per_query()`` a ``(query_id, ndcg)`` table sorted by id."""
    sql = DUCKDB_LIST_SQL.format(path=_sql_text(path), query=query, score=score, label=label,
                                 k=_one_cutoff(k))
    return _duckdb_runner("DuckDB SQL", sql, n_rows)


def duckdb_qrels(run, qrels, k=10, *, query="query_id", doc="doc_id", score="score",
                 label="label", n_rows: int = 0) -> Runner:
    """DuckDB SQL, qrels mode from Parquet run and qrels files: NDCG@k (exp2 gain),
    trec_eval's tie rule and IDCG from all judged documents."""
    sql = DUCKDB_QRELS_SQL.format(run=_sql_text(run), qrels=_sql_text(qrels), query=query,
                                  doc=doc, score=score, label=label, k=_one_cutoff(k))
    return _duckdb_runner("DuckDB SQL", sql, n_rows)


def _polars_dcg(rank, k: int, name: str):
    """DCG@k of a group as a polars user writes it: exp2 gains over 1/log2(rank + 1),
    down to rank k."""
    import polars as pl

    gain = 2.0 ** pl.col("label") - 1.0
    return (gain / (rank.cast(pl.Float64) + 1.0).log(2)).filter(rank <= k).sum().alias(name)


def _polars_ndcg_column(frame):
    import polars as pl

    return frame.with_columns(ndcg=pl.when(pl.col("idcg") > 0)
                              .then(pl.col("dcg") / pl.col("idcg")).otherwise(0.0))


def _polars_runner(system: str, per_query_frame, n_rows: int, note: str) -> Runner:
    import polars as pl

    def call():
        return per_query_frame().select(pl.col("ndcg").mean()).collect().item()

    def per_query():
        frame = per_query_frame().sort("query_id").collect()
        return frame.select("query_id", "ndcg").to_arrow()

    return Runner(system, call, per_query, n_rows, 0, note=note)


def polars_list(path, k=10, *, query="query_id", score="score", label="label",
                n_rows: int = 0) -> Runner:
    """polars (lazy), list mode from a Parquet log: NDCG@k (exp2 gain), score ties
    broken by the row's position in the file: ``rank("ordinal")`` gives tied values
    distinct ranks in the order they occur, and ``over(query)`` keeps each query's
    rows in file order."""
    import polars as pl

    cut = _one_cutoff(k)

    def frame():
        log = pl.scan_parquet(path).select(pl.col(query).alias("query_id"),
                                           pl.col(score).alias("score"),
                                           pl.col(label).alias("label"))
        ranked = log.with_columns(
            rnk=pl.col("score").rank("ordinal", descending=True).over("query_id"),
            irnk=pl.col("label").rank("ordinal", descending=True).over("query_id"))
        return _polars_ndcg_column(ranked.group_by("query_id").agg(
            _polars_dcg(pl.col("rnk"), cut, "dcg"), _polars_dcg(pl.col("irnk"), cut, "idcg")))

    return _polars_runner("polars", frame, n_rows,
                          "lazy scan_parquet, rank('ordinal').over(query), mean only")


def polars_qrels(run, qrels, k=10, *, query="query_id", doc="doc_id", score="score",
                 label="label", n_rows: int = 0) -> Runner:
    """polars (lazy), qrels mode from Parquet files: left join, trec_eval's tie rule
    (score, then document id as a string, both descending: an ordinal rank of the
    struct), the ideal list from the qrels."""
    import polars as pl

    cut = _one_cutoff(k)

    def frame():
        r = pl.scan_parquet(run).select(pl.col(query).alias("query_id"),
                                        pl.col(doc).alias("doc_id"),
                                        pl.col(score).alias("score"))
        j = pl.scan_parquet(qrels).select(pl.col(query).alias("query_id"),
                                          pl.col(doc).alias("doc_id"),
                                          pl.col(label).alias("label"))
        judged = r.join(j, on=["query_id", "doc_id"], how="left").with_columns(
            pl.col("label").fill_null(0))
        ranked = judged.with_columns(
            rnk=pl.struct(pl.col("score"), pl.col("doc_id").cast(pl.String))
            .rank("ordinal", descending=True).over("query_id"))
        ideal = j.with_columns(irnk=pl.col("label").rank("ordinal", descending=True)
                               .over("query_id"))
        return _polars_ndcg_column(
            ranked.group_by("query_id").agg(_polars_dcg(pl.col("rnk"), cut, "dcg")).join(
                ideal.group_by("query_id").agg(_polars_dcg(pl.col("irnk"), cut, "idcg")),
                on="query_id"))

    return _polars_runner("polars", frame, n_rows,
                          "lazy: left join, struct rank('ordinal').over(query), mean only")


def fastndcg_parquet(path, k=10, *, qrels=None, ties="stable", n_rows: int = 0,
                     **options) -> Runner:
    """``fastndcg.evaluate(path, k=[k], ties=..., qrels=...)`` from Parquet files;
    ``call()`` returns the mean, ``per_query()`` a ``(query_id, ndcg)`` table sorted
    by id (comparable with :func:`duckdb_list` and friends)."""
    cut = _one_cutoff(k)
    extra = {} if qrels is None else {"qrels": qrels}

    def report():
        return fastndcg.evaluate(path, k=[cut], ties=ties, **extra, **options)

    def per_query():
        table = report().per_query
        return sorted_by_id(table, table.column_names[0], f"ndcg@{cut}")

    return Runner("fastndcg", lambda: report().mean[f"ndcg@{cut}"], per_query, n_rows, 0,
                  role="fastndcg")


def assert_same_keyed(expected: pa.Table, got: pa.Table, *, tol: float = 1e-9,
                      what: str = "") -> None:
    """Two ``(query_id, ndcg)`` tables sorted by id: the same ids (compared as
    strings when the types differ) and values equal to ``tol``."""
    a, b = expected["query_id"], got["query_id"]
    if a.type != b.type:
        a, b = a.cast(pa.string()), b.cast(pa.string())
    if len(a) != len(b) or not a.equals(b):
        raise AssertionError(f"{what}: different queries ({len(a):,} vs {len(b):,}; first "
                             f"ids {a[:3].to_pylist()} vs {b[:3].to_pylist()})")
    assert_same(expected["ndcg"].to_numpy(), got["ndcg"].to_numpy(), tol=tol, what=what)


# --------------------------------------------------------------------------- checks

def assert_same(expected: np.ndarray, got: np.ndarray, *, tol: float = TOLERANCE,
                what: str = "") -> None:
    """Per-query equality to ``tol`` (absolute), naming the worst query and cutoff."""
    expected, got = as_2d(expected), as_2d(got)
    if expected.shape != got.shape:
        raise AssertionError(f"{what}: shapes differ, {expected.shape} vs {got.shape}")
    if expected.size == 0:
        return
    diff = np.abs(expected - got)
    diff[np.isnan(expected) & np.isnan(got)] = 0.0
    diff[np.isnan(diff)] = np.inf
    q, c = np.unravel_index(int(np.argmax(diff)), diff.shape)
    if diff[q, c] > tol:
        raise AssertionError(f"{what}: query {q}, cutoff column {c}: expected "
                             f"{expected[q, c]!r}, got {got[q, c]!r} (|diff| "
                             f"{diff[q, c]:.3g} > {tol:g}); {int((diff > tol).sum())} values differ")


def check(reference_runner: Runner, other: Runner, *, tol: float = TOLERANCE) -> np.ndarray:
    """Assert ``other`` answers as ``reference_runner`` does (per query, to ``tol``);
    both are called once (the warm-up). Returns the reference's answer."""
    expected = reference_runner.per_query()
    assert_same(expected, other.per_query(), tol=tol,
                what=f"{other.system} vs {reference_runner.system}")
    return expected
