"""The kernels compiled with the package (``fastndcg/_prebuilt``, made by the build):
looked up first and only read, the user cache after; code for other versions or
another CPU is never loaded, and the process says so once, naming the fix.

Each test lays a small fake package cache in a private copy of the package: a
child process compiles two tiny kernels of a module beside it into that folder,
and the build record is written as the build writes it. Further children then
use the copy with an empty user cache. (A real wheel, built and installed in a
fresh environment: ``test_wheel_install_compiles_nothing``, heavy.)"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import fastndcg

PACKAGE = Path(fastndcg.__file__).resolve().parent
ROOT = PACKAGE.parent

TINY = '''
from fastndcg._kernels._jit import kernel


@kernel
def twice(x):
    return 2 * x


@kernel
def half(x):
    return x / 2
'''

# argv: the kernels to call ("twice", "half"); "record": write the build record too
CHILD = """
import json, sys, warnings
warnings.simplefilter("always")
with warnings.catch_warnings(record=True) as caught:
    import tiny
    from fastndcg import _cache
    from fastndcg._kernels import _jit
    values = {name: getattr(tiny, name)(3.0) for name in sys.argv[1:] if name != "record"}
if "record" in sys.argv:
    _cache.write_build_record(_cache.cache_dir(), _jit.codegen_cpu())
print("REPORT " + json.dumps({
    "values": values, "module": _jit.__file__, "portable": _jit.portable_active(),
    "hits": {n: sum(getattr(tiny, n).stats.cache_hits.values()) for n in values},
    "misses": {n: sum(getattr(tiny, n).stats.cache_misses.values()) for n in values},
    "warnings": [[w.category.__name__, str(w.message)] for w in caught],
    "key": _cache.kernel_key(), "cpu": list(_jit.codegen_cpu()),
}))
"""


@pytest.fixture()
def copy(tmp_path) -> Path:
    """A private copy of the package, the tiny kernels' module beside it."""
    root = tmp_path / "pkg"
    shutil.copytree(PACKAGE, root / "fastndcg",
                    ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc", "_prebuilt"))
    (root / "tiny.py").write_text(TINY)
    return root


def run(root: Path, cache: Path, *calls: str, **env) -> dict:
    full = {k: v for k, v in os.environ.items() if not k.startswith(("FASTNDCG_", "NUMBA_CPU"))}
    full.update(PYTHONPATH=str(root), FASTNDCG_CACHE_DIR=str(cache), **env)
    # run from the copy: "python -c" puts the working directory first on sys.path
    done = subprocess.run([sys.executable, "-c", CHILD, *calls], env=full, cwd=root,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"child failed:\n{done.stdout}\n{done.stderr}"
    report = json.loads([l for l in done.stdout.splitlines() if l.startswith("REPORT ")][-1][7:])
    assert report["module"].startswith(str(root)), report  # the copy ran
    return report


def build(root: Path, **env) -> Path:
    """The package cache of ``root`` holding ``twice`` only, as a build leaves it."""
    cache = root / "fastndcg" / "_prebuilt"
    built = run(root, cache, "twice", "record", **env)
    assert built["misses"] == {"twice": 1}
    for lock in cache.rglob("*.lock"):
        lock.unlink()
    return cache


def files(folder: Path) -> dict:
    return {str(p.relative_to(folder)): p.stat().st_mtime_ns for p in folder.rglob("*")
            if p.is_file()}


def test_package_cache_first_then_the_user_cache(copy, tmp_path):
    package = build(copy)
    before = files(package)
    user = tmp_path / "user"
    first = run(copy, user, "twice", "half")
    assert first["values"] == {"twice": 6.0, "half": 1.5}
    assert first["hits"] == {"twice": 1, "half": 0}  # twice: the package's
    assert first["misses"] == {"twice": 0, "half": 1}  # half: compiled, into the user cache
    assert first["warnings"] == []
    written = files(user)
    assert any(name.startswith(f"{first['key']}/tiny.half") for name in written), written
    assert not any("tiny.twice" in name for name in written), written
    assert files(package) == before  # read only: no lock, no index, nothing touched
    again = run(copy, user, "twice", "half")
    assert again["hits"] == {"twice": 1, "half": 1} and again["warnings"] == []


def test_other_versions_fall_back_with_one_warning_naming_the_fix(copy, tmp_path):
    package = build(copy)
    record = json.loads((package / "BUILD.json").read_text())
    # as if built with another Numba: another key, other versions on record
    (package / record["key"]).rename(package / "0123456789abcdef")
    versions = ";".join("numba=0.1.0" if v.startswith("numba=") else v
                        for v in record["versions"].split(";"))
    (package / "BUILD.json").write_text(json.dumps(dict(record, key="0123456789abcdef",
                                                        versions=versions)))
    used = run(copy, tmp_path / "user", "twice", "half")
    assert used["values"] == {"twice": 6.0, "half": 1.5}
    assert used["misses"] == {"twice": 1, "half": 1} and used["hits"] == {"twice": 0, "half": 0}
    assert len(used["warnings"]) == 1, used["warnings"]  # once, for both kernels
    category, message = used["warnings"][0]
    assert category == "PackageCacheWarning"
    assert "numba 0.1.0" in message and "run: fastndcg warmup" in message, message
    again = run(copy, tmp_path / "user", "twice", "half")  # the user cache has them now
    assert again["hits"] == {"twice": 1, "half": 1} and again["warnings"] == []


def test_code_for_other_cpu_features_is_never_loaded(copy, tmp_path):
    """The same CPU name with fewer features on record (as a machine of the same
    model family lacking some would compile): the variant's key differs, so the
    package's code is not loaded, and the process says why once."""
    host = run(copy, tmp_path / "probe")["cpu"]
    package = build(copy, NUMBA_CPU_NAME=host[1], NUMBA_CPU_FEATURES="")
    assert json.loads((package / "BUILD.json").read_text())["cpu"] == [host[0], host[1], ""]
    used = run(copy, tmp_path / "user", "twice")
    assert used["cpu"] == host
    assert used["misses"] == {"twice": 1} and used["hits"] == {"twice": 0}
    assert [w[0] for w in used["warnings"]] == ["PackageCacheWarning"]
    assert "other features" in used["warnings"][0][1]


def test_a_portable_package_cache_serves_without_being_asked(copy, tmp_path):
    package = build(copy, FASTNDCG_PORTABLE="1")
    key = json.loads((package / "BUILD.json").read_text())["key"]
    (package / key / "PORTABLE").write_text("")  # as a portable build marks it
    used = run(copy, tmp_path / "user", "twice")
    assert used["portable"] is True and used["cpu"][1:] == ["generic", ""]  # no features
    assert used["hits"] == {"twice": 1} and used["misses"] == {"twice": 0}
    assert used["warnings"] == []


@pytest.mark.parametrize("damage", ["cut short", "garbled index", "deleted", "record garbled"])
def test_a_damaged_package_cache_compiles_with_one_warning(copy, tmp_path, damage):
    """A package cache whose files were cut short, garbled or deleted after the build
    is never a traceback: the kernels compile as without it, and the process says so
    once, naming the fix (a second run, from the user cache, says nothing)."""
    package = build(copy)
    record = json.loads((package / "BUILD.json").read_text())
    keyed = package / record["key"]
    data = next(keyed.glob("tiny.twice*.nbc"))
    index = next(keyed.glob("tiny.twice*.nbi"))
    if damage == "cut short":
        data.write_bytes(data.read_bytes()[: data.stat().st_size // 2])
    elif damage == "garbled index":
        index.write_bytes(b"\x80\x04garbled" + bytes(range(256)) * 4)
    elif damage == "deleted":
        data.unlink()
        index.unlink()
    else:
        (package / "BUILD.json").write_text("[1, 2, 3]")
    used = run(copy, tmp_path / "user", "twice", "half")
    assert used["values"] == {"twice": 6.0, "half": 1.5}
    # (a garbled record alone leaves the kernels readable: said on the first compile)
    assert used["misses"] == {"twice": int(damage != "record garbled"), "half": 1}
    assert [w[0] for w in used["warnings"]] == ["PackageCacheWarning"], used["warnings"]
    message = used["warnings"][0][1]
    assert "are damaged" in message and "Reinstall fastndcg" in message, message
    again = run(copy, tmp_path / "user", "twice", "half")
    assert again["hits"] == {"twice": 1, "half": 1} and again["warnings"] == []


USUAL = ["ndcg_cut.5,10", "map", "recip_rank", "P.5,10", "recall.100,1000"]  # trec_eval's usual set

# in the installed package: a first evaluate of a TREC run with the usual set, every
# compile counted (Numba's compile events)
FIRST_EVALUATE = f"""
import json, sys
import fastndcg
from fastndcg._warmup import CompileClock
with CompileClock() as clock:
    fastndcg.evaluate(sys.argv[1], qrels=sys.argv[2], preset="trec_eval", measure={USUAL!r})
print("REPORT " + json.dumps({{"compiled": sorted(n for n, _ in clock.own), "module": fastndcg.__file__}}))
"""


@pytest.mark.heavy
def test_wheel_install_compiles_nothing(tmp_path):
    """``pip install .`` in a fresh virtual environment (the wheel it builds carries the
    compiled kernels); then, from an empty user cache, a first evaluate with trec_eval's
    usual set, ``fastndcg trec_eval -q -m all_trec`` and ``fastndcg demo`` compile
    nothing and write nothing to the user cache."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    bin_dir = venv / ("Scripts" if os.name == "nt" else "bin")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("FASTNDCG_", "NUMBA_")) and k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    done = subprocess.run([str(bin_dir / "python"), "-m", "pip", "install", "-q", str(ROOT)],
                          env=env, capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stdout + done.stderr
    user = tmp_path / "user"
    env.update(FASTNDCG_CACHE_DIR=str(user))
    real = ROOT / "tests" / "data" / "real"
    run, qrels = real / "runs" / "core18_title_rm3.run.gz", real / "qrels" / "qrels.core18.txt.gz"

    def child(*args):  # from tmp_path: the source tree is not importable there
        out = subprocess.run([str(a) for a in args], env=env, cwd=tmp_path, capture_output=True,
                             text=True, timeout=600)
        assert out.returncode == 0, out.stdout + out.stderr
        assert "warning" not in out.stderr, out.stderr
        return out.stdout

    out = child(bin_dir / "python", "-c", FIRST_EVALUATE, run, qrels)
    report = json.loads([l for l in out.splitlines() if l.startswith("REPORT ")][-1][7:])
    assert report["module"].startswith(str(venv)), report  # the installed package ran
    assert report["compiled"] == []
    assert "ndcg_cut_10" in child(bin_dir / "fastndcg", "trec_eval", "-q", "-m", "all_trec",
                                  qrels, run)
    assert "kernels ready in" in child(bin_dir / "fastndcg", "demo", "--queries", "1000")
    assert not [p for p in user.rglob("*") if p.is_file()]  # nothing compiled, nothing cached
