"""Helpers shared by the benchmark suite and the scripts (``scripts/bench_*.py``).

Timing for ``scripts/bench_scale.py`` (:func:`best_of`), the machine
(:func:`machine_facts`: :func:`cpu_model`, :func:`total_memory`,
:func:`threading_layer`; recorded into the suite's JSON by
``benchmarks/conftest.py``), library versions (:func:`version`) and the cells of
markdown reports (:func:`met`, :func:`fmt_time`, :func:`fmt_bytes`,
:func:`print_table`).
"""

from __future__ import annotations

import gc
import os
import platform
import time


def best_of(fn, repeat: int, *args, **kwargs) -> tuple[float, object]:
    """(fastest wall time in seconds over ``repeat`` calls, last result)."""
    best, result = float("inf"), None
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        result = fn(*args, **kwargs)
        best = min(best, time.perf_counter() - t0)
    return best, result


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo, else what ``platform`` knows."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def total_memory() -> str:
    """Physical memory, e.g. ``"125 GiB RAM"`` (``"RAM unknown"`` where not known)."""
    try:
        pages, size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
        return f"{pages * size / 2**30:.0f} GiB RAM"
    except (ValueError, OSError, AttributeError):
        return "RAM unknown"


def threading_layer() -> str:
    """Numba's threading layer, or ``"not initialised"`` before any parallel call."""
    import numba

    try:
        return numba.threading_layer()
    except ValueError:
        return "not initialised"


def machine_facts() -> dict:
    """Cores, CPU, memory, Numba threads and layer, and the system, for reports."""
    import numba

    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    return {"cpus": os.cpu_count(), "usable_cpus": usable, "cpu_model": cpu_model(),
            "memory": total_memory(), "numba_threads": numba.get_num_threads(),
            "threading_layer": threading_layer(),
            "system": f"{platform.system()} {platform.release()}"}


def version(distribution: str, module: str | None = None) -> str:
    """Installed version of ``distribution`` (from its metadata), else ``module.__version__``.

    ``module`` is the import name where it differs from the distribution's name
    (``version("scikit-learn", "sklearn")``); ``"not installed"`` if neither is found.
    """
    from importlib import metadata

    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        pass
    try:
        return getattr(__import__(module or distribution), "__version__", "installed")
    except ImportError:
        return "not installed"


def met(ok: bool | None) -> str:
    """The "met?" cell: yes, **no**, or a dash where there is no target."""
    return "—" if ok is None else ("yes" if ok else "**no**")


def fmt_time(seconds: float) -> str:
    """Seconds as ``"1.23 s"``, ``"4.5 ms"`` or ``"67 µs"``."""
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds * 1e6:.0f} µs"


def fmt_bytes(n: float) -> str:
    """Bytes as ``"1.23 GiB"`` or ``"456 MiB"``."""
    return f"{n / 2**30:.2f} GiB" if n >= 2**30 else f"{n / 2**20:,.0f} MiB"


def print_table(title: str, rows, quick: bool = False) -> None:
    """Print ``## title`` and the markdown table of ``(what, measured, target, met?)`` rows."""
    print()
    print(f"## {title}{' (--quick: small sizes, targets indicative only)' if quick else ''}")
    print()
    print("| what | measured | target | met? |")
    print("|---|---|---|---|")
    for what, measured, target, ok in rows:
        print(f"| {what} | {measured} | {target} | {ok} |")
    print()
