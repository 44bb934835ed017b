"""The handlers of ``fastndcg evaluate``, ``compare``, ``agreement``, ``synth`` and
``warmup``: parsed arguments in, output printed, the exit status out. Option values
that are wrong whatever the data are usage errors (:class:`~fastndcg.cli.parser.UsageError`,
exit status 2), found before anything is read.
"""

from __future__ import annotations

import glob
import json
import math
import os
import time

from .. import _validate as V
from .. import options as O
from ..presets import DEFAULT_K
from .engines import engine, on_dask, on_spark
from .parser import COMPARE_K, UsageError, show_progress


def run_evaluate(args) -> int:
    from .._evaluate import RunidClash, check_options, evaluate, evaluate_runs
    from ..report import OutputIsInput

    try:
        options = O.from_args(args)
    except ValueError as err:  # --qrels NAME=PATH given twice, ...
        raise UsageError.of(err) from None
    args.qrels = options["qrels"]
    try:  # bad option values are usage errors (exit 2), bad data is not (exit 1)
        if args.k is not DEFAULT_K and args.measure:
            raise ValueError("give the measures once: -k (NDCG cutoffs) or -m/--measure, not both")
        check_options(batch_rows=1 << 20, **options)
    except (ValueError, TypeError) as err:  # OptionErrors render with the flags
        raise UsageError.of(err) from None
    if options["explain"] and not args.per_query:
        raise UsageError("--explain adds per-query columns: give --per-query OUT to keep them")
    if args.per_query and args.no_per_query:
        raise UsageError("--per-query and --no-per-query contradict each other; give one")
    place = engine(args)
    if place == "spark":
        return _evaluate_on_spark(args, options)
    distributed = place == "dask"
    if args.per_query:
        ext = os.path.splitext(args.per_query.rstrip("/" + os.sep))[1].lower()
        if ext not in ("", ".parquet", ".pq", ".csv") or (distributed and ext == ".csv"):
            what = "a directory" if distributed else "a .parquet or .csv file, or a directory"
            raise UsageError(f"--per-query must name {what}, got {args.per_query!r}")
    runs = _inputs(args)
    if distributed and len(runs) > 1:
        raise UsageError(f"--scheduler and --workers evaluate one log or run, got {len(runs)} "
                         f"runs; drop them to evaluate the runs here, one after another")
    if len(runs) > 1 and options.get("human_qrels") is not None:
        raise UsageError(f"--human-qrels gives prediction-powered means one run at a time, and "
                         f"{len(runs)} runs were given; run fastndcg evaluate once for each run "
                         f"with --human-qrels, or drop --human-qrels here")
    per_query = args.per_query or False
    try:
        if len(runs) > 1:
            # (the options of prediction-powered means, refused above, are left at rest)
            taken = {n: v for n, v in options.items()
                     if n in O.ENTRY_POINTS["fastndcg.evaluate_runs"].takes}
            result = evaluate_runs(runs, runid=args.runid, per_query=per_query,
                                   progress=show_progress(args), **taken)
        elif distributed:
            report = on_dask(args, lambda fdask, **where: fdask.evaluate(
                runs[0][1], **where, per_query=per_query, **options))
        else:
            report = evaluate(runs[0][1], per_query=per_query, progress=show_progress(args),
                              **options)
    except RunidClash as err:
        raise UsageError(_clash_message(err)) from None
    except OutputIsInput as err:
        raise UsageError.of(err) from None  # main() writes per_query as --per-query
    qrels = _shown_qrels(args.qrels)
    if len(runs) > 1:
        if args.format == "json":  # one object a run (run and label set), a line each
            for item in result.to_dicts():
                print(_json(item))
        else:
            print(f"{len(runs)} runs  (qrels {qrels})")
            print(result.format_table())
    elif args.format == "json":
        _print_json(report, args.qrels)
    else:
        print(f"{runs[0][1]}" + (f"  (qrels {qrels})" if args.qrels else ""))
        print(report.format_table())
    if args.per_query and args.format != "json":
        print(f"per-query results: {args.per_query}")
    return 0


def _print_json(report, qrels) -> None:
    """The report of one run as JSON: one object, or one a label set (``qrels`` a
    dict of them), a line each."""
    for item in report.to_dicts() if isinstance(qrels, dict) else [report.to_dict()]:
        print(_json(item))


def _json(obj: dict) -> str:
    """One line of strict JSON (NaN means are null)."""
    return json.dumps({k: (None if isinstance(v, float) and math.isnan(v) else v)
                       for k, v in obj.items()})


def _is_glob(path: str) -> bool:
    return any(ch in path for ch in "*?[") and not os.path.exists(path)


def _named(item: str) -> tuple[str | None, str]:
    """(name, path) of a run given as NAME=PATH, or (None, path): see
    :func:`fastndcg.options.split_named`; an empty name is a usage error."""
    try:
        return O.split_named(item)
    except ValueError as err:
        raise UsageError.of(err) from None


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
                raise UsageError(f"input: no files match {path!r}; check the pattern (quoted or not, "
                                 f"it is expanded here)")
            if args.qrels is None:
                out.append((None, path))  # the files of one log
            elif name is not None and len(matches) > 1:
                raise UsageError(f"{item!r} gives one runid to the {len(matches)} files "
                                 f"{path!r} matches; name one file (NAME=PATH), or drop NAME=")
            else:
                out += [(name, m) for m in matches]
        elif not os.path.exists(path):
            raise UsageError(f"input {path!r} does not exist; check the path")
        else:
            out.append((name, path))
    if len(out) > 1 and args.qrels is None:
        raise UsageError(f"without --qrels, evaluate reads one log (a Parquet file, a directory, "
                         f"or a quoted glob of its files), got {len(out)} inputs; give --qrels "
                         f"to evaluate them as runs, or quote the glob to read them as one log")
    sets = args.qrels if isinstance(args.qrels, dict) else {None: args.qrels}
    for name, q in sets.items():
        if q is not None and "://" not in q and not os.path.exists(q) and not (
                _is_glob(q) and glob.glob(q, recursive=True)):
            shown = q if name is None else f"{name}={q}"
            raise UsageError(f"--qrels {shown!r} does not exist; check the path")
    return out


def _shown_qrels(qrels) -> str | None:
    """--qrels as the output's header line names it: the path, or NAME=PATH, ..."""
    if isinstance(qrels, dict):
        return ", ".join(f"{name}={path}" for name, path in qrels.items())
    return qrels


def _clash_message(err) -> str:
    fix = {"tag": "name the runs by file name (--runid file) or each as NAME=PATH",
           "file": "name each as NAME=PATH"}.get(err.origin, "give each run its own NAME=")
    return f"runs {err.first!r} and {err.second!r} both have runid {err.runid!r} ({err.why}); {fix}"


def run_compare(args) -> int:
    from .._compare import check_arguments, compare

    options = O.from_args(args, compared=True)
    if args.measure:
        if args.k != COMPARE_K:
            raise UsageError("give the measures once: -k (NDCG cutoffs) or -m/--measure, not both")
        options["k"] = 10  # compare's "k not given"
    log = args.qrels is None or args.systems is not None  # (with --qrels: its documents')
    if log:
        if args.systems is None:
            raise UsageError("name the systems to compare: --systems score_a,score_b (score "
                             "columns of the log), or give --qrels and two or more runs")
        if len(args.inputs) != 1:
            raise UsageError(f"with --systems, compare reads one log (its score columns are "
                             f"the systems), got {len(args.inputs)} inputs; to compare runs, "
                             f"give --qrels and drop --systems")
        source = args.inputs[0]
        systems = [c.strip() for c in args.systems.split(",") if c.strip()]
    else:
        if args.segment is not None:
            raise UsageError("--segment names a column of a log; runs have none (the Python "
                             "API takes segment= as a mapping from query id to segment)")
        source = None
        systems = {}
        for item in args.inputs:
            name, path = _named(item)
            name = name or os.path.basename(path)
            if name in systems:
                raise UsageError(f"two runs are named {name!r}; name them with NAME=PATH")
            systems[name] = path
    if args.plot:
        inputs = [_named(p)[1] for p in args.inputs] + ([args.qrels] if args.qrels else [])
        try:
            V.output_path(args.plot, "--plot", inputs, exts=V.PLOT_EXTS)
        except ValueError as err:
            raise UsageError.of(err) from None
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise UsageError("--plot needs matplotlib: pip install 'fastndcg[plot]'") from None
    settings = dict(baseline=args.baseline, segment=args.segment,
                    confidence=args.confidence, n_resamples=args.resamples, seed=args.seed,
                    tests=args.tests, correction=args.correction, method=args.method,
                    buckets=args.buckets, **options)
    place = engine(args)
    if place and not log:
        raise UsageError(f"--{'spark' if place == 'spark' else 'workers/--scheduler'} "
                         f"compare the score columns of a log (--systems); compare runs "
                         f"against --qrels on this machine (drop the flag)")
    try:  # bad option values are usage errors (exit 2), bad data is not (exit 1)
        check_arguments(systems, log, **settings)
    except (ValueError, TypeError) as err:  # OptionErrors render with the flags
        raise UsageError.of(err) from None
    if place == "spark":
        result = on_spark(args, lambda spark, fspark: fspark.compare(
            source, systems, spark=spark, order=args.order_col, **settings))
    elif place == "dask":
        result = on_dask(args, lambda fdask, **where: fdask.compare(
            source, systems, **where, **settings))
    else:
        result = compare(source, systems, progress=show_progress(args), **settings)
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


def run_agreement(args) -> int:
    from .._agreement import agreement
    from .._evaluate import RunidClash, check_options

    options = O.from_args(args)
    if args.k is not DEFAULT_K and args.measure:
        raise UsageError("give the measures once: -k (NDCG cutoffs) or -m/--measure, not both")
    if args.runs is None and (args.measure or args.k is not DEFAULT_K):
        raise UsageError("-m/--measure and -k score runs: give two or more with --runs, or "
                         "drop them to compare the labels only")
    if args.runs is not None and len(args.runs) < 2:
        raise UsageError(f"--runs needs two or more runs to compare the orders of systems, got "
                         f"{len(args.runs)}; give more, or drop --runs to compare the labels only")
    sets = [_named(item) for item in args.sets]
    runs = [_named(item) for item in args.runs or []]
    for _, path in sets + runs:
        if "://" not in path and not os.path.exists(path):
            raise UsageError(f"input {path!r} does not exist; check the path")
    names = None
    if sets[0][0] or sets[1][0]:
        names = tuple(name or os.path.basename(path) for name, path in sets)
    try:  # bad option values are usage errors (exit 2), bad data is not (exit 1)
        check_options(batch_rows=1 << 20, **{**options, "qrels": sets[0][1]})
        if args.per_query:
            V.output_path(args.per_query, "--per-query", [p for _, p in sets + runs],
                          exts=(".parquet", ".pq", ".csv"))
    except (ValueError, TypeError) as err:
        raise UsageError.of(err) from None
    given = {k: v for k, v in options.items() if not (k == "k" and v is DEFAULT_K)}
    try:
        result = agreement(sets[0][1], sets[1][1], runs=runs or None, runid=args.runid,
                           names=names, **given)
    except RunidClash as err:
        raise UsageError(_clash_message(err)) from None
    if args.per_query:
        result.write(args.per_query)
    if args.format == "json":
        print(json.dumps(result.to_dict()))
    else:
        print(result.format_table())
        if args.per_query:
            print(f"per-query results: {args.per_query}")
    return 0


def _evaluate_on_spark(args, options: dict) -> int:
    if len(args.source) > 1:
        raise UsageError(f"--spark evaluates one table or path, got {len(args.source)} inputs")
    if args.per_query and os.path.splitext(args.per_query.rstrip("/"))[1]:
        raise UsageError(f"--per-query must name a directory with --spark (the executors "
                         f"write Parquet parts there), got {args.per_query!r}")
    source = args.source[0]
    report = on_spark(args, lambda spark, fspark: fspark.evaluate(
        source, spark=spark, order=args.order_col, per_query=args.per_query or False,
        **options))
    if args.format == "json":
        _print_json(report, args.qrels)
    else:
        print(f"{source}  (Spark {args.spark})"
              + (f"  (qrels {_shown_qrels(args.qrels)})" if args.qrels else ""))
        print(report.format_table())
        if args.per_query:
            print(f"per-query results: {args.per_query}")
    return 0


def run_synth(args) -> int:
    from .._progress import Progress
    from ..synth import write_synthetic_log

    from ..synth import check_replaceable, check_size

    try:
        V.output_path(args.out, "--out", exts=(".parquet", ".pq"))
        check_size(args.queries, args.mean_docs, args.out)
        check_replaceable(args.out, "--out")
    except ValueError as err:
        raise UsageError.of(err) from None
    bar = Progress(None, enabled=show_progress(args))
    t = time.perf_counter()
    rows = write_synthetic_log(args.out, args.queries, seed=args.seed, mean_docs=args.mean_docs,
                               row_group_rows=args.row_group_rows, on_block=bar.update)
    bar.close()
    print(f"wrote {args.out}: {args.queries:,} queries, {rows:,} rows "
          f"({time.perf_counter() - t:.1f} s)")
    return 0


def run_warmup(args) -> int:
    from .._warmup import speed_check, warmup

    jobs = args.jobs or max(1, min(os.cpu_count() or 1, 9))
    report = warmup(portable=args.portable, progress=not args.quiet, jobs=jobs)
    print(report.describe())
    if args.portable:
        print(speed_check())
    return 0
