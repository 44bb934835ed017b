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

from dataclasses import dataclass

__all__ = ["PRESETS", "Preset", "resolve", "DEFAULTS", "SEMANTIC_OPTIONS", "DEFAULT_K",
           "SCORE_PRECISIONS", "check_preset", "check_score_precision"]

# fastndcg's own defaults, used where neither the caller nor a preset sets an option
DEFAULTS = {"gain": "exp2", "ties": "average", "log_base": 2.0, "zero_idcg": "zero",
            "nan_scores": "error", "negative_labels": "error", "score_precision": "float64"}
SEMANTIC_OPTIONS = tuple(DEFAULTS)
SCORE_PRECISIONS = ("float64", "float32")
DEFAULT_K = (1, 3, 5, 10)  # evaluate's cutoffs when neither k nor measure is given


@dataclass(frozen=True)
class Preset:
    name: str
    tool: str
    options: dict
    idcg_source: str
    qrels: bool            # the tool reads judgments (qrels mode makes sense)
    needs_doc_ids: bool    # its tie rule breaks ties by document id


_TREC = {"gain": "linear", "ties": "trec", "log_base": 2.0, "zero_idcg": "zero",
         "negative_labels": "zero"}
_LTR = {"gain": "exp2", "ties": "stable", "log_base": 2.0, "negative_labels": "error",
        "score_precision": "float64"}
# XGBoost keeps predictions and base margins as float32
_XGB = {**_LTR, "score_precision": "float32"}

PRESETS: dict[str, Preset] = {p.name: p for p in [
    Preset("trec_eval", "trec_eval 10.x (ndcg, ndcg_cut.k)",
           {**_TREC, "score_precision": "float64"}, "all judged documents", True, True),
    Preset("pytrec_eval", "pytrec_eval, trec_eval 9.x, ir_measures (default provider)",
           {**_TREC, "score_precision": "float32"}, "all judged documents", True, True),
    Preset("sklearn", "scikit-learn ndcg_score / dcg_score",
           {"gain": "linear", "ties": "average", "log_base": 2.0, "zero_idcg": "zero",
            "negative_labels": "error", "score_precision": "float64"}, "the list", False, False),
    Preset("lightgbm", "LightGBM metric ndcg@k (default label_gain)",
           {**_LTR, "zero_idcg": "one"}, "the list", False, False),
    Preset("xgboost", "XGBoost eval_metric ndcg@k",
           {**_XGB, "zero_idcg": "one"}, "the list", False, False),
    Preset("xgboost-", "XGBoost eval_metric ndcg@k- (queries without relevant items score 0)",
           {**_XGB, "zero_idcg": "zero"}, "the list", False, False),
    Preset("ranx", "ranx evaluate (ndcg@k, map@k, mrr@k, ...; ties as its Run ranks them)",
           {**_TREC, "ties": "ranx", "score_precision": "float64"}, "all judged documents",
           True, False),
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
