"""The NDCG of other tools, by name: ``preset="trec_eval"`` and friends.

Every tool means something slightly different by NDCG: the gain of a label, the
order of tied scores, where the ideal ranking comes from, what a query without
relevant items scores, and how precisely scores are compared. A preset sets all
of fastndcg's semantic options to one tool's choices:

========== ====== ===================== =========== ======== ======== ========
preset     gain   ties                  IDCG from   zero     negative scores
                                                    IDCG     labels   compared
========== ====== ===================== =========== ======== ======== ========
trec_eval  linear trec (score, docno ↓) all judged  0        as 0     float64
pytrec_eval linear trec (score, docno ↓) all judged 0        as 0     float32
sklearn    linear average (tie-aware)   the list    0        error    as given
lightgbm   exp2   stable (input order)  the list    1        error    as given
xgboost    exp2   stable (input order)  the list    1        error    float32
xgboost-   exp2   stable (input order)  the list    0        error    float32
ranx       linear ranx (see below)      all judged  0        as 0     float64
========== ====== ===================== =========== ======== ======== ========

``trec_eval`` is trec_eval 10.x; ``pytrec_eval`` is pytrec_eval, trec_eval 9.x
and ir_measures' default provider, which round scores to 32-bit floats before
ranking (so scores that differ only beyond float32 precision tie); their
``iprec_at_recall`` and ``11pt_avg`` read the relevant item int(recall x R + 0.9),
where trec_eval 10 reads round(recall x R), and ``preset="pytrec_eval"`` does as they
do. ``xgboost``
is XGBoost's ``ndcg`` metric, ``xgboost-`` its ``ndcg-`` variant; XGBoost keeps
predictions as float32, and its ``ndcg`` without ``@k`` stops at rank 32 (its
default cutoff since 2.0), so ask for ``k=32`` to reproduce it on longer lists. "IDCG from all
judged" needs qrels (``evaluate(..., qrels=)``); with a log of labels it is the
list.

``ranx`` is ranx's ``evaluate`` (0.3): it ranks each query with Numba's
``np.argsort`` of the negated scores, a quicksort that is not stable, so the
order of tied scores depends on the order the rows come in. ``ties="ranx"``
reproduces it: the rows of each query, in the order they are read (a run file's
lines, a table's rows, a dict's items), are sorted exactly so. A ``ranx.Run``
given as the source holds its rows ranked already, and they are read in that
order, as ranx's ``evaluate`` reads them (``make_comparable=True`` sorts a Run
again, which can reorder tied scores once more). What it means: two runs holding
the same scores in a different order can score differently, in ranx and here
alike; a run without tied scores scores the same under every rule. With
``preset="ranx"`` measures are read by ranx's names first (``bpref`` is then
ranx's bpref, ``recall`` the whole list's; see :func:`fastndcg.measures.parse`).
``ndcg_burges@k`` asks for 2**label - 1 gains. ranx refuses a run whose queries
are not the qrels' unless told ``make_comparable=True``, which then scores the
missing queries 0: ``complete=True`` here does the same.

A grade that is not a whole number (2.7, 0.5: an LLM judge's, a mean of
judges') is read as the preset's tool reads it (:attr:`Preset.grades`):
``trec_eval`` reads its whole part (C's ``atol``: 2.7 -> 2, 0.5 and -0.5 -> 0),
``ranx`` casts it to an int (toward zero, as its ``Qrels`` casts a dict's grades), each
with one :class:`GradeWarning` naming the file and line (or the argument, query and
document) of the first such grade; ``pytrec_eval``, ``lightgbm`` and the ``xgboost``
presets refuse it, as those tools do; ``sklearn`` and no preset use it as it is.

Each preset also takes only the grades its tool takes (:attr:`Grades.bounds`,
:attr:`Grades.text`), checked against the tools themselves:

* a qrels file's grade field is read as the tool reads its text: ``trec_eval`` by
  C's ``atol`` whatever it holds ('0x10', 'abc' and 'nan' are 0, '1e300' is 1, with
  the warning above), ``pytrec_eval`` and ``ranx`` by Python's ``int()`` (as ranx's
  ``from_file`` and ir_measures' reader, which pytrec_eval's users read files with:
  '+3' and '1_0' are taken, '3.0', '1e3' and '0x10' refused);
* ``trec_eval`` and ``pytrec_eval`` refuse a grade of 2**31 or more (their table of
  grade counts would pass 16 GiB: trec_eval stops, pytrec_eval wraps past 2**32
  and crashes past about 2**62), ``ranx`` one outside 64-bit ints (it overflows),
  and -2**63, which ranx scores as relevant;
* ``lightgbm`` and the ``xgboost`` presets round labels to 32-bit floats first, as
  those tools hold them (1 + 1e-9 is 1 there; XGBoost also reads a label less than
  1e-6 past its whole part as that whole part: 2.000001 is 2), and, with their
  exponential gain,
  take labels 0 to 30 (LightGBM's default ``label_gain``) or 0 to 31 (XGBoost).
  NaN is refused everywhere, although LightGBM takes a NaN label (and scores it from
  an undefined cast).

Options given explicitly next to a preset override it (``preset="trec_eval",
gain="exp2"`` is trec_eval's rules with exponential gain). A combination the
preset cannot honour is an error: the trec presets on ``ndcg``/``dcg``, which
take no document ids to break ties with, and the learning-to-rank presets
(``sklearn``, ``lightgbm``, ``xgboost``) with qrels, which those tools do not read.

>>> resolve("lightgbm", "log", gain=None, ties=None)["zero_idcg"]
'one'
>>> resolve(None, "log", gain="linear")["gain"]
'linear'
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:  # NumPy loads on first use: the command line starts without it
    import numpy as np

__all__ = ["PRESETS", "Preset", "resolve", "DEFAULTS", "SEMANTIC_OPTIONS", "DEFAULT_K",
           "SCORE_PRECISIONS", "check_preset", "check_score_precision", "Grades",
           "GradeWarning", "grades_of", "fractional", "read_grades"]

# fastndcg's own defaults, used where neither the caller nor a preset sets an option
DEFAULTS = {"gain": "exp2", "ties": "average", "log_base": 2.0, "zero_idcg": "zero",
            "nan_scores": "error", "negative_labels": "error", "score_precision": "float64"}
SEMANTIC_OPTIONS = tuple(DEFAULTS)
SCORE_PRECISIONS = ("float64", "float32")
DEFAULT_K = (1, 3, 5, 10)  # evaluate's cutoffs when neither k nor measure is given


class GradeWarning(UserWarning):
    """A grade that is not a whole number was read as a preset's tool reads it (its
    whole part), not as it is; the message names the first such grade and where it is."""


@dataclass(frozen=True)
class Grades:
    """How a tool reads a grade that is not a whole number (2.7, 0.5, -0.5).

    ``rule``: "as given" (the float is the grade), "atol" (its whole part, as C's
    ``atol`` reads the text: trec_eval), "int" (cast to an int, toward zero: ranx) or
    "refuse"; ``tool``: the tool's name; ``how``: what it does, in words.

    >>> PRESETS["trec_eval"].grades.rule
    'atol'
    """
    rule: str = "as given"
    tool: str = ""
    how: str = ""
    # a qrels file's grade, as the tool reads its text: "number" (a decimal number),
    # "atol" (C's atol: trec_eval) or "int" (Python's int(): ranx's and ir_measures'
    # readers, which pytrec_eval's users read files with)
    text: str = "number"
    # the grades the tool holds, (lowest, highest), and what it does beyond them;
    # ``exp2_only``: only with exponential gain (LightGBM's default label_gain, XGBoost's
    # ndcg_exp_gain)
    bounds: tuple = ()
    beyond: str = ""
    exp2_only: bool = False
    float32: bool = False  # grades are rounded to 32-bit floats first (LightGBM, XGBoost)
    # a grade less than this past its whole part is read as the whole part (XGBoost's
    # kRtEps: 2.000001 is 2 there; 0: none)
    tolerance: float = 0.0

    @property
    def truncates(self) -> bool:
        return self.rule in ("atol", "int")

    def warning(self, grade, read_as, where: str, count: int, preset: str) -> str:
        """The one warning of a truncated grade: ``where`` names it (a file and line, or
        an argument, query and document); ``count``: how many grades are not whole."""
        more = f"; {count:,} grades are not whole numbers" if count > 1 else ""
        return (f"{where}: grade {_text(grade)} read as {_text(read_as)}, as {self.tool} reads "
                f"it ({self.how}){more}; preset={preset!r} does as {self.tool} does: write "
                f"whole-number grades to silence this, or leave preset out to use the grades "
                f"as they are")

    def refusal(self, grade, where: str, preset: str) -> str:
        """The error of a grade that is not a whole number, where the tool refuses it."""
        return (f"{where}: grade {_text(grade)} is not a whole number, and {self.tool} refuses "
                f"such grades ({self.how}); preset={preset!r} refuses it as {self.tool} does: "
                f"round the grades, or leave preset out to use them as they are (gain "
                f"'linear' is the grade, 'exp2' 2**grade - 1)")

    def out_of_bounds(self, grade, where: str, preset: str) -> str:
        """The error of a grade outside the ones the tool holds."""
        lo, hi = self.bounds
        return (f"{where}: grade {_text(grade)} is outside {_text(lo)} to {_text(hi)}, the "
                f"grades {self.tool} takes ({self.beyond}); preset={preset!r} refuses it as "
                f"{self.tool} does: map the grades into that range, or leave preset out to "
                f"use them as they are")

    def bad_text(self, text: str, where: str, preset: str) -> str:
        """The error of a qrels file's grade that is not a whole number as Python's
        int() writes one (ranx's and ir_measures' readers)."""
        return (f"{where}: grade {text!r} is not a whole number as Python's int() reads "
                f"one, and {self.tool} refuses such grades ({self.how}); preset={preset!r} "
                f"refuses it as {self.tool} does: write the grade as a whole number, or leave "
                f"preset out to read it as a number")


def _text(grade) -> str:
    """A grade as a message shows it: a file's text as written, a number plainly."""
    if isinstance(grade, (str, int)):
        return repr(grade)
    value = float(grade)
    whole = math.isfinite(value) and value == int(value) and abs(value) < 1e16
    return repr(int(value)) if whole else repr(value)


AS_GIVEN = Grades()


@dataclass(frozen=True)
class Preset:
    name: str
    tool: str
    options: dict
    idcg_source: str
    qrels: bool            # the tool reads judgments (qrels mode makes sense)
    needs_doc_ids: bool    # its tie rule breaks ties by document id
    grades: Grades = field(default=AS_GIVEN)  # how it reads a grade that is not whole


_TREC = {"gain": "linear", "ties": "trec", "log_base": 2.0, "zero_idcg": "zero",
         "negative_labels": "zero"}
_LTR = {"gain": "exp2", "ties": "stable", "log_base": 2.0, "negative_labels": "error",
        "score_precision": "float64"}
# XGBoost keeps predictions and base margins as float32
_XGB = {**_LTR, "score_precision": "float32"}
# LightGBM and XGBoost hold labels as 32-bit floats; LightGBM's default label_gain has
# 31 gains (labels 0-30), XGBoost's exponential gain takes labels up to 31
_LIGHTGBM_GRADES = Grades("refuse", "LightGBM", "label should be int type for ranking task",
                          bounds=(0, 30), beyond="labels are not negative, and its default "
                          "label_gain holds the gains of labels 0 to 30", exp2_only=True,
                          float32=True)
_XGBOOST_GRADES = Grades("refuse", "XGBoost", "label must be either 0 or positive integer",
                         bounds=(0, 31), beyond="labels are not negative, and at most 31 with "
                         "its exponential gain", exp2_only=True, float32=True,
                         tolerance=1e-6)

PRESETS: dict[str, Preset] = {p.name: p for p in [
    Preset("trec_eval", "trec_eval 10.x (ndcg, ndcg_cut.k)",
           {**_TREC, "score_precision": "float64"}, "all judged documents", True, True,
           Grades("atol", "trec_eval", "C's atol: the whole number it starts with",
                  text="atol", bounds=(-(1 << 63), (1 << 31) - 1),
                  beyond="it keeps a count for every grade from 0 to a query's highest, in a "
                         "table that would take more than 16 GiB, and stops")),
    Preset("pytrec_eval", "pytrec_eval, trec_eval 9.x, ir_measures (default provider)",
           {**_TREC, "score_precision": "float32"}, "all judged documents", True, True,
           Grades("refuse", "pytrec_eval", "TypeError: Expected relevance to be integer.",
                  text="int", bounds=(-(1 << 63), (1 << 31) - 1),
                  beyond="a grade of 2**31 or more needs a table of more than 16 GiB there, "
                         "past 2**32 it wraps around, and past about 2**62 it crashes")),
    Preset("sklearn", "scikit-learn ndcg_score / dcg_score",
           {"gain": "linear", "ties": "average", "log_base": 2.0, "zero_idcg": "zero",
            "negative_labels": "error", "score_precision": "float64"}, "the list", False, False),
    Preset("lightgbm", "LightGBM metric ndcg@k (default label_gain)",
           {**_LTR, "zero_idcg": "one"}, "the list", False, False, _LIGHTGBM_GRADES),
    Preset("xgboost", "XGBoost eval_metric ndcg@k",
           {**_XGB, "zero_idcg": "one"}, "the list", False, False, _XGBOOST_GRADES),
    Preset("xgboost-", "XGBoost eval_metric ndcg@k- (queries without relevant items score 0)",
           {**_XGB, "zero_idcg": "zero"}, "the list", False, False, _XGBOOST_GRADES),
    Preset("ranx", "ranx evaluate (ndcg@k, map@k, mrr@k, ...; ties as its Run ranks them)",
           {**_TREC, "ties": "ranx", "score_precision": "float64"}, "all judged documents",
           True, False, Grades("int", "ranx", "its Qrels casts a dict's grades to int, toward "
                                              "zero; its from_file and from_df refuse them",
                               text="int", bounds=(-(1 << 63) + 1, (1 << 63) - 1),
                               beyond="it keeps grades as 64-bit ints: 'Python int too large "
                                      "to convert to C long', and scores -2**63 as "
                                      "relevant")),
]}


def resolve(preset: str | None, context: str, **given) -> dict:
    """The semantic options to use: those ``given`` (not None), else the preset's,
    else fastndcg's defaults. ``context``: "arrays" (``ndcg``/``dcg``), "log" or
    "qrels" (``evaluate``). Raises for an unknown preset or a combination the
    preset cannot honour."""
    if preset is not None:
        p = PRESETS[check_preset(preset)]
        ties = given.get("ties")  # not yet validated: compare only a str with "trec"
        if context == "arrays" and preset == "ranx" and (
                ties is None or (isinstance(ties, str) and ties == "ranx")):
            from . import _validate as V
            raise V.refuse(ValueError, "preset", preset,
                           f"{V.spelled('preset', repr('ranx'), 'ranx')} orders each query as "
                           f"ranx's Run does, which fastndcg.evaluate reads; use "
                           f"fastndcg.evaluate(run, qrels=..., preset='ranx'), or give "
                           f"{V.spelled('ties', ref=True)} to choose another rule here")
        if context == "arrays" and p.needs_doc_ids and (
                ties is None or (isinstance(ties, str) and ties == "trec")):
            from . import _validate as V
            raise V.refuse(ValueError, "preset", preset,
                           f"{V.spelled('preset', repr(preset), preset)} breaks tied scores by "
                           f"document id ({p.tool}), and ndcg/dcg take no document ids; use "
                           f"fastndcg.evaluate(run, qrels=..., preset={preset!r}), or give "
                           f"{V.spelled('ties', ref=True)} to choose another rule here")
        if context == "qrels" and not p.qrels:
            raise ValueError(
                f"preset={preset!r} ({p.tool}) scores lists of labelled items and reads no "
                f"judgments; drop qrels= (put the labels in the log), or use "
                f"preset='trec_eval' / 'pytrec_eval' for runs and qrels")
        base = {**DEFAULTS, **p.options}
    else:
        base = dict(DEFAULTS)
    out = {name: (given[name] if given.get(name) is not None else base[name])
           for name in SEMANTIC_OPTIONS}
    check_score_precision(out["score_precision"])
    return out


def check_preset(preset) -> str:
    """A preset's name (one of :data:`PRESETS`)."""
    if not isinstance(preset, str) or preset not in PRESETS:
        from . import _validate as V
        names = ", ".join(repr(n) for n in PRESETS)
        raise V.refuse(ValueError, "preset", preset, f"{V.spelled('preset')} must be one of "
                       f"{names}; got {V.shown(preset)}")
    return preset


def check_score_precision(precision) -> str:
    """``score_precision``: one of :data:`SCORE_PRECISIONS`."""
    if not isinstance(precision, str) or precision not in SCORE_PRECISIONS:
        from . import _validate as V
        raise V.refuse(ValueError, "score_precision", precision,
                       f"{V.spelled('score_precision')} must be 'float64' (scores compared as "
                       f"given) or 'float32' (rounded to 32-bit floats first, as pytrec_eval "
                       f"and trec_eval 9.x do); got {V.shown(precision)}")
    return precision


def grades_of(preset: str | None) -> Grades:
    """How ``preset``'s tool reads a grade that is not a whole number (no preset: as
    given)."""
    return AS_GIVEN if preset is None else PRESETS[preset].grades


def fractional(labels: np.ndarray) -> np.ndarray | None:
    """Where ``labels`` hold a finite grade that is not a whole number (None: nowhere;
    integer labels never do). NaN and infinities are not fractions: they are refused
    as such elsewhere."""
    import numpy as np

    if labels.dtype.kind != "f":
        return None
    with np.errstate(invalid="ignore"):
        frac = np.isfinite(labels) & (labels != np.trunc(labels))
    return frac if frac.any() else None


def read_grades(labels: np.ndarray, preset: str | None, where: Callable[[int], str],
                warn: bool = True, exp2: bool = True, exact: np.ndarray | None = None
                ) -> np.ndarray:
    """``labels`` as ``preset``'s tool reads them: as given, or each grade that is not
    a whole number cut to its whole part (trec_eval, ranx: one :class:`GradeWarning`
    naming the first, unless ``warn`` is False) or refused (ValueError); rounded to
    32-bit floats first where the tool holds them so (LightGBM, XGBoost), and refused
    outside the grades the tool holds (:attr:`Grades.bounds`; with ``exp2`` False,
    the gain is not exponential: bounds of exponential gain do not apply; ``exact``:
    the integer grades ``labels`` were converted from, whose bounds are checked
    instead). ``where(i)`` names row ``i`` in a message. Never changes ``labels``.

    >>> import warnings
    >>> import numpy as np
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     read_grades(np.array([0.5, 2.7, -0.5]), "trec_eval", lambda i: f"row {i}")
    array([0., 2., 0.])
    """
    import numpy as np

    grades = grades_of(preset)
    if grades.rule == "as given":
        return labels
    given = labels
    if grades.float32 and labels.dtype.kind == "f" and labels.dtype != np.float32:
        with np.errstate(over="ignore"):
            rounded = labels.astype(np.float32).astype(labels.dtype)
        if not np.array_equal(rounded, labels, equal_nan=True):
            labels = rounded  # (a new array: the caller's is not changed)
    if grades.tolerance and labels.dtype.kind == "f":
        with np.errstate(invalid="ignore"):
            whole = np.trunc(labels)
            past = labels - whole
            near = (past > 0) & (past < grades.tolerance)
        if near.any():
            labels = np.where(near, whole, labels)
    if grades.bounds and (exp2 or not grades.exp2_only):
        if exact is not None:
            _check_bounds(exact, exact, grades, where, preset)
        else:
            _check_bounds(labels, given, grades, where, preset)
    frac = fractional(labels)
    if frac is None:
        return labels
    i = int(np.argmax(frac))
    if grades.rule == "refuse":
        raise ValueError(grades.refusal(labels[i], where(i), preset))
    out = np.trunc(labels) + 0.0  # (+ 0.0: -0.5 reads 0, not -0)
    if warn:
        warn_grade(grades.warning(labels[i], out[i], where(i), int(frac.sum()), preset))
    return out


def warn_grade(message: str) -> None:
    """Issue a :class:`GradeWarning`, attributed to the first caller outside fastndcg
    (the user's line that asked for the evaluation)."""
    import os
    import sys
    import warnings

    package = os.path.dirname(os.path.abspath(__file__)) + os.sep
    level, frame = 2, sys._getframe(1)  # (level 2: the frame that called this)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package):
        level, frame = level + 1, frame.f_back
    warnings.warn(message, GradeWarning, stacklevel=level)


def _check_bounds(labels: np.ndarray, given: np.ndarray, grades: Grades,
                  where: Callable[[int], str], preset: str) -> None:
    """Refuse the first grade of ``labels`` (as the tool holds them) outside
    ``grades.bounds``, shown as ``given`` (NaN is refused elsewhere)."""
    import numpy as np

    if not len(labels):
        return
    lo, hi = grades.bounds
    if labels.dtype.kind == "f":
        with np.errstate(invalid="ignore"):  # (NaN and infinities given are refused elsewhere)
            out = ((labels < lo) | (labels >= hi + 1)) & np.isfinite(given)  # (hi + 1: exact)
    else:
        lo_, hi_ = np.iinfo(labels.dtype).min, np.iinfo(labels.dtype).max
        out = ((labels < lo) if lo > lo_ else np.zeros(len(labels), bool)) | (
            (labels > hi) if hi < hi_ else False)
    if out.any():
        i = int(np.argmax(out))
        raise ValueError(grades.out_of_bounds(given[i].item(), where(i), preset))
