"""Per-query results streamed to disk (``per_query=PATH``) or not kept (``False``):
the same numbers as the in-memory path, bounded-memory detection of scattered
queries, and an output that never clobbers an input and never appears half-written.

Expected values come from ``fastndcg.ndcg`` on the whole table grouped by query id
(``tests/test_evaluate.py``'s ``assert_list_mode``), itself checked against the
reference; the in-memory ``evaluate`` path is the second comparison point.
"""

from __future__ import annotations

import importlib
import os
import sys

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fastndcg
from fastndcg.synth import synthetic_log

from test_evaluate import assert_list_mode, shuffled, write_parts
from strategies import examples

SC = importlib.import_module("fastndcg.scattered")
EV = importlib.import_module("fastndcg._evaluate")


@pytest.fixture(scope="module")
def log() -> pa.Table:
    return synthetic_log(300, seed=7, mean_docs=4)


def adjacent_unsorted(table: pa.Table, seed=0) -> pa.Table:
    """Queries kept whole but in a random order (ids not increasing, none scattered)."""
    ids = table["query_id"].to_numpy()
    uniq = np.unique(ids)
    order = np.random.default_rng(seed).permutation(uniq)
    rank = np.empty(uniq.max() + 1, np.int64)
    rank[order] = np.arange(len(order))
    return table.take(pa.array(np.argsort(rank[ids], kind="stable")))


def as_string_ids(table: pa.Table) -> pa.Table:
    return table.set_column(0, "query_id",
                            pa.array([f"q{v:05d}" for v in table["query_id"].to_pylist()]))


SHAPES = {
    "sorted": lambda t: t,
    "adjacent-unsorted": adjacent_unsorted,
    "scattered": lambda t: shuffled(t, seed=3),
    "scattered-strings": lambda t: as_string_ids(shuffled(t, seed=4)),
}


@pytest.fixture(params=[2 << 20, 50], ids=["ids-in-memory", "ids-spilled"])
def spill_ids(request, monkeypatch):
    """The in-memory id threshold as shipped, and small enough that the id spill to
    hash buckets on disk is exercised (many more queries than the threshold)."""
    monkeypatch.setattr(SC, "SPILL_IDS", request.param)
    return request.param


@pytest.mark.parametrize("shape", list(SHAPES))
@pytest.mark.parametrize("target", ["out.parquet", "out.csv", "outdir", False])
def test_streamed_equals_in_memory(tmp_path, log, shape, target, spill_ids, monkeypatch):
    monkeypatch.setattr(SC, "REGROUP_ROWS", 40)  # scattered rows regrouped through disk too
    table = SHAPES[shape](log)
    memory = fastndcg.evaluate(table, batch_rows=97, ties="stable")
    assert_list_mode(memory, table, ties="stable")
    per_query = False if target is False else str(tmp_path / target)
    report = fastndcg.evaluate(table, batch_rows=97, ties="stable", per_query=per_query)
    assert report.n_queries == memory.n_queries
    assert report.n_rows == memory.n_rows
    assert report.n_zero_idcg == memory.n_zero_idcg
    assert report.n_scattered == memory.n_scattered
    assert report.n_scattered == (0 if shape in ("sorted", "adjacent-unsorted") else report.n_scattered)
    for name, value in memory.mean.items():
        assert report.mean[name] == pytest.approx(value, rel=1e-12)
    if target is False:
        with pytest.raises(ValueError, match="per_query=False"):
            report.per_query
        assert sorted(os.listdir(tmp_path)) == []  # nothing left behind
        return
    got = report.per_query
    if target == "out.csv":
        assert got.column_names == memory.per_query.column_names
        for name in got.column_names:
            assert got[name].to_pylist() == memory.per_query[name].to_pylist()
    else:
        assert got.equals(memory.per_query)
    assert report.per_query_path == str(tmp_path / target)
    # the target holds results only: no staging files, no side files
    if target == "outdir":
        assert os.listdir(tmp_path / target) == ["part-000000.parquet"]
    assert sorted(os.listdir(tmp_path)) == [target]


def test_sorted_log_needs_no_id_spill(monkeypatch, log, tmp_path):
    """The common case (ids increasing) is proved by one comparison per chunk: no
    id is looked for twice, nothing spilled, the log read once. An unsorted log
    that can be read again is checked on the ids noted as it was scored (they fit
    in memory), without a second read."""
    checked, spilled, reads = [], [], []

    class Spy(SC.IdSpill):
        def duplicates(self):
            checked.append(1)
            return super().duplicates()

        def _spill(self):
            spilled.append(1)
            return super()._spill()

    real = fastndcg.io.Source.batches

    def batches(self, *a, **kw):
        reads.append(1)
        return real(self, *a, **kw)

    monkeypatch.setattr(EV, "IdSpill", Spy)
    monkeypatch.setattr(fastndcg.io.Source, "batches", batches)
    fastndcg.evaluate(log, batch_rows=50, per_query=str(tmp_path / "o.parquet"))
    assert (checked, spilled, reads) == ([], [], [1])
    fastndcg.evaluate(adjacent_unsorted(log), batch_rows=50, per_query=False)
    assert (checked, spilled, reads) == ([1], [], [1, 1])


def test_unsorted_ids_past_memory_are_read_again(monkeypatch, log):
    """Past ``SPILL_IDS`` run ids, a source that can be read again gives up its
    memo (no disk) and its query column is read again to find repeated ids."""
    reads = []
    real = fastndcg.io.Source.batches

    def batches(self, *a, **kw):
        reads.append(kw.get("columns"))
        return real(self, *a, **kw)

    monkeypatch.setattr(fastndcg.io.Source, "batches", batches)
    scattered = pa.concat_tables([log, log.slice(0, 7)])  # query 0 again at the end
    for limit, read_ids in ((SC.SPILL_IDS, False), (3, True)):
        monkeypatch.setattr(SC, "SPILL_IDS", limit)
        reads.clear()
        report = fastndcg.evaluate(scattered, batch_rows=50)
        assert report.n_scattered == 1
        assert report.per_query.num_rows == 300
        # scored, (the query ids read again), the scattered query's rows read again
        assert reads == [None, ["query_id"], None] if read_ids else [None, None]


def test_many_scattered_queries_through_disk(monkeypatch, tmp_path):
    """A log with many more queries than the in-memory thresholds, fully shuffled:
    ids spill to hash buckets, scattered rows regroup through disk, and the result
    still equals the whole-table computation."""
    monkeypatch.setattr(SC, "SPILL_IDS", 500)
    monkeypatch.setattr(SC, "REGROUP_ROWS", 2000)
    table = shuffled(synthetic_log(6000, seed=11, mean_docs=3), seed=5)
    report = fastndcg.evaluate(table, batch_rows=4096, per_query=str(tmp_path / "pq"))
    assert_list_mode(report, table)
    assert report.n_scattered > 1000


def test_parquet_files_and_reader_sources(tmp_path, log):
    table = adjacent_unsorted(log, seed=9)
    write_parts(table, tmp_path / ".", [100, 101, 700], row_group_size=33)
    src = tmp_path  # the parts are the only files there
    out = tmp_path.parent / f"{tmp_path.name}-out.parquet"
    assert_list_mode(fastndcg.evaluate(str(src), per_query=str(out), batch_rows=64), table)
    # a one-shot reader cannot be read twice: its ids are noted during the first pass
    reader = pa.RecordBatchReader.from_batches(table.schema, table.to_batches(max_chunksize=70))
    report = fastndcg.evaluate(reader, per_query=False, batch_rows=64)
    assert report.n_queries == len(table["query_id"].unique())
    reader = pa.RecordBatchReader.from_batches(table.schema, shuffled(table).to_batches(70))
    with pytest.raises(ValueError, match="not adjacent"):
        fastndcg.evaluate(reader, per_query=False)


def test_qrels_mode_streamed(tmp_path):
    run = pa.table({"qid": ["b", "b", "a", "a", "c", "b"],
                    "doc_id": ["d1", "d2", "d1", "d3", "d9", "d3"],
                    "score": [0.3, 0.3, 0.9, 0.1, 0.5, 0.2]})
    qrels = pa.table({"qid": ["a", "a", "b", "b", "z"], "doc_id": ["d1", "d3", "d2", "d3", "d1"],
                      "label": [1, 2, 1, 3, 1]})
    kw = dict(qrels=qrels, query="qid", gain="linear", ties="trec", complete=True, k=[1, 3])
    memory = fastndcg.evaluate(run, **kw)
    streamed = fastndcg.evaluate(run, per_query=str(tmp_path / "q.parquet"), **kw)
    assert streamed.per_query.equals(memory.per_query)
    assert (streamed.n_unjudged, streamed.n_missing, streamed.n_scattered) == (1, 1, 1)
    nothing = fastndcg.evaluate(run, per_query=False, **kw)
    assert nothing.mean == pytest.approx(memory.mean, rel=1e-12)
    assert (nothing.n_queries, nothing.n_zero_idcg) == (memory.n_queries, memory.n_zero_idcg)


# --------------------------------------------------------------------------- the output target

def test_output_directory_is_created(tmp_path, log):
    target = tmp_path / "a" / "b" / "results"
    report = fastndcg.evaluate(log, per_query=str(target))
    assert sorted(os.listdir(target)) == ["part-000000.parquet"]
    assert report.per_query.num_rows == report.n_queries
    # running again replaces the earlier parts
    fastndcg.evaluate(log.slice(0, 50), per_query=str(target))
    assert pq.read_table(target / "part-000000.parquet").num_rows < report.n_queries


@pytest.mark.parametrize("case", ["same-file", "dir-holds-input", "inside-input-dir",
                                  "qrels-file"])
def test_output_never_clobbers_an_input(tmp_path, log, case):
    data = tmp_path / "data"
    data.mkdir()
    path = data / "log.parquet"
    pq.write_table(log, path)
    before = path.read_bytes()
    qrels = None
    target = {"same-file": path, "dir-holds-input": data,
              "inside-input-dir": data / "out.parquet"}.get(case)
    source = str(data) if case == "inside-input-dir" else str(path)
    if case == "qrels-file":
        qrels = tmp_path / "qrels.parquet"
        pq.write_table(pa.table({"query_id": [0], "doc_id": [1], "label": [1]}), qrels)
        target = qrels
        source = str(path)
    with pytest.raises(ValueError, match="reads"):
        fastndcg.evaluate(source, per_query=str(target), qrels=None if qrels is None else str(qrels))
    assert path.read_bytes() == before
    assert sorted(os.listdir(data)) == ["log.parquet"]


def test_output_errors_before_reading(tmp_path, log):
    pq.write_table(log, tmp_path / "log.parquet")
    (tmp_path / "notes.txt").write_text("x")
    # an existing directory holding other files
    with pytest.raises(ValueError, match="notes.txt"):
        fastndcg.evaluate(log, per_query=str(tmp_path))
    # a place that cannot be written (under a file)
    with pytest.raises(ValueError, match="writable"):
        fastndcg.evaluate(log, per_query=str(tmp_path / "notes.txt" / "o.parquet"))
    with pytest.raises(ValueError, match=r"\.parquet or \.csv"):
        fastndcg.evaluate(log, per_query=str(tmp_path / "o.json"))
    with pytest.raises(TypeError, match="per_query"):
        fastndcg.evaluate(log, per_query=True)
    with pytest.raises(TypeError, match="per_query"):
        fastndcg.evaluate(log, per_query=3)


def test_failed_evaluation_leaves_no_output(tmp_path, log):
    scores = log["score"].to_numpy().copy()
    scores[-1] = np.nan  # found in the last batch, after results were written
    bad = log.set_column(2, "score", pa.array(scores))
    for target in ("o.parquet", "o.csv", "odir"):
        with pytest.raises(ValueError, match="NaN"):
            fastndcg.evaluate(bad, batch_rows=50, per_query=str(tmp_path / target))
        left = [f for f in os.listdir(tmp_path) if f != "odir"]
        assert left == [], left
        if (tmp_path / "odir").exists():
            assert os.listdir(tmp_path / "odir") == []


@settings(max_examples=examples(0.2), deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(n_queries=st.integers(1, 60), shape=st.sampled_from(list(SHAPES)),
       batch_rows=st.integers(1, 40), spill=st.sampled_from([1, 7, 2 << 20]),
       ties=st.sampled_from(["average", "stable"]))
def test_any_shape_streams_like_memory(tmp_path_factory, n_queries, shape, batch_rows, spill, ties):
    table = SHAPES[shape](synthetic_log(n_queries, seed=n_queries, mean_docs=3))
    old = SC.SPILL_IDS
    SC.SPILL_IDS = spill
    try:
        memory = fastndcg.evaluate(table, batch_rows=batch_rows, ties=ties)
        out = tmp_path_factory.mktemp("s") / "r.parquet"
        streamed = fastndcg.evaluate(table, batch_rows=batch_rows, ties=ties, per_query=str(out))
        nothing = fastndcg.evaluate(table, batch_rows=batch_rows, ties=ties, per_query=False)
    finally:
        SC.SPILL_IDS = old
    assert_list_mode(memory, table, ties=ties)
    assert streamed.per_query.equals(memory.per_query)
    for r in (streamed, nothing):
        assert (r.n_queries, r.n_rows, r.n_zero_idcg) == (memory.n_queries, memory.n_rows,
                                                          memory.n_zero_idcg)
        for name, value in memory.mean.items():
            assert r.mean[name] == pytest.approx(value, rel=1e-12, nan_ok=True)


def test_csv_round_trip_keeps_string_ids(tmp_path):
    table = pa.table({"query_id": ["007", "1e3", "007"], "score": [1.0, 0.5, 0.2],
                      "label": [1, 0, 1]})
    report = fastndcg.evaluate(table, per_query=str(tmp_path / "o.csv"), k=[1])
    assert report.per_query["query_id"].to_pylist() == ["007", "1e3"]
    raw = pacsv.read_csv(tmp_path / "o.csv", convert_options=pacsv.ConvertOptions(
        column_types={"query_id": pa.string()}))
    assert raw["query_id"].to_pylist() == ["007", "1e3"]


@settings(max_examples=examples(1), deadline=None)
@given(st.one_of(
    # ids that all pack (up to 7 bytes), and ids among which one does not
    st.lists(st.sampled_from(["", "\x00", "a", "b", "ab", "a\x00", "q1", "q10", "é", "é1",
                              "abcdefg", "abcdefh"]), max_size=60),
    st.lists(st.sampled_from(["", "a", "a\x00", "abcdefg", "abcdefgh", "abcdefgi", "a" * 30]),
             max_size=60)),
       st.integers(0, 5), st.sampled_from([pa.string(), pa.large_string()]))
def test_text_ids_runs_and_distinctness_as_python_sees_them(ids, cut, kind):
    """Where runs of equal text ids start and whether ids are all distinct (short
    ids are packed into integers for both), against Python's own comparison of
    the strings: ids around the 7 bytes that pack, a NUL byte, an empty id, UTF-8,
    and arrays sliced (an offset)."""
    from fastndcg._arrow import all_distinct, plain_ids, run_starts
    col = plain_ids(pa.array(ids, kind).slice(min(cut, len(ids))))
    values = ids[min(cut, len(ids)):]
    assert run_starts(col).tolist() == [i for i in range(1, len(values))
                                        if values[i] != values[i - 1]]
    assert all_distinct(col) == (len(set(values)) == len(values))


def test_packed_text_ids_keep_their_length():
    """Ids that differ only by trailing NUL bytes are different ids."""
    from fastndcg._arrow import all_distinct, plain_ids, run_starts
    col = plain_ids(pa.array(["", "\x00", "\x00", "a", "a\x00"]))
    assert run_starts(col).tolist() == [1, 3, 4]
    assert not all_distinct(col) and all_distinct(col.slice(2))


@pytest.mark.parametrize("long_at", [None, 0, 700_000, 1_199_999])
def test_many_text_ids_packed_on_several_threads(long_at):
    """Over a million ids are packed in ranges on several threads: the runs and
    the distinctness are Arrow's own, and one id too long to pack, anywhere
    (first, in a later range, last), sends every range back to the text."""
    from fastndcg._arrow import all_distinct, plain_ids, run_starts
    import pyarrow.compute as pc
    n = 1_200_000
    values = np.repeat(np.arange(n // 3), 3)
    ids = pc.binary_join_element_wise("q", pa.array(values).cast(pa.string()), "").to_pylist()
    if long_at is not None:
        ids[long_at] = "a-very-long-query-id"
    col = plain_ids(pa.array(ids))
    change = pc.not_equal(col.slice(1), col.slice(0, n - 1)).to_numpy(zero_copy_only=False)
    assert run_starts(col).tolist() == (np.flatnonzero(change) + 1).tolist()
    assert not all_distinct(col)
    assert all_distinct(pc.unique(col))
