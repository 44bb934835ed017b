"""The ``fastndcg`` command line: ``evaluate``, ``compare``, ``trec_eval``, ``demo``,
``warmup`` and ``synth``.

Bad input is one line on stderr (``fastndcg: error: ...``) and exit status 2 for a
usage error, 1 for bad data; never a traceback. Progress bars go to stderr only
when it is a terminal, and never with ``--quiet``.
"""

from __future__ import annotations

import argparse
import glob
import json
import math
import os
import re
import sys
import tempfile
import time
from typing import Sequence

from . import _validate as V

_PROG = "fastndcg"
# the preset names, without importing the package's numeric modules for --help
PRESET_NAMES = ("trec_eval", "pytrec_eval", "sklearn", "lightgbm", "xgboost", "xgboost-", "ranx")


_K_UNSET = object()  # -k not given


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, not argparse's usage + message
        raise _UsageError(f"{message} (see {self.prog} --help)")


def _cutoffs(text: str):
    parts = [p.strip() for p in text.split(",")]
    if len(parts) == 1 and parts[0].lower() in ("all", "none"):
        return None
    try:
        values = [int(p) for p in parts]
    except ValueError:
        values = []
    if not values or any(not 1 <= v <= V.MAX_CUTOFF for v in values):
        raise argparse.ArgumentTypeError(
            f"-k takes cutoffs from 1 to {V.MAX_CUTOFF} separated by commas (e.g. -k 1,3,5,10) "
            f"or 'all', got {V.shown(text)}")
    return values


def _gain(text: str):
    if text in ("exp2", "linear"):
        return text
    try:
        return [float(p) for p in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--gain takes exp2, linear or a gain table such as 0,1,3,7, got {text!r}") from None


def _seed(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"--seed takes a whole number >= 0, got {text!r}")
    return value


def _positive(text: str) -> int:
    try:
        value = int(text.replace("_", ""))
    except ValueError:
        value = -1
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}")
    return value


def _rel(text: str) -> int:
    if not text.strip().isdigit() or int(text) > V.MAX_REL:
        raise argparse.ArgumentTypeError(f"must be an integer from 0 to {V.MAX_REL} (a label "
                                         f">= it is relevant), got {V.shown(text)}")
    return int(text)


def _add_semantics(p: _Parser) -> None:
    """The evaluation options that evaluate and compare share."""
    p.add_argument("-m", "--measure", action="append", metavar="MEASURE",
                   help="measures named as trec_eval does (-m map -m P.5,10 -m recip_rank "
                        "-m ndcg_cut.10 -m recall.1000 -m Rprec -m success.10 -m num_rel_ret) "
                        "or as ir_measures does (-m nDCG@10 -m 'AP(rel=2)' -m RR@10 -m P@5 "
                        "-m Judged@10); repeatable; instead of -k")
    p.add_argument("-l", "--rel", type=_rel, default=None, metavar="LEVEL",
                   help="relevance threshold of the binary measures: a label >= LEVEL is "
                        "relevant (trec_eval -l; default 1)")
    p.add_argument("--preset", choices=list(PRESET_NAMES),
                   help="a tool's NDCG semantics (gain, ties, zero IDCG, negative labels, "
                        "score precision); options given next to it override it")
    p.add_argument("--gain", type=_gain, default=None,
                   help="exp2 (2^label - 1), linear, or a table such as 0,1,3,7 (default exp2)")
    p.add_argument("--ties", default=None,
                   choices=["average", "stable", "optimistic", "pessimistic", "trec", "ranx"],
                   help="default average")
    p.add_argument("--zero-idcg", default=None, choices=["zero", "one", "nan", "error"],
                   help="default zero")
    p.add_argument("--log-base", type=float, default=None, help="default 2")
    p.add_argument("--nan-scores", default=None, choices=["error", "last"],
                   help="default error")
    p.add_argument("--negative-labels", default=None, choices=["error", "zero", "keep"],
                   help="default error")
    p.add_argument("--score-precision", default=None, choices=["float64", "float32"],
                   help="compare scores as given (float64, default) or rounded to float32 "
                        "(pytrec_eval, trec_eval 9.x)")
    p.add_argument("--complete", action="store_true",
                   help="score judged queries missing from the run as 0 (trec_eval -c)")
    p.add_argument("--query-col", default="query_id", metavar="COLUMN",
                   help="the column of query ids (of the log or run, and of Parquet qrels)")
    p.add_argument("--doc-col", default="doc_id", metavar="COLUMN",
                   help="the column of document ids, read in qrels mode and by --ties trec")
    p.add_argument("--label-col", default="label", metavar="COLUMN",
                   help="the column of relevance labels (of the log, or of Parquet qrels)")


def _parser() -> _Parser:
    parser = _Parser(prog=_PROG, description="NDCG@k for search logs at scale.")
    sub = parser.add_subparsers(dest="command",
                                metavar="{evaluate,compare,trec_eval,demo,warmup,synth}",
                                parser_class=_Parser)
    sub.required = True
    # listed for --help only: main() hands "trec_eval ..." to fastndcg.treceval first
    sub.add_parser("trec_eval", add_help=False,
                   help="trec_eval's command line (trec_eval [-q] [-c] [-m MEASURE]... QRELS "
                        "RUN), its output byte for byte; fastndcg trec_eval -h for more")

    ev = sub.add_parser("evaluate", help="NDCG@k (and any other measure) of a Parquet log, or "
                                         "of TREC runs with --qrels",
                        description="NDCG@k, AP, RR, P@k, R@k and the other measures of every "
                                    "query of a search log (Parquet file, directory or glob) "
                                    "or, with --qrels, of one or many runs (TREC or Parquet). "
                                    "Several runs are evaluated in one process, the qrels read "
                                    "once, and printed one row per run with its runid (the run "
                                    "tag of a TREC run file when all its lines have one, else "
                                    "the file name; --runid file for file names; NAME=PATH "
                                    "names a run). --format json prints one object a run, a "
                                    "line each; --per-query writes every run's queries to one "
                                    "file or directory, runid first. One input prints one row (or "
                                    "one JSON object), without runid.",
                        epilog="examples: fastndcg evaluate 'runs/*.run' --qrels qrels.txt "
                               "--preset trec_eval -m ndcg_cut.10 -m map   |   fastndcg "
                               "evaluate bm25=a.run rm3=b.run --qrels qrels.txt --format json")
    ev.add_argument("source", nargs="+",
                    help="Parquet file, directory or glob (one log); with --qrels one or more "
                         "runs (TREC or Parquet): each file a glob matches is a run (globs are "
                         "expanded here too, sorted, so quoting them works), NAME=PATH names one")
    ev.add_argument("--qrels", help="judgments: TREC qrels file (qid iter docno rel) or Parquet")
    ev.add_argument("--runid", choices=["tag", "file"], default="tag",
                    help="how several runs are named: tag (default; the run tag of a TREC run "
                         "file when all its lines have one, else the file name) or file (the "
                         "file name); two runs with one runid are an error")
    ev.add_argument("-k", type=_cutoffs, default=_K_UNSET,
                    help="cutoffs, comma-separated, or 'all' (default 1,3,5,10)")
    _add_semantics(ev)
    ev.add_argument("--score-col", default="score", metavar="COLUMN",
                    help="the column of scores: the higher, the better the rank")
    ev.add_argument("--explain", nargs="?", const="all", metavar="KINDS",
                    help="per-query columns explaining each score (with --per-query): all, or "
                         "some of dcg,idcg,n_relevant,n_judged,judged")
    ev.add_argument("--weight-col", metavar="COLUMN",
                    help="a column of query weights (constant within a query) for weighted "
                         "means, e.g. traffic")
    ev.add_argument("--per-query", metavar="OUT",
                    help="stream per-query NDCG to OUT.parquet, OUT.csv or a directory OUT "
                         "of Parquet parts (default: means only, nothing kept per query)")
    ev.add_argument("--no-per-query", action="store_true",
                    help="keep no per-query results (the default; memory stays flat)")
    ev.add_argument("--scheduler", metavar="ADDRESS",
                    help="run on the Dask cluster of this scheduler (needs fastndcg[dask]); "
                         "--per-query must then be a directory every worker can write")
    ev.add_argument("--workers", type=_positive, metavar="N",
                    help="run on a local Dask cluster of N worker processes")
    ev.add_argument("--spark", nargs="?", const="local[*]", metavar="MASTER",
                    help="run on Spark (needs fastndcg[spark]): the input is a table name "
                         "(shuffled by query) or a Parquet path (read by the executors); "
                         "MASTER defaults to local[*]; --per-query must then be a directory")
    ev.add_argument("--order-col", metavar="COLUMN",
                    help="with --spark: the column whose order is the input order "
                         "(needed by --ties stable)")
    ev.add_argument("--format", default="table", choices=["table", "json"],
                    help="an aligned table, or JSON (one object; one a line for several runs)")
    ev.add_argument("--quiet", action="store_true", help="no progress bar")

    cm = sub.add_parser("compare", help="compare rankers: intervals, paired tests, segments",
                        description="Compare systems on the same queries: mean NDCG@k with "
                                    "bootstrap intervals, and against the baseline the mean "
                                    "difference, effect size, paired randomization / t / "
                                    "Wilcoxon p-values (corrected) and wins/ties/losses.")
    cm.add_argument("inputs", nargs="+", metavar="LOG_OR_RUNS",
                    help="a Parquet log with --systems, or with --qrels two or more runs "
                         "(TREC or Parquet; NAME=PATH names a run)")
    cm.add_argument("--systems", metavar="COLS",
                    help="score columns of the log, comma-separated (at least two)")
    cm.add_argument("--qrels", help="judgments: compare the runs given against them")
    cm.add_argument("--baseline", help="the system the others are tested against "
                                       "(default: the first)")
    cm.add_argument("--segment", metavar="COLUMN",
                    help="repeat everything for each value of this column of the log")
    cm.add_argument("-k", type=_cutoffs, default=[10],
                    help="cutoff(s), comma-separated (default 10); each is tested")
    cm.add_argument("--confidence", type=float, default=0.95, help="default 0.95")
    cm.add_argument("--resamples", type=_positive, default=10_000,
                    help="bootstrap and randomization resamples (default 10000)")
    cm.add_argument("--seed", type=_seed, default=0,
                    help="seed of the resampling: the same seed gives the same numbers")
    cm.add_argument("--tests", default=None,
                    help="some of randomization,t,wilcoxon (default: all those the method "
                         "has; above 1,000,000 queries randomization,t)")
    cm.add_argument("--method", default="auto", choices=["auto", "queries", "buckets"],
                    help="auto: query by query up to 1,000,000 queries, over hashed buckets "
                         "of queries above (memory flat); queries / buckets: always that")
    cm.add_argument("--buckets", type=_positive, default=1000,
                    help="hashed buckets of queries of the bucket method (default 1000)")
    cm.add_argument("--scheduler", metavar="ADDRESS",
                    help="run on the Dask cluster of this scheduler (needs fastndcg[dask])")
    cm.add_argument("--workers", type=_positive, metavar="N",
                    help="run on a local Dask cluster of N worker processes")
    cm.add_argument("--spark", nargs="?", const="local[*]", metavar="MASTER",
                    help="run on Spark (needs fastndcg[spark]): the log is a table name or "
                         "a Parquet path; MASTER defaults to local[*]")
    cm.add_argument("--order-col", metavar="COLUMN",
                    help="with --spark: the column whose order is the input order "
                         "(needed by --ties stable on a shuffle)")
    cm.add_argument("--correction", default="holm", choices=["holm", "bonferroni", "bh", "none"],
                    help="correction of the p-values for multiple comparisons (bh: "
                         "Benjamini-Hochberg)")
    _add_semantics(cm)
    cm.add_argument("--plot", metavar="OUT.png", help="draw the comparison (needs matplotlib)")
    cm.add_argument("--format", default="table", choices=["table", "json", "markdown", "latex"],
                    help="how the tables are printed")
    cm.add_argument("--quiet", action="store_true", help="no progress bar")

    demo = sub.add_parser("demo", help="build a synthetic log, evaluate it, compare with the "
                                       "pure-Python reference",
                          description="Build a seeded synthetic search log, evaluate it, and show "
                                      "the time next to the pure-Python reference on a sample.")
    demo.add_argument("--queries", type=_positive, default=1_000_000,
                      help="queries in the synthetic log (about 50 rows each)")
    demo.add_argument("--seed", type=_seed, default=0, help="seed of the synthetic log")
    demo.add_argument("--sample", type=_positive, default=1000,
                      help="queries scored by the pure-Python reference (default 1000)")
    demo.add_argument("--keep", metavar="FILE.parquet", help="keep the log here")
    demo.add_argument("--quiet", action="store_true", help="no progress bar")

    warm = sub.add_parser("warmup", help="compile every kernel variant into the cache (for "
                                         "images, CI caches and cluster workers)",
                          description="Compile (or load) every kernel variant fastndcg can reach "
                                      "into the compile cache, so no later process compiles.")
    warm.add_argument("--portable", action="store_true",
                      help="code for a generic CPU of this architecture, so one cache serves "
                           "every machine; marks the cache so later processes use it, and "
                           "measures the speed it costs against code for this CPU")
    warm.add_argument("--jobs", type=_positive, default=None,
                      help="processes compiling at once (default: one per core); the same "
                           "CPU time, less waiting")
    warm.add_argument("--quiet", action="store_true", help="no progress bar")

    synth = sub.add_parser("synth", help="write a seeded synthetic search log to Parquet")
    synth.add_argument("--queries", type=_positive, required=True, help="queries in the log")
    synth.add_argument("--out", required=True, metavar="FILE.parquet",
                       help="where to write it (an existing file is replaced only when it "
                            "is a synthetic log itself)")
    synth.add_argument("--seed", type=_seed, default=0,
                       help="the same seed gives the same log")
    synth.add_argument("--mean-docs", type=_positive, default=50,
                       help="mean rows a query (lengths uniform on 1 .. 2 x MEAN_DOCS - 1)")
    synth.add_argument("--row-group-rows", type=_positive, default=1 << 20,
                       help="rows per Parquet row group")
    synth.add_argument("--quiet", action="store_true", help="no progress bar")
    return parser


def _show_progress(args) -> bool:
    return not args.quiet and sys.stderr.isatty()


def _explain(args):
    if args.explain is None:
        return False
    return True if args.explain == "all" else args.explain


def _k(args):
    """-k as given ('all' is None); else evaluate's default cutoffs (the very object,
    so that -m can tell that -k was not given)."""
    if args.k is not _K_UNSET:
        return args.k
    from .presets import DEFAULT_K
    return DEFAULT_K


def _evaluate(args) -> int:
    from .evaluate import RunidClash, check_options, evaluate, evaluate_runs
    from .report import OutputIsInput

    options = dict(qrels=args.qrels, query=args.query_col, doc=args.doc_col,
                   score=args.score_col, label=args.label_col, k=_k(args), gain=args.gain,
                   ties=args.ties, log_base=args.log_base, zero_idcg=args.zero_idcg,
                   nan_scores=args.nan_scores, negative_labels=args.negative_labels,
                   complete=args.complete, score_precision=args.score_precision,
                   preset=args.preset, measure=args.measure, weight=args.weight_col,
                   explain=_explain(args), rel=args.rel)
    try:  # bad option values are usage errors (exit 2), bad data is not (exit 1)
        if args.k is not _K_UNSET and args.measure:
            raise ValueError("give the measures once: -k (NDCG cutoffs) or -m/--measure, not both")
        check_options(batch_rows=1 << 20, **options)
    except (ValueError, TypeError) as err:
        message = str(err).replace("complete=True", "--complete").replace("qrels=...", "--qrels")
        raise _UsageError(message) from None
    if args.explain is not None and not args.per_query:
        raise _UsageError("--explain adds per-query columns: give --per-query OUT to keep them")
    if args.per_query and args.no_per_query:
        raise _UsageError("--per-query and --no-per-query contradict each other; give one")
    engine = _engine(args)
    if engine == "spark":
        return _evaluate_on_spark(args, options)
    distributed = engine == "dask"
    if args.per_query:
        ext = os.path.splitext(args.per_query.rstrip("/" + os.sep))[1].lower()
        if ext not in ("", ".parquet", ".pq", ".csv") or (distributed and ext == ".csv"):
            what = "a directory" if distributed else "a .parquet or .csv file, or a directory"
            raise _UsageError(f"--per-query must name {what}, got {args.per_query!r}")
    runs = _inputs(args)
    if distributed and len(runs) > 1:
        raise _UsageError(f"--scheduler and --workers evaluate one log or run, got {len(runs)} "
                          f"runs; drop them to evaluate the runs here, one after another")
    per_query = args.per_query or False
    try:
        if len(runs) > 1:
            result = evaluate_runs(runs, runid=args.runid, per_query=per_query,
                                   progress=_show_progress(args), **options)
        elif distributed:
            report = _evaluate_on_dask(args, runs[0][1], {**options, "per_query": per_query})
        else:
            report = evaluate(runs[0][1], per_query=per_query, progress=_show_progress(args),
                              **options)
    except RunidClash as err:
        raise _UsageError(_clash_message(err)) from None
    except OutputIsInput as err:
        raise _UsageError(str(err)) from None  # main() writes per_query as --per-query
    if len(runs) > 1:
        if args.format == "json":  # one object a run, a line each
            for item in result.to_dicts():
                print(_json(item))
        else:
            print(f"{len(runs)} runs  (qrels {args.qrels})")
            print(result.format_table())
    elif args.format == "json":
        print(_json(report.to_dict()))
    else:
        print(f"{runs[0][1]}" + (f"  (qrels {args.qrels})" if args.qrels else ""))
        print(report.format_table())
    if args.per_query and args.format != "json":
        print(f"per-query results: {args.per_query}")
    return 0


def _json(obj: dict) -> str:
    """One line of strict JSON (NaN means are null)."""
    return json.dumps({k: (None if isinstance(v, float) and math.isnan(v) else v)
                       for k, v in obj.items()})


def _is_glob(path: str) -> bool:
    return any(ch in path for ch in "*?[") and not os.path.exists(path)


def _named(item: str) -> tuple[str | None, str]:
    """(name, path) of NAME=PATH; (None, item) for a plain path (one that exists, or
    whose part before '=' could not be a name). ``=PATH`` (an empty name) is a usage
    error, unless a file of that name exists."""
    name, sep, path = item.partition("=")
    if sep and not name and path and not os.path.exists(item):
        raise _UsageError(f"run {item!r}: the name before '=' is empty; write NAME=PATH to name "
                          f"the run, or give the path alone ({path!r})")
    if not sep or not name or os.path.exists(item) or "/" in name or os.sep in name:
        return None, item
    return name, path


def _inputs(args) -> list[tuple[str | None, str]]:
    """evaluate's inputs as (runid or None, path): a log (one, a glob of its files
    kept whole), or with --qrels runs, every file a glob matches one (sorted).
    Inputs and qrels that do not exist, and globs that match nothing, are usage
    errors, found before anything is read."""
    out: list[tuple[str | None, str]] = []
    for item in args.source:
        name, path = _named(item) if args.qrels else (None, item)
        if "://" in path:  # a URL, read through fsspec (on Dask)
            out.append((name, path))
            continue
        if _is_glob(path):
            matches = sorted(p for p in glob.glob(path, recursive=True) if os.path.isfile(p))
            if not matches:
                raise _UsageError(f"input: no files match {path!r}; check the pattern (quoted or not, "
                                  f"it is expanded here)")
            if args.qrels is None:
                out.append((None, path))  # the files of one log
            elif name is not None and len(matches) > 1:
                raise _UsageError(f"{item!r} gives one runid to the {len(matches)} files "
                                  f"{path!r} matches; name one file (NAME=PATH), or drop NAME=")
            else:
                out += [(name, m) for m in matches]
        elif not os.path.exists(path):
            raise _UsageError(f"input {path!r} does not exist; check the path")
        else:
            out.append((name, path))
    if len(out) > 1 and args.qrels is None:
        raise _UsageError(f"without --qrels, evaluate reads one log (a Parquet file, a directory, "
                          f"or a quoted glob of its files), got {len(out)} inputs; give --qrels "
                          f"to evaluate them as runs, or quote the glob to read them as one log")
    q = args.qrels
    if q is not None and "://" not in q and not os.path.exists(q) and not (
            _is_glob(q) and glob.glob(q, recursive=True)):
        raise _UsageError(f"--qrels {q!r} does not exist; check the path")
    return out


def _clash_message(err) -> str:
    fix = {"tag": "name the runs by file name (--runid file) or each as NAME=PATH",
           "file": "name each as NAME=PATH"}.get(err.origin, "give each run its own NAME=")
    return f"runs {err.first!r} and {err.second!r} both have runid {err.runid!r} ({err.why}); {fix}"


def _compare(args) -> int:
    from .compare import check_arguments, compare

    options = dict(query=args.query_col, doc=args.doc_col, label=args.label_col, k=args.k,
                   gain=args.gain, ties=args.ties, log_base=args.log_base,
                   zero_idcg=args.zero_idcg, nan_scores=args.nan_scores,
                   negative_labels=args.negative_labels, complete=args.complete,
                   score_precision=args.score_precision, preset=args.preset, rel=args.rel)
    if args.measure:
        if args.k != [10]:
            raise _UsageError("give the measures once: -k (NDCG cutoffs) or -m/--measure, not both")
        options["measure"] = args.measure
        options["k"] = 10  # compare's "k not given"
    if args.qrels is None:
        if args.systems is None:
            raise _UsageError("name the systems to compare: --systems score_a,score_b (score "
                              "columns of the log), or give --qrels and two or more runs")
        if len(args.inputs) != 1:
            raise _UsageError(f"without --qrels, compare reads one log (its score columns are "
                              f"the systems), got {len(args.inputs)} inputs; to compare runs, "
                              f"give --qrels")
        source = args.inputs[0]
        systems = [c.strip() for c in args.systems.split(",") if c.strip()]
    else:
        if args.systems is not None:
            raise _UsageError("with --qrels the systems are the runs given; drop --systems")
        if args.segment is not None:
            raise _UsageError("--segment names a column of a log; runs have none (the Python "
                              "API takes segment= as a mapping from query id to segment)")
        source = None
        systems = {}
        for item in args.inputs:
            name, path = _named(item)
            name = name or os.path.basename(path)
            if name in systems:
                raise _UsageError(f"two runs are named {name!r}; name them with NAME=PATH")
            systems[name] = path
    if args.plot:
        inputs = [_named(p)[1] for p in args.inputs] + ([args.qrels] if args.qrels else [])
        try:
            V.output_path(args.plot, "--plot", inputs, exts=V.PLOT_EXTS)
        except ValueError as err:
            raise _UsageError(str(err)) from None
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise _UsageError("--plot needs matplotlib: pip install 'fastndcg[plot]'") from None
    settings = dict(baseline=args.baseline, qrels=args.qrels, segment=args.segment,
                    confidence=args.confidence, n_resamples=args.resamples, seed=args.seed,
                    tests=args.tests, correction=args.correction, method=args.method,
                    buckets=args.buckets, **options)
    engine = _engine(args)
    if engine and args.qrels is not None:
        raise _UsageError(f"--{'spark' if engine == 'spark' else 'workers/--scheduler'} "
                          f"compare the score columns of a log; compare runs against --qrels "
                          f"on this machine (drop the flag)")
    try:  # bad option values are usage errors (exit 2), bad data is not (exit 1)
        check_arguments(systems, **settings)
    except (ValueError, TypeError) as err:
        text = str(err)
        for api, flag in (("baseline=", "--baseline "),
                          ("complete=True", "--complete"), ("tests must", "--tests must"),
                          ("confidence must", "--confidence must"), ("segment=", "--segment "),
                          ("method='buckets'", "--method buckets"),
                          ("method='queries'", "--method queries"),
                          ("method='auto'", "--method auto"), ("buckets must", "--buckets must")):
            text = text.replace(api, flag)
        raise _UsageError(text) from None
    if engine == "spark":
        result = _on_spark(args, lambda spark, fspark: fspark.compare(
            source, systems, spark=spark, order=args.order_col, **settings))
    elif engine == "dask":
        result = _on_dask(args, lambda fdask, **where: fdask.compare(
            source, systems, **where, **settings))
    else:
        result = compare(source, systems, progress=_show_progress(args), **settings)
    if args.format == "json":
        print(json.dumps(result.to_dict()))
    elif args.format == "markdown":
        print(result.to_markdown())
    elif args.format == "latex":
        print(result.to_latex())
    else:
        print(result.format_table())
    if args.plot:
        result.plot(args.plot)
        if args.format == "table":
            print(f"plot: {args.plot}")
    return 0


def _engine(args) -> str | None:
    """Where the work runs: "spark", "dask" or None (here); contradictory flags are
    usage errors."""
    if args.scheduler and args.workers:
        raise _UsageError("--scheduler (an existing cluster) and --workers (a new local one) "
                          "contradict each other; give one")
    if args.spark is not None and (args.scheduler or args.workers):
        raise _UsageError("--spark and --scheduler/--workers choose different engines; give one")
    if args.order_col is not None and args.spark is None:
        raise _UsageError("--order-col is read by --spark only (one machine keeps the input "
                          "order); drop it, or add --spark")
    if args.spark is not None:
        return "spark"
    return "dask" if (args.scheduler or args.workers) else None


def _evaluate_on_spark(args, options: dict) -> int:
    if len(args.source) > 1:
        raise _UsageError(f"--spark evaluates one table or path, got {len(args.source)} inputs")
    if args.per_query and os.path.splitext(args.per_query.rstrip("/"))[1]:
        raise _UsageError(f"--per-query must name a directory with --spark (the executors "
                          f"write Parquet parts there), got {args.per_query!r}")
    source = args.source[0]
    report = _on_spark(args, lambda spark, fspark: fspark.evaluate(
        source, spark=spark, order=args.order_col, per_query=args.per_query or False,
        **options))
    if args.format == "json":
        print(_json(report.to_dict()))
    else:
        print(f"{source}  (Spark {args.spark})" + (f"  (qrels {args.qrels})" if args.qrels else ""))
        print(report.format_table())
        if args.per_query:
            print(f"per-query results: {args.per_query}")
    return 0


def _on_spark(args, run):
    """``run(spark, fastndcg.spark)`` in a Spark session of master ``--spark``, Spark's
    own log kept out of the terminal (and left in a file when something failed)."""
    try:
        from pyspark.sql import SparkSession
        from . import spark as fspark
    except ImportError:
        raise ValueError("--spark needs pyspark: pip install 'fastndcg[spark]'") from None
    if not re.fullmatch(r"local(\[(\*|\d+)(,\s*\d+)?\])?|(spark|k8s|mesos)://\S+|yarn",
                        args.spark):
        raise _UsageError(f"--spark takes a Spark master URL (local, local[4], local[*], "
                          f"spark://host:7077, yarn, k8s://...), got {V.shown(args.spark)}")
    import warnings
    warnings.filterwarnings("ignore", category=FutureWarning, module="pyspark")
    # the JVM Spark starts inherits this stderr for its life: its banner and log go to
    # a file, so the command's own output and errors stay one line each
    log = tempfile.NamedTemporaryFile(prefix="fastndcg-spark-", suffix=".log", delete=False)
    saved = os.dup(2)
    try:
        sys.stderr.flush()
        os.dup2(log.fileno(), 2)
        spark = (SparkSession.builder.master(args.spark).appName("fastndcg")
                 .config("spark.ui.showConsoleProgress", "false").getOrCreate())
    except Exception as err:  # the JVM's errors reach Python as Py4J exceptions
        first = " ".join(str(err).strip().splitlines()[0].split()) if str(err).strip() else ""
        raise ValueError(f"cannot start Spark with master {args.spark!r}: "
                         f"{first or type(err).__name__} (Spark's log: {log.name})") from None
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        log.close()
    spark.sparkContext.setLogLevel("ERROR")
    try:
        out = run(spark, fspark)
    except fspark.SparkJobFailed as err:
        raise ValueError(f"{err} (Spark's log: {log.name})") from None  # one line, exit 1
    finally:
        spark.stop()
    os.unlink(log.name)  # nothing went wrong: Spark's log is of no use
    return out


def _evaluate_on_dask(args, source: str, options: dict):
    return _on_dask(args, lambda fdask, **where: fdask.evaluate(source, **where, **options))


def _on_dask(args, run):
    """``run(fastndcg.dask, workers=N)`` or ``run(fastndcg.dask, client=Client)``
    (``--scheduler``), the client closed afterwards."""
    try:
        import distributed
        from . import dask as fdask
    except ImportError:
        raise ValueError("--scheduler and --workers need Dask: pip install 'fastndcg[dask]'") from None
    if args.workers:
        return run(fdask, workers=args.workers)
    try:
        client = distributed.Client(args.scheduler, timeout=10)
    except (OSError, ValueError, TypeError) as err:
        raise ValueError(f"cannot reach the Dask scheduler at {args.scheduler!r}: "
                         f"{' '.join(str(err).split()) or type(err).__name__}; check the "
                         f"address (e.g. tcp://host:8786)") from None
    with client:
        return run(fdask, client=client)


def _synth(args) -> int:
    from ._progress import Progress
    from .synth import write_synthetic_log

    from .synth import check_replaceable, check_size

    try:
        V.output_path(args.out, "--out", exts=(".parquet", ".pq"))
        check_size(args.queries, args.mean_docs, args.out)
        check_replaceable(args.out, "--out")
    except ValueError as err:
        raise _UsageError(str(err)) from None
    bar = Progress(None, enabled=_show_progress(args))
    t = time.perf_counter()
    rows = write_synthetic_log(args.out, args.queries, seed=args.seed, mean_docs=args.mean_docs,
                               row_group_rows=args.row_group_rows, on_block=bar.update)
    bar.close()
    print(f"wrote {args.out}: {args.queries:,} queries, {rows:,} rows "
          f"({time.perf_counter() - t:.1f} s)")
    return 0


def _demo(args) -> int:
    import numpy as np
    import pyarrow.parquet as pq

    from . import reference
    from ._arrow import as_numpy
    from ._progress import Progress
    from .evaluate import evaluate
    from .synth import check_replaceable, synthetic_log, write_synthetic_log

    k = [1, 3, 5, 10]
    if args.keep is not None:
        try:
            V.output_path(args.keep, "--keep", exts=(".parquet", ".pq"))
            check_replaceable(args.keep, "--keep")
        except ValueError as err:
            raise _UsageError(str(err)) from None
    with tempfile.TemporaryDirectory(prefix="fastndcg-demo-") as tmp:
        path = args.keep or os.path.join(tmp, "demo-log.parquet")
        print(f"1. building a synthetic search log: {args.queries:,} queries (seed {args.seed})")
        bar = Progress(None, enabled=_show_progress(args))
        t = time.perf_counter()
        rows = write_synthetic_log(path, args.queries, seed=args.seed, on_block=bar.update)
        bar.close()
        size = os.path.getsize(path)
        print(f"   {rows:,} rows, {size / 2**20:,.0f} MiB Parquet, written in "
              f"{time.perf_counter() - t:.1f} s{'' if not args.keep else f' to {path}'}")

        t = time.perf_counter()
        evaluate(synthetic_log(3, seed=args.seed), k=k)  # compiles once, then from the cache
        print(f"2. fastndcg.evaluate, k={k}, gain=exp2, ties=average (kernels ready in "
              f"{time.perf_counter() - t:.1f} s: compiled on the first run, then loaded "
              f"from the cache)")
        report = evaluate(path, k=k, progress=_show_progress(args))
        print("   " + report.format_table().replace("\n", "\n   "))

        n_sample = min(args.sample, report.n_queries)
        print(f"3. the pure-Python reference (fastndcg.reference) on the first {n_sample:,} queries")
        first = pq.ParquetFile(path).iter_batches(batch_size=max(1, n_sample) * 200,
                                                  columns=["query_id", "score", "label"])
        batch = next(first)
        qid = as_numpy(batch.column("query_id"), zero_copy_only=True)
        take = int(np.searchsorted(qid, qid[0] + n_sample))
        scores = as_numpy(batch.column("score"), zero_copy_only=True)[:take].tolist()
        labels = as_numpy(batch.column("label"), zero_copy_only=True)[:take].tolist()
        ids = qid[:take].tolist()
        t = time.perf_counter()
        expected = reference.ndcg(scores, labels, query_ids=ids, k=k)
        ref_seconds = time.perf_counter() - t
        got = np.column_stack([as_numpy(report.per_query.column(f"ndcg@{c}"))[:n_sample]
                               for c in k])
        diff = float(np.abs(np.asarray(expected) - got).max()) if n_sample else 0.0
        per_row = ref_seconds / max(take, 1)
        estimate = per_row * report.n_rows
        print(f"   {take:,} rows in {ref_seconds:.2f} s ({take / max(ref_seconds, 1e-9) / 1e3:,.0f}k "
              f"rows/s); largest difference from fastndcg: {diff:.1e}")
        print(f"   the whole log would take the reference about {estimate:,.0f} s: fastndcg "
              f"was {estimate / report.seconds:,.0f}x faster ({report.seconds:.2f} s end to end, "
              f"reading Parquet included)")
        if diff > 1e-12:
            raise ValueError(f"fastndcg and the reference differ by {diff:.3g} on the sample")
    return 0


def _refuse_empty(args, parser) -> None:
    """An option given an empty or blank value is an error, never "not given"."""
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    flags = {a.dest: (a.option_strings[-1] if a.option_strings else "an input")
             for a in sub.choices[args.command]._actions}
    for action in sub.choices[args.command]._actions:  # argparse takes "--opt=--" as []
        value = getattr(args, action.dest, None)
        if (isinstance(action, argparse._StoreAction) and action.option_strings
                and action.nargs is None and action.type is None
                and value is not None and not isinstance(value, str)):
            raise _UsageError(f"{action.option_strings[-1]} takes one value and got none "
                              f"({V.shown(value)}: a lone '--' ends the options); give a value")
    for dest, value in vars(args).items():
        for v in value if isinstance(value, list) else [value]:
            if isinstance(v, str):
                try:
                    V.text(v, flags.get(dest, dest), what="a value")
                except ValueError as err:
                    raise _UsageError(str(err)) from None


def _warmup(args) -> int:
    from .warmup import speed_check, warmup

    jobs = args.jobs or max(1, min(os.cpu_count() or 1, 9))
    report = warmup(portable=args.portable, progress=not args.quiet, jobs=jobs)
    print(report.describe())
    if args.portable:
        print(speed_check())
    return 0


def _as_flags(message: str, parser, command: str | None) -> str:
    """The Python API's parameter names in a message, written as this command's flags
    (``log_base`` -> ``--log-base``): the same check gives the same text everywhere."""
    if not command:
        return message
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    flags = {a.dest: a.option_strings[-1] for a in sub.choices[command]._actions
             if a.option_strings and "_" in a.dest}
    dests = {a.dest for a in sub.choices[command]._actions}
    if "resamples" in dests:
        flags["n_resamples"] = "--resamples"
    if "query_col" in dests:  # the column parameters, where a message speaks of the parameter
        columns = "|".join(c for c in ("query", "doc", "score", "label", "weight")
                           if f"{c}_col" in dests)
        message = re.sub(rf"(?<![\w'-])({columns})(?=( must\b| is empty\b| contains a NUL|=))",
                         lambda m: flags.get(f"{m.group(1)}_col", m.group(1)), message)
    if not flags:
        return message
    names = "|".join(sorted(flags, key=len, reverse=True))
    # name='value' (Python) becomes --flag value (the shell)
    return re.sub(rf"(?<![\w-])({names})\b(?:=(['\"]?)([\w.+-]+)\2)?",
                  lambda m: flags[m.group(1)] + (f" {m.group(3)}" if m.group(3) else ""), message)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``fastndcg`` command (``python -m fastndcg``)."""
    import pyarrow as pa

    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["trec_eval"]:  # trec_eval's own command line, not argparse's
        from .treceval import main as trec_eval_main
        return trec_eval_main(argv[1:])
    parser, command = _parser(), None
    try:
        args = parser.parse_args(argv)
        command = args.command
        _refuse_empty(args, parser)
        return {"evaluate": _evaluate, "compare": _compare, "demo": _demo,
                "synth": _synth, "warmup": _warmup}[args.command](args)
    except _UsageError as err:
        print(f"{_PROG}: error: {_as_flags(str(err), parser, command)}", file=sys.stderr)
        return 2
    except (ValueError, TypeError, OSError, pa.ArrowException) as err:
        message = " ".join(str(err).split()) or type(err).__name__
        print(f"{_PROG}: error: {_as_flags(message, parser, command)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{_PROG}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
