"""The decorator every kernel is compiled with, and the disk cache behind it.

``@kernel`` is ``numba.njit(cache=..., nogil=True)`` with fastndcg's own cache:

* **Keyed.** Code lives in ``<cache_dir>/<kernel_key>/`` (:mod:`fastndcg._cache`):
  the key hashes every kernel source file and the Numba, llvmlite, NumPy and
  Python versions, so an edited helper in another file, or an upgrade, can never
  load stale machine code. The same key is the index's freshness stamp, so a
  reinstall of identical sources keeps the cache.
* **Safe under concurrency.** Many processes (Dask or Spark workers on a shared
  file system, ``pytest -n``) may compile into one directory at once. Each
  variant (function, argument types, CPU) has a lock file: the first process to
  miss it holds the lock while compiling, the others wait and then load its code
  instead of compiling it again. The index of a function is rewritten under its
  own lock after re-reading it, data first and index last, each through a temporary
  file and an atomic rename, so no entry is lost and no index names a file that is
  not complete.
* **Compiled with the package.** A package built from its sources carries a cache of
  its own (``fastndcg/_prebuilt``, compiled by the build); each variant is looked up
  there first, read only (no lock, nothing written), then in the user cache. When
  that cache cannot serve this process (other versions, another CPU) the process
  compiles as it would without it, and on its first compile says so once, with a
  warning naming the fix.
* **Portable on request.** With ``FASTNDCG_PORTABLE=1``, or in a cache warmed
  with ``fastndcg warmup --portable``, code is generated for a generic CPU of the
  architecture (``NUMBA_CPU_NAME=generic``), so one cache serves every machine.
  This is decided before Numba's code generator starts; if other Numba code in the
  process started it already for the host CPU, kernels are compiled for the host
  and cached under that CPU's name (correct, only not portable).

Idle Numba worker threads wait passively (``OMP_WAIT_POLICY=PASSIVE`` unless set):
spinning threads would take CPU from the Parquet reader and from other worker
processes between kernel calls.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import warnings

from .. import _cache

# before Numba loads its OpenMP threading layer (on the first parallel kernel call)
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def _codegen_started() -> bool:
    from numba.core.registry import cpu_target

    return "_toplevel_target_context" in vars(cpu_target)


def _choose_cpu() -> None:
    if (_cache.CACHE and _cache.portable_requested() and "NUMBA_CPU_NAME" not in os.environ
            and not _codegen_started()):
        from numba.core import config

        os.environ["NUMBA_CPU_NAME"] = "generic"
        # read now: the code generator takes its CPU features (none, for "generic") from
        # the configuration when it starts, which is before the first compile re-reads it
        config.reload_config()


_choose_cpu()


def portable_active() -> bool:
    """Whether this process compiles kernels for a generic CPU (asking again: a
    cache may have been marked portable since this module was imported)."""
    _choose_cpu()
    return os.environ.get("NUMBA_CPU_NAME", "").strip().lower() == "generic"


def can_be_portable() -> bool:
    """Whether this process can still compile for a generic CPU."""
    name = os.environ.get("NUMBA_CPU_NAME", "").strip().lower()
    return name == "generic" or (not name and not _codegen_started())


def cache_path() -> str:
    """The keyed directory kernels are cached in by this process."""
    return _cache.kernel_cache_dir(_Locator.root)


import numba  # noqa: E402  (after the environment is set)
from numba.core import caching  # noqa: E402


@contextlib.contextmanager
def _locked(path: str):
    """An exclusive lock on ``path`` across processes (blocks until granted)."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        _lock(fd)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def _lock(fd: int) -> None:
    try:
        import fcntl
    except ImportError:  # Windows
        import msvcrt
        import time
        while True:
            try:
                msvcrt.locking(fd, msvcrt.LK_LOCK, 1)
                return
            except OSError:  # LK_LOCK gives up after ~10 s: keep waiting
                time.sleep(0.1)
    fcntl.flock(fd, fcntl.LOCK_EX)


class _Locator(caching._CacheLocator):
    """fastndcg's functions only, in the keyed cache directory."""

    root = None  # chosen on first use: cache_dir(), else the fallback directory

    def __init__(self, py_func, py_file):
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno

    def get_cache_path(self):
        return _cache.kernel_cache_dir(_Locator.root)

    def get_source_stamp(self):
        return _cache.kernel_key()

    def get_disambiguator(self):
        return str(self._lineno)

    @classmethod
    def from_function(cls, py_func, py_file):
        self = cls(py_func, py_file)
        if cls.root is None:
            cls.root = _cache.cache_dir()
            try:
                self.ensure_cache_path()
            except OSError:  # not writable: never fall back to site-packages
                cls.root = _cache.fallback_dir()
                self.ensure_cache_path()
        return self


_package_checked = False


def _check_package_cache(codegen, problem: str | None = None) -> None:
    """Once a process, on its first compile: warn if the package's own cache cannot
    serve it (``problem``: why, when known already; once the user cache holds what a
    job needs, nothing is said)."""
    global _package_checked
    if not _package_checked:
        _package_checked = True
        problem = problem or _cache.package_cache_problem(codegen.magic_tuple())
        if problem:
            warnings.warn(problem, _cache.PackageCacheWarning, stacklevel=2)


def _package_load(file, key):
    """The package cache's data of variant ``key`` (None: not there), or the reason
    it cannot be read (a str): a file cut short, or garbled."""
    try:
        return file.load(key)
    except Exception as err:  # (pickle, EOF, decoding, OS errors of a damaged file)
        name = os.path.basename(getattr(file, "_index_path", "") or "")
        return f"{name or 'a file'} cannot be read: {type(err).__name__}"


def codegen_cpu() -> tuple:
    """What Numba compiles for in this process: target triple, CPU name, features
    (the CPU part of every cached variant's key)."""
    from numba.core.registry import cpu_target

    return cpu_target.target_context.codegen().magic_tuple()


class _Impl(caching.CompileResultCacheImpl):
    _locator_classes = [_Locator]


class _IndexFile(caching.IndexDataCacheFile):
    def save(self, key, data):
        with _locked(self._index_path + ".lock"):
            overloads = self._load_index()  # re-read: another process may have added to it
            name = overloads.get(key)
            if name is None:
                used = set(overloads.values())
                name = next(n for n in (self._data_name(i) for i in range(1, len(used) + 2))
                            if n not in used)
            self._save_data(name, data)  # data first: the index never names a partial file
            overloads[key] = name
            self._save_index(overloads)


class _Cache(caching.FunctionCache):
    """Numba's function cache, with a lock per variant around compiling it."""

    _impl_class = _Impl

    def __init__(self, py_func):
        super().__init__(py_func)
        self._cache_file = _IndexFile(self._cache_path, self._impl.filename_base,
                                      self._impl.locator.get_source_stamp())
        self._held = {}  # variant key -> open lock file descriptor, while compiling
        package = _cache.package_cache_dir()
        self._package_file = None if package is None else caching.IndexDataCacheFile(
            package, self._impl.filename_base, self._impl.locator.get_source_stamp())

    def _variant_lock(self, key) -> str:
        digest = hashlib.sha256(repr(key).encode()).hexdigest()[:16]
        return os.path.join(self._cache_path, f"{self._impl.filename_base}.{digest}.lock")

    def load_overload(self, sig, target_context):
        """Numba's, without its refresh of the target context before looking: that
        refresh imports and installs every implementation registry Numba has (NumPy's
        linear algebra, which imports SciPy where it is installed, datetime, random,
        typed containers, ...), 0.2-0.4 s a process, and a cached variant needs none of
        it: its code is linked already. Only the runtime it calls into is set up. A
        variant not cached is compiled by Numba's pipeline, which refreshes the context
        itself first."""
        from numba.core.runtime import rtsys

        rtsys.initialize(target_context)
        with self._guard_against_spurious_io_errors():
            return self._load_overload(sig, target_context)
        return None  # the guard swallowed an error (Windows): compile

    def _load_overload(self, sig, target_context):
        if not self._enabled:
            return None
        codegen = target_context.codegen()
        key = self._index_key(sig, codegen)
        damaged = None
        if self._package_file is not None:  # the package's own cache first, read only
            data = _package_load(self._package_file, key)
            if isinstance(data, str):
                damaged = _cache.damaged_message(data)
            elif data is not None:
                try:
                    return self._impl.rebuild(target_context, data)
                except Exception as err:  # code that cannot be linked: compile it
                    damaged = _cache.damaged_message(f"a kernel's code cannot be loaded: "
                                                     f"{type(err).__name__}")
        data = self._cache_file.load(key)
        if data is None and key not in self._held:
            # wait while another process compiles this variant, then look again
            fd = os.open(self._variant_lock(key), os.O_RDWR | os.O_CREAT, 0o666)
            _lock(fd)
            data = self._cache_file.load(key)
            if data is None:
                self._held[key] = fd  # we compile it; save_overload lets go
            else:
                os.close(fd)
        if data is None:  # to be compiled: say why once, if the package's cache could not serve
            _check_package_cache(codegen, damaged)
            return None
        return self._impl.rebuild(target_context, data)

    def save_overload(self, sig, data):
        key = self._index_key(sig, data.codegen)
        try:
            super().save_overload(sig, data)
        finally:
            fd = self._held.pop(key, None)
            if fd is not None:
                os.close(fd)


def kernel(*args, inner: bool = False, **options):
    """``numba.njit`` with ``nogil=True`` and fastndcg's disk cache
    (``FASTNDCG_CACHE=0``: no disk cache). Same arguments as ``njit``, and
    ``inner=True`` for a function only other kernels call.

    No kernel gets a C-callable wrapper (nothing takes a kernel's address), and an
    inner one no Python wrapper either: each wrapper is code Numba generates,
    optimises and emits on every first compile, about a fifth of the compile time
    of a job (the wrappers of a helper with fifteen array arguments are larger than
    its body). An inner kernel therefore cannot be called from Python.

    >>> @kernel
    ... def twice(x):
    ...     return 2 * x
    >>> @kernel(inner=True)
    ... def half(x):
    ...     return x / 2
    """
    options.setdefault("nogil", True)
    options.setdefault("no_cfunc_wrapper", True)
    if inner:
        options["no_cpython_wrapper"] = True

    def wrap(fn):
        dispatcher = numba.njit(**options)(fn)
        if _cache.CACHE:
            dispatcher._cache = _Cache(fn)
        return dispatcher

    if args and callable(args[0]):
        return wrap(args[0])
    return wrap
