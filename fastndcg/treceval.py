"""``fastndcg trec_eval``: trec_eval's command line, computed by fastndcg.

It reads trec_eval's arguments (``[-q] [-c] [-J] [-n] [-l N] [-M N] [-N N] [-m MEASURE[.PARAMS]]...
QRELS RUN``, the nicknames ``official``, ``set`` and ``all_trec``) and prints what trec_eval 10
prints, byte for byte: per query (``-q``) the lines of each query, in the string
order of the query ids of the qrels, measures in trec_eval's table order (not the
order of ``-m``), then the ``all`` lines; three columns, the name padded to 22
characters (longer names are not cut), trec_eval's number formats (``%6.4f``,
``%ld`` for the counts, ``nan`` and ``-nan`` as C prints them) and ``runid``,
the tag of the run's last line.

trec_eval's behaviour is the specification, quirks included:

* the files are read as trec_eval's own parsers read them (see "the files" below):
  grades by C's atol ('1.5' -> 1, with one warning naming the first such line),
  scores by C's atof, '#' comments, a byte-order mark as part of the first query
  id, a run named '-' from standard input;
* trec_eval stops (exit 4) at a query of the qrels that the run lacks (without
  ``-c``), at a document listed twice, and where its table of grade counts gets no
  room (a grade past 2**31, or past the 64-bit range; a first query with no grade
  >= 0): with ``-q`` the lines of the queries before it are printed, then it stops
  here too, with a message that names the query (where trec_eval crashes instead,
  nothing is printed);
* ``-c`` scores such a query on an empty ranking, averages over every query of the
  qrels, and prints as ``num_rel``'s ``all`` line the qrels' judgments with a label
  above 0, whatever ``-l`` says;
* ``gm_map``, ``gm_bpref``, ``num_q`` and ``runid`` are printed on the ``all`` lines
  only, and ``-n`` prints no ``all`` line;
* a measure named twice with parameters takes the first; cutoffs are sorted;
* ``ndcg``, ``G``, ``ndcg_rel``, ``Rndcg`` and ``rbp`` take grade=gain pairs
  (``-m ndcg.1=0,2=3``, ``-m rbp.p=0.9,2=5``), printed as given (``ndcg_1=0,2=3``);
  a grade not listed keeps itself as its gain, and each set of gains is one pass
  over the run. The pairs where trec_eval's numbers would not follow the gains
  (:func:`fastndcg.measures.parse` says which) are refused by name.

Every value comes from :func:`fastndcg.evaluate` with ``preset="trec_eval"`` (the
same partition scorer as every other path); this module only reads the arguments
and writes the text, and ``relstring`` (trec_eval's per-query text of the first
ranks' grades: not a number, so not a measure of ``evaluate``) is read off the
run and the qrels here. Options it does not support (preference and ``qrels_jg``
files, z-scores, debugging) are refused in one line naming them.
With ``-J`` (judged documents only) or ``-M 0`` a query left with no document is
scored on an empty ranking, as trec_eval does: its ``iprec_at_recall`` at a level that rounds to
0 relevant items and its ``11pt_avg`` are C's ``-nan`` (0 / 0). Exit statuses are trec_eval's:
1 for a usage error, 2 for an unreadable or malformed input (and for inputs on
which trec_eval crashes: a NUL byte inside a line, a qrels file ending in a skipped
comment), 4 where trec_eval stops on a query.
"""

from __future__ import annotations

import getopt
import math
import sys
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .measures import REGISTRY

__all__ = ["main", "TABLE", "NICKNAMES"]

# trec_eval 10's measure table (measures.c): every name it has, in its order, the order
# of the printed lines
MEASURES_C = (
    "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
    "recip_rank", "iprec_at_recall", "P", "relstring", "recall", "infAP", "gm_bpref",
    "Rprec_mult", "utility", "11pt_avg", "binG", "G", "dcg", "ideal_dcg", "ndcg", "ndcg_rel",
    "Rndcg", "ndcg_cut", "map_cut", "relative_P", "success", "set_P", "set_relative_P",
    "set_recall", "set_map", "set_F", "num_nonrel_judged_ret", "prefs_num_prefs_poss",
    "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret", "prefs_simp", "prefs_pair",
    "prefs_avgjg", "prefs_avgjg_Rnonrel", "prefs_simp_ret", "prefs_pair_ret",
    "prefs_avgjg_ret", "prefs_avgjg_Rnonrel_ret", "prefs_simp_imp", "prefs_pair_imp",
    "prefs_avgjg_imp", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg", "yaap", "rbp", "rbp_resid",
    "unj",
)
# the lines this module writes itself, not measures of evaluate: runid (the all line
# only: the tag of the run's last line) and relstring (the per-query lines only: the
# labels of the first ranks as text)
_OWN = {"runid": "runid", "relstring": "relstring"}
# the measures of the registry, by their trec_eval names
_KINDS = {name: kind for kind in REGISTRY.values() for name in (kind.trec, kind.trec_cut)
          if name}


def _printed(name: str) -> str | None:
    """How trec_eval's ``name`` is printed: its registry row's style
    (:data:`fastndcg.measures.PRINTS`), runid or relstring, or None for a measure
    fastndcg does not compute."""
    if name in _OWN:
        return _OWN[name]
    kind = _KINDS.get(name)
    return kind.prints(name) if kind is not None else None


# trec_eval's table: name -> how it is printed (None: a measure fastndcg does not compute)
TABLE: dict[str, str | None] = {name: _printed(name) for name in MEASURES_C}

NICKNAMES: dict[str, tuple] = {
    "official": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map",
                 "Rprec", "bpref", "recip_rank", "iprec_at_recall", "P"),
    "set": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P",
            "set_recall", "set_relative_P", "set_map", "set_F"),
    "all_trec": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map",
                 "Rprec", "bpref", "recip_rank", "iprec_at_recall", "P", "relstring",
                 "recall", "unj", "rbp", "rbp_resid", "infAP", "gm_bpref", "utility",
                 "11pt_avg", "ndcg", "relative_P", "Rprec_mult", "success", "map_cut",
                 "ndcg_cut", "ndcg_rel", "Rndcg", "binG", "G", "set_P", "set_recall",
                 "set_relative_P", "set_map", "set_F", "num_nonrel_judged_ret"),
}
_PREFS = ("all_prefs", "prefs", "qrels_jg")

USAGE = ("usage: fastndcg trec_eval [-h] [-q] [-c] [-J] [-n] [-l LEVEL] [-M MAX] [-N DOCS] "
         "[-m MEASURE[.PARAMS]]... QRELS RUN")
HELP = f"""{USAGE}

trec_eval 10's command line, computed by fastndcg: the same arguments, the same output.

  -q           also print each query's values (in the string order of the query ids)
  -c           average over every query of the qrels, scoring one the run lacks on an
               empty ranking (without -c such a query is an error, as in trec_eval 10)
  -J           judged documents only: each query's unjudged documents are dropped
               before it is scored (a query left with none: an empty ranking)
  -n           no summary (the "all" lines)
  -l LEVEL     a label >= LEVEL is relevant (default 1)
  -M MAX       read at most MAX documents of each query (its top MAX in trec_eval's
               order: score descending, then document id descending)
  -N DOCS      documents in the collection (utility's fourth coefficient)
  -m MEASURE   a measure (-m map -m P.5,10 -m ndcg_cut.10 -m iprec_at_recall), or a
               set of them (official, the default; set; all_trec); repeatable
  -v           print the version

Measures: {", ".join(m for m, how in TABLE.items() if how)}.
"""


class TrecEvalError(Exception):
    """An input trec_eval refuses: the message and trec_eval's exit status."""

    def __init__(self, message: str, status: int):
        super().__init__(message)
        self.status = status


@dataclass
class Args:
    query: bool = False
    complete: bool = False
    judged_only: bool = False
    summary: bool = True
    rel: int = 1
    max_docs: int | None = None
    n_docs: int = 0
    measures: dict | None = None   # name -> parameter text (None: the defaults)
    qrels: str = ""
    run: str = ""


def _whole(flag: str, text: str, lo: int) -> int:
    """A whole number for -l, -M or -N (trec_eval reads it with atol; here it must be
    one)."""
    try:
        value = int(text)
    except ValueError:
        value = None
    if value is None or value < lo:
        raise TrecEvalError(f"{flag} takes a whole number >= {lo}, got {text!r}", 1)
    return value


def _mark(measures: dict, text: str) -> None:
    """trec_eval's mark_measure: a measure, with parameters after the first '.', or a
    nickname; the first parameters given for a measure are kept."""
    name, dot, params = text.partition(".")
    if dot and not params:
        raise TrecEvalError(f"-m {text}: no parameters after '.'; write -m {name} for its "
                            f"defaults, or e.g. -m P.5,10", 1)
    if name in NICKNAMES:
        if dot:
            raise TrecEvalError(f"-m {text}: a set of measures takes no parameters", 1)
        for m in NICKNAMES[name]:
            measures.setdefault(m, None)
        return
    if name in _PREFS:
        raise TrecEvalError(f"-m {name}: preference and qrels_jg measures are not supported "
                            f"by fastndcg trec_eval; run trec_eval itself for them", 1)
    if name not in TABLE:
        raise TrecEvalError(f"-m {text}: trec_eval has no measure {name!r}; see fastndcg "
                            f"trec_eval -h for the measures", 1)
    if measures.get(name) is None:
        measures[name] = params if dot else None


def parse_args(argv: Sequence[str]) -> Args | str:
    """The arguments, or the text to print for -h / -v."""
    try:
        opts, rest = getopt.gnu_getopt(list(argv), "hvqm:cl:nD:JN:M:R:T:oZ:", [
            "help", "version", "query_eval_wanted", "measure=", "complete_rel_info_wanted",
            "level_for_rel=", "nosummary", "Debug_level=", "Judged_docs_only",
            "Number_docs_in_coll=", "Max_retrieved_per_topic=", "Rel_info_format=",
            "Results_format=", "Output_old_results_format", "Zscore="])
    except getopt.GetoptError as err:
        raise TrecEvalError(f"{err}; {USAGE}", 1) from None
    args, measures = Args(), {}
    for flag, value in opts:
        if flag in ("-h", "--help"):
            return HELP
        if flag in ("-v", "--version"):
            from . import __version__
            return f"fastndcg trec_eval {__version__} (trec_eval 10 compatible)"
        if flag in ("-q", "--query_eval_wanted"):
            args.query = True
        elif flag in ("-c", "--complete_rel_info_wanted"):
            args.complete = True
        elif flag in ("-n", "--nosummary"):
            args.summary = False
        elif flag in ("-J", "--Judged_docs_only"):
            args.judged_only = True
        elif flag in ("-l", "--level_for_rel"):
            # a grade is below 2**31 wherever trec_eval prints (see _stop): a higher
            # level is that one (nothing relevant)
            args.rel = min(_whole("-l", value, 0), 1 << 31)
        elif flag in ("-M", "--Max_retrieved_per_topic"):
            args.max_docs = _whole("-M", value, 0)
        elif flag in ("-N", "--Number_docs_in_coll"):
            args.n_docs = _whole("-N", value, 0)
        elif flag in ("-m", "--measure"):
            _mark(measures, value)
        elif flag in ("-R", "--Rel_info_format") and value == "qrels":
            pass
        elif flag in ("-T", "--Results_format") and value == "trec_results":
            pass
        else:
            what = {"-Z": "z-scores (-Z)",
                    "-D": "debugging output (-D)", "-o": "the old output format (-o)",
                    "-R": f"the qrels format {value!r} (-R; only qrels)",
                    "-T": f"the results format {value!r} (-T; only trec_results)"}
            short = {"--Zscore": "-Z", "--Debug_level": "-D",
                     "--Output_old_results_format": "-o", "--Rel_info_format": "-R",
                     "--Results_format": "-T"}.get(flag, flag)
            raise TrecEvalError(f"fastndcg trec_eval does not support {what[short]}; run "
                                f"trec_eval itself for it", 1)
    if len(rest) != 2:
        raise TrecEvalError(f"expected the qrels file and the run file, got "
                            f"{len(rest)} file{'s' if len(rest) != 1 else ''}; {USAGE}", 1)
    if not measures:
        _mark(measures, "official")
    missing = [m for m in TABLE if m in measures and TABLE[m] is None]
    if missing:
        raise TrecEvalError(f"fastndcg does not compute trec_eval's {', '.join(missing)} yet; "
                            f"leave {'them' if len(missing) > 1 else 'it'} out (name the "
                            f"measures wanted with -m) or run trec_eval itself for "
                            f"{'them' if len(missing) > 1 else 'it'}", 1)
    args.measures = measures
    args.qrels, args.run = rest
    return args


@dataclass
class Line:
    """One printed measure: its name, how it prints, and the fastndcg measure name
    behind it (None: runid, num_q)."""
    name: str
    how: str
    spec: str | None


def _numbers(name: str, params: str, integer: bool) -> list:
    """trec_eval's cutoffs (integers) or levels (numbers) of ``name.params``: sorted,
    each once."""
    values = []
    for piece in params.split(","):
        try:
            values.append(int(piece) if integer else float(piece))
        except ValueError:
            raise TrecEvalError(f"-m {name}.{params}: {piece!r} is not a "
                                f"{'whole number' if integer else 'number'}", 1) from None
    values.sort()
    if any(a == b for a, b in zip(values, values[1:])):
        raise TrecEvalError(f"-m {name}.{params}: a value is given twice (trec_eval: "
                            f"duplicate cutoffs); give each once", 2)
    if integer and values[0] < 1:
        raise TrecEvalError(f"-m {name}.{params}: cutoffs must be >= 1", 2)
    return values


def lines(args: Args) -> list[Line]:
    """The measures' printed lines, in trec_eval's table order."""
    out = []
    for name, how in TABLE.items():
        if name not in args.measures:
            continue
        params = args.measures[name]
        if how in ("runid", "num_q"):
            out.append(Line(name, how, None))
        elif how == "relstring":
            if params is not None and not (params.isdigit() and int(params) > 0):
                raise TrecEvalError(f"-m relstring.{params}: the length must be a whole number "
                                    f">= 1, e.g. -m relstring.20", 1)
            out.append(Line(name if params is None else f"{name}_{params}", how, None))
        elif how == "cut":
            cuts = (_KINDS[name].trec_cutoffs if params is None
                    else _numbers(name, params, True))
            out += [Line(f"{name}_{c}", "mean", f"{name}.{c}") for c in cuts]
        elif how == "level":
            levels = (_KINDS[name].defaults if params is None
                      else _numbers(name, params, False))
            # trec_eval's append_double writes into len(name) + 10 bytes: the name is cut
            out += [Line(f"{name}_{v:3.2f}"[:len(name) + 9], "mean", f"{name}.{v!r}")
                    for v in levels]
        elif how == "param":
            if params is None:
                spec, shown = name, name
            else:
                spec, shown = f"{name}.{params}", f"{name}_{params}"
            out.append(Line(shown, "mean", spec))
        else:
            out.append(Line(name, how, name))
    return out


def _measure_names(args: Args, printed: list[Line]) -> list[str]:
    """The fastndcg measure names of the printed lines (utility with -N's size)."""
    from .measures import number, parse

    names = []
    for line in printed:
        if line.spec is None:
            continue
        spec = line.spec
        try:
            parse(spec)
        except ValueError as err:  # trec_eval: "Cannot initialize measure", exit 2
            raise TrecEvalError(f"-m {spec}: {err}", 2) from None
        if spec.startswith("utility") and args.n_docs:
            values = parse(spec).others[0].values
            spec = ("utility(" + ",".join(f"{k}={number(v)}" for k, v in
                                          zip("abcd", values[:4])) + f",n={args.n_docs})")
        names.append(spec)
    return names


def _passes(names: list[str]) -> list[list[str]]:
    """The measure names in groups that share their gains: trec_eval's own (the
    grades) first, then one group per set of grade=gain pairs, in the order named
    (each is one pass over the run)."""
    from .measures import parse

    groups: dict = {}
    for name in names:
        gains = parse(name).gain
        groups.setdefault(gains if not isinstance(gains, str) else None, []).append(name)
    return [groups[key] for key in sorted(groups, key=lambda g: g is not None)]


def run(args: Args, out=None) -> None:
    """Evaluate and print (to ``out``, default stdout)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from ._arrow import as_numpy, scalar
    from ._evaluate import evaluate
    from .measures import parse
    from .qrels import judged_docs_only

    out = sys.stdout if out is None else out
    printed = lines(args)
    names = _measure_names(args, printed)
    import os
    if not os.path.exists(args.qrels) and not (args.run.startswith("-")
                                               or os.path.exists(args.run)):
        raise TrecEvalError(f"neither the qrels file {args.qrels!r} nor the run file "
                            f"{args.run!r} exists; check the paths (trec_eval: Cannot read "
                            f"qrels file, exit 2)", 2)
    qrels_t, _, qrels_warning = _read(args.qrels, "qrels")  # as trec_eval: qrels first
    run_t, tag, run_warning = _read(args.run, "results")
    # said once the output is printed: a refusal is one line
    warnings = [w for w in (qrels_warning, run_warning) if w]
    if tag is None and args.complete and args.summary and any(
            line.how == "runid" for line in printed):
        raise TrecEvalError(f"{args.run!r} has no run line, and trec_eval -c prints whatever "
                            f"its memory holds as the runid then; give a run with at least "
                            f"one line", 7)
    qids = sorted(set(pc.unique(qrels_t.column("query_id")).to_pylist()))
    # trec_eval looks at the judged queries of the run only
    judged = pc.is_in(run_t.column("query_id"), value_set=pc.unique(qrels_t.column("query_id")))
    if not pc.all(judged).as_py():  # (a filter keeping every row copies them all)
        run_t = run_t.filter(judged)
    in_run = set(pc.unique(run_t.column("query_id")).to_pylist())  # before -M (-M 0 too)
    if args.max_docs is not None:
        run_t = _top(run_t, args.max_docs)
    # a document listed twice is found by the evaluation's own join, so it is looked
    # for beforehand only where no evaluation follows or -J may drop it first; when
    # the evaluation finds one, where trec_eval stops is found again with it
    checked = not names or args.judged_only
    given = run_t, qrels_t
    while True:
        run_t, qrels_t = given
        stop, run_t, qrels_t, evaluated = _stopped(args, printed, qids, in_run, run_t, qrels_t,
                                                   checked)
        try:
            columns, run_t, qrels_t = _scores(args, printed, names, evaluated, in_run, run_t,
                                              qrels_t)
            break
        except ValueError:
            if checked:
                raise
            checked = True
    strings = None
    if args.query and any(line.how == "relstring" for line in printed):
        line = next(line for line in printed if line.how == "relstring")
        length = int(line.name.rpartition("_")[2]) if line.name != "relstring" else 10
        strings = _relstrings(run_t, qrels_t, evaluated, length,
                              line.name == "relstring" or args.judged_only
                              or args.max_docs == 0)
    text = _query_lines(printed, names, columns, evaluated, strings) if args.query else b""
    if stop is not None:
        _write(out, text)
        raise stop[1]
    if args.summary:
        quirk = None
        if args.complete:  # trec_eval -c: num_rel's all line counts labels > 0, ignoring -l
            quirk = int(np.count_nonzero(as_numpy(qrels_t.column("label")) > 0))
        text += _all_lines(printed, names, columns, len(evaluated), tag, quirk)
    _write(out, text)
    for warning in warnings:
        print(f"fastndcg trec_eval: warning: {warning}", file=sys.stderr)


def _stopped(args: Args, printed: list, qids: list, in_run: set, run_t, qrels_t,
             duplicates: bool) -> tuple:
    """(stop, run, qrels, evaluated): where trec_eval stops (:func:`_stop`; documents
    listed twice looked for only with ``duplicates``), the run and qrels cut there,
    and the queries evaluated."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from ._arrow import scalar
    from .qrels import judged_docs_only

    evaluated = [q for q in qids if q in in_run or args.complete]
    stop = _stop(args, printed, qids, in_run, run_t, qrels_t, duplicates)
    if stop is not None and not duplicates:  # a document listed twice may stop it sooner
        stop = _stop(args, printed, qids, in_run, run_t, qrels_t, True)
    if stop is not None:  # trec_eval prints (-q) the queries before it, then stops
        if not (stop[2] and args.query and stop[0]):
            raise stop[1]
        evaluated = qids[:stop[0]]
        # the ids before it (Arrow compares text by its UTF-8 bytes: Python's order)
        stopped = scalar(qids[stop[0]], pa.large_string())
        run_t = run_t.filter(pc.less(run_t.column("query_id"), stopped))
        qrels_t = qrels_t.filter(pc.less(qrels_t.column("query_id"), stopped))
    if args.judged_only:  # -J: only the documents judged with a grade >= 0 (after -M)
        run_t = judged_docs_only(run_t, qrels_t)
    return stop, run_t, qrels_t, evaluated


def _scores(args: Args, printed: list, names: list, evaluated: list, in_run: set, run_t,
            qrels_t) -> tuple:
    """(values, run, qrels): each measure's values (``names``), for the ``evaluated``
    queries in order, and the run and qrels as scored (an empty run stood in for)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from ._arrow import as_numpy
    from ._evaluate import evaluate
    from .measures import parse

    if names and run_t.num_rows == 0:  # every ranking empty (-M 0, -J)
        run_t, qrels_t = _stand_in(run_t, qrels_t)
    if not evaluated:
        raise TrecEvalError("no query has both results and judgments (trec_eval: exit 7): "
                            "the query ids of the run and the qrels do not meet", 7)
    columns: dict[str, np.ndarray] = {}
    if names:
        # -J: a query whose documents are all unjudged is scored on an empty ranking
        for group in _passes(names):  # one pass per set of gains (-m ndcg.1=0,2=3)
            report = evaluate(run_t, qrels=qrels_t, preset="trec_eval", measure=group,
                              rel=args.rel if args.rel != 1 else None,
                              complete=args.complete or args.judged_only
                              or args.max_docs == 0)
            table = report.per_query
            position = {q: i for i, q in enumerate(
                table.column("query_id").cast(pa.string()).to_pylist())}
            order = np.array([position[q] for q in evaluated], np.int64)
            for name in group:
                column = parse(name, args.rel).columns[0]
                columns[name] = np.asarray(as_numpy(table.column(column)))[order]
        if args.judged_only or args.max_docs == 0:  # rankings left empty
            left = set(pc.unique(run_t.column("query_id")).to_pylist())
            _empty_rankings(args, printed, names, columns, evaluated, left, qrels_t)
        elif args.complete:
            _bogus_utility(args, printed, names, columns, evaluated, in_run, qrels_t)
    return columns, run_t, qrels_t


def _relevant_counts(qrels_t, rel: int) -> dict:
    """query -> its judgments with a grade >= rel (R)."""
    from ._arrow import as_numpy, from_numpy

    relevant = qrels_t.filter(from_numpy(as_numpy(qrels_t.column("label")) >= rel))
    if relevant.num_rows == 0:
        return {}
    chunk, ids = _by_query(relevant)
    return dict(zip(ids, np.diff(chunk.offsets).tolist()))


def _empty_rankings(args, printed, names, columns, evaluated, left, qrels_t) -> None:
    """-J: trec_eval scores a query left with no document (all unjudged, or, with
    -c, absent from the run) on an empty ranking. There its interpolated precision
    at a recall level that rounds to 0 relevant items is 0 / 0 (C's -nan), so is
    11pt_avg, and a utility line with parameters is c x R + d x (N - R)."""
    empty = [i for i, q in enumerate(evaluated) if q not in left]
    if not empty:
        return
    from .measures import parse

    r_of = _relevant_counts(qrels_t, args.rel)
    nan = -float("nan")  # the sign bit set, as C's 0.0 / 0.0 on x86-64
    for line, spec in zip([p for p in printed if p.spec is not None], names):
        values = columns[spec]
        if line.name.startswith("iprec_at_recall_"):
            level = parse(spec).others[0].values[0]
            for i in empty:
                r = r_of.get(evaluated[i], 0)
                if math.floor(level * r + 0.5) == 0:  # lround(level x R) == 0
                    values[i] = nan
        elif line.name == "11pt_avg":
            values[empty] = nan
        elif line.name.startswith("utility_"):
            a, b, c, d = parse(spec).others[0].values[:4]
            for i in empty:
                r = r_of.get(evaluated[i], 0)
                values[i] = a * 0 + b * 0 + c * r + d * (args.n_docs + 0 - 0 - r)


def _bogus_utility(args, printed, names, columns, evaluated, in_run, qrels_t) -> None:
    """trec_eval -c scores a query the run lacks on a ranking of one unjudged
    document, then sets the lines named exactly ``utility`` and ``rbp_resid`` back
    to 0 -- but not those with parameters (``utility_1,-1,0,0``,
    ``rbp_resid_p=0.8``), which keep the value of that ranking: b x 1 + c x R + d x
    (N - 1 - R), and p + (1 - p). So it is here."""
    lacking = [i for i, q in enumerate(evaluated) if q not in in_run]
    with_params = [(line, spec) for line, spec in zip(
        [p for p in printed if p.spec is not None], names)
        if line.name.startswith(("utility_", "rbp_resid_"))]
    if not lacking or not with_params:
        return
    from .measures import parse

    lines_ = []
    for line, spec in with_params:
        if line.name.startswith("rbp_resid_"):
            p = parse(spec).others[0].values[0]
            for i in lacking:
                columns[spec][i] = p + (1 - p) * 1.0
        else:
            lines_.append((line, spec))
    if not lines_:
        return
    r_of = _relevant_counts(qrels_t, args.rel)
    for _, spec in lines_:
        a, b, c, d = parse(spec).others[0].values[:4]
        for i in lacking:
            r = r_of.get(evaluated[i], 0)
            columns[spec][i] = a * 0 + b * 1 + c * r + d * (args.n_docs + 0 - 1 - r)


def _relstrings(run_t, qrels_t, evaluated, length: int, cleared: bool) -> list[str]:
    """trec_eval's relstring of each query: the label of each of its first
    ``length`` documents in trec_eval's order, one character each: the grade 0-9,
    '>' above 9, '-' unjudged, '.' judged with a negative grade. For a query the
    run lacks (-c), trec_eval clears the line named exactly ``relstring`` (''),
    but a ``relstring_N`` line keeps its stand-in ranking's one unjudged document
    ('-')."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from ._arrow import as_numpy, scalar

    top = _top(run_t, length)  # (in trec_eval's order)
    if top.num_rows == 0:
        return ["" if cleared else "-" for _ in evaluated]

    def pairs(table):  # "query doc": no id holds a blank (blanks split a line's fields)
        return pc.binary_join_element_wise(table.column("query_id"), table.column("doc_id"),
                                           scalar(" ", pa.large_string()))

    at = pc.index_in(pairs(top), value_set=pairs(qrels_t).combine_chunks())
    valid = as_numpy(at.is_valid())
    labels = as_numpy(qrels_t.column("label"))
    grade = (labels[as_numpy(at.fill_null(scalar(0, at.type)))] if len(labels)
             else np.zeros(len(valid), np.int64))
    chars = np.where(~valid, "-", np.where(grade < 0, ".", np.where(
        grade > 9, ">", np.clip(grade, 0, 9).astype(np.int64).astype(str))))
    chunk, ids = _by_query(top)
    text = chars.tolist()
    by_query = {q: "".join(text[a:b]) for q, a, b in zip(
        ids, chunk.offsets[:-1].tolist(), chunk.offsets[1:].tolist())}
    return [by_query.get(q, "" if cleared else "-") for q in evaluated]


def _top(table, max_docs: int):
    """Each query's top ``max_docs`` rows in trec_eval's order (score descending,
    then document id descending), as trec_eval's -M reads them: the rows at or
    above each query's max_docs-th score are found first (a compiled selection per
    query, not a sort of the whole run), and only those are sorted."""
    from ._arrow import as_numpy, from_numpy
    from .chunks import group

    if table.num_rows == 0 or max_docs == 0:
        return table.slice(0, 0)
    chunk = group(table, "query_id")
    grouped = chunk.table
    starts, ends = chunk.offsets[:-1], chunk.offsets[1:]
    longer = np.flatnonzero(ends - starts > max_docs)
    if len(longer):
        from ._core import at_or_above_kth

        scores = as_numpy(grouped.column("score"))
        # queries left to NumPy's partition below: all of a few hundred (loading the
        # compiled pass costs more than they do), else those with a NaN score
        if len(longer) >= 256:
            keep, unsure = at_or_above_kth(chunk.offsets, longer, scores, max_docs)
        else:
            keep, unsure = np.ones(grouped.num_rows, bool), np.ones(len(longer), bool)
        for a, e in zip(starts[longer[unsure]].tolist(), ends[longer[unsure]].tolist()):
            # the max_docs-th largest score, ties with it kept: sorted exactly below
            part = scores[a:e]
            kth = -np.partition(-part, max_docs - 1)[max_docs - 1]
            keep[a:e] = part >= kth
        grouped = grouped.filter(from_numpy(keep))
    ranked = grouped.sort_by([("query_id", "ascending"), ("score", "descending"),
                              ("doc_id", "descending")])
    first = group(ranked, "query_id").offsets
    rank = np.arange(ranked.num_rows) - np.repeat(first[:-1], np.diff(first))
    return ranked.filter(from_numpy(rank < max_docs))


def _write(out, text: bytes) -> None:
    """``text`` (UTF-8) to ``out`` in one write: to its binary buffer where it has one
    (standard output), else as a string."""
    buffer = getattr(out, "buffer", None)
    if buffer is None:
        out.write(text.decode("utf-8"))
        return
    out.flush()
    buffer.write(text)
    buffer.flush()


def _head(line: Line) -> str:
    """A printed line's name padded to 22 characters (a longer one is not cut), a tab."""
    return f"{line.name:<22}\t"


def _query_lines(printed, names, columns, evaluated, strings=None) -> bytes:
    """Each query's lines (-q), in one buffer."""
    from .trectext import print_lines

    kinds, values = [], []
    spec_of = iter(names)
    for line in printed:
        if line.how == "relstring":
            kinds.append("text")
            values.append([f"'{text}'" for text in strings])
        elif line.how in ("runid", "num_q", "gm"):  # on the all lines only
            kinds.append("nothing")
            values.append(None)
            if line.how == "gm":
                next(spec_of)
        else:
            kinds.append("long" if line.how == "long" else "fixed4")
            values.append(columns[next(spec_of)])
    return print_lines([_head(line) for line in printed], kinds, values, evaluated)


def _all_lines(printed, names, columns, n_queries, tag, quirk) -> bytes:
    """The ``all`` lines, in one buffer."""
    from .measures import GM_FLOOR
    from .trectext import print_lines

    spec_of = iter(names)
    heads, kinds, values = [], [], []
    for line in printed:
        if line.how == "relstring":  # per query only
            continue
        heads.append(_head(line))
        if line.how == "runid":
            kinds.append("text")
            values.append([f"{tag}"])
            continue
        if line.how == "num_q":
            kinds.append("long")
            values.append([n_queries])
            continue
        column = columns[next(spec_of)]
        if line.how == "long":
            kinds.append("long")
            values.append([int(quirk if (line.name == "num_rel" and quirk is not None)
                               else np.cumsum(column)[-1])])
        elif line.how == "gm":  # the logs added in query order, as trec_eval adds them
            logs = np.log(np.maximum(column, GM_FLOOR))
            kinds.append("fixed4")
            values.append([math.exp(np.cumsum(logs)[-1] / n_queries)])
        else:  # added in query order and divided once, as trec_eval does
            kinds.append("fixed4")
            values.append([np.cumsum(column)[-1] / n_queries])
    return print_lines(heads, kinds, values, ["all"])


# --------------------------------------------------------------------------- the files
#
# trec_eval 10 reads its files with its own C parsers (get_qrels.c,
# get_trec_results.c), and the files are read here as they read them:
#
# * a field is a run of bytes between C's whitespace (space, \t, \r, \v, \f); a
#   line ends at \n only (a lone \r is whitespace, \r\n a line end); a byte-order
#   mark is part of the first query id;
# * qrels: exactly four fields (qid iter docno rel) on every line, else trec_eval
#   stops ("Malformed line", exit 2), a blank line included. A line starting with
#   '#' is skipped, but the line after a skipped one is read as a judgment whatever
#   it holds (in a block of comment lines the 1st, 3rd, ... are skipped), and
#   trec_eval crashes on a skipped comment as the last line (it reads past the
#   end). The grade is C's atol of the fourth field: its leading whole number
#   ('1.5', '1e3' -> 1; '-0.5', 'abc' -> 0), held at the 64-bit bounds;
# * runs: blank lines and lines whose first non-blank character is '#' are skipped;
#   six fields or more (qid iter docno rank score tag; rank and iter are not read,
#   later fields are ignored); the score is C's atof of the fifth field, its
#   leading number ('1.5x' -> 1.5, '0x1p3' -> 8, 'abc' -> 0); the run's tag is the
#   last line's. A run named '-' (any name starting with '-') is standard input;
# * a NUL byte at the start of a line ends a file (C strings end there); anywhere
#   else trec_eval overruns its table of lines and crashes: refused (exit 2).
#
# A usual file (no comment, whole grades and plain numbers as scores, the right
# number of fields on every line) is read by the compiled reader
# (fastndcg.trectext, rules "trec_eval"), any other line by line in Arrow, which
# warns or refuses naming file:line; the two give the same tables.

_BLANKS = " \t\r\v\f"                   # C's isspace(), but \n
_FIELDS = "[ \t\r\v\f]+"
_PLAIN = r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$"
_COUNTS_BYTES = 1 << 34   # trec_eval's table of grade counts past 16 GiB: it stops
_STAND_IN = "\x00"        # a query id no file read here holds (see _stand_in)


def _strtod():
    import re
    return re.compile(r"[+-]?(0[xX]([0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)"
                      r"([pP][+-]?[0-9]+)?|([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?"
                      r"|[iI][nN][fF]([iI][nN][iI][tT][yY])?|[nN][aA][nN](\([0-9A-Za-z_]*\))?)")


def _atof(token: str, pattern) -> tuple[float, bool]:
    """C's atof (strtod) of a field: its longest leading number (0.0 without one),
    and whether that is the whole field."""
    found = pattern.match(token)
    if found is None:
        return 0.0, False
    text = found.group(0)
    body = text.lstrip("+-").lower()
    sign = -1.0 if text.startswith("-") else 1.0
    if body.startswith("0x"):
        try:
            value = float.fromhex(text)
        except OverflowError:
            value = sign * math.inf
    elif body.startswith("nan"):
        value = math.copysign(math.nan, sign)
    else:
        value = float(text)  # decimals (past the range: inf, as strtod), inf, infinity
    return value, len(text) == len(token)


def _stdin_bytes() -> bytes:
    data = sys.stdin.buffer.read()
    if b"\0" not in data:
        return data
    # trec_eval copies standard input with fgets() and strlen(): a NUL byte ends
    # the piece of line (at most 9,999 bytes) it is in, its line end included
    pieces, pos = [], 0
    while pos < len(data):
        nl = data.find(b"\n", pos, pos + 9999)
        end = nl + 1 if nl >= 0 else min(pos + 9999, len(data))
        pieces.append(data[pos:end].split(b"\0", 1)[0])
        pos = end
    return b"".join(pieces)


def _file_bytes(path: str, what: str) -> bytes:
    import os

    import pyarrow as pa

    from . import io

    if not os.path.exists(path):
        raise TrecEvalError(f"cannot read the {what} file {path!r}: it does not exist; check "
                            f"the path (trec_eval stops there too, exit 2)", 2)
    if os.path.isdir(path):
        raise TrecEvalError(f"cannot read the {what} file {path!r}: it is a directory; name "
                            f"the file", 2)
    try:
        if os.path.splitext(path)[1].lower() in (".gz", ".bz2", ".zst", ".lz4", ".br"):
            with pa.input_stream(path, compression="detect") as f:
                data = f.read()
        else:
            with open(path, "rb") as f:
                data = f.read()
    except (pa.ArrowException, OSError) as err:
        raise TrecEvalError(io.compressed_error(path, err), 2) from None
    if not data:
        raise TrecEvalError(f"the {what} file {path!r} is empty (0 bytes), and trec_eval "
                            f"cannot read an empty file (exit 2); name the right file", 2)
    return data


def _read(path: str, what: str) -> tuple:
    """The ``what`` ("qrels" or "results") file as trec_eval reads it: (table, the
    run's tag or None, a warning or None)."""
    stdin = what == "results" and path.startswith("-")
    data = _stdin_bytes() if stdin else _file_bytes(path, "run" if what == "results" else what)
    shown = "standard input" if stdin else path
    nul = data.find(b"\0")
    if nul >= 0:
        line = data.count(b"\n", 0, nul) + 1
        if nul and data[nul - 1] != 0x0A:
            raise TrecEvalError(
                f"{shown}:{line}: a NUL byte inside a line, on which trec_eval overruns its "
                f"table of lines and crashes; delete it (e.g. tr -d '\\000' < {shown} > "
                f"fixed.txt) and name the fixed file", 2)
        data = data[:nul]  # the file ends there for trec_eval
        if not data and what == "qrels":  # (a run of no line: as one of comments only)
            raise TrecEvalError(f"{shown} starts with a NUL byte: trec_eval reads no line of it "
                                f"and goes on with garbage; delete the byte (e.g. tr -d "
                                f"'\\000')", 2)
    if data and not data.endswith(b"\n"):
        data += b"\n"  # as trec_eval appends it
    from .trectext import read_text

    text = read_text(data, "run" if what == "results" else what, "trec_eval")
    if text is not None:
        return text.table, text.tag, None
    return _line_by_line(data, what, shown)


def _text_lines(data: bytes, shown: str, what: str):
    """The lines of ``data`` (ending in \\n) as one Arrow string array, split at \\n."""
    import pyarrow as pa
    import pyarrow.compute as pc

    ends = pa.py_buffer(np.array([0, len(data)], np.int64))
    try:
        text = pa.Array.from_buffers(pa.large_binary(), 1, [None, ends, pa.py_buffer(data)]
                                     ).cast(pa.large_string())
    except pa.ArrowInvalid:
        try:
            data.decode("utf-8")
            where, byte = 1, 0
        except UnicodeDecodeError as err:
            where, byte = data.count(b"\n", 0, err.start) + 1, data[err.start]
        raise TrecEvalError(
            f"{shown}:{where}: byte 0x{byte:02x} is not UTF-8 text, and fastndcg trec_eval "
            f"reads UTF-8 {what} files only; convert the file (e.g. iconv -f latin1 -t "
            f"utf-8) and name the converted one", 2) from None
    lines = pc.split_pattern(text, "\n")[0].values
    return lines.slice(0, len(lines) - 1)  # (after the last \n: nothing)


def _malformed(shown: str, line_no: int, text: str, fields: int, what: str) -> TrecEvalError:
    want = ("4 fields (qid iter docno rel)" if what == "qrels"
            else "at least 6 fields (qid iter docno rank score tag)")
    if not text.strip(_BLANKS):
        got = "a blank line"
    else:
        got = f"{fields} field{'s' if fields != 1 else ''} in {text.strip(_BLANKS)!r}"
    hint = ""
    if what == "qrels" and text.startswith("#"):
        hint = (" (trec_eval skips a comment line, then reads the next line as a judgment "
                "whatever it holds: delete every other comment line of a block, or all of "
                "them)")
    elif what == "qrels" and fields >= 6 and text.split()[1].upper() == "Q0":
        hint = " (a run line: is the run given as the qrels?)"
    elif what == "results" and fields == 4:
        hint = " (a qrels line: is the qrels file given as the run?)"
    if "\r" in text.strip(_BLANKS):
        hint += (" (its lines end in a lone \\r, which trec_eval reads as a blank: end them "
                 "in \\n, e.g. tr '\\r' '\\n')")
    return TrecEvalError(f"{shown}:{line_no}: expected {want}, got {got}{hint}; trec_eval stops "
                         f"on it too (Malformed line, exit 2): fix or delete the line", 2)


def _line_by_line(data: bytes, what: str, shown: str) -> tuple:
    """Any file, as trec_eval's parser reads it (see above), in Arrow: (table, tag,
    warning)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from ._arrow import as_numpy, from_numpy

    lines = _text_lines(data, shown, "run" if what == "results" else what)
    n = len(lines)
    if what == "qrels":
        hashed = as_numpy(pc.starts_with(lines, "#")).astype(bool)
        keep = np.ones(n, bool)
        if hashed.any():  # a block of comment lines: the 1st, 3rd, ... are skipped
            first = hashed & ~np.concatenate(([False], hashed[:-1]))
            block = np.maximum.accumulate(np.where(first, np.arange(n), 0))
            keep = ~(hashed & ((np.arange(n) - block) % 2 == 0))
            if not keep[-1]:
                raise TrecEvalError(
                    f"{shown}:{n}: the qrels file ends with a comment line, and trec_eval "
                    f"crashes on that (it reads past the end of the file); delete the line "
                    f"or move it to the top", 2)
        body = pc.utf8_trim(lines.filter(from_numpy(keep)), _BLANKS) if not keep.all() else \
            pc.utf8_trim(lines, _BLANKS)
    else:
        lead = pc.utf8_ltrim(lines, _BLANKS)
        keep = as_numpy(pc.and_(pc.not_equal(lead, ""),
                                pc.invert(pc.starts_with(lead, "#")))).astype(bool)
        body = pc.utf8_rtrim(lead.filter(from_numpy(keep)), _BLANKS)
    line_no = np.flatnonzero(keep) + 1
    parts = pc.split_pattern_regex(body, _FIELDS)
    counts = np.where(as_numpy(pc.equal(body, "")).astype(bool), 0,
                      as_numpy(pc.list_value_length(parts)))
    bad = counts != 4 if what == "qrels" else counts < 6
    if bad.any():
        i = int(np.argmax(bad))
        raise _malformed(shown, int(line_no[i]), lines[int(line_no[i]) - 1].as_py(),
                         int(counts[i]), what)
    if what == "qrels" and not len(body):
        raise TrecEvalError(f"{shown} holds no judgment line; trec_eval goes on with garbage "
                            f"on it: name a qrels file with lines qid iter docno rel", 2)

    def field(i: int):
        return pc.list_element(parts, i) if len(body) else pa.array([], pa.large_string())

    if what == "qrels":
        from .io import WHOLE, c_atol, whole_grades

        grades = field(3)
        whole = as_numpy(pc.match_substring_regex(grades, WHOLE)).astype(bool)
        values = (whole_grades(grades) if whole.all() else
                  pa.array([c_atol(g) for g in grades.to_pylist()], pa.int64()))
        warning = None
        if not whole.all():
            i, n_odd = int(np.argmin(whole)), int((~whole).sum())
            g = grades[i].as_py()
            more = f"; {n_odd:,} grades are not whole numbers" if n_odd > 1 else ""
            warning = (f"{shown}:{line_no[i]}: grade {g!r} read as {c_atol(g)}, as trec_eval "
                       f"reads it (C's atol: the whole number it starts with){more}; write "
                       f"whole-number grades to silence this")
        table = pa.table({"query_id": field(0), "doc_id": field(2), "label": values})
        return table, None, warning
    scores = field(4)
    plain = as_numpy(pc.match_substring_regex(scores, _PLAIN)).astype(bool)
    values = np.zeros(len(scores), np.float64)
    if plain.any():
        values[plain] = as_numpy(scores.filter(from_numpy(plain)).cast(pa.float64()))
    warning = None
    if not plain.all():
        pattern = _strtod()
        odd = np.flatnonzero(~plain)
        partial = []
        for i, token in zip(odd.tolist(), scores.filter(from_numpy(~plain)).to_pylist()):
            values[i], complete = _atof(token, pattern)
            if not complete:
                partial.append(i)
        if partial:
            i = partial[0]
            s = scores[i].as_py()
            more = f"; {len(partial):,} scores are not numbers" if len(partial) > 1 else ""
            warning = (f"{shown}:{line_no[i]}: score {s!r} read as {float(values[i])!r}, as "
                       f"trec_eval reads it (C's atof: the number it starts with, 0 if "
                       f"none){more}; write plain numbers to silence this")
    nan = np.flatnonzero(np.isnan(values))
    if len(nan):
        i = int(nan[0])
        raise TrecEvalError(
            f"{shown}:{line_no[i]}: score {scores[i].as_py()!r} is NaN, and trec_eval ranks "
            f"NaN scores in no defined order (its sort compares them with nothing), so its "
            f"output for them cannot be reproduced; replace them with numbers in the run "
            f"file", 2)
    tag = pc.list_element(parts, 5)[-1].as_py() if len(body) else None
    table = pa.table({"query_id": field(0), "doc_id": field(2),
                      "score": from_numpy(values)})
    return table, tag, warning


def _wrap(value: int) -> int:
    """``value`` as a C long (64 bits, two's complement) holds it."""
    return (value + (1 << 63)) % (1 << 64) - (1 << 63)


def _stop(args: Args, printed: list, qids: list, in_run: set, run_t, qrels_t,
          duplicates: bool = True):
    """Where trec_eval 10 stops, going through the judged queries in order: (the
    query's index, the error, whether trec_eval printed the queries before it), or
    None. It stops (exit 4) at a query the run lacks (without -c), at a document
    listed twice by the run (among a query's -M first) or by the qrels, and where
    its table of each grade's count (te_form_res_rels: one long for every grade from
    0 to the query's highest, kept from query to query) cannot be had: a grade of
    2**31 or more (past 16 GiB), past the 64-bit range (the size wraps), or, for the
    first query scored, no grade >= 0 (a size of 0 or less gives no table). A later
    query whose grades are all -2 or less makes it clear a negative size, and it
    crashes (nothing printed). Only runid and num_q need no table."""
    import collections

    import pyarrow.compute as pc

    from .qrels import listed_twice

    lacking = [q for q in qids if q not in in_run] if not args.complete else []
    first_lacking = lacking[0] if lacking else None
    needs = any(line.how not in ("runid", "num_q") for line in printed)
    top, qdup, rdup = {}, set(), set()
    if needs:
        top = _highest_grades(qrels_t)
    if needs and duplicates:
        qdup = set(listed_twice(qrels_t, "query_id", "doc_id").to_pylist())
        rdup = set(listed_twice(run_t, "query_id", "doc_id").to_pylist())

    def twice(table, q) -> str:
        docs = table.filter(pc.equal(table.column("query_id"), q)).column("doc_id").to_pylist()
        return next(d for d, c in collections.Counter(docs).items() if c > 1)

    bom = ""
    if first_lacking is not None and first_lacking.startswith("\ufeff"):
        bom = (" (the qrels file starts with a byte-order mark, which trec_eval reads as "
               "part of the first query id: save the file without it)")
    bound, held = 0, False
    for i, q in enumerate(qids):
        if q == first_lacking:
            return i, TrecEvalError(
                f"query {q!r} is judged in {args.qrels!r} but has no line in "
                f"{args.run!r}{f' ({len(lacking)} such queries)' if len(lacking) > 1 else ''}"
                f"{bom}; trec_eval 10 stops here too (exit 4): pass -c to score such queries "
                f"on an empty ranking, or evaluate only the judged queries of the run", 4), True
        if not needs:
            continue
        if q in rdup:
            return i, TrecEvalError(
                f"the run {args.run!r} lists document {twice(run_t, q)!r} twice for query "
                f"{q!r}, and trec_eval stops on it (duplicate docs, exit 4); keep one line "
                f"per query and document in the run file", 4), True
        if q in qdup:
            return i, TrecEvalError(
                f"the qrels {args.qrels!r} judge document {twice(qrels_t, q)!r} of query "
                f"{q!r} twice, and trec_eval stops on it (duplicate docs, exit 4); keep one "
                f"line per query and document in the qrels file", 4), True
        grade = top[q]
        needed = _wrap(grade + 1)
        if needed > bound:
            bound = _wrap(bound + needed)
            if bound < 0 or bound * 8 > _COUNTS_BYTES:
                return i, TrecEvalError(
                    f"query {q!r} has grade {grade} in {args.qrels!r}; trec_eval keeps a count "
                    f"for every grade from 0 to a query's highest, in a table that would take "
                    f"more than 16 GiB here, and stops (exit 4, or is killed for the memory); "
                    f"write grades below 2147483648 in the qrels file", 4), True
            held = True
            continue
        if grade >= 0:  # past C's long: atol holds it at 9223372036854775807, and grade + 1 wraps
            why = (f"query {q!r} has grade {grade} (or more: C's atol reads no more) in "
                   f"{args.qrels!r}, so trec_eval's table of grade counts gets a negative size")
            fix = "write grades below 2147483648 in the qrels file"
        else:
            why = (f"every grade of query {q!r} in {args.qrels!r} is negative (the highest: "
                   f"{grade}), which gives trec_eval's table of grade counts a size of "
                   f"{needed}")
            fix = (f"judge one of its documents >= {0 if not held else -1} in the qrels file, "
                   f"or drop the query's lines")
        if not held:
            return i, TrecEvalError(f"{why}, and trec_eval 10 stops there (exit 4) when it is the "
                                    f"first query scored; {fix}", 4), True
        # a crash: memset() past the table, or (grade past C's long) a count loop
        # that reads past it
        if (needed * 8) % (1 << 64) > bound * 8 or (grade >= 0 and needed < 0):
            return i, TrecEvalError(f"{why}, and trec_eval 10 crashes on it (it clears that "
                                    f"table; nothing is printed); {fix}", 4), False
    return None


def _by_query(table):
    """``table`` as one chunk of whole queries (:class:`fastndcg.chunks.Chunk`) and
    the ids of its queries as Python strings."""
    from .chunks import group

    chunk = group(table, "query_id")
    return chunk, chunk.ids.to_pylist()


def _highest_grades(qrels_t) -> dict:
    """query -> its highest grade in the qrels."""
    from ._arrow import as_numpy

    if qrels_t.num_rows == 0:
        return {}
    chunk, ids = _by_query(qrels_t)
    labels = as_numpy(chunk.table.column("label"))
    return dict(zip(ids, np.maximum.reduceat(labels, chunk.offsets[:-1]).tolist()))


def _stand_in(run_t, qrels_t) -> tuple:
    """evaluate scores no empty run: where every ranking is empty (-M 0, or -J
    leaving no document), one judged query of its own (never printed) is added to
    both, and the judged queries are scored on empty rankings beside it."""
    import pyarrow as pa

    one = pa.array([_STAND_IN], pa.large_string())
    run_t = pa.concat_tables([run_t, pa.table(
        {"query_id": one, "doc_id": one, "score": pa.array([0.0])}).cast(run_t.schema)])
    qrels_t = pa.concat_tables([qrels_t, pa.table(
        {"query_id": one, "doc_id": one, "label": pa.array([0], pa.int64())}
    ).cast(qrels_t.schema)])
    return run_t, qrels_t


def main(argv: Sequence[str]) -> int:
    """``fastndcg trec_eval ARGS``: print, or one line on stderr and trec_eval's exit
    status."""
    try:
        args = parse_args(argv)
        if isinstance(args, str):
            print(args)
            return 0
        run(args)
        return 0
    except TrecEvalError as err:
        print(f"fastndcg trec_eval: error: {err}", file=sys.stderr)
        return err.status
    except (ValueError, TypeError, OSError) as err:
        print(f"fastndcg trec_eval: error: {' '.join(str(err).split())}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("fastndcg trec_eval: interrupted", file=sys.stderr)
        return 130
