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

* without ``-c``, a query of the qrels that the run lacks stops trec_eval (exit 4,
  no output), and so it stops here, with a message that names the query;
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
With ``-J`` (judged documents only) a query left with no document is scored on an
empty ranking, as trec_eval does: its ``iprec_at_recall`` at a level that rounds to
0 relevant items and its ``11pt_avg`` are C's ``-nan`` (0 / 0). Exit statuses are trec_eval's:
1 for a usage error, 2 for an unreadable input, 4 for a judged query missing from
the run without ``-c``, 7 when no query has both results and judgments.
"""

from __future__ import annotations

import getopt
import math
import sys
from dataclasses import dataclass
from typing import Sequence

import numpy as np

__all__ = ["main", "TABLE", "NICKNAMES"]

# trec_eval 10's measure table (measures.c), in its order: name -> how it is printed.
#   long: a count per query and its sum; mean: a value per query and its mean;
#   gm: the geometric mean, on the all line only; cut: one line per cutoff (name_K);
#   level: one line per number parameter (name_%3.2f); param: one line, the
#   parameters as given appended (name_PARAMS); runid, num_q: the all line only;
#   relstring: the per-query lines only, the labels of the first ranks as text.
#   None: a measure fastndcg does not compute.
TABLE: dict[str, str | None] = {
    "runid": "runid", "num_q": "num_q", "num_ret": "long", "num_rel": "long",
    "num_rel_ret": "long", "map": "mean", "gm_map": "gm", "Rprec": "mean", "bpref": "mean",
    "recip_rank": "mean", "iprec_at_recall": "level", "P": "cut", "relstring": "relstring",
    "recall": "cut", "infAP": "mean", "gm_bpref": "gm", "Rprec_mult": "level",
    "utility": "param", "11pt_avg": "param", "binG": "mean", "G": "param", "dcg": None,
    "ideal_dcg": None, "ndcg": "param", "ndcg_rel": "param", "Rndcg": "param", "ndcg_cut": "cut",
    "map_cut": "cut", "relative_P": "cut", "success": "cut", "set_P": "mean",
    "set_relative_P": "mean", "set_recall": "mean", "set_map": "mean", "set_F": "param",
    "num_nonrel_judged_ret": "long", "prefs_num_prefs_poss": None,
    "prefs_num_prefs_ful": None, "prefs_num_prefs_ful_ret": None, "prefs_simp": None,
    "prefs_pair": None, "prefs_avgjg": None, "prefs_avgjg_Rnonrel": None,
    "prefs_simp_ret": None, "prefs_pair_ret": None, "prefs_avgjg_ret": None,
    "prefs_avgjg_Rnonrel_ret": None, "prefs_simp_imp": None, "prefs_pair_imp": None,
    "prefs_avgjg_imp": None, "map_avgjg": None, "P_avgjg": None, "Rprec_mult_avgjg": None,
    "yaap": None, "rbp": "param", "rbp_resid": "param", "unj": "cut",
}

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

# trec_eval's defaults for the measures printed per parameter (m_*.c)
_LEVELS = {"iprec_at_recall": (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0),
           "Rprec_mult": (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)}
_CUTS = {"P": (5, 10, 15, 20, 30, 100, 200, 500, 1000),
         "recall": (5, 10, 15, 20, 30, 100, 200, 500, 1000),
         "ndcg_cut": (5, 10, 15, 20, 30, 100, 200, 500, 1000),
         "map_cut": (5, 10, 15, 20, 30, 100, 200, 500, 1000),
         "relative_P": (5, 10, 15, 20, 30, 100, 200, 500, 1000),
         "success": (1, 5, 10), "unj": (5, 10, 20)}

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
            args.rel = _whole("-l", value, 0)
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
            cuts = _CUTS[name] if params is None else _numbers(name, params, True)
            out += [Line(f"{name}_{c}", "mean", f"{name}.{c}") for c in cuts]
        elif how == "level":
            levels = _LEVELS[name] if params is None else _numbers(name, params, False)
            out += [Line(f"{name}_{v:3.2f}", "mean", f"{name}.{v!r}") for v in levels]
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
        except ValueError as err:
            raise TrecEvalError(f"-m {spec}: {err}", 1) from None
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


def _c_float(value: float) -> str:
    """C's printf("%6.4f")."""
    if math.isnan(value):
        return f"{'-nan' if math.copysign(1.0, value) < 0 else 'nan':>6}"
    if math.isinf(value):
        return f"{'-inf' if value < 0 else 'inf':>6}"
    return f"{value:6.4f}"


def _column_text(values: np.ndarray, how: str) -> list[str]:
    if how == "long":
        return [str(int(v)) for v in values]
    if np.isfinite(values).all():  # Python's %-format is C's for finite values
        return list(map("%6.4f".__mod__, values.tolist()))
    return [_c_float(float(v)) for v in values]


def run(args: Args, out=None) -> None:
    """Evaluate and print (to ``out``, default stdout)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from . import io
    from .evaluate import evaluate
    from .measures import parse
    from .qrels import judged_docs_only

    out = sys.stdout if out is None else out
    printed = lines(args)
    names = _measure_names(args, printed)
    try:
        run_t = io.read_trec_run(args.run, tag="tag")
        qrels_t = io.read_trec_qrels(args.qrels)
    except (OSError, ValueError) as err:
        raise TrecEvalError(" ".join(str(err).split()), 2) from None
    if run_t.num_rows == 0:
        raise TrecEvalError(f"{args.run!r} has no run lines (trec_eval: no queries with both "
                            f"results and relevance info)", 7)
    tag = run_t.column("tag")[-1].as_py()
    run_t = run_t.drop_columns(["tag"])
    if args.max_docs is not None:
        run_t = _top(run_t, args.max_docs)
    qids = sorted(set(pc.unique(qrels_t.column("query_id")).to_pylist()))
    in_run = set(pc.unique(run_t.column("query_id")).to_pylist())
    if args.judged_only:  # -J: only the documents judged with a grade >= 0 (after -M)
        run_t = judged_docs_only(run_t, qrels_t)
    if not args.complete:
        lacking = [q for q in qids if q not in in_run]
        if lacking:
            raise TrecEvalError(
                f"query {lacking[0]!r} is judged in {args.qrels!r} but has no line in "
                f"{args.run!r}{f' ({len(lacking)} such queries)' if len(lacking) > 1 else ''}; "
                f"trec_eval 10 stops here too (exit 4): pass -c to score such queries on an "
                f"empty ranking, or evaluate only the judged queries of the run", 4)
    evaluated = [q for q in qids if q in in_run or args.complete]
    if not evaluated:
        raise TrecEvalError("no query has both results and judgments (trec_eval: exit 7): "
                            "the query ids of the run and the qrels do not meet", 7)
    columns: dict[str, np.ndarray] = {}
    if names:
        # -J: a query whose documents are all unjudged is scored on an empty ranking
        for group in _passes(names):  # one pass per set of gains (-m ndcg.1=0,2=3)
            report = evaluate(run_t, qrels=qrels_t, preset="trec_eval", measure=group,
                              rel=args.rel if args.rel != 1 else None,
                              complete=args.complete or args.judged_only)
            table = report.per_query
            position = {q: i for i, q in enumerate(
                table.column("query_id").cast(pa.string()).to_pylist())}
            order = np.array([position[q] for q in evaluated], np.int64)
            for name in group:
                column = parse(name, args.rel).columns[0]
                columns[name] = np.asarray(table.column(column).to_numpy())[order]
        if args.judged_only:
            left = set(pc.unique(run_t.column("query_id")).to_pylist())
            _empty_rankings(args, printed, names, columns, evaluated, left, qrels_t)
        elif args.complete:
            _bogus_utility(args, printed, names, columns, evaluated, in_run, qrels_t)
    strings = None
    if args.query and any(line.how == "relstring" for line in printed):
        line = next(line for line in printed if line.how == "relstring")
        length = int(line.name.rpartition("_")[2]) if line.name != "relstring" else 10
        strings = _relstrings(run_t, qrels_t, evaluated, length,
                              line.name == "relstring" or args.judged_only)
    if args.query:
        _print_queries(out, printed, names, columns, evaluated, strings)
    if args.summary:
        quirk = None
        if args.complete:  # trec_eval -c: num_rel's all line counts labels > 0, ignoring -l
            quirk = int(pc.sum(pc.greater(qrels_t.column("label"), 0)).as_py() or 0)
        _print_all(out, printed, names, columns, len(evaluated), tag, quirk)


def _relevant_counts(qrels_t, rel: int) -> dict:
    """query -> its judgments with a grade >= rel (R)."""
    import pyarrow.compute as pc

    relevant = qrels_t.filter(pc.greater_equal(qrels_t.column("label"), rel))
    counts = relevant.group_by("query_id").aggregate([("label", "count")])
    return dict(zip(counts.column("query_id").to_pylist(),
                    counts.column("label_count").to_pylist()))


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

    top = _top(run_t, length)
    joined = top.join(qrels_t.select(["query_id", "doc_id", "label"]),
                      ["query_id", "doc_id"], join_type="left outer")
    joined = joined.sort_by([("query_id", "ascending"), ("score", "descending"),
                             ("doc_id", "descending")])
    labels = joined.column("label").combine_chunks()
    valid = np.asarray(labels.is_valid().to_numpy(zero_copy_only=False))
    grade = np.asarray(labels.fill_null(0).to_numpy(zero_copy_only=False))
    chars = np.where(~valid, "-", np.where(grade < 0, ".", np.where(
        grade > 9, ">", np.clip(grade, 0, 9).astype(np.int64).astype(str))))
    by_query: dict = {}
    for q, c in zip(joined.column("query_id").cast(pa.string()).to_pylist(), chars.tolist()):
        by_query[q] = by_query.get(q, "") + c
    return [by_query.get(q, "" if cleared else "-") for q in evaluated]


def _top(table, max_docs: int):
    """Each query's top ``max_docs`` rows in trec_eval's order (score descending,
    then document id descending), as trec_eval's -M reads them: the rows at or
    above each query's max_docs-th score are found first (a partition per query,
    not a sort of the whole run), and only those are sorted."""
    import pyarrow as pa
    import pyarrow.compute as pc

    n = table.num_rows
    if n == 0 or max_docs == 0:
        return table.slice(0, 0)
    codes = np.asarray(pc.dictionary_encode(table.column("query_id").combine_chunks())
                       .indices.to_numpy(zero_copy_only=False))
    scores = np.asarray(table.column("score").to_numpy())
    order = np.arange(n)
    if np.count_nonzero(codes[1:] != codes[:-1]) + 1 != codes.max() + 1:  # not grouped
        order = np.argsort(codes, kind="stable")
    grouped = codes[order]
    starts = np.flatnonzero(np.concatenate(([True], grouped[1:] != grouped[:-1])))
    ends = np.append(starts[1:], n)
    keep = np.zeros(n, bool)
    for a, e in zip(starts.tolist(), ends.tolist()):
        if e - a <= max_docs:
            keep[a:e] = True
        else:  # the max_docs-th largest score, ties with it kept: sorted exactly below
            part = scores[order[a:e]]
            kth = -np.partition(-part, max_docs - 1)[max_docs - 1]
            keep[a:e] = part >= kth
    candidates = table.take(pa.array(np.sort(order[keep])))
    ranked = candidates.sort_by([("query_id", "ascending"), ("score", "descending"),
                                 ("doc_id", "descending")])
    q = np.asarray(pc.dictionary_encode(ranked.column("query_id").combine_chunks())
                   .indices.to_numpy(zero_copy_only=False))
    m = len(q)
    first = np.flatnonzero(np.concatenate(([True], q[1:] != q[:-1])))
    rank = np.arange(m) - np.repeat(first, np.diff(np.append(first, m)))
    return ranked.filter(pa.array(rank < max_docs))


def _print_queries(out, printed, names, columns, evaluated, strings=None) -> None:
    texts = []  # per printed line: its values as text, query by query
    spec_of = iter(names)
    for line in printed:
        if line.how == "relstring":
            texts.append([f"'{text}'" for text in strings])
            continue
        if line.how in ("runid", "num_q", "gm"):
            texts.append(None)
            if line.how == "gm":
                next(spec_of)
            continue
        texts.append(_column_text(columns[next(spec_of)], line.how))
    heads = [f"{line.name:<22}\t" for line in printed]
    chunks = []
    for i, qid in enumerate(evaluated):
        for head, text in zip(heads, texts):
            if text is not None:
                chunks.append(f"{head}{qid}\t{text[i]}\n")
    out.write("".join(chunks))


def _print_all(out, printed, names, columns, n_queries, tag, quirk) -> None:
    from .measures import GM_FLOOR

    spec_of = iter(names)
    chunks = []
    for line in printed:
        head = f"{line.name:<22}\tall\t"
        if line.how == "relstring":  # per query only
            continue
        if line.how == "runid":
            chunks.append(f"{head}{tag}\n")
            continue
        if line.how == "num_q":
            chunks.append(f"{head}{n_queries}\n")
            continue
        values = columns[next(spec_of)]
        if line.how == "long":
            total = int(quirk if (line.name == "num_rel" and quirk is not None)
                        else np.cumsum(values)[-1])
            chunks.append(f"{head}{total}\n")
        elif line.how == "gm":  # the logs added in query order, as trec_eval adds them
            logs = np.log(np.maximum(values, GM_FLOOR))
            chunks.append(f"{head}{_c_float(math.exp(np.cumsum(logs)[-1] / n_queries))}\n")
        else:  # added in query order and divided once, as trec_eval does
            chunks.append(f"{head}{_c_float(np.cumsum(values)[-1] / n_queries)}\n")
    out.write("".join(chunks))


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
