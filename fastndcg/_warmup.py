"""Compile every kernel variant fastndcg can reach into the disk cache, ahead of
time: for Docker images, CI caches and cluster workers.

The inputs reaching the kernels come in few types (scores float32/float64,
labels int32/float64, ids as integers or strings), so "every variant" is a short
list. Each step below runs a tiny job through the public entry points, so it
compiles exactly what a real job of that kind compiles (and nothing is missed
when a code path changes).

>>> import fastndcg
>>> report = fastndcg.warmup()  # doctest: +SKIP
>>> report.steps  # doctest: +SKIP
10
"""

from __future__ import annotations

import os
import sys
import time
import warnings
from dataclasses import dataclass, field
from typing import Callable, TextIO

import numpy as np

from . import _cache
from . import _validate as V

SCORE_TYPES = (np.float32, np.float64)
LABEL_TYPES = (np.int32, np.float64)


@dataclass
class WarmupReport:
    """What :func:`warmup` did: the steps run, the compiled variants it loaded or
    compiled, wall and CPU seconds, where the cache is and whether it is portable.

    Attributes
    ----------
    steps : how many steps ran (each compiles or loads the kernels of one kind of job).
    compiled : kernel variants compiled now.
    loaded : kernel variants loaded from the cache.
    wall_s, cpu_s : wall and CPU seconds.
    cache_dir : the cache directory.
    portable : whether the code is for a generic CPU (``--portable``).
    names : what each step covered, in order.
    compile_s : CPU seconds spent compiling (0 when everything came from the cache).
    variants : the variants compiled now, slowest first: (function, argument types,
        CPU seconds of its own compile, without the functions it calls).
    """
    steps: int
    compiled: int  # variants compiled now (the rest were loaded from the cache)
    loaded: int
    wall_s: float
    cpu_s: float
    cache_dir: str
    portable: bool
    names: list = field(default_factory=list)
    compile_s: float = 0.0
    variants: list = field(default_factory=list)

    def describe(self) -> str:
        kind = "portable (generic CPU)" if self.portable else "for this CPU"
        text = (f"{self.compiled} kernel variants compiled, {self.loaded} loaded from the "
                f"cache, in {self.wall_s:.1f} s ({self.cpu_s:.1f} s of CPU); code {kind} in "
                f"{self.cache_dir}")
        if self.variants:
            name, sig, sec = self.variants[0]
            text += (f"\ncompiling took {self.compile_s:.1f} s of CPU; the slowest function: "
                     f"{name} ({sec:.1f} s)")
        return text


class CompileClock:
    """CPU seconds Numba spends compiling each function variant, measured from its
    compile events while active (a context manager); a variant's own time excludes
    the functions it calls that were compiled meanwhile.

    >>> with CompileClock() as clock:
    ...     pass
    >>> clock.total()
    0.0
    """

    def __init__(self):
        self.own: dict = {}  # (function, signature) -> CPU seconds
        self._stack: list = []

    def __enter__(self):
        from numba.core import event

        clock = self

        class _Listener(event.Listener):
            def on_start(self, ev):
                d = ev.data["dispatcher"]
                clock._stack.append([d.py_func.__qualname__, str(ev.data.get("args", "")),
                                     time.process_time(), 0.0])

            def on_end(self, ev):
                name, sig, t0, inner = clock._stack.pop()
                spent = time.process_time() - t0
                key = (name, sig)
                clock.own[key] = clock.own.get(key, 0.0) + spent - inner
                if clock._stack:
                    clock._stack[-1][3] += spent

        self._listener = _Listener()
        event.register("numba:compile", self._listener)
        return self

    def __exit__(self, *exc):
        from numba.core import event

        event.unregister("numba:compile", self._listener)

    def total(self) -> float:
        return float(sum(self.own.values()))

    def variants(self) -> list:
        """(function, signature, seconds), slowest first."""
        return sorted(((n, s, t) for (n, s), t in self.own.items()), key=lambda v: -v[2])


def _batch(n_q: int, per: int, seed: int):
    rng = np.random.default_rng(seed)
    n = n_q * per
    scores = np.round(rng.random(n), 1)
    labels = rng.integers(0, 4, n)
    return scores, labels, np.arange(0, n + 1, per)


def _list_mode(score_type, label_type) -> Callable[[], None]:
    from . import api
    from .measures import examples

    def run():
        s, l, off = _batch(20, 30, 1)
        api.measure(s.astype(score_type), l.astype(label_type), off, measure=examples())
        # the usual measures alone run a kernel of their own (it compiles without the others)
        api.measure(s.astype(score_type), l.astype(label_type), off, measure=["AP", "P@10"])
        api.ndcg(s.astype(score_type), l.astype(label_type), off, k=[1, 10, None],
                 ties="optimistic")
        # labels past the histogram's range: IDCG's general path
        api.ndcg(s.astype(score_type), (l * 20).astype(label_type), off, k=[1, 10, None],
                 gain="linear")
        # lists longer than the short path's cut, to the end: DCG from the groups of
        # the items with a gain
        s, l, off = _batch(3, 80, 2)
        api.ndcg(s.astype(score_type), l.astype(label_type), off, k=[10, None])
    return run


def _tables(int_ids: bool):
    import pyarrow as pa

    s, l, off = _batch(6, 8, 2)
    q = np.repeat(np.arange(6), 8)
    d = np.tile(np.arange(8), 6) * 7 + q
    qid = pa.array(q) if int_ids else pa.array([f"q{v}" for v in q])
    did = pa.array(d) if int_ids else pa.array([f"d{v}" for v in d])
    run = pa.table({"query_id": qid, "doc_id": did, "score": s})
    qrels = pa.table({"query_id": qid, "doc_id": did, "label": l})
    log = pa.table({"query_id": qid, "doc_id": did, "score": s, "score_b": s[::-1].copy(),
                    "label": l})
    return run, qrels, log


def _qrels_mode(int_ids: bool) -> Callable[[], None]:
    from ._core import tied_queries
    from ._evaluate import evaluate

    def run():
        run_t, qrels_t, _ = _tables(int_ids)
        for ties in ("trec", "average", "ranx"):  # ranx: its argsort order
            evaluate(run_t, qrels=qrels_t, ties=ties,
                     measure=["ndcg_cut_10", "map", "judged@10", "rbp"], per_query=False)
        # float32 scores: the check of tied scores reads them as 32-bit words
        run32 = run_t.set_column(2, "score", run_t.column(2).cast("float32"))
        evaluate(run32, qrels=qrels_t, ties="trec", k=[10], per_query=False)
        # the check itself (runs this small are ordered whole, without it)
        offsets = np.array([0, 2, 4], np.int64)
        for dtype in (np.float64, np.float32):
            tied_queries(offsets, np.array([1.0, 1.0, 2.0, 1.0], dtype))
    return run


def _log_mode(int_ids: bool) -> Callable[[], None]:
    from ._arrow import id_hash, run_starts
    from ._evaluate import evaluate

    def run():
        _, _, log = _tables(int_ids)
        evaluate(log, k=[10], per_query=False)
        run_starts(log.column("query_id").combine_chunks())
        id_hash(log.column("query_id").combine_chunks())
    return run


def _compare() -> Callable[[], None]:
    from ._compare import compare

    def run():
        import pyarrow as pa

        _, _, log = _tables(True)
        compare(log, ["score", "score_b"], k=10, n_resamples=200)  # exact sign-flip test
        n = 40  # copies with new query ids: enough queries for the resampled test
        rep = pa.concat_tables([log.set_column(0, "query_id", pa.array(
            np.asarray(log.column("query_id")) + 100 * i)) for i in range(n)])
        compare(rep, ["score", "score_b"], k=10, n_resamples=200)
        compare(rep, ["score", "score_b"], k=10, n_resamples=200, method="buckets")
    return run


def _agreement() -> Callable[[], None]:
    from ._agreement import agreement

    def run():
        import pyarrow as pa
        import pyarrow.compute as pc

        _, qrels, _ = _tables(True)
        labels = np.asarray(qrels.column("label"))
        other = qrels.set_column(2, "label", pa.array(np.roll(labels, 1)))  # a second judge
        agreement(qrels, other)  # integer ids (and short text ids, packed into integers)
        # text ids too long to pack are lined up as text
        long = pc.binary_join_element_wise("document-", qrels.column(1).cast(pa.string()), "")
        agreement(qrels.set_column(1, qrels.column_names[1], long),
                  other.set_column(1, other.column_names[1], long))
    return run


def _trec_text() -> Callable[[], None]:
    from . import io
    from ._core import at_or_above_kth
    from .trectext import print_lines

    def run():
        import tempfile

        with tempfile.TemporaryDirectory() as folder:
            run_path = os.path.join(folder, "run.txt")
            qrels_path = os.path.join(folder, "qrels.txt")
            with open(run_path, "w") as f:
                f.write("q1 Q0 d1 1 2.5 tag\nq1 Q0 d2 2 0.12345678901234567890 tag\n")
            with open(qrels_path, "w") as f:
                f.write("q1 0 d1 2\n")
            io.read_trec_run(run_path)
            io.read_trec_qrels(qrels_path)
        # -M's selection of each query's top rows (a run of many long queries)
        at_or_above_kth(np.array([0, 3], np.int64), np.array([0], np.int64),
                        np.array([1.0, 3.0, 2.0]), 1)
        print_lines(["map\t", "num_ret\t", "runid\t"], ["fixed4", "long", "text"],
                    [[0.5], [3], ["tag"]], ["q1"])
    return run


def _steps():
    steps = [(f"list mode, scores {np.dtype(s).name}, labels {np.dtype(l).name}",
              _list_mode(s, l)) for s in SCORE_TYPES for l in LABEL_TYPES]
    for int_ids in (True, False):
        kind = "integer ids" if int_ids else "string ids"
        steps.append((f"qrels join, {kind}", _qrels_mode(int_ids)))
        steps.append((f"search log, {kind}", _log_mode(int_ids)))
    steps.append(("comparisons (bootstrap, sign-flip; over queries and over buckets)",
                  _compare()))
    steps.append(("agreement of two label sets (kappa, alpha)", _agreement()))
    steps.append(("TREC run and qrels text (reading, printing trec_eval's lines)",
                  _trec_text()))
    return steps


def _dispatchers():
    import importlib

    from numba.core.dispatcher import Dispatcher

    from . import _kernels

    out = []
    # (not .nested: ranx's objects have a variant for each width of their document
    # ids, compiled on first use, which no warm-up can foresee)
    for name in ("rank", "ndcg", "binary", "graded", "score", "scan", "join", "hashing", "runs",
                 "resample", "paired", "agreement", "reading", "printing"):
        module = importlib.import_module(f"{_kernels.__name__}.{name}")
        out += [f for f in vars(module).values() if isinstance(f, Dispatcher)]
    return out


def _counts() -> tuple[int, int]:
    misses = hits = 0
    for d in _dispatchers():
        misses += sum(d.stats.cache_misses.values())
        hits += sum(d.stats.cache_hits.values())
    return misses, hits


def warmup(*, portable: bool = False, progress: bool = False, jobs: int = 1,
           stream: TextIO | None = None) -> WarmupReport:
    """Compile (or load) every kernel variant fastndcg can reach, into the disk cache.

    Parameters
    ----------
    portable : generate code for a generic CPU of this architecture, so one cache
        serves every machine of a cluster (a little slower than code for this CPU:
        ``fastndcg warmup --portable`` measures how much). The cache directory is
        marked portable, and every later process using it compiles and loads
        generic code. Must be decided before Numba compiles anything in this
        process.
    progress : draw a progress line on ``stream`` (default stderr).
    jobs : run the steps in this many fresh processes at once (the cache's locks
        let them share the work): less wall time on several cores, the same CPU
        time. With 1 (the default) everything runs in this process, which then has
        every kernel loaded (what a Dask worker wants).

    Example
    -------
    >>> import fastndcg
    >>> print(fastndcg.warmup().describe())  # doctest: +SKIP
    0 kernel variants compiled, 23 loaded from the cache, in 0.9 s (0.9 s of CPU); ...
    """
    portable, progress = V.flag(portable, "portable"), V.flag(progress, "progress")
    jobs = V.count(jobs, "jobs", hi=256, fix="it is the number of processes compiling at once")
    if stream is not None and not callable(getattr(stream, "write", None)):
        raise TypeError(f"stream must be a text stream with a write method (e.g. sys.stderr), "
                        f"got {V.shown(stream)} ({type(stream).__name__})")
    if not _cache.CACHE:
        raise ValueError("the disk cache is off (FASTNDCG_CACHE=0), so warming it would "
                         "compile for this process only; unset FASTNDCG_CACHE")
    from ._kernels import _jit

    if portable:
        if not _jit.can_be_portable():
            raise ValueError("portable code was asked for, but Numba already compiles for "
                             "this CPU in this process; run the warm-up in a fresh process "
                             "(the command line: fastndcg warmup --portable)")
        _mark_portable()
        if not _jit.portable_active():  # pragma: no cover  (checked just above)
            raise ValueError("could not switch this process to portable code")
    stream = sys.stderr if stream is None else stream
    steps = _steps()
    t0, c0 = time.perf_counter(), time.process_time()
    m0, h0 = _counts()
    def draw(i, what):
        if progress:
            stream.write(f"\r[{'#' * (20 * i // len(steps)):<20}] {i}/{len(steps)} {what:<48}")
            stream.flush()

    if jobs == 1:
        with CompileClock() as clock, warnings.catch_warnings():
            # compiling is what was asked for: no advice to run the warm-up
            warnings.simplefilter("ignore", _cache.PackageCacheWarning)
            for i, (what, run) in enumerate(steps):
                draw(i, what)
                run()
        m1, h1 = _counts()
        cpu = time.process_time() - c0
        own = clock.own
    else:
        m1, h1, cpu, own = _in_processes(steps, jobs, draw)
        m1, h1, cpu = m0 + m1, h0 + h1, cpu + time.process_time() - c0
    variants = sorted(((n, s, t) for (n, s), t in own.items()), key=lambda v: -v[2])
    report = WarmupReport(len(steps), m1 - m0, h1 - h0, time.perf_counter() - t0, cpu,
                          _jit.cache_path(), _jit.portable_active(), [w for w, _ in steps],
                          sum(own.values()), variants)
    if progress:
        stream.write(f"\r[{'#' * 20}] {len(steps)}/{len(steps)} {'done':<48}\n")
        stream.flush()
    return report


_STEP_CODE = """
import importlib, json, sys
W = importlib.import_module("fastndcg._warmup")  # this module, for the names patched in tests
what, run = W._steps()[int(sys.argv[1])]
with W.CompileClock() as clock:
    run()
misses, hits = W._counts()
print(json.dumps({"misses": misses, "hits": hits, "own": [[n, s, t] for (n, s), t in clock.own.items()]}))
"""


def _in_processes(steps, jobs: int, draw) -> tuple[int, int, float, dict]:
    """Each step in a fresh process, ``jobs`` at a time; (misses, hits, CPU s, the
    compile seconds of each variant compiled)."""
    import json
    import resource
    import subprocess

    # the same cache (and CPU choice, through the environment) as this process
    env = dict(os.environ, FASTNDCG_CACHE_DIR=_cache.cache_dir())
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    pending = list(range(len(steps)))
    running: dict = {}
    misses = hits = done = 0
    own: dict = {}
    while pending or running:
        while pending and len(running) < jobs:
            i = pending.pop(0)
            running[i] = subprocess.Popen([sys.executable, "-c", _STEP_CODE, str(i)], env=env,
                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                          text=True)
        finished = [j for j, p in running.items() if p.poll() is not None]
        if not finished:
            time.sleep(0.05)
            continue
        i = finished[0]
        proc = running.pop(i)
        out, err = proc.communicate()
        if proc.returncode != 0:
            for other in running.values():
                other.kill()
            last = (err.strip().splitlines() or ["(no message)"])[-1]
            raise RuntimeError(f"warm-up step {steps[i][0]!r} failed in its process: {last}")
        counts = json.loads(out.strip().splitlines()[-1])
        misses += counts["misses"]
        hits += counts["hits"]
        for name, sig, sec in counts["own"]:
            own[(name, sig)] = own.get((name, sig), 0.0) + sec
        done += 1
        draw(done, steps[i][0])
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return misses, hits, cpu, own


def build_package_cache() -> WarmupReport:
    """Compile every kernel variant for a package being built: into this process's
    cache directory (the build points ``FASTNDCG_CACHE_DIR`` at the package's own
    ``_prebuilt`` folder), for a generic CPU when ``FASTNDCG_PORTABLE=1``, on every
    core; then record the versions and CPU the code is for, and remove the lock
    files (an installed package's cache is only ever read).

    >>> from fastndcg._warmup import build_package_cache
    >>> build_package_cache().describe()  # doctest: +SKIP
    '189 kernel variants compiled, 146 loaded from the cache, in 82.2 s ...'
    """
    import glob

    from ._kernels import _jit

    report = warmup(portable=_cache.portable_requested(), jobs=os.cpu_count() or 1)
    _cache.write_build_record(_cache.cache_dir(), _jit.codegen_cpu())
    for lock in glob.glob(os.path.join(_cache.kernel_cache_dir(), "*.lock")):
        os.remove(lock)
    return report


def _mark_portable() -> None:
    path = _cache.kernel_cache_dir()
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, _cache.PORTABLE_MARK), "w") as f:
        f.write("Kernels in this directory are compiled for a generic CPU "
                "(fastndcg warmup --portable).\n")


_SPEED_CODE = """
import json, time
import numpy as np
import fastndcg
rng = np.random.default_rng(0)
n_q, per = 100_000, 20
s = np.round(rng.random(n_q * per), 2).astype(np.float32)
l = rng.integers(0, 4, n_q * per).astype(np.int32)
off = np.arange(0, n_q * per + 1, per)
fastndcg.ndcg(s, l, off, k=[1, 10])
times = []
for _ in range(7):
    t = time.perf_counter()
    fastndcg.ndcg(s, l, off, k=[1, 10])
    times.append(time.perf_counter() - t)
from fastndcg._kernels import _jit
print(json.dumps({"rows_s": n_q * per / sorted(times)[3], "portable": _jit.portable_active()}))
"""


def speed_check() -> str:
    """The main kernel's speed with portable code and with code for this CPU, each
    measured in a fresh process (the median of 7 rounds, 2M rows); code for this CPU
    is compiled for the check if the cache lacks it."""
    import json
    import subprocess

    out = {}
    for label, flag in (("portable", "1"), ("this CPU", "0")):
        env = dict(os.environ, FASTNDCG_PORTABLE=flag)
        env.pop("NUMBA_CPU_NAME", None)
        done = subprocess.run([sys.executable, "-c", _SPEED_CODE], env=env, text=True,
                              capture_output=True)
        if done.returncode != 0:
            return f"speed check failed: {done.stderr.strip().splitlines()[-1:]}"
        out[label] = json.loads(done.stdout.strip().splitlines()[-1])["rows_s"]
    cost = 1 - out["portable"] / out["this CPU"]
    return (f"speed: portable code {out['portable'] / 1e6:,.0f}M rows/s, code for this CPU "
            f"{out['this CPU'] / 1e6:,.0f}M rows/s ({100 * cost:+.0f}% slower when portable; "
            f"main kernel, 100k queries x 20 rows, median of 7)")
