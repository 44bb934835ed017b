"""The readable oracle: fastndcg's definitions in plain Python.

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

Definitions
-----------
A query has items with scores ``s`` and labels ``r``.

* gain: ``"exp2"`` -> 2**r - 1, ``"linear"`` -> r, or a sequence ``table``
  -> table[r] for integer labels 0 <= r < len(table).
* discount at 1-based rank p: 1 / log_b(p + 1), with b = ``log_base``.
* DCG@k: items ranked by score, highest first. With ``ties="average"`` a
  group of m tied items at ranks p..p+m-1 contributes its mean gain
  times the sum of the discounts of its ranks that are <= k. With the
  other tie modes ties are broken into a strict order first:
  ``"stable"`` (input order), ``"optimistic"`` (highest gain first),
  ``"pessimistic"`` (lowest gain first), ``"trec"`` (document id
  descending, as strings, as trec_eval does).
* IDCG@k: DCG@k of the labels sorted by gain, highest first (ties in gain do
  not change the sum). In qrels mode the ideal labels are all judged
  documents of the query (``ideal_labels``), not just the ranked ones.
* NDCG@k: DCG@k / IDCG@k; when IDCG@k == 0, ``zero_idcg`` decides: "zero",
  "one", "nan" or "error".
* NaN scores: ``nan_scores="error"`` raises; ``"last"`` ranks NaN below every
  number (below -inf too), NaNs tied among themselves.
* Negative labels: ``"error"`` raises, ``"zero"`` uses 0 instead, ``"keep"`` uses them.
"""

from __future__ import annotations

import inspect
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


# --------------------------------------------------------------------------- resampling
#
# The resampling of fastndcg.compare, specified in plain Python (slow: for tests
# and for reading). Random numbers: the i-th 64-bit number of a stream with key
# ``key`` is ``mix(key + i * GOLDEN)`` (SplitMix64's output function on a Weyl
# sequence); every (seed, purpose, group, resample) has its own key, so resamples
# do not depend on each other or on the order they are computed in.

_MASK64 = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15
_STREAMS = {"block": 0xB10C, "row": 0x5B0075, "flip": 0xF119, "bucket_boot": 0xB0C4E7,
            "bucket_flip": 0xF11B0C}
BLOCK_SHIFT = 11  # bootstrap blocks of 2,048 rows


def _mix(z: int) -> int:
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return z ^ (z >> 31)


def stream_key(seed: int, purpose: str, group: int, resample: int) -> int:
    """The key of the stream of one resample of one group."""
    k = _mix(int(seed) ^ _STREAMS[purpose])
    k = _mix((k + group * _GOLDEN) & _MASK64)
    return _mix((k + resample * _GOLDEN) & _MASK64)


def random_number(key: int, i: int) -> int:
    """The i-th 64-bit number of the stream ``key``."""
    return _mix((key + i * _GOLDEN) & _MASK64)


def bootstrap_means(values: Sequence[Sequence[float]], offsets: Sequence[int],
                    n_resamples: int, seed: int) -> list:
    """``out[g][r][s]``: the mean of system s's values over resample r of group g
    (rows offsets[g]:offsets[g+1]), drawn with replacement in two stages.

    Stage one puts each of the group's n draws in a block of 2**BLOCK_SHIFT rows:
    draw i uses 32 bits of a number of the "block" stream (the low half for even
    i, the high half for odd i; a last odd draw a whole number) as a uniform row
    index ``floor(bits * n / 2**bits_width)``, and counts the block of that row.
    With a single block every draw is in it. Stage two draws, block after block,
    that many rows within the block from the "row" stream, numbers used in order:
    in a full block each number gives four row offsets (its 16-bit quarters, low
    first; a block's last number may give fewer); in the group's last, partial
    block of w rows each number gives one, ``floor(number * w / 2**64)``.
    """
    out = []
    n_sys = len(values)
    for g in range(len(offsets) - 1):
        start, size = offsets[g], offsets[g + 1] - offsets[g]
        block = 1 << BLOCK_SHIFT
        n_blocks = (size + block - 1) // block
        per_group = []
        for r in range(n_resamples):
            counts = [0] * n_blocks
            if n_blocks == 1:
                counts[0] = size
            else:
                key = stream_key(seed, "block", g, r)
                for i in range(0, size - 1, 2):
                    u = random_number(key, i)
                    for half in (u & 0xFFFFFFFF, u >> 32):
                        counts[((half * size) >> 32) >> BLOCK_SHIFT] += 1
                if size % 2:
                    counts[((random_number(key, size) * size) >> 64) >> BLOCK_SHIFT] += 1
            key = stream_key(seed, "row", g, r)
            used = 0
            rows = []
            for b in range(n_blocks):
                base = start + b * block
                width = min(block, start + size - base)
                left = counts[b]
                while left > 0:
                    u = random_number(key, used)
                    used += 1
                    if width == block:
                        for quarter in range(min(4, left)):
                            rows.append(base + ((u >> (16 * quarter)) & (block - 1)))
                        left -= min(4, left)
                    else:
                        rows.append(base + ((u * width) >> 64))
                        left -= 1
                if width == block and counts[b] % 4 == 0:
                    used += 1  # a full block always takes one number for its remainder
            per_group.append([sum(values[s][j] for j in rows) / size for s in range(n_sys)])
        out.append(per_group)
    return out


def signflip_means(diffs: Sequence[Sequence[float]], offsets: Sequence[int],
                   n_resamples: int, seed: int) -> list:
    """``out[g][r][p]``: the mean of pair p's differences over group g with signs
    flipped at random: query i of the group (0-based) keeps its sign when bit
    i % 64 of number i // 64 of the "flip" stream of resample r is set, else it is
    negated. Every pair of a resample uses the same signs."""
    out = []
    for g in range(len(offsets) - 1):
        start, size = offsets[g], offsets[g + 1] - offsets[g]
        per_group = []
        for r in range(n_resamples):
            key = stream_key(seed, "flip", g, r)
            signs = [1.0 if (random_number(key, i // 64) >> (i % 64)) & 1 else -1.0
                     for i in range(size)]
            per_group.append([sum(sg * d[start + i] for i, sg in enumerate(signs)) / size
                              for d in diffs])
        out.append(per_group)
    return out


def bucket_of(id_hash: int, seed: int, n_buckets: int) -> int:
    """The bucket of a query whose id hashes to ``id_hash`` (``mix(id)`` for an
    integer id): ``mix(id_hash ^ mix(seed ^ 0xB0C4E75EED)) mod n_buckets``."""
    key = _mix((int(seed) ^ 0xB0C4E75EED) & _MASK64)
    return _mix(int(id_hash) ^ key) % n_buckets


def bucket_bootstrap(sums: Sequence, counts: Sequence, n_resamples: int, seed: int) -> list:
    """``out[g][r][q]``: resample r of group g draws B buckets with replacement (B =
    the number of buckets; draw t is bucket ``floor(u * B / 2**64)`` for number t of
    the "bucket_boot" stream) and divides the drawn buckets' sum of column q (added
    in draw order) by their queries; NaN when they hold none."""
    out = []
    for g, (gsums, gcounts) in enumerate(zip(sums, counts)):
        nb = len(gcounts)
        per_group = []
        for r in range(n_resamples):
            key = stream_key(seed, "bucket_boot", g, r)
            acc = [0.0] * len(gsums[0])
            n = 0.0
            for t in range(nb):
                j = (random_number(key, t) * nb) >> 64
                n += gcounts[j]
                for q in range(len(acc)):
                    acc[q] += gsums[j][q]
            per_group.append([a / n if n > 0 else math.nan for a in acc])
        out.append(per_group)
    return out


def bucket_signflip(dsums: Sequence, n_resamples: int, seed: int) -> list:
    """``out[g][r][p]``: the sum over buckets b (in order) of bucket b's difference
    sum of pair p, kept when bit b % 64 of number b // 64 of the "bucket_flip"
    stream of resample r is set, else negated."""
    out = []
    for g, gsums in enumerate(dsums):
        per_group = []
        for r in range(n_resamples):
            key = stream_key(seed, "bucket_flip", g, r)
            acc = [0.0] * len(gsums[0])
            for b, row in enumerate(gsums):
                keep = (random_number(key, b // 64) >> (b % 64)) & 1
                for p in range(len(acc)):
                    acc[p] = acc[p] + row[p] if keep else acc[p] - row[p]
            per_group.append(acc)
        out.append(per_group)
    return out


# --------------------------------------------------------------------------- binary measures
#
# The binary (relevant / not relevant) measures of trec_eval and ir_measures, for
# one query, specified in plain Python. A query's ranked list has n items; item i
# is *judged* when ``judged[i]`` (default: every item) and *relevant* when it is
# judged and ``labels[i] >= rel`` (raw labels: a negative label is simply not
# relevant, never an error; ``rel`` is an int >= 0, so with ``rel=0`` every judged
# item with a label >= 0 is relevant). R is ``n_rel`` when given (qrels mode: the
# relevant judged documents of the query, retrieved or not; it may not be smaller
# than the relevant items of the list), else the number of relevant items of the
# list. ``k=None`` means the whole list; cut = min(k, n). Scores rank descending;
# NaN raises (``nan_scores="error"``) or ranks below every number (``"last"``).
#
# Ties (``ties``):
#   "stable"       ties in input order.
#   "trec"         ties by ``doc_ids`` descending as strings (as trec_eval).
#   "optimistic"   within a group of equal scores relevant items first (for
#                  Judged@k: judged items first), then input order: the best
#                  value of the measure over the orderings of the ties.
#   "pessimistic"  relevant (judged) items last: the worst value.
#   "average"      the exact expected value of the measure when each group of
#                  tied scores is put in uniformly random order (McSherry &
#                  Najork, ECIR 2008). The closed forms are written per tie group
#                  with 0-based start rank a, size s, c relevant members and C
#                  relevant items in earlier groups; see each measure.

# measure name -> (the function that defines it, whether it reads a cutoff), as
# ``@_measure`` marks them, in the order defined
_DEFINES: dict = {}


def _measure(*names: str, cutoff: bool = True):
    """Mark the decorated function as the definition of the measures ``names``
    (what :func:`measure_query` and :func:`measure` dispatch by); ``cutoff=False``:
    they read the whole list, even where the function takes a ``k``."""
    def mark(function):
        for name in names:
            _DEFINES[name] = (function, cutoff and "k" in inspect.signature(function).parameters)
        return function
    return mark


class _Query:
    """One query's list, checked: scores, relevant / judged flags, R and the groups
    of tied scores in rank order (each a list of positions, input order inside)."""

    def __init__(self, scores, labels, k, rel, ties, n_rel, judged, doc_ids, nan_scores):
        if len(scores) != len(labels):
            raise ValueError("scores and labels differ in length")
        if judged is None:
            judged = [True] * len(labels)
        elif len(judged) != len(labels):
            raise ValueError("judged and labels differ in length")
        if doc_ids is not None and len(doc_ids) != len(labels):
            raise ValueError("doc_ids and labels differ in length")
        if isinstance(rel, bool) or not hasattr(rel, "__index__") or rel < 0:
            raise ValueError(f"rel must be an int >= 0, got {rel!r}")
        if k is not None and (isinstance(k, bool) or not hasattr(k, "__index__") or k < 1):
            raise ValueError(f"k must be an int >= 1 or None, got {k!r}")
        if ties not in TIES:
            raise ValueError(f"unknown ties mode {ties!r}")
        self.n = len(labels)
        self.scores = [_clean_score(s, nan_scores) for s in scores]
        labels = [_clean_label(r, "keep") for r in labels]
        self.judged = [bool(j) for j in judged]
        self.relevant = [self.judged[i] and labels[i] >= rel for i in range(self.n)]
        self.n_rel_ret = sum(self.relevant)
        if n_rel is None:
            self.R = self.n_rel_ret
        else:
            if int(n_rel) != n_rel or n_rel < self.n_rel_ret:
                raise ValueError(f"n_rel={n_rel!r} is smaller than the {self.n_rel_ret} "
                                 "relevant items of the list (or not an integer)")
            self.R = int(n_rel)
        self.k = k
        self.cut = _cut(k, self.n)
        self.ties = ties
        self.doc_ids = doc_ids
        order = sorted(range(self.n), key=lambda i: _score_rank_key(self.scores[i]))
        self.groups = []
        for i in order:
            if self.groups and _score_rank_key(self.scores[self.groups[-1][-1]]) == \
                    _score_rank_key(self.scores[i]):
                self.groups[-1].append(i)
            else:
                self.groups.append([i])

    def order(self, flags) -> list[int]:
        """Positions in rank order for a strict tie mode; ``flags`` are the items
        "optimistic" puts first (and "pessimistic" last) within a tie group."""
        return _strict_order(self.scores, [1.0 if f else 0.0 for f in flags],
                             self.ties, self.doc_ids)

    def tie_groups(self, flags):
        """(a, s, c, C) for each tie group in rank order: 0-based start rank a, size
        s, c flagged members, C flagged items in earlier groups."""
        a = C = 0
        for group in self.groups:
            c = sum(1 for i in group if flags[i])
            yield a, len(group), c, C
            a += len(group)
            C += c

    def hits(self, flags, depth: int) -> float:
        """Number of flagged items in the top ``depth`` ranks (expected number with
        ties="average": each rank inside a tie group carries c / s)."""
        if self.ties != "average":
            return float(sum(1 for i in self.order(flags)[:depth] if flags[i]))
        total = 0.0
        for a, s, c, _ in self.tie_groups(flags):
            ranks_inside = max(0, min(s, depth - a))
            total += ranks_inside * c / s
        return total


@_measure("p")
def precision_query(scores, labels, k=None, *, rel=1, ties="average", n_rel=None,
                    judged=None, doc_ids=None, nan_scores="error") -> float:
    """P@k (trec_eval ``P_k``): relevant items in the top k, divided by k.

    The denominator is k even when fewer than k items are retrieved (a list of 3
    items with 2 relevant has P@5 = 0.4); with ``k=None`` it is n (0 for an empty
    list). Unjudged items and items with a label below ``rel`` (negative labels
    included) count as not relevant. ``n_rel`` does not change P@k.
    With ties="average" each rank of a tie group counts c / s relevant.

    >>> from fastndcg import reference
    >>> reference.precision_query([0.9, 0.8, 0.7], [1, 0, 2], k=5)
    0.4
    """
    q = _Query(scores, labels, k, rel, ties, n_rel, judged, doc_ids, nan_scores)
    denominator = q.n if k is None else k
    return q.hits(q.relevant, q.cut) / denominator if denominator else 0.0


@_measure("hits")
def hits_query(scores, labels, k=None, *, rel=1, ties="average", n_rel=None, judged=None,
               doc_ids=None, nan_scores="error") -> float:
    """hits@k (ranx's ``hits``): the relevant items in the top k (``k=None``: in the
    whole list), as a float; fewer than k items count those there are. Unjudged
    items and items with a label below ``rel`` are not relevant. With
    ties="average" each rank of a tie group counts c / s relevant.

    >>> from fastndcg import reference
    >>> reference.hits_query([0.9, 0.8, 0.7], [1, 0, 2], k=5)
    2.0
    >>> reference.hits_query([0.9, 0.9, 0.7], [1, 0, 2], k=1)
    0.5
    """
    q = _Query(scores, labels, k, rel, ties, n_rel, judged, doc_ids, nan_scores)
    return float(q.hits(q.relevant, q.cut))


@_measure("r")
def recall_query(scores, labels, k=None, *, rel=1, ties="average", n_rel=None,
                 judged=None, doc_ids=None, nan_scores="error") -> float:
    """R@k (trec_eval ``recall_k``): relevant items in the top k, divided by R.

    R is ``n_rel`` (qrels mode: relevant documents not retrieved count too) or the
    relevant items of the list; 0 when R == 0 (no relevant document). Fewer than k
    retrieved: the whole list is the top k. With ties="average" each rank of a tie
    group counts c / s relevant.

    >>> from fastndcg import reference
    >>> reference.recall_query([0.9, 0.8, 0.7], [1, 0, 2], k=2, n_rel=4)
    0.25
    """
    q = _Query(scores, labels, k, rel, ties, n_rel, judged, doc_ids, nan_scores)
    return q.hits(q.relevant, q.cut) / q.R if q.R else 0.0


@_measure("success")
def success_query(scores, labels, k=None, *, rel=1, ties="average", n_rel=None,
                  judged=None, doc_ids=None, nan_scores="error") -> float:
    """Success@k: 1.0 when a relevant item is in the top k, else 0.0 (also for an
    empty list or a query without relevant items).

    ties="average": the probability that a relevant item lands in the top k. Earlier
    groups have no relevant item; for the first group with c > 0, of which
    t = min(s, k - a) ranks are inside the cut (t <= 0: 0), it is
    1 - prod_{i < t} (s - c - i) / (s - i) (the chance that not all t ranks inside
    the cut hold non-relevant members; the product is 0 when t > s - c).

    >>> from fastndcg import reference
    >>> reference.success_query([1.0, 1.0, 0.5], [0, 1, 0], k=1)  # tie: 1/2 chance
    0.5
    """
    q = _Query(scores, labels, k, rel, ties, n_rel, judged, doc_ids, nan_scores)
    if q.ties != "average":
        return 1.0 if any(q.relevant[i] for i in q.order(q.relevant)[:q.cut]) else 0.0
    for a, s, c, _ in q.tie_groups(q.relevant):
        if c == 0:
            continue
        t = min(s, q.cut - a)
        if t <= 0:
            return 0.0
        none_inside = 1.0
        for i in range(t):
            none_inside *= (s - c - i) / (s - i)
        return 1.0 - none_inside
    return 0.0


@_measure("rr")
def rr_query(scores, labels, k=None, *, rel=1, ties="average", n_rel=None,
             judged=None, doc_ids=None, nan_scores="error") -> float:
    """RR@k (trec_eval ``recip_rank``, MS MARCO's MRR@k): 1 / (rank of the first
    relevant item) when that rank is <= k, else 0 (also for no relevant item).

    ties="average": in the first group with c > 0 the first relevant member is at
    position X of the group with P(X = j) = C(s - j, c - 1) / C(s, c),
    j = 1 .. s - c + 1; RR@k = sum over those j with a + j <= k of P(X = j) / (a + j).

    >>> from fastndcg import reference
    >>> reference.rr_query([0.9, 0.8, 0.7], [0, 0, 3])
    0.3333333333333333
    >>> round(reference.rr_query([1.0, 1.0, 1.0], [0, 1, 0]), 6)  # (1 + 1/2 + 1/3) / 3
    0.611111
    """
    q = _Query(scores, labels, k, rel, ties, n_rel, judged, doc_ids, nan_scores)
    if q.ties != "average":
        for rank, i in enumerate(q.order(q.relevant)[:q.cut], start=1):
            if q.relevant[i]:
                return 1.0 / rank
        return 0.0
    for a, s, c, _ in q.tie_groups(q.relevant):
        if c == 0:
            continue
        total = 0.0
        for j in range(1, s - c + 2):
            if a + j <= q.cut:
                total += math.comb(s - j, c - 1) / math.comb(s, c) / (a + j)
        return total
    return 0.0


@_measure("gm_map", cutoff=False)
@_measure("ap")
def ap_query(scores, labels, k=None, *, rel=1, ties="average", n_rel=None,
             judged=None, doc_ids=None, nan_scores="error") -> float:
    """AP@k (trec_eval ``map``, ``map_cut_k``): the sum over the relevant items at
    ranks p <= k of (relevant items in the top p) / p, divided by R.

    R is ``n_rel`` (qrels mode) or the relevant items of the list, not min(R, k)
    as some libraries use; 0 when R == 0. Relevant documents not retrieved, or
    below k, add nothing to the sum but count in R.

    ties="average": a group adds, over its ranks j = 1 .. s with a + j <= k,
    [(C + 1) * c / s + (j - 1) * c * (c - 1) / (s * (s - 1))] / (a + j)
    (the expected relevance of rank a + j times the expected number of relevant
    items above and at it; the second term is 0 when s == 1); then divide by R.

    >>> from fastndcg import reference
    >>> reference.ap_query([0.9, 0.8, 0.7], [1, 0, 2])  # (1/1 + 2/3) / 2
    0.8333333333333333
    >>> reference.ap_query([0.9, 0.8, 0.7], [1, 0, 2], n_rel=4)  # two more unretrieved
    0.41666666666666663
    """
    q = _Query(scores, labels, k, rel, ties, n_rel, judged, doc_ids, nan_scores)
    if q.R == 0:
        return 0.0
    total = 0.0
    if q.ties != "average":
        found = 0
        for rank, i in enumerate(q.order(q.relevant)[:q.cut], start=1):
            if q.relevant[i]:
                found += 1
                total += found / rank
        return total / q.R
    for a, s, c, C in q.tie_groups(q.relevant):
        if c == 0:
            continue
        for j in range(1, s + 1):
            if a + j > q.cut:
                break
            pair = (j - 1) * c * (c - 1) / (s * (s - 1)) if s > 1 else 0.0
            total += ((C + 1) * c / s + pair) / (a + j)
    return total / q.R


@_measure("rprec")
def rprec_query(scores, labels, *, rel=1, ties="average", n_rel=None, judged=None,
                doc_ids=None, nan_scores="error") -> float:
    """R-precision (trec_eval ``Rprec``): relevant items in the top R, divided by R
    (when fewer than R items are retrieved, the whole list); 0 when R == 0. With
    ties="average" the numerator is P@R's with each rank of a tie group counting
    c / s.

    >>> from fastndcg import reference
    >>> reference.rprec_query([0.9, 0.8, 0.7], [1, 0, 2])  # 1 relevant in the top 2
    0.5
    """
    q = _Query(scores, labels, None, rel, ties, n_rel, judged, doc_ids, nan_scores)
    return q.hits(q.relevant, min(q.R, q.n)) / q.R if q.R else 0.0


@_measure("judged")
def judged_query(scores, labels, k=None, *, rel=1, ties="average", n_rel=None,
                 judged=None, doc_ids=None, nan_scores="error") -> float:
    """Judged@k (ir_measures ``Judged@k``): judged items in the top k, divided by
    min(k, n) -- the number of items actually in the top k, as ir_measures does
    (not by k); ``k=None``: divided by n. 0 for an empty list. ``rel`` and labels
    play no part (a judged item with a negative label is judged). With
    ties="average" each rank of a tie group counts (judged members) / s;
    "optimistic" / "pessimistic" put judged items first / last.

    >>> from fastndcg import reference
    >>> reference.judged_query([0.9, 0.8], [0, 1], k=10, judged=[True, False])
    0.5
    """
    q = _Query(scores, labels, k, rel, ties, n_rel, judged, doc_ids, nan_scores)
    return q.hits(q.judged, q.cut) / q.cut if q.cut else 0.0


@_measure("num_q")
def num_q_query(scores, labels, *, rel=1, ties="average", n_rel=None, judged=None,
                doc_ids=None, nan_scores="error") -> float:
    """num_q (trec_eval ``num_q``, ir_measures ``NumQ``): 1 for every query scored, so
    that its sum over the queries (its average, as trec_eval prints it) counts
    them."""
    _Query(scores, labels, None, rel, ties, n_rel, judged, doc_ids, nan_scores)
    return 1.0


@_measure("num_ret")
def num_ret_query(scores, labels, *, rel=1, ties="average", n_rel=None, judged=None,
                  doc_ids=None, nan_scores="error") -> float:
    """num_ret: n, the number of retrieved items (judged or not), as a float."""
    return float(_Query(scores, labels, None, rel, ties, n_rel, judged, doc_ids, nan_scores).n)


@_measure("num_rel")
def num_rel_query(scores, labels, *, rel=1, ties="average", n_rel=None, judged=None,
                  doc_ids=None, nan_scores="error") -> float:
    """num_rel: R, the relevant documents of the query (``n_rel`` in qrels mode, else
    the relevant items of the list), as a float."""
    return float(_Query(scores, labels, None, rel, ties, n_rel, judged, doc_ids, nan_scores).R)


@_measure("num_rel_ret")
def num_rel_ret_query(scores, labels, *, rel=1, ties="average", n_rel=None,
                      judged=None, doc_ids=None, nan_scores="error") -> float:
    """num_rel_ret: the relevant items of the list, as a float."""
    return float(_Query(scores, labels, None, rel, ties, n_rel, judged, doc_ids,
                        nan_scores).n_rel_ret)


@_measure("bpref", "gm_bpref")
def bpref_query(scores, labels, *, rel=1, ties="average", n_rel=None, judged=None,
                doc_ids=None, nan_scores="error", n_nonrel=None) -> float:
    """bpref (trec_eval ``bpref``, Buckley & Voorhees, SIGIR 2004): for each relevant
    item, 1 - min(n, R) / min(N, R), where n counts the judged non-relevant items
    ranked above it (1 when n is 0); the sum divided by R (0 when R is 0).

    Judged non-relevant means judged with a label from 0 to rel - 1: a judged item
    with a negative label is "in the pool but unjudged" to trec_eval and counts
    as neither; unjudged items are skipped. N is ``n_nonrel`` (qrels mode: the
    query's judged non-relevant documents, retrieved or not) or those of the list.

    ties="average": a relevant item of a tie group with c judged non-relevant
    members has x = 0..c of them above it, each equally likely, so the group adds
    (its relevant items) x the mean of the terms over x; "optimistic" /
    "pessimistic" put the relevant items first / last in their group.

    >>> from fastndcg import reference
    >>> reference.bpref_query([0.9, 0.8, 0.7], [1, 0, 2])  # 1 + (1 - 1/1), over R = 2
    0.5
    """
    q = _Query(scores, labels, None, rel, ties, n_rel, judged, doc_ids, nan_scores)
    grades = [_clean_label(r, "keep") for r in labels]
    nonrel = [q.judged[i] and 0 <= grades[i] < rel for i in range(q.n)]
    n_non = sum(nonrel)
    if n_nonrel is not None:
        if int(n_nonrel) != n_nonrel or n_nonrel < n_non:
            raise ValueError(f"n_nonrel={n_nonrel!r} is smaller than the {n_non} judged "
                             "non-relevant items of the list (or not an integer)")
        n_non = int(n_nonrel)
    if q.R == 0:
        return 0.0
    return _bpref_sum(q, nonrel, n_non) / q.R


def _bpref_sum(q, nonrel, n_non) -> float:
    """bpref's terms summed over the relevant items of ``q``, ``nonrel`` flagging the
    judged non-relevant ones (N = ``n_non``)."""
    def term(above):
        return 1.0 if above == 0 else 1.0 - min(above, q.R) / min(n_non, q.R)

    total = 0.0
    above = 0
    if q.ties != "average":
        for i in q.order(q.relevant):
            if q.relevant[i]:
                total += term(above)
            elif nonrel[i]:
                above += 1
        return total
    for group in q.groups:
        r = sum(1 for i in group if q.relevant[i])
        c = sum(1 for i in group if nonrel[i])
        if r:
            total += r * math.fsum(term(above + x) for x in range(c + 1)) / (c + 1)
        above += c
    return total


@_measure("bpref_ranx")
def bpref_ranx_query(scores, labels, *, rel=1, ties="average", n_rel=None, judged=None,
                     doc_ids=None, nan_scores="error", n_judged=None) -> float:
    """ranx's bpref (``bpref`` in ranx): bpref's terms (:func:`bpref_query`), where a
    judged item with a label below ``rel`` is non-relevant, a negative label too
    (trec_eval counts those as neither). N, the judged non-relevant documents, is
    ``n_judged`` (qrels mode: the query's judged documents) minus R, or those of
    the list. ranx computes each term as 1 - min(n, R) / min(N, R), so with N = 0
    a retrieved relevant item makes the query NaN (0 / 0); 0 when R is 0 or no
    relevant item is retrieved.

    >>> from fastndcg import reference
    >>> reference.bpref_ranx_query([0.9, 0.8, 0.7], [-1, 1, 0])  # 1 - 1/1, over R = 1
    0.0
    >>> reference.bpref_ranx_query([0.9, 0.8], [1, 2])
    nan
    """
    q = _Query(scores, labels, None, rel, ties, n_rel, judged, doc_ids, nan_scores)
    grades = [_clean_label(r, "keep") for r in labels]
    nonrel = [q.judged[i] and grades[i] < rel for i in range(q.n)]
    n_non = sum(nonrel)
    if n_judged is not None:
        if int(n_judged) != n_judged or n_judged - q.R < n_non:
            raise ValueError(f"n_judged={n_judged!r} is smaller than the {n_non + q.R} judged "
                             "items of the list (or not an integer)")
        n_non = int(n_judged) - q.R
    if q.R == 0:
        return 0.0
    if n_non == 0:
        return math.nan if q.n_rel_ret else 0.0
    return _bpref_sum(q, nonrel, n_non) / q.R


@_measure("f1")
def f1_query(scores, labels, k=None, *, rel=1, ties="average", n_rel=None, judged=None,
             doc_ids=None, nan_scores="error") -> float:
    """ranx's f1@k: 2 P R / (P + R) of P@k (relevant items in the top k over k; with
    ``k=None`` over n, 0 for an empty list) and R@k (over R); 0 when R is 0 or
    nothing relevant is in the top k. It equals 2 x hits / (k + R), so with
    ties="average" the expected hits give the expected value.

    >>> from fastndcg import reference
    >>> round(reference.f1_query([0.9, 0.8, 0.7], [1, 0, 2], k=2, n_rel=3), 6)
    0.4
    """
    q = _Query(scores, labels, k, rel, ties, n_rel, judged, doc_ids, nan_scores)
    d = q.n if k is None else k
    if not q.R or not d:
        return 0.0
    hits = q.hits(q.relevant, q.cut)
    p, r = hits / d, hits / q.R
    if p + r == 0:
        return 0.0
    return 2 * ((p * r) / (p + r))


@_measure("num_nonrel_judged_ret")
def num_nonrel_judged_ret_query(scores, labels, *, rel=1, ties="average", n_rel=None,
                                judged=None, doc_ids=None, nan_scores="error") -> float:
    """num_nonrel_judged_ret (trec_eval): the judged non-relevant items retrieved,
    judged with a label from 0 to rel - 1 (a negative grade is "in the pool but
    unjudged" to trec_eval), as a float.

    >>> from fastndcg import reference
    >>> reference.num_nonrel_judged_ret_query([0.9, 0.8, 0.7], [1, 0, -1])
    1.0
    """
    q = _Query(scores, labels, None, rel, ties, n_rel, judged, doc_ids, nan_scores)
    grades = [_clean_label(r, "keep") for r in labels]
    return float(sum(1 for i in range(q.n) if q.judged[i] and 0 <= grades[i] < rel))


def _set_counts(scores, labels, rel, ties, n_rel, judged, doc_ids, nan_scores):
    """(items retrieved, relevant items retrieved, R) of one query: what the set
    measures read (the whole list, so neither order nor ties matter)."""
    q = _Query(scores, labels, None, rel, ties, n_rel, judged, doc_ids, nan_scores)
    return q.n, q.n_rel_ret, q.R


@_measure("set_p")
def set_p_query(scores, labels, *, rel=1, ties="average", n_rel=None, judged=None,
                doc_ids=None, nan_scores="error") -> float:
    """set_P (trec_eval ``set_P``, ir_measures ``SetP``): relevant items retrieved /
    items retrieved; 0 for an empty list.

    >>> from fastndcg import reference
    >>> reference.set_p_query([0.9, 0.8, 0.7, 0.6], [1, 0, 2, 0])
    0.5
    """
    n, found, _ = _set_counts(scores, labels, rel, ties, n_rel, judged, doc_ids, nan_scores)
    return found / n if n else 0.0


@_measure("set_recall")
def set_recall_query(scores, labels, *, rel=1, ties="average", n_rel=None, judged=None,
                     doc_ids=None, nan_scores="error") -> float:
    """set_recall (``set_recall``, ``SetR``): relevant items retrieved / R; 0 when R is 0.

    >>> from fastndcg import reference
    >>> reference.set_recall_query([0.9, 0.8], [1, 0], n_rel=4)
    0.25
    """
    _, found, R = _set_counts(scores, labels, rel, ties, n_rel, judged, doc_ids, nan_scores)
    return found / R if R else 0.0


@_measure("set_relative_p")
def set_relative_p_query(scores, labels, *, rel=1, ties="average", n_rel=None, judged=None,
                         doc_ids=None, nan_scores="error") -> float:
    """set_relative_P (``set_relative_P``, ``SetRelP``): relevant items retrieved /
    min(items retrieved, R), set_P over the largest it could be; 0 when either is 0.

    >>> from fastndcg import reference
    >>> reference.set_relative_p_query([0.9, 0.8, 0.7], [1, 0, 0], n_rel=2)
    0.5
    """
    n, found, R = _set_counts(scores, labels, rel, ties, n_rel, judged, doc_ids, nan_scores)
    return found / min(n, R) if n and R else 0.0


@_measure("set_map")
def set_map_query(scores, labels, *, rel=1, ties="average", n_rel=None, judged=None,
                  doc_ids=None, nan_scores="error") -> float:
    """set_map (``set_map``, ``SetAP``): (relevant items retrieved)^2 / (items retrieved
    x R), set_P times set_recall; 0 when either count is 0.

    >>> from fastndcg import reference
    >>> reference.set_map_query([0.9, 0.8, 0.7, 0.6], [1, 0, 2, 0], n_rel=4)
    0.25
    """
    n, found, R = _set_counts(scores, labels, rel, ties, n_rel, judged, doc_ids, nan_scores)
    return found * found / (n * R) if n and R else 0.0


@_measure("relative_p")
def relative_p_query(scores, labels, k=None, *, rel=1, ties="average", n_rel=None,
                     judged=None, doc_ids=None, nan_scores="error") -> float:
    """relative_P@k (trec_eval ``relative_P``): relevant items in the top k, divided
    by min(k, R), the most there could be; 0 when R is 0. ``k=None``: the whole
    list (k = n). With ties="average" each rank of a tie group counts c / s.

    >>> from fastndcg import reference
    >>> reference.relative_p_query([0.9, 0.8, 0.7], [1, 0, 0], k=3, n_rel=2)
    0.5
    """
    q = _Query(scores, labels, k, rel, ties, n_rel, judged, doc_ids, nan_scores)
    k = q.n if k is None else k
    return q.hits(q.relevant, q.cut) / min(k, q.R) if q.R and k else 0.0


@_measure("rprec_mult")
def rprec_mult_query(scores, labels, *, mult=1.0, rel=1, ties="average", n_rel=None,
                     judged=None, doc_ids=None, nan_scores="error") -> float:
    """Rprec_mult (trec_eval ``Rprec_mult_X``): precision at rank d = int(mult x R +
    0.9), trec_eval's rounding: relevant items in the top d over d (d past the
    list: all relevant retrieved over d); 0 when d is 0.

    >>> from fastndcg import reference
    >>> reference.rprec_mult_query([0.9, 0.8, 0.7, 0.6], [1, 0, 1, 0], mult=2.0)
    0.5
    """
    q = _Query(scores, labels, None, rel, ties, n_rel, judged, doc_ids, nan_scores)
    d = int(mult * q.R + 0.9)
    return q.hits(q.relevant, min(d, q.n)) / d if d > 0 else 0.0


def _lround(x: float) -> int:
    """C's lround for x >= 0: halves away from zero."""
    f = math.floor(x)
    return f + (1 if x - f >= 0.5 else 0)


def _refuse_average(q, name: str) -> None:
    if q.ties == "average":
        raise ValueError(f"{name} is not offered with ties='average'")


def _iprec_at(q, c: int) -> float:
    """trec_eval's interpolated precision at its c-th relevant retrieved item: the
    largest precision at any rank at or below that item's (c = 0: below the first
    relevant item's), 0 when fewer than c relevant items are retrieved."""
    ranked = [q.relevant[i] for i in q.order(q.relevant)]
    found = sum(ranked)
    if c > found or found == 0:
        return 0.0
    best, seen = 0.0, 0
    precisions = []
    for rank, hit in enumerate(ranked, 1):
        seen += hit
        precisions.append((seen, seen / rank))
    for seen_here, p in precisions:
        if seen_here >= max(c, 1):
            best = max(best, p)
    return best


def _iprec_rank(recall: float, n_rel: int, trec9: bool) -> int:
    """Which relevant item recall level ``recall`` reads: trec_eval 10 rounds
    recall x R (halves up); trec_eval 9 (pytrec_eval) truncates recall x R + 0.9."""
    return int(recall * n_rel + 0.9) if trec9 else _lround(recall * n_rel)


@_measure("iprec")
def iprec_query(scores, labels, *, recall=0.0, rel=1, ties="average", n_rel=None,
                judged=None, doc_ids=None, nan_scores="error", trec9=False) -> float:
    """iprec_at_recall (trec_eval ``iprec_at_recall_X``, ir_measures ``IPrec@X``):
    interpolated precision at recall level X: with c = round(X x R) (halves up, as
    trec_eval's lround), the largest precision at the rank of the c-th relevant
    item or any rank below it; 0 when fewer than c relevant items are retrieved.
    ``trec9=True``: as trec_eval 9 and pytrec_eval, c = int(X x R + 0.9), computed in
    floating point (so 0.7 x 43 + 0.9 reads item 30). The strict tie rules only:
    ties="average" is refused.

    >>> from fastndcg import reference
    >>> reference.iprec_query([0.9, 0.8, 0.7, 0.6], [1, 0, 1, 1], recall=0.5, ties="stable")
    0.75
    """
    q = _Query(scores, labels, None, rel, ties, n_rel, judged, doc_ids, nan_scores)
    _refuse_average(q, "iprec")
    return _iprec_at(q, _iprec_rank(recall, q.R, trec9)) if q.R else 0.0


@_measure("11pt_avg")
def iprec_11pt_query(scores, labels, *, rel=1, ties="average", n_rel=None, judged=None,
                     doc_ids=None, nan_scores="error", trec9=False) -> float:
    """11pt_avg (trec_eval): the mean of iprec at recall 0.0, 0.1, ..., 1.0 (see
    :func:`iprec_query`, also for ``trec9``). The strict tie rules only.

    >>> from fastndcg import reference
    >>> round(reference.iprec_11pt_query([0.9, 0.8, 0.7, 0.6], [1, 0, 1, 1], ties="stable"), 4)
    0.8636
    """
    q = _Query(scores, labels, None, rel, ties, n_rel, judged, doc_ids, nan_scores)
    _refuse_average(q, "11pt_avg")
    if not q.R:
        return 0.0
    return math.fsum(_iprec_at(q, _iprec_rank(level / 10, q.R, trec9))
                     for level in range(11)) / 11


@_measure("set_f")
def set_f_query(scores, labels, *, beta=1.0, rel=1, ties="average", n_rel=None,
                judged=None, doc_ids=None, nan_scores="error") -> float:
    """set_F (trec_eval ``set_F``, ir_measures ``SetF``): (1 + beta) P R / (beta P +
    R) of the whole list's set precision P and set recall R (trec_eval's form, in
    which beta weighs recall); 0 when no relevant item is retrieved.

    >>> from fastndcg import reference
    >>> reference.set_f_query([0.9, 0.8, 0.7, 0.6], [1, 0, 0, 0], n_rel=1)
    0.4
    """
    n, found, R = _set_counts(scores, labels, rel, ties, n_rel, judged, doc_ids, nan_scores)
    if not found:
        return 0.0
    p, r = found / n, found / R
    return (beta + 1.0) * p * r / (beta * p + r)


@_measure("utility")
def utility_query(scores, labels, *, a=1.0, b=-1.0, c=0.0, d=0.0, n_docs=0, rel=1,
                  ties="average", n_rel=None, judged=None, doc_ids=None,
                  nan_scores="error") -> float:
    """utility (trec_eval): a x relevant retrieved + b x non-relevant retrieved +
    c x relevant not retrieved + d x non-relevant not retrieved, the last counted
    in a collection of ``n_docs`` documents (trec_eval's ``-N``).

    >>> from fastndcg import reference
    >>> reference.utility_query([0.9, 0.8, 0.7], [1, 0, 0], n_rel=2)
    -1.0
    """
    n, found, R = _set_counts(scores, labels, rel, ties, n_rel, judged, doc_ids, nan_scores)
    return a * found + b * (n - found) + c * (R - found) + d * (n_docs + found - n - R)


@_measure("unj")
def unj_query(scores, labels, k=None, *, rel=1, ties="average", n_rel=None, judged=None,
              doc_ids=None, nan_scores="error") -> float:
    """unj@k (trec_eval ``unj_k``): items in the top k that are not judged with a
    label >= 0 (unjudged, or judged with a negative label: "in the pool but
    unjudged" to trec_eval), divided by k (ranks past the list count as judged).
    ``k=None``: the whole list. With ties="average" each rank of a tie group
    counts (such members) / s; "optimistic" / "pessimistic" give the largest /
    smallest value over the orderings (such members first / last), as for every
    measure.

    >>> from fastndcg import reference
    >>> reference.unj_query([0.9, 0.8], [1, -1], k=5, judged=[True, True])
    0.2
    """
    q = _Query(scores, labels, k, rel, ties, n_rel, judged, doc_ids, nan_scores)
    grades = [_clean_label(r, "keep") for r in labels]
    unjudged = [not (q.judged[i] and grades[i] >= 0) for i in range(q.n)]
    k = q.n if k is None else k
    return q.hits(unjudged, q.cut) / k if k else 0.0


@_measure("bing")
def bing_query(scores, labels, *, rel=1, ties="average", n_rel=None, judged=None,
               doc_ids=None, nan_scores="error") -> float:
    """binG (trec_eval ``binG``): over the relevant items, 1 / log2(2 + the
    non-relevant items ranked above it, unjudged ones included), summed and
    divided by R; 0 when R is 0. ties="average": a relevant member of a tie group
    with o other non-relevant members has x = 0..o of them above it, each equally
    likely.

    >>> from fastndcg import reference
    >>> reference.bing_query([0.9, 0.8, 0.7], [0, 1, 0], n_rel=2)  # 1/log2(3), over 2
    0.31546487678572877
    """
    q = _Query(scores, labels, None, rel, ties, n_rel, judged, doc_ids, nan_scores)
    if q.R == 0:
        return 0.0
    if q.ties != "average":
        total, above = 0.0, 0
        for i in q.order(q.relevant):
            if q.relevant[i]:
                total += 1.0 / math.log2(2 + above)
            else:
                above += 1
        return total / q.R
    total, above = 0.0, 0
    for group in q.groups:
        c = sum(1 for i in group if q.relevant[i])
        other = len(group) - c
        if c:
            total += c * math.fsum(1.0 / math.log2(2 + above + x)
                                   for x in range(other + 1)) / (other + 1)
        above += other
    return total / q.R


@_measure("rbp_bin")
def rbp_bin_query(scores, labels, *, p=0.8, rel=1, ties="average", n_rel=None,
                  judged=None, doc_ids=None, nan_scores="error") -> float:
    """RBP (ir_measures ``RBP(rel=r, p=...)``, cwl_eval; Moffat & Zobel 2008) of the
    relevant items: (1 - p) x the sum of p^(rank - 1) over them. ties="average":
    each rank of a tie group holds a relevant item with probability c / s.

    >>> from fastndcg import reference
    >>> reference.rbp_bin_query([0.9, 0.8, 0.7], [1, 0, 1], p=0.5)  # 0.5 x (1 + 0.25)
    0.625
    """
    q = _Query(scores, labels, None, rel, ties, n_rel, judged, doc_ids, nan_scores)
    return (1 - p) * _rank_mass(q, q.relevant, p)


def _rank_mass(q, flags, p: float) -> float:
    """The sum of p^(rank - 1) over the flagged items' ranks: under ties="average"
    its expectation (each rank of a tie group holds a flagged item with probability
    (flagged members) / s), else in the tie rule's order (flagged items first in
    their group for "optimistic")."""
    if q.ties != "average":
        return math.fsum(p ** rank for rank, i in enumerate(q.order(flags)) if flags[i])
    mass, a = [], 0
    for group in q.groups:
        c = sum(1 for i in group if flags[i])
        mass += [c / len(group) * p ** (a + j) for j in range(len(group))]
        a += len(group)
    return math.fsum(mass)


@_measure("rbp_residual")
def rbp_residual_query(scores, labels, *, p=0.8, rel=1, ties="average", n_rel=None,
                       judged=None, doc_ids=None, nan_scores="error") -> float:
    """RBP's residual (Moffat & Zobel 2008; cwl_eval's, to rank 1,000): how far RBP
    with persistence p could rise if the unjudged items were relevant, and so were
    the ranks past the list: p^n + (1 - p) x the sum of p^(rank - 1) over the
    unjudged items (a negative grade is judged: ir_measures reads it as 0).
    ties="average": each rank of a tie group holds an unjudged item with
    probability (unjudged members) / s.

    >>> from fastndcg import reference
    >>> reference.rbp_residual_query([0.9, 0.8], [1, 0], p=0.5, judged=[True, False])
    0.5
    """
    q = _Query(scores, labels, None, rel, ties, n_rel, judged, doc_ids, nan_scores)
    unjudged = [not q.judged[i] for i in range(q.n)]
    return p ** q.n + (1 - p) * _rank_mass(q, unjudged, p)


@_measure("rbp_resid")
def rbp_resid_query(scores, labels, *, p=0.9, rel=1, ties="average", n_rel=None,
                    judged=None, doc_ids=None, nan_scores="error") -> float:
    """rbp_resid (trec_eval ``rbp_resid``): how far rank-biased precision with
    persistence p could rise if every item not judged with a label >= 0
    (unjudged, or a negative grade) had the largest gain: p^n + (1 - p) x the sum
    of p^(rank - 1) over those items; 0 when there is none (trec_eval's rule).
    ties="average": each rank of a tie group holds such an item with probability
    (such members) / s.

    >>> from fastndcg import reference
    >>> round(reference.rbp_resid_query([0.9, 0.8], [1, 0], p=0.5, judged=[True, False]), 4)
    0.5
    """
    q = _Query(scores, labels, None, rel, ties, n_rel, judged, doc_ids, nan_scores)
    grades = [_clean_label(r, "keep") for r in labels]
    unjudged = [not (q.judged[i] and grades[i] >= 0) for i in range(q.n)]
    if not any(unjudged):
        return 0.0
    return p ** q.n + (1 - p) * _rank_mass(q, unjudged, p)


INFAP_EPSILON = 0.00001  # trec_eval's


@_measure("infap")
def infap_query(scores, labels, *, rel=1, ties="trec", n_rel=None, judged=None,
                doc_ids=None, nan_scores="error") -> float:
    """infAP (trec_eval ``infAP``, ir_measures ``infAP``; Yilmaz & Aslam, CIKM 2006):
    AP inferred from a sample of judgments. Judged items with a label below 0 are
    the pool's unsampled ("unjudged") items; unjudged items are outside the pool.
    At the rank j (0-based) of each relevant item, with r relevant, m judged
    non-relevant and u unsampled pool items above it, it adds 1 at rank 0, else
    1/(j+1) + j/(j+1) x (r+m+u)/j x (r+eps)/(r+m+2 eps) (eps = 1e-5); the sum over R.
    The tie rules "trec" and "stable" only: infAP does not always grow as a
    relevant item moves up, so neither "optimistic" nor "pessimistic" gives its
    bounds, and its expectation over orderings is not computed.

    >>> from fastndcg import reference
    >>> reference.infap_query([0.9, 0.8, 0.7], [1, 0, 1], ties="stable")  # (1 + 1/3 + 2/3 x 2/2 x 1/2) / 2
    0.8333333333333333
    """
    q = _Query(scores, labels, None, rel, ties, n_rel, judged, doc_ids, nan_scores)
    if ties not in ("trec", "stable"):
        raise ValueError(f"infap is not offered with ties={ties!r}")
    if q.R == 0:
        return 0.0
    grades = [_clean_label(x, "keep") for x in labels]
    total, r, m, u = 0.0, 0, 0, 0
    for j, i in enumerate(q.order(q.relevant)):
        if q.relevant[i]:
            total += 1.0 if j == 0 else (1 / (j + 1) + (j / (j + 1)) * ((r + m + u) / j)
                                         * ((r + INFAP_EPSILON) / (r + m + 2 * INFAP_EPSILON)))
            r += 1
        elif q.judged[i] and grades[i] >= 0:
            m += 1
        elif q.judged[i]:
            u += 1
    return total / q.R


# --------------------------------------------------------------------------- graded measures
# trec_eval's measures over the gains in rank order and the ideal gains: the gain of
# an item is its label (trec_eval's default gains: the relevance level), 0 when it is
# unjudged; the ideal gains are ``ideal_labels`` (qrels mode: every judgment of the
# query) or the list's judged labels.


def _rank_gains(q, labels, ties, negative_labels="keep") -> list:
    gains = [float(_clean_label(labels[i], negative_labels)) if q.judged[i] else 0.0
             for i in range(q.n)]
    if ties != "average":
        return [gains[i] for i in _strict_order(q.scores, gains, ties, q.doc_ids)]
    out = []
    for group in q.groups:
        mean = math.fsum(gains[i] for i in group) / len(group)
        out += [mean] * len(group)
    return out


def _ideal_gains(q, labels, ideal_labels, negative_labels="keep") -> list:
    if ideal_labels is None:
        ideal_labels = [labels[i] for i in range(q.n) if q.judged[i]]
    return sorted((float(_clean_label(x, negative_labels)) for x in ideal_labels), reverse=True)


@_measure("rbp")
def rbp_query(scores, labels, *, p=0.9, rel=1, ties="average", n_rel=None, judged=None,
              doc_ids=None, nan_scores="error", ideal_labels=None,
              negative_labels="keep") -> float:
    """rbp (trec_eval ``rbp.p=0.9``; Moffat & Zobel 2008): (1 - p) x the sum of gain x
    p^(rank - 1), the gains divided by the largest ideal gain when it is above 1
    (trec_eval scales graded gains into [0, 1]). ties="average": each rank of a tie
    group carries its mean gain; "optimistic"/"pessimistic": gains descending /
    ascending inside a group (the largest / smallest value).

    >>> from fastndcg import reference
    >>> round(reference.rbp_query([0.9, 0.8], [2, 1], p=0.5), 4)  # 0.5 x (1 + 0.5 x 0.5)
    0.625
    """
    q = _Query(scores, labels, None, rel, ties, n_rel, judged, doc_ids, nan_scores)
    ideal = _ideal_gains(q, labels, ideal_labels, negative_labels)
    scale = ideal[0] if ideal and ideal[0] > 1.0 else 1.0
    return (1.0 - p) * math.fsum(g / scale * p ** i
                                 for i, g in enumerate(_rank_gains(q, labels, ties, negative_labels)))


def _strict(q, name):
    if q.ties not in ("trec", "stable"):
        raise ValueError(f"{name} is not offered with ties={q.ties!r}")


@_measure("g")
def g_query(scores, labels, *, rel=1, ties="trec", n_rel=None, judged=None, doc_ids=None,
            nan_scores="error", ideal_labels=None, negative_labels="keep") -> float:
    """G (trec_eval ``G``): the gain g at rank i, over log2(2 + (the ideal gains of
    ranks 1..i, each counted as at least 1; 1 past the ideal list) - (the gains of
    ranks 1..i)), summed over the ranks and divided by the sum of the ideal gains.
    "trec" and "stable" ties only.

    >>> from fastndcg import reference
    >>> reference.g_query([0.9, 0.8], [1, 1], ties="stable")  # 1/log2(2) + 1/log2(2), over 2
    1.0
    """
    q = _Query(scores, labels, None, rel, ties, n_rel, judged, doc_ids, nan_scores)
    _strict(q, "g")
    gains = _rank_gains(q, labels, ties, negative_labels)
    ideal = _ideal_gains(q, labels, ideal_labels, negative_labels)
    total = sum_gain = cost = 0.0
    for i, g in enumerate(gains):
        ig = ideal[i] if i < len(ideal) else 0.0
        cost += ig if ig >= 1.0 else 1.0
        sum_gain += g
        if g:
            total += g / math.log2(2.0 + cost - sum_gain)
    positive = math.fsum(x for x in ideal if x > 0)
    return total / positive if positive > 0 else 0.0


@_measure("ndcg_rel")
def ndcg_rel_query(scores, labels, *, rel=1, ties="trec", n_rel=None, judged=None,
                   doc_ids=None, nan_scores="error", ideal_labels=None,
              negative_labels="keep") -> float:
    """ndcg_rel (trec_eval ``ndcg_rel``): NDCG@i (discount log2(i + 1), the ideal
    DCG of the positive ideal gains) at the rank i of each item with a gain above
    0, plus the NDCG of the whole list once for each positive ideal gain beyond the
    items found, averaged over the positive ideal gains. Every tie rule:
    "optimistic"/"pessimistic" order a tie group by gain (its largest / smallest
    value: :func:`over_orderings` checks it), "average" is the exact expectation
    over the orderings of tied items (:func:`_ndcg_rel_expected`).

    >>> from fastndcg import reference
    >>> reference.ndcg_rel_query([0.9, 0.8], [1, 0], ties="stable")
    1.0
    """
    q = _Query(scores, labels, None, rel, ties, n_rel, judged, doc_ids, nan_scores)
    ideal = [x for x in _ideal_gains(q, labels, ideal_labels, negative_labels) if x > 0]
    if not ideal:
        return 0.0

    def idcg(i):  # the ideal DCG down to rank i + 1
        return sum(ideal[r] / math.log2(r + 2) for r in range(min(i + 1, len(ideal))))

    if ties == "average":
        total = _ndcg_rel_expected(q, labels, negative_labels, idcg, len(ideal))
        return total / len(ideal) if total > 0 else 0.0
    gains = _rank_gains(q, labels, ties, negative_labels)
    dcg, total, found = 0.0, 0.0, 0
    for i, g in enumerate(gains):
        if g:
            dcg += g / math.log2(i + 2)
        if g > 0:
            total += dcg / idcg(i)
            found += 1
    total += (len(ideal) - found) * dcg / idcg(max(len(gains), len(ideal)))
    return total / len(ideal) if total > 0 else 0.0


def _ndcg_rel_expected(q, labels, negative_labels, idcg, n_ideal) -> float:
    """The expected sum of ndcg_rel's terms over the orderings of tied items.

    Item x of a tie group of m items (gains g, P of them positive, sum S, positive
    sum S+) lands on each rank of the group with probability 1/m, and the groups
    are ordered independently. The term of rank i is [g_i > 0] x DCG(i) / IDCG(i)
    with DCG(i) = sum over j <= i of g_j / log2(j + 2), so its expectation needs
    E[[g_i > 0] g_j] for each j <= i:
      j = i (the same item):             S+ / m
      j < i in the same group (two items): (P x S - S+) / (m (m - 1))
      j in an earlier group (independent): P / m x that group's mean gain.
    The last term, (positive ideal gains - items found) x DCG(n) / IDCG(end), is
    linear: items found is P summed over the groups (fixed), DCG(n) its mean."""
    gains = [float(_clean_label(labels[i], negative_labels)) if q.judged[i] else 0.0
             for i in range(q.n)]
    if any(g < 0 for g in gains):
        raise ValueError("ndcg_rel's expectation over tied orderings is exact for gains >= 0 "
                         "only (a sum below 0 reads as 0)")
    total = before = 0.0  # before: the expected DCG of the earlier groups
    a = found = 0
    for group in q.groups:
        g = [gains[i] for i in group]
        m, s = len(g), math.fsum(g)
        plus = math.fsum(x for x in g if x > 0)
        pos = sum(1 for x in g if x > 0)
        pair = (pos * s - plus) / (m * (m - 1)) if m > 1 else 0.0
        inside = 0.0  # the discounts of the group's ranks above rank i
        for i in range(a, a + m):
            d = 1.0 / math.log2(i + 2)
            if pos:
                total += (pos / m * before + pair * inside + plus / m * d) / idcg(i)
            inside += d
        before += s / m * inside
        found += pos
        a += m
    return total + (n_ideal - found) * before / idcg(max(q.n, n_ideal))


def over_orderings(measure, scores, labels, *, how: str = "mean", limit: int = 40320,
                   **options) -> float:
    """Brute force: ``measure`` (a ``*_query`` function of this module, given
    ``ties="stable"``) over every ordering of the tied items of one query, by
    reordering the input inside each tie group; ``how`` = "mean" (what
    ties="average" means), "max" or "min" (what "optimistic" / "pessimistic"
    mean where an order of each group by gain reaches them). Options that run
    along the items (``judged``, ``doc_ids``) are reordered with them. At most
    ``limit`` orderings.

    >>> from fastndcg import reference
    >>> reference.over_orderings(reference.rr_query, [0.5, 0.5], [1, 0])
    0.75
    """
    import itertools

    q = _Query(scores, labels, None, 1, "stable", None, options.get("judged"),
               options.get("doc_ids"), options.get("nan_scores", "error"))
    count = math.prod(math.factorial(len(g)) for g in q.groups)
    if count > limit:
        raise ValueError(f"{count} orderings of the tied items, more than limit={limit}")
    values = []
    for perms in itertools.product(*(itertools.permutations(g) for g in q.groups)):
        order = [i for p in perms for i in p]
        kw = dict(options)
        for key in ("judged", "doc_ids"):
            if kw.get(key) is not None:
                kw[key] = [kw[key][i] for i in order]
        values.append(measure([scores[i] for i in order], [labels[i] for i in order],
                              ties="stable", **kw))
    if how == "mean":
        return math.fsum(values) / len(values)
    if how in ("max", "min"):
        return max(values) if how == "max" else min(values)
    raise ValueError(f"how must be 'mean', 'max' or 'min', got {how!r}")


@_measure("rndcg")
def rndcg_query(scores, labels, *, rel=1, ties="trec", n_rel=None, judged=None,
                doc_ids=None, nan_scores="error", ideal_labels=None,
              negative_labels="keep") -> float:
    """Rndcg (trec_eval ``Rndcg``): NDCG (discount log2(i + 1)) taken where the
    ideal gain changes (before the first rank of each lower ideal gain, the
    ideal list's end included) and at the end of the list, averaged; 0 when R is 0.
    Every tie rule: it is linear in the gains with weights that are >= 0 and do
    not grow with the rank, so a tie group's gains descending give its largest
    value ("optimistic"), ascending its smallest ("pessimistic"), and its mean
    gain on every rank the expectation over its orderings ("average").

    >>> from fastndcg import reference
    >>> reference.rndcg_query([0.9, 0.8], [1, 0], ties="stable")
    1.0
    """
    q = _Query(scores, labels, None, rel, ties, n_rel, judged, doc_ids, nan_scores)
    if q.R == 0:
        return 0.0
    gains = _rank_gains(q, labels, ties, negative_labels)
    ideal = _ideal_gains(q, labels, ideal_labels, negative_labels)
    depth = len(ideal) - next((i for i, x in enumerate(reversed(ideal)) if x > 0), len(ideal))

    def at(i):  # ideal gain at rank i + 1
        return ideal[i] if i < len(ideal) else 0.0

    def ndcg_to(k):  # NDCG of the first k ranks
        dcg = sum(gains[i] / math.log2(i + 2) for i in range(min(k, len(gains))) if gains[i])
        idcg = sum(at(i) / math.log2(i + 2) for i in range(k) if at(i) > 0)
        return dcg / idcg if idcg > 0 else None

    points = [i for i in range(1, max(depth, 1) + 1) if at(i) != at(i - 1)]
    if len(gains) > depth + 1:  # trec_eval's end of the list (past the ideal list's end)
        points.append(len(gains))
    values = [v for v in (ndcg_to(k) for k in points) if v is not None]
    return math.fsum(values) / len(values) if values else -math.nan


@_measure("err")
def err_query(scores, labels, k=None, *, rel=1, ties="average", n_rel=None, judged=None,
              doc_ids=None, nan_scores="error", ideal_labels=None,
              negative_labels="keep") -> float:
    """ERR@k (ir_measures ``ERR@k``; Chapelle et al., CIKM 2009), as gdeval computes
    it: the sum over the first k ranks of R / rank x the product of (1 - R) above,
    R = (2^grade - 1) / 2^top, grades below 0 read as 0, top = 4 (gdeval's largest
    grade) or the query's largest judged grade when that is higher (gdeval refuses
    such qrels). ties="average" is refused; "optimistic"/"pessimistic" put higher
    grades first/last in a tie group (ERR's largest/smallest value).

    >>> from fastndcg import reference
    >>> reference.err_query([0.9, 0.8], [4, 0], ties="stable")  # (16 - 1) / 16
    0.9375
    """
    q = _Query(scores, labels, k, rel, ties, n_rel, judged, doc_ids, nan_scores)
    _refuse_average(q, "err")
    grades = [max(0.0, g) for g in _rank_gains(q, labels, ties, negative_labels)]
    ideal = _ideal_gains(q, labels, ideal_labels, negative_labels)
    top = max([4.0] + ideal[:1])
    total, decay = 0.0, 1.0
    for i, g in enumerate(grades[:q.cut]):
        r = 2.0 ** (g - top) - 2.0 ** -top  # (2^g - 1) / 2^top, without 2^g overflowing
        total += r * decay / (i + 1)
        decay *= 1.0 - r
    return total


# the measures defined above, in the order defined
BINARY_MEASURES = tuple(_DEFINES)


def measure_query(kind: str, scores, labels, k=None, **options) -> float:
    """The binary measure ``kind`` (one of BINARY_MEASURES) of one query; ``options``
    as the measure's function. ``k`` is ignored by "rprec" and the "num_*" counts.

    >>> from fastndcg import reference
    >>> reference.measure_query("p", [0.9, 0.8, 0.7], [2, 0, 1], k=2, rel=2)
    0.5
    >>> reference.measure_query("num_rel", [0.9, 0.8, 0.7], [2, 0, 1], n_rel=5)
    5.0
    """
    if kind not in _DEFINES:
        raise ValueError(f"unknown measure {kind!r}; expected one of {BINARY_MEASURES}")
    function, cutoff = _DEFINES[kind]
    if not cutoff:
        return function(scores, labels, **options)
    return function(scores, labels, k, **options)


def measure(kind: str, scores, labels, offsets=None, *, query_ids=None, k=None, rel=1,
            ties: str = "average", nan_scores: str = "error") -> list:
    """The binary measure ``kind`` of every query of a batch, as a list (a list of
    lists when ``k`` is a sequence; "rprec" and the "num_*" counts ignore ``k`` and
    give one float per query). List mode: R is the relevant items of each list.
    Queries as :func:`split_queries`.

    >>> from fastndcg import reference
    >>> reference.measure("ap", [0.9, 0.8, 0.7, 0.5], [1, 0, 2, 0], [0, 3, 4])
    [0.8333333333333333, 0.0]
    """
    if kind not in _DEFINES:
        raise ValueError(f"unknown measure {kind!r}; expected one of {BINARY_MEASURES}")
    return _batch(lambda s, r, cut: measure_query(
        kind, s, r, cut, rel=rel, ties=ties, nan_scores=nan_scores),
        scores, labels, offsets, query_ids, k if _DEFINES[kind][1] else None)
