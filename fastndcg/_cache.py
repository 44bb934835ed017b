"""Where fastndcg's compiled kernels are cached.

Numba writes its on-disk cache next to the source file by default, which puts
it inside site-packages. fastndcg registers a cache locator that serves only
fastndcg's own functions (every other Numba user keeps Numba's behaviour) and
points at a user cache directory:

* ``FASTNDCG_CACHE_DIR`` -- the directory, if set;
* else ``$NUMBA_CACHE_DIR/fastndcg`` if ``NUMBA_CACHE_DIR`` is set;
* else the platform's user cache directory: ``$XDG_CACHE_HOME/fastndcg`` or
  ``~/.cache/fastndcg`` (Linux), ``~/Library/Caches/fastndcg`` (macOS),
  ``%LOCALAPPDATA%\\fastndcg\\Cache`` (Windows);
* if that directory cannot be written, ``<tempdir>/fastndcg-cache-<user>``.

``FASTNDCG_CACHE=0`` (or ``false``/``no``/``off``) switches the disk cache off:
kernels are then compiled in every new process.
"""

from __future__ import annotations

import getpass
import os
import sys
import tempfile

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def cache_enabled() -> bool:
    """Whether compiled kernels are cached on disk (``FASTNDCG_CACHE``)."""
    return os.environ.get("FASTNDCG_CACHE", "1").strip().lower() not in ("0", "false", "no", "off")


def cache_dir() -> str:
    """The directory fastndcg's compiled kernels are cached in."""
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


def _fallback_dir() -> str:
    try:
        user = getpass.getuser()
    except Exception:  # no user name in some containers
        user = str(os.getuid()) if hasattr(os, "getuid") else "user"
    return os.path.join(tempfile.gettempdir(), f"fastndcg-cache-{user}")


def _register_locator() -> None:
    from numba.core import caching

    impl = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl")

    class FastNDCGCacheLocator(caching._SourceFileBackedLocatorMixin, caching._CacheLocator):
        """Serves fastndcg's own source files only, from :func:`cache_dir`."""

        _root = cache_dir()

        def __init__(self, py_func, py_file):
            self._py_file = py_file
            self._lineno = py_func.__code__.co_firstlineno
            self._cache_path = os.path.join(self._root, self.get_suitable_cache_subpath(py_file))

        def get_cache_path(self):
            return self._cache_path

        @classmethod
        def from_function(cls, py_func, py_file):
            inside = os.path.dirname(os.path.abspath(py_file))
            if inside != _PACKAGE_DIR and not inside.startswith(_PACKAGE_DIR + os.sep):
                return None
            locator = super().from_function(py_func, py_file)
            if locator is None:  # not writable: never fall back to site-packages
                cls._root = _fallback_dir()
                locator = super().from_function(py_func, py_file)
            return locator

    if not any(c.__name__ == "FastNDCGCacheLocator" for c in impl._locator_classes):
        impl._locator_classes.insert(0, FastNDCGCacheLocator)


CACHE = cache_enabled()
if CACHE:
    _register_locator()
