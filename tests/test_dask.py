"""fastndcg.dask.evaluate on a real distributed cluster against fastndcg.evaluate.

Every case runs the same source through the single-machine path and through a
``distributed.LocalCluster`` of two worker processes (one thread each) and asks
for the same Report: per-query tables equal (``Table.equals``: same ids, same
first-appearance order, bit-identical values), means to 1e-12 and the same
counts. The sources are built so the cluster has something to put back
together: Parquet files cut inside queries and cut again into many partitions
(``partition_rows``), queries whose rows are scattered over files, Dask
DataFrames whose partitions cut a query, TREC run and qrels text files. Also:
per_query targets, zero-IDCG policies, a worker killed while it scores, damaged
and missing files and bad values (the same error, nothing written), compiling once
per worker, ``import fastndcg`` without Dask, bad options.

Data stay small (hundreds to a couple of thousand rows) and in the dtypes the
rest of the suite compiles (float32/float64 scores, int8/int64 labels).
"""

from __future__ import annotations

import glob
import os
import re
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import fastndcg
from fastndcg.synth import synthetic_log
import inprocess
from test_evaluate import write_trec_qrels, write_trec_run

distributed = pytest.importorskip("distributed")
dd = pytest.importorskip("dask.dataframe")
fdask = pytest.importorskip("fastndcg.dask")

DATA = os.path.join(os.path.dirname(__file__), "data", "trec_eval")
COUNTS = ("n_queries", "n_rows", "n_zero_idcg", "n_scattered", "n_unjudged", "n_missing")
PART_NAME = re.compile(r"part-\d+\.parquet")


# --------------------------------------------------------------------------- cluster

def _cluster(**kw):
    return distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                    dashboard_address=None, **kw)


@pytest.fixture
def client(dask_client):
    """The suite's real two-process cluster (``dask_client`` in tests/conftest.py; the
    synchronous scheduler would not pickle anything, nor run tasks in other processes)."""
    return dask_client


# --------------------------------------------------------------------------- helpers

def esc(text: str) -> str:
    return re.escape(text)


def inside_query(ids) -> list[int]:
    """Row positions i such that rows i-1 and i belong to the same query."""
    return [i for i in range(1, len(ids)) if ids[i] == ids[i - 1]]


def write_parts(table: pa.Table, directory, cuts, row_group_size=16) -> list[str]:
    os.makedirs(directory, exist_ok=True)
    bounds = [0, *cuts, table.num_rows]
    paths = []
    for i, (a, b) in enumerate(zip(bounds[:-1], bounds[1:])):
        path = os.path.join(directory, f"part-{i:03d}.parquet")
        pq.write_table(table.slice(a, b - a), path, row_group_size=row_group_size)
        paths.append(path)
    return paths


def cuts_inside_queries(table: pa.Table, n_files: int) -> list[int]:
    """n_files - 1 cut positions, each between two rows of one query."""
    ids = table["query_id"].to_pylist()
    inner = inside_query(ids)
    cuts = [inner[len(inner) * i // n_files] for i in range(1, n_files)]
    for c in cuts:
        assert ids[c - 1] == ids[c]  # the query straddles the two files
    return cuts


def shuffled(table: pa.Table, seed=0) -> pa.Table:
    perm = np.random.default_rng(seed).permutation(table.num_rows)
    return table.take(pa.array(perm))


def partly_scattered(table: pa.Table, seed=0, n_moved=12) -> pa.Table:
    """``table`` with the first row of ``n_moved`` queries moved to a random place
    after the rest of its query (not next to it), so those queries' rows are not
    adjacent (a query the moved row lands in is cut in two as well)."""
    rng = np.random.default_rng(seed)
    ids = np.asarray(table["query_id"].to_pylist())
    starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
    ends = np.r_[starts[1:], len(ids)]
    multi = [(int(s), int(e)) for s, e in zip(starts[:-1], ends[:-1]) if e - s >= 2]
    chosen = [multi[i] for i in sorted(rng.choice(len(multi), size=n_moved, replace=False))]
    moved = {s for s, _ in chosen}
    order = [i for i in range(len(ids)) if i not in moved]
    for s, e in chosen:
        lo = order.index(e - 1) + 2  # not right after its own query
        order.insert(int(rng.integers(lo, len(order) + 1)), s)
    return table.take(pa.array(order))


def scattered_ids(table: pa.Table, query="query_id") -> set:
    """Ids whose rows are not all adjacent."""
    ids = table[query].to_pylist()
    seen, dup = set(), set()
    last = object()
    for q in ids:
        if q != last:
            if q in seen:
                dup.add(q)
            seen.add(q)
        last = q
    return dup


def assert_same_report(got, want, *, per_query=True) -> None:
    """The dask Report equals the single-machine one: per-query table, means, counts."""
    if per_query:
        g, w = got.per_query, want.per_query
        assert g.schema.equals(w.schema), (g.schema, w.schema)
        assert g.num_rows == w.num_rows
        assert g.column(0).to_pylist() == w.column(0).to_pylist()  # first-appearance order
        assert g.column(1).equals(w.column(1))  # n_docs
        for name in w.column_names[2:]:  # bit for bit (NaN too, which equals() rejects)
            a, b = g.column(name).to_numpy(), w.column(name).to_numpy()
            assert np.array_equal(a.view(np.uint64), b.view(np.uint64)), name
        if not any(np.isnan(w.column(n).to_numpy()).any() for n in w.column_names[2:]):
            assert g.equals(w)
    assert list(got.mean) == list(want.mean)
    for name, value in want.mean.items():
        assert got.mean[name] == pytest.approx(value, rel=1e-12, nan_ok=True), name
    for attr in COUNTS:
        assert getattr(got, attr) == getattr(want, attr), attr


def files_under(path) -> list[str]:
    out = []
    for root, dirs, files in os.walk(path):
        out += [os.path.relpath(os.path.join(root, f), path) for f in files]
        out += [os.path.relpath(os.path.join(root, d), path) + os.sep for d in dirs]
    return sorted(out)


def _signatures() -> tuple:
    """On a worker: the compiled specialisations of the main kernel, the dispatcher's
    identity and the worker's pid."""
    from fastndcg import _kernels
    return len(_kernels.dcg_chunk.signatures), id(_kernels.dcg_chunk), os.getpid()


# --------------------------------------------------------------------------- data

@pytest.fixture(scope="module")
def log() -> pa.Table:
    """~700 rows, ~120 queries of 1..11 rows, float32 scores with ties, int8 labels."""
    return synthetic_log(120, seed=7, mean_docs=6)


@pytest.fixture(scope="module")
def datasets(tmp_path_factory, log) -> dict:
    """name -> (directory of Parquet files, the table they hold in file order).

    straddling: 4 files cut inside queries, row groups of 16 rows;
    scattered: the same with one row of 12 queries moved far away (into other
    files); shuffled: every row permuted (nearly every query scattered)."""
    out = {}
    for name, table in [("straddling", log), ("scattered", partly_scattered(log, seed=1)),
                        ("shuffled", shuffled(log, seed=2))]:
        directory = tmp_path_factory.mktemp(name)
        cuts = (cuts_inside_queries(table, 4) if name != "shuffled"
                else [table.num_rows // 4, table.num_rows // 2, 3 * table.num_rows // 4])
        write_parts(table, directory, cuts)
        out[name] = (directory, table)
    assert not scattered_ids(out["straddling"][1])
    assert len(scattered_ids(out["scattered"][1])) >= 12
    assert len(scattered_ids(out["shuffled"][1])) > 60
    return out


# --------------------------------------------------------------------------- list mode

@pytest.mark.parametrize("ties", ["average", "stable"])
@pytest.mark.parametrize("name", ["straddling", "scattered", "shuffled"])
def test_parquet_files_equal_single_machine(client, datasets, name, ties):
    directory, table = datasets[name]
    want = fastndcg.evaluate(directory, ties=ties)
    assert want.n_rows == table.num_rows
    assert want.n_scattered == len(scattered_ids(table))
    for partition_rows in (40, 1 << 20):  # many partitions per file / one per file
        got = fdask.evaluate(directory, client=client, ties=ties, partition_rows=partition_rows)
        assert_same_report(got, want)
    # a glob, a few cut-offs, another gain
    want = fastndcg.evaluate(str(directory / "part-*.parquet"), ties=ties, k=[2, 7],
                             gain="linear", log_base=3.0)
    got = fdask.evaluate(str(directory / "part-*.parquet"), client=client, ties=ties, k=[2, 7],
                         gain="linear", log_base=3.0, partition_rows=25, batch_rows=7)
    assert_same_report(got, want)


def test_single_file_cut_into_many_partitions(client, tmp_path, log):
    """One file of 5-row row groups: every partition boundary can fall inside a query,
    and a long query can span several whole partitions."""
    long = pa.table({"query_id": np.full(60, 10_000, np.int64),
                     "doc_id": np.arange(60, dtype=np.int64),
                     "score": np.round(np.linspace(1, 0, 60), 1).astype(np.float32),
                     "label": (np.arange(60) % 3).astype(np.int8)}, schema=log.schema)
    table = pa.concat_tables([log.slice(0, 200), long, log.slice(200)])
    path = tmp_path / "log.parquet"
    pq.write_table(table, path, row_group_size=5)
    want = fastndcg.evaluate(path)
    for partition_rows in (5, 12):  # each row group a partition; two or three
        got = fdask.evaluate(path, client=client, partition_rows=partition_rows)
        assert_same_report(got, want)


@pytest.mark.parametrize("per_query", [None, False])
@pytest.mark.parametrize("zero_idcg", ["nan", "one"])
def test_zero_idcg_policies(client, datasets, zero_idcg, per_query):
    """Queries without a relevant item: NaN values (left out of the means) or 1."""
    directory, _ = datasets["shuffled"]
    want = fastndcg.evaluate(directory, zero_idcg=zero_idcg)
    assert want.n_zero_idcg > 0
    got = fdask.evaluate(directory, client=client, zero_idcg=zero_idcg, per_query=per_query,
                         partition_rows=40)
    assert_same_report(got, want, per_query=per_query is None)


# --------------------------------------------------------------------------- per_query targets

@pytest.mark.parametrize("name", ["straddling", "scattered"])
def test_per_query_false(client, datasets, name):
    directory, _ = datasets[name]
    want = fastndcg.evaluate(directory)
    got = fdask.evaluate(directory, client=client, per_query=False, partition_rows=40)
    assert_same_report(got, want, per_query=False)
    assert got.per_query_path is None
    with pytest.raises(ValueError, match="kept no per-query results"):
        got.per_query


@pytest.mark.parametrize("name", ["straddling", "scattered"])
def test_per_query_directory(client, datasets, tmp_path, name):
    directory, _ = datasets[name]
    want = fastndcg.evaluate(directory)
    out = tmp_path / "out"
    got = fdask.evaluate(directory, client=client, per_query=out, partition_rows=40)
    assert got.per_query_path == str(out)
    names = os.listdir(out)
    assert names and all(PART_NAME.fullmatch(n) for n in names), names
    assert_same_report(got, want)
    # the parts, read back independently, are the table
    parts = [pq.read_table(out / n) for n in sorted(names)]
    assert pa.concat_tables(parts).equals(want.per_query)

    # again into the same directory: the old parts are replaced, not mixed in
    (out / "part-999999.parquet").write_bytes(b"stale")
    got = fdask.evaluate(directory, client=client, per_query=str(out), partition_rows=1 << 20)
    names = os.listdir(out)
    assert "part-999999.parquet" not in names
    assert names and all(PART_NAME.fullmatch(n) for n in names), names
    assert_same_report(got, want)


def test_per_query_directory_holding_inputs_is_refused(client, datasets, tmp_path):
    directory, _ = datasets["straddling"]
    before = files_under(directory)
    for target, source in [(directory, directory),                       # is the input
                           (directory / "out", directory),               # inside the input
                           (directory, str(directory / "part-*.parquet")),  # holds the files
                           (directory, str(directory / "part-001.parquet"))]:
        with pytest.raises(ValueError, match=r"per_query .* which this command reads"):
            fdask.evaluate(source, client=client, per_query=target, partition_rows=40)
        assert files_under(directory) == before
    # the qrels file is an input too
    run, qrels_table, _ = qrels_case(3)
    pq.write_table(qrels_table, tmp_path / "qrels.parquet")
    with pytest.raises(ValueError, match=r"per_query .* which this command reads"):
        fdask.evaluate(run, client=client, qrels=tmp_path / "qrels.parquet", per_query=tmp_path)
    assert sorted(os.listdir(tmp_path)) == ["qrels.parquet"]


# --------------------------------------------------------------------------- qrels mode

def qrels_case(seed: int, *, int_ids=False, n=40):
    """A run and qrels with tied scores. Of ``n`` query names (in random order) the
    first 4 are in the run only (unjudged), the last 8 judged only (missing from
    the run); the first judged query has only 0 labels (IDCG 0)."""
    rng = np.random.default_rng(seed)
    names = [(int(i) * 7 + 3 if int_ids else f"q{i}") for i in rng.permutation(n)]
    run_queries = names[:n - 8]
    judged_queries = names[4:]
    docs = [f"d{i}" for i in range(30)]
    run_rows = []
    for q in run_queries:
        for d in rng.choice(docs, size=int(rng.integers(1, 16)), replace=False):
            run_rows.append((q, str(d), float(rng.choice([0.0, 0.5, 1.0, 2.0, 3.25]))))
    qrels = {}
    for j, q in enumerate(judged_queries):
        for d in rng.choice(docs, size=int(rng.integers(1, 12)), replace=False):
            qrels[(q, str(d))] = 0 if j == 0 else int(rng.integers(0, 4))
    run = pa.table({"query_id": [r[0] for r in run_rows], "doc_id": [r[1] for r in run_rows],
                    "score": [r[2] for r in run_rows]})
    qrels_table = pa.table({"query_id": [q for q, _ in qrels], "doc_id": [d for _, d in qrels],
                            "label": pa.array(list(qrels.values()), pa.int64())})
    return run, qrels_table, qrels


def qrels_sources(tmp_path, run, qrels_table, qrels, form):
    """(run source, qrels source) in one of the forms."""
    if form == "table":
        return run, qrels_table
    if form == "parquet":
        write_parts(run, tmp_path / "run", cuts_inside_queries(run, 3), row_group_size=7)
        pq.write_table(qrels_table, tmp_path / "qrels.parquet", row_group_size=50)
        return tmp_path / "run", tmp_path / "qrels.parquet"
    if form == "trec":
        write_trec_run(tmp_path / "run.txt", run)
        write_trec_qrels(tmp_path / "qrels.txt", qrels)
        return str(tmp_path / "run.txt"), tmp_path / "qrels.txt"
    if form == "parquet+trec":  # a Parquet run with TREC text qrels
        pq.write_table(run, tmp_path / "run.parquet", row_group_size=9)
        write_trec_qrels(tmp_path / "qrels.txt", qrels)
        return str(tmp_path / "run.parquet"), str(tmp_path / "qrels.txt")
    raise AssertionError(form)


@pytest.mark.parametrize("complete", [False, True])
@pytest.mark.parametrize("int_ids", [False, True], ids=["str_ids", "int_ids"])
@pytest.mark.parametrize("form", ["table", "parquet", "trec", "parquet+trec"])
def test_qrels_mode_equals_single_machine(client, tmp_path, form, int_ids, complete):
    run, qrels_table, qrels = qrels_case(5 + int_ids, int_ids=int_ids)
    source, judgments = qrels_sources(tmp_path, run, qrels_table, qrels, form)
    opts = dict(qrels=judgments, ties="trec", gain="linear", complete=complete)
    want = fastndcg.evaluate(source, **opts)
    assert want.n_unjudged == 4 and want.n_missing == 8
    assert want.n_queries == 28 + (8 if complete else 0)
    got = fdask.evaluate(source, client=client, partition_rows=30, **opts)
    assert_same_report(got, want)


@pytest.mark.parametrize("per_query", [None, False, "dir"])
@pytest.mark.parametrize("int_ids", [False, True], ids=["str_ids", "int_ids"])
def test_qrels_mode_scattered_run(client, tmp_path, int_ids, per_query):
    run, qrels_table, qrels = qrels_case(7, int_ids=int_ids)
    run = shuffled(run, seed=4)
    write_parts(run, tmp_path / "run", [run.num_rows // 3, 2 * run.num_rows // 3],
                row_group_size=10)
    opts = dict(qrels=qrels_table, ties="trec", gain="linear", complete=True)
    want = fastndcg.evaluate(tmp_path / "run", **opts)
    assert want.n_scattered > 0 and want.n_unjudged == 4 and want.n_missing == 8
    target = tmp_path / "out" if per_query == "dir" else per_query
    got = fdask.evaluate(tmp_path / "run", client=client, partition_rows=25, per_query=target,
                         **opts)
    assert_same_report(got, want, per_query=per_query is not False)
    if per_query == "dir":
        assert all(PART_NAME.fullmatch(n) for n in os.listdir(target))


@pytest.mark.parametrize("ties", ["average", "trec"])
def test_qrels_mode_other_ties(client, tmp_path, ties):
    run, qrels_table, qrels = qrels_case(9)
    source, judgments = qrels_sources(tmp_path, run, qrels_table, qrels, "parquet")
    want = fastndcg.evaluate(source, qrels=judgments, ties=ties)
    got = fdask.evaluate(source, client=client, qrels=judgments, ties=ties, partition_rows=20)
    assert_same_report(got, want)


@pytest.mark.parametrize("run_name,complete", [("results.test", False),
                                               ("results.test", True),
                                               ("results.trunc", True)])
@pytest.mark.parametrize("k", [(5, 10, 100, 1000), None])
def test_trec_eval_fixtures(client, run_name, complete, k):
    """trec_eval's own test run and qrels (results.trunc: interleaved queries and a
    judged query missing from the run)."""
    run, qrels = os.path.join(DATA, run_name), os.path.join(DATA, "qrels.test")
    opts = dict(qrels=qrels, k=k, gain="linear", ties="trec", complete=complete)
    want = fastndcg.evaluate(run, **opts)
    got = fdask.evaluate(run, client=client, partition_rows=170, **opts)
    assert_same_report(got, want)
    if run_name == "results.trunc":
        assert want.n_missing == 1 and want.n_scattered > 0


@pytest.mark.parametrize("preset", ["trec_eval", "pytrec_eval"])
def test_presets_measures_explain_on_the_cluster(client, preset):
    """The options added with presets travel to the workers: a preset, trec_eval
    measure names and explaining columns give the single-machine answer."""
    run, qrels = os.path.join(DATA, "results.test"), os.path.join(DATA, "qrels.test")
    # and trec_eval's other measures: binary, graded, geometric means, sums, parameters
    opts = dict(qrels=qrels, preset=preset, explain=True,
                measure="ndcg_cut.5,10 ndcg gm_map iprec_at_recall.0.2 infAP G rbp ERR@10 "
                        "RBP(rel=1) rbp_residual unj.5 num_ret Rprec_mult.0.4 set_F")
    want = fastndcg.evaluate(run, **opts)
    got = fdask.evaluate(run, client=client, partition_rows=170, **opts)
    assert_same_report(got, want)
    assert "judged@10" in got.per_query.column_names


def test_weighted_log_on_the_cluster(client, datasets):
    source = datasets["scattered"][0]
    table = fastndcg.evaluate(source, k=[3]).per_query
    weights = {q: float(1 + q % 7) for q in table["query_id"].to_pylist()}
    import pyarrow.parquet as pq
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        for i, path in enumerate(sorted(glob.glob(os.path.join(source, "*.parquet")))):
            t = pq.read_table(path)
            w = pa.array([weights[q] for q in t["query_id"].to_pylist()])
            pq.write_table(t.append_column("w", w), os.path.join(d, f"part-{i:03d}.parquet"))
        want = fastndcg.evaluate(d, k=[3], weight="w")
        got = fdask.evaluate(d, client=client, k=[3], weight="w", partition_rows=40)
    assert_same_report(got, want)


# --------------------------------------------------------------------------- other sources

def straddled_frame(table: pa.Table, npartitions=4):
    frame = dd.from_pandas(table.to_pandas(), npartitions=npartitions)
    sizes = frame.map_partitions(len).compute().tolist()
    assert len(sizes) == npartitions
    ids = table["query_id"].to_pylist()
    bounds = np.cumsum(sizes)[:-1]
    assert any(ids[b - 1] == ids[b] for b in bounds), "no query straddles a partition"
    return frame


def test_dask_dataframe(client, log):
    frame = straddled_frame(log)
    want = fastndcg.evaluate(log)
    got = fdask.evaluate(frame, client=client)
    assert_same_report(got, want)
    # stable ties, and k=None
    want = fastndcg.evaluate(log, ties="stable", k=None)
    got = fdask.evaluate(frame, client=client, ties="stable", k=None)
    assert_same_report(got, want)


def test_dask_dataframe_scattered_and_string_ids(client, log):
    table = partly_scattered(log, seed=5)
    table = table.set_column(0, "query_id",
                             pa.array([f"q{q}" for q in table["query_id"].to_pylist()]))
    frame = dd.from_pandas(table.to_pandas(), npartitions=5)
    want = fastndcg.evaluate(table)
    assert want.n_scattered >= 12
    for per_query in (None, False):
        got = fdask.evaluate(frame, client=client, per_query=per_query)
        assert_same_report(got, want, per_query=per_query is None)


def test_dask_dataframe_qrels_mode(client):
    run, qrels_table, _ = qrels_case(11)
    frame = straddled_frame(run, npartitions=3)
    opts = dict(qrels=qrels_table, ties="trec", gain="linear", complete=True)
    want = fastndcg.evaluate(run, **opts)
    got = fdask.evaluate(frame, client=client, **opts)
    assert_same_report(got, want)


def test_file_url(client, datasets):
    directory, _ = datasets["scattered"]
    want = fastndcg.evaluate(directory)
    for url in (f"file://{directory}", f"file://{directory}/part-*.parquet"):
        got = fdask.evaluate(url, client=client, partition_rows=40)
        assert_same_report(got, want)
    one = directory / "part-002.parquet"
    got = fdask.evaluate(f"file://{one}", client=client, partition_rows=10)
    assert_same_report(got, fastndcg.evaluate(one))


# --------------------------------------------------------------------------- faults

class DieOnce(distributed.WorkerPlugin):
    """Kills its worker process the first time any worker of the cluster starts
    executing a ``_score_piece`` task (the marker file makes it once, cluster-wide)."""

    name = "test-die-once"

    def __init__(self, marker: str, prefix: str = "_score_piece") -> None:
        self.marker = marker
        self.prefix = prefix

    def transition(self, key, start, finish, **kw):
        if finish != "executing" or not str(key).startswith(self.prefix):
            return
        try:
            fd = os.open(self.marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            return
        os.close(fd)
        os._exit(1)


@pytest.mark.heavy  # a cluster of its own, whose worker dies: the heavy tier
@pytest.mark.parametrize("form", ["parquet", "frame", "trec"])
def test_worker_killed_mid_run(tmp_path, datasets, log, form):
    """A worker process dies as it starts scoring a partition; the nanny starts a new
    one, Dask runs the lost work again and the answer is complete and the same.
    parquet: a scattered list-mode log in many partitions; frame: a Dask DataFrame
    whose partitions cut queries; trec: a TREC run file (read on the client and
    sent to the workers in slices) with qrels. Results written to a directory."""
    if form == "parquet":
        source, opts, want_source = datasets["scattered"][0], {}, datasets["scattered"][0]
        partition_rows = 10
    elif form == "frame":
        source, opts, want_source = straddled_frame(log, npartitions=12), {}, log
        partition_rows = 10
    else:
        run, _, qrels = qrels_case(13)
        source, judgments = qrels_sources(tmp_path, run, None, qrels, "trec")
        opts = dict(qrels=judgments, ties="trec", gain="linear", complete=True)
        want_source, partition_rows = source, 8
    want = fastndcg.evaluate(want_source, **opts)
    marker = str(tmp_path / "died")
    out = tmp_path / "out"
    cluster = _cluster()
    c = distributed.Client(cluster)
    try:
        c.wait_for_workers(2, timeout=60)
        pids = set(c.run(os.getpid).values())
        c.register_plugin(DieOnce(marker))
        got = fdask.evaluate(source, client=c, per_query=out, partition_rows=partition_rows,
                             **opts)
        assert os.path.exists(marker), "no worker was killed"
        c.wait_for_workers(2, timeout=60)
        assert set(c.run(os.getpid).values()) != pids  # a worker was replaced
    finally:
        c.close()
        cluster.close()
    assert_same_report(got, want)
    assert all(PART_NAME.fullmatch(n) for n in os.listdir(out))


def test_missing_file(client, tmp_path):
    path = tmp_path / "nope.parquet"
    with pytest.raises(FileNotFoundError, match=esc(repr(str(path))) + ".*does not exist"):
        fdask.evaluate(path, client=client)
    with pytest.raises(FileNotFoundError, match=esc(str(path))):
        fdask.evaluate(f"file://{path}", client=client)
    pattern = str(tmp_path / "part-*.parquet")
    with pytest.raises(FileNotFoundError, match=esc(f"no files match {pattern!r}")):
        fdask.evaluate(pattern, client=client)
    # a missing qrels file, before any work
    run, _, _ = qrels_case(3)
    with pytest.raises(FileNotFoundError, match=esc(str(tmp_path / "qrels.txt"))):
        fdask.evaluate(run, client=client, qrels=tmp_path / "qrels.txt", per_query=tmp_path / "o")
    assert files_under(tmp_path) in ([], ["o" + os.sep])  # at most the (empty) target


def _garbage(path):
    """PAR1 magic at both ends, garbage between (no readable footer)."""
    with open(path, "wb") as f:
        f.write(b"PAR1" + bytes(range(256)) * 4 + b"PAR1")


def _truncated(path):
    """A real Parquet file cut in half (its footer gone)."""
    data = open(path, "rb").read()
    with open(path, "wb") as f:
        f.write(data[: len(data) // 2])


def _damaged_pages(path):
    """Magic and footer intact, the column chunks overwritten with random bytes: the
    footer reads fine on the client, the error comes from a worker's task."""
    data = bytearray(open(path, "rb").read())
    footer = len(data) - 8 - int.from_bytes(data[-8:-4], "little")
    data[4:footer] = np.random.default_rng(0).integers(0, 256, footer - 4, np.uint8).tobytes()
    with open(path, "wb") as f:
        f.write(bytes(data))


def visible(path) -> list[str]:
    """Files and directories under ``path`` that are not hidden (staging)."""
    return [f for f in files_under(path) if not f.startswith((".", "_"))]


@pytest.mark.parametrize("damage", [_garbage, _truncated, _damaged_pages],
                         ids=["garbage", "truncated", "damaged_pages"])
def test_damaged_file_among_several(client, tmp_path, log, damage):
    src = tmp_path / "logs"
    paths = write_parts(log, src, cuts_inside_queries(log, 4), row_group_size=16)
    damage(paths[2])
    out = tmp_path / "out"
    with pytest.raises(ValueError, match=esc(repr(paths[2]))):
        fdask.evaluate(src, client=client, per_query=out, partition_rows=20)
    assert not os.path.exists(out) or visible(out) == []
    if damage is not _damaged_pages:  # found on the client, before any task ran
        assert not os.path.exists(out) or files_under(out) == []
    # an existing per_query directory keeps what it held, and gets nothing new
    out.mkdir(exist_ok=True)
    (out / "part-000000.parquet").write_bytes(b"earlier")
    with pytest.raises(ValueError, match=esc(repr(paths[2]))):
        fdask.evaluate(str(src / "*.parquet"), client=client, per_query=out, partition_rows=20)
    assert visible(out) == ["part-000000.parquet"]
    assert (out / "part-000000.parquet").read_bytes() == b"earlier"
    # the in-memory and no-results paths fail the same way
    for per_query in (None, False):
        with pytest.raises(ValueError, match=esc(repr(paths[2]))):
            fdask.evaluate(src, client=client, per_query=per_query, partition_rows=20)


def _with_bad_value(log: pa.Table, what: str) -> pa.Table:
    if what == "nan_score":
        score = log["score"].to_numpy().copy()
        score[500] = np.nan
        return log.set_column(2, "score", pa.array(score))
    if what == "negative_label":
        label = log["label"].to_numpy().copy()
        label[450] = -1
        return log.set_column(3, "label", pa.array(label))
    score = log["score"].to_pylist()
    score[480] = None
    return log.set_column(2, "score", pa.array(score, pa.float32()))


@pytest.mark.parametrize("what", ["nan_score", "negative_label", "null_score"])
def test_bad_value_fails_whole_run_with_same_error(client, tmp_path, log, what):
    """A bad value in a later file fails the run with the error one machine gives
    (naming the query and, for a null, its row in the log), and writes nothing."""
    table = _with_bad_value(log, what)
    write_parts(table, tmp_path / "logs", cuts_inside_queries(table, 3))
    with pytest.raises(ValueError) as single:
        fastndcg.evaluate(tmp_path / "logs")
    out = tmp_path / "out"
    with pytest.raises(ValueError) as dist:
        fdask.evaluate(tmp_path / "logs", client=client, per_query=out, partition_rows=30)
    assert str(dist.value) == str(single.value)
    assert not os.path.exists(out) or visible(out) == []


def _executing(dask_worker) -> int:
    return len(dask_worker.state.executing)


def test_failed_run_leaves_nothing_in_per_query_dir(client, tmp_path, log):
    """A task fails (a damaged data page) while the other worker is still starting
    and running tasks of the same run: once everything stopped, the per_query
    directory holds nothing from the failed run, staging included. (The race is
    not hit on every run, so the run is repeated.)"""
    import time

    src = tmp_path / "logs"
    paths = write_parts(log, src, cuts_inside_queries(log, 4), row_group_size=16)
    _damaged_pages(paths[2])
    out = tmp_path / "out"
    for _ in range(12):
        with pytest.raises(ValueError, match=esc(repr(paths[2]))):
            fdask.evaluate(src, client=client, per_query=out, partition_rows=5)
        deadline = time.monotonic() + 30
        while any(client.run(_executing).values()) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert files_under(out) == [], "a failed run left files in the per_query directory"


# ---------------------------------------------------------------------- compiling, imports, options

def test_kernels_compiled_once_per_worker(client, datasets):
    directory, _ = datasets["scattered"]
    for _ in range(2):
        fdask.evaluate(directory, client=client, partition_rows=20, per_query=False)
    before = client.run(_signatures)
    assert len(before) == 2 and all(n >= 1 for n, _, _ in before.values())
    report = fdask.evaluate(directory, client=client, partition_rows=20)
    assert report.n_queries == 120
    after = client.run(_signatures)
    assert after == before  # same workers, same dispatcher, no new specialisation


def test_import_does_not_import_dask():
    code = ("import fastndcg, sys; "
            "assert 'dask' not in sys.modules and 'distributed' not in sys.modules, "
            "sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed'))")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


@pytest.mark.parametrize("option,value", [("workers", 0), ("workers", -2), ("workers", True),
                                          ("workers", 1.5), ("partition_rows", 0),
                                          ("partition_rows", -1), ("partition_rows", 2.0)])
def test_bad_options(client, datasets, option, value):
    directory, _ = datasets["straddling"]
    kw = {} if option == "workers" else {"client": client}
    # a wrong kind of value is a TypeError, a wrong value a ValueError; both name it
    with pytest.raises((ValueError, TypeError), match=option):
        fdask.evaluate(directory, **{option: value}, **kw)


def test_client_and_workers_together_are_refused(client, datasets):
    directory, _ = datasets["straddling"]
    with pytest.raises(ValueError, match="client= or workers=, not both"):
        fdask.evaluate(directory, client=client, workers=2)


def test_client_address_string_is_refused_with_the_fix(datasets):
    directory, _ = datasets["straddling"]
    with pytest.raises(TypeError, match=r"client must be a distributed.Client.*"
                                        r"distributed.Client\('tcp://10.0.0.1:8786'\)"):
        fdask.evaluate(directory, client="tcp://10.0.0.1:8786")


# --------------------------------------------------------------------------- compare

def _compare_log() -> pa.Table:
    from test_compare import make_log
    return make_log(900, n_systems=3, n_segments=3, seed=9)


@pytest.mark.parametrize("method", ["auto", "buckets"])
def test_compare_equals_one_machine_bit_for_bit(client, tmp_path, method):
    """Queries straddle the files and the row groups; the Comparison (systems, tests,
    per-query values) is the one-machine one, bit for bit."""
    table = _compare_log()
    directory = tmp_path / "log"
    write_parts(table, directory, cuts_inside_queries(table, 4), row_group_size=97)
    systems = ["score_a", "score_b", "score_c"]
    kw = dict(k=[5, 10], segment="market", n_resamples=500, method=method)
    want = fastndcg.compare(table, systems, **kw)
    got = fdask.compare(str(directory), systems, client=client, partition_rows=150, **kw)
    assert got.method == want.method == ("queries" if method == "auto" else "buckets")
    assert got.systems.equals(want.systems) and got.tests.equals(want.tests)
    if method == "auto":
        assert got.per_query.equals(want.per_query)
    assert [r.n_queries for r in got.reports.values()] == [900] * 3
    # a Dask DataFrame gives the same answer
    import dask.dataframe as dd
    frame = dd.from_pandas(table.to_pandas(), npartitions=3, sort=False)
    again = fdask.compare(frame, systems, client=client, **kw)
    # (pandas holds the strings as large_string: the segment column keeps that type)
    seg = again.tests.column_names.index("segment")
    assert again.tests.set_column(seg, "segment", again.tests["segment"].cast(pa.string())
                                  ).equals(want.tests)


def test_compare_refuses_scattered_queries_and_runs(client, tmp_path):
    table = partly_scattered(_compare_log().drop(["market"]))
    path = tmp_path / "log.parquet"
    pq.write_table(table, path, row_group_size=200)
    with pytest.raises(ValueError, match=r"not adjacent .* needs each query's rows together: "
                                         r"sort the log by 'query_id'"):
        fdask.compare(str(path), ["score_a", "score_b"], client=client, partition_rows=400,
                      n_resamples=10)
    with pytest.raises(ValueError, match=r"compares the score columns of a log; compare runs "
                                         r"against qrels on one machine"):
        fdask.compare(None, {"a": "a.run", "b": "b.run"}, qrels="q.txt", client=client)


def test_compare_on_the_command_line_with_workers(tmp_path):
    table = _compare_log()
    path = tmp_path / "log.parquet"
    pq.write_table(table, path, row_group_size=300)
    out = inprocess.run(["compare", path, "--systems", "score_a,score_b", "--workers", "2",
                         "--method", "buckets", "--resamples", "300", "--format", "json"],
                        timeout=300)
    assert out.returncode == 0, out.stderr
    import json
    got = json.loads(out.stdout)
    want = fastndcg.compare(table, ["score_a", "score_b"], method="buckets", n_resamples=300)
    assert got["method"] == "buckets"
    assert [r["ci_low"] for r in got["tests"]] == want.tests["ci_low"].to_pylist()
    assert [r["p_t"] for r in got["tests"]] == want.tests["p_t"].to_pylist()
