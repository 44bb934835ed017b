"""The measures fastndcg computes: one registry, one row per measure, and the
parser of their names (trec_eval's, ir_measures' and fastndcg's own).

Every measure is computed from the same ranking of a query (ranked once, whatever
the measures): NDCG by the DCG/IDCG walk, every other measure by one accumulator
over the ranked tie groups (``fastndcg._kernels``), one plain function in
:mod:`fastndcg.reference`, and one row of :data:`REGISTRY`, as trec_eval's
``measures.c`` table has. A row (:class:`Kind`) says everything else about its
measure: its names in trec_eval, ir_measures and ranx, the kernel family that
scores it, the flag bits it reads, the tie rules it offers, how it is averaged
over queries and printed by ``fastndcg trec_eval``, its number parameters
(:class:`Param`), its reference function and its definition. The table of the
measures in the documentation (the Measures page of the user guide) is written
from these rows.

A *binary* measure reads whether an item is relevant: its label is at least the
threshold ``rel`` (default 1; trec_eval ``-l``, ir_measures ``rel=``) and, in
qrels mode, it is judged. Denominators follow trec_eval: P@k divides by k even
when fewer are retrieved; recall, AP and R-precision divide by R, the relevant
judged documents of the query (in list mode, the relevant items of the list).

Names are case-sensitive, as in the tools: ``ndcg_cut.10`` (trec_eval), ``nDCG@10``
(ir_measures) and ``ndcg@10`` (fastndcg's column) are one measure; ``map``, ``AP``
and ``ap``; ``P.5``, ``P@5`` and ``p@5``. A threshold other than 1 is part of the
column name: ``ap(rel=2)``, ``p@5(rel=2)``; fastndcg's column names are accepted as
measure names too.

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

__all__ = ["Kind", "Param", "Measure", "Parsed", "REGISTRY", "parse", "check_rel",
           "column_name", "TREC_CUTOFFS", "MAX_CUTOFF", "MAX_REL", "MAX_GAIN_TABLE"]

# trec_eval's default cutoffs (m_P.c, m_recall.c, m_map_cut.c, m_ndcg_cut.c; m_success.c)
TREC_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
TREC_SUCCESS_CUTOFFS = (1, 5, 10)
MAX_CUTOFF = V.MAX_CUTOFF  # the largest cutoff a name may give
MAX_REL = V.MAX_REL        # the largest threshold a name may give (integers exact in float64)
MAX_GAIN_TABLE = 1 << 16   # labels a gain table in a name may cover: 0..65535

# the kernel family that scores a measure (Kind.family), as the kernels number them
FAMILIES = {"basic": KC.F_BASIC, "binary": KC.F_BINARY, "graded": KC.F_GRADED}
# the flag bits a measure may read (Kind.reads)
BITS = ("rel", "zero", "judged")
# how fastndcg trec_eval prints a measure's trec_eval name (Kind.trec_prints):
#   mean: a value per query and its mean; long: a count per query and its sum;
#   gm: the geometric mean, on the all line only; num_q: the all line only;
#   param: one line, the parameters as given appended (name_PARAMS);
#   cut: one line per cutoff (name_K); level: one line per value (name_%3.2f)
PRINTS = ("mean", "long", "gm", "num_q", "param", "cut", "level")


@dataclass(frozen=True, kw_only=True)
class Param:
    """A number parameter of a measure (``rbp.p=0.8``, ``RBP(p=0.8)``,
    ``iprec_at_recall.0.5``): read as ``type``, checked against ``range``.

    >>> REGISTRY["set_f"].params[0].default
    1.0
    """
    name: str                  # as written in names and columns: set_f(beta=0.5)
    type: type = float
    default: float | tuple     # its value when none is given; for a kind whose trec_eval
    #                            name is one measure per value (Kind.each), the values
    #                            trec_eval measures by default
    doc: str                   # what it is ("a recall level from 0 to 1"): in messages
    #                            and the documentation
    range: tuple | None = None  # (low, high, low included, high included), or no check
    example: str = ""          # a value in range, for messages ("0.8")
    trec_example: str = ""     # trec_eval's parameter text, for messages ("0.5,1.0")
    in_trec_name: bool = True  # trec_eval's name gives it (utility's n comes from -N)
    keyword: str = ""          # the reference function's keyword, when not ``name``

    @property
    def reference_keyword(self) -> str:
        return self.keyword or self.name


def _persistence(default: float) -> Param:
    return Param(name="p", default=default, range=(0.0, 1.0, False, False), example="0.8",
                 trec_example="p=0.8",
                 doc="a persistence (the chance of reading on), above 0 and below 1")


def _coefficient(name: str, default: float, what: str) -> Param:
    return Param(name=name, default=default, trec_example="1,-1,0,0",
                 doc=f"utility's weight of the {what}")


@dataclass(frozen=True, kw_only=True)
class Kind:
    """One row of the registry: everything about one measure.

    >>> k = REGISTRY["ap"]
    >>> (k.trec, k.trec_cut, k.irm, k.ranx, k.family, k.binary, k.reference)
    ('map', 'map_cut', 'AP', 'map', 'basic', True, 'ap_query')
    """
    name: str                 # column stem
    code: int                 # accumulator code (codes.M_*; -1: NDCG, the DCG/IDCG walk)
    family: str               # the kernel that scores it: "ndcg" (the DCG/IDCG walk),
    #                           "basic" (the usual binary measures), "binary" (the other
    #                           measures read from flag bits) or "graded" (they read the
    #                           gains in rank order and the ideal gains)
    trec: str | None = None   # trec_eval's name without cutoffs (None: no such measure)
    trec_cut: str | None = None  # trec_eval's name with cutoffs (with ``each``: with values)
    trec_cutoffs: tuple = ()  # trec_eval's default cutoffs for ``trec_cut`` without any
    trec_prints: str = "mean"  # how trec_eval prints ``trec`` (see PRINTS); ``trec_cut``
    #                            prints "level" with ``each``, else "cut"
    trec_gains: bool = False  # trec_eval's name takes grade=gain pairs (ndcg.1=0,2=3)
    irm: str | None = None    # ir_measures' name (None: no such measure)
    ranx: str | None = None   # ranx's metric name (None: no such metric)
    cutoff: str = "none"      # "none", "optional" or "required"
    reads: tuple = ()         # the flag bits it reads (BITS), first, second, third (a
    #                           shorter tuple repeats its first): "rel" (relevant at its
    #                           threshold: a binary measure), "zero" (judged with a label
    #                           >= 0, which tells judged non-relevant items from unjudged
    #                           ones), "judged" (judged at all)
    judgments: bool = False   # needs qrels (reads which documents are judged)
    params: tuple = ()        # its number parameters (Param), in the kernels' order
    each: bool = False        # trec_eval's name.X,Y is one measure per value of its one
    #                           parameter (else one measure given all the values)
    summary: str = "mean"     # the average over queries: "mean", "sum" (counts) or "gm"
    #                           (trec_eval's geometric mean: exp(mean(log(max(v, 1e-5)))))
    average: bool = True      # offers ties="average" (an exact expectation)
    average_negative: bool = True  # ... with negative labels kept as negative gains
    bounds: bool = True       # offers ties="optimistic"/"pessimistic" (the max / min)
    refusal: str = ""         # why it refuses the tie rules it refuses (documentation)
    reference: str            # its function in fastndcg.reference
    doc: str                  # its definition, for one query (Markdown)
    no_relevant: str = "0"    # its value without a relevant document (R = 0)
    short_list: str = "\u2014"  # what it does when fewer than k items are retrieved

    @property
    def binary(self) -> bool:
        """It reads relevance at a threshold (``rel``)."""
        return "rel" in self.reads

    @property
    def defaults(self) -> tuple:
        """Its parameters' values when none are given, in order; with ``each``, the
        values trec_eval measures by default (one measure each)."""
        if self.each:
            return self.params[0].default
        return tuple(p.default for p in self.params)

    @property
    def param_names(self) -> tuple:
        return tuple(p.name for p in self.params)

    def param(self, name: str) -> Param:
        return next(p for p in self.params if p.name == name)

    def prints(self, trec_name: str) -> str:
        """How ``fastndcg trec_eval`` prints this measure's trec_eval name."""
        if trec_name == self.trec:
            return self.trec_prints
        return "level" if self.each else "cut"


# the texts of the Ties section's refusals (the documentation groups the measures that
# share one)
_NOT_MONOTONE = (
    "not monotone in the order of relevant items: moving a relevant item (for G, a higher "
    "grade) up can lower them, so relevant-first (or gains descending) is not their "
    "maximum and no order of a tied group gives their bounds. trec_eval's G of the ranked "
    "grades 1, 1, 2, 3, 1 is 0.7413; with the 3 before the 2 (1, 1, 3, 2, 1), 0.7279")
_NO_EXACT_EXPECTATION = (
    "their expected value over the orderings has no exact form fastndcg computes (for "
    "`iprec` and `11pt_avg`, the expected maximum of precisions)")
_SETS = "the whole list: neither order nor ties matter, for all four set measures"

REGISTRY: dict[str, Kind] = {k.name: k for k in [
    Kind(name="ndcg", code=-1, family="ndcg", trec="ndcg", trec_cut="ndcg_cut",
         trec_cutoffs=TREC_CUTOFFS, trec_prints="param", trec_gains=True, irm="nDCG",
         ranx="ndcg", cutoff="optional", reference="ndcg_query",
         doc="DCG@k / IDCG@k, with the gain, discount and tie rule set (see [NDCG](#ndcg))",
         no_relevant="`zero_idcg` decides (0 by default)", short_list="as if k were the list"),
    Kind(name="ap", code=KC.M_AP, family="basic", trec="map", trec_cut="map_cut",
         trec_cutoffs=TREC_CUTOFFS, irm="AP", ranx="map", cutoff="optional", reads=("rel",),
         reference="ap_query",
         doc="(sum over relevant items at rank p ≤ k of (relevant in the top p) / p) / R",
         short_list="the sum stops at the end of the list; still / R"),
    Kind(name="rr", code=KC.M_RR, family="basic", trec="recip_rank", irm="RR", ranx="mrr",
         cutoff="optional", reads=("rel",), reference="rr_query",
         doc="1 / rank of the first relevant item if that rank ≤ k, else 0",
         short_list="as if k were the list"),
    Kind(name="p", code=KC.M_P, family="basic", trec_cut="P", trec_cutoffs=TREC_CUTOFFS,
         irm="P", ranx="precision", cutoff="required", reads=("rel",),
         reference="precision_query", doc="relevant in the top k / k",
         short_list="still divides by k (trec_eval)"),
    Kind(name="r", code=KC.M_R, family="basic", trec_cut="recall", trec_cutoffs=TREC_CUTOFFS,
         irm="R", ranx="recall", cutoff="required", reads=("rel",), reference="recall_query",
         doc="relevant in the top k / R", short_list="as if k were the list"),
    Kind(name="hits", code=KC.M_HITS, family="basic", ranx="hits", cutoff="optional",
         reads=("rel",), reference="hits_query", doc="relevant items in the top k",
         short_list="counts those there are"),
    Kind(name="success", code=KC.M_SUCCESS, family="basic", trec_cut="success",
         trec_cutoffs=TREC_SUCCESS_CUTOFFS, irm="Success", ranx="hit_rate",
         cutoff="required", reads=("rel",), reference="success_query",
         doc="1 if a relevant item is in the top k, else 0", short_list="as if k were the list"),
    Kind(name="rprec", code=KC.M_RPREC, family="basic", trec="Rprec", irm="Rprec",
         ranx="r-precision", reads=("rel",), reference="rprec_query",
         doc="relevant in the top R / R", short_list="still divides by R"),
    Kind(name="num_q", code=KC.M_NUM_Q, family="binary", trec="num_q", trec_prints="num_q",
         irm="NumQ", summary="sum", reference="num_q_query",
         doc="1 for each query scored (its `Report.mean` is the sum: the number of queries, "
             "as trec_eval's `all` line)", no_relevant="1"),
    Kind(name="num_ret", code=KC.M_NUM_RET, family="basic", trec="num_ret", trec_prints="long",
         irm="NumRet", summary="sum", reference="num_ret_query", doc="items retrieved",
         no_relevant="\u2014"),
    Kind(name="num_rel", code=KC.M_NUM_REL, family="basic", trec="num_rel", trec_prints="long",
         irm="NumRel", reads=("rel",), summary="sum", reference="num_rel_query", doc="R"),
    Kind(name="num_rel_ret", code=KC.M_NUM_REL_RET, family="basic", trec="num_rel_ret",
         trec_prints="long", irm="NumRelRet", reads=("rel",), summary="sum",
         reference="num_rel_ret_query", doc="relevant items retrieved"),
    Kind(name="bpref", code=KC.M_BPREF, family="basic", trec="bpref", irm="Bpref",
         reads=("rel", "zero"), reference="bpref_query",
         doc="(sum over relevant items of 1 − min(n, R) / min(N, R), n the judged "
             "non-relevant items above it, 1 when n = 0) / R; judged non-relevant: judged "
             "with a label from 0 to rel − 1 (a negative grade is \"in the pool, unjudged\", "
             "as in trec_eval); N: all of the query's (qrels mode), or the list's",
         short_list="unretrieved relevant documents add 0 but count in R"),
    Kind(name="num_nonrel_judged_ret", code=KC.M_NUM_NONREL_JUDGED_RET, family="basic",
         trec="num_nonrel_judged_ret", trec_prints="long", reads=("rel", "zero"),
         summary="sum", reference="num_nonrel_judged_ret_query",
         doc="judged non-relevant items retrieved (judged, label from 0 to rel − 1)",
         no_relevant="\u2014"),
    Kind(name="set_p", code=KC.M_SET_P, family="basic", trec="set_P", irm="SetP",
         reads=("rel",), reference="set_p_query",
         doc=f"relevant items retrieved / items retrieved ({_SETS})",
         short_list="— (0 for an empty list)"),
    Kind(name="set_recall", code=KC.M_SET_R, family="basic", trec="set_recall", irm="SetR",
         reads=("rel",), reference="set_recall_query", doc="relevant items retrieved / R"),
    Kind(name="set_relative_p", code=KC.M_SET_REL_P, family="basic", trec="set_relative_P",
         irm="SetRelP", reads=("rel",), reference="set_relative_p_query",
         doc="relevant items retrieved / min(items retrieved, R)",
         short_list="— (0 for an empty list)"),
    Kind(name="set_map", code=KC.M_SET_MAP, family="basic", trec="set_map", irm="SetAP",
         reads=("rel",), reference="set_map_query",
         doc="(relevant items retrieved)² / (items retrieved × R)",
         short_list="— (0 for an empty list)"),
    Kind(name="gm_map", code=KC.M_AP, family="basic", trec="gm_map", trec_prints="gm",
         reads=("rel",), summary="gm", reference="ap_query",
         doc="AP of each query; **averaged as trec_eval's geometric mean**, exp(mean of "
             "log(max(value, 1e-5)))", no_relevant="0 (log 1e-5 in the mean)",
         short_list="as AP"),
    Kind(name="gm_bpref", code=KC.M_BPREF, family="basic", trec="gm_bpref", trec_prints="gm",
         reads=("rel", "zero"), summary="gm", reference="bpref_query",
         doc="bpref of each query; **averaged as trec_eval's geometric mean**, exp(mean of "
             "log(max(value, 1e-5)))", no_relevant="0 (log 1e-5 in the mean)",
         short_list="as bpref"),
    Kind(name="relative_p", code=KC.M_REL_P, family="binary", trec_cut="relative_P",
         trec_cutoffs=TREC_CUTOFFS, cutoff="required", reads=("rel",),
         reference="relative_p_query", doc="relevant in the top k / min(k, R)",
         short_list="still divides by min(k, R)"),
    Kind(name="rprec_mult", code=KC.M_RPREC_MULT, family="binary", trec_cut="Rprec_mult",
         reads=("rel",), each=True, reference="rprec_mult_query",
         params=(Param(name="mult", default=(0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0),
                       range=(0.0, math.inf, True, False), example="0.5",
                       trec_example="0.5,1.0", doc="a multiple of R, 0 or more"),),
         doc="precision at rank d = int(x·R + 0.9) (trec_eval's rounding), x the `mult`",
         short_list="relevant items retrieved / d"),
    Kind(name="iprec", code=KC.M_IPREC, family="binary", trec_cut="iprec_at_recall",
         irm="IPrec", reads=("rel",), each=True, average=False,
         refusal=_NO_EXACT_EXPECTATION, reference="iprec_query",
         params=(Param(name="recall",
                       default=(0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0),
                       range=(0.0, 1.0, True, True), example="0.5", trec_example="0.1,0.5",
                       doc="a recall level from 0 to 1"),),
         doc="the largest precision at the rank of relevant item c = round(x·R) (halves up, "
             "as trec_eval) or any rank below it, x the `recall`; c = 0 as c = 1",
         short_list="0 when fewer than c relevant items are retrieved"),
    Kind(name="11pt_avg", code=KC.M_11PT_AVG, family="binary", trec="11pt_avg",
         trec_prints="param", reads=("rel",), average=False, refusal=_NO_EXACT_EXPECTATION,
         reference="iprec_11pt_query",
         doc="the mean of `iprec` at recall 0.0, 0.1, …, 1.0"),
    Kind(name="set_f", code=KC.M_SET_F, family="binary", trec="set_F", trec_prints="param",
         irm="SetF", reads=("rel",), reference="set_f_query",
         params=(Param(name="beta", default=1.0, range=(0.0, math.inf, True, False),
                       example="1", trec_example="0.5",
                       doc="a weight of recall against precision, 0 or more"),),
         doc="(1 + beta)·P·R / (beta·P + R) of set_p and set_recall (trec_eval's form)",
         short_list="— (0 for an empty list)"),
    Kind(name="utility", code=KC.M_UTILITY, family="binary", trec="utility",
         trec_prints="param", reads=("rel",), reference="utility_query",
         params=(_coefficient("a", 1.0, "relevant items retrieved"),
                 _coefficient("b", -1.0, "non-relevant items retrieved"),
                 _coefficient("c", 0.0, "relevant documents not retrieved"),
                 _coefficient("d", 0.0, "non-relevant documents not retrieved"),
                 Param(name="n", default=0.0, range=(0.0, math.inf, True, False),
                       example="1000", in_trec_name=False, keyword="n_docs",
                       doc="a count of documents, 0 or more")),
         doc="a·(relevant retrieved) + b·(non-relevant retrieved) + c·(relevant not "
             "retrieved) + d·(non-relevant not retrieved, in a collection of n documents: "
             "trec_eval's `-N`)", no_relevant="may be ≠ 0"),
    Kind(name="bing", code=KC.M_BING, family="binary", trec="binG", reads=("rel",),
         reference="bing_query",
         doc="(sum over relevant items of 1 / log2(2 + non-relevant items above it, "
             "unjudged included)) / R",
         short_list="unretrieved relevant documents add 0 but count in R"),
    Kind(name="rbp_resid", code=KC.M_RBP_RESID, family="binary", trec="rbp_resid",
         trec_prints="param", reads=("zero",), reference="rbp_resid_query",
         params=(_persistence(0.9),),
         doc="trec_eval's residual of `rbp`: p^n + (1 − p) · sum of p^(rank−1) over the items "
             "not judged with a label ≥ 0 (unjudged, or judged with a negative grade): how far "
             "RBP could rise if they all had the largest gain; 0 when every item is judged "
             "(see [RBP and its residuals](#rbp))",
         no_relevant="\u2014", short_list="the ranks past the list count, unless every item "
                                          "is judged"),
    Kind(name="infap", code=KC.M_INFAP, family="binary", trec="infAP", irm="infAP",
         reads=("rel", "zero", "judged"), average=False, bounds=False, refusal=_NOT_MONOTONE,
         reference="infap_query",
         doc="inferred AP (Yilmaz & Aslam 2006, trec_eval's form): at the rank j (0-based) of "
             "each relevant item, with r relevant, m judged non-relevant and u unsampled pool "
             "items (judged with a negative label) above it, 1 at rank 0, else 1/(j+1) + "
             "j/(j+1) · (r+m+u)/j · (r+ε)/(r+m+2ε), ε = 1e-5; summed and divided by R. **Only "
             "`trec` and `stable` ties**: infAP does not always grow as a relevant item moves "
             "up, so no order of tied items gives its bounds (see [Ties](#ties))"),
    Kind(name="rbp", code=KC.M_RBP, family="graded", trec="rbp", trec_prints="param",
         trec_gains=True, reference="rbp_query", params=(_persistence(0.9),),
         doc="trec_eval's graded rank-biased precision (Moffat & Zobel 2008): (1 − p) · sum "
             "of gain · p^(rank−1), the gains divided by the query's largest judged gain when "
             "it is above 1 (trec_eval 10 scales graded gains into [0, 1]). trec_eval's code "
             "reads two bounds it never sets (`min` and `max` in `m_rbp.c`), so its rbp "
             "depends on what the measures computed before it in the same call left behind: "
             "fastndcg reads them as 0 and the largest gain, which is what trec_eval prints "
             "for `rbp` alone and within `all_trec` on every real run; beside some other "
             "measures (`-m G -m rbp`) trec_eval prints other numbers. With [gain "
             "parameters](#trec-eval-gains) the largest gain is the largest listed one or "
             "that of a grade up to the query's largest"),
    Kind(name="g", code=KC.M_G, family="graded", trec="G", trec_prints="param",
         trec_gains=True, average=False, bounds=False, refusal=_NOT_MONOTONE,
         reference="g_query",
         doc="trec_eval's normalised gain: each gain g at rank i over log2(2 + the ideal "
             "gains to rank i, each at least 1, − the gains to rank i), summed, over the sum "
             "of the ideal gains. **Only `trec` and `stable` ties**: G does not always grow "
             "as a higher grade moves up, so no order of tied items gives its bounds (see "
             "[Ties](#ties))"),
    Kind(name="ndcg_rel", code=KC.M_NDCG_REL, family="graded", trec="ndcg_rel",
         trec_prints="param", trec_gains=True, average_negative=False,
         refusal="its expectation is exact for gains ≥ 0 only: its value is read as 0 when "
                 "its sum is not above 0, which a negative gain can make it for some "
                 "orderings and not others",
         reference="ndcg_rel_query",
         doc="NDCG at the rank of each item with a gain above 0, the unretrieved ones "
             "counted at the end of the list, averaged over the positive ideal gains. Every "
             "tie rule (`average` not with `negative_labels=\"keep\"`, see [Ties](#ties))"),
    Kind(name="rndcg", code=KC.M_RNDCG, family="graded", trec="Rndcg", trec_prints="param",
         trec_gains=True, reads=("rel",), reference="rndcg_query",
         doc="NDCG at each rank where the ideal gain falls (and at the end of the list), "
             "averaged. Every tie rule"),
    Kind(name="rbp_bin", code=KC.M_RBP_BIN, family="binary", irm="RBP", reads=("rel",),
         reference="rbp_bin_query", params=(_persistence(0.8),),
         doc="binary rank-biased precision (Moffat & Zobel 2008) of the relevant items: "
             "(1 − p) · sum of p^(rank−1) over them, as cwl_eval computes it for ir_measures "
             "(cwl stops at rank 1,000; fastndcg goes to the end of the list: the two differ "
             "by about p^1000). `RBP` needs `rel=` (see [RBP and its residuals](#rbp))"),
    Kind(name="rbp_residual", code=KC.M_RBP_RESIDUAL, family="binary", reads=("judged",),
         reference="rbp_residual_query", params=(_persistence(0.8),),
         doc="cwl_eval's residual of `rbp_bin`: p^n + (1 − p) · sum of p^(rank−1) over the "
             "unjudged items (a negative grade is judged, read as 0, as ir_measures reads "
             "it): how far RBP could rise if they and the ranks past the list were relevant",
         no_relevant="\u2014", short_list="the ranks past the list count, always"),
    Kind(name="err", code=KC.M_ERR, family="graded", irm="ERR", cutoff="optional",
         average=False, refusal=_NO_EXACT_EXPECTATION, reference="err_query",
         doc="expected reciprocal rank (Chapelle et al. 2009) as gdeval computes it: over the "
             "first k ranks, R / rank × the product of (1 − R) above, R = (2^grade − 1) / "
             "2^top, grades below 0 read as 0. gdeval's top grade is 4 and it refuses higher "
             "ones (ir_measures caps them); fastndcg takes top = the query's largest judged "
             "grade when that is above 4 (so such qrels are scored, not refused or capped). "
             "The grade is the label under `gain=\"linear\"` or `\"exp2\"` (a gain table is "
             "not a grade). **Not with `average` ties** (`optimistic`/`pessimistic`: higher "
             "grades first/last, ERR's largest/smallest value)",
         short_list="as if k were the list"),
    Kind(name="unj", code=KC.M_UNJ, family="binary", trec_cut="unj", trec_cutoffs=(5, 10, 20),
         cutoff="required", reads=("zero",), judgments=True, reference="unj_query",
         doc="items in the top k not judged with a label ≥ 0 (unjudged, or a negative "
             "grade) / k",
         no_relevant="\u2014", short_list="ranks past the list count as judged"),
    Kind(name="judged", code=KC.M_JUDGED, family="basic", irm="Judged", cutoff="required",
         reads=("judged",), judgments=True, reference="judged_query",
         doc="judged items in the top k / min(k, items retrieved) (ir_measures)",
         no_relevant="\u2014",
         short_list="divides by the items there are; 0 for an empty list"),
    Kind(name="f1", code=KC.M_F1, family="binary", ranx="f1", cutoff="optional",
         reads=("rel",), reference="f1_query",
         doc="2·P·R / (P + R) of P@k (over k; `f1` without k: over the items retrieved) and "
             "R@k, as ranx computes it", short_list="P still divides by k"),
    Kind(name="bpref_ranx", code=KC.M_BPREF_RANX, family="binary", ranx="bpref",
         reads=("rel", "judged", "judged"), reference="bpref_ranx_query",
         doc="ranx's bpref (its `bpref` with `preset=\"ranx\"`): bpref's terms with every "
             "judged item labelled below rel non-relevant (negative grades too); NaN when a "
             "relevant item is retrieved and no judged document is non-relevant (ranx's 0 / 0)",
         short_list="unretrieved relevant documents add 0 but count in R"),
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
_RANX_OTHER = ("dcg", "dcg_burges", "rbp")  # ranx metrics fastndcg does not read
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
        parts += [f"{key}={number(v)}" for key, v in zip(k.param_names, params)]
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
            + (f"({k.params[0].name}={number(k.defaults[0])})" if k.each else "")
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
        raise V.refuse(ValueError, name, rel, f"{V.spelled(name)} must be an integer from 0 to "
                       f"{MAX_REL} (a label is relevant when it is >= {V.spelled(name)}), got "
                       f"{V.shown(rel)}; e.g. {V.spelled(name, 2)}")
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
        ["dcg", "gains"] if kind.name == "ndcg" else []) + list(kind.param_names)
    example = {"ndcg": f"{name}(dcg='exp-log2')@10", "judged": f"{name}@10"}.get(
        kind.name, (f"{name}(rel=2)" if kind.binary else name)
        + ("@10" if kind.cutoff != "none" else ""))
    if kind.params:
        example = f"{name}({kind.params[0].name}={number(kind.defaults[0])})"
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
        elif key in kind.param_names:
            got[key] = check_param(kind, key, kind.param(key).type(_number(r, key, fix)),
                                   r.spec)
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
    first = kind.params[0]
    example = f"{name}.{first.trec_example or number(kind.defaults[0])}"
    text = spec[at:]
    if not text:
        raise _error(spec, f"no value after {name}.", f"write {example}")
    if "=" not in text and kind.param_names == ("p",):  # trec_eval reads rbp_resid's p as a pair
        raise _error(spec, f"trec_eval reads {name}'s parameters as name=value pairs (it "
                           f"stops on 'malformed pair parameters')", f"write {example}")
    if "=" in text:  # trec_eval's name=value pairs (rbp_resid.p=0.8)
        got = dict(kind.defaults and zip(kind.param_names, kind.defaults))
        for piece in text.split(","):
            key, _, value = piece.partition("=")
            if key not in kind.param_names or not _NUMBER.fullmatch(value) \
                    or not math.isfinite(float(value)):
                raise _error(spec, f"{_shown(piece)} is not "
                                   f"{' or '.join(kind.param_names)}=NUMBER",
                             f"write {name}.{first.name}={number(kind.defaults[0])}")
            got[key] = check_param(kind, key, float(value), spec)
        return [got[k] for k in kind.param_names]
    values = []
    for i, piece in enumerate(text.split(",")):
        if not _NUMBER.fullmatch(piece) or not math.isfinite(float(piece)):
            raise _error(spec, f"{_shown(piece)} is not a number", f"write {example}")
        key = kind.params[0 if kind.each else min(i, len(kind.params) - 1)].name
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
                               + (f" or {kind.params[0].name}=NUMBER" if kind.params else ""),
                         fix)
        if key in kind.param_names:
            if key in got:
                raise _error(spec, f"{key} is given twice", f"give it once, e.g. {example}")
            got[key] = check_param(kind, key, _trec_value(spec, piece, value, fix), spec)
            continue
        if not _VALID_INT.fullmatch(key):
            raise _error(spec, f"{_shown(key)} is not a grade (a whole number)"
                               + (f" nor {kind.params[0].name}" if kind.params else ""),
                         fix)
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
    params = tuple(got.get(p, d) for p, d in zip(kind.param_names, kind.defaults))
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


def check_param(kind: Kind, key: str, value: float, spec: str) -> float:
    """The one check of a measure's number parameter ``key`` (of any name form:
    ``RBP(p=0.8)``, ``rbp.p=0.8``, ``IPrec@0.5``, ``iprec_at_recall.0.5``): a value
    in its range (:attr:`Param.range`), else ``ValueError`` naming the measure
    ``spec``, the value and what to write."""
    param = next((p for p in kind.params if p.name == key), None)
    if param is None or param.range is None:
        return value
    lo, hi, lo_in, hi_in = param.range
    inside = (lo <= value if lo_in else lo < value) and (value <= hi if hi_in else value < hi)
    if not inside:
        owner = kind.trec or kind.trec_cut or kind.irm or kind.name
        raise _error(spec, f"{key} {number(value)} is out of range: {owner}'s {key} is "
                           f"{param.doc}", f"give {key} in that range, e.g. {param.example}")
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
        wanted = sum(p.in_trec_name for p in kind.params)  # utility's n comes from -N
        if len(values) != wanted:
            raise _error(spec, f"{name} takes {wanted} value{'s' if wanted > 1 else ''} "
                               f"({', '.join(kind.param_names[:wanted])}), got {len(values)}",
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
            first = kind.params[0]
            if first.name in got:
                raise r.error(f"{first.name} is given twice", f"give it once: {name}@0.1")
            got[first.name] = check_param(
                kind, first.name, first.type(_number(r, first.name, f"e.g. {name}@0.1")), r.spec)
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
        first = kind.params[0].name
        if first not in got:
            raise r.error(f"{name} needs {first}", f"write e.g. {name}@0.1 or "
                                                   f"{name}({first}=0.1)")
        params = (got[first],)
    elif kind.params:
        values = tuple(got.get(p, d) for p, d in zip(kind.param_names, kind.defaults))
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
    measure, its code, cutoff (-1: none), the three bits it reads (its row's
    :attr:`Kind.reads`: the bit at its threshold, at threshold 0 or the judged bit;
    bit 0 for a measure that reads none), its parameters and its kernel family."""
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


def check_ties(others: list, ties: str, rel: int = 1, negative_labels: str = "error") -> None:
    """Refuse ties="average" for a measure whose expectation over the orderings of
    tied items fastndcg does not compute exactly (ndcg_rel's with negative labels
    kept as they are), and "optimistic"/"pessimistic" for one whose bounds no
    order of the tied items gives."""
    for m in others:
        kind = REGISTRY[m.kind]
        if ties == "average" and negative_labels == "keep" and not kind.average_negative:
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
    kinds = [REGISTRY[m.kind] for m in others]
    judged = any("judged" in kind.reads for kind in kinds)
    for m, kind in zip(others, kinds):
        r = m.rel if m.rel is not None else rel
        wanted = ((r,) if "rel" in kind.reads else ()) + ((0,) if "zero" in kind.reads else ())
        for t in wanted:
            if t not in rels:
                rels.append(t)
    rels.sort()
    judged_bit = len(rels) if judged else -1
    if len(rels) + judged > 8:
        raise ValueError(f"at most 8 relevance thresholds in one evaluation, got "
                         f"{len(rels)} ({rels}); evaluate them in separate calls")
    at = {"zero": rels.index(0) if 0 in rels else -1, "judged": judged_bit}
    for m, kind in zip(others, kinds):
        r = m.rel if m.rel is not None else rel
        codes.append(_TREC9.get(kind.code, kind.code) if trec9 else kind.code)
        cutoffs.append(-1 if m.cutoff is None else m.cutoff)
        read = [rels.index(r) if bit == "rel" else at[bit] for bit in kind.reads] or [0]
        bits.append(tuple(read + read[:1] * (3 - len(read))))
        params.append(tuple(m.values))
    families = tuple(FAMILIES[kind.family] for kind in kinds)
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
