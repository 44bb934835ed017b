"""fastndcg.evaluate: streaming evaluation of logs against independent oracles.

List mode is checked against ``fastndcg.ndcg(query_ids=...)`` (itself tested against
the reference) whatever way the rows reach it: tiny batches, row groups and files
that cut queries in two, scattered rows (regrouped in memory or on disk), readers,
DataFrames. Qrels mode and ``ties="trec"`` are checked against the pure-Python
``fastndcg.reference.ndcg_query`` with ``ideal_labels`` / ``doc_ids``.

Dtypes are kept to float32/float64 scores with int8/int64 labels (each new pair is a
compiled specialisation)."""

from __future__ import annotations

import importlib
import math
import os
import re
import sys
from collections import Counter, defaultdict
from unittest import mock

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fastndcg
from fastndcg import reference
from fastndcg.synth import synthetic_log

from strategies import examples

# the module (``fastndcg.evaluate`` the attribute is the function)
SC = importlib.import_module("fastndcg.scattered")

K = (1, 3, 5, 10)
NAMES = [f"ndcg@{k}" for k in K]


# --------------------------------------------------------------------------- helpers

def first_appearance(ids) -> list:
    return list(dict.fromkeys(ids))


def expected_list_mode(table: pa.Table, k=K, *, query="query_id", score="score",
                       label="label", **kw) -> tuple[list, list, np.ndarray]:
    """(query ids in order of first appearance, n_docs, NDCG matrix) from fastndcg.ndcg."""
    ids = table.column(query).to_pylist()
    order = first_appearance(ids)
    counts = Counter(ids)
    cutoffs = None if k is None else list(k)
    values = fastndcg.ndcg(table.column(score).to_numpy(), table.column(label).to_numpy(),
                           query_ids=np.asarray(ids, dtype=object) if isinstance(ids[0], str)
                           else np.asarray(ids), k=cutoffs, **kw)
    values = np.asarray(values).reshape(len(order), -1)
    return order, [counts[q] for q in order], values


def assert_list_mode(report, table: pa.Table, k=K, *, query="query_id", score="score",
                     label="label", **kw) -> None:
    order, n_docs, values = expected_list_mode(table, k, query=query, score=score,
                                               label=label, **kw)
    names = ["ndcg"] if k is None else [f"ndcg@{c}" for c in k]
    per = report.per_query
    assert per.column_names == [query, "n_docs", *names]
    assert per.column(query).to_pylist() == order
    assert per.column("n_docs").to_pylist() == n_docs
    assert per.column("n_docs").type == pa.int64()
    for i, name in enumerate(names):
        assert per.column(name).type == pa.float64()
        np.testing.assert_array_equal(per.column(name).to_numpy(), values[:, i], err_msg=name)
    assert report.n_queries == len(order)
    assert report.n_rows == table.num_rows


def query_boundaries(ids) -> list[int]:
    """Row positions where a new query starts."""
    return [i for i in range(1, len(ids)) if ids[i] != ids[i - 1]]


def inside_query(ids) -> list[int]:
    """Row positions i such that rows i-1 and i belong to the same query."""
    return [i for i in range(1, len(ids)) if ids[i] == ids[i - 1]]


def write_parts(table: pa.Table, directory, cuts, row_group_size=5) -> list[str]:
    bounds = [0, *cuts, table.num_rows]
    paths = []
    for i, (a, b) in enumerate(zip(bounds[:-1], bounds[1:])):
        path = os.path.join(directory, f"part-{i:03d}.parquet")
        pq.write_table(table.slice(a, b - a), path, row_group_size=row_group_size)
        paths.append(path)
    return paths


@pytest.fixture(scope="module")
def log() -> pa.Table:
    """A small synthetic log: float32 scores rounded to 2 decimals (ties), int8 labels."""
    return synthetic_log(40, seed=3, mean_docs=6)


def log64(n_queries=25, seed=0, *, ids=None) -> pa.Table:
    """A tie-heavy float64 / int64 log with queries of 1..9 rows."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 10, size=n_queries)
    qids = np.arange(n_queries) if ids is None else ids
    query = np.repeat(np.asarray(qids), sizes)
    n = int(sizes.sum())
    score = rng.choice([-1.0, 0.0, 0.5, 1.0, 2.0], size=n)
    label = rng.integers(0, 4, size=n).astype(np.int64)
    doc = np.concatenate([rng.permutation(np.arange(1, 200))[:s] for s in sizes])
    return pa.table({"query_id": query, "doc_id": doc.astype(np.int64), "score": score,
                     "label": label})


def shuffled(table: pa.Table, seed=0) -> pa.Table:
    perm = np.random.default_rng(seed).permutation(table.num_rows)
    return table.take(pa.array(perm))


# --------------------------------------------------------------------------- batches, row groups, files

@pytest.mark.parametrize("batch_rows", [1, 7, 100, 1 << 20])
def test_table_in_tiny_batches_equals_ndcg(log, batch_rows):
    ids = log["query_id"].to_pylist()
    if batch_rows == 7:  # a query really crosses a batch boundary
        assert any(i % 7 == 0 for i in inside_query(ids))
    report = fastndcg.evaluate(log, batch_rows=batch_rows)
    assert_list_mode(report, log)


def test_chunked_table_equals_ndcg(log):
    ids = log["query_id"].to_pylist()
    cuts = inside_query(ids)[::5]
    pieces = [log.slice(a, b - a) for a, b in zip([0, *cuts], [*cuts, log.num_rows])]
    chunked = pa.concat_tables(pieces)
    assert chunked["score"].num_chunks == len(pieces)
    assert_list_mode(fastndcg.evaluate(chunked), log)


def test_record_batch_source(log):
    batch = log.combine_chunks().to_batches()[0]
    assert_list_mode(fastndcg.evaluate(batch, batch_rows=9), log)


@pytest.fixture()
def parquet_dir(tmp_path, log):
    """log split over 4 files (cuts inside queries), row groups of 5 rows, plus the
    marker files Spark/Hadoop leave behind (which must be skipped)."""
    ids = log["query_id"].to_pylist()
    inner = inside_query(ids)
    cuts = [inner[len(inner) // 4], inner[len(inner) // 2], inner[3 * len(inner) // 4]]
    for c in cuts:
        assert ids[c - 1] == ids[c]  # the query straddles the two files
    write_parts(log, tmp_path, cuts, row_group_size=5)
    # a query also straddles row groups inside a file
    assert any(i % 5 == 0 for i in inner if i < cuts[0])
    (tmp_path / "_SUCCESS").write_bytes(b"")
    (tmp_path / ".part-000.parquet.crc").write_bytes(b"not parquet")
    (tmp_path / "_temporary").mkdir()
    (tmp_path / "_temporary" / "junk.parquet").write_bytes(b"junk")
    return tmp_path


@pytest.mark.parametrize("batch_rows", [3, 1 << 20])
def test_parquet_directory_equals_ndcg(parquet_dir, log, batch_rows):
    report = fastndcg.evaluate(parquet_dir, batch_rows=batch_rows)
    assert_list_mode(report, log)
    report = fastndcg.evaluate(str(parquet_dir), batch_rows=batch_rows)
    assert_list_mode(report, log)


@pytest.mark.parametrize("pattern", ["part-*.parquet", "*", "part-00[0-3].parquet"])
def test_parquet_glob_equals_ndcg(parquet_dir, log, pattern):
    report = fastndcg.evaluate(str(parquet_dir / pattern), batch_rows=4)
    assert_list_mode(report, log)


def test_parquet_files_are_read_in_sorted_order(tmp_path, log):
    # written in reverse order: the directory listing order must not matter
    ids = log["query_id"].to_pylist()
    inner = inside_query(ids)
    cuts = [inner[5], inner[20], inner[40]]
    bounds = [0, *cuts, log.num_rows]
    for i in reversed(range(len(bounds) - 1)):
        pq.write_table(log.slice(bounds[i], bounds[i + 1] - bounds[i]),
                       tmp_path / f"part-{i:03d}.parquet", row_group_size=5)
    assert_list_mode(fastndcg.evaluate(tmp_path, batch_rows=6), log)


def test_single_parquet_file_with_tiny_row_groups(tmp_path, log):
    path = tmp_path / "log.parquet"
    pq.write_table(log, path, row_group_size=5)
    assert pq.ParquetFile(path).metadata.num_row_groups > 10
    assert_list_mode(fastndcg.evaluate(path), log)
    assert_list_mode(fastndcg.evaluate(str(path), batch_rows=2), log)


def test_write_synthetic_log_row_groups(tmp_path):
    path = tmp_path / "synth.parquet"
    rows = fastndcg.synth.write_synthetic_log(path, 30, seed=5, mean_docs=5, row_group_rows=7)
    table = pq.read_table(path)
    assert rows == table.num_rows
    assert pq.ParquetFile(path).metadata.row_group(0).num_rows == 7
    assert_list_mode(fastndcg.evaluate(path), table)


def test_arrow_dataset(parquet_dir, log):
    dataset = ds.dataset(sorted(str(p) for p in parquet_dir.glob("part-*.parquet")),
                         format="parquet")
    assert_list_mode(fastndcg.evaluate(dataset, batch_rows=4), log)


def test_query_straddling_files_with_different_nullability(tmp_path, log):
    """Two writers disagree on whether query_id is nullable; a query that straddles the
    two files must still be scored (whole). Non-straddling queries already work."""
    ids = log["query_id"].to_pylist()
    cut = inside_query(ids)[10]
    pq.write_table(log.slice(0, cut), tmp_path / "part-000.parquet")
    strict = pa.schema([pa.field("query_id", pa.int64(), nullable=False), *list(log.schema)[1:]])
    pq.write_table(log.slice(cut).cast(strict), tmp_path / "part-001.parquet")
    assert_list_mode(fastndcg.evaluate(tmp_path), log)


# --------------------------------------------------------------------------- hypothesis

SCORES = [-math.inf, -1.0, 0.0, 0.5, 1.0, math.inf]


@st.composite
def split_logs(draw):
    n_queries = draw(st.integers(1, 7))
    sizes = draw(st.lists(st.integers(1, 8), min_size=n_queries, max_size=n_queries))
    ids = draw(st.permutations(range(3 * n_queries)))[:n_queries]  # not ascending, in general
    query = np.repeat(np.asarray(ids, np.int64), sizes)
    n = len(query)
    score = np.asarray(draw(st.lists(st.sampled_from(SCORES), min_size=n, max_size=n)))
    label = np.asarray(draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)), np.int64)
    table = pa.table({"query_id": query, "score": score, "label": label})
    scattered = draw(st.booleans())
    if scattered:
        table = table.take(pa.array(draw(st.permutations(range(n)))))
    n_files = draw(st.integers(1, 4))
    cuts = sorted(draw(st.lists(st.integers(0, n), min_size=n_files - 1,
                                max_size=n_files - 1)))
    return dict(table=table, scattered=scattered, cuts=cuts,
                row_group=draw(st.integers(1, 6)), batch_rows=draw(st.integers(1, 9)),
                kind=draw(st.sampled_from(["dir", "glob", "table", "reader"])),
                regroup_rows=draw(st.sampled_from([8 << 20, 1, 4])),
                spill_ids=draw(st.sampled_from([2 << 20, 1, 3])),
                ties=draw(st.sampled_from(["average", "stable"])))


@settings(max_examples=examples(0.25), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(case=split_logs())
def test_any_split_equals_ndcg(tmp_path_factory, case):
    table = case["table"]
    directory = tmp_path_factory.mktemp("split")
    pieces = [table.slice(a, b - a) for a, b in
              zip([0, *case["cuts"]], [*case["cuts"], table.num_rows])]
    if case["kind"] in ("dir", "glob"):
        write_parts(table, directory, case["cuts"], row_group_size=case["row_group"])
        source = str(directory) if case["kind"] == "dir" else str(directory / "part-*.parquet")
    elif case["kind"] == "table":
        source = pa.concat_tables(pieces)
    else:
        batches = [b for p in pieces for b in p.to_batches(max_chunksize=case["row_group"])]
        source = pa.RecordBatchReader.from_batches(table.schema, batches)
    ids = table["query_id"].to_pylist()
    really_scattered = len(query_boundaries(ids)) + 1 > len(set(ids))
    with mock.patch.object(SC, "REGROUP_ROWS", case["regroup_rows"]), \
            mock.patch.object(SC, "SPILL_IDS", case["spill_ids"]):
        if case["kind"] == "reader" and really_scattered:
            with pytest.raises(ValueError, match="not adjacent"):
                fastndcg.evaluate(source, batch_rows=case["batch_rows"], ties=case["ties"])
            return
        report = fastndcg.evaluate(source, batch_rows=case["batch_rows"], ties=case["ties"])
    assert_list_mode(report, table, ties=case["ties"])
    # and against the reference, query by query
    rows = defaultdict(list)
    for i, q in enumerate(ids):
        rows[q].append(i)
    s, r = table["score"].to_pylist(), table["label"].to_pylist()
    for q, got in zip(report.per_query["query_id"].to_pylist(),
                      report.per_query["ndcg@3"].to_pylist()):
        want = reference.ndcg_query([s[i] for i in rows[q]], [r[i] for i in rows[q]], 3,
                                    ties=case["ties"])
        assert got == pytest.approx(want, rel=1e-12, abs=1e-15)


# --------------------------------------------------------------------------- scattered rows

@pytest.mark.parametrize("ties", ["average", "stable"])
def test_scattered_rows_are_regrouped(log, ties):
    table = shuffled(log, seed=1)
    ids = table["query_id"].to_pylist()
    assert len(query_boundaries(ids)) + 1 > len(set(ids))  # really scattered
    report = fastndcg.evaluate(table, batch_rows=16, ties=ties)
    # ties="stable" also checks that the input order inside each query is kept
    assert_list_mode(report, table, ties=ties)
    per = report.per_query["query_id"].to_pylist()
    assert len(per) == len(set(per)) == len(set(ids))  # each query exactly once
    assert sum(report.per_query["n_docs"].to_pylist()) == table.num_rows


def test_scattered_string_ids(log):
    table = shuffled(log, seed=2)
    table = table.set_column(0, "query_id",
                             pa.array([f"q{v}" for v in table["query_id"].to_pylist()]))
    report = fastndcg.evaluate(table, batch_rows=10)
    assert_list_mode(report, table)


def test_partly_scattered_keeps_first_appearance():
    # query 5 comes back after 6 and 7; 7 comes back at the very end
    table = pa.table({"query_id": [5, 5, 6, 5, 7, 7, 8, 7],
                      "score": [1.0, 0.5, 0.2, 0.9, 0.3, 0.3, 0.1, 0.7],
                      "label": np.array([0, 2, 1, 1, 1, 0, 2, 3], np.int64)})
    for batch_rows in (1, 3, 100):
        report = fastndcg.evaluate(table, batch_rows=batch_rows, k=[1, 2, 10])
        assert report.per_query["query_id"].to_pylist() == [5, 6, 7, 8]
        assert report.per_query["n_docs"].to_pylist() == [3, 1, 3, 1]
        assert_list_mode(report, table, k=[1, 2, 10])


def test_scattered_parquet_files(tmp_path, log):
    table = shuffled(log, seed=4)
    write_parts(table, tmp_path, [50, 51, 120], row_group_size=7)
    assert_list_mode(fastndcg.evaluate(tmp_path, batch_rows=11), table)


class _CountCalls:
    def __init__(self, func):
        self.func = func
        self.calls = 0

    def __call__(self, *args, **kwargs):
        self.calls += 1
        return self.func(*args, **kwargs)


@pytest.mark.parametrize("limit", [1, 5, 64])
def test_scattered_rows_regrouped_on_disk(monkeypatch, tmp_path, log, limit):
    table = shuffled(log, seed=5)
    monkeypatch.setattr(SC, "REGROUP_ROWS", limit)
    spy = _CountCalls(SC.regroup)
    monkeypatch.setattr(SC, "regroup", spy)
    report = fastndcg.evaluate(table, batch_rows=13, ties="stable")
    assert spy.calls > 1  # one regroup per bucket: the disk path was taken
    assert_list_mode(report, table, ties="stable")
    # the same from Parquet files
    write_parts(table, tmp_path, [100], row_group_size=9)
    assert_list_mode(fastndcg.evaluate(tmp_path, batch_rows=8), table)


def test_scattered_rows_in_memory_by_default(monkeypatch, log):
    table = shuffled(log, seed=6)
    spy = _CountCalls(SC.regroup)
    monkeypatch.setattr(SC, "REGROUP_ROWS", 1 << 30)
    monkeypatch.setattr(SC, "regroup", spy)
    assert_list_mode(fastndcg.evaluate(table, batch_rows=13), table)
    assert spy.calls == 1


# --------------------------------------------------------------------------- RecordBatchReader

def reader_of(table: pa.Table, chunk=6) -> pa.RecordBatchReader:
    return pa.RecordBatchReader.from_batches(table.schema, table.to_batches(max_chunksize=chunk))


def test_record_batch_reader_adjacent(log):
    report = fastndcg.evaluate(reader_of(log), batch_rows=4)
    assert_list_mode(report, log)


def test_record_batch_reader_scattered_names_the_query():
    table = pa.table({"query_id": [1, 1, 2, 2, 3, 1],
                      "score": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6],
                      "label": np.array([1, 0, 1, 0, 1, 2], np.int64)})
    with pytest.raises(ValueError, match=r"rows of query 1 are not adjacent.*"
                                         r"RecordBatchReader.*sort the log by 'query_id'"):
        fastndcg.evaluate(reader_of(table, chunk=2))


def test_record_batch_reader_scattered_string_id():
    table = pa.table({"qid": ["x", "y", "x"], "score": [0.1, 0.2, 0.3],
                      "label": np.array([1, 0, 1], np.int64)})
    with pytest.raises(ValueError, match=r"rows of query 'x' are not adjacent"):
        fastndcg.evaluate(reader_of(table, chunk=1), query="qid")


# --------------------------------------------------------------------------- DataFrames, ids, columns

def test_pandas_dataframe(log):
    frame = log.to_pandas()
    assert_list_mode(fastndcg.evaluate(frame, batch_rows=10), log)


def test_pandas_string_and_categorical_ids(log):
    pd = pytest.importorskip("pandas")
    frame = log.to_pandas()
    frame["query_id"] = "q-" + frame["query_id"].astype(str)
    strings = pa.Table.from_pandas(frame, preserve_index=False)
    assert_list_mode(fastndcg.evaluate(frame, batch_rows=10), strings)
    frame["query_id"] = pd.Categorical(frame["query_id"])
    assert_list_mode(fastndcg.evaluate(frame, batch_rows=10), strings)


def test_polars_dataframe(log):
    pl = pytest.importorskip("polars")
    frame = pl.from_arrow(log)
    assert_list_mode(fastndcg.evaluate(frame, batch_rows=10), log)
    assert_list_mode(fastndcg.evaluate(frame.lazy(), batch_rows=10), log)


def test_string_query_ids(log):
    table = log.set_column(0, "query_id",
                           pa.array([f"query-{v:03d}" for v in log["query_id"].to_pylist()]))
    report = fastndcg.evaluate(table, batch_rows=7)
    assert_list_mode(report, table)
    assert pa.types.is_string(report.per_query["query_id"].type) or \
        pa.types.is_large_string(report.per_query["query_id"].type)


def test_custom_column_names(log):
    table = pa.table({"extra": np.zeros(log.num_rows), "S": log["score"], "Q": log["query_id"],
                      "relevance": log["label"], "junk": pa.array(["x"] * log.num_rows)})
    report = fastndcg.evaluate(table, query="Q", score="S", label="relevance", k=[2, 4],
                               batch_rows=9)
    assert_list_mode(report, table, k=[2, 4], query="Q", score="S", label="relevance")


def test_k_none(log):
    report = fastndcg.evaluate(log, k=None, batch_rows=9)
    assert_list_mode(report, log, k=None)
    assert list(report.mean) == ["ndcg"]


def test_single_int_k(log):
    report = fastndcg.evaluate(log, k=3, batch_rows=9)
    assert_list_mode(report, log, k=[3])


@pytest.mark.parametrize("gain,log_base", [("linear", 2.0), ([0.0, 1.0, 3.0, 10.0, 20.0], 10.0)])
def test_gain_and_log_base(log, gain, log_base):
    report = fastndcg.evaluate(log, gain=gain, log_base=log_base, batch_rows=9)
    assert_list_mode(report, log, gain=gain, log_base=log_base)


def test_negative_labels_policies():
    table = pa.table({"query_id": [1, 1, 1, 2, 2],
                      "score": [0.1, 0.9, 0.5, 0.3, 0.2],
                      "label": np.array([2, -1, 1, -3, 1], np.int64)})
    with pytest.raises(ValueError, match=r"negative.*query 1"):
        fastndcg.evaluate(table)
    for policy in ("zero", "keep"):
        report = fastndcg.evaluate(table, negative_labels=policy, batch_rows=2)
        assert_list_mode(report, table, negative_labels=policy)


def test_empty_log_is_an_error(tmp_path):
    """Nothing to evaluate is never a silent NaN: an empty table, a Parquet file with no
    rows or no row groups, a reader that was already read."""
    table = pa.table({"query_id": pa.array([], pa.int64()), "score": pa.array([], pa.float64()),
                      "label": pa.array([], pa.int64())})
    pq.write_table(table, tmp_path / "empty.parquet")
    with pq.ParquetWriter(tmp_path / "no_groups.parquet", table.schema):
        pass
    reader = pa.RecordBatchReader.from_batches(table.schema, synthetic_log(3).select(
        ["query_id", "score", "label"]).cast(table.schema).to_batches())
    fastndcg.evaluate(reader)
    for source in (table, str(tmp_path / "empty.parquet"), str(tmp_path / "no_groups.parquet"),
                   reader):
        with pytest.raises(ValueError, match="holds no rows"):
            fastndcg.evaluate(source)


# --------------------------------------------------------------------------- zero IDCG, mean

ZERO_TABLE = pa.table({
    "query_id": [10, 10, 11, 11, 11, 12, 13, 13],
    "score": [0.3, 0.8, 0.5, 0.5, 0.1, 0.9, 0.2, 0.4],
    "label": np.array([1, 0, 0, 0, 0, 0, 2, 1], np.int64),
})  # queries 11 and 12 have no relevant item


def test_zero_idcg_nan():
    labels = defaultdict(list)
    for q, r in zip(ZERO_TABLE["query_id"].to_pylist(), ZERO_TABLE["label"].to_pylist()):
        labels[q].append(r)
    zero_queries = [q for q, r in labels.items() if not any(r)]
    report = fastndcg.evaluate(ZERO_TABLE, zero_idcg="nan", batch_rows=3)
    assert_list_mode(report, ZERO_TABLE, zero_idcg="nan")
    assert report.n_zero_idcg == len(zero_queries) == 2
    per = report.per_query.to_pydict()
    for name in NAMES:
        nan_ids = [q for q, v in zip(per["query_id"], per[name]) if math.isnan(v)]
        assert nan_ids == zero_queries
        finite = [v for v in per[name] if not math.isnan(v)]
        assert report.mean[name] == pytest.approx(sum(finite) / len(finite), rel=1e-12)
    # with "zero" the same queries count 0 and stay in the mean
    zero = fastndcg.evaluate(ZERO_TABLE, zero_idcg="zero")
    assert zero.n_zero_idcg == 2
    for name in NAMES:
        assert zero.mean[name] == pytest.approx(np.mean(zero.per_query[name].to_numpy()),
                                                rel=1e-12)


def test_zero_idcg_error_names_the_query():
    with pytest.raises(ValueError, match=r"IDCG@1 is 0 for query 11\b.*zero_idcg="):
        fastndcg.evaluate(ZERO_TABLE, zero_idcg="error", batch_rows=3)


def test_error_query_index_is_position_in_log():
    """Messages name the query by id and "query index"; the index must be its position
    among the log's queries (as fastndcg.ndcg(query_ids=...) reports it), not its
    position inside some internal chunk."""
    ids = ZERO_TABLE["query_id"].to_pylist()
    position = first_appearance(ids).index(11)
    with pytest.raises(ValueError) as ndcg_err:
        fastndcg.ndcg(ZERO_TABLE["score"].to_numpy(), ZERO_TABLE["label"].to_numpy(),
                      query_ids=ids, k=list(K), zero_idcg="error")
    assert f"query 11 (query index {position})" in str(ndcg_err.value)
    with pytest.raises(ValueError) as err:
        fastndcg.evaluate(ZERO_TABLE, zero_idcg="error", batch_rows=3)
    found = re.search(r"query 11 \(query index (\d+)\)", str(err.value))
    assert found is None or int(found.group(1)) == position, str(err.value)


@pytest.mark.parametrize("batch_rows", [3, 1000])
def test_mean_is_mean_of_per_query(log, batch_rows):
    report = fastndcg.evaluate(log, batch_rows=batch_rows)
    _, _, values = expected_list_mode(log)
    for i, name in enumerate(NAMES):
        assert report.mean[name] == pytest.approx(float(np.mean(values[:, i])), rel=1e-12)
        assert report.mean[name] == pytest.approx(
            float(np.mean(report.per_query[name].to_numpy())), rel=1e-12)


def test_nan_scores_last():
    table = log64(20, seed=10)
    score = table["score"].to_numpy().copy()
    score[[0, 5, 6, 40]] = np.nan
    table = table.set_column(2, "score", pa.array(score))
    with pytest.raises(ValueError, match=r"NaN.*nan_scores='last'"):
        fastndcg.evaluate(table)
    report = fastndcg.evaluate(table, nan_scores="last", batch_rows=5)
    assert_list_mode(report, table, nan_scores="last")


# --------------------------------------------------------------------------- Report

def test_report_write_parquet_round_trip(tmp_path, log):
    report = fastndcg.evaluate(log, batch_rows=9)
    for name in ("per_query.parquet", "per_query.PQ"):
        report.write(tmp_path / name)
        back = pq.read_table(tmp_path / name)
        assert back.column_names == report.per_query.column_names
        assert back.equals(report.per_query.combine_chunks())


def test_report_write_csv_round_trip(tmp_path, log):
    table = log.set_column(0, "query_id",
                           pa.array([f"q{v}" for v in log["query_id"].to_pylist()]))
    report = fastndcg.evaluate(table, batch_rows=9)
    path = tmp_path / "per_query.csv"
    report.write(str(path))
    header = path.read_text().splitlines()[0]
    assert header.replace('"', "").split(",") == report.per_query.column_names
    back = pacsv.read_csv(path)
    assert back.num_rows == report.n_queries
    assert back["query_id"].to_pylist() == report.per_query["query_id"].to_pylist()
    assert back["n_docs"].to_pylist() == report.per_query["n_docs"].to_pylist()
    for name in NAMES:
        np.testing.assert_allclose(back[name].to_numpy(), report.per_query[name].to_numpy(),
                                   rtol=1e-15, atol=0)


@pytest.mark.parametrize("name", ["out.json", "out", "out.parquet.gz", "out.tsv"])
def test_report_write_bad_extension(tmp_path, log, name):
    report = fastndcg.evaluate(log)
    with pytest.raises(ValueError, match=r"must name a \.parquet, \.pq, \.csv file, got "
                                         r"'.*" + re.escape(name) + "'"):
        report.write(tmp_path / name)
    assert not (tmp_path / name).exists()


def test_report_to_pandas(log):
    pytest.importorskip("pandas")
    report = fastndcg.evaluate(log, batch_rows=9)
    frame = report.to_pandas()
    assert list(frame.columns) == report.per_query.column_names
    assert len(frame) == report.n_queries
    order, n_docs, values = expected_list_mode(log)
    assert frame["query_id"].tolist() == order
    assert frame["n_docs"].tolist() == n_docs
    np.testing.assert_array_equal(frame[NAMES].to_numpy(), values)


def test_report_to_dict_and_text(log):
    report = fastndcg.evaluate(log, batch_rows=9)
    d = report.to_dict()
    assert set(d) == {"n_queries", "n_zero_idcg", "n_rows", "seconds", *NAMES}
    assert d["n_queries"] == len(set(log["query_id"].to_pylist()))
    assert d["n_rows"] == log.num_rows
    for name in NAMES:
        assert d[name] == report.mean[name]
    assert isinstance(d["seconds"], float) and d["seconds"] >= 0
    text = report.format_table()
    for name in NAMES:
        assert name in text and f"{report.mean[name]:.4f}" in text
    assert f"{log.num_rows:,}" in text
    assert "queries" in repr(report)


# --------------------------------------------------------------------------- ties="trec" (list mode)

def reference_values(table: pa.Table, k=K, *, ties="average", query="query_id", doc="doc_id",
                     score="score", label="label", **kw) -> tuple[list, np.ndarray]:
    rows = defaultdict(list)
    cols = {c: table[c].to_pylist() for c in (query, doc, score, label) if c in table.column_names}
    for i, q in enumerate(cols[query]):
        rows[q].append(i)
    values = []
    for q, rs in rows.items():
        values.append([reference.ndcg_query([cols[score][i] for i in rs],
                                            [cols[label][i] for i in rs], c, ties=ties,
                                            doc_ids=[cols[doc][i] for i in rs], **kw)
                       for c in k])
    return list(rows), np.asarray(values)


@pytest.mark.parametrize("batch_rows", [2, 1000])
def test_ties_trec_list_mode(batch_rows):
    # doc ids 9 > 100 > 10 as strings: trec_eval breaks score ties by string order
    table = pa.table({"query_id": [1, 1, 1, 1, 2, 2, 2, 3, 3],
                      "doc_id": [10, 9, 100, 5, 3, 30, 4, 7, 8],
                      "score": [0.5, 0.5, 0.5, 0.1, 1.0, 1.0, 1.0, 0.2, 0.2],
                      "label": np.array([0, 1, 3, 2, 0, 2, 1, 1, 0], np.int64)})
    report = fastndcg.evaluate(table, ties="trec", k=[1, 2, 3], batch_rows=batch_rows)
    order, want = reference_values(table, [1, 2, 3], ties="trec")
    assert report.per_query["query_id"].to_pylist() == order
    for i, name in enumerate(["ndcg@1", "ndcg@2", "ndcg@3"]):
        np.testing.assert_allclose(report.per_query[name].to_numpy(), want[:, i], rtol=1e-12)
    # "trec" really differs from "average" here (the test can tell them apart)
    average = fastndcg.evaluate(table, k=[1, 2, 3])
    assert not np.allclose(average.per_query["ndcg@1"].to_numpy(), want[:, 0])


def test_ties_trec_list_mode_random(log):
    table = shuffled(log64(30, seed=8), seed=9)
    report = fastndcg.evaluate(table, ties="trec", batch_rows=7)
    order, want = reference_values(table, ties="trec")
    assert report.per_query["query_id"].to_pylist() == order
    for i, name in enumerate(NAMES):
        np.testing.assert_allclose(report.per_query[name].to_numpy(), want[:, i], rtol=1e-12)


def test_ties_trec_list_mode_string_docs_and_custom_column():
    table = pa.table({"q": ["a", "a", "a", "b", "b"],
                      "url": ["x/1", "x/2", "y", "b", "a"],
                      "score": [1.0, 1.0, 1.0, 2.0, 2.0],
                      "label": np.array([2, 0, 1, 0, 1], np.int64)})
    report = fastndcg.evaluate(table, query="q", doc="url", ties="trec", k=[1, 2])
    order, want = reference_values(table, [1, 2], ties="trec", query="q", doc="url")
    assert report.per_query["q"].to_pylist() == order
    np.testing.assert_allclose(report.per_query["ndcg@1"].to_numpy(), want[:, 0], rtol=1e-12)
    np.testing.assert_allclose(report.per_query["ndcg@2"].to_numpy(), want[:, 1], rtol=1e-12)


def test_ties_trec_list_mode_duplicate_doc():
    table = pa.table({"query_id": [1, 1, 2, 2, 2], "doc_id": ["a", "b", "c", "d", "c"],
                      "score": [0.1, 0.2, 0.3, 0.4, 0.5],
                      "label": np.array([1, 0, 1, 0, 1], np.int64)})
    with pytest.raises(ValueError, match=r"document 'c' more than once for query 2"):
        fastndcg.evaluate(table, ties="trec")


# --------------------------------------------------------------------------- qrels mode

def qrels_case(seed: int, *, int_ids=False):
    """A random run and qrels with tied scores: unjudged docs, judged docs not
    retrieved, run queries without judgments, judged queries missing from the run."""
    rng = np.random.default_rng(seed)
    names = [(i if int_ids else f"q{i}") for i in rng.permutation(10)]
    run_queries = names[:7]
    judged_queries = names[2:10]  # names[0:2]: unjudged; names[7:10]: missing from run
    docs = [f"d{i}" for i in range(14)]
    run_rows = []
    for q in run_queries:
        for d in rng.choice(docs, size=int(rng.integers(1, 9)), replace=False):
            run_rows.append((q, str(d), float(rng.choice([0.0, 0.5, 1.0, 2.0]))))
    qrels = {}
    for j, q in enumerate(judged_queries):
        for d in rng.choice(docs, size=int(rng.integers(1, 9)), replace=False):
            qrels[(q, str(d))] = 0 if j == 0 else int(rng.integers(0, 4))  # first: IDCG 0
    run = pa.table({"query_id": [r[0] for r in run_rows], "doc_id": [r[1] for r in run_rows],
                    "score": [r[2] for r in run_rows]})
    qrels_table = pa.table({"query_id": [q for q, _ in qrels], "doc_id": [d for _, d in qrels],
                            "label": pa.array(list(qrels.values()), pa.int64())})
    return run, qrels_table, qrels


def qrels_oracle(run: pa.Table, qrels: dict, ties: str, complete: bool, k=K):
    """(query ids, n_docs, values, n_unjudged, missing ids) from reference.ndcg_query."""
    judged = defaultdict(list)
    for (q, _), rel in qrels.items():
        judged[q].append(rel)
    rows = defaultdict(list)
    for q, d, s in zip(run["query_id"].to_pylist(), run["doc_id"].to_pylist(),
                       run["score"].to_pylist()):
        rows[q].append((d, s))
    ids, n_docs, values = [], [], []
    for q, items in rows.items():
        if q not in judged:
            continue
        docs = [d for d, _ in items]
        scores = [s for _, s in items]
        labels = [qrels.get((q, d), 0) for d in docs]
        ids.append(q)
        n_docs.append(len(items))
        values.append([reference.ndcg_query(scores, labels, c, ties=ties, doc_ids=docs,
                                            ideal_labels=judged[q]) for c in k])
    missing = [q for q in judged if q not in rows]
    if complete:
        for q in missing:
            ids.append(q)
            n_docs.append(0)
            values.append([reference.ndcg_query([], [], c, ties=ties, doc_ids=[],
                                                ideal_labels=judged[q]) for c in k])
    n_unjudged = sum(1 for q in rows if q not in judged)
    n_zero = sum(1 for q in ids if not any(judged[q]))  # no judged document has a gain
    return (ids, n_docs, np.asarray(values).reshape(len(ids), len(k)), n_unjudged, missing,
            n_zero)


def assert_qrels_report(report, run, qrels, ties, complete, k=K):
    ids, n_docs, values, n_unjudged, missing, n_zero = qrels_oracle(run, qrels, ties, complete,
                                                                    k)
    per = report.per_query
    names = [f"ndcg@{c}" for c in k]
    assert per.column_names == ["query_id", "n_docs", *names]
    got_ids = per["query_id"].to_pylist()
    n_run = len(ids) - (len(missing) if complete else 0)
    assert got_ids[:n_run] == ids[:n_run]  # run queries in order of first appearance
    assert sorted(map(str, got_ids[n_run:])) == sorted(map(str, ids[n_run:]))
    got = dict(zip(map(str, got_ids), range(len(got_ids))))
    order = [got[str(q)] for q in ids]
    assert per["n_docs"].to_numpy()[order].tolist() == n_docs
    for i, name in enumerate(names):
        np.testing.assert_allclose(per[name].to_numpy()[order], values[:, i],
                                   rtol=1e-12, atol=1e-15, err_msg=name)
        assert report.mean[name] == pytest.approx(float(np.mean(values[:, i])), rel=1e-12)
    assert report.n_queries == len(ids)
    assert report.n_unjudged == n_unjudged
    assert report.n_missing == len(missing)
    if not complete:  # with complete=True: test_qrels_complete_counts_zero_idcg_once
        assert report.n_zero_idcg == n_zero
    assert report.n_rows == run.num_rows
    d = report.to_dict()
    assert {"n_unjudged", "n_missing", "complete"} <= set(d)
    assert d["complete"] is complete


@pytest.mark.parametrize("complete", [False, True])
@pytest.mark.parametrize("ties", ["average", "trec"])
@pytest.mark.parametrize("seed", range(5))
def test_qrels_mode_vs_reference(seed, ties, complete):
    run, qrels_table, qrels = qrels_case(seed)
    report = fastndcg.evaluate(run, qrels=qrels_table, ties=ties, complete=complete,
                               batch_rows=5)
    assert report.n_unjudged == 2 and report.n_missing == 3
    assert_qrels_report(report, run, qrels, ties, complete)


@pytest.mark.parametrize("seed", [0, 1])
def test_qrels_complete_counts_zero_idcg_once(seed):
    """n_zero_idcg counts each scored query whose IDCG is 0 once, with complete=True too
    (run queries and the judged queries missing from the run)."""
    run, qrels_table, qrels = qrels_case(seed)
    ids, _, _, _, missing, n_zero = qrels_oracle(run, qrels, "average", True)
    assert n_zero >= 1 and len(missing) == 3
    left_out = fastndcg.evaluate(run, qrels=qrels_table)
    report = fastndcg.evaluate(run, qrels=qrels_table, complete=True)
    judged = defaultdict(list)
    for (q, _), rel in qrels.items():
        judged[q].append(rel)
    n_zero_missing = sum(1 for q in missing if not any(judged[q]))
    assert report.n_zero_idcg == left_out.n_zero_idcg + n_zero_missing == n_zero


@pytest.mark.parametrize("ties", ["average", "trec"])
def test_qrels_mode_scattered_run(ties):
    run, qrels_table, qrels = qrels_case(11)
    run = shuffled(run, seed=3)
    report = fastndcg.evaluate(run, qrels=qrels_table, ties=ties, complete=True, batch_rows=4)
    assert_qrels_report(report, run, qrels, ties, True)


@pytest.mark.parametrize("complete", [False, True])
def test_qrels_mode_int_ids(complete):
    run, qrels_table, qrels = qrels_case(12, int_ids=True)
    report = fastndcg.evaluate(run, qrels=qrels_table, ties="trec", complete=complete,
                               batch_rows=3)
    assert_qrels_report(report, run, qrels, "trec", complete)


def write_trec_run(path, run: pa.Table):
    with open(path, "w") as f:
        for i, (q, d, s) in enumerate(zip(run["query_id"].to_pylist(), run["doc_id"].to_pylist(),
                                          run["score"].to_pylist())):
            f.write(f"{q} Q0 {d} {i + 1} {s!r} tag\n")


def write_trec_qrels(path, qrels: dict):
    with open(path, "w") as f:
        for (q, d), rel in qrels.items():
            f.write(f"{q}\t0\t{d}\t{rel}\n")


@pytest.mark.parametrize("ties", ["average", "trec"])
def test_qrels_mode_trec_files(tmp_path, ties):
    run, qrels_table, qrels = qrels_case(13)
    write_trec_run(tmp_path / "run.txt", run)
    write_trec_qrels(tmp_path / "qrels.txt", qrels)
    pq.write_table(qrels_table, tmp_path / "qrels.parquet")
    pq.write_table(run, tmp_path / "run.parquet", row_group_size=3)
    for source in (tmp_path / "run.txt", str(tmp_path / "run.parquet")):
        for judgments in (str(tmp_path / "qrels.txt"), tmp_path / "qrels.parquet"):
            report = fastndcg.evaluate(source, qrels=judgments, ties=ties, complete=True,
                                       batch_rows=4)
            assert_qrels_report(report, run, qrels, ties, True)


def test_qrels_mode_int_run_ids_string_qrels(tmp_path):
    run, _, qrels = qrels_case(14, int_ids=True)
    write_trec_qrels(tmp_path / "qrels.txt", qrels)  # read back with string query ids
    report = fastndcg.evaluate(run, qrels=tmp_path / "qrels.txt", complete=True)
    str_run = run.set_column(0, "query_id", pa.array([str(q) for q in run["query_id"].to_pylist()]))
    str_qrels = {(str(q), d): r for (q, d), r in qrels.items()}
    assert report.n_unjudged == 2 and report.n_missing == 3
    ids, _, values, _, _, _ = qrels_oracle(str_run, str_qrels, "average", True)
    got = dict(zip(map(str, report.per_query["query_id"].to_pylist()),
                   report.per_query["ndcg@10"].to_pylist()))
    assert set(got) == set(ids)
    for q, v in zip(ids, values[:, 3]):
        assert got[q] == pytest.approx(v, rel=1e-12, abs=1e-15)


def test_qrels_mode_ignores_run_label_column():
    run, qrels_table, qrels = qrels_case(15)
    with_labels = run.append_column("label", pa.array(np.full(run.num_rows, 3, np.int64)))
    report = fastndcg.evaluate(with_labels, qrels=qrels_table)
    assert_qrels_report(report, run, qrels, "average", False)


def test_qrels_duplicate_in_run_names_doc_and_query():
    run = pa.table({"query_id": ["a", "a", "b", "b", "b"], "doc_id": ["x", "y", "u", "v", "u"],
                    "score": [1.0, 0.5, 0.3, 0.2, 0.1]})
    qrels = pa.table({"query_id": ["a", "b"], "doc_id": ["x", "u"],
                      "label": pa.array([1, 1], pa.int64())})
    with pytest.raises(ValueError, match=r"run lists document 'u' more than once for query 'b'"):
        fastndcg.evaluate(run, qrels=qrels)


def test_qrels_duplicate_in_scattered_run():
    # the two rows of (b, u) are far apart: only the regrouped query shows the duplicate
    run = pa.table({"query_id": ["b", "a", "a", "b"], "doc_id": ["u", "x", "y", "u"],
                    "score": [1.0, 0.5, 0.3, 0.2]})
    qrels = pa.table({"query_id": ["a", "b"], "doc_id": ["x", "u"],
                      "label": pa.array([1, 1], pa.int64())})
    with pytest.raises(ValueError, match=r"document 'u' more than once for query 'b'"):
        fastndcg.evaluate(run, qrels=qrels, batch_rows=1)


def test_qrels_duplicate_judgment_names_doc_and_query():
    run = pa.table({"query_id": ["a", "a"], "doc_id": ["x", "y"], "score": [1.0, 0.5]})
    qrels = pa.table({"query_id": ["a", "b", "a"], "doc_id": ["x", "z", "x"],
                      "label": pa.array([1, 2, 0], pa.int64())})
    with pytest.raises(ValueError, match=r"judge document 'x' of query 'a' more than once"):
        fastndcg.evaluate(run, qrels=qrels)


def test_qrels_without_run_rows_all_missing():
    run = pa.table({"query_id": ["z"], "doc_id": ["x"], "score": [1.0]})
    qrels = pa.table({"query_id": ["a", "a", "b"], "doc_id": ["x", "y", "z"],
                      "label": pa.array([1, 2, 0], pa.int64())})
    # no query in common: a mistake (ids spelled differently), never a silent NaN or 0
    for complete in (False, True):
        with pytest.raises(ValueError, match="none of the 1 queries .* has a judgment.*'z'"):
            fastndcg.evaluate(run, qrels=qrels, complete=complete)
    run = pa.table({"query_id": ["z", "a"], "doc_id": ["x", "q"], "score": [1.0, 0.5]})
    scored = fastndcg.evaluate(run, qrels=qrels, complete=True)
    assert (scored.n_queries, scored.n_unjudged, scored.n_missing) == (2, 1, 1)
    assert scored.per_query["query_id"].to_pylist() == ["a", "b"]
    assert scored.per_query["n_docs"].to_pylist() == [1, 0]
    for name in NAMES:
        assert scored.per_query[name].to_pylist() == [0.0, 0.0]
    assert scored.n_zero_idcg == 1  # "b" has only a 0 judgment


def test_qrels_zero_idcg_nan_counts_scored_queries_only():
    run = pa.table({"query_id": ["a", "a", "u", "z", "z"], "doc_id": ["x", "y", "x", "x", "y"],
                    "score": [1.0, 0.5, 0.3, 0.2, 0.1]})
    qrels = pa.table({"query_id": ["a", "z", "m"], "doc_id": ["y", "x", "x"],
                      "label": pa.array([2, 0, 0], pa.int64())})
    # "u" is unjudged (left out), "z" judged with IDCG 0, "m" missing with IDCG 0
    report = fastndcg.evaluate(run, qrels=qrels, zero_idcg="nan", k=[1, 2])
    per = report.per_query.to_pydict()
    assert per["query_id"] == ["a", "z"]
    assert per["ndcg@2"][0] == pytest.approx(
        reference.ndcg_query([1.0, 0.5], [0, 2], 2, ideal_labels=[2]), rel=1e-12)
    assert math.isnan(per["ndcg@2"][1])
    assert report.n_zero_idcg == 1 and report.n_unjudged == 1 and report.n_missing == 1
    assert report.mean["ndcg@2"] == per["ndcg@2"][0]
    complete = fastndcg.evaluate(run, qrels=qrels, zero_idcg="nan", k=[1, 2], complete=True)
    assert complete.n_zero_idcg == 2 and complete.n_queries == 3


def test_qrels_zero_idcg_error_ignores_unjudged_queries():
    """Unjudged run queries are left out, so zero_idcg='error' must not fire for them
    (their IDCG is 0 only because they have no judgments at all)."""
    run = pa.table({"query_id": ["a", "a", "u", "u"], "doc_id": ["x", "y", "x", "y"],
                    "score": [1.0, 0.5, 0.3, 0.2]})
    qrels = pa.table({"query_id": ["a"], "doc_id": ["y"], "label": pa.array([1], pa.int64())})
    want = fastndcg.evaluate(run, qrels=qrels, k=[1, 2])  # zero_idcg="zero"
    assert want.n_unjudged == 1 and want.n_zero_idcg == 0
    report = fastndcg.evaluate(run, qrels=qrels, k=[1, 2], zero_idcg="error")
    assert report.per_query.equals(want.per_query)
    assert report.n_unjudged == 1


def test_qrels_zero_idcg_error_names_the_judged_query():
    run = pa.table({"query_id": ["a", "a", "z"], "doc_id": ["x", "y", "x"],
                    "score": [1.0, 0.5, 0.3]})
    qrels = pa.table({"query_id": ["a", "z"], "doc_id": ["y", "x"],
                      "label": pa.array([1, 0], pa.int64())})
    with pytest.raises(ValueError, match=r"IDCG@1 is 0 for query 'z'"):
        fastndcg.evaluate(run, qrels=qrels, k=[1, 2], zero_idcg="error")


def test_progress_bar_does_not_change_results(log, capsys):
    quiet = fastndcg.evaluate(log, batch_rows=9)
    loud = fastndcg.evaluate(log, batch_rows=9, progress=True)
    assert loud.per_query.equals(quiet.per_query)
    assert capsys.readouterr().out == ""  # the bar, if drawn, goes to stderr


def test_categorical_query_ids_in_parquet(tmp_path, log):
    """pandas categoricals come back from Parquet dictionary-encoded, one dictionary per
    batch; queries still straddle row groups and batches."""
    pd = pytest.importorskip("pandas")
    frame = log.to_pandas()
    frame["query_id"] = pd.Categorical("q" + frame["query_id"].astype(str))
    path = tmp_path / "log.parquet"
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), path, row_group_size=5)
    assert pa.types.is_dictionary(pq.ParquetFile(path).schema_arrow.field("query_id").type)
    strings = log.set_column(0, "query_id",
                             pa.array(["q" + str(v) for v in log["query_id"].to_pylist()]))
    assert_list_mode(fastndcg.evaluate(path, batch_rows=3), strings)


# --------------------------------------------------------------------------- the options, declared once

def _takers():
    """(public name, function) of every function that takes the evaluation options."""
    out = [("fastndcg.evaluate", fastndcg.evaluate),
           ("fastndcg.evaluate_runs", fastndcg.evaluate_runs)]
    for engine in ("dask", "spark"):
        try:
            module = importlib.import_module(f"fastndcg.{engine}")
        except ImportError:  # an extra not installed
            continue
        out.append((f"fastndcg.{engine}.evaluate", module.evaluate))
    return out


@pytest.mark.parametrize("where, fn", _takers(), ids=lambda x: x if isinstance(x, str) else "")
def test_every_option_is_in_the_signature_and_the_docstring(where, fn):
    """The signature that help(), inspect and the API reference show lists every
    option of the specification with its default and type, and the docstring says
    what each means: both generated from fastndcg.options, not written out."""
    import inspect
    from fastndcg.options import OPTIONS, RUNS_REFUSES
    params = inspect.signature(fn).parameters
    assert not [p for p in params.values() if p.kind is p.VAR_KEYWORD], where
    refused = RUNS_REFUSES if where == "fastndcg.evaluate_runs" else {}
    for name, option in OPTIONS.items():
        if name in refused:  # nothing it refuses is offered
            assert name not in params and not re.search(rf"^    {name} : ", fn.__doc__, re.M)
            with pytest.raises(TypeError, match=rf"^{re.escape(where)}\(\) does not take "
                                                rf"{name}=: "):
                fn("never-read.parquet", **{name: option.default})
            continue
        p = params[name]
        assert p.kind is p.KEYWORD_ONLY, (where, name)
        assert p.default is option.default, (where, name, p.default)
        assert p.annotation == option.type, (where, name)
        assert re.search(rf"^    {name} : \S", fn.__doc__, re.M), (where, name)
    assert "**options" not in fn.__doc__


@pytest.mark.parametrize("where, fn", _takers(), ids=lambda x: x if isinstance(x, str) else "")
def test_an_unknown_keyword_is_refused_alike_everywhere(where, fn):
    """A misspelt option, or a misspelt parameter of the function itself, is a
    TypeError naming it and the closest valid one, before anything is read."""
    esc = re.escape
    with pytest.raises(TypeError, match=f"^{esc(where)}\\(\\) got an unknown keyword argument "
                                        f"'zero_idgc'; did you mean 'zero_idcg'\\?$"):
        fn("never-read.parquet", zero_idgc="one")
    with pytest.raises(TypeError, match=f"^{esc(where)}\\(\\) got an unknown keyword argument "
                                        f"'per_qurey'; did you mean 'per_query'\\?$"):
        fn("never-read.parquet", per_qurey=False)


def test_check_options_refuses_an_unknown_keyword_the_same_way():
    from fastndcg._evaluate import check_options
    with pytest.raises(TypeError, match=r"^fastndcg\._evaluate\.check_options\(\) got an unknown "
                                        r"keyword argument 'Ties'; did you mean 'ties'\?$"):
        check_options(Ties="trec")


def test_every_default_of_the_specification_is_the_one_evaluate_uses(log):
    """Passing each option its declared default gives what leaving it out gives."""
    from fastndcg.options import OPTIONS
    left_out = fastndcg.evaluate(log)
    given = fastndcg.evaluate(log, **{n: o.default for n, o in OPTIONS.items()})
    assert given.per_query.equals(left_out.per_query)
    assert given.mean == left_out.mean and given.mean  # NDCG@1,3,5,10: the default cutoffs
    assert list(given.mean) == ["ndcg@1", "ndcg@3", "ndcg@5", "ndcg@10"]
