"""Running a kernel over chunks of queries on several threads (plain Python).

The kernels are compiled with ``nogil=True``, so Python threads run them truly
in parallel; a chunk is the unit of work (:func:`fastndcg._core.work_chunks`
balances them by rows). This replaces Numba's ``parallel=True`` for the scoring
kernels: a parallel loop is typed and lowered a second time as a gufunc, which
cost several seconds of compiling per variant, while one thread per core pulling
chunks costs a few microseconds a call. The thread count is Numba's
(``numba.set_num_threads``, ``NUMBA_NUM_THREADS``), so Dask and Spark workers that
set it keep controlling it. Results do not depend on the thread count: each
chunk writes its own queries' rows.
"""

from __future__ import annotations

import os
import threading

import numpy as np
from concurrent.futures import ThreadPoolExecutor
from typing import Callable

_pool: ThreadPoolExecutor | None = None
_pool_pid = -1
_pool_lock = threading.Lock()


def _executor(n: int) -> ThreadPoolExecutor:
    """A process-wide pool of at least ``n`` threads (a new one after a fork:
    a forked child has none of its parent's threads)."""
    global _pool, _pool_pid
    with _pool_lock:
        if _pool is None or _pool_pid != os.getpid() or _pool._max_workers < n:
            _pool = ThreadPoolExecutor(max_workers=max(n, os.cpu_count() or 1),
                                       thread_name_prefix="fastndcg")
            _pool_pid = os.getpid()
        return _pool


def thread_count() -> int:
    """Numba's thread count (``numba.set_num_threads``, else ``NUMBA_NUM_THREADS``),
    without starting Numba's threading layer where nothing has started it yet:
    ``numba.get_num_threads()`` starts it (~4 ms a process, its library loaded and its
    threads started), and no kernel runs Numba's own parallel loops. Until it is
    started, ``set_num_threads`` has not been called (it starts it), so the count is
    the configured one."""
    import numba
    from numba.np.ufunc import parallel

    if not getattr(parallel, "_is_initialized", True):
        return numba.config.NUMBA_NUM_THREADS
    return numba.get_num_threads()


def run_chunks(n_chunks: int, work: Callable, scratch: Callable | None = None) -> None:
    """``work(c)`` for every chunk c in range(n_chunks), on up to Numba's thread
    count of threads (the calling thread is one of them). With ``scratch``, each
    thread calls it once and passes what it returned: ``work(c, scratch_of_thread)``
    (the kernels allocate nothing themselves)."""
    n_threads = min(n_chunks, thread_count())
    if scratch is not None:
        plain = work

        def work(c, _local=threading.local()):
            if not hasattr(_local, "s"):
                _local.s = scratch()
            plain(c, _local.s)
    if n_threads <= 1:
        for c in range(n_chunks):
            work(c)
        return
    counter = iter(range(n_chunks))  # next() on a range iterator is atomic under the GIL
    lock = threading.Lock()

    def worker():
        while True:
            with lock:
                c = next(counter, None)
            if c is None:
                return
            work(c)

    futures = [_executor(n_threads - 1).submit(worker) for _ in range(n_threads - 1)]
    worker()
    for f in futures:
        f.result()


def run_ranges(n: int, n_chunks: int, work: Callable) -> None:
    """``work(c, start, stop)`` for n rows cut into ``n_chunks`` ranges of about equal
    size (range c: rows start:stop, int64 bounds), as :func:`run_chunks` runs chunks."""
    def one(c):
        work(c, np.int64(n * c // n_chunks), np.int64(n * (c + 1) // n_chunks))

    run_chunks(n_chunks, one)
