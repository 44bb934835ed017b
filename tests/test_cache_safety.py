"""The compile cache cannot go stale, is safe when processes compile into one
directory at once, and can hold portable code.

Every child process here imports a private copy of the package (so editing a
kernel source file touches nothing else) and calls one small kernel, the
validation scan (``scan_values``: about a second to compile), directly: the
cache machinery is the same for every kernel."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import fastndcg

PACKAGE = Path(fastndcg.__file__).resolve().parent

# Calls scan_values on one variant (argv: score dtype, label dtype), prints what it
# returned and what the cache did. With argv[3] a path, waits for it first (a start line).
CHILD = """
import json, os, sys, time
if len(sys.argv) > 3:
    while not os.path.exists(sys.argv[3]):
        time.sleep(0.01)
import numpy as np
from fastndcg import _core as C
from fastndcg._kernels import _jit, scan
s = np.array([0.5, np.nan, 2.0, -1.0, 3.0, np.nan], dtype=sys.argv[1])
l = np.array([1, 0, 2, -1, 1, 2], dtype=sys.argv[2])
first, lo, hi = scan.scan_values(C.frozen(s), C.frozen(l), 2)
d = scan.scan_chunk
big = np.iinfo(np.int64).max
first = np.where(first < 0, big, first).min(axis=0)  # over the chunks
print("REPORT " + json.dumps({
    "first": np.where(first == big, -1, first).tolist(), "lo": float(lo.min()), "hi": float(hi.max()),
    "hits": sum(d.stats.cache_hits.values()), "misses": sum(d.stats.cache_misses.values()),
    "path": _jit.cache_path(), "module": _jit.__file__, "portable": _jit.portable_active(),
    "magic": list(map(str, d.targetctx.codegen().magic_tuple())),
}))
"""


@pytest.fixture()
def package_copy(tmp_path):
    root = tmp_path / "pkg"
    shutil.copytree(PACKAGE, root / "fastndcg",
                    ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc"))
    return root


def start(root: Path, cache: Path, score="float64", label="int32", gate=None, **env):
    full = {k: v for k, v in os.environ.items()
            if not k.startswith(("FASTNDCG_", "NUMBA_CPU"))}
    full.update(PYTHONPATH=str(root), FASTNDCG_CACHE_DIR=str(cache), **env)
    args = [sys.executable, "-c", CHILD, score, label] + ([str(gate)] if gate else [])
    # run from the copy: "python -c" puts the working directory first on sys.path
    return subprocess.Popen(args, env=full, cwd=root, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True), root


def finish(started) -> dict:
    proc, root = started
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, f"child failed:\n{out}\n{err}"
    report = json.loads([l for l in out.splitlines() if l.startswith("REPORT ")][-1][7:])
    assert report["module"].startswith(str(root)), report  # the copy ran
    return report


def run(root, cache, **kw) -> dict:
    return finish(start(root, cache, **kw))


def expected_first(score, label, codes) -> list:
    """scan_values' answer computed with NumPy: the first row of each finding, at
    the positions ``codes`` (the module's constants) name."""
    s = np.array([0.5, np.nan, 2.0, -1.0, 3.0, np.nan], dtype=score)
    l = np.array([1, 0, 2, -1, 1, 2], dtype=label)
    found = {"SCAN_NAN_SCORE": np.flatnonzero(np.isnan(s)),
             "SCAN_NEGATIVE": np.flatnonzero(l < 0),
             "SCAN_BAD_LABEL": np.flatnonzero(~np.isfinite(l.astype(float))),
             "SCAN_FRACTION": np.flatnonzero(l != np.floor(l))}
    out = [-1] * codes["SCAN_N"]
    for name, rows in found.items():
        out[codes[name]] = int(rows[0]) if len(rows) else -1
    return out


def codes_of(root: Path) -> dict:
    text = (root / "fastndcg" / "_kernels" / "codes.py").read_text()
    scope: dict = {}
    exec(text, scope)
    return {k: v for k, v in scope.items() if k.startswith("SCAN_")}


@pytest.mark.heavy
def test_an_edit_in_another_kernel_file_recompiles(package_copy, tmp_path):
    """scan_values lives in scan.py and reads its result positions from codes.py.
    Numba alone checks scan.py only, so swapping two constants in codes.py used to
    load the old machine code (the old positions) in the next process."""
    cache = tmp_path / "cache"
    before = run(package_copy, cache)
    assert before["misses"] == 1
    codes = codes_of(package_copy)
    assert before["first"] == expected_first("float64", "int32", codes)
    assert run(package_copy, cache)["hits"] == 1  # an unchanged package loads its cache

    path = package_copy / "fastndcg" / "_kernels" / "codes.py"
    text = path.read_text()
    nan, neg = codes["SCAN_NAN_SCORE"], codes["SCAN_NEGATIVE"]
    text = text.replace(f"SCAN_NAN_SCORE = {nan}", "SCAN_NAN_SCORE = @@").replace(
        f"SCAN_NEGATIVE = {neg}", f"SCAN_NEGATIVE = {nan}").replace("@@", str(neg))
    path.write_text(text)
    swapped = codes_of(package_copy)
    assert swapped["SCAN_NAN_SCORE"] == neg and swapped["SCAN_NEGATIVE"] == nan

    after = run(package_copy, cache)
    assert after["misses"] == 1 and after["hits"] == 0, after  # compiled again
    assert after["first"] == expected_first("float64", "int32", swapped)
    assert after["first"] != before["first"]
    assert after["path"] != before["path"]  # a new keyed directory
    fresh = run(package_copy, tmp_path / "fresh")
    assert fresh["first"] == after["first"]


@pytest.mark.heavy
def test_processes_compiling_into_one_directory_at_once(package_copy, tmp_path):
    """Six processes start together on an empty cache: four variants, one of them
    three times. Every answer is right; the repeated variant is compiled once (the
    others wait for it and load it); a later process finds every variant."""
    cache, gate = tmp_path / "cache", tmp_path / "go"
    variants = [("float32", "int32"), ("float32", "float64"), ("float64", "int32"),
                ("float64", "float64"), ("float64", "int32"), ("float64", "int32")]
    procs = [start(package_copy, cache, s, l, gate=gate) for s, l in variants]
    time.sleep(3)  # all of them are waiting on the start line
    gate.touch()
    reports = [finish(p) for p in procs]
    codes = codes_of(package_copy)
    for (s, l), rep in zip(variants, reports):
        assert rep["first"] == expected_first(s, l, codes), (s, l, rep)
    same = [rep for (s, l), rep in zip(variants, reports) if (s, l) == ("float64", "int32")]
    assert sum(r["misses"] for r in same) == 1, same
    assert sum(r["hits"] for r in same) == 2, same
    for s, l in sorted(set(variants)):
        later = run(package_copy, cache, score=s, label=l)
        assert later["hits"] == 1 and later["misses"] == 0, (s, l, later)
        assert later["first"] == expected_first(s, l, codes)


@pytest.mark.heavy
def test_portable_cache(package_copy, tmp_path):
    """FASTNDCG_PORTABLE=1 compiles for a generic CPU; a cache marked portable
    (as ``fastndcg warmup --portable`` leaves it) makes later processes load that
    code without being told."""
    cache = tmp_path / "cache"
    first = run(package_copy, cache, FASTNDCG_PORTABLE="1")
    assert first["portable"] is True and first["misses"] == 1
    assert first["magic"][1:] == ["generic", ""]  # a generic CPU: no features of this one
    host = run(package_copy, cache)  # not marked: host code, compiled beside it
    assert host["portable"] is False and host["magic"][1] != "generic"
    assert host["misses"] == 1
    (Path(first["path"]) / "PORTABLE").write_text("")
    marked = run(package_copy, cache)
    assert marked["portable"] is True and marked["hits"] == 1 and marked["misses"] == 0
    assert marked["first"] == host["first"] == first["first"]
