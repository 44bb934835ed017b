"""The evaluation options, declared once.

:data:`OPTIONS` holds one :class:`Option` a name: its default, its type, the
validator of its kind of value, its documentation, and its command-line flag
with its help text. Everything that takes evaluation options is generated from
it, in the manner of scikit-learn's ``validate_params``:

* :func:`fastndcg.evaluate`, :func:`fastndcg.dask.evaluate`,
  :func:`fastndcg.spark.evaluate` and :func:`~fastndcg.evaluate_runs`
  take the options as ``**options`` and are decorated with :func:`takes_options`,
  which gives each a real signature (``inspect.signature``, ``help()``, the API
  reference show every option with its default, after the function's own
  parameters), writes the options into its docstring's Parameters section, and
  refuses an unknown keyword the same way everywhere: naming it and the closest
  valid one. The functions keep only the parameters that are theirs (the
  engine's, the output's) explicit.
* :func:`fastndcg.partition.check_options` fills in the defaults
  (:func:`bound`) and applies each option's validator (:func:`check`), then the
  rules that span options (a preset, ``measure`` against ``k``, ``complete``
  needs ``qrels``, ...).
* The command line's parser (:mod:`fastndcg.cli.parser`) adds one argument an
  option: its flags, help, choices, metavar, default and the reader of its text
  come from here.

So adding an option is one :class:`Option` here plus the code that uses it.
This module imports nothing heavy: ``fastndcg --help`` reads it; the validators
that need NumPy import it when they run.

>>> OPTIONS["ties"].choices
('average', 'stable', 'optimistic', 'pessimistic', 'trec', 'ranx')
>>> bound({"k": 10})["query"]
'query_id'
"""

from __future__ import annotations

import argparse
import functools
import importlib
import inspect
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from . import _validate as V
from .presets import (DEFAULT_K, DEFAULTS, PRESETS, SCORE_PRECISIONS, check_preset,
                      check_score_precision)

__all__ = ["Option", "OPTIONS", "bound", "check", "from_args", "refuse_unknown",
           "takes_options", "label_sets", "split_named", "RUNS_REFUSES", "Entry",
           "ENTRY_POINTS",
           "TIE_RULES", "ZERO_IDCG", "NAN_SCORES", "NEGATIVE_LABELS", "EXPLAIN",
           "parse_explain"]

# the values of the options that choose among names
TIE_DOC = {  # each tie rule and what it does, in the docstrings
    "average": "tie-aware, as scikit-learn",
    "stable": "input order wins, as LightGBM",
    "optimistic": "highest gain first",
    "pessimistic": "lowest gain first",
    "trec": "score descending, then document id descending as strings: trec_eval's rule, "
            "which needs document ids",
    "ranx": "as ranx's Run ranks them",
}
TIE_RULES = tuple(TIE_DOC)
ZERO_IDCG = ("zero", "one", "nan", "error")
NAN_SCORES = ("error", "last")
NEGATIVE_LABELS = ("error", "zero", "keep")
EXPLAIN = ("dcg", "idcg", "n_relevant", "n_judged", "judged")
_QRELS_ONLY = ("n_judged", "judged")


# --------------------------------------------------------------------------- validators
#
# One a kind of value: ``check(value, name, **context) -> the value to use``, raising
# TypeError (wrong kind) or ValueError (wrong value) with a message that names the
# option. Each calls the project's validator of that kind.

@functools.cache
def _lazy(module: str, name: str) -> Callable:
    """``name`` of the package's ``module`` (e.g. ``"._core"``), imported the first
    time a validator needs it: ``fastndcg --help`` reads this module without NumPy,
    and a call pays the import once, not at every check."""
    return getattr(importlib.import_module(module, __package__), name)


def _is_dict_of_dicts(value) -> bool:
    """Whether ``value`` is judgments as one dict ``{query_id: {doc_id: label}}`` (a
    single source), rather than label sets ``{name: qrels}`` whose qrels are such
    dicts."""
    if not isinstance(value, dict) or not value:
        return isinstance(value, dict)
    first = next(iter(value.values()))
    return isinstance(first, dict) and not (first and isinstance(next(iter(first.values())),
                                                                 Mapping))


def label_sets(value) -> dict | None:
    """The label sets of a ``qrels`` value: ``{name: qrels}`` for a mapping of names
    to qrels sources, None for one source (a file, a table, a dict of dicts).

    >>> label_sets({"human": "h.txt", "llm": "llm.parquet"})
    {'human': 'h.txt', 'llm': 'llm.parquet'}
    >>> label_sets("qrels.txt") is None, label_sets({"q1": {"d1": 1}}) is None
    (True, True)
    """
    if not isinstance(value, Mapping) or _is_dict_of_dicts(value):
        return None
    return dict(value)


def _qrels(value, name: str, **_):
    """``qrels``: one source (checked by the reader that reads it) or label sets, a
    mapping of names to sources (its names and the kinds of its values checked
    here)."""
    if isinstance(value, Mapping) and not value:
        raise ValueError(f"{name}: the {'dict' if isinstance(value, dict) else 'mapping'} is "
                         f"empty (no query, no label set): nothing to evaluate; give at least "
                         f"one query, as {{query_id: {{doc_id: label}}}}, or label sets as "
                         f"{{name: qrels, ...}}")
    sets = label_sets(value)
    if sets is None:
        return value
    from .parts import LABELS
    for key, source in sets.items():
        if not isinstance(key, str) or not key.strip() or "\0" in key:
            raise (TypeError if not isinstance(key, str) else ValueError)(
                f"{name}: a label set is named by a non-empty string (its rows' "
                f"{LABELS!r} value), got {V.shown(key)} ({type(key).__name__}); e.g. "
                f"{name}={{'human': 'qrels.txt', 'llm': 'llm.parquet'}}")
        if source is None or isinstance(source, (Mapping, bool, int, float)) and \
                not _is_dict_of_dicts(source):
            raise TypeError(f"{name}[{key!r}] must be judgments (a TREC qrels file, a Parquet "
                            f"file, a table or a dict {{query_id: {{doc_id: label}}}}), got "
                            f"{V.shown(source)} ({type(source).__name__}); label sets do not "
                            f"nest")
    return sets


def _as_read(value, name: str, **_):
    """One source (``human_qrels``): checked by the reader that reads it; label sets
    (a mapping of names to judgments) are refused here, as one sample is one source."""
    if label_sets(value) is not None:
        raise TypeError(f"{name} takes one source of human judgments (a sample of the "
                        f"queries), got label sets {V.shown(value)}; give one file or table, "
                        f"or give several sets of judgments as label sets in qrels=... instead")
    return value


def _column(value, name: str, **_) -> str:
    return V.text(value, name, what="a column name")


def _weight_column(value, name: str, **_) -> str | None:
    return None if value is None else V.text(value, name,
                                             what="the name of a column of query weights")


def _flag(value, name: str, **_) -> bool:
    return V.flag(value, name)


def _choice(value, name: str, **_) -> str:
    return _lazy("._core", "check_choice")(name, value, OPTIONS[name].choices)


def _cutoffs(value, name: str, **_) -> list:
    return _lazy("._core", "parse_cutoffs")(value)[0]


def _gain(value, name: str, **_):
    return _lazy("._core", "parse_gain")(value)


def _log_base(value, name: str, **_) -> float:
    return _lazy("._core", "parse_log_base")(value)


def _rel(value, name: str, **_) -> int:
    return _lazy(".measures", "check_rel")(value, name)


def _measures(value, name: str, *, rel: int = 1, ranx: bool = False):
    """Measure names, read with the relevance threshold and the preset's names."""
    return _lazy(".measures", "parse")(value, rel, ranx=ranx)


def _preset(value, name: str, **_) -> str:
    return check_preset(value)


def _score_precision(value, name: str, **_) -> str:
    return check_score_precision(value)


def parse_explain(explain, qrels_mode: bool) -> tuple:
    """``explain=``: False (none), True (all that apply) or a list of names."""
    if explain is False or explain is None:
        return ()
    if explain is True:
        return tuple(e for e in EXPLAIN if qrels_mode or e not in _QRELS_ONLY)
    given = explain
    if isinstance(explain, str):
        explain = [p.strip() for p in explain.split(",") if p.strip()]
    if not isinstance(explain, (list, tuple)) or not all(isinstance(e, str) for e in explain):
        raise V.refuse(TypeError, "explain", given, f"{V.spelled('explain')} takes True, "
                       f"False or a list of column kinds from {', '.join(EXPLAIN)}; got "
                       f"{V.shown(explain)}")
    for e in explain:
        if e not in EXPLAIN:
            raise V.refuse(ValueError, "explain", given, f"{V.spelled('explain')}: unknown "
                           f"column kind {e!r}; choose from {', '.join(map(repr, EXPLAIN))}")
        if e in _QRELS_ONLY and not qrels_mode:
            raise V.refuse(ValueError, "explain", given,
                           f"{V.spelled('explain', repr(e), e)} describes judgments, so it "
                           f"needs {V.spelled('qrels', ref=True)}; in list mode every row is "
                           f"judged")
    return tuple(e for e in EXPLAIN if e in explain)


def _explain(value, name: str, *, qrels_mode: bool = False) -> tuple:
    return parse_explain(value, qrels_mode)


def _confidence(value, name: str, **_) -> float:
    return _lazy(".ppi", "check_confidence")(value, name)


def _ppi(value, name: str, **_):
    return _lazy(".ppi", "check_ppi")(value, name)


# --------------------------------------------------------------------------- readers
#
# The command line's text of a value -> the value the option takes. They raise
# argparse.ArgumentTypeError, which argparse shows as it is.

def _read_cutoffs(text: str):
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


def _read_gain(text: str):
    if text in ("exp2", "linear"):
        return text
    try:
        return [float(p) for p in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--gain takes exp2, linear or a gain table such as 0,1,3,7, got {text!r}") from None


def _read_rel(text: str) -> int:
    if not text.strip().isdigit() or int(text) > V.MAX_REL:
        raise argparse.ArgumentTypeError(f"must be an integer from 0 to {V.MAX_REL} (a label "
                                         f">= it is relevant), got {V.shown(text)}")
    return int(text)


def _read_ppi(text: str):
    """``--ppi tuned`` or a number (checked in range with the other options)."""
    if text == "tuned":
        return text
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--ppi takes tuned or a number from 0 to 1, got {V.shown(text)}") from None


def split_named(item: str, flag: str = "run", what: str = "run") -> tuple[str | None, str]:
    """(name, path) of a command-line ``NAME=PATH``; (None, item) for a plain path
    (one that exists, or whose part before '=' could not be a name). ``=PATH`` (an
    empty name) is a ValueError, unless a file of that name exists. ``flag`` and
    ``what``: how messages name the argument and what NAME names.

    >>> split_named("llm=judged/llm.txt", "--qrels", "label set")
    ('llm', 'judged/llm.txt')
    """
    import os
    name, sep, path = item.partition("=")
    if sep and not name and path and not os.path.exists(item):
        raise ValueError(f"{flag} {item!r}: the name before '=' is empty; write NAME=PATH to "
                         f"name the {what}, or give the path alone ({path!r})")
    if not sep or not name or os.path.exists(item) or "/" in name or os.sep in name:
        return None, item
    return name, path


def _read_qrels(values):
    """``--qrels`` as ``qrels=`` takes it: None, one path (``--qrels PATH``), or label
    sets ``{name: path}`` (``--qrels NAME=PATH``, repeated). A name given twice, or a
    path without a name beside named ones, is a ValueError."""
    if values is None or isinstance(values, str):
        return values
    items = [split_named(v, "--qrels", "label set") for v in values]
    if len(items) == 1 and items[0][0] is None:
        return items[0][1]
    sets: dict = {}
    for (name, path), text in zip(items, values):
        if name is None:
            raise ValueError(f"--qrels {text!r} has no name: with several --qrels, each names "
                             f"its label set, as --qrels human=h.txt --qrels llm=l.txt")
        if name in sets:
            raise ValueError(f"--qrels names the label set {name!r} twice ({sets[name]!r} and "
                             f"{path!r}); give each label set its own NAME=")
        sets[name] = path
    return sets


def _read_explain(value):
    """``--explain`` alone (``all``) is every column that applies."""
    return True if value == "all" else value


# --------------------------------------------------------------------------- the options

@dataclass(frozen=True)
class Option:
    """One evaluation option.

    ``default`` is what a call that leaves it out gets (None for the semantic
    options: the preset's value, else fastndcg's :data:`~fastndcg.presets.DEFAULTS`);
    ``type`` the annotation the signatures show; ``check(value, name, **context)``
    its validator; ``doc`` its entry in the docstrings; ``flags`` its command-line
    flags (the last one names it in messages) and ``help`` its help text there, with
    ``metavar``, ``choices``, ``read`` (the reader of its text), ``action``,
    ``nargs``/``const`` as argparse takes them, and ``from_cli`` what the parsed
    value becomes; ``values``: what each of its choices does (an entry point's
    docstring lists those it takes, in place of ``{values}``); ``default_doc``: its
    default in words; ``compared``: True when :func:`fastndcg.compare` passes it on to
    every system it evaluates, else why it does not (options that name what compare
    names itself, or that describe a single evaluation's output), which compare's
    refusal of the keyword says."""
    name: str
    default: Any
    type: str
    check: Callable
    doc: str
    flags: tuple
    help: str
    metavar: str | None = None
    choices: tuple | None = None
    read: Callable | None = None
    action: str | None = None
    nargs: str | None = None
    const: Any = None
    from_cli: Callable | None = None
    compared: bool | str = True
    values: Mapping[str, str] | None = None
    default_doc: str | None = None

    @property
    def dest(self) -> str:
        """The attribute argparse stores the flag's value in."""
        return self.flags[-1].lstrip("-").replace("-", "_")

    def argument(self) -> tuple[tuple, dict]:
        """(flags, keyword arguments) of ``argparse``'s ``add_argument`` for it."""
        kw: dict = {"default": self.default, "help": self.help}
        for key in ("metavar", "choices", "action", "nargs", "const"):
            value = getattr(self, key)
            if value is not None:
                kw[key] = list(value) if key == "choices" else value
        if self.read is not None:
            kw["type"] = self.read
        return self.flags, kw

    def cli_value(self, args) -> Any:
        """The value the option takes from parsed command-line arguments."""
        value = getattr(args, self.dest)
        return self.from_cli(value) if self.from_cli is not None else value

    def doc_for(self, entry: "Entry") -> str:
        """Its docstring entry in ``entry``'s docstring: the choices the entry takes,
        and the default it gets there."""
        text = self.doc
        if self.values is not None:
            taken = [v for v in self.values if v not in entry.values.get(self.name, ())]
            described = [f"\"{v}\" ({self.values[v]})" for v in taken]
            text = text.replace("{values}", ", ".join(described[:-1]) + " or " + described[-1])
        if self.name in entry.defaults:
            return f"{text} (default {entry.defaults[self.name]!r})."
        if self.name in DEFAULTS:  # a semantic option: a preset sets it
            value = DEFAULTS[self.name]
            shown = f"{value:g}" if isinstance(value, float) else f'"{value}"'
            return (f"{text}; default: the preset's value, else {shown}." if "preset" in
                    entry.takes else f"{text}; default {shown}.")
        return f"{text} (default {self.default_doc})." if self.default_doc else text

OPTIONS: dict[str, Option] = {o.name: o for o in [
    Option("qrels", None, "str | os.PathLike | pyarrow.Table | Mapping[str, Any] | None",
           _qrels,
           "judgments (TREC qrels file ``qid iter docno rel``, Parquet or a table with "
           "columns ``query``, ``doc``, ``label``). Qrels mode: a run row's label is its "
           "judgment (0 when unjudged), IDCG uses every judged document of the query, run "
           "queries without judgments are left out (``n_unjudged``). Several label sets: a "
           "mapping of names to judgments, e.g. ``{\"human\": \"h.txt\", \"llm\": "
           "\"llm.parquet\"}``; the run is read and ranked once and each set scored from "
           "that ranking, with the numbers it gives alone; the result has one report a set "
           "and per-query rows with a ``labels`` column.",
           ("--qrels",), "judgments: TREC qrels file (qid iter docno rel) or Parquet; "
                         "NAME=PATH, repeated, scores several label sets in one pass",
           metavar="[NAME=]PATH", action="append", from_cli=_read_qrels),
    Option("human_qrels", None, "str | os.PathLike | pyarrow.Table | None", _as_read,
           "human judgments of a sample of the queries, read as ``qrels`` is, when ``qrels`` "
           "holds an LLM's (or, without ``qrels``, when the run's label column does: a log "
           "labelled inline by an LLM): ``report.ppi`` then gives each measure's "
           "prediction-powered mean "
           "and interval (:class:`fastndcg.ppi.PPI`), from the LLM-labelled queries and the "
           "human sample together, on one machine or (:func:`fastndcg.dask.evaluate`) on Dask "
           "with the same bits; :func:`fastndcg.compare` gives the same for every paired "
           "difference of systems. The queries with human judgments are taken to be a uniform "
           "random sample of the queries.",
           ("--human-qrels",), "human judgments of a sample of the queries (TREC qrels or "
                               "Parquet), with --qrels (or the run's labels) an LLM's: "
                               "adds prediction-powered means and intervals", metavar="PATH"),
    Option("confidence", 0.95, "float", _confidence,
           "the level of the prediction-powered intervals (with ``human_qrels``), strictly "
           "between 0 and 1.",
           ("--confidence",), "the level of the intervals of --human-qrels (default 0.95)",
           metavar="LEVEL", read=float, compared="compare takes confidence= itself"),
    Option("ppi", "tuned", "str | float", _ppi,
           "the λ of the prediction-powered means (with ``human_qrels``): \"tuned\" (PPI++, "
           "the λ of least variance, clipped to [0, 1]) or a fixed number from 0 (the human "
           "sample alone) to 1 (plain PPI).",
           ("--ppi",), "λ of --human-qrels: tuned (PPI++, default) or a number from 0 (the "
                       "human sample alone) to 1 (plain PPI)", metavar="LAMBDA",
           read=_read_ppi),
    Option("k", DEFAULT_K, "int | None | Sequence[int]", _cutoffs,
           "the NDCG cutoffs: an int >= 1, None (the whole list) or a sequence of them, "
           "all computed in one pass",
           ("-k",), "cutoffs, comma-separated, or 'all' (default 1,3,5,10)",
           read=_read_cutoffs, default_doc="1, 3, 5, 10 when no ``measure`` is named"),
    Option("measure", None, "str | Sequence[str] | None", _measures,
           "the measures, instead of ``k`` (NDCG cutoffs): named as trec_eval does "
           "(``\"ndcg_cut.5,10\"``, ``\"map\"``, ``\"P.5,10\"``, ``\"recall.100\"``, "
           "``\"recip_rank\"``, ``\"Rprec\"``, ``\"success.10\"``, ``\"num_rel_ret\"``; a name "
           "with cutoffs and none given takes trec_eval's default cutoffs), as ir_measures "
           "does (``\"nDCG@10\"``, ``\"AP\"``, ``\"AP(rel=2)@100\"``, ``\"RR@10\"``, "
           "``\"P@5\"``, ``\"R@1000\"``, ``\"Success@10\"``, ``\"Judged@10\"``, "
           "``\"NumRet\"``), or by fastndcg's column names (``\"ap@100\"``, ``\"p@5\"``); a "
           "string (several separated by spaces) or a list. Every measure comes from one "
           "ranking of each query, under the same ``ties`` rule. Output columns use "
           "fastndcg's names: NDCG first (``ndcg@10``), then the others in the order named "
           "(``ap``, ``rr@10``, ``p@5``, ``ap(rel=2)``; see :mod:`fastndcg.measures`). "
           "``Judged@k`` needs ``qrels``.",
           ("-m", "--measure"),
           "measures named as trec_eval does (-m map -m P.5,10 -m recip_rank -m ndcg_cut.10 "
           "-m recall.1000 -m Rprec -m success.10 -m num_rel_ret) or as ir_measures does "
           "(-m nDCG@10 -m 'AP(rel=2)' -m RR@10 -m P@5 -m Judged@10); repeatable; instead of -k",
           metavar="MEASURE", action="append"),
    Option("rel", None, "int | None", _rel,
           "the relevance threshold of the binary measures that do not name one: a document "
           "is relevant when its label is >= rel (default 1; trec_eval's ``-l``). In qrels "
           "mode R (the denominator of recall, AP and R-precision) counts the query's "
           "relevant judged documents, retrieved or not, and grades are read as judged "
           "(before ``negative_labels``); in list mode the list is the whole judged set, so "
           "R counts the relevant items of the list.",
           ("-l", "--rel"), "relevance threshold of the binary measures: a label >= LEVEL is "
                            "relevant (trec_eval -l; default 1)",
           metavar="LEVEL", read=_read_rel),
    Option("preset", None, "str | None", _preset,
           "a tool's semantics by name: " + ", ".join(f'"{p}"' for p in PRESETS)
           + " (see :mod:`fastndcg.presets`); options given explicitly override it.",
           ("--preset",), "a tool's NDCG semantics (gain, ties, zero IDCG, negative labels, "
                          "score precision); options given next to it override it",
           choices=tuple(PRESETS)),
    Option("gain", None, "str | Sequence[float] | None", _gain,
           "\"exp2\" (2**label - 1), \"linear\" (the label) or a table ``gain[label]`` for "
           "integer labels",
           ("--gain",), f"exp2 (2^label - 1), linear, or a table such as 0,1,3,7 (default "
                        f"{DEFAULTS['gain']})", read=_read_gain),
    Option("ties", None, "str | None", _choice,
           "the order of tied scores: {values}",
           ("--ties",), f"default {DEFAULTS['ties']}", choices=TIE_RULES, values=TIE_DOC),
    Option("zero_idcg", None, "str | None", _choice,
           "the result when IDCG@k is 0: \"zero\", \"one\", \"nan\" or \"error\"",
           ("--zero-idcg",), f"default {DEFAULTS['zero_idcg']}", choices=ZERO_IDCG),
    Option("log_base", None, "float | None", _log_base,
           "the discount base b > 1: 1 / log_b(rank + 1)",
           ("--log-base",), f"default {DEFAULTS['log_base']:g}", read=float),
    Option("nan_scores", None, "str | None", _choice,
           "\"error\" or \"last\" (NaN ranks below every number, tied)",
           ("--nan-scores",), f"default {DEFAULTS['nan_scores']}", choices=NAN_SCORES),
    Option("negative_labels", None, "str | None", _choice,
           "\"error\", \"zero\" (treated as 0) or \"keep\"",
           ("--negative-labels",), f"default {DEFAULTS['negative_labels']}",
           choices=NEGATIVE_LABELS),
    Option("score_precision", None, "str | None", _score_precision,
           "\"float64\" (scores compared as given) or \"float32\" (rounded to 32-bit floats "
           "first, as pytrec_eval does)",
           ("--score-precision",), "compare scores as given (float64, default) or rounded to "
                                   "float32 (pytrec_eval, trec_eval 9.x)",
           choices=SCORE_PRECISIONS),
    Option("complete", False, "bool", _flag,
           "qrels mode: score judged queries missing from the run as 0 (trec_eval ``-c``); "
           "by default they are left out and counted (``n_missing``).",
           ("--complete",), "score judged queries missing from the run as 0 (trec_eval -c)",
           action="store_true"),
    Option("query", "query_id", "str", _column, "the column of query ids.",
           ("--query-col",), "the column of query ids (of the log or run, and of Parquet "
                             "qrels)", metavar="COLUMN"),
    Option("doc", "doc_id", "str", _column,
           "the column of document ids, read in qrels mode and for ``ties=\"trec\"``.",
           ("--doc-col",), "the column of document ids, read in qrels mode and by --ties trec",
           metavar="COLUMN"),
    Option("label", "label", "str", _column,
           "the column of relevance labels (of the log, or of Parquet qrels); not read from "
           "a run in qrels mode.",
           ("--label-col",), "the column of relevance labels (of the log, or of Parquet qrels)",
           metavar="COLUMN"),
    Option("score", "score", "str", _column, "the column of scores: the higher, the better "
                                             "the rank.",
           ("--score-col",), "the column of scores: the higher, the better the rank",
           metavar="COLUMN", compared="systems= names the score columns"),
    Option("explain", False, "bool | Sequence[str]", _explain,
           "per-query columns that show why a query scored what it did: True (all that "
           "apply) or a list of \"dcg\" (``dcg@K``), \"idcg\" (``idcg@K``), \"n_relevant\" "
           "(items with a gain above 0 in the ideal list: in qrels mode, the query's judged "
           "documents), and in qrels mode \"n_judged\" (judged documents of the query) and "
           "\"judged\" (``judged@K``: the fraction of the top min(K, n) ranked documents "
           "that have a judgment, ties counted as ``ties`` ranks them).",
           ("--explain",), "per-query columns explaining each score (with --per-query): all, "
                           "or some of " + ",".join(EXPLAIN),
           metavar="KINDS", nargs="?", const="all", from_cli=_read_explain,
           compared="explain is for evaluate; compare keeps the per-query values only"),
    Option("weight", None, "str | None", _weight_column,
           "a column of query weights (constant within a query, finite, >= 0) for weighted "
           "means (e.g. traffic); ``per_query`` then carries it. With None every query "
           "counts once.",
           ("--weight-col",), "a column of query weights (constant within a query) for "
                              "weighted means, e.g. traffic",
           metavar="COLUMN",
           compared="the tests weigh every query once; weighted comparisons are not supported"),
]}


# --------------------------------------------------------------------------- using it

def refuse_unknown(given, where: str, also=()) -> None:
    """Every keyword in ``given`` is an option or one of ``also`` (the function's own
    parameters); any other is a TypeError naming it and the closest valid one."""
    V.keywords(given, [*OPTIONS, *also], where)


def bound(given: Mapping, where: str = "fastndcg.evaluate") -> dict:
    """Every option: the value given, else its default (unknown keywords refused)."""
    refuse_unknown(given, where)
    return {name: given.get(name, o.default) for name, o in OPTIONS.items()}


def check(name: str, value, **context):
    """``value`` of option ``name`` through its validator: the value to use, or an
    :class:`~fastndcg._validate.OptionError` naming the option as the caller spells
    it. The context is what a validator reads of the other options (``rel`` and
    ``ranx`` for ``measure``, ``qrels_mode`` for ``explain``)."""
    try:
        return OPTIONS[name].check(value, name, **context)
    except (TypeError, ValueError) as err:
        raise V.as_refusal(err, name, value) from None


# The evaluation options fastndcg.agreement (and ``fastndcg agreement``) does not take,
# and why: it compares two label sets given as its own arguments, over every judged
# document, and scores runs for their means only.
AGREEMENT_REFUSES = {
    "qrels": "agreement compares the label sets a and b: give the judgments as those",
    "human_qrels": "agreement compares two label sets; prediction-powered means are "
                   "evaluate's (fastndcg.evaluate(..., qrels=llm, human_qrels=human))",
    "ppi": "agreement has no prediction-powered means; they are evaluate's",
    "confidence": "agreement has no prediction-powered intervals; they are evaluate's",
    "explain": "explain is for evaluate; agreement writes its statistics per query",
    "weight": "agreement weighs every judged document once; weighted agreement is not "
              "supported",
}


# The evaluation options fastndcg.evaluate_runs does not take, and why: prediction-
# powered means are given one run at a time.
_ONE_RUN = ("prediction-powered means are given one run at a time, by fastndcg.evaluate on "
            "one machine, fastndcg.dask.evaluate on Dask or fastndcg.spark.evaluate on Spark: "
            "call one of them for each run with human_qrels=...")
RUNS_REFUSES = {
    "human_qrels": _ONE_RUN,
    "confidence": "it is the level of prediction-powered intervals; " + _ONE_RUN,
    "ppi": "it is the λ of prediction-powered means; " + _ONE_RUN,
}


# --------------------------------------------------------------------------- entry points

@dataclass(frozen=True)
class Entry:
    """What one public entry point takes of the options, as data: ``takes``, the
    options it takes (its signature lists them, its docstring describes them);
    ``refuses``, every other option with why it does not take it (refused by name,
    whatever the value); ``defaults``, its own default of an option where it differs
    from the option's; ``values``, the values of an option it refuses although the
    option has them (value -> why; of an option with ``choices``), left out of its
    docstring."""
    where: str
    takes: tuple
    refuses: Mapping[str, str]
    defaults: Mapping[str, Any] = field(default_factory=dict)
    values: Mapping[str, Mapping[str, str]] = field(default_factory=dict)

    def default(self, name: str):
        """The value of option ``name`` when a call leaves it out."""
        return self.defaults.get(name, OPTIONS[name].default)

    def bound(self, given: Mapping) -> dict:
        """Every option it takes: the value given, else its default."""
        return {name: given.get(name, self.default(name)) for name in self.takes}

    def check(self, name: str, value, **context):
        """:func:`check` as this entry point takes the option: a choice it refuses is
        refused with why, any other value not among the choices it takes with those."""
        refused = self.values.get(name)
        if not refused:
            return check(name, value, **context)
        why = refused.get(value) if isinstance(value, str) else None
        if why is not None:
            raise V.refuse(ValueError, name, value, why)
        try:
            return _lazy("._core", "check_choice")(
                name, value, tuple(c for c in OPTIONS[name].choices if c not in refused))
        except (TypeError, ValueError) as err:
            raise V.as_refusal(err, name, value) from None


def _entry(where: str, takes=None, refuses: Mapping[str, str] | None = None,
           other: str = "", **kw) -> Entry:
    """An entry point taking ``takes`` (by default every option but ``refuses``); an
    option neither takes nor refuses is refused with ``other``."""
    refuses = dict(refuses or {})
    takes = tuple(n for n in OPTIONS if n not in refuses and (takes is None or n in takes))
    refuses.update({n: other for n in OPTIONS if n not in takes and n not in refuses})
    return Entry(where, takes, refuses, **kw)


# The arrays functions (fastndcg.ndcg, dcg, idcg, measure): labelled lists, no ids
_ARRAYS = ("k", "gain", "ties", "log_base", "zero_idcg", "nan_scores", "negative_labels",
           "score_precision", "preset")
_NOT_ARRAYS = ("it is an option of fastndcg.evaluate, which reads logs, runs and judgments; "
               "this function scores arrays of scores and labels")
_ARRAY_TIES = {
    "trec": "ties='trec' breaks ties by document id (trec_eval's rule), and these functions "
            "take no document ids; it belongs to qrels mode. Here use "
            "'average', 'stable', 'optimistic' or 'pessimistic'",
    "ranx": "ties='ranx' orders each query as ranx's Run does, which fastndcg.evaluate reads "
            "(a ranx Run, a run file, a table); here use 'average', 'stable', 'optimistic' or "
            "'pessimistic'",
}

ENTRY_POINTS: dict[str, Entry] = {e.where: e for e in [
    _entry("fastndcg.evaluate"),
    _entry("fastndcg.dask.evaluate"),
    _entry("fastndcg.spark.evaluate"),
    _entry("fastndcg.evaluate_runs", refuses=RUNS_REFUSES),
    _entry("fastndcg.agreement", refuses=AGREEMENT_REFUSES),
    _entry("fastndcg.ndcg", _ARRAYS, other=_NOT_ARRAYS, defaults={"k": 10},
           values={"ties": _ARRAY_TIES}),
    _entry("fastndcg.dcg", _ARRAYS, other=_NOT_ARRAYS, defaults={"k": 10},
           values={"ties": _ARRAY_TIES}, refuses={
               "zero_idcg": "DCG is not divided by IDCG, so an IDCG of 0 changes nothing; "
                            "zero_idcg is fastndcg.ndcg's"}),
    _entry("fastndcg.idcg", ("k", "gain", "log_base", "negative_labels"), other=_NOT_ARRAYS,
           defaults={"k": 10}, refuses={
               "ties": "the ideal ordering sorts the labels, whose ties do not change it",
               "preset": "the ideal DCG is the same under every preset given the gain and "
                         "discount; give gain= and log_base=",
               "nan_scores": "idcg reads no scores",
               "score_precision": "idcg reads no scores",
               "zero_idcg": "idcg returns the IDCG itself, 0 included"}),
    _entry("fastndcg.measure", ("measure", "rel", *_ARRAYS[1:]), other=_NOT_ARRAYS,
           defaults={"measure": "nDCG@10"}, values={"ties": _ARRAY_TIES}, refuses={
               "k": "name the NDCG cutoffs in measure=, e.g. measure='nDCG@5 nDCG@10 AP'"}),
]}


def from_args(args, compared: bool = False) -> dict:
    """The options a parsed command line gives: those its command has flags for (with
    ``compared``, only those :func:`fastndcg.compare` passes on: its own flags, such as
    ``--confidence``, are its arguments)."""
    return {n: o.cli_value(args) for n, o in OPTIONS.items()
            if hasattr(args, o.dest) and (not compared or o.compared is True)}


_ENTRY = re.compile(r"^(?P<indent>\s*)\*\*options\s*:")


def _doc_entries(indent: str, entry: Entry) -> list[str]:
    """The docstring entries of the options ``entry`` takes, ``name : doc``, wrapped
    as the rest."""
    import textwrap
    out = []
    for name in entry.takes:
        out += textwrap.wrap(f"{name} : {OPTIONS[name].doc_for(entry)}", 88 - len(indent),
                             initial_indent=indent, subsequent_indent=indent + "    ",
                             break_on_hyphens=False)
    return out


def _with_options_doc(doc: str | None, entry: Entry) -> str | None:
    """``doc`` with its ``**options :`` entry (and the lines indented under it)
    replaced by one entry an option ``entry`` takes."""
    if not doc:
        return doc
    lines = doc.split("\n")
    for i, line in enumerate(lines):
        m = _ENTRY.match(line)
        if m:
            indent = m.group("indent")
            j = i + 1
            while j < len(lines) and lines[j].strip() and \
                    len(lines[j]) - len(lines[j].lstrip()) > len(indent):
                j += 1
            return "\n".join(lines[:i] + _doc_entries(indent, entry) + lines[j:])
    return doc


def takes_options(where: str) -> Callable:
    """Decorator of a function ``f(..., *, own..., **options)``, the entry point
    ``where`` of :data:`ENTRY_POINTS` (its public name, for messages). The function
    gets a signature listing every option the entry point takes, with its default
    there and its type, after its own positional parameters and before its own
    keyword-only ones; its docstring's ``**options :`` entry becomes one entry an
    option; an option it refuses is refused with the reason (whatever its value),
    and a keyword that is neither an option nor its own as :func:`refuse_unknown`
    does, before the function runs. The function receives only the options given
    (:meth:`Entry.bound` fills in the rest).

    >>> @takes_options("fastndcg.idcg")
    ... def f(**options):
    ...     return options
    >>> "ties" in inspect.signature(f).parameters, f(k=3)
    (False, {'k': 3})
    >>> f(ties="stable")
    Traceback (most recent call last):
    TypeError: fastndcg.idcg() does not take ties=: the ideal ordering sorts the labels, whose ties do not change it
    """
    entry = ENTRY_POINTS[where]

    def decorate(fn: Callable) -> Callable:
        sig = inspect.signature(fn)
        own = [p for p in sig.parameters.values() if p.kind is not p.VAR_KEYWORD]
        names = [p.name for p in own]
        clash = set(names) & set(OPTIONS)
        if clash:
            raise TypeError(f"{where}() declares {sorted(clash)}, which are options")
        first = [p for p in own if p.kind is not p.KEYWORD_ONLY]
        last = [p for p in own if p.kind is p.KEYWORD_ONLY]
        options = [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY,
                                     default=entry.default(n), annotation=OPTIONS[n].type)
                   for n in entry.takes]
        taken = list(entry.takes) + names
        refuses = dict(entry.refuses)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            V.keywords(kwargs, taken, where, refuses)
            return fn(*args, **kwargs)

        wrapper.__signature__ = sig.replace(parameters=first + options + last)
        wrapper.__doc__ = _with_options_doc(fn.__doc__, entry)
        return wrapper
    return decorate
