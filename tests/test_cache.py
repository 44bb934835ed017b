"""The compile cache: kernels are compiled on first call (never at import), cached in
FASTNDCG_CACHE_DIR and nowhere near the package, reused by the next process, and not
written at all with FASTNDCG_CACHE=0.

Three fresh interpreters: a cold one and a cache-less one, run side by side (each
compiles from scratch, 20-40 s), then a warm one reusing the cold one's cache."""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import fastndcg
from fastndcg import reference

SCORES = [0.5, 0.2, 0.9, 0.9, 0.1]
LABELS = [1, 0, 2, 0, 1]
OFFSETS = [0, 2, 5]

# Runs in the child: import, look at the cache directory, score one tiny batch, report.
CHILD = f"""
import glob, json, os, sys
def files(d):
    return sorted(os.path.relpath(p, d) for p in glob.glob(os.path.join(d, "**", "*"),
                                                             recursive=True)
                  if os.path.isfile(p))
dirs = sys.argv[1:]
import fastndcg
import fastndcg.api, fastndcg._evaluate
numba_at_import = "numba" in sys.modules
from fastndcg import _kernels as K
from fastndcg._kernels import rank, ndcg, binary, graded, score, scan, strings, hashing
from numba.core.dispatcher import Dispatcher
kernels = {{n: f for m in (rank, ndcg, binary, graded, score, scan, strings, hashing) for n, f in vars(m).items()
           if isinstance(f, Dispatcher)}}
report = {{
    "numba_at_import": numba_at_import,
    "files_after_import": {{d: files(d) for d in dirs}},
    "compiled_at_import": sorted(n for n, f in kernels.items() if f.signatures),
    "n_kernels": len(kernels),
    "cache_on": fastndcg._cache.CACHE,
}}
import numpy as np
out = fastndcg.ndcg(np.array({SCORES!r}), np.array({LABELS!r}), np.array({OFFSETS!r}),
                    k=[1, 3])
batch = ndcg.dcg_short_chunk
report.update(
    result=[[float(v).hex() for v in row] for row in out],
    files_after_call={{d: files(d) for d in dirs}},
    cache_type=type(batch._cache).__name__,
    cache_path=batch.stats.cache_path,
    cache_hits=sum(batch.stats.cache_hits.values()),
    cache_misses=sum(batch.stats.cache_misses.values()),
    kernel_file=ndcg.__file__,
)
print("REPORT " + json.dumps(report))
"""


def package_cache_files():
    package = os.path.dirname(os.path.abspath(fastndcg.__file__))
    return {p for ext in ("nbi", "nbc")
            for p in glob.glob(os.path.join(package, "**", f"*.{ext}"), recursive=True)}


def start(env_updates, dirs):
    env = {k: v for k, v in os.environ.items()
           if k not in ("FASTNDCG_CACHE", "FASTNDCG_CACHE_DIR", "NUMBA_CACHE_DIR",
                        "NUMBA_DISABLE_JIT")}
    env.update(env_updates)
    return subprocess.Popen([sys.executable, "-c", CHILD, *map(str, dirs)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(proc):
    out, err = proc.communicate(timeout=900)
    assert proc.returncode == 0, f"child failed ({proc.returncode}):\n{out}\n{err}"
    lines = [l for l in out.splitlines() if l.startswith("REPORT ")]
    assert lines, f"no report from the child:\n{out}\n{err}"
    return json.loads(lines[-1][len("REPORT "):])


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cache")
    d = {name: tmp / name for name in ("cold", "numba_cold", "off", "numba_off")}
    package_before = package_cache_files()
    # NUMBA_CACHE_DIR is set too, to show that FASTNDCG_CACHE_DIR wins (and, with the cache
    # off, that nothing falls back to Numba's own location)
    cold = start({"FASTNDCG_CACHE_DIR": str(d["cold"]), "NUMBA_CACHE_DIR": str(d["numba_cold"])},
                 [d["cold"], d["numba_cold"]])
    off = start({"FASTNDCG_CACHE": "0", "FASTNDCG_CACHE_DIR": str(d["off"]),
                 "NUMBA_CACHE_DIR": str(d["numba_off"])}, [d["off"], d["numba_off"]])
    reports = {"cold": finish(cold), "off": finish(off)}
    reports["warm"] = finish(start({"FASTNDCG_CACHE_DIR": str(d["cold"]),
                                    "NUMBA_CACHE_DIR": str(d["numba_cold"])},
                                   [d["cold"], d["numba_cold"]]))
    return {"dirs": {k: str(v) for k, v in d.items()}, "reports": reports,
            "package_before": package_before, "package_after": package_cache_files()}


def test_import_compiles_nothing(runs):
    for name in ("cold", "off"):
        report = runs["reports"][name]
        assert report["n_kernels"] > 5  # the check below looks at real dispatchers
        assert report["compiled_at_import"] == [], name
        assert report["numba_at_import"] is False, name  # Numba loads at first use
        assert all(files == [] for files in report["files_after_import"].values()), report


def test_cold_run_writes_cache_files_to_the_given_dir(runs):
    report, d = runs["reports"]["cold"], runs["dirs"]
    assert report["cache_on"] is True
    written = report["files_after_call"][d["cold"]]
    assert any(f.endswith(".nbi") for f in written), written
    assert any(f.endswith(".nbc") for f in written), written
    assert all(os.path.basename(f).split(".")[0] in ("rank", "ndcg", "binary", "graded", "score", "scan", "strings", "hashing")
               for f in written
               if f.endswith((".nbi", ".nbc"))), written
    assert report["cache_path"].startswith(d["cold"] + os.sep)
    assert report["cache_misses"] >= 1 and report["cache_hits"] == 0
    # FASTNDCG_CACHE_DIR wins over NUMBA_CACHE_DIR
    assert report["files_after_call"][d["numba_cold"]] == []


def test_warm_run_reuses_the_cache(runs):
    report, d = runs["reports"]["warm"], runs["dirs"]
    assert report["cache_hits"] >= 1 and report["cache_misses"] == 0, report
    # nothing new compiled, so no new files (the index may be rewritten, not added to)
    assert (set(report["files_after_call"][d["cold"]])
            == set(runs["reports"]["cold"]["files_after_call"][d["cold"]]))
    assert report["result"] == runs["reports"]["cold"]["result"]


def test_cache_off_writes_nothing(runs):
    report, d = runs["reports"]["off"], runs["dirs"]
    assert report["cache_on"] is False
    assert report["cache_type"] == "NullCache"
    assert report["files_after_call"] == {d["off"]: [], d["numba_off"]: []}
    assert not os.path.exists(d["off"]) or os.listdir(d["off"]) == []


def test_nothing_written_into_the_package(runs):
    new = runs["package_after"] - runs["package_before"]
    assert not new, sorted(new)


def test_results_are_the_same_in_every_process(runs):
    expected = reference.ndcg(SCORES, LABELS, OFFSETS, k=[1, 3])
    for name, report in runs["reports"].items():
        got = np.array([[float.fromhex(v) for v in row] for row in report["result"]])
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12, err_msg=name)
    assert runs["reports"]["off"]["result"] == runs["reports"]["cold"]["result"]
