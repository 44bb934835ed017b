"""The settings of a comparison: :func:`fastndcg.compare`'s arguments, validated.

:func:`settings` checks every argument of a comparison before anything is read,
the same way for every engine (``fastndcg.compare``, ``fastndcg.dask.compare``,
``fastndcg.spark.compare``): a keyword none of them takes is refused by name, an
argument of another engine with where it belongs, and each value with the fix.
It returns the :class:`Settings` every later step reads.
"""

from __future__ import annotations

import inspect
import numbers
import os
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np
import pyarrow as pa

from .. import _core as C
from .. import _validate as V
from .. import measures as M
from .._evaluate import check_options
from ..options import OPTIONS, label_sets
from ..options import check as check_option
from ..presets import DEFAULT_K
from .stats import CORRECTIONS

__all__ = ["Settings", "settings", "check_arguments", "check_log_only", "check_keywords",
           "check_memory", "TESTS", "CORRECTIONS", "METHODS", "SCALE_QUERIES",
           "DEFAULT_BUCKETS", "WILCOXON_AT_SCALE", "ENGINES", "ENGINE_ARGUMENTS",
           "RUN_ARGUMENTS", "EVAL_DEFAULTS"]

TESTS = ("randomization", "t", "wilcoxon")
METHODS = ("auto", "queries", "buckets")
SCALE_QUERIES = 1_000_000  # method="auto": query-level methods up to this many queries
DEFAULT_BUCKETS = 1000
WILCOXON_AT_SCALE = (
    "the Wilcoxon signed-rank test ranks every query's |difference| against all the "
    "others, which needs all the values at once, and {why}; compare with the "
    "randomization and t tests (the default at this size), compare a sample of queries, "
    "or pass {queries} to hold every value in memory")


# evaluate's options that compare sets itself, or that have no meaning for a comparison
# (the evaluation options' own reasons, and evaluate's per_query)
_NOT_OPTIONS = {"per_query": "the per-query values are kept in Comparison.per_query",
                **{n: o.compared for n, o in OPTIONS.items() if o.compared is not True}}


# The engines of a comparison and the arguments only one of them takes (name -> (the
# function that takes it, what it is)); every engine also takes compare's own keyword
# arguments and the evaluation options it passes on (EVAL_DEFAULTS).
ENGINES = ("fastndcg.compare", "fastndcg.dask.compare", "fastndcg.spark.compare")
ENGINE_ARGUMENTS = {
    "client": ("fastndcg.dask.compare", "the distributed.Client of the Dask cluster to run on"),
    "workers": ("fastndcg.dask.compare", "the worker processes of a local Dask cluster it "
                                         "starts"),
    "partition_rows": ("fastndcg.dask.compare", "the rows of a Dask partition"),
    "spark": ("fastndcg.spark.compare", "the SparkSession to run in"),
    "order": ("fastndcg.spark.compare", "a column whose ascending order is each query's input "
                                        "order, which Spark's shuffle does not keep; on one "
                                        "machine and on Dask rows keep their order in the log"),
    "partitions": ("fastndcg.spark.compare", "the Spark tasks the log is cut into"),
}
# The keywords every engine's compare takes itself, beside those settings() checks.
RUN_ARGUMENTS = ("progress",)
# The evaluation options a comparison passes on to each system's evaluation (those of
# the options specification it passes on, qrels aside: compare reads them itself), with
# their defaults, compare's own k, and the rows read at a time.
EVAL_DEFAULTS = {**{n: o.default for n, o in OPTIONS.items()
                    if o.compared is True and n != "qrels"}, "k": 10, "batch_rows": 1 << 20}
_RESAMPLE_BYTES = 4 << 30  # the resampled means kept for the intervals and p-values


def check_keywords(where: str, given) -> None:
    """The keywords that ``where`` (one of ENGINES) caught in its ``**kwargs`` are
    evaluation options it passes on; any other is refused by name (the one check of
    every engine), one that belongs to another engine with where it belongs."""
    if where not in ENGINES:
        raise ValueError(f"where must be one of {', '.join(map(repr, ENGINES))}, got "
                         f"{V.shown(where)}")
    # what the suggestions are drawn from: every keyword ``where`` takes (compare's
    # own keyword arguments are those settings() checks, and RUN_ARGUMENTS)
    takes = [p.name for p in inspect.signature(settings).parameters.values()
             if p.kind is p.KEYWORD_ONLY] + list(RUN_ARGUMENTS)
    takes += [n for n in EVAL_DEFAULTS if n not in takes]
    takes += [n for n, (owner, _) in ENGINE_ARGUMENTS.items() if owner == where]
    elsewhere = {n: f"it is an argument of {owner}() ({what}); drop it here, or call "
                    f"{owner}() to run there"
                 for n, (owner, what) in ENGINE_ARGUMENTS.items() if owner != where}
    elsewhere.update(_NOT_OPTIONS)
    V.keywords(given, takes, where, elsewhere)


def _whole(value, name: str, lo: int, hi: int | None, says: str, fix: str = ""):
    """One of compare's whole-number arguments: an int (NumPy's too; not a bool) in
    [lo, hi]; ``says`` words the range."""
    if (isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral)
            or value < lo or (hi is not None and value > hi)):
        raise V.refuse(ValueError, name, value, f"{V.spelled(name)} must be a whole number "
                       f"{says}, got {V.shown(value)}" + (f"; {fix}" if fix else ""))
    return int(value)


def _systems(systems, runs: bool) -> tuple[list[str], list]:
    """(names, what to evaluate for each): score columns of a log, or ``runs`` (with
    qrels and no log)."""
    if isinstance(systems, (str, os.PathLike)):
        raise TypeError(f"systems must list at least two systems (score columns, or runs with "
                        f"qrels=...), got the single {type(systems).__name__} {systems!r}")
    if isinstance(systems, Mapping):
        names, items = list(systems.keys()), list(systems.values())
        for n in names:
            if not isinstance(n, str) or not n:
                raise TypeError(f"systems: the names of a dict must be non-empty strings, got "
                                f"{n!r}")
    elif isinstance(systems, Sequence):
        items = list(systems)
        if not runs:
            names = items
        else:
            names = [os.path.basename(os.fspath(x)) if isinstance(x, (str, os.PathLike))
                     else None for x in items]
            if None in names:
                raise TypeError("systems: runs given as tables need names; pass a dict "
                                "{name: run}")
    else:
        raise TypeError(f"systems must be a list of score columns, or a dict {{name: column or "
                        f"run}}; got {type(systems).__name__}")
    if len(items) < 2:
        raise ValueError(f"compare needs at least two systems, got {len(items)}: {names!r}; "
                         f"add the baseline and the system(s) to compare with it")
    if not runs:
        for col in items:
            if not isinstance(col, str):
                raise TypeError(f"systems: a system is a score column of the log (a str), got "
                                f"{col!r}; to compare runs, pass None as the log and qrels=...")
    for n in names:
        if names.count(n) > 1:
            raise ValueError(f"systems: {n!r} is named twice; give each system once (runs "
                             f"with the same file name need a dict of distinct names)")
    return [str(n) for n in names], items


@dataclass
class Settings:
    """A comparison's arguments, checked: the systems' names and what each one
    evaluates (a score column, or a run), the baseline's index and the rest."""
    names: list[str]
    items: list
    base: int
    confidence: float
    n_resamples: int
    seed: int
    tests: tuple
    correction: str
    segment: Any
    options: dict
    method: str = "auto"
    n_buckets: int = 1000
    tests_named: bool = False  # tests= given (else: every test the method has)
    human_qrels: Any = None    # human judgments of a sample: prediction-powered differences
    ppi: str | float = "tuned"  # their λ (see fastndcg.ppi)
    qrels: Any = None          # the judgments of a log's documents (None: its label column)


def settings(systems, where: str = "fastndcg.compare", log: bool | None = None, /, *,
             baseline=None, qrels=None, segment=None, k=10, confidence=0.95,
             n_resamples=10_000, seed=0, tests=None, correction="holm", method="auto",
             buckets=DEFAULT_BUCKETS, **options) -> Settings:
    """:func:`fastndcg.compare`'s arguments, validated without reading anything, as
    ``where`` (one of ENGINES: the engine's own arguments are not among them) takes
    them. ``log``: whether the systems are score columns of a log (with ``qrels``, its
    documents judged by them) rather than runs; by default, as ``where`` takes them
    (the distributed engines compare logs; :func:`fastndcg.compare` runs when given
    ``qrels``).

    >>> st = settings(["score_a", "score_b"], baseline="score_b", k=[5, 10])
    >>> st.names, st.base, st.tests, st.options["k"]
    (['score_a', 'score_b'], 1, ('randomization', 't', 'wilcoxon'), [5, 10])
    """
    check_keywords(where, options)  # first, as Python refuses an unknown keyword
    if log is None:
        log = qrels is None or where != "fastndcg.compare"
    if label_sets(qrels) is not None:
        raise V.refuse(ValueError, "qrels", qrels,
                       f"compare takes one source of judgments in {V.spelled('qrels')}; "
                       f"several label sets are compared one call a set (or, with an LLM's "
                       f"and a sample of human judgments, {V.spelled('qrels', ref=True)} the "
                       f"LLM's, {V.spelled('human_qrels', ref=True)} the human ones)")
    if options.get("human_qrels") is not None and qrels is None:
        raise V.refuse(ValueError, "human_qrels", options["human_qrels"],
                       f"{V.spelled('human_qrels', ref=True)} needs "
                       f"{V.spelled('qrels', ref=True)} in compare (an LLM's judgments of "
                       f"the documents): each system's differences under the LLM's "
                       f"judgments are corrected with those of the human sample; compare "
                       f"does not read the LLM's labels from a label column")
    names, items = _systems(systems, not log)
    if baseline is None:
        base = 0
    elif baseline in names:
        base = names.index(baseline)
    else:
        raise V.refuse(ValueError, "baseline", baseline,
                       f"{V.spelled('baseline', repr(baseline))} is not among the "
                       f"systems {', '.join(map(repr, names))}; name one of them (by default "
                       f"the first is the baseline)")
    confidence = V.level(confidence, "confidence")
    _whole(n_resamples, "n_resamples", 1, None, ">= 1", "the default 10000 suits most "
           "comparisons (fewer run faster, with noisier intervals and p-values)")
    _whole(seed, "seed", 0, 2 ** 64 - 1, "in [0, 2**64)", f"pass an int such as "
           f"{V.spelled('seed', 0)} (the default)")
    C.check_choice("method", method, METHODS)
    _whole(buckets, "buckets", 2, 1 << 20, f"from 2 to 1048576 (hashed buckets of queries "
           f"that large comparisons resample; default {DEFAULT_BUCKETS:,})")
    explicit = tests is not None
    if tests is None:
        tests = TESTS
    if isinstance(tests, str):
        tests = tuple(t.strip() for t in tests.split(",") if t.strip())
    if not isinstance(tests, (list, tuple)) or not tests:
        raise V.refuse(ValueError, "tests", tests, f"{V.spelled('tests')} must name one or "
                       f"more of {', '.join(map(repr, TESTS))}, got {V.shown(tests)}")
    for t in tests:
        C.check_choice("tests", t, TESTS)
    if method == "buckets" and explicit and "wilcoxon" in tests:
        raise V.refuse(ValueError, "tests", tests, WILCOXON_AT_SCALE.format(
            why=f"{V.spelled('method', repr('buckets'), 'buckets')} keeps no per-query values",
            queries=V.spelled("method", repr("queries"), "queries")))
    if not log and method == "buckets":
        raise V.refuse(ValueError, "method", method,
                       f"{V.spelled('method', repr('buckets'), 'buckets')} streams a log whose "
                       f"score columns are the systems; runs compared against qrels are lined "
                       f"up query by query in memory: use "
                       f"{V.spelled('method', repr('auto'), 'auto')} (buckets above "
                       f"{SCALE_QUERIES:,} queries) or 'queries', or put the runs' scores "
                       f"in one log, a score column a system")
    if log and qrels is not None and options.get("complete"):
        raise V.refuse(ValueError, "complete", True,
                       f"{V.spelled('complete', True, '')} scores the judged queries missing "
                       f"from a run as 0; the systems of a log are scored on the queries it "
                       f"holds: drop {V.spelled('complete', True, '')}, or compare runs (a "
                       f"file a system)")
    C.check_choice("correction", correction, CORRECTIONS)
    if segment is not None and not isinstance(segment, (str, Mapping, pa.Table)):
        raise V.refuse(TypeError, "segment", segment,
                       f"{V.spelled('segment')} must be a column name, or a mapping from query "
                       f"id to segment (a dict, or a pyarrow Table of two columns: query id "
                       f"and segment); got {type(segment).__name__}")
    if isinstance(segment, pa.Table) and segment.num_columns != 2:
        raise V.refuse(ValueError, "segment", segment,
                       f"{V.spelled('segment')} as a table needs exactly two columns (query "
                       f"id, segment), got {segment.column_names}")
    if options.get("measure") is not None:  # measures named as trec_eval / ir_measures do
        if k != 10:
            raise V.refuse(ValueError, "measure", options["measure"],
                           f"give the measures once: {V.spelled('k', repr(k), k)} (NDCG "
                           f"cutoffs) or {V.spelled('measure', repr(options['measure']))}, not "
                           f"both")
        k = DEFAULT_K  # evaluate's "k not given"
    options = dict(options, k=k)
    # every evaluation option is checked before anything is read
    opts, _ = check_options(qrels=qrels, score=items[0] if log else "score",
                            **{n: options.get(n, d) for n, d in EVAL_DEFAULTS.items()})
    for m in opts.others:  # the tests compare arithmetic means of per-query values
        if M.REGISTRY[m.kind].summary == "gm":
            raise ValueError(f"compare tests differences of arithmetic means, but "
                             f"{m.column(opts.rel)!r} is averaged as a geometric mean; compare "
                             f"its per-query measure instead ('map' for gm_map, 'bpref' for "
                             f"gm_bpref)")
    # the memory of one group is known now: refuse before reading the log
    check_memory(1, int(n_resamples), len(names), len(opts.names))
    # human judgments are compared by compare itself, not by each system's evaluation
    human, lam = options.pop("human_qrels", None), options.pop("ppi", OPTIONS["ppi"].default)
    return Settings(names, items, base, float(confidence), int(n_resamples), int(seed),
                    tuple(t for t in TESTS if t in tests), correction, segment, options,
                    method, int(buckets), explicit, human, check_option("ppi", lam), qrels)


def check_arguments(systems, log: bool | None = None, **kwargs) -> None:
    """Validate :func:`fastndcg.compare`'s arguments without reading anything (the command
    line calls it first, to tell usage errors from bad data); ``log`` as
    :func:`settings` takes it."""
    settings(systems, "fastndcg.compare", log, **kwargs)


def check_log_only(source, where: str) -> None:
    """A distributed comparison compares the score columns of a log (with ``qrels``,
    its documents judged by them): runs (a file a system) are compared on one machine."""
    if source is None:
        raise ValueError(f"{where} compares the score columns of a log; compare runs against "
                         f"qrels on one machine with fastndcg.compare, or put their scores in "
                         f"one log, a score column a system")


def check_memory(n_groups: int, n_resamples: int, n_systems: int, n_cutoffs: int) -> None:
    """The resampled means kept (bootstrap, then the null of each pair) must fit."""
    need = 8 * n_groups * n_resamples * (2 * n_systems - 1) * n_cutoffs
    if need > _RESAMPLE_BYTES:
        raise V.refuse(ValueError, "n_resamples", n_resamples,
                       f"{V.spelled('n_resamples', f'{n_resamples:,}', n_resamples)} would "
                       f"hold {need / 2**30:.1f} GiB of resampled means ({n_groups} "
                       f"segment(s) x {n_systems} systems x {n_cutoffs} cutoff(s)); use fewer "
                       f"resamples, segments or cutoffs")
