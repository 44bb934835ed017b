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

=============== ================= ======================== ====================
column          trec_eval         ir_measures              meaning
=============== ================= ======================== ====================
``ndcg@10``     ``ndcg_cut.10``   ``nDCG@10``              normalised DCG
``ap``          ``map``           ``AP``                   average precision
``ap@100``      ``map_cut.100``   ``AP@100``               AP of the top 100
``rr``          ``recip_rank``    ``RR``                   reciprocal rank
``rr@10``       --                ``RR@10``                RR within the top 10
``p@5``         ``P.5``           ``P@5``                  precision at 5
``r@1000``      ``recall.1000``   ``R@1000``               recall at 1000
``success@10``  ``success.10``    ``Success@10``           a relevant item in the top 10
``rprec``       ``Rprec``         ``Rprec``                precision at rank R
``num_ret``     ``num_ret``       ``NumRet``               items retrieved
``num_rel``     ``num_rel``       ``NumRel``               R
``num_rel_ret`` ``num_rel_ret``   ``NumRelRet``            relevant items retrieved
``judged@10``   --                ``Judged@10``            judged share of the top 10
=============== ================= ======================== ====================

A threshold other than 1 is part of the column name: ``ap(rel=2)``,
``p@5(rel=2)``; fastndcg's column names are accepted as measure names too.

>>> parse("map P.5,10 nDCG@10").columns
['ndcg@10', 'ap', 'p@5', 'p@10']
>>> parse(["AP(rel=2)@100", "RR(rel=2)"]).columns
['ap@100(rel=2)', 'rr(rel=2)']
>>> parse("recip_rank", rel=2).columns
['rr(rel=2)']
"""

from __future__ import annotations

import ast
import numbers
import re
from dataclasses import dataclass, field

from ._kernels import codes as KC

__all__ = ["Kind", "Measure", "Parsed", "REGISTRY", "parse", "check_rel", "column_name",
           "TREC_CUTOFFS"]

# trec_eval's default cutoffs (m_P.c, m_recall.c, m_map_cut.c, m_ndcg_cut.c; m_success.c)
TREC_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
TREC_SUCCESS_CUTOFFS = (1, 5, 10)
MAX_GAIN_TABLE = 1 << 16  # labels a gain table in a measure name may cover


@dataclass(frozen=True)
class Kind:
    """One row of the registry."""
    name: str                 # column stem
    code: int                 # accumulator code (-1: NDCG, the DCG/IDCG walk)
    trec: str | None          # trec_eval's name without cutoffs (None: no such measure)
    trec_cut: str | None      # trec_eval's name with cutoffs
    irm: str                  # ir_measures' name
    cutoff: str               # "none", "optional" or "required"
    binary: bool              # reads relevance at a threshold
    judgments: bool           # needs qrels (reads which documents are judged)
    trec_cutoffs: tuple = ()  # trec_eval's default cutoffs for ``trec_cut`` without any
    summary: str = "mean"     # trec_eval's line over all queries: mean, or sum (counts)
    reference: str = ""       # the function in fastndcg.reference
    doc: str = ""


REGISTRY: dict[str, Kind] = {k.name: k for k in [
    Kind("ndcg", -1, "ndcg", "ndcg_cut", "nDCG", "optional", False, False, TREC_CUTOFFS,
         reference="ndcg_query", doc="DCG@k / IDCG@k (gain, discount and ties as set)"),
    Kind("ap", KC.M_AP, "map", "map_cut", "AP", "optional", True, False, TREC_CUTOFFS,
         reference="ap_query",
         doc="sum of the precisions at the relevant ranks <= k, divided by R"),
    Kind("rr", KC.M_RR, "recip_rank", None, "RR", "optional", True, False,
         reference="rr_query", doc="1 / rank of the first relevant item (0 past k)"),
    Kind("p", KC.M_P, None, "P", "P", "required", True, False, TREC_CUTOFFS,
         reference="precision_query", doc="relevant items in the top k, divided by k"),
    Kind("r", KC.M_R, None, "recall", "R", "required", True, False, TREC_CUTOFFS,
         reference="recall_query", doc="relevant items in the top k, divided by R"),
    Kind("success", KC.M_SUCCESS, None, "success", "Success", "required", True, False,
         TREC_SUCCESS_CUTOFFS, reference="success_query",
         doc="1 when a relevant item is in the top k"),
    Kind("rprec", KC.M_RPREC, "Rprec", None, "Rprec", "none", True, False,
         reference="rprec_query", doc="relevant items in the top R, divided by R"),
    Kind("num_ret", KC.M_NUM_RET, "num_ret", None, "NumRet", "none", False, False,
         summary="sum", reference="num_ret_query", doc="items retrieved"),
    Kind("num_rel", KC.M_NUM_REL, "num_rel", None, "NumRel", "none", True, False,
         summary="sum", reference="num_rel_query", doc="R: relevant judged documents"),
    Kind("num_rel_ret", KC.M_NUM_REL_RET, "num_rel_ret", None, "NumRelRet", "none", True,
         False, summary="sum", reference="num_rel_ret_query", doc="relevant items retrieved"),
    Kind("judged", KC.M_JUDGED, None, None, "Judged", "required", False, True,
         reference="judged_query",
         doc="judged items in the top k, divided by min(k, items retrieved)"),
]}

_BY_TREC = {}
for _k in REGISTRY.values():
    for _n in (_k.trec, _k.trec_cut):
        if _n:
            _BY_TREC[_n] = _k
_BY_IRM = {k.irm: k for k in REGISTRY.values()}
_IRM_DCG = {"log2": "linear", "exp-log2": "exp2"}


@dataclass(frozen=True)
class Measure:
    """One requested value per query: a kind, a cutoff (None: the whole list) and a
    relevance threshold (None: the evaluation's)."""
    kind: str
    cutoff: int | None = None
    rel: int | None = None

    def column(self, rel: int = 1) -> str:
        return column_name(self.kind, self.cutoff, self.rel if self.rel is not None else rel)


def column_name(kind: str, cutoff: int | None, rel: int = 1) -> str:
    """``ap@100``, ``ap(rel=2)``: the column of a measure.

    >>> column_name("p", 5, 2)
    'p@5(rel=2)'
    """
    name = kind if cutoff is None else f"{kind}@{cutoff}"
    if REGISTRY[kind].binary and rel != 1:
        name += f"(rel={rel})"
    return name


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
    if isinstance(rel, bool) or not isinstance(rel, numbers.Integral) or rel < 0:
        raise ValueError(f"{name} must be a non-negative integer (a label is relevant when it "
                         f"is >= {name}), got {rel!r}; e.g. {name}=2")
    return int(rel)


def _error(spec: str, why: str) -> ValueError:
    return ValueError(
        f"cannot read measure {spec!r}: {why}. Name measures as trec_eval does ('map', "
        f"'P.5,10', 'ndcg_cut.10', 'recip_rank'), as ir_measures does ('AP', 'P@5', "
        f"'nDCG@10', 'RR(rel=2)@10') or as fastndcg's columns ('ap', 'p@5', 'ndcg@10')")


def _cutoff(text: str, spec: str) -> int:
    if not re.fullmatch(r"\d+", text.strip()):
        raise _error(spec, f"cutoff {text.strip()!r} is not a whole number")
    value = int(text)
    if value < 1:
        raise _error(spec, f"cutoff {value} must be >= 1")
    return value


def _split_args(text: str, spec: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch in "{[(":
            depth += 1
        elif ch in "}])":
            depth -= 1
            if depth < 0:
                raise _error(spec, "unbalanced brackets")
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    if depth:
        raise _error(spec, "unbalanced brackets")
    if cur.strip() or out:
        out.append(cur)
    return out


def _gains_table(value: str, spec: str) -> list:
    try:
        gains = ast.literal_eval(value)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        raise _error(spec, f"gains={value} is not a dict of label: gain") from None
    if not isinstance(gains, dict) or not gains or not all(
            isinstance(k, int) and not isinstance(k, bool) and k >= 0 for k in gains):
        raise _error(spec, "gains must map labels 0, 1, 2, ... to their gains")
    if max(gains) >= MAX_GAIN_TABLE:
        raise _error(spec, f"gains names label {max(gains)}; labels up to "
                           f"{MAX_GAIN_TABLE - 1} are supported")
    if not all(isinstance(g, (int, float)) and not isinstance(g, bool) for g in gains.values()):
        raise _error(spec, "gains must be numbers")
    table = [0.0] * (max(gains) + 1)
    for label, g in gains.items():
        table[label] = float(g)
    return table


def _trec(spec: str):
    """(kind, cutoffs) of a trec_eval name, or None when it is not one."""
    if spec in _BY_TREC:
        name, sep, params = spec, None, None
    else:
        m = re.fullmatch(r"([A-Za-z_]+?)\.(.*)", spec, re.S) or re.fullmatch(
            r"([A-Za-z_]+)_([0-9][0-9,]*)", spec)
        if not m:
            return None
        name, sep, params = m.group(1), spec[len(m.group(1))], m.group(2)
    kind = _BY_TREC.get(name)
    if kind is None:
        return None
    cut_name = kind.trec_cut == name
    if sep is None:
        if cut_name:
            return kind, list(kind.trec_cutoffs)
        return kind, [None]
    if not cut_name:
        raise _error(spec, f"trec_eval's {name} takes no parameters")
    parts = [p for p in re.split(r"[,\s]+", params) if p]
    if not parts:
        raise _error(spec, f"no cutoff after {name}{sep}")
    if sep == "_" and len(parts) > 1:
        raise _error(spec, f"{name}_N names one cutoff; write {name}.{','.join(parts)}")
    return kind, [_cutoff(p, spec) for p in parts]


def _irm(spec: str, rel_default):
    """(kind, cutoff, rel, gain) of an ir_measures name (or fastndcg's column name)."""
    m = re.fullmatch(r"([A-Za-z_]+)(?:\((.*)\))?(?:@([^()]*))?(?:\((.*)\))?", spec, re.S)
    if not m:
        raise _error(spec, "not a measure fastndcg knows")
    name, args, at, args2 = m.group(1), m.group(2), m.group(3), m.group(4)
    own = REGISTRY.get(name)
    kind = _BY_IRM.get(name) or own
    if kind is None:
        raise _error(spec, f"{name!r} is not a measure fastndcg knows (known: "
                           f"{', '.join(sorted(_BY_IRM))})")
    if args is not None and args2 is not None:
        raise _error(spec, "parameters are given twice")
    if args2 is not None and own is None:
        raise _error(spec, f"write ir_measures' parameters before the cutoff: {name}(...)@k")
    args = args if args is not None else args2
    cutoff = None if at is None else _cutoff(at, spec)
    rel = None
    gain: object = "linear" if kind.name == "ndcg" else None
    seen = set()
    for arg in (_split_args(args, spec) if args is not None else []):
        key, eq, value = arg.partition("=")
        key, value = key.strip(), value.strip()
        if not eq or not key:
            raise _error(spec, f"parameter {arg.strip()!r} is not name=value")
        if key in seen:
            raise _error(spec, f"parameter {key!r} is given twice")
        seen.add(key)
        if key == "cutoff":
            if cutoff is not None:
                raise _error(spec, "the cutoff is given twice")
            cutoff = _cutoff(value, spec)
        elif key == "rel" and kind.binary:
            if not re.fullmatch(r"\d+", value):
                raise _error(spec, f"rel={value} is not a non-negative integer")
            rel = int(value)
        elif key == "dcg" and kind.name == "ndcg":
            dcg = value.strip("'\"")
            if dcg not in _IRM_DCG or value[:1] not in "'\"" or value[:1] != value[-1:]:
                raise _error(spec, f"dcg={value} is not one of 'log2', 'exp-log2'")
            gain = _IRM_DCG[dcg]
        elif key == "gains" and kind.name == "ndcg":
            gain = _gains_table(value, spec)
        else:
            allowed = ["cutoff"] + (["rel"] if kind.binary else []) + (
                ["dcg", "gains"] if kind.name == "ndcg" else [])
            raise _error(spec, f"parameter {key!r} is not supported for {name} (only "
                               f"{', '.join(allowed)})")
    if kind.cutoff == "none" and cutoff is not None:
        raise _error(spec, f"{name} takes no cutoff")
    if kind.cutoff == "required" and cutoff is None:
        raise _error(spec, f"{name} needs a cutoff, e.g. {name}@10")
    return kind, cutoff, rel, gain


def _items(measures) -> list[str]:
    def split(text: str) -> list[str]:  # on spaces outside brackets
        return re.findall(r"(?:[^\s(]|\([^)]*\))+", text)

    if isinstance(measures, str):
        return split(measures)
    if isinstance(measures, (list, tuple)) and all(isinstance(m, str) for m in measures):
        return [piece for m in measures for piece in split(m)]
    raise TypeError(f"measure takes a measure name or a list of them (e.g. 'map P.5,10' or "
                    f"['nDCG@10', 'AP', 'P@5']), got {measures!r}")


def parse(measures, rel: int | None = None) -> Parsed:
    """Read measure names: a string (several separated by spaces) or a list.
    ``rel`` is the threshold of the binary measures that do not name one
    (default 1). All NDCG names must agree on the gain; a measure named twice is
    kept once.

    >>> p = parse(["nDCG@10", "RR(rel=2)@10", "P@5"])
    >>> p.ndcg, p.gain, p.columns
    ([10], 'linear', ['ndcg@10', 'rr@10(rel=2)', 'p@5'])
    """
    default_rel = 1 if rel is None else check_rel(rel)
    items = _items(measures)
    if not items:
        raise ValueError("measure is empty; name at least one, e.g. 'ndcg_cut.10' or 'AP'")
    out = Parsed(rel=default_rel)
    gains: list = []
    seen: set = set()
    for item in items:
        trec = _trec(item)
        if trec is not None:
            kind, cuts = trec
            found = [(kind, c, None, "linear" if kind.name == "ndcg" else None) for c in cuts]
        else:
            found = [_irm(item, default_rel)]
        for kind, cutoff, r, gain in found:
            if kind.name == "ndcg":
                gains.append((item, gain))
                if cutoff not in out.ndcg:
                    out.ndcg.append(cutoff)
                continue
            m = Measure(kind.name, cutoff, r)
            key = m.column(default_rel)
            if key not in seen:
                seen.add(key)
                out.others.append(m)
    if gains:
        first = gains[0]
        for item, g in gains[1:]:
            if g != first[1]:
                raise ValueError(f"measures {first[0]!r} and {item!r} use different gains; "
                                 f"evaluate them in separate calls")
        out.gain = first[1]
    return out


def needs_whole_list(m: Measure) -> bool:
    """Whether a measure reads past every cutoff (ranks the whole list)."""
    kind = REGISTRY[m.kind]
    if kind.name in ("num_ret", "num_rel"):
        return False
    return m.cutoff is None


@dataclass(frozen=True)
class Layout:
    """How a list of binary measures reaches the kernels: the flag bits (one per
    relevance threshold, then one for "judged" if a measure reads it) and, per
    measure, its code, cutoff (-1: none) and bit."""
    rels: tuple            # the threshold of flag bit b, for b < len(rels)
    judged_bit: int        # the bit saying "judged" (-1: none)
    codes: tuple
    cutoffs: tuple
    bits: tuple
    whole: bool            # some measure ranks the whole list

    @property
    def n_bits(self) -> int:
        return len(self.rels) + (self.judged_bit >= 0)


def layout(others: list, rel: int) -> Layout:
    """The :class:`Layout` of ``others`` (Measure) with default threshold ``rel``."""
    rels: list = []
    codes, cutoffs, bits = [], [], []
    judged = any(REGISTRY[m.kind].judgments for m in others)
    for m in others:
        kind = REGISTRY[m.kind]
        if kind.binary:
            r = m.rel if m.rel is not None else rel
            if r not in rels:
                rels.append(r)
    rels.sort()
    judged_bit = len(rels) if judged else -1
    if len(rels) + judged > 8:
        raise ValueError(f"at most 8 relevance thresholds in one evaluation, got "
                         f"{len(rels)} ({rels}); evaluate them in separate calls")
    for m in others:
        kind = REGISTRY[m.kind]
        r = m.rel if m.rel is not None else rel
        codes.append(kind.code)
        cutoffs.append(-1 if m.cutoff is None else m.cutoff)
        bits.append(judged_bit if kind.judgments else (rels.index(r) if kind.binary else 0))
    return Layout(tuple(rels), judged_bit, tuple(codes), tuple(cutoffs), tuple(bits),
                  any(needs_whole_list(m) for m in others))


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
    of its judged documents (CSR ``offsets``)."""
    import numpy as np

    n_q = len(offsets) - 1
    out = np.zeros((n_q, max(lay.n_bits, 1)), np.int64)
    for b, r in enumerate(lay.rels):
        c = np.concatenate(([0], np.cumsum(labels >= r, dtype=np.int64)))
        out[:, b] = c[offsets[1:]] - c[offsets[:-1]]
    return out
