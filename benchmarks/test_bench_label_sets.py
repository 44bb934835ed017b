"""Several label sets in one call against one call a set (pytest-benchmark).

Groups, each timing the same work two ways: four label sets of one run scored by
``fastndcg.evaluate(run, qrels={"a": .., "b": .., "c": .., "d": ..})`` (the run
read and ranked once), and by four ``fastndcg.evaluate(run, qrels=...)`` calls,
one a set. Target: the one call takes <= 0.5x the time of the four (medians).

* ``label-sets-trec`` -- a TREC run file and four TREC qrels files
  (``write_trec_files``: 100 documents a query, tied scores; the other three sets
  are the first with each grade moved by -1..+1 and a tenth of the judgments
  left out, as another judge would), trec_eval's rules and usual measures.
* ``label-sets-parquet`` -- a Parquet run and four Parquet qrels with int64 ids
  (``_files.cached_run_qrels``, ~100 documents a query), the same measures: the
  run is cheap to read here, so the join and the kernels, done once a set either
  way, weigh more.

Before anything is timed, each set of the one call is checked equal to its own
call, to the last bit. Quick sizes by default; ``FASTNDCG_BENCH_FULL=1`` for the
full ones:
``FASTNDCG_BENCH_FULL=1 pytest benchmarks/test_bench_label_sets.py --benchmark-enable``.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.csv as csv
import pyarrow.parquet as pq
import pytest

import fastndcg
from benchmarks import _data, _files
from benchmarks.test_bench_evaluate import write_trec_files

MEASURES = ["ndcg_cut.5,10", "map", "recip_rank", "P.5,10", "recall.100"]
QUICK = {"trec_queries": 5_000, "parquet_queries": 20_000}
FULL = {"trec_queries": 50_000, "parquet_queries": 500_000}
N_SETS = 4


def sizes() -> dict:
    return dict(QUICK if _data.is_quick() else FULL)


def other_judge(table: pa.Table, label: str, seed: int) -> pa.Table:
    """The same pool judged again: grades moved by -1..+1 (kept in 0..3), a tenth of
    the judgments left out."""
    rng = np.random.default_rng(seed)
    n = table.num_rows
    grades = np.clip(table[label].to_numpy().astype(np.int64) + rng.integers(-1, 2, n), 0, 3)
    return table.set_column(table.schema.get_field_index(label), label,
                            pa.array(grades)).filter(pa.array(rng.random(n) > 0.1))


def _check(run, sets: dict) -> None:
    together = fastndcg.evaluate(run, qrels=sets, preset="trec_eval", measure=MEASURES)
    for name, qrels in sets.items():
        alone = fastndcg.evaluate(run, qrels=qrels, preset="trec_eval", measure=MEASURES)
        assert together[name].mean == alone.mean, name
        assert together[name].n_queries == alone.n_queries
    assert len({tuple(r.mean.values()) for r in together.reports.values()}) == len(sets)


def one_call(run, sets: dict):
    return fastndcg.evaluate(run, qrels=sets, preset="trec_eval", measure=MEASURES)


def separate_calls(run, sets: dict):
    return [fastndcg.evaluate(run, qrels=q, preset="trec_eval", measure=MEASURES)
            for q in sets.values()]


@pytest.fixture(scope="module")
def trec_sets(tmp_path_factory):
    folder = tmp_path_factory.mktemp("bench-label-sets")
    run, qrels, n_rows = write_trec_files(folder, sizes()["trec_queries"])
    opts = csv.ReadOptions(column_names=["qid", "iter", "docno", "rel"])
    parse = csv.ParseOptions(delimiter=" ")
    table = csv.read_csv(qrels, read_options=opts, parse_options=parse,
                         convert_options=csv.ConvertOptions(
                             column_types={"qid": pa.string(), "docno": pa.string()}))
    sets = {"set0": str(qrels)}
    for i in range(1, N_SETS):
        path = folder / f"qrels-{i}.txt"
        csv.write_csv(other_judge(table, "rel", i), path,
                      csv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none"))
        sets[f"set{i}"] = str(path)
    _check(str(run), sets)
    return str(run), sets, n_rows


@pytest.fixture(scope="module")
def parquet_sets():
    folder = _files.cache_dir()
    run, qrels, n_rows, _ = _files.cached_run_qrels(folder, sizes()["parquet_queries"], "int64")
    table = pq.read_table(qrels)
    sets = {"set0": qrels}
    for i in range(1, N_SETS):
        path = f"{qrels}.judge{i}.parquet"
        pq.write_table(other_judge(table, "label", i), path)
        sets[f"set{i}"] = path
    _check(run, sets)
    return run, sets, n_rows


@pytest.mark.parametrize("files", ["trec", "parquet"])
@pytest.mark.parametrize("how", ["one-call", "separate"])
def test_label_sets(benchmark, request, files, how):
    run, sets, n_rows = request.getfixturevalue(f"{files}_sets")
    benchmark.group = f"label-sets-{files}"
    benchmark(one_call if how == "one-call" else separate_calls, run, sets)
    _data.describe(benchmark, f"{N_SETS} label sets, {how}", "fastndcg", case=how)
    _data.record_rows_per_s(benchmark, N_SETS * n_rows)
