"""What scoring a TREC run from the command line imports: never pandas (pyarrow
imports it, ~0.25 s, inside ``Array.to_numpy()``, ``pa.array()`` and ``pa.scalar()``,
which fastndcg's own paths avoid through :mod:`fastndcg._arrow`), nor any other
heavy library it has no use for. And the helpers that avoid them give what
pyarrow's conversions give."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pytest

from fastndcg._arrow import as_numpy, from_numpy, scalar

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# never imported by scoring a run (scipy: but for what Numba loads, see _scipy_of_numba)
UNWANTED = {"pandas", "scipy", "matplotlib", "dask", "distributed", "pyspark", "sklearn",
            "polars", "pyarrow.dataset", "pyarrow.acero"}

RUN = [("301", "d1", 2.5), ("301", "d2", 1.5), ("301", "d3", 1.5), ("302", "d1", 0.3),
       ("302", "d4", 0.9), ("303", "d9", 0.1)]
QRELS = [("301", "d1", 1), ("301", "d3", 2), ("302", "d4", 1), ("302", "d5", 1), ("303", "d8", 0)]

# runpy runs each command as ``python -m fastndcg`` would, all in one process (one
# start, kernels loaded once); the modules it has loaded by the end are printed
DRIVER = """
import json, runpy, sys
codes = []
for argv in json.loads(sys.argv[1]):
    sys.argv = ["fastndcg", *argv]
    try:
        runpy.run_module("fastndcg", run_name="__main__", alter_sys=True)
    except SystemExit as e:
        codes.append(e.code)
print(json.dumps({"codes": codes, "modules": sorted(sys.modules)}))
"""


def _scipy_of_numba() -> set:
    """The scipy modules Numba loads by itself to run any compiled function, when
    scipy is installed (its import checks scipy's version; its CPU target checks
    for BLAS with ``import scipy.linalg.cython_blas``): allowed, as fastndcg cannot
    avoid them; any other scipy module would be fastndcg's doing."""
    code = ("import json, sys, numba\n@numba.njit\ndef f(x):\n    return x + 1\n"
            "f(1)\nprint(json.dumps(sorted(sys.modules)))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    return {m for m in json.loads(done.stdout.strip().splitlines()[-1])
            if m.split(".")[0] == "scipy"}


def _heavy(modules: list, allowed: set) -> list:
    return sorted(m for m in modules
                  if (m in UNWANTED or m.split(".")[0] in UNWANTED) and m not in allowed)


def test_scoring_a_trec_run_imports_no_pandas(tmp_path):
    run_tab = tmp_path / "run.txt"  # one tab between fields: pyarrow's CSV reader
    run_tab.write_text("".join(f"{q}\tQ0\t{d}\t{i}\t{s}\tmine\n"
                               for i, (q, d, s) in enumerate(RUN)))
    run_spaces = tmp_path / "run_spaces.txt"  # runs of spaces: the line-by-line reader
    run_spaces.write_text("".join(f"{q}  Q0 {d}   {i} {s} mine \n" for i, (q, d, s) in enumerate(RUN)))
    scattered = tmp_path / "run_scattered.txt"  # query 301's rows apart: the regroup pass
    order = [RUN[i] for i in (0, 3, 1, 4, 5, 2)]
    scattered.write_text("".join(f"{q} Q0 {d} {i} {s} mine\n" for i, (q, d, s) in enumerate(order)))
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 {d} {r}\n" for q, d, r in QRELS))
    qrels_spaces = tmp_path / "qrels_spaces.txt"
    qrels_spaces.write_text("".join(f"{q}   0  {d}  {r}\n" for q, d, r in QRELS))
    measures = ["--preset", "trec_eval", "-m", "ndcg_cut.10", "-m", "map"]
    commands = [
        ["evaluate", str(run_tab), "--qrels", str(qrels), *measures],
        ["evaluate", str(run_spaces), "--qrels", str(qrels_spaces), *measures],
        ["evaluate", str(scattered), "--qrels", str(qrels), *measures,
         "--per-query", str(tmp_path / "per_query.parquet")],
        ["evaluate", str(run_tab), str(run_spaces), "--runid", "file", "--qrels", str(qrels),
         "-m", "P.5", "-m", "recip_rank", "--format", "json"],
        ["trec_eval", "-q", "-m", "all_trec", str(qrels), str(scattered)],
        ["trec_eval", "-q", "-c", "-J", "-M", "2", "-m", "all_trec", "-m", "utility.1,-1,0,0",
         str(qrels), str(run_tab)],
    ]
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, "-c", DRIVER, json.dumps(commands)],
                          capture_output=True, text=True, cwd=tmp_path, env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["codes"] == [0] * len(commands), (out["codes"], done.stderr)
    assert "fastndcg.cli" in out["modules"] and "numba" in out["modules"]
    heavy = _heavy(out["modules"], _scipy_of_numba())
    assert not heavy, f"scoring a TREC run imported {heavy[:12]}"


def test_help_and_import_load_no_heavy_library():
    code = ("import json, sys, fastndcg, fastndcg.cli\n"
            "try:\n    fastndcg.cli.main(['evaluate', '--help'])\nexcept SystemExit:\n    pass\n"
            "print(json.dumps(sorted(sys.modules)))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    modules = json.loads(done.stdout.strip().splitlines()[-1])
    assert not _heavy(modules, set()), _heavy(modules, set())
    assert "numba" not in modules


# --------------------------------------------------------------------------- the helpers

NUMERIC = [pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint16(), pa.uint32(),
           pa.uint64(), pa.float16(), pa.float32(), pa.float64()]


def _arrays():
    rng = np.random.default_rng(7)
    for t in NUMERIC + [pa.bool_()]:
        for n in (0, 1, 9, 70):
            values = rng.integers(0, 2 if t == pa.bool_() else 100, n)
            values = values.astype(bool) if t == pa.bool_() else values
            for nulls in (False, True):
                mask = rng.random(n) < 0.3 if nulls else None
                arr = pa.array(values, t, mask=mask)
                for start in (0, 1, 3, 8, 9):  # offsets inside and across bitmap bytes
                    if start <= n:
                        yield arr.slice(start)
                        yield arr.slice(start, max(0, n - start - 2))
    yield pa.chunked_array([pa.array([1, 2]), pa.array([3, None])])
    yield pa.chunked_array([pa.array([1.5, 2.0])])
    yield pa.chunked_array([], pa.int64())
    yield pa.array([1, None, 2]).dictionary_encode()
    yield pa.array([1.5, None, 2.5, 1.5]).dictionary_encode().slice(1)
    yield pa.array(["a", None, "b"])
    yield pa.nulls(3)
    yield pa.nulls(3, pa.int64())
    yield pa.nulls(2, pa.bool_())


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype == object:
        return all((x is None and y is None) or x == y for x, y in zip(a.tolist(), b.tolist()))
    return np.array_equal(a, b, equal_nan=a.dtype.kind == "f")


def test_as_numpy_gives_what_to_numpy_gives():
    for arr in _arrays():
        want = (arr.to_numpy() if isinstance(arr, pa.ChunkedArray)
                else arr.to_numpy(zero_copy_only=False))
        got = as_numpy(arr)
        assert _same(got, want), (arr.type, len(arr), want, got)
        if isinstance(arr, pa.Array):  # the strict mode fails where to_numpy() fails
            try:
                arr.to_numpy()
                strict_ok = True
            except pa.ArrowInvalid:
                strict_ok = False
            if strict_ok:
                assert _same(as_numpy(arr, zero_copy_only=True), want)
            else:
                with pytest.raises(pa.ArrowInvalid):
                    as_numpy(arr, zero_copy_only=True)


def test_as_numpy_views_are_read_only_and_copies_writable():
    arr = pa.array(np.arange(5, dtype=np.int64))
    view = as_numpy(arr.slice(1))
    assert view.tolist() == [1, 2, 3, 4] and not view.flags.writeable
    assert as_numpy(pa.array([1, None])).flags.writeable  # a copy (floats, NaN)
    assert as_numpy(pa.array([True, False])).flags.writeable


def test_from_numpy_gives_what_pa_array_gives():
    arrays = [np.arange(5), np.arange(9, dtype=np.int8)[::2], np.array([1.5, np.nan]),
              np.array([True, False, True] * 5), np.zeros(0), np.zeros(0, bool),
              np.array([1, 2], np.uint64), np.array([1, 2], np.float32),
              np.array([1, 2], np.float16), np.array(["a", "b"]), [1, 2]]
    for values in arrays:
        want, got = pa.array(values), from_numpy(values)
        got.validate(full=True)
        assert got.type == want.type and got.null_count == want.null_count == 0
        assert got.to_pylist() == want.to_pylist() or str(got) == str(want)  # NaN
    assert from_numpy(np.arange(3), pa.float64()).equals(pa.array(np.arange(3), pa.float64()))
    with pytest.raises(pa.ArrowInvalid):  # a cast that loses values fails as pa.array's
        from_numpy(np.array([1.5]), pa.int64())


def test_scalar_gives_what_pa_scalar_gives():
    for value, t in [("Q0", pa.string()), ("é", pa.large_string()), (0.0, pa.float64()),
                     (-0.0, pa.float32()), (3, pa.int32()), (-1, pa.int64()), (True, pa.bool_())]:
        want, got = pa.scalar(value, t), scalar(value, t)
        assert got.type == want.type and got.equals(want), (value, t, got)


def test_cached_kernels_load_without_numba_s_registries(tmp_path):
    """A kernel loaded from the cache needs none of Numba's implementation registries
    (its code is linked): loading it must not import them, nor the SciPy that
    Numba's linear algebra imports where it is installed (0.2-0.4 s a process)."""
    run = tmp_path / "run.txt"
    run.write_text("".join(f"{q} Q0 {d} {i} {s} mine\n" for i, (q, d, s) in enumerate(RUN)))
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 {d} {r}\n" for q, d, r in QRELS))
    commands = [["trec_eval", "-q", "-m", "all_trec", str(qrels), str(run)]]
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    for attempt in ("fills the cache where it lacks a variant", "loads every kernel"):
        done = subprocess.run([sys.executable, "-c", DRIVER, json.dumps(commands)],
                              capture_output=True, text=True, cwd=tmp_path, env=env, timeout=600)
        assert done.returncode == 0, (attempt, done.stderr)
    modules = json.loads(done.stdout.strip().splitlines()[-1])["modules"]
    assert "fastndcg._kernels.printing" in modules  # kernels were run
    loaded = [m for m in modules if m in ("numba.np.arraymath", "numba.np.linalg",
                                          "numba.typed.typeddict", "numba.np.npdatetime")
              or m.startswith("scipy.linalg")]  # (Numba's import checks scipy's version)
    assert not loaded, f"loading cached kernels imported {loaded}"


def test_thread_count_without_starting_numbas_threads():
    """The kernels' thread count is Numba's, read without starting Numba's threading
    layer (which only Numba's own parallel loops use), and follows
    numba.set_num_threads once a caller sets it."""
    code = ("import json, numba\nfrom numba.np.ufunc import parallel\n"
            "from fastndcg._kernels.threads import thread_count\n"
            "first = thread_count(); started = parallel._is_initialized\n"
            "numba.set_num_threads(1); one = thread_count()\n"
            "print(json.dumps([first, started, one, numba.config.NUMBA_NUM_THREADS]))")
    for env in ({}, {"NUMBA_NUM_THREADS": "2"}):
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              cwd=ROOT, timeout=120, env=dict(os.environ, **env))
        assert done.returncode == 0, done.stderr
        first, started, one, configured = json.loads(done.stdout.strip().splitlines()[-1])
        assert (first, started, one) == (configured, False, 1)
