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


def _text(grade) -> str:
    """A grade as a message shows it: a file's text as written, a number plainly."""
    if isinstance(grade, str):
        return repr(grade)
    value = float(grade)
    return repr(int(value)) if value == int(value) else repr(value)


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
_LIGHTGBM_GRADES = Grades("refuse", "LightGBM", "label should be int type for ranking task")
_XGBOOST_GRADES = Grades("refuse", "XGBoost", "label must be either 0 or positive integer")

PRESETS: dict[str, Preset] = {p.name: p for p in [
    Preset("trec_eval", "trec_eval 10.x (ndcg, ndcg_cut.k)",
           {**_TREC, "score_precision": "float64"}, "all judged documents", True, True,
           Grades("atol", "trec_eval", "C's atol: the whole number it starts with")),
    Preset("pytrec_eval", "pytrec_eval, trec_eval 9.x, ir_measures (default provider)",
           {**_TREC, "score_precision": "float32"}, "all judged documents", True, True,
           Grades("refuse", "pytrec_eval", "TypeError: Expected relevance to be integer.")),
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
                                              "zero; its from_file and from_df refuse them")),
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
            raise ValueError(
                "preset='ranx' orders each query as ranx's Run does, which fastndcg.evaluate "
                "reads; use fastndcg.evaluate(run, qrels=..., preset='ranx'), or give ties= "
                "to choose another rule here")
        if context == "arrays" and p.needs_doc_ids and (
                ties is None or (isinstance(ties, str) and ties == "trec")):
            raise ValueError(
                f"preset={preset!r} breaks tied scores by document id ({p.tool}), and ndcg/dcg "
                f"take no document ids; use fastndcg.evaluate(run, qrels=..., "
                f"preset={preset!r}), or give ties= to choose another rule here")
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
        names = ", ".join(repr(n) for n in PRESETS)
        raise ValueError(f"preset must be one of {names}; got {preset!r}")
    return preset


def check_score_precision(precision) -> str:
    """``score_precision``: one of :data:`SCORE_PRECISIONS`."""
    if not isinstance(precision, str) or precision not in SCORE_PRECISIONS:
        raise ValueError(f"score_precision must be 'float64' (scores compared as given) or "
                         f"'float32' (rounded to 32-bit floats first, as pytrec_eval and "
                         f"trec_eval 9.x do); got {precision!r}")
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
                warn: bool = True) -> np.ndarray:
    """``labels`` as ``preset``'s tool reads them: as given, or each grade that is not
    a whole number cut to its whole part (trec_eval, ranx: one :class:`GradeWarning`
    naming the first, unless ``warn`` is False) or refused (ValueError). ``where(i)``
    names row ``i`` in a message. Never changes ``labels``.

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
