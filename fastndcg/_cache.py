"""Where fastndcg's compiled kernels are cached, and under which key.

Numba writes its on-disk cache next to the source file by default, which puts
it inside site-packages, and it checks only the source file of the function it
compiled: a change to a helper in another file would load stale machine code.
fastndcg therefore keys its cache on everything the kernels are made of
(:func:`kernel_key`) and keeps it in a user cache directory (:func:`cache_dir`):

* ``FASTNDCG_CACHE_DIR`` -- the directory, if set;
* else ``$NUMBA_CACHE_DIR/fastndcg`` if ``NUMBA_CACHE_DIR`` is set;
* else the platform's user cache directory: ``$XDG_CACHE_HOME/fastndcg`` or
  ``~/.cache/fastndcg`` (Linux), ``~/Library/Caches/fastndcg`` (macOS),
  ``%LOCALAPPDATA%\\fastndcg\\Cache`` (Windows);
* if that directory cannot be written, ``<tempdir>/fastndcg-cache-<user>``.

Compiled code lives in ``<cache_dir>/<kernel_key>/``. ``FASTNDCG_CACHE=0`` (or
``false``/``no``/``off``) switches the disk cache off: kernels are then compiled in
every new process. Nothing here imports Numba; :mod:`fastndcg._kernels._jit` does
the Numba side (locking, loading, saving).

An installed package may also carry its own cache, compiled when the package was
built (:data:`PACKAGE_CACHE`, laid out the same way): it is read first and never
written. Its record (:func:`write_build_record`) names the key, the versions and
the CPU it was compiled for, so a process it cannot serve can say why
(:func:`package_cache_problem`).
"""

from __future__ import annotations

import getpass
import hashlib
import json
import os
import sys
from functools import lru_cache

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
KERNELS_DIR = os.path.join(_PACKAGE_DIR, "_kernels")

# a file in a keyed cache directory: "every process using this cache compiles for a
# generic CPU of the architecture" (written by ``fastndcg warmup --portable``)
PORTABLE_MARK = "PORTABLE"

PACKAGE_CACHE = os.path.join(_PACKAGE_DIR, "_prebuilt")
"""The cache compiled when the package was built (absent in a source checkout)."""

# in PACKAGE_CACHE: what its kernels were compiled for (JSON: key, versions, cpu)
BUILD_RECORD = "BUILD.json"


def cache_enabled() -> bool:
    """Whether compiled kernels are cached on disk (``FASTNDCG_CACHE``)."""
    return os.environ.get("FASTNDCG_CACHE", "1").strip().lower() not in ("0", "false", "no", "off")


def cache_dir() -> str:
    """The directory fastndcg's compiled kernels are cached in (its keyed
    subdirectories hold the code; see :func:`kernel_cache_dir`)."""
    explicit = os.environ.get("FASTNDCG_CACHE_DIR")
    if explicit:
        return os.path.abspath(os.path.expanduser(explicit))
    numba_dir = os.environ.get("NUMBA_CACHE_DIR")
    if numba_dir:
        return os.path.join(os.path.abspath(os.path.expanduser(numba_dir)), "fastndcg")
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or os.path.expanduser("~")
        return os.path.join(base, "fastndcg", "Cache")
    if sys.platform == "darwin":
        return os.path.expanduser("~/Library/Caches/fastndcg")
    base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return os.path.join(base, "fastndcg")


def fallback_dir() -> str:
    """Where the cache goes when :func:`cache_dir` cannot be written."""
    try:
        user = getpass.getuser()
    except Exception:  # no user name in some containers
        user = str(os.getuid()) if hasattr(os, "getuid") else "user"
    import tempfile

    return os.path.join(tempfile.gettempdir(), f"fastndcg-cache-{user}")


def _versions() -> str:
    from importlib import metadata

    out = [f"python={sys.version_info[0]}.{sys.version_info[1]}{getattr(sys, 'abiflags', '')}"]
    for dist in ("numba", "llvmlite", "numpy"):
        try:
            out.append(f"{dist}={metadata.version(dist)}")
        except metadata.PackageNotFoundError:  # not installed: no kernel will compile
            out.append(f"{dist}=none")
    return ";".join(out)


@lru_cache(maxsize=1)
def kernel_key() -> str:
    """16 hex digits naming the kernels' exact make-up: a hash of every source file
    of ``fastndcg/_kernels`` (names and bytes) and of this file, and the versions of
    Python, Numba, llvmlite and NumPy. A change to any of them means a new cache
    directory, so stale machine code can never be loaded."""
    h = hashlib.sha256(_versions().encode())
    files = sorted(f for f in os.listdir(KERNELS_DIR) if f.endswith(".py"))
    for name in files:
        with open(os.path.join(KERNELS_DIR, name), "rb") as f:
            h.update(f"\0{name}\0".encode())
            h.update(f.read())
    with open(os.path.abspath(__file__), "rb") as f:
        h.update(f.read())
    return h.hexdigest()[:16]


def kernel_cache_dir(root: str | None = None) -> str:
    """The keyed directory this installation's compiled kernels live in."""
    return os.path.join(cache_dir() if root is None else root, kernel_key())


def package_cache_dir() -> str | None:
    """The keyed directory of the kernels compiled with the package, if it has one
    for this installation's key (None otherwise: other versions, or none built)."""
    path = kernel_cache_dir(PACKAGE_CACHE)
    return path if os.path.isdir(path) else None


def portable_requested(root: str | None = None) -> bool:
    """Whether kernels are compiled for a generic CPU: ``FASTNDCG_PORTABLE=1``, or a
    cache warmed with ``fastndcg warmup --portable`` (the user's, or the package's
    own when it was built with ``FASTNDCG_PORTABLE=1``)."""
    env = os.environ.get("FASTNDCG_PORTABLE", "").strip().lower()
    if env in ("1", "true", "yes", "on"):
        return True
    if env in ("0", "false", "no", "off"):
        return False
    return any(os.path.exists(os.path.join(kernel_cache_dir(r), PORTABLE_MARK))
               for r in (root, PACKAGE_CACHE))


class PackageCacheWarning(UserWarning):
    """The kernels compiled with the package cannot serve this process (they are
    compiled now instead); the message says why and how to compile them ahead."""


def _compiled_files(root: str) -> dict:
    """The compiled kernels' files (index and data) in ``root``'s keyed directory:
    name -> size in bytes."""
    folder = kernel_cache_dir(root)
    try:
        names = os.listdir(folder)
    except OSError:
        return {}
    return {n: os.path.getsize(os.path.join(folder, n)) for n in sorted(names)
            if n.endswith((".nbi", ".nbc"))}


def write_build_record(root: str, cpu: tuple) -> None:
    """Record in ``root`` (a cache compiled for the package) the key, the versions and
    the CPU (Numba's target triple, CPU name and features) its kernels are for, and
    the size of each of its files (so that a file deleted or cut short is noticed)."""
    with open(os.path.join(root, BUILD_RECORD), "w") as f:
        json.dump({"key": kernel_key(), "versions": _versions(), "cpu": list(cpu),
                   "files": _compiled_files(root)}, f, indent=1)


def package_damage(root: str = PACKAGE_CACHE, files: dict | None = None) -> str | None:
    """How the kernels compiled with the package differ from their build record (a
    file missing, or of another size), in words; None when they do not (or when
    the record lists no files)."""
    if files is None:
        try:
            with open(os.path.join(root, BUILD_RECORD)) as f:
                files = json.load(f).get("files") or {}
        except (OSError, ValueError, AttributeError):
            return None
    here = _compiled_files(root)
    missing = [n for n in files if n not in here]
    changed = [n for n in files if n in here and here[n] != files[n]]
    if not (missing or changed):
        return None
    parts = ([f"{len(missing)} of its {len(files)} files are missing (such as {missing[0]})"]
             if missing else []) + ([f"{len(changed)} differ in size from the build (such as "
                                     f"{changed[0]})"] if changed else [])
    return " and ".join(parts)


def damaged_message(why: str) -> str:
    """The warning of a package cache that cannot be read as built (``why``)."""
    return (f"the kernels compiled with fastndcg are damaged ({why}), so they are compiled "
            f"now instead (once: they are cached). Reinstall fastndcg to restore them, or "
            f"compile them all ahead: fastndcg warmup")


def package_cache_problem(cpu: tuple, root: str = PACKAGE_CACHE) -> str | None:
    """Why the kernels compiled with the package cannot serve a process compiling
    for ``cpu`` (as in :func:`write_build_record`), with the fix; None when they can,
    or when the package has none.

    >>> package_cache_problem(("x86_64-unknown-linux-gnu", "generic", ""), root="/nowhere")
    """
    try:
        with open(os.path.join(root, BUILD_RECORD)) as f:
            built = json.load(f)
    except (OSError, ValueError):
        return None
    if not isinstance(built, dict):
        return damaged_message(f"its record {BUILD_RECORD} is not one")
    same_key = built.get("key") == kernel_key()
    if same_key and (list(built.get("cpu", ())) == list(cpu) or cpu[1] == "generic"):
        # (generic code, while the package's is native: asked for)
        damage = package_damage(root, built.get("files") or {})
        return None if damage is None else damaged_message(damage)
    if not same_key:
        theirs = dict(v.split("=", 1) for v in str(built.get("versions", "")).split(";") if "=" in v)
        ours = dict(v.split("=", 1) for v in _versions().split(";"))
        differ = [f"{name} {theirs.get(name, '?')} (here {ours[name]})" for name in ours
                  if theirs.get(name) != ours[name]]
        why = ("for " + ", ".join(differ)) if differ else "from other kernel sources"
    elif built["cpu"][1:2] == list(cpu[1:2]):
        why = f"for a CPU '{cpu[1]}' with other features than this machine's"
    else:
        why = f"for the CPU '{built['cpu'][1]}', and this process compiles for '{cpu[1]}'"
    return (f"the kernels compiled with fastndcg were built {why}, so they are compiled "
            f"now instead (once: they are cached). To compile them all ahead, run: "
            f"fastndcg warmup")


CACHE = cache_enabled()
