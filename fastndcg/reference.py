"""The readable oracle: section 1 of DESIGN.md in plain Python.

Every number fastndcg's compiled kernels produce must equal what this module
computes (to floating-point rounding). It is deliberately slow and simple:
full sorts, Python lists and the ``math`` module, no NumPy in the arithmetic,
so that it can be read as the specification. Users may call it too, for
example to check a single query by hand.

Example
-------
>>> from fastndcg import reference
>>> round(reference.ndcg_query([3.0, 2.0, 1.0], [0, 1, 2], k=None, gain="linear"), 6)
0.619906
>>> [round(v, 6) for v in reference.ndcg([0.5, 0.5, 0.1, 0.9], [1, 0, 0, 2], [0, 3, 4], k=2)]
[0.815465, 1.0]

Definitions (a query has items with scores ``s`` and labels ``r``)
--------------------------------------------------------------------
gain        ``"exp2"`` -> 2**r - 1, ``"linear"`` -> r, or a sequence ``table``
            -> table[r] for integer labels 0 <= r < len(table).
discount    at 1-based rank p: 1 / log_b(p + 1), with b = ``log_base``.
DCG@k       items ranked by score, highest first. With ``ties="average"`` a
            group of m tied items at ranks p..p+m-1 contributes its mean gain
            times the sum of the discounts of its ranks that are <= k. With the
            other tie modes ties are broken into a strict order first:
            ``"stable"`` (input order), ``"optimistic"`` (highest gain first),
            ``"pessimistic"`` (lowest gain first), ``"trec"`` (document id
            descending, as strings, as trec_eval does).
IDCG@k      DCG@k of the labels sorted by gain, highest first (ties in gain do
            not change the sum). In qrels mode the ideal labels are all judged
            documents of the query (``ideal_labels``), not just the ranked ones.
NDCG@k      DCG@k / IDCG@k; when IDCG@k == 0, ``zero_idcg`` decides: "zero",
            "one", "nan" or "error".
NaN scores  ``nan_scores="error"`` raises; ``"last"`` ranks NaN below every
            number (below -inf too), NaNs tied among themselves.
Negative labels ``"error"`` raises, ``"zero"`` uses 0 instead, ``"keep"`` uses them.
"""

from __future__ import annotations

import math
from typing import Iterable, Sequence

TIES = ("average", "stable", "optimistic", "pessimistic", "trec")
ZERO_IDCG = ("zero", "one", "nan", "error")


def gain_of(label: float, gain="exp2") -> float:
    """Gain of one label: ``"exp2"`` (2**r - 1), ``"linear"`` (r) or a table."""
    if gain == "exp2":
        return 2.0 ** label - 1.0
    if gain == "linear":
        return float(label)
    index = int(label)
    if index != label or not 0 <= index < len(gain):
        raise ValueError(f"label {label!r} is not an index of the gain table of length {len(gain)}")
    return float(gain[index])


def discount(rank: int, log_base: float = 2.0) -> float:
    """Discount at 1-based ``rank``: 1 / log_base(rank + 1)."""
    return 1.0 / (math.log(rank + 1) / math.log(log_base))


def _clean_label(label, negative_labels: str) -> float:
    label = float(label)
    if math.isnan(label):
        raise ValueError("labels must not be NaN")
    if label < 0:
        if negative_labels == "error":
            raise ValueError(f"negative label {label!r}")
        if negative_labels == "zero":
            return 0.0
    return label


def _clean_score(score, nan_scores: str) -> float:
    score = float(score)
    if math.isnan(score) and nan_scores == "error":
        raise ValueError("NaN score")
    return score


def _score_rank_key(score: float):
    """Sort key putting higher scores first and NaN after every number."""
    return (1, 0.0) if math.isnan(score) else (0, -score)


def _cut(k, n: int) -> int:
    return n if k is None else min(k, n)


def _strict_order(scores, gains, ties, doc_ids) -> list[int]:
    """Positions of the items in rank order, ties broken by the ``ties`` rule."""
    positions = list(range(len(scores)))
    if ties == "stable":
        return sorted(positions, key=lambda i: (_score_rank_key(scores[i]), i))
    if ties == "optimistic":
        return sorted(positions, key=lambda i: (_score_rank_key(scores[i]), -gains[i], i))
    if ties == "pessimistic":
        return sorted(positions, key=lambda i: (_score_rank_key(scores[i]), gains[i], i))
    if ties == "trec":
        if doc_ids is None:
            raise ValueError('ties="trec" needs doc_ids')
        by_doc_desc = sorted(positions, key=lambda i: str(doc_ids[i]), reverse=True)
        return sorted(by_doc_desc, key=lambda i: _score_rank_key(scores[i]))
    raise ValueError(f"unknown ties mode {ties!r}")


def dcg_query(scores: Sequence[float], labels: Sequence[float], k: int | None = 10, *,
              gain="exp2", ties: str = "average", log_base: float = 2.0,
              nan_scores: str = "error", negative_labels: str = "error",
              doc_ids: Sequence | None = None) -> float:
    """DCG@k of one query (see the module docstring for the definitions)."""
    if len(scores) != len(labels):
        raise ValueError("scores and labels differ in length")
    scores = [_clean_score(s, nan_scores) for s in scores]
    gains = [gain_of(_clean_label(r, negative_labels), gain) for r in labels]
    cut = _cut(k, len(scores))
    total = 0.0
    if ties != "average":
        order = _strict_order(scores, gains, ties, doc_ids)
        for rank, i in enumerate(order[:cut], start=1):
            total += gains[i] * discount(rank, log_base)
        return total
    # Tie-aware (McSherry & Najork): walk the groups of equal scores in rank order.
    order = sorted(range(len(scores)), key=lambda i: _score_rank_key(scores[i]))
    first = 0
    while first < len(order) and first < cut:
        key = _score_rank_key(scores[order[first]])
        last = first
        while last + 1 < len(order) and _score_rank_key(scores[order[last + 1]]) == key:
            last += 1
        group = order[first:last + 1]
        mean_gain = sum(gains[i] for i in group) / len(group)
        ranks_inside = range(first + 1, min(last + 1, cut) + 1)
        total += mean_gain * sum(discount(p, log_base) for p in ranks_inside)
        first = last + 1
    return total


def idcg_query(labels: Sequence[float], k: int | None = 10, *, gain="exp2",
               log_base: float = 2.0, negative_labels: str = "error") -> float:
    """IDCG@k: DCG@k of the labels in ideal order (gains descending)."""
    gains = sorted((gain_of(_clean_label(r, negative_labels), gain) for r in labels), reverse=True)
    cut = _cut(k, len(gains))
    return sum(g * discount(rank, log_base) for rank, g in enumerate(gains[:cut], start=1))


def _normalise(dcg: float, idcg: float, zero_idcg: str) -> float:
    if idcg != 0:
        return dcg / idcg
    if zero_idcg == "zero":
        return 0.0
    if zero_idcg == "one":
        return 1.0
    if zero_idcg == "nan":
        return math.nan
    raise ValueError("IDCG is 0 for this query")


def ndcg_query(scores: Sequence[float], labels: Sequence[float], k: int | None = 10, *,
               gain="exp2", ties: str = "average", log_base: float = 2.0,
               zero_idcg: str = "zero", nan_scores: str = "error",
               negative_labels: str = "error", doc_ids: Sequence | None = None,
               ideal_labels: Sequence[float] | None = None) -> float:
    """NDCG@k of one query. ``ideal_labels`` (qrels mode) replaces ``labels`` for IDCG."""
    dcg = dcg_query(scores, labels, k, gain=gain, ties=ties, log_base=log_base,
                    nan_scores=nan_scores, negative_labels=negative_labels, doc_ids=doc_ids)
    ideal = labels if ideal_labels is None else ideal_labels
    idcg = idcg_query(ideal, k, gain=gain, log_base=log_base, negative_labels=negative_labels)
    return _normalise(dcg, idcg, zero_idcg)


def split_queries(n_rows: int, offsets: Sequence[int] | None = None,
                  query_ids: Iterable | None = None) -> list[list[int]]:
    """Row positions of each query: from CSR ``offsets``, or grouping ``query_ids``
    (rows of one id form one query even when not adjacent; queries in order of
    first appearance). With neither, all rows are one query."""
    if offsets is None and query_ids is None:
        return [list(range(n_rows))]
    if offsets is not None:
        offsets = [int(o) for o in offsets]
        return [list(range(offsets[q], offsets[q + 1])) for q in range(len(offsets) - 1)]
    groups: dict = {}
    for row, qid in enumerate(query_ids):
        groups.setdefault(qid, []).append(row)
    return list(groups.values())


def _batch(one_query, scores, labels, offsets, query_ids, k):
    queries = split_queries(len(labels), offsets, query_ids)
    cutoffs = [k] if k is None or isinstance(k, int) else list(k)
    out = []
    for rows in queries:
        s = [scores[i] for i in rows] if scores is not None else None
        r = [labels[i] for i in rows]
        values = [one_query(s, r, cut) for cut in cutoffs]
        out.append(values[0] if k is None or isinstance(k, int) else values)
    return out


def ndcg(scores, labels, offsets=None, *, query_ids=None, k=10, gain="exp2",
         ties: str = "average", log_base: float = 2.0, zero_idcg: str = "zero",
         nan_scores: str = "error", negative_labels: str = "error") -> list:
    """NDCG@k of every query of a batch, as a list (a list of lists when ``k`` is a
    sequence). Arguments as :func:`fastndcg.ndcg`."""
    return _batch(lambda s, r, cut: ndcg_query(
        s, r, cut, gain=gain, ties=ties, log_base=log_base, zero_idcg=zero_idcg,
        nan_scores=nan_scores, negative_labels=negative_labels),
        scores, labels, offsets, query_ids, k)


def dcg(scores, labels, offsets=None, *, query_ids=None, k=10, gain="exp2",
        ties: str = "average", log_base: float = 2.0, nan_scores: str = "error",
        negative_labels: str = "error") -> list:
    """DCG@k of every query of a batch. Arguments as :func:`fastndcg.dcg`."""
    return _batch(lambda s, r, cut: dcg_query(
        s, r, cut, gain=gain, ties=ties, log_base=log_base, nan_scores=nan_scores,
        negative_labels=negative_labels),
        scores, labels, offsets, query_ids, k)


def idcg(labels, offsets=None, *, query_ids=None, k=10, gain="exp2", log_base: float = 2.0,
         negative_labels: str = "error") -> list:
    """IDCG@k of every query of a batch. Arguments as :func:`fastndcg.idcg`."""
    return _batch(lambda s, r, cut: idcg_query(
        r, cut, gain=gain, log_base=log_base, negative_labels=negative_labels),
        None, labels, offsets, query_ids, k)
