"""The argument parser of the ``fastndcg`` command, and reading what it parsed.

The evaluation options' arguments (flags, help, choices, metavar, default, the
reader of their text) are generated from :data:`fastndcg.options.OPTIONS`:
``evaluate`` takes every option, ``compare`` those it passes on to every system
(``Option.compared``). The rest are the subcommands' own arguments.

Importing it loads nothing heavy: ``fastndcg --help`` reads it.
"""

from __future__ import annotations

import argparse
import re
import sys

from .. import _validate as V
from .. import options as O
from . import trec_eval

PROG = "fastndcg"
COMPARE_K = [10]  # compare's cutoffs when -k is not given (fastndcg.compare's k=10)


class UsageError(Exception):
    """A usage error: one line on stderr, exit status 2. ``refusal``: the
    :class:`~fastndcg._validate.OptionError` it reports, if any, rendered with this
    command's flags (:func:`flag_of`)."""

    def __init__(self, message, refusal: V.OptionError | None = None) -> None:
        super().__init__(str(message))
        self.refusal = refusal

    @classmethod
    def of(cls, err: Exception) -> "UsageError":
        """The usage error reporting ``err`` (its structure kept where it has one)."""
        return cls(str(err), err if isinstance(err, V.OptionError) else None)

    def render(self, parser, command: str | None) -> str:
        if self.refusal is not None:
            return self.refusal.render(flag_of(parser, command))
        return as_flags(str(self), parser, command)


_GIVEN = "_flags_given"  # the namespace's record of the flags given, while parsing


class _Once(argparse._StoreAction):
    """A flag that takes a value: given twice is an error, never the last one kept."""

    def __call__(self, parser, namespace, values, option_string=None):
        given = namespace.__dict__.setdefault(_GIVEN, set())
        if self.dest in given:
            also = "" if option_string == self.option_strings[-1] else f" (as {option_string})"
            raise UsageError(f"{self.option_strings[-1]} is given twice{also}; give it once")
        given.add(self.dest)
        setattr(namespace, self.dest, values)


class _OnceSwitch(argparse._StoreTrueAction):
    """A switch: given twice is an error (as a flag that takes a value is)."""

    def __call__(self, parser, namespace, values, option_string=None):
        given = namespace.__dict__.setdefault(_GIVEN, set())
        if self.dest in given:
            raise UsageError(f"{self.option_strings[-1]} is given twice; give it once")
        given.add(self.dest)
        setattr(namespace, self.dest, True)


class _Every(argparse._StoreAction):
    """A flag that takes one or more values: given again, it takes those too."""

    def __call__(self, parser, namespace, values, option_string=None):
        given = namespace.__dict__.setdefault(_GIVEN, set())
        before = list(getattr(namespace, self.dest) or []) if self.dest in given else []
        given.add(self.dest)
        setattr(namespace, self.dest, before + list(values))


class Parser(argparse.ArgumentParser):
    """argparse's parser, with one-line errors, and every flag that takes a value
    given at most once (or, taking several, each time adding to them)."""

    def error(self, message: str):  # one line, not argparse's usage + message
        raise UsageError(f"{message} (see {self.prog} --help)")

    def add_argument(self, *args, **kwargs):
        if args and str(args[0]).startswith("-") and kwargs.get("action", "store") == "store":
            kwargs["action"] = _Every if kwargs.get("nargs") in ("+", "*") else _Once
        elif args and str(args[0]).startswith("-") and kwargs.get("action") == "store_true":
            kwargs["action"] = _OnceSwitch
        return super().add_argument(*args, **kwargs)

    def parse_known_args(self, args=None, namespace=None):
        namespace, rest = super().parse_known_args(args, namespace)
        namespace.__dict__.pop(_GIVEN, None)
        return namespace, rest


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


class OptionArguments:
    """The arguments of the evaluation options a command takes (``names``), added
    from their specification: some by name where the command wants them, then the
    rest (:meth:`add_rest`), so that a new option reaches every command that takes
    it. ``changed``: option name -> argparse settings that differ for this command."""

    def __init__(self, parser: argparse.ArgumentParser, names, **changed: dict) -> None:
        self.parser, self.left, self.changed = parser, list(names), changed

    def add(self, *names: str) -> None:
        for name in names:
            flags, kw = O.OPTIONS[name].argument()
            self.parser.add_argument(*flags, **{**kw, **self.changed.get(name, {})})
            self.left.remove(name)

    def add_rest(self) -> None:
        self.add(*self.left)


def build_parser() -> Parser:
    """The parser of the ``fastndcg`` command and its subcommands."""
    parser = Parser(prog=PROG, description="NDCG@k for search logs at scale.")
    sub = parser.add_subparsers(dest="command",
                                metavar="{evaluate,compare,agreement,trec_eval,demo,warmup,synth}",
                                parser_class=Parser)
    sub.required = True
    trec_eval.add_parser(sub)

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
                                    "one JSON object), without runid. --qrels NAME=PATH, "
                                    "repeated, scores several label sets from one reading and "
                                    "ranking of each run: a row (a JSON object) per label set, "
                                    "named in a column labels.",
                        epilog="examples: fastndcg evaluate 'runs/*.run' --qrels qrels.txt "
                               "--preset trec_eval -m ndcg_cut.10 -m map   |   fastndcg "
                               "evaluate bm25=a.run rm3=b.run --qrels qrels.txt --format json   |   "
                               "fastndcg evaluate run.txt --qrels human=h.txt --qrels llm=l.txt "
                               "-m ndcg_cut.10")
    ev.add_argument("source", nargs="+",
                    help="Parquet file, directory or glob (one log); with --qrels one or more "
                         "runs (TREC or Parquet): each file a glob matches is a run (globs are "
                         "expanded here too, sorted, so quoting them works), NAME=PATH names one")
    options = OptionArguments(ev, O.OPTIONS)
    options.add("qrels")
    ev.add_argument("--runid", choices=["tag", "file"], default="tag",
                    help="how several runs are named: tag (default; the run tag of a TREC run "
                         "file when all its lines have one, else the file name) or file (the "
                         "file name); two runs with one runid are an error")
    options.add_rest()
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
                    help="a Parquet log with --systems (judged by its label column, or by "
                         "--qrels), or with --qrels two or more runs (TREC or Parquet; "
                         "NAME=PATH names a run)")
    cm.add_argument("--systems", metavar="COLS",
                    help="score columns of the log, comma-separated (at least two)")
    options = OptionArguments(
        cm, [n for n, o in O.OPTIONS.items() if o.compared is True],
        qrels={"help": "judgments: compare the runs given against them, or with --systems "
                       "judge the log's documents", "action": "store",
               "metavar": "QRELS"},
        k={"default": COMPARE_K, "help": "cutoff(s), comma-separated (default 10); each is tested"})
    options.add("qrels")
    cm.add_argument("--baseline", help="the system the others are tested against "
                                       "(default: the first)")
    cm.add_argument("--segment", metavar="COLUMN",
                    help="repeat everything for each value of this column of the log")
    options.add("k")
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
    options.add_rest()
    cm.add_argument("--plot", metavar="OUT.png", help="draw the comparison (needs matplotlib)")
    cm.add_argument("--format", default="table", choices=["table", "json", "markdown", "latex"],
                    help="how the tables are printed")
    cm.add_argument("--quiet", action="store_true", help="no progress bar")

    ag = sub.add_parser("agreement", help="how far two label sets agree: kappa, alpha, and "
                                          "the order of systems under each",
                        description="Agreement of two label sets (qrels) on the documents both "
                                    "judged: the confusion matrix of the grades, Cohen's kappa "
                                    "(unweighted, linear, quadratic) and Krippendorff's alpha "
                                    "(nominal, ordinal, interval), overall and per query. With "
                                    "--runs, each run's mean under each set, Kendall's tau-b, "
                                    "tau_AP (the first set the reference) and Spearman's rho "
                                    "of the two orders of the systems, and the pairs whose "
                                    "order flips with their paired t-test p-values.",
                        epilog="example: fastndcg agreement human=qrels.txt llm=llm.parquet "
                               "--runs a.run b.run c.run -m ndcg_cut.10")
    ag.add_argument("sets", nargs=2, metavar="QRELS",
                    help="the two label sets (TREC qrels or Parquet; NAME=PATH names one); "
                         "the first is tau_AP's reference")
    ag.add_argument("--runs", nargs="+", metavar="RUN",
                    help="two or more runs (TREC or Parquet; NAME=PATH names one): compare the "
                         "orders of the systems under the two sets")
    ag.add_argument("--runid", choices=["tag", "file"], default="tag",
                    help="how the runs are named, as evaluate's --runid")
    options = OptionArguments(ag, list(O.ENTRY_POINTS["fastndcg.agreement"].takes))
    options.add_rest()
    ag.add_argument("--per-query", metavar="OUT",
                    help="write the statistics of each query to OUT.parquet or OUT.csv")
    ag.add_argument("--format", default="table", choices=["table", "json"],
                    help="an aligned report, or one JSON object")

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


def show_progress(args) -> bool:
    """Whether to draw a progress bar: on a terminal, without --quiet."""
    return not args.quiet and sys.stderr.isatty()


def subcommand(parser: argparse.ArgumentParser, command: str) -> argparse.ArgumentParser:
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices[command]


def refuse_empty(args, parser) -> None:
    """An option given an empty or blank value is an error, never "not given"."""
    actions = subcommand(parser, args.command)._actions
    flags = {a.dest: (a.option_strings[-1] if a.option_strings else "an input") for a in actions}
    for action in actions:  # argparse takes "--opt=--" as []
        value = getattr(args, action.dest, None)
        if (isinstance(action, argparse._StoreAction) and action.option_strings
                and action.nargs is None and action.type is None
                and value is not None and not isinstance(value, str)):
            raise UsageError(f"{action.option_strings[-1]} takes one value and got none "
                             f"({V.shown(value)}: a lone '--' ends the options); give a value")
    for dest, value in vars(args).items():
        for v in value if isinstance(value, list) else [value]:
            if isinstance(v, str):
                try:
                    V.text(v, flags.get(dest, dest), what="a value")
                except ValueError as err:
                    raise UsageError(str(err)) from None


def flag_of(parser, command: str | None):
    """``name -> flag`` of ``command``: the flag of each option (and parameter) it has
    (``ties`` -> ``--ties``, ``k`` -> ``-k``, ``n_resamples`` -> ``--resamples``),
    None for a name it has no flag for."""
    if not command:
        return lambda name: None
    by_dest = {a.dest: a.option_strings[-1] for a in subcommand(parser, command)._actions
               if a.option_strings}
    if "resamples" in by_dest:
        by_dest.setdefault("n_resamples", by_dest["resamples"])

    def flag(name: str) -> str | None:
        option = O.OPTIONS.get(name)
        if option is not None and option.flags and option.dest in by_dest:
            return option.flags[-1]
        return by_dest.get(name)
    return flag


def as_flags(message: str, parser, command: str | None) -> str:
    """The Python API's parameter names in a message, written as this command's flags
    (``log_base`` -> ``--log-base``): the same check gives the same text everywhere."""
    if not command:
        return message
    actions = subcommand(parser, command)._actions
    flags = {a.dest: a.option_strings[-1] for a in actions if a.option_strings and "_" in a.dest}
    dests = {a.dest for a in actions}
    if "resamples" in dests:
        flags["n_resamples"] = "--resamples"
    # the options whose flag spells another name (query -> --query-col): where a message
    # speaks of the parameter (those names are common words elsewhere)
    renamed = {o.name: o.flags[-1] for o in O.OPTIONS.values()
               if o.dest != o.name and o.dest in dests}
    # name=... (Python's spelling of an option, unambiguous even where the name is a
    # common word, as qrels=... or human_qrels=...) -> --flag
    spelled = {o.name: o.flags[-1] for o in O.OPTIONS.values() if o.flags and o.dest in dests
               and o.name not in renamed}
    if spelled:
        message = re.sub(rf"(?<![\w'-])({'|'.join(sorted(spelled, key=len, reverse=True))})"
                         rf"=\.\.\.", lambda m: spelled[m.group(1)], message)
    if renamed:  # "doc= / --doc-col" (a message naming both spellings): the flag alone
        message = re.sub(rf"(?<![\w'-])(?:{'|'.join(renamed)})= / (--[\w-]+)", r"\1", message)
        message = re.sub(rf"(?<![\w'-])({'|'.join(renamed)})"
                         rf"(?=( must\b| is empty\b| contains a NUL|=))",
                         lambda m: renamed[m.group(1)], message)
    if not flags:
        return message
    names = "|".join(sorted(flags, key=len, reverse=True))
    # name='value' (Python) becomes --flag value (the shell)
    return re.sub(rf"(?<![\w-])({names})\b(?:=(['\"]?)([\w.+-]+)\2)?",
                  lambda m: flags[m.group(1)] + (f" {m.group(3)}" if m.group(3) else ""), message)
