"""The driver that scores a batch of queries with the kernels (plain Python).

Steps, each a kernel over a chunk of queries: DCG (:mod:`.ndcg`) ranks each
query once down to its deepest cutoff (:mod:`.rank`) and walks the ranked
summary for every cutoff; the binary measures (:mod:`.binary`) read each query's
flagged tie groups; the graded measures (:mod:`.graded`) rank each query whole;
IDCG (:mod:`.ndcg`) comes from the ideal labels (the list's own in list mode,
every judged document of the query in qrels mode). DCG and IDCG have a kernel
for the usual case beside the general one (a cut of at most 64 ranks under
average/stable ties; small integer labels, counted), and a measure goes to the
kernel of its family (``codes.F_*``), chosen per call (:func:`choose_route`), so
a job compiles only the paths its options can reach. Queries are scored in
parallel over ``chunks`` (query boundaries balanced by rows) on several threads
(:mod:`.threads`), each with scratch arrays made once per call
(:func:`make_scratch`, in the named bundles of :mod:`.bundles`), so there is no
allocation per query. The kernels allocate nothing at all: they are compiled
without Numba's reference counting (``_nrt=False``), which would otherwise add
atomic increments and decrements for every array handed to a helper, on every
query.
"""

from __future__ import annotations

import functools
from typing import NamedTuple, Optional

import numpy as np

from .binary import measures_chunk, measures_chunk_all
from .bundles import (Cuts, GainScratch, GradedScratch, GroupScratch, HistScratch, IdealScratch,
                      Outputs, PackedScratch, RankScratch, ShortScratch, plain)
from .codes import AVERAGE, F_BASIC, F_BINARY, F_GRADED, STABLE
from .graded import graded_chunk
from .ndcg import (dcg_chunk, dcg_packed_chunk, dcg_short_chunk, dcg_sparse_chunk, idcg_chunk,
                   idcg_hist_chunk)
from .rank import SHORT_MAX
from .threads import run_chunks


def prefix_sums(values):
    """The prefix sums of ``values`` as two rows, read-only: row 0 [0, v0, v0 + v1,
    ...] each correctly rounded, row 1 what each misses of the exact sum (rounded),
    so that (hi[e] - hi[a]) + (lo[e] - lo[a]) is the sum of values[a:e] to about
    one rounding: a single value comes back exactly. Exact arithmetic costs ~0.5 ms
    for 64 values, so the result is kept for the discounts seen last (every batch
    of a log asks for the same ones)."""
    return _prefix_sums(np.ascontiguousarray(values, np.float64).tobytes())


@functools.lru_cache(maxsize=32)
def _prefix_sums(raw: bytes):
    from fractions import Fraction

    hi = [0.0]
    lo = [0.0]
    exact = Fraction(0)
    for v in np.frombuffer(raw, np.float64):
        exact += Fraction(float(v))
        hi.append(float(exact))
        lo.append(float(exact - Fraction(hi[-1])))
    out = np.array([hi, lo])
    out.flags.writeable = False
    return out


def make_cuts(ks: np.ndarray, disc: np.ndarray) -> Cuts:
    """The :class:`.bundles.Cuts` of the cutoffs ``ks`` (sorted, unique) and the
    discount of each rank ``disc``, with the prefix sums the short walk reads.

    >>> import numpy as np
    >>> make_cuts(np.array([1, 3]), np.array([1.0, 0.5, 0.25])).cdisc[0].tolist()
    [0.0, 1.0, 1.5, 1.75]
    """
    return Cuts(ks, disc, prefix_sums(disc[:SHORT_MAX]))


class Route(NamedTuple):
    """How a batch is scored (:func:`choose_route`): its longest list and longest
    ideal list (rows), and the kernels it takes. DCG: ``short`` (a cut of at most
    ``rank.SHORT_MAX`` ranks under average/stable ties: one pass), ``packed``
    (deeper cuts of float32 scores under average/stable ties: packed keys),
    ``shared`` (read off the graded kernel's whole ranking), else the general path.
    ``sparse`` (deeper cuts under average/stable ties, no graded measure: from the
    tie groups of the items with a gain, the other items only counted; it takes
    precedence over ``packed``).
    The measures, by family: ``basic`` (the usual binary measures alone: a kernel
    that compiles without the others), ``other`` (any binary measure), ``graded``."""
    longest: int
    ilongest: int
    short: bool
    packed: bool
    sparse: bool
    shared: bool
    basic: bool
    other: bool
    graded: bool


def choose_route(lists, ideal, cuts: Cuts, ties: int, families: np.ndarray,
                 want_dcg: bool) -> Route:
    """The :class:`Route` of a batch of ``lists`` and ``ideal`` lists: by cutoff, tie
    rule and score type for DCG, by the measures' ``families`` for the measures."""
    longest = max(1, int(np.diff(lists.offsets).max(initial=0)))
    ilongest = max(1, int(np.diff(ideal.offsets).max(initial=0)))
    plain_ties = ties in (AVERAGE, STABLE)
    short = min(int(cuts.ks[-1]), longest) <= SHORT_MAX and plain_ties
    present = set(families.tolist())
    graded = F_GRADED in present
    sparse = want_dcg and not short and plain_ties and not graded
    packed = want_dcg and not short and not sparse and plain_ties and \
        lists.scores.dtype == np.float32
    other = F_BINARY in present
    basic = not other and F_BASIC in present
    # the gain measures rank each query whole: DCG's general path reads that ranking
    shared = graded and want_dcg and not short and not packed
    return Route(longest, ilongest, short, packed, sparse, shared, basic, other, graded)


class Scratch(NamedTuple):
    """One thread's scratch bundles, those its batch's route uses (else None), as
    the kernels take them (:func:`.bundles.plain`)."""
    rank: Optional[tuple]
    short: Optional[tuple]
    packed: Optional[tuple]
    sparse: Optional[tuple]
    groups: Optional[tuple]
    graded: Optional[tuple]
    hist: Optional[tuple]
    ideal: Optional[tuple]


def _ints(n: int) -> np.ndarray:
    return np.zeros(max(1, n), np.int64)


def _floats(n: int) -> np.ndarray:
    return np.zeros(max(1, n))


def _ranking(dtype, ranks: int, rows: int) -> RankScratch:
    """:func:`.rank.rank_query`'s scratch for ``ranks`` ranks of lists of ``rows``
    rows (``rgain``: 1 slot when the tie rule does not read it)."""
    return RankScratch(top=np.empty(max(1, ranks), dtype), gstart=_ints(ranks + 1),
                       gfill=_ints(ranks + 1), gsize=_ints(ranks + 1), ggain=_floats(ranks),
                       rgain=_floats(rows))


def make_scratch(route: Route, dtype, kdeep: int, ties: int, hist_order: np.ndarray,
                 n_bits: int, want_dcg: bool, want_idcg: bool) -> Scratch:
    """The scratch arrays of one thread for a batch of ``route``, scores of ``dtype``
    and DCG down to rank ``kdeep`` at most (a slot a rank or a row, as each bundle's
    doc says)."""
    longest, ilongest = route.longest, route.ilongest
    ranks = min(kdeep, longest)  # DCG's deepest rank
    dcg = want_dcg and not route.shared
    rank = short = packed = sparse = groups = graded = hist = ideal = None
    if dcg and route.sparse:
        rows = longest + 1
        sparse = GainScratch(uval=np.empty(rows, dtype), mult=_ints(rows), gsz=_ints(rows),
                             btw=_ints(rows), fill=_ints(rows), eord=_ints(rows),
                             estart=_ints(rows), esize=_ints(rows), egain=_floats(rows))
        rank = _ranking(dtype, ranks, 1)  # the queries of many gains
    elif dcg and route.packed:
        packed = PackedScratch(keys=np.empty(longest, np.uint64),
                               top=np.empty(max(1, ranks), np.uint64), gsize=_ints(ranks + 1),
                               ggain=_floats(ranks))
    elif dcg and route.short:
        short = ShortScratch(pos=_ints(ranks + 1), gsize=_ints(ranks + 1), ggain=_floats(ranks))
    elif dcg:
        rank = _ranking(dtype, ranks, longest if ties not in (AVERAGE, STABLE) else 1)
    if route.basic or route.other:
        rows = longest + 1
        groups = GroupScratch(uval=np.empty(rows, dtype), mult=_ints(rows), gsz=_ints(rows),
                              btw=_ints(rows), fill=_ints(rows), eord=_ints(rows),
                              estart=_ints(rows), esize=_ints(rows),
                              ecnt=np.zeros((rows, max(n_bits, 1)), np.int64))
    if route.graded:
        graded = GradedScratch(rank=_ranking(dtype, longest, longest), rg=_floats(longest),
                               igains=_floats(ilongest), itop=_floats(ilongest))
    if want_idcg and len(hist_order):
        hist = HistScratch(counts=_ints(int(hist_order.max()) + 1),
                           hgain=_floats(len(hist_order)), rgain=_floats(ilongest),
                           rsize=_ints(ilongest))
    elif want_idcg:
        ideal = IdealScratch(top=_floats(ilongest), gains=_floats(ilongest),
                             rsize=_ints(ilongest))
    return Scratch(*[None if b is None else plain(b)
                     for b in (rank, short, packed, sparse, groups, graded, hist, ideal)])


def score_batch(lists, ideal, cuts: Cuts, rules, plan, hist_order: np.ndarray,
                chunks: np.ndarray, want_dcg: bool, want_idcg: bool, out: Outputs) -> None:
    """Every requested value of every query, chunks of queries on several threads
    (:func:`.threads.run_chunks`), each thread with its own scratch: per chunk,
    each step that is asked for runs over the chunk's queries (DCG, the binary
    measures, the graded measures, IDCG); a step not asked for is not even compiled.

    ``lists``/``ideal``: the batch's lists and its ideal labels
    (:class:`.bundles.Lists`, :class:`.bundles.Ideal`); ``cuts``: the DCG/IDCG
    cutoffs (:func:`make_cuts`; ``out.dcg``/``out.idcg`` are (n_q, len(cuts.ks)));
    DCG ranks each query down to the deepest of them; ``rules``: gain and ties
    (:class:`.bundles.Rules`); ``plan``: the measures (:class:`.bundles.Measures`),
    measure j into ``out.values[:, j]``; ``hist_order``: the label values by gain
    when labels are counted for IDCG (else empty); ``chunks``: the query
    boundaries of the chunks."""
    route = choose_route(lists, ideal, cuts, rules.ties, plan.families, want_dcg)
    kdeep, ties, dtype, n_bits = int(cuts.ks[-1]), rules.ties, lists.scores.dtype, int(plan.n_bits)
    packed_lists = plain(lists._replace(scores=lists.scores.view(np.uint32))) if route.packed \
        else None
    # the bundles as the kernels take them (.bundles)
    lists, ideal, cuts, rules, plan = map(plain, (lists, ideal, cuts, rules, plan))

    def make():
        return make_scratch(route, dtype, kdeep, ties, hist_order, n_bits, want_dcg, want_idcg)

    def work(c, s):
        q0, q1 = chunks[c], chunks[c + 1]
        if s.sparse is not None:
            dcg_sparse_chunk(q0, q1, lists, cuts, rules, s.sparse, s.rank, out.dcg)
        elif s.packed is not None:
            dcg_packed_chunk(q0, q1, packed_lists, cuts, rules, s.packed, out.dcg)
        elif s.short is not None:
            dcg_short_chunk(q0, q1, lists, cuts, rules, s.short, out.dcg)
        elif s.rank is not None:
            dcg_chunk(q0, q1, lists, cuts, rules, s.rank, out.dcg)
        if route.other:
            measures_chunk_all(q0, q1, lists, ties, plan, s.groups, out.values)
        elif route.basic:
            measures_chunk(q0, q1, lists, ties, plan, s.groups, out.values)
        if route.graded:
            graded_chunk(q0, q1, lists, ideal, rules, plan, s.graded, out.values, route.shared,
                         cuts, out.dcg)
        if s.hist is not None:
            idcg_hist_chunk(q0, q1, ideal, cuts, rules, hist_order, s.hist, out.idcg)
        elif s.ideal is not None:
            idcg_chunk(q0, q1, ideal, cuts, rules, s.ideal, out.idcg)

    run_chunks(len(chunks) - 1, work, make)
