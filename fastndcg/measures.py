"""The measures fastndcg computes: one registry, one row per measure, and the
parser of their names (trec_eval's, ir_measures' and fastndcg's own).

Every measure is computed from the same ranking of a query (ranked once, whatever
the measures): NDCG by the DCG/IDCG walk, every other measure by one accumulator
over the ranked tie groups (``fastndcg._kernels.measures``), one plain function in
:mod:`fastndcg.reference`, and one row of :data:`REGISTRY` with its names, as
trec_eval's ``measures.c`` table has.

A *binary* measure reads whether an item is relevant: its label is at least the
threshold ``rel`` (default 1; trec_eval ``-l``, ir_measures ``rel=``) and, in
qrels mode, it is judged. Denominators follow trec_eval: P@k divides by k even
when fewer are retrieved; recall, AP and R-precision divide by R, the relevant
judged documents of the query (in list mode, the relevant items of the list).

Names (all case-sensitive, as in the tools):

========================= ========================= ============== =============================
column                    trec_eval                 ir_measures    meaning
========================= ========================= ============== =============================
``ndcg@10``               ``ndcg_cut.10``           ``nDCG@10``    normalised DCG
``ap``                    ``map``                   ``AP``         average precision
``ap@100``                ``map_cut.100``           ``AP@100``     AP of the top 100
``rr``                    ``recip_rank``            ``RR``         reciprocal rank
``rr@10``                 --                        ``RR@10``      RR within the top 10
``p@5``                   ``P.5``                   ``P@5``        precision at 5
``r@1000``                ``recall.1000``           ``R@1000``     recall at 1000
``success@10``            ``success.10``            ``Success@10`` a relevant item in the top 10
``rprec``                 ``Rprec``                 ``Rprec``      precision at rank R
``num_ret``               ``num_ret``               ``NumRet``     items retrieved
``num_rel``               ``num_rel``               ``NumRel``     R
``num_rel_ret``           ``num_rel_ret``           ``NumRelRet``  relevant items retrieved
``num_nonrel_judged_ret`` ``num_nonrel_judged_ret`` --             judged non-relevant retrieved
``judged@10``             --                        ``Judged@10``  judged share of the top 10
``bpref``                 ``bpref``                 ``Bpref``      relevant above non-relevant
``set_p``                 ``set_P``                 ``SetP``       precision of the whole list
``set_recall``            ``set_recall``            ``SetR``       recall of the whole list
``set_relative_p``        ``set_relative_P``        ``SetRelP``    set_p / its largest value
``set_map``               ``set_map``               ``SetAP``      set_p x set_recall
========================= ========================= ============== =============================

A threshold other than 1 is part of the column name: ``ap(rel=2)``,
``p@5(rel=2)``; fastndcg's column names are accepted as measure names too.

ir_measures' parameters are ``cutoff`` (the same as ``@k``), ``rel`` (binary
measures), and for nDCG ``dcg`` (``'log2'``: linear gain, ``'exp-log2'``: 2**label - 1)
and ``gains`` (a table ``{label: gain, ...}``; labels missing from it gain 0), each
given once. Cutoffs are whole numbers from 1 to 10**9 (:data:`MAX_CUTOFF`), thresholds
from 0 to 2**53 (:data:`MAX_REL`); a gain table names labels 0..65535
(:data:`MAX_GAIN_TABLE`, so at most 65536 entries: the table is stored densely) with
finite gains >= 0, as ``gain=`` tables are checked. A name that does not read raises
``ValueError`` saying where, what was expected and what to write; the grammar is
written out above :func:`_split`.

>>> parse("map P.5,10 nDCG@10").columns
['ndcg@10', 'ap', 'p@5', 'p@10']
>>> parse(["AP(rel=2)@100", "RR(rel=2)"]).columns
['ap@100(rel=2)', 'rr(rel=2)']
>>> parse("recip_rank", rel=2).columns
['rr(rel=2)']
"""

from __future__ import annotations

import difflib
import math
import numbers
import re
from dataclasses import dataclass, field

from . import _validate as V
from ._kernels import codes as KC

__all__ = ["Kind", "Measure", "Parsed", "REGISTRY", "parse", "check_rel", "column_name",
           "TREC_CUTOFFS", "MAX_CUTOFF", "MAX_REL", "MAX_GAIN_TABLE"]

# trec_eval's default cutoffs (m_P.c, m_recall.c, m_map_cut.c, m_ndcg_cut.c; m_success.c)
TREC_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
TREC_SUCCESS_CUTOFFS = (1, 5, 10)
MAX_CUTOFF = V.MAX_CUTOFF  # the largest cutoff a name may give
MAX_REL = V.MAX_REL        # the largest threshold a name may give (integers exact in float64)
MAX_GAIN_TABLE = 1 << 16   # labels a gain table in a name may cover: 0..65535


@dataclass(frozen=True)
class Kind:
    """One row of the registry."""
    name: str                 # column stem
    code: int                 # accumulator code (-1: NDCG, the DCG/IDCG walk)
    trec: str | None          # trec_eval's name without cutoffs (None: no such measure)
    trec_cut: str | None      # trec_eval's name with cutoffs
    irm: str | None           # ir_measures' name (None: no such measure)
    cutoff: str               # "none", "optional" or "required"
    binary: bool              # reads relevance at a threshold
    judgments: bool           # needs qrels (reads which documents are judged)
    trec_cutoffs: tuple = ()  # trec_eval's default cutoffs for ``trec_cut`` without any
    summary: str = "mean"     # the average over queries: "mean", "sum" (counts) or "gm"
    #                           (trec_eval's geometric mean: exp(mean(log(max(v, 1e-5)))))
    reference: str = ""       # the function in fastndcg.reference
    doc: str = ""
    params: tuple = ()        # names of the measure's number parameters (mult, recall, ...)
    defaults: tuple = ()      # their values when none are given: for ``each`` kinds the
    #                           list trec_eval measures by default, one value per measure
    each: bool = False        # trec_eval's name.X,Y is one measure per value (else one
    #                           measure given all the values)
    average: bool = True      # offers ties="average" (an exact expectation)
    bounds: bool = True       # offers ties="optimistic"/"pessimistic" (the max / min)
    ranx: str | None = None   # ranx's metric name (None: no such metric)
    trec_gains: bool = False  # trec_eval's name takes grade=gain pairs (ndcg.1=0,2=3)


REGISTRY: dict[str, Kind] = {k.name: k for k in [
    Kind("ndcg", -1, "ndcg", "ndcg_cut", "nDCG", "optional", False, False, TREC_CUTOFFS,
         reference="ndcg_query", doc="DCG@k / IDCG@k (gain, discount and ties as set)",
         ranx="ndcg", trec_gains=True),
    Kind("ap", KC.M_AP, "map", "map_cut", "AP", "optional", True, False, TREC_CUTOFFS,
         reference="ap_query", ranx="map",
         doc="sum of the precisions at the relevant ranks <= k, divided by R"),
    Kind("rr", KC.M_RR, "recip_rank", None, "RR", "optional", True, False,
         reference="rr_query", doc="1 / rank of the first relevant item (0 past k)",
         ranx="mrr"),
    Kind("p", KC.M_P, None, "P", "P", "required", True, False, TREC_CUTOFFS,
         reference="precision_query", doc="relevant items in the top k, divided by k",
         ranx="precision"),
    Kind("r", KC.M_R, None, "recall", "R", "required", True, False, TREC_CUTOFFS,
         reference="recall_query", doc="relevant items in the top k, divided by R",
         ranx="recall"),
    Kind("success", KC.M_SUCCESS, None, "success", "Success", "required", True, False,
         TREC_SUCCESS_CUTOFFS, reference="success_query", ranx="hit_rate",
         doc="1 when a relevant item is in the top k"),
    Kind("rprec", KC.M_RPREC, "Rprec", None, "Rprec", "none", True, False,
         reference="rprec_query", doc="relevant items in the top R, divided by R",
         ranx="r-precision"),
    Kind("num_q", KC.M_NUM_Q, "num_q", None, "NumQ", "none", False, False, summary="sum",
         reference="num_q_query", doc="1 for each query: summed, the queries scored"),
    Kind("num_ret", KC.M_NUM_RET, "num_ret", None, "NumRet", "none", False, False,
         summary="sum", reference="num_ret_query", doc="items retrieved"),
    Kind("num_rel", KC.M_NUM_REL, "num_rel", None, "NumRel", "none", True, False,
         summary="sum", reference="num_rel_query", doc="R: relevant judged documents"),
    Kind("num_rel_ret", KC.M_NUM_REL_RET, "num_rel_ret", None, "NumRelRet", "none", True,
         False, summary="sum", reference="num_rel_ret_query", doc="relevant items retrieved"),
    Kind("bpref", KC.M_BPREF, "bpref", None, "Bpref", "none", True, False,
         reference="bpref_query",
         doc="per relevant item, 1 - (judged non-relevant items above it, at most R) / "
             "min(judged non-relevant, R); summed and divided by R"),
    Kind("num_nonrel_judged_ret", KC.M_NUM_NONREL_JUDGED_RET, "num_nonrel_judged_ret", None,
         None, "none", True, False, summary="sum", reference="num_nonrel_judged_ret_query",
         doc="judged non-relevant items retrieved (judged, label from 0 to rel - 1)"),
    Kind("set_p", KC.M_SET_P, "set_P", None, "SetP", "none", True, False,
         reference="set_p_query", doc="relevant items retrieved / items retrieved"),
    Kind("set_recall", KC.M_SET_R, "set_recall", None, "SetR", "none", True, False,
         reference="set_recall_query", doc="relevant items retrieved / R"),
    Kind("set_relative_p", KC.M_SET_REL_P, "set_relative_P", None, "SetRelP", "none", True,
         False, reference="set_relative_p_query",
         doc="relevant items retrieved / min(items retrieved, R)"),
    Kind("set_map", KC.M_SET_MAP, "set_map", None, "SetAP", "none", True, False,
         reference="set_map_query",
         doc="(relevant items retrieved)^2 / (items retrieved x R): set P x set recall"),
    Kind("gm_map", KC.M_AP, "gm_map", None, None, "none", True, False, summary="gm",
         reference="ap_query", doc="AP of each query; averaged as trec_eval's geometric "
                                   "mean, exp(mean(log(max(AP, 1e-5))))"),
    Kind("gm_bpref", KC.M_BPREF, "gm_bpref", None, None, "none", True, False, summary="gm",
         reference="bpref_query", doc="bpref of each query; averaged as gm_map"),
    Kind("relative_p", KC.M_REL_P, None, "relative_P", None, "required", True, False,
         TREC_CUTOFFS, reference="relative_p_query",
         doc="relevant items in the top k, divided by min(k, R)"),
    Kind("rprec_mult", KC.M_RPREC_MULT, None, "Rprec_mult", None, "none", True, False,
         reference="rprec_mult_query", params=("mult",), each=True,
         defaults=(0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0),
         doc="precision at rank int(mult x R + 0.9)"),
    Kind("iprec", KC.M_IPREC, None, "iprec_at_recall", "IPrec", "none", True, False,
         reference="iprec_query", params=("recall",), each=True, average=False,
         defaults=(0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0),
         doc="interpolated precision at a recall level: the highest precision at or "
             "below the rank of relevant item round(recall x R)"),
    Kind("11pt_avg", KC.M_11PT_AVG, "11pt_avg", None, None, "none", True, False,
         reference="iprec_11pt_query", average=False,
         doc="the mean of iprec at recall 0.0, 0.1, ..., 1.0"),
    Kind("set_f", KC.M_SET_F, "set_F", None, "SetF", "none", True, False,
         reference="set_f_query", params=("beta",), defaults=(1.0,),
         doc="(1 + beta) x set_p x set_recall / (beta x set_p + set_recall)"),
    Kind("utility", KC.M_UTILITY, "utility", None, None, "none", True, False,
         reference="utility_query", params=("a", "b", "c", "d", "n"),
         defaults=(1.0, -1.0, 0.0, 0.0, 0.0),
         doc="a x relevant retrieved + b x non-relevant retrieved + c x relevant not "
             "retrieved + d x non-relevant not retrieved (n: documents in the collection)"),
    Kind("bing", KC.M_BING, "binG", None, None, "none", True, False, reference="bing_query",
         doc="over the relevant items, 1 / log2(2 + the non-relevant items above it); "
             "summed and divided by R"),
    Kind("rbp_resid", KC.M_RBP_RESID, "rbp_resid", None, None, "none", False, False,
         reference="rbp_resid_query", params=("p",), defaults=(0.9,),
         doc="the largest rise of rank-biased precision (persistence p) if every item "
             "not judged with a label >= 0 had the largest gain: p^n + (1 - p) x the sum "
             "of p^rank over them; 0 when every item is judged"),
    Kind("infap", KC.M_INFAP, "infAP", None, "infAP", "none", True, False,
         reference="infap_query", average=False, bounds=False,
         doc="trec_eval's inferred AP (Yilmaz & Aslam 2006): AP estimated from a sample of "
             "judgments, judged items with a negative label being the unsampled pool"),
    Kind("rbp", KC.M_RBP, "rbp", None, None, "none", False, False, reference="rbp_query",
         params=("p",), defaults=(0.9,), trec_gains=True,
         doc="trec_eval's rank-biased precision (Moffat & Zobel 2008): (1 - p) x the sum "
             "of gain x p^(rank - 1), gains divided by the query's largest judged gain when "
             "it is above 1"),
    Kind("g", KC.M_G, "G", None, None, "none", False, False, reference="g_query",
         average=False, bounds=False, trec_gains=True,
         doc="trec_eval's normalised gain G: each gain over log2(2 + ideal cost so far - "
             "gain so far), summed, over the sum of the ideal gains"),
    Kind("ndcg_rel", KC.M_NDCG_REL, "ndcg_rel", None, None, "none", False, False,
         reference="ndcg_rel_query", trec_gains=True,
         doc="trec_eval's NDCG averaged at the ranks of the items with a gain above 0 "
             "(unretrieved ones at the end of the list)"),
    Kind("rndcg", KC.M_RNDCG, "Rndcg", None, None, "none", True, False,
         reference="rndcg_query", trec_gains=True,
         doc="trec_eval's NDCG averaged at the ranks where the ideal gain changes (and at "
             "the end of the list); 0 without a relevant judged document"),
    Kind("rbp_bin", KC.M_RBP_BIN, None, None, "RBP", "none", True, False,
         reference="rbp_bin_query", params=("p",), defaults=(0.8,),
         doc="rank-biased precision (Moffat & Zobel 2008) of the relevant items: (1 - p) x "
             "the sum of p^(rank - 1) over them (ir_measures' RBP(rel=...), cwl_eval's)"),
    Kind("rbp_residual", KC.M_RBP_RESIDUAL, None, None, None, "none", False, False,
         reference="rbp_residual_query", params=("p",), defaults=(0.8,),
         doc="RBP's residual: how far it could rise if every unjudged item were relevant, "
             "and the ranks past the list too: p^n + (1 - p) x the sum of p^(rank - 1) over "
             "the unjudged items (a negative grade is judged, as ir_measures reads it)"),
    Kind("err", KC.M_ERR, None, None, "ERR", "optional", False, False, reference="err_query",
         average=False,
         doc="expected reciprocal rank (Chapelle et al. 2009) as gdeval computes it: grades "
             "g give stop probabilities (2^g - 1) / 2^max(4, the query's largest grade)"),
    Kind("unj", KC.M_UNJ, None, "unj", None, "required", False, True, (5, 10, 20),
         reference="unj_query",
         doc="unjudged items (or judged with a negative label) in the top k, divided by k"),
    Kind("judged", KC.M_JUDGED, None, None, "Judged", "required", False, True,
         reference="judged_query",
         doc="judged items in the top k, divided by min(k, items retrieved)"),
    Kind("f1", KC.M_F1, None, None, None, "optional", True, False, reference="f1_query",
         ranx="f1",
         doc="ranx's f1@k: 2 P R / (P + R) of P@k (over k; the whole list: over the items "
             "retrieved) and R@k; 0 when no relevant item is in the top k"),
    Kind("bpref_ranx", KC.M_BPREF_RANX, None, None, None, "none", True, False,
         reference="bpref_ranx_query", ranx="bpref",
         doc="ranx's bpref: bpref's terms, a judged item with a label below rel (negative "
             "too) being non-relevant; NaN when a relevant item is retrieved and no judged "
             "document is non-relevant (ranx divides 0 by 0)"),
]}

_BY_TREC = {}
for _k in REGISTRY.values():
    for _n in (_k.trec, _k.trec_cut):
        if _n:
            _BY_TREC[_n] = _k
_BY_IRM = {k.irm: k for k in REGISTRY.values() if k.irm}
_BY_RANX = {k.ranx: k for k in REGISTRY.values() if k.ranx}
_BY_RANX["ndcg_burges"] = REGISTRY["ndcg"]  # NDCG with 2**label - 1 gains
# read as ranx's names without ranx=True too, unless they are trec_eval's: no
# ir_measures name and no column name starts so
_RANX_ONLY = tuple(n for n in _BY_RANX if n not in _BY_IRM and n not in REGISTRY)
_RANX_OTHER = ("hits", "dcg", "dcg_burges", "rbp")  # ranx metrics fastndcg does not read
_IRM_DCG = {"log2": "linear", "exp-log2": "exp2"}


@dataclass(frozen=True)
class Measure:
    """One requested value per query: a kind, a cutoff (None: the whole list), a
    relevance threshold (None: the evaluation's) and the values of the kind's
    number parameters (None: its defaults)."""
    kind: str
    cutoff: int | None = None
    rel: int | None = None
    params: tuple | None = None

    def column(self, rel: int = 1) -> str:
        return column_name(self.kind, self.cutoff, self.rel if self.rel is not None else rel,
                           self.params)

    @property
    def values(self) -> tuple:
        """The parameter values the kernels read (the kind's defaults when not given)."""
        return self.params if self.params is not None else REGISTRY[self.kind].defaults


def number(value: float) -> str:
    """How a parameter value is written in a column name: Python's shortest
    round-trip form (``0.2``, ``1.0``, ``-1.0``)."""
    return repr(float(value))


def column_name(kind: str, cutoff: int | None, rel: int = 1, params: tuple | None = None) -> str:
    """``ap@100``, ``ap(rel=2)``, ``rprec_mult(mult=0.2)``: the column of a measure.
    Parameters equal to the kind's defaults are not written.

    >>> column_name("p", 5, 2)
    'p@5(rel=2)'
    >>> column_name("set_f", None, 1, (0.5,))
    'set_f(beta=0.5)'
    """
    k = REGISTRY[kind]
    name = kind if cutoff is None else f"{kind}@{cutoff}"
    parts = []
    if params is not None and (k.each or tuple(params[:len(k.params)]) != tuple(k.defaults)):
        parts += [f"{key}={number(v)}" for key, v in zip(k.params, params)]
    if k.binary and rel != 1:
        parts.append(f"rel={rel}")
    return name + (f"({','.join(parts)})" if parts else "")


def examples() -> list[str]:
    """A name of every list-mode measure that offers ties="average" (a cutoff of 10,
    the first default value of a number parameter): what exercises them all.

    >>> "rprec_mult(mult=0.2)" in examples()
    True
    """
    return [k.name + ("@10" if k.cutoff == "required" else "")
            + (f"({k.params[0]}={number(k.defaults[0])})" if k.each else "")
            for k in REGISTRY.values() if not k.judgments and k.average]


GM_FLOOR = 1e-5  # trec_eval's MIN_GEO_MEAN: values below it count as it in a geometric mean


def summary_of(column: str) -> str:
    """How a column is averaged over queries: "mean", "sum" (the counts, as trec_eval
    sums them) or "gm" (trec_eval's geometric mean, values floored at
    :data:`GM_FLOOR`), from its measure's registry row.

    >>> summary_of("gm_map(rel=2)"), summary_of("num_ret"), summary_of("p@5")
    ('gm', 'sum', 'mean')
    """
    m = _NAME.match(column)
    kind = REGISTRY.get(m.group()) if m else None
    return kind.summary if kind is not None else "mean"


@dataclass
class Parsed:
    """Measure names read: NDCG's cutoffs and gain, and the other measures."""
    ndcg: list = field(default_factory=list)      # cutoffs (None: the whole list)
    gain: object = None                           # what the NDCG names imply (None: nothing)
    others: list = field(default_factory=list)    # Measure, in the order named
    rel: int = 1

    @property
    def columns(self) -> list[str]:
        return ([column_name("ndcg", c) for c in self.ndcg]
                + [m.column(self.rel) for m in self.others])


def check_rel(rel, name: str = "rel") -> int:
    """A relevance threshold: an int >= 0."""
    if isinstance(rel, bool) or not isinstance(rel, numbers.Integral) or not 0 <= rel <= MAX_REL:
        raise ValueError(f"{name} must be an integer from 0 to {MAX_REL} (a label is relevant "
                         f"when it is >= {name}), got {V.shown(rel)}; e.g. {name}=2")
    return int(rel)


# --------------------------------------------------------------------------- reading names
#
# The grammar of one measure name (whitespace outside brackets and quotes separates
# names; inside a parameter list it may stand between tokens):
#
#   name      := trec | irm
#   trec      := TREC | TREC_CUT '.' cutoffs | TREC_CUT '_' INT    (cutoffs: INT (',' INT)*)
#   irm       := NAME [params] ['@' INT] [params]    (params after the cutoff: fastndcg's
#                                                    column names only, and not on both sides)
#   params    := '(' [param (',' param)*] ')'
#   param     := KEY '=' value                      (each KEY once)
#   value     := INT | STRING | table               (cutoff, rel: INT; dcg: STRING; gains: table)
#   table     := '{' [INT ':' NUMBER (',' INT ':' NUMBER)* [',']] '}'
#
# INT is ASCII digits, NUMBER a decimal number (1, 0.5, 1e3), STRING '...' or "...".

SHOWN = 60  # characters of a measure name quoted in a message (longer ones are cut)

_NAME = re.compile(r"[0-9]*[A-Za-z_][A-Za-z0-9_]*")
_WORD = re.compile(r"[A-Za-z0-9_.+\-]+")  # a bare value: checked as INT or NUMBER after
_INT = re.compile(r"[0-9]+")
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_GENERAL = ("name measures as trec_eval does ('map', 'P.5,10', 'ndcg_cut.10', 'recip_rank'), "
            "as ir_measures does ('AP', 'P@5', 'nDCG@10', 'RR(rel=2)@10') or as fastndcg's "
            "columns ('ap', 'p@5', 'ndcg@10')")
_GAINS_EXAMPLE = "nDCG(gains={0: 0, 1: 1, 2: 3})@10"
_CLOSER = {"(": ")", "{": "}", "[": "]"}


def _cut(text: str) -> str:
    """``text``, at most :data:`SHOWN` characters: a longer one ends in an ellipsis."""
    return text if len(text) <= SHOWN else text[:SHOWN - 1] + "\u2026"


def _shown(text: str) -> str:
    """How a message quotes a measure name (or a piece of one): ``repr`` of it, cut."""
    return repr(_cut(text))


def _error(spec: str, why: str, fix: str = _GENERAL) -> ValueError:
    return ValueError(f"cannot read measure {_shown(spec)}: {why}; {fix}")


def _split(text: str) -> list[str]:
    """The names in ``text``: split on whitespace outside brackets and quotes, every
    bracket closed by its own kind and every quote closed."""
    items, start, stack, quote = [], None, [], None
    for i, ch in enumerate(text):
        if quote is not None:
            if ch == text[quote]:
                quote = None
            continue
        if ch.isspace() and not stack:
            if start is not None:
                items.append(text[start:i])
                start = None
            continue
        if start is None:
            start = i
        where = i - start + 1
        if ch in "'\"":
            quote = i
        elif ch in _CLOSER:
            stack.append((ch, where))
        elif ch in _CLOSER.values():
            if not stack:
                raise _error(text[start:], f"unbalanced brackets: {ch!r} at character {where} "
                                           f"closes nothing", "remove it or open it first")
            opener, at = stack.pop()
            if _CLOSER[opener] != ch:
                raise _error(text[start:], f"unbalanced brackets: {opener!r} at character {at} "
                                           f"is closed by {ch!r} at character {where}",
                             f"close it with {_CLOSER[opener]!r}")
    if quote is not None:
        raise _error(text[start:], f"the quote {text[quote]!r} at character {quote - start + 1} "
                                   f"is never closed", f"close it with {text[quote]}")
    if stack:
        opener, at = stack[-1]
        raise _error(text[start:], f"unbalanced brackets: {opener!r} at character {at} is never "
                                   f"closed", f"close it with {_CLOSER[opener]!r}")
    if start is not None:
        items.append(text[start:])
    return items


class _Reader:
    """A cursor over one measure name; its errors say where and what was expected."""

    def __init__(self, spec: str):
        self.spec, self.pos = spec, 0

    def error(self, why: str, fix: str = _GENERAL) -> ValueError:
        return _error(self.spec, why, fix)

    def found(self) -> str:
        rest = self.spec[self.pos:]
        return "the end" if not rest else _shown(rest[0])

    def at(self, pos: int | None = None) -> str:
        return f"character {(self.pos if pos is None else pos) + 1}"

    def expected(self, what: str, fix: str = _GENERAL) -> ValueError:
        return self.error(f"expected {what} at {self.at()}, found {self.found()}", fix)

    def peek(self) -> str:
        return self.spec[self.pos:self.pos + 1]

    def spaces(self) -> None:
        while self.pos < len(self.spec) and self.spec[self.pos].isspace():
            self.pos += 1

    def accept(self, token: str) -> bool:
        if self.spec.startswith(token, self.pos):
            self.pos += len(token)
            return True
        return False

    def match(self, pattern: re.Pattern) -> str:
        m = pattern.match(self.spec, self.pos)
        if not m:
            return ""
        self.pos = m.end()
        return m.group()

    def string(self) -> str:
        """A quoted string (the quote is at the cursor)."""
        quote, start = self.spec[self.pos], self.pos
        end = self.spec.find(quote, start + 1)
        if end < 0:
            raise self.error(f"the quote {quote!r} at {self.at()} is never closed",
                             f"close it with {quote}")
        self.pos = end + 1
        return self.spec[start + 1:end]


def _whole(r: _Reader, what: str, lo: int, hi: int, fix: str) -> int:
    """A bare whole number from ``lo`` to ``hi`` at the cursor (``what`` names it)."""
    start = r.pos
    if r.peek() in ("'", '"'):
        text = r.string()
        raise r.error(f"{what} {_shown(text)} is quoted, but must be a whole number (at "
                      f"{r.at(start)})", fix)
    if r.peek() in ("{", "["):
        raise r.error(f"{what} must be a whole number, found {r.found()} (at {r.at()})", fix)
    text = r.match(_WORD)
    if not text:
        raise r.expected(f"{what} (a whole number)", fix)
    if re.fullmatch(r"-[0-9]+", text):
        raise r.error(f"{what} {_cut(text)} must be >= {lo}", fix)
    if not _INT.fullmatch(text):
        raise r.error(f"{what} {_shown(text)} is not a whole number (at {r.at(start)})", fix)
    digits = text.lstrip("0") or "0"
    if len(digits) > len(str(hi)) or int(digits) > hi:
        raise r.error(f"{what} {_cut(digits)} must be <= {hi}", fix)
    if int(digits) < lo:
        raise r.error(f"{what} {int(digits)} must be >= {lo}", fix)
    return int(digits)


def _number(r: _Reader, what: str, fix: str) -> float:
    """A finite decimal number at the cursor (``what`` names it)."""
    start = r.pos
    text = r.match(_WORD)
    if not text:
        raise r.expected(f"{what} (a number)", fix)
    if not _NUMBER.fullmatch(text) or not math.isfinite(float(text)):
        raise r.error(f"{what} {_shown(text)} is not a finite number (at {r.at(start)})", fix)
    return float(text)


def _cutoff(r: _Reader, example: str) -> int:
    return _whole(r, "cutoff", 1, MAX_CUTOFF, f"write a cutoff from 1 to {MAX_CUTOFF}, e.g. "
                                             f"{example}")


def _gains(r: _Reader) -> list:
    """``{label: gain, ...}`` at the cursor, as a dense table of gains by label."""
    fix = f"write the gains as {{label: gain, ...}}, e.g. {_GAINS_EXAMPLE}"
    if not r.accept("{"):
        raise r.error(f"gains must map labels to their gains in braces ({{label: gain, ...}}), "
                      f"found {r.found()} (at {r.at()})", fix)
    gains: dict = {}
    where: dict = {}
    while True:
        r.spaces()
        if r.accept("}"):
            break
        start = r.pos
        label = r.match(_WORD)
        if not label:
            raise r.expected("a label (a whole number) or '}' in gains", fix)
        if not _INT.fullmatch(label):
            raise r.error(f"label {_shown(label)} in gains is not a whole number >= 0 (at "
                          f"{r.at(start)})", fix)
        digits = label.lstrip("0") or "0"
        if len(digits) > len(str(MAX_GAIN_TABLE)) or int(digits) >= MAX_GAIN_TABLE:
            raise r.error(f"gains names label {_cut(digits)}, but labels up to "
                          f"{MAX_GAIN_TABLE - 1} are supported (a table in a name covers at "
                          f"most {MAX_GAIN_TABLE} labels)",
                          f"use labels 0..{MAX_GAIN_TABLE - 1}, or pass the table as "
                          f"gain=[...] with k=... instead of naming it")
        value = int(digits)
        if value in gains:
            raise r.error(f"label {value} is given twice in gains (at characters "
                          f"{where[value] + 1} and {start + 1})", "give each label once")
        where[value] = start
        r.spaces()
        if not r.accept(":"):
            raise r.expected(f"':' after label {value} in gains", fix)
        r.spaces()
        start = r.pos
        text = r.match(_WORD)
        if not text:
            raise r.expected(f"the gain of label {value} (a number)", fix)
        if not _NUMBER.fullmatch(text):
            raise r.error(f"the gain of label {value}, {_shown(text)}, is not a number (at "
                          f"{r.at(start)})", fix)
        gain = float(text)
        if not math.isfinite(gain):
            raise r.error(f"the gain of label {value}, {_cut(text)}, is not finite",
                          "write gains as finite numbers")
        if gain < 0:
            raise r.error(f"the gain of label {value}, {_cut(text)}, is negative (a negative "
                          f"gain can push NDCG above 1)",
                          "use 0 for labels that should count as irrelevant")
        gains[value] = gain
        r.spaces()
        if r.accept(","):
            continue
        if r.accept("}"):
            break
        raise r.expected("',' or '}' in gains", fix)
    if not gains:
        raise r.error("gains={} names no label", fix)
    table = [0.0] * (max(gains) + 1)
    for label, gain in gains.items():
        table[label] = gain
    return table


def _params(r: _Reader, kind: Kind, name: str, got: dict) -> None:
    """``(key=value, ...)`` at the cursor, into ``got`` (cutoff, rel, dcg, gains, and
    the kind's number parameters)."""
    allowed = ["cutoff"] + (["rel"] if kind.binary else []) + (
        ["dcg", "gains"] if kind.name == "ndcg" else []) + list(kind.params)
    example = {"ndcg": f"{name}(dcg='exp-log2')@10", "judged": f"{name}@10"}.get(
        kind.name, (f"{name}(rel=2)" if kind.binary else name)
        + ("@10" if kind.cutoff != "none" else ""))
    if kind.params:
        example = f"{name}({kind.params[0]}={number(kind.defaults[0])})"
    fix = f"write {name}(name=value, ...), e.g. {example}"
    r.accept("(")
    seen: dict = {}
    r.spaces()
    if r.accept(")"):
        return
    while True:
        r.spaces()
        start = r.pos
        key = r.match(_NAME)
        if not key:
            raise r.expected(f"a parameter name ({', '.join(allowed)})", fix)
        if key in seen:
            raise r.error(f"parameter {key!r} is given twice (at characters {seen[key] + 1} "
                          f"and {start + 1})", f"give {key} once, e.g. {example}")
        seen[key] = start
        if key not in allowed:
            raise r.error(f"parameter {_shown(key)} is not supported for {name} (only "
                          f"{', '.join(allowed)})", f"drop it, e.g. {example}")
        r.spaces()
        if not r.accept("="):
            raise r.expected(f"'=' after {key}", f"write {key}=value, e.g. {example}")
        r.spaces()
        if key == "cutoff":
            got["cutoff"] = _cutoff(r, f"{name}(cutoff=10)")
        elif key == "rel":
            got["rel"] = _whole(r, "rel", 0, MAX_REL, f"write a threshold from 0 to {MAX_REL}, "
                                                      f"e.g. {name}(rel=2)")
        elif key in kind.params:
            got[key] = check_param(kind, key, _number(r, key, fix), r.spec)
        elif key == "dcg":
            start = r.pos
            if r.peek() not in ("'", '"'):
                text = r.match(_WORD)
                raise r.error(f"dcg must be a quoted string, found "
                              f"{_shown(text) if text else r.found()} (at {r.at(start)})",
                              "write dcg='log2' or dcg='exp-log2'")
            dcg = r.string()
            if dcg not in _IRM_DCG:
                raise r.error(f"dcg={_shown(dcg)} is not one of 'log2', 'exp-log2'",
                              "write dcg='log2' (linear gain) or dcg='exp-log2' (2**label - 1)")
            got["dcg"] = dcg
        else:
            got["gains"] = _gains(r)
        r.spaces()
        if r.accept(","):
            continue
        if r.accept(")"):
            return
        raise r.expected(f"',' or ')' after {key}", fix)


def _suggest(name: str) -> str:
    """`` (did you mean ...?)`` for a name close to a known one."""
    if len(name) > 40:
        return ""
    known = sorted(set(_BY_TREC) | set(_BY_IRM) | set(REGISTRY))
    close = [k for k in known if k.lower() == name.lower()] or difflib.get_close_matches(
        name, known, n=2)
    return f" (did you mean {' or '.join(map(repr, close))}?)" if close else ""


def _trec_numbers(spec: str, kind: Kind, name: str, at: int) -> list:
    """The comma-separated numbers of trec_eval's ``name.X,Y`` from ``at`` (trec_eval
    reads them with atof; here each must be a whole decimal number)."""
    example = {"mult": f"{name}.0.5,1.0", "recall": f"{name}.0.1,0.5", "beta": f"{name}.0.5",
               "a": f"{name}.1,-1,0,0", "p": f"{name}.p=0.8"}[kind.params[0]]
    text = spec[at:]
    if not text:
        raise _error(spec, f"no value after {name}.", f"write {example}")
    if "=" not in text and kind.params == ("p",):  # trec_eval reads rbp_resid's p as a pair
        raise _error(spec, f"trec_eval reads {name}'s parameters as name=value pairs (it "
                           f"stops on 'malformed pair parameters')", f"write {example}")
    if "=" in text:  # trec_eval's name=value pairs (rbp_resid.p=0.8)
        got = dict(kind.defaults and zip(kind.params, kind.defaults))
        for piece in text.split(","):
            key, _, value = piece.partition("=")
            if key not in kind.params or not _NUMBER.fullmatch(value) \
                    or not math.isfinite(float(value)):
                raise _error(spec, f"{_shown(piece)} is not {' or '.join(kind.params)}=NUMBER",
                             f"write {name}.{kind.params[0]}={number(kind.defaults[0])}")
            got[key] = check_param(kind, key, float(value), spec)
        return [got[k] for k in kind.params]
    values = []
    for i, piece in enumerate(text.split(",")):
        if not _NUMBER.fullmatch(piece) or not math.isfinite(float(piece)):
            raise _error(spec, f"{_shown(piece)} is not a number", f"write {example}")
        key = kind.params[0] if kind.each else kind.params[min(i, len(kind.params) - 1)]
        values.append(check_param(kind, key, float(piece), spec))
    return values


_VALID_INT = re.compile(r"[+-]?[0-9]+")  # trec_eval's valid_int: a grade in a gain pair


def _trec_gains(spec: str, kind: Kind, name: str, at: int):
    """(params, gains) of trec_eval's ``name.GRADE=GAIN,...`` (rbp also ``p=P``):
    the grades' gains as :class:`_validate.TrecGains` (None when none is given,
    "linear" when each listed gain is its grade: trec_eval's own gains).
    trec_eval sorts the gains with a comparison that truncates their difference to
    an int, and gives a listed gain to every document with that grade, judged or
    not; where that would make its numbers differ from the gains' own order, the
    pair is refused by name: a gain other than 0 for grade 0 (trec_eval gives it to
    the judged non-relevant documents, not the unjudged), a negative grade (those of
    unjudged documents), a negative gain, a gain past 2**31 - 1, and two gains that
    differ by less than 1 without being equal (a grade not listed keeps itself as
    its gain, so a listed gain is also compared with the whole numbers next to it)."""
    example = f"{name}.p=0.8,2=3" if kind.params else f"{name}.1=0,2=3"
    fix = f"write grade=gain pairs, e.g. {example}"
    text = spec[at:]
    if not text:
        raise _error(spec, f"no value after {name}.", fix)
    got: dict = {}
    gains: dict = {}
    for piece in text.split(","):
        key, eq, value = piece.partition("=")
        if not piece:
            raise _error(spec, "an empty pair (two commas in a row, or a comma at the end; a "
                               "space ends a measure name)", fix)
        if not eq or not key or not value:
            raise _error(spec, f"{_shown(piece)} is not GRADE=GAIN"
                               + (f" or {kind.params[0]}=NUMBER" if kind.params else ""), fix)
        if key in kind.params:
            if key in got:
                raise _error(spec, f"{key} is given twice", f"give it once, e.g. {example}")
            got[key] = check_param(kind, key, _trec_value(spec, piece, value, fix), spec)
            continue
        if not _VALID_INT.fullmatch(key):
            raise _error(spec, f"{_shown(key)} is not a grade (a whole number)"
                               + (f" nor {kind.params[0]}" if kind.params else ""), fix)
        grade = int(key)
        if grade < 0:
            raise _error(spec, f"a gain for grade {grade}: trec_eval gives grade -1's gain to "
                               f"documents not in the qrels and grade -2's to those judged with "
                               f"a negative grade, which fastndcg does not reproduce",
                         "give gains to grades >= 0")
        if grade > V.MAX_TREC_GRADE:
            raise _error(spec, f"grade {_cut(key)} is above {V.MAX_TREC_GRADE}",
                         f"give gains to grades 0..{V.MAX_TREC_GRADE}")
        if grade in gains:
            raise _error(spec, f"grade {grade} is given twice", "give each grade once")
        gain = _trec_value(spec, piece, value, fix)
        if gain < 0:
            raise _error(spec, f"grade {grade} has a negative gain, {_cut(value)} (trec_eval "
                               f"stops its ideal ranking at the first gain <= 0 it meets, and a "
                               f"negative gain can push NDCG above 1)",
                         "use 0 for grades that should count as irrelevant")
        if gain >= 2 ** 31:
            raise _error(spec, f"grade {grade}'s gain {_cut(value)} is 2**31 or more (trec_eval "
                               f"compares gains as C ints)", "use smaller gains")
        if grade == 0 and gain != 0:
            raise _error(spec, f"a gain of {_cut(value)} for grade 0: trec_eval gives it to the "
                               f"judged non-relevant documents but not to the unjudged ones, "
                               f"which fastndcg does not tell apart by gain",
                         "leave grade 0 at gain 0")
        gains[grade] = gain
    params = tuple(got.get(p, d) for p, d in zip(kind.params, kind.defaults))
    if not gains:
        return params, None
    pairs = sorted(gains.items())
    by_gain = sorted((gain, grade) for grade, gain in pairs)  # close gains are neighbours
    for (a, ga), (b, gb) in zip(by_gain, by_gain[1:]):
        if 0 < b - a < 1:
            raise _close(spec, ga, a, f"grade {gb}'s gain {number(b)}")
    for grade, gain in pairs:  # a grade not listed keeps itself as its gain
        for i in {math.floor(gain), math.ceil(gain)}:
            if i >= 0 and i not in gains and 0 < abs(gain - i) < 1:
                raise _close(spec, grade, gain, f"grade {i}'s gain {i} (a grade not listed "
                                                f"keeps itself as its gain)")
    if kind.name == "rbp":  # trec_eval scales by the largest listed gain too (kernels' rbp)
        params += (1.0, max(g for _, g in pairs))
    if all(g == grade for grade, g in pairs):  # the grades' own gains: trec_eval's default
        return params, "linear"
    return params, V.TrecGains(pairs)


def _close(spec: str, grade: int, gain: float, other: str) -> ValueError:
    return _error(spec, f"grade {grade}'s gain {number(gain)} and {other} differ by less "
                        f"than 1: trec_eval sorts gains by their difference truncated to a "
                        f"whole number, so it may order these two wrongly",
                  "give gains that are equal or at least 1 apart")


# the values a number parameter may take: (low, high, low included, high included)
_PARAM_RANGES = {
    "p": (0.0, 1.0, False, False, "a persistence (the chance of reading on), above 0 and "
                                  "below 1", "0.8"),
    "recall": (0.0, 1.0, True, True, "a recall level from 0 to 1", "0.5"),
    "mult": (0.0, math.inf, True, False, "a multiple of R, 0 or more", "0.5"),
    "beta": (0.0, math.inf, True, False, "a weight of recall against precision, 0 or more",
             "1"),
    "n": (0.0, math.inf, True, False, "a count of documents, 0 or more", "1000"),
}


def check_param(kind: Kind, key: str, value: float, spec: str) -> float:
    """The one check of a measure's number parameter ``key`` (of any name form:
    ``RBP(p=0.8)``, ``rbp.p=0.8``, ``IPrec@0.5``, ``iprec_at_recall.0.5``): a value
    in its range (:data:`_PARAM_RANGES`), else ``ValueError`` naming the measure
    ``spec``, the value and what to write."""
    if key not in _PARAM_RANGES:
        return value
    lo, hi, lo_in, hi_in, what, example = _PARAM_RANGES[key]
    inside = (lo <= value if lo_in else lo < value) and (value <= hi if hi_in else value < hi)
    if not inside:
        owner = kind.trec or kind.trec_cut or kind.irm or kind.name
        raise _error(spec, f"{key} {number(value)} is out of range: {owner}'s {key} is {what}",
                     f"give {key} in that range, e.g. {example}")
    return value


def _trec_value(spec: str, piece: str, value: str, fix: str) -> float:
    if not _NUMBER.fullmatch(value) or not math.isfinite(float(value)):
        raise _error(spec, f"{_shown(piece)}: {_shown(value)} is not a finite number", fix)
    return float(value)


def _trec(spec: str):
    """(kind, [(cutoff, params), ...], gains) of a trec_eval name, or None when it is
    not one; gains: trec_eval's grade=gain pairs (:func:`_trec_gains`) or None."""
    if spec in _BY_TREC:
        kind = _BY_TREC[spec]
        if kind.each and kind.trec_cut == spec:
            return kind, [(None, (v,)) for v in kind.defaults], None
        return kind, [(c, None) for c in (list(kind.trec_cutoffs) if kind.trec_cut == spec
                                          else [None])], None
    m = re.match(r"([A-Za-z0-9_]+?)\.", spec) or re.match(r"([A-Za-z_]+)_(?=[0-9])", spec)
    if not m or m.group(1) not in _BY_TREC:
        return None
    name, sep = m.group(1), spec[len(m.group(1))]
    kind = _BY_TREC[name]
    if kind.trec_gains and sep == "." and name == kind.trec:
        params, gains = _trec_gains(spec, kind, name, m.end())
        if params == kind.defaults:
            params = None
        return kind, [(None, params)], gains
    if kind.params and sep == ".":
        values = _trec_numbers(spec, kind, name, m.end())
        if kind.each:  # one measure per value, in increasing order, as trec_eval
            values.sort()
            for x, y in zip(values, values[1:]):
                if x == y:
                    raise _error(spec, f"{name} lists {number(x)} twice", "give each value once")
            return kind, [(None, (v,)) for v in values], None
        wanted = len(kind.defaults) - (kind.name == "utility")  # utility's n comes from -N
        if len(values) != wanted:
            raise _error(spec, f"{name} takes {wanted} value{'s' if wanted > 1 else ''} "
                               f"({', '.join(kind.params[:wanted])}), got {len(values)}",
                         f"write {name}.{','.join(number(v) for v in kind.defaults[:wanted])}")
        values += list(kind.defaults[len(values):])
        return kind, [(None, None if tuple(values) == kind.defaults else tuple(values))], None
    if kind.trec_cut != name:
        fix = (f"write {kind.trec_cut}.10 for a cutoff" if kind.trec_cut else
               f"write {kind.irm}@10 for a cutoff" if kind.cutoff != "none" else
               f"write {name}")
        why = f"trec_eval's {name} takes no parameters"
        if kind.name == "11pt_avg":
            why = "fastndcg computes 11pt_avg at trec_eval's 11 recall levels 0.0, 0.1, ..., 1.0"
            fix = "write 11pt_avg, or iprec_at_recall.X,Y for other levels"
        raise _error(spec, why, fix)
    r = _Reader(spec)
    r.pos = m.end()
    example = f"{name}.5,10" if sep == "." else f"{name}_10"
    if r.pos == len(spec):
        raise _error(spec, f"no cutoff after {name}{sep}", f"write {example}")
    cuts = [_cutoff(r, example)]
    while r.accept(","):
        if sep == "_":
            raise r.error(f"{name}_N names one cutoff", f"write {name}.N,M for several, e.g. "
                                                        f"{name}.5,10")
        cuts.append(_cutoff(r, example))
    if r.pos < len(spec):
        raise r.expected(f"',' or the end after cutoff {cuts[-1]}", f"write {example}")
    return kind, [(c, None) for c in cuts], None


def _irm(spec: str):
    """(kind, cutoff, rel, gain) of an ir_measures name (or fastndcg's column name)."""
    r = _Reader(spec)
    name = r.match(_NAME)
    if not name:
        raise r.expected("a measure name (letters and '_')", _GENERAL)
    own = REGISTRY.get(name)
    kind = _BY_IRM.get(name) or own
    if kind is None and name in _BY_TREC:  # trec_eval's name, written as ir_measures'
        trec = _BY_TREC[name]
        example = (f"{trec.trec_cut}.10" if trec.trec_cut == name and not trec.params
                   else f"{name}.1=0,2=3" if trec.trec_gains
                   else f"{name}.{number(trec.defaults[0])}" if trec.params else name)
        other = (f", or as ir_measures does, e.g. {trec.irm}"
                 + ("(rel=2)" if trec.binary else "") + ("@10" if trec.cutoff != "none" else "")
                 if trec.irm else "")
        raise r.error(f"{_shown(name)} is trec_eval's name: it takes no brackets or '@'",
                      f"write it as trec_eval does, e.g. {example}{other}")
    if kind is None:
        raise r.error(f"{_shown(name)} is not a measure fastndcg knows{_suggest(name)}",
                      f"{_GENERAL}; known: {', '.join(sorted(_BY_IRM))}")
    got: dict = {"cutoff": None, "rel": None, "dcg": "log2", "gains": None}
    before = r.peek() == "("
    if before:
        _params(r, kind, name, got)
    at = None
    if r.accept("@"):
        if kind.each:  # IPrec@0.1: the number parameter
            if kind.params[0] in got:
                raise r.error(f"{kind.params[0]} is given twice", f"give it once: {name}@0.1")
            got[kind.params[0]] = check_param(kind, kind.params[0],
                                              _number(r, kind.params[0], f"e.g. {name}@0.1"),
                                              r.spec)
        else:
            at = _cutoff(r, f"{name}@10")
    if r.peek() == "(":
        if before:
            raise r.error(f"parameters are given twice (a second list at {r.at()})",
                          f"give them once: {name}(...)@k")
        if own is None:
            raise r.error(f"write ir_measures' parameters before the cutoff: {name}(...)@k",
                          f"e.g. {name}(rel=2)@10")
        _params(r, kind, name, got)
    if r.pos < len(spec):
        fix = (f"write {name}@10 for a cutoff" if kind.cutoff != "none" else f"write {name}"
               ) + (f", {name}(rel=2) for a threshold" if kind.binary else "")
        raise r.expected("'(', '@' or the end" if at is None else "'(' or the end", fix)
    if at is not None and got["cutoff"] is not None:
        raise r.error(f"the cutoff is given twice (cutoff={got['cutoff']} and @{at})",
                      f"give it once: {name}@{at}")
    if name == "RBP" and got["rel"] is None:  # ir_measures: RBP without rel is graded
        p = number(got.get("p", kind.defaults[0]))
        raise r.error("ir_measures reads RBP without rel= as graded RBP (its own pipeline "
                      "refuses it: the cwl provider needs rel)",
                      f"write RBP(rel=1,p={p}) for binary RBP, or trec_eval's rbp.p={p} for "
                      f"graded RBP (gains: the grades, scaled by the largest)")
    cutoff = at if at is not None else got["cutoff"]
    if kind.cutoff == "none" and cutoff is not None:
        raise r.error(f"{name} takes no cutoff", f"write {re.sub(r'@[0-9]+', '', spec)}")
    if kind.cutoff == "required" and cutoff is None:
        raise r.error(f"{name} needs a cutoff", f"write e.g. {name}@10")
    if got["gains"] is not None and got["dcg"] != "log2":
        raise r.error(f"gains and dcg={got['dcg']!r} do not go together (a table gives each "
                      f"label its gain as it is)", f"write the gains wanted in the table and "
                      f"drop dcg, e.g. {_GAINS_EXAMPLE}")
    gain = None
    if kind.name == "ndcg":
        gain = got["gains"] if got["gains"] is not None else _IRM_DCG[got["dcg"]]
    params = None
    if kind.each:
        if kind.params[0] not in got:
            raise r.error(f"{name} needs {kind.params[0]}", f"write e.g. {name}@0.1 or "
                                                            f"{name}({kind.params[0]}=0.1)")
        params = (got[kind.params[0]],)
    elif kind.params:
        values = tuple(got.get(p, d) for p, d in zip(kind.params, kind.defaults))
        params = None if values == kind.defaults else values
    return kind, cutoff, got["rel"], gain, params


def _ranx_stem(spec: str) -> str:
    return spec.partition("-l")[0].partition("@")[0]


def _ranx(spec: str):
    """(kind, cutoff, rel, gain, None) of a ranx metric name, ``name[@k][-lREL]``
    (``@0`` or no cutoff: the whole list; ``-lREL``: the relevance level), or None
    when ``spec`` does not start with a ranx name."""
    name, dash, level = spec.partition("-l")
    stem, at, k = name.partition("@")
    known = ", ".join(sorted(_BY_RANX))
    if stem in _RANX_OTHER:
        raise _error(spec, f"ranx's {stem} is not a metric fastndcg computes",
                     f"ranx's metrics fastndcg reads: {known}")
    kind = _BY_RANX.get(stem)
    if kind is None:
        return None
    example = {"none": stem, "optional": f"{stem}@10"}.get(kind.cutoff, f"{stem}@10")
    if kind.binary:
        example += "-l2"
    fix = f"write ranx's names as name@k-lLEVEL, e.g. {example!r}"
    cutoff = rel = None
    if at:
        if not _INT.fullmatch(k):
            raise _error(spec, f"the cutoff {_shown(k)} is not a whole number", fix)
        digits = k.lstrip("0") or "0"
        if len(digits) > len(str(MAX_CUTOFF)) or int(digits) > MAX_CUTOFF:
            raise _error(spec, f"cutoff {_cut(digits)} must be <= {MAX_CUTOFF}", fix)
        cutoff = int(digits) or None  # ranx: k=0 is the whole list
    if cutoff is not None and kind.cutoff == "none":
        raise _error(spec, f"ranx's {stem} takes no cutoff (ranx ignores one)",
                     f"write {stem!r}")
    if dash:
        if not kind.binary:
            raise _error(spec, f"a relevance level is read for ranx's binary metrics, and "
                               f"{stem} gains what each label is worth",
                         f"write {name!r}, or give the gains of the labels as a table, e.g. "
                         f"{_GAINS_EXAMPLE!r}")
        if not _INT.fullmatch(level) or int(level) > MAX_REL:
            raise _error(spec, f"the relevance level {_shown(level)} is not a whole number "
                               f"from 0 to {MAX_REL}", fix)
        rel = int(level)
    gain = None
    if kind.name == "ndcg":
        gain = "exp2" if stem == "ndcg_burges" else "linear"
    return kind, cutoff, rel, gain, None


def _items(measures) -> list[str]:
    usage = ("measure takes a measure name or a list of them (e.g. 'map P.5,10' or "
             "['nDCG@10', 'AP', 'P@5'])")
    if isinstance(measures, str):
        return _split(measures)
    if not isinstance(measures, (list, tuple)):
        hint = "; decode the bytes first" if isinstance(measures, (bytes, bytearray)) else ""
        raise TypeError(f"{usage}, got {_cut(repr(measures))}{hint}")
    for i, m in enumerate(measures):
        if not isinstance(m, str):
            raise TypeError(f"{usage}, got {_cut(repr(measures))}: measure[{i}] is "
                            f"{_cut(repr(m))} ({type(m).__name__}), not a str; write each "
                            f"measure as text, e.g. 'P@10'")
    return [piece for m in measures for piece in _split(m)]


def parse(measures, rel: int | None = None, ranx: bool = False) -> Parsed:
    """Read measure names: a string (several separated by spaces) or a list.
    ``rel`` is the threshold of the binary measures that do not name one
    (default 1). All NDCG names must agree on the gain; a measure named twice is
    kept once.

    ranx's metric names (``ndcg@10``, ``ndcg_burges@10``, ``map@100``, ``mrr@10``,
    ``precision@5``, ``recall@100``, ``hit_rate@10``, ``r-precision``, ``bpref``,
    ``f1@10``; ``-l2`` for a relevance level) are read as ranx reads them. Four of
    them are also trec_eval's names (``map``, ``ndcg``, ``recall``, ``bpref``): with
    ``ranx=True`` (``preset="ranx"``) ranx's reading comes first (``recall`` is then
    the whole list's recall, ``bpref`` ranx's), else trec_eval's.

    >>> p = parse(["nDCG@10", "RR(rel=2)@10", "P@5"])
    >>> p.ndcg, p.gain, p.columns
    ([10], 'linear', ['ndcg@10', 'rr@10(rel=2)', 'p@5'])
    """
    default_rel = 1 if rel is None else check_rel(rel)
    items = _items(measures)
    if not items:
        raise ValueError(f"measure is empty: {_cut(repr(measures))} names no measure; name at "
                         f"least one, e.g. 'ndcg_cut.10' or 'AP'")
    out = Parsed(rel=default_rel)
    gains: list = []
    plain: list = []  # trec_eval's names of measures that take gains, given none
    seen: set = set()
    for item in items:
        reading = _ranx(item) if ranx else None
        trec = None if reading is not None else _trec(item)
        stem = _ranx_stem(item)
        if reading is None and trec is None and (
                stem in _RANX_ONLY or stem in _RANX_OTHER or ("-l" in item and stem in _BY_RANX)):
            reading = _ranx(item)
        if reading is not None:
            found = [reading]
        elif trec is not None:
            kind, cuts, tg = trec
            implied = tg if tg is not None else "linear" if kind.name == "ndcg" else None
            found = [(kind, c, None, implied, ps) for c, ps in cuts]
            if kind.trec_gains and tg is None:  # trec_eval's default gains: the grades
                plain.append(item)
        else:
            found = [_irm(item)]
        for kind, cutoff, r, gain, ps in found:
            if kind.name == "ndcg" or gain is not None:
                gains.append((item, gain))
            if kind.name == "ndcg":
                if cutoff not in out.ndcg:
                    out.ndcg.append(cutoff)
                continue
            m = Measure(kind.name, cutoff, r, ps)
            key = m.column(default_rel)
            if key not in seen:
                seen.add(key)
                out.others.append(m)
    if gains:
        first = gains[0]
        for item, g in gains[1:]:
            if g != first[1]:
                raise ValueError(f"measures {_shown(first[0])} and {_shown(item)} use different "
                                 f"gains; evaluate them in separate calls")
        out.gain = first[1]
        if isinstance(out.gain, V.TrecGains) and plain:  # trec_eval's names keep their gains
            raise ValueError(f"measures {_shown(first[0])} and {_shown(plain[0])} use different "
                             f"gains (trec_eval gives {_shown(plain[0])} the grades as gains); "
                             f"evaluate them in separate calls")
    return out


@dataclass(frozen=True)
class Layout:
    """How a list of binary measures reaches the kernels: the flag bits (one per
    relevance threshold, then one for "judged" if a measure reads it) and, per
    measure, its code, cutoff (-1: none) and three bits: the one it reads, a second
    (bpref, num_nonrel_judged_ret, infAP: the bit at threshold 0, judged items with a
    label >= 0, which tells judged non-relevant items from unjudged ones; others:
    the first again) and a third (infAP: the judged bit, which tells the pool's
    unlabelled items from those outside it; others: the first again)."""
    rels: tuple            # the threshold of flag bit b, for b < len(rels)
    judged_bit: int        # the bit saying "judged" (-1: none)
    codes: tuple
    cutoffs: tuple
    bits: tuple
    params: tuple = ()     # per measure, the values of its number parameters (or ())
    families: tuple = ()   # per measure, the kernel family that scores it (codes.F_*)

    @property
    def n_bits(self) -> int:
        return len(self.rels) + (self.judged_bit >= 0)


# measures that tell judged non-relevant items (labels 0..rel-1) from unjudged ones:
# they read a second bit at threshold 0 (unj reads only that one)
_READS_ZERO = (KC.M_BPREF, KC.M_NUM_NONREL_JUDGED_RET, KC.M_UNJ, KC.M_RBP_RESID)
_ONLY_ZERO = (KC.M_UNJ, KC.M_RBP_RESID)  # read the bit at threshold 0 alone
_READS_JUDGED = (KC.M_INFAP, KC.M_RBP_RESIDUAL, KC.M_BPREF_RANX)  # read the judged bit
#                                                                   (any grade)


# measures whose expectation over the orderings of tied items is exact for gains >= 0
# only: ndcg_rel's mean is read as 0 when its sum is not above 0, which a negative
# gain can make it for some orderings and not others
_AVERAGE_NEEDS_GAINS_AT_LEAST_0 = ("ndcg_rel",)


def check_ties(others: list, ties: str, rel: int = 1, negative_labels: str = "error") -> None:
    """Refuse ties="average" for a measure whose expectation over the orderings of
    tied items fastndcg does not compute exactly (ndcg_rel's with negative labels
    kept as they are), and "optimistic"/"pessimistic" for one whose bounds no
    order of the tied items gives."""
    for m in others:
        kind = REGISTRY[m.kind]
        if (ties == "average" and negative_labels == "keep"
                and m.kind in _AVERAGE_NEEDS_GAINS_AT_LEAST_0):
            raise ValueError(
                f"measure {m.column(rel)!r} is not offered with ties='average' and "
                f"negative_labels='keep': its expected value over the orderings of tied "
                f"items is exact for gains >= 0 only; pass negative_labels='zero', or "
                f"ties='optimistic' or 'pessimistic' (its bounds), 'stable' or 'trec'")
        if ties == "average" and not kind.average:
            works = "'trec' (trec_eval's order), 'stable'" + (
                ", 'optimistic' or 'pessimistic' (the bounds over those orderings)"
                if kind.bounds else "")
            raise ValueError(
                f"measure {m.column(rel)!r} is not offered with ties='average': its expected "
                f"value over the orderings of tied items has no exact form fastndcg computes; "
                f"pass ties={works}")
        if ties in ("optimistic", "pessimistic") and not kind.bounds:
            raise ValueError(
                f"measure {m.column(rel)!r} is not offered with ties={ties!r}: it does not "
                f"always grow as items with higher gains move up, so no order of tied items "
                f"by gain gives its largest or smallest value; pass ties='trec' (trec_eval's "
                f"order) or 'stable' (input order)")


# trec_eval 9's (pytrec_eval's) variants of trec_eval 10's measures (``layout(trec9=True)``)
_TREC9 = {KC.M_IPREC: KC.M_IPREC_TE9, KC.M_11PT_AVG: KC.M_11PT_AVG_TE9}


def layout(others: list, rel: int, trec9: bool = False) -> Layout:
    """The :class:`Layout` of ``others`` (Measure) with default threshold ``rel``.
    ``trec9``: as trec_eval 9 (pytrec_eval) computes them, where it differs from
    trec_eval 10: ``iprec`` and ``11pt_avg`` read the relevant item int(recall x R +
    0.9), not round(recall x R)."""
    rels: list = []
    codes, cutoffs, bits, params = [], [], [], []
    judged = any((REGISTRY[m.kind].judgments and REGISTRY[m.kind].code != KC.M_UNJ)
                 or REGISTRY[m.kind].code in _READS_JUDGED for m in others)
    for m in others:
        kind = REGISTRY[m.kind]
        r = m.rel if m.rel is not None else rel
        wanted = (r,) if kind.binary else ()
        for t in wanted + ((0,) if kind.code in _READS_ZERO + (KC.M_INFAP,) else ()):
            if t not in rels:
                rels.append(t)
    rels.sort()
    judged_bit = len(rels) if judged else -1
    if len(rels) + judged > 8:
        raise ValueError(f"at most 8 relevance thresholds in one evaluation, got "
                         f"{len(rels)} ({rels}); evaluate them in separate calls")
    for m in others:
        kind = REGISTRY[m.kind]
        r = m.rel if m.rel is not None else rel
        codes.append(_TREC9.get(kind.code, kind.code) if trec9 else kind.code)
        cutoffs.append(-1 if m.cutoff is None else m.cutoff)
        zero = rels.index(0) if kind.code in _READS_ZERO + (KC.M_INFAP,) else -1
        b = (zero if kind.code in _ONLY_ZERO
             else judged_bit if kind.judgments or kind.code == KC.M_RBP_RESIDUAL
             else rels.index(r) if kind.binary else 0)
        if kind.code == KC.M_BPREF_RANX:  # relevant, and judged at all (N: judged - R)
            bits.append((b, judged_bit, judged_bit))
        else:
            bits.append((b, zero if zero >= 0 else b,
                         judged_bit if kind.code == KC.M_INFAP else b))
        params.append(tuple(m.values))
    families = tuple(KC.F_GRADED if c >= KC.GRADED_FIRST else
                     KC.F_BINARY if c > KC.BASIC_LAST else KC.F_BASIC for c in codes)
    return Layout(tuple(rels), judged_bit, tuple(codes), tuple(cutoffs), tuple(bits),
                  tuple(params), families)


def flags_of(lay: Layout, labels, judged=None):
    """uint8 flag bits per row: bit b set when the (raw) label is >= rels[b] (and the
    row is judged, when ``judged`` is given), the judged bit when judged."""
    import numpy as np

    flags = np.zeros(len(labels), np.uint8)
    for b, r in enumerate(lay.rels):
        hit = labels >= r
        if judged is not None:
            hit &= judged
        flags |= hit.astype(np.uint8) << np.uint8(b)
    if lay.judged_bit >= 0:
        j = np.ones(len(labels), bool) if judged is None else judged
        flags |= j.astype(np.uint8) << np.uint8(lay.judged_bit)
    return flags


def count_relevant(lay: Layout, offsets, labels):
    """(n_queries, n_bits) int64: R of each query at each threshold, from the labels
    of its judged documents (CSR ``offsets``), and at the judged bit the number of
    judged documents."""
    import numpy as np

    n_q = len(offsets) - 1
    out = np.zeros((n_q, max(lay.n_bits, 1)), np.int64)
    for b, r in enumerate(lay.rels):
        c = np.concatenate(([0], np.cumsum(labels >= r, dtype=np.int64)))
        out[:, b] = c[offsets[1:]] - c[offsets[:-1]]
    if lay.judged_bit >= 0:
        out[:, lay.judged_bit] = np.diff(offsets)
    return out
