"""Shared fixtures of the benchmark suite, and what the JSON records about the run.

Fixtures (session-scoped; quick sizes in pytest's temporary folder, full sizes
with ``FASTNDCG_BENCH_FULL=1`` written once into ``_files.cache_dir()`` and
reused by later runs):

* ``parquet_log(mean_docs)`` -- (path, rows, queries) of a synthetic Parquet log
  of ~``mean_docs`` rows a query (10 or 50; sizes in ``_data.shapes()``);
* ``run_qrels(kind)`` -- (run path, qrels path, run rows, judgments) of a Parquet
  run of ~100 documents a query and its qrels, ``kind`` "int64" or "string" ids;
* ``trec_eval_binary`` -- the real trec_eval, built with ``make`` from a temporary
  copy of ``tests/trec_eval`` (``tests/trec_eval_build.py``, as the tests build it);
  skips, saying why, only when there is no C compiler (a failed build is an error).

Benchmarks marked ``heavy`` are skipped at quick sizes and run at full sizes
unless deselected (``-m "not heavy"``).

``pytest --benchmark-json=FILE`` then also records, under ``machine_info``, the
machine (``_report.machine_facts``), the library versions, the load average at
the start and the end, and whether the sizes were full: ``scripts/bench_report.py``
renders the report from that file alone. Per-round times are kept for benchmarks of
up to 50 rounds (:func:`trim_round_times`); the statistics are always complete.
"""

from __future__ import annotations

import datetime as _dt
import functools
import os
import platform
from pathlib import Path

import pytest

# fastndcg chooses the CPU its kernels are compiled for (FASTNDCG_PORTABLE=1: a generic
# one) when this module is imported, which must come before the benchmarks' own Numba
# code starts the code generator (it then compiles for this CPU only)
from fastndcg._kernels import _jit

from benchmarks import _data, _files, _procs


def _load() -> list[float] | None:
    return list(os.getloadavg()) if hasattr(os, "getloadavg") else None


_STARTED = {"load": _load(), "time": _dt.datetime.now(_dt.timezone.utc).isoformat()}


@pytest.fixture(scope="session")
def _input_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("bench-inputs") if _data.is_quick() else _files.cache_dir()


@pytest.fixture(scope="session")
def parquet_log(_input_dir):
    """``parquet_log(mean_docs)`` -> (path, rows, queries) of the synthetic log."""
    shapes = _data.shapes()

    @functools.cache
    def get(mean_docs: int):
        n_q = shapes["log_queries"][mean_docs]
        path, rows = _files.cached_log(_input_dir, n_q, shapes["log_row_group_rows"],
                                       mean_docs=mean_docs)
        return path, rows, n_q

    return get


@pytest.fixture(scope="session")
def run_qrels(_input_dir):
    """``run_qrels(kind, **options)`` -> (run, qrels, run rows, judgments), Parquet files
    (options: :func:`benchmarks._files.write_run_qrels`'s)."""
    queries = _data.shapes()["qrels_queries"]
    return functools.cache(lambda kind, **options: _files.cached_run_qrels(
        _input_dir, queries, kind, **options))


@pytest.fixture(scope="session")
def trec_eval_binary(tmp_path_factory) -> str:
    """Path of trec_eval built from ``tests/trec_eval`` in a temporary folder."""
    build = _procs.trec_eval_build()
    try:
        return str(build.build_trec_eval(tmp_path_factory.mktemp("trec_eval")))
    except build.NoCompiler as err:
        pytest.skip(str(err))


@pytest.fixture(autouse=True)
def _record_load(request):
    """Each benchmark's ``extra_info["load_1m"]``: the 1-minute load average as it starts
    (the machine may be shared; the report shows the range)."""
    if "benchmark" in request.fixturenames and hasattr(os, "getloadavg"):
        request.getfixturevalue("benchmark").extra_info["load_1m"] = os.getloadavg()[0]
    yield


# --------------------------------------------------------------------------- heavy

def pytest_collection_modifyitems(config, items):
    """At quick sizes, benchmarks marked heavy are skipped (they take long whatever the
    size, such as compiling every kernel from an empty cache); with
    ``FASTNDCG_BENCH_FULL=1`` they run unless deselected with ``-m "not heavy"``."""
    if not _data.is_quick():
        return
    skip = pytest.mark.skip(reason="heavy: runs with FASTNDCG_BENCH_FULL=1 "
                                   "(deselect there with -m 'not heavy')")
    here = Path(__file__).resolve().parent
    for item in items:
        if item.get_closest_marker("heavy") is not None and here in Path(item.path).parents:
            item.add_marker(skip)


# --------------------------------------------------------------------------- JSON

def pytest_benchmark_update_machine_info(config, machine_info):
    from benchmarks import _peers
    from benchmarks._report import machine_facts

    machine_info["fastndcg_bench"] = {
        "machine": machine_facts(),
        "versions": _peers.versions(),
        "python": platform.python_version(),
        "full_sizes": not _data.is_quick(),
        "shapes": _data.shapes(),
        "started": _STARTED["time"],
        "load_start": _STARTED["load"],
        "load_end": _load(),
        "finished": _dt.datetime.now(_dt.timezone.utc).isoformat(),
        "fastndcg_path": _peers.fastndcg_path(),
        "portable": _jit.portable_active(),  # kernels compiled for a generic CPU
    }


MAX_ROUND_TIMES = 50  # per-round times kept in the JSON (its stats are always complete)


def trim_round_times(output_json: dict, keep: int = MAX_ROUND_TIMES) -> None:
    """Drop the per-round times of benchmarks with more than ``keep`` rounds (fast calls
    run thousands), keeping their statistics: the JSON stays small enough to commit."""
    for bench in output_json.get("benchmarks", []):
        stats = bench.get("stats") or {}
        data = stats.get("data")
        if data is not None and len(data) > keep:
            del stats["data"]
            bench.setdefault("extra_info", {})["round_times_dropped"] = len(data)


def pytest_benchmark_update_json(config, benchmarks, output_json):
    trim_round_times(output_json)

