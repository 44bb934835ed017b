"""The named bundles of arrays the kernels take (plain Python: no Numba here).

A kernel takes a few bundles instead of a long row of arrays: arrays that travel
together (a batch's rows, its cutoffs and discounts, its measures) and the
scratch arrays of each step are namedtuples. Numba passes a tuple as its
members, and reads ``lists.scores`` as it reads an argument, so the names cost
nothing at run time; a bundle's field types are part of a kernel's signature, as
its arrays' types were.

A bundle crosses into a kernel called from Python as a plain tuple
(:func:`plain`), and the kernel names it again on its first line
(``lists = Lists(*lists)``): Numba's dispatcher types a plain tuple in C, but a
namedtuple about half a microsecond slower, on every call; with a few bundles a
call and a few calls per chunk of queries, that was 5% of the time of a batch of
200 lists of 1,000 rows. Inside the kernels, a helper takes a bundle only when it
reads all of it, else the arrays it reads: a scratch bundle handed whole to a
helper that read two of its three arrays cost 3% on lists of 5 rows.

>>> import numpy as np
>>> lists = Lists(offsets=np.array([0, 2]), scores=np.array([0.5, 0.1]),
...               labels=np.array([1, 0], np.int32))
>>> lists.scores[0]
np.float64(0.5)
>>> type(plain(lists)) is tuple
True
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


# --------------------------------------------------------------------------- inputs

class Lists(NamedTuple):
    """The ranked lists of a batch, as CSR rows: query q owns the rows
    offsets[q]:offsets[q + 1], each with a score and a label (``scores``: float32
    or float64; for the packed path the bits of float32 scores, uint32)."""
    offsets: np.ndarray
    scores: np.ndarray
    labels: np.ndarray


class Ideal(NamedTuple):
    """The labels IDCG and the graded measures read as the ideal list of each query,
    as CSR rows (the list's own in list mode, every judged document in qrels mode)."""
    offsets: np.ndarray
    labels: np.ndarray


class Cuts(NamedTuple):
    """The DCG/IDCG cutoffs ``ks`` (sorted, unique), the discount of each rank
    ``disc`` (0-based) and the prefix sums of the first ``rank.SHORT_MAX`` discounts,
    ``cdisc`` (two rows: :func:`.score.prefix_sums`)."""
    ks: np.ndarray
    disc: np.ndarray
    cdisc: np.ndarray


class Rules(NamedTuple):
    """How items are scored: the gain mode (``codes.EXP2``, ``LINEAR`` or ``TABLE``)
    with its ``table`` (exp2: 2**i - 1 for the small integers; a gain per label), and
    the tie rule (``codes.AVERAGE``, ``STABLE``, ``OPTIMISTIC``, ``PESSIMISTIC``)."""
    gain: int
    table: np.ndarray
    ties: int


class Measures(NamedTuple):
    """The measures of a batch, one entry each: measure j has code ``codes[j]``,
    family ``families[j]`` (``codes.F_*``: the kernel that scores it), cutoff
    ``cutoffs[j]`` (-1: the whole list), flag bits ``bits[j, 0..2]`` and number
    parameters ``params[j]``; ``flags`` holds ``n_bits`` flag bits per row (uint8,
    empty when no measure reads flags), and ``n_rel[q, b]`` is R of query q at bit b."""
    codes: np.ndarray
    families: np.ndarray
    cutoffs: np.ndarray
    bits: np.ndarray
    params: np.ndarray
    flags: np.ndarray
    n_bits: int
    n_rel: np.ndarray


class Outputs(NamedTuple):
    """Where :func:`.score.score_batch` writes: DCG and IDCG, (n_queries, n_cutoffs),
    and the measures' values, (n_queries, n_measures), float64."""
    dcg: np.ndarray
    idcg: np.ndarray
    values: np.ndarray


# --------------------------------------------------------------------------- scratch
# Made once per thread and call (:func:`.score.make_scratch`), so that no kernel
# allocates anything per query.

class RankScratch(NamedTuple):
    """:func:`.rank.rank_query`'s: ``top`` (the scores' dtype, a slot a rank) holds
    the selected values, then each group's value; ``gstart``/``gfill`` (a slot a
    rank, plus one) where each group's ranks start and the next rank it fills; the
    ranked summary ``gsize``/``ggain`` (a slot a rank) and, for optimistic and
    pessimistic ties, the gain at each rank ``rgain`` (a slot a row)."""
    top: np.ndarray
    gstart: np.ndarray
    gfill: np.ndarray
    gsize: np.ndarray
    ggain: np.ndarray
    rgain: np.ndarray


class ShortScratch(NamedTuple):
    """:func:`.rank.rank_short`'s and :func:`.rank.rank_pairs`': the first positions
    in rank order ``pos``, and the ranked summary ``gsize``/``ggain``."""
    pos: np.ndarray
    gsize: np.ndarray
    ggain: np.ndarray


class PackedScratch(NamedTuple):
    """:func:`.rank.rank_packed`'s: each row's packed key ``keys`` (uint64, a slot a
    row), the largest of them ``top`` (a slot a rank), and the ranked summary."""
    keys: np.ndarray
    top: np.ndarray
    gsize: np.ndarray
    ggain: np.ndarray


class IdealScratch(NamedTuple):
    """:func:`.ndcg.idcg_chunk`'s: the top gains ``top``, every gain of the query
    ``gains`` (then the gain sum of each run of equal gains), and each run's size
    ``rsize``."""
    top: np.ndarray
    gains: np.ndarray
    rsize: np.ndarray


class HistScratch(NamedTuple):
    """:func:`.ndcg.idcg_hist_chunk`'s: the count of each label ``counts``, the gain
    of each label in gain order ``hgain``, and the ideal ranking's summary by rank,
    ``rgain``/``rsize``."""
    counts: np.ndarray
    hgain: np.ndarray
    rgain: np.ndarray
    rsize: np.ndarray


class GroupScratch(NamedTuple):
    """:func:`.rank.flagged_groups`' (a slot a row, plus one): the flagged items'
    distinct scores ``uval`` (the scores' dtype) and how many flagged items have
    each ``mult``; per group its members ``gsz``, the items between it and the group
    above ``btw``, the next entry it fills ``fill``, and each flagged item's place
    in its group ``eord``; the entries: start rank ``estart``, size ``esize`` and
    flag counts ``ecnt[e, b]``."""
    uval: np.ndarray
    mult: np.ndarray
    gsz: np.ndarray
    btw: np.ndarray
    fill: np.ndarray
    eord: np.ndarray
    estart: np.ndarray
    esize: np.ndarray
    ecnt: np.ndarray


class GainScratch(NamedTuple):
    """:func:`.rank.gain_groups`' (a slot a row, plus one): the distinct scores of
    the items of non-zero gain ``uval`` (the scores' dtype) and how many such items
    have each ``mult``; per group its members ``gsz``, the items between it and the
    group above ``btw`` and the next entry it fills ``fill``; each item of non-zero
    gain's place in its group ``eord``; the entries: start rank ``estart``, size
    ``esize`` and gain sum ``egain``."""
    uval: np.ndarray
    mult: np.ndarray
    gsz: np.ndarray
    btw: np.ndarray
    fill: np.ndarray
    eord: np.ndarray
    estart: np.ndarray
    esize: np.ndarray
    egain: np.ndarray


class GradedScratch(NamedTuple):
    """:func:`.graded.graded_chunk`'s: a whole ranking (``rank``, a slot a row), the
    gains in rank order ``rg``, and the ideal gains ``igains``, sorted into ``itop``."""
    rank: RankScratch
    rg: np.ndarray
    igains: np.ndarray
    itop: np.ndarray


def plain(bundle: tuple) -> tuple:
    """``bundle`` as plain tuples (nested bundles too), the form a kernel called from
    Python takes it in (module docstring).

    >>> plain(Ideal(offsets=np.array([0, 1]), labels=np.array([2])))
    (array([0, 1]), array([2]))
    """
    return tuple([plain(x) if isinstance(x, tuple) else x for x in bundle])
