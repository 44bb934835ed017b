"""Shared internals of the scoring path: option checks, numeric columns, value
checks and the kernel driver.

:mod:`fastndcg.api` (arrays) and the evaluation modules (search logs) both build a
:class:`Batch` and call :func:`run_kernels`; nothing here is public API, but the
names are public within the package, so no module reaches into another's
underscored names.
"""

from __future__ import annotations

import math
import numbers
import threading
import dataclasses
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import _kernels as K
from . import _validate as V
from ._validate import shown


GAIN_NAMES = {"exp2": K.EXP2, "linear": K.LINEAR}


TIES = {"average": K.AVERAGE, "stable": K.STABLE, "optimistic": K.OPTIMISTIC,
         "pessimistic": K.PESSIMISTIC}


HIST_LABELS = 32  # integer labels 0..31 are counted for IDCG instead of selected


EXP2_MAX_LABEL = 1023.0  # 2**1024 overflows a float64


EXP2_TABLE = 2.0 ** np.arange(64) - 1.0  # exact exp2 gains of the labels 0..63


# Numba's "workqueue" threading layer aborts on concurrent parallel launches; the
# kernels already use every core, so calls from several Python threads take turns.
KERNEL_LOCK = threading.Lock()


def check_choice(name: str, value, choices) -> str:
    if not isinstance(value, str) or value not in choices:
        listed = ", ".join(repr(c) for c in choices)
        raise V.refuse(ValueError, name, value,
                       f"{V.spelled(name)} must be one of {listed}; got {V.shown(value)}")
    return value


def parse_cutoffs(k) -> tuple[list, bool]:
    """Validated cutoffs as a list (None = whole list) and whether k was a sequence."""
    def one(v, where):
        if v is None:  # the whole list (also inside a list: trec_eval's -m ndcg -m ndcg_cut)
            return None
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Integral):
            if where == K_:
                raise V.refuse(TypeError, "k", k, f"{K_} must be an int >= 1 or None, got "
                               f"{V.shown(v)} ({type(v).__name__}); for several cutoffs pass a "
                               f"list such as {V.spelled('k', '[1, 3, 5, 10]', '1,3,5,10')}")
            raise V.refuse(TypeError, "k", k, f"{where} must be an int >= 1, got {V.shown(v)} "
                           f"({type(v).__name__}); a list of cutoffs holds ints (and None for "
                           f"the whole list)")
        if v < 1:
            raise V.refuse(ValueError, "k", k, f"{where} must be >= 1, got {int(v)}; pass a "
                           f"positive cutoff such as {V.spelled('k', 10)}, or "
                           f"{V.spelled('k', 'None', 'all')} for the whole list")
        if v > V.MAX_CUTOFF:
            raise V.refuse(ValueError, "k", k, f"{where} must be <= {V.MAX_CUTOFF:,}, got "
                           f"{int(v):,}; for the whole list pass {V.spelled('k', 'None', 'all')}")
        return int(v)

    K_ = V.spelled("k")

    if k is None or isinstance(k, (numbers.Integral, np.bool_)):
        return [one(k, K_)], False
    if isinstance(k, (str, bytes)) or not hasattr(k, "__iter__"):
        raise V.refuse(TypeError, "k", k, f"{K_} must be an int, None or a sequence of ints, "
                       f"got {V.shown(k)} ({type(k).__name__})")
    if isinstance(k, (set, frozenset, dict)):
        raise V.refuse(TypeError, "k", k, f"{K_} must be an ordered sequence of cutoffs (a list "
                       f"or tuple, e.g. {V.spelled('k', '[1, 3, 10]', '1,3,10')}), got a "
                       f"{type(k).__name__}: {V.shown(k)}")
    if isinstance(k, np.ndarray) and k.ndim != 1:
        raise V.refuse(ValueError, "k", k, f"{K_} must be a 1-D sequence of cutoffs, got an "
                       f"array of shape {k.shape}")
    values = list(k)
    if not values:
        raise V.refuse(ValueError, "k", k, f"{K_} is an empty sequence; pass at least one "
                       f"cutoff, e.g. {V.spelled('k', '[10]', '10')}")
    return [one(v, f"k[{i}]") for i, v in enumerate(values)], True


def parse_log_base(value) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise V.refuse(TypeError, "log_base", value, f"{V.spelled('log_base')} must be a real "
                       f"number > 1, got {V.shown(value)} ({type(value).__name__})")
    if not (math.isfinite(value) and value > 1):
        raise V.refuse(ValueError, "log_base", value, f"{V.spelled('log_base')} must be a finite "
                       f"number > 1, got {V.shown(value)}; the usual choice is "
                       f"{V.spelled('log_base', 2)}")
    return float(value)


def same_gain(a, b) -> bool:
    """Whether two gain arguments ("exp2", "linear" or tables) mean the same gain."""
    if isinstance(a, str) or isinstance(b, str):
        return isinstance(a, str) and isinstance(b, str) and a == b
    if isinstance(a, V.TrecGains) or isinstance(b, V.TrecGains):
        return a == b
    try:
        return list(map(float, a)) == list(map(float, b))
    except (TypeError, ValueError):
        return False


@dataclass(frozen=True)
class Gain:
    mode: int
    table: np.ndarray  # float64; length 1 (unused) unless mode == TABLE
    name: str = ""     # how messages name a table that came from a measure name

    def describe(self) -> str:
        return {K.EXP2: "gain='exp2'", K.LINEAR: "gain='linear'"}.get(
            self.mode, self.name or f"a gain table of length {len(self.table)}")


def parse_gain(gain) -> Gain:
    if isinstance(gain, V.TrecGains):  # trec_eval's grade=gain pairs, read from a name
        return Gain(K.TABLE, np.array(gain.table()), f"trec_eval's gains {gain}")
    G = V.spelled("gain")

    def refused(kind, message):
        return V.refuse(kind, "gain", gain, message)
    if isinstance(gain, str):
        if gain not in GAIN_NAMES:
            raise refused(ValueError, f"{G} must be 'exp2', 'linear' or a 1-D table of gains "
                                      f"indexed by integer label, got {V.shown(gain)}")
        mode = GAIN_NAMES[gain]
        return Gain(mode, EXP2_TABLE if mode == K.EXP2 else np.zeros(1))
    if gain is None or isinstance(gain, (numbers.Number, bytes)):
        raise refused(TypeError, f"{G} must be 'exp2', 'linear' or a 1-D table of gains indexed "
                                 f"by integer label (e.g. [0, 1, 3, 7]), got {V.shown(gain)}")
    if np.asarray(gain).dtype.kind in "USO" and any(
            isinstance(g, (str, bytes)) for g in np.asarray(gain, dtype=object).ravel()):
        raise refused(TypeError, f"{G} must be 'exp2', 'linear' or a 1-D table of numbers, got "
                                 f"{V.shown(gain)}; write the gains as numbers, e.g. [0, 1, 3, 7]")
    try:
        table = np.array(gain, dtype=np.float64)
    except (TypeError, ValueError):
        raise refused(TypeError, f"{G} must be 'exp2', 'linear' or a 1-D table of numbers, got "
                                 f"{V.shown(gain)}") from None
    if table.ndim != 1 or len(table) == 0:
        raise refused(ValueError, f"a gain table must be a non-empty 1-D sequence (gain[label], "
                                  f"e.g. [0, 1, 3, 7]), got shape {table.shape}")
    if not np.isfinite(table).all():
        raise refused(ValueError, f"the gain table must hold finite numbers, got {table.tolist()}")
    if (table < 0).any():
        i = int(np.flatnonzero(table < 0)[0])
        raise refused(ValueError, f"the gain table must hold gains >= 0, got gain[{i}] = "
                                  f"{table[i]}: a negative gain can push NDCG above 1 (the ideal "
                                  f"order puts it last); use 0 for labels that should count as "
                                  f"irrelevant")
    return Gain(K.TABLE, table)


# Each dtype reaching the kernels is one compiled specialisation (tens of seconds
# the first time), so inputs are converted at the boundary to two score types
# (float32, float64) and two label types (int32, float64), exactly: scores keep
# their order and ties, labels their gains. See docs/guide/arrays.md (Inputs).
F32_EXACT = 2 ** 24  # integers up to this magnitude are exact in float32
F64_EXACT = 2 ** 53


def dense_ranks(values: np.ndarray) -> np.ndarray:
    """Floats ordered and tied exactly like ``values`` (their ranks among the
    distinct values): for integers beyond 2**53 and long doubles, which no float
    type holds exactly."""
    if values.dtype.kind == "f":
        nan = np.isnan(values)
        if nan.any():  # NaN stays NaN, for the NaN checks that follow
            ranks = dense_ranks(values[~nan])
            out = np.full(len(values), np.nan, ranks.dtype)
            out[~nan] = ranks
            return out
    distinct, ranks = np.unique(values, return_inverse=True)
    return ranks.astype(np.float32 if len(distinct) <= F32_EXACT else np.float64)


def _int_range(arr: np.ndarray) -> tuple[int, int]:
    return (int(arr.min()), int(arr.max())) if len(arr) else (0, 0)


def kernel_scores(arr: np.ndarray) -> np.ndarray:
    """Scores as float32 or float64, ranking exactly like ``arr``."""
    kind, size = arr.dtype.kind, arr.dtype.itemsize
    if kind == "f":
        if size in (4, 8):
            return arr
        return arr.astype(np.float32) if size < 4 else dense_ranks(arr)
    if kind == "b" or size <= 2:
        return arr.astype(np.float32)
    lo, hi = _int_range(arr)
    if -F32_EXACT <= lo and hi <= F32_EXACT:
        return arr.astype(np.float32)
    if -F64_EXACT <= lo and hi <= F64_EXACT:
        return arr.astype(np.float64)
    return dense_ranks(arr)


def kernel_labels(arr: np.ndarray) -> np.ndarray:
    """Labels as int32 or float64 with the same gains (the kernels compute gains
    in float64: an integer beyond int32 becomes the float64 it is used as)."""
    kind, size = arr.dtype.kind, arr.dtype.itemsize
    if kind == "f":
        return arr if size == 8 else arr.astype(np.float64)
    if arr.dtype == np.int32:  # already a kernel type: no copy
        return arr
    if kind == "b" or size <= 2:
        return arr.astype(np.int32)
    lo, hi = _int_range(arr)
    if np.iinfo(np.int32).min <= lo and hi <= np.iinfo(np.int32).max:
        return arr.astype(np.int32)
    return arr.astype(np.float64)


def numeric(arr: np.ndarray, name: str, convert=None) -> np.ndarray:
    """``arr`` checked to hold numbers, in native byte order, through ``convert``
    (:func:`kernel_scores` or :func:`kernel_labels`) when given."""
    kind = arr.dtype.kind
    if kind not in "biuf":
        values = arr.ravel().tolist()
        bad = next((i for i, v in enumerate(values) if kind != "O" or v is None
                    or isinstance(v, bool) or not isinstance(v, numbers.Real)), None)
        hint = " (missing values?)" if kind == "O" and (bad is None or values[bad] is None) else ""
        if bad is not None:  # the first value that is not a number
            hint += f": {shown(values[bad])} at row {bad} is not a number"
        raise TypeError(f"{name} must hold numbers, got dtype {arr.dtype}{hint}; convert it, "
                        f"e.g. numpy.asarray({name}, dtype=float)")
    if not arr.dtype.isnative:
        arr = arr.astype(arr.dtype.newbyteorder("="))
    return convert(arr) if convert is not None else arr


def frozen(arr: np.ndarray) -> np.ndarray:
    """A C-contiguous read-only view (a copy only if ``arr`` is strided): kernels
    read their inputs as one array type, so writable, read-only and strided
    inputs share one compiled variant."""
    arr = np.ascontiguousarray(arr)
    if arr.flags.writeable:
        arr = arr.view()
        arr.flags.writeable = False
    return arr


@dataclass
class Batch:
    """Clean CSR input for the kernels, plus what is needed to name a query."""
    offsets: np.ndarray
    scores: np.ndarray
    labels: np.ndarray
    ids: Any = None  # query id of each query (first-appearance order), or None
    raw: Any = None  # the labels before the negative_labels policy (for relevance)

    @property
    def n_queries(self) -> int:
        return len(self.offsets) - 1

    def name(self, q: int) -> str:
        if self.ids is not None:
            return f"query {self.ids[q]!r} (query index {q})"
        return f"query {q} (rows {self.offsets[q]}:{self.offsets[q + 1]})"

    def query_of_row(self, row: int) -> int:
        return int(np.searchsorted(self.offsets, row, side="right") - 1)


def plain(value):
    """A NumPy scalar as the plain Python number it is (for messages)."""
    return value.item() if hasattr(value, "item") else value


@dataclass(frozen=True)
class LabelInfo:
    integer: bool
    lo: float
    hi: float


def scan(batch: Batch, check_scores: bool, check_labels: bool = True
         ) -> tuple[np.ndarray, LabelInfo]:
    # unchecked scores: an empty float64 array (one compiled variant whatever they are);
    # unchecked labels: an empty array of their type (the variant that checks them)
    scores = batch.scores if check_scores else np.zeros(0, np.float64)
    labels = batch.labels if check_labels else batch.labels[:0]
    n_chunks = max(1, min(64, len(batch.labels) // 65536))
    first, lmin, lmax = K.scan_values(frozen(scores), frozen(labels), n_chunks)
    firsts = np.where(first < 0, np.iinfo(np.int64).max, first).min(axis=0)
    firsts[firsts == np.iinfo(np.int64).max] = -1
    lo, hi = float(lmin.min()), float(lmax.max())
    if lo > hi:  # no finite label at all (no rows)
        lo = hi = 0.0
    return firsts, LabelInfo(bool(firsts[K.SCAN_FRACTION] < 0), lo, hi)


def check_values(batch: Batch, gain: Gain, nan_scores: str, negative_labels: str,
                  check_scores: bool = True, labels_checked: LabelInfo | None = None
                  ) -> LabelInfo:
    """Raise for bad values; replace NaN scores / negative labels per the policies.
    ``labels_checked``: the labels were checked before (a qrels' joined labels: the
    qrels' own, checked when they were read, and 0), and this is what is known of
    them; only the scores are read then.

    Updates ``batch`` in place with new arrays (never the caller's arrays)."""
    firsts, info = scan(batch, check_scores, labels_checked is None)
    if labels_checked is not None:
        info = labels_checked
    labels = batch.labels
    row = firsts[K.SCAN_BAD_LABEL]
    if row >= 0:
        raise ValueError(f"labels must be finite, but {batch.name(batch.query_of_row(row))} "
                         f"has label {plain(labels[row])!r}; drop or fix those rows")
    row = firsts[K.SCAN_NAN_SCORE]
    if row >= 0:
        if nan_scores == "error":
            raise ValueError(f"scores contain NaN (first in {batch.name(batch.query_of_row(row))}); "
                             f"pass nan_scores='last' to rank NaN below every score, or drop "
                             f"those rows")
        batch.scores = nan_last(batch.scores)
    row = firsts[K.SCAN_NEGATIVE]
    if row >= 0:
        if negative_labels == "error":
            raise ValueError(f"labels must not be negative, but "
                             f"{batch.name(batch.query_of_row(row))} has label "
                             f"{plain(labels[row])!r}; "
                             f"pass negative_labels='zero' to treat negatives as 0 (as "
                             f"trec_eval does) or 'keep' to use them as they are")
        if negative_labels == "zero":
            batch.labels = np.maximum(labels, labels.dtype.type(0))
            integer = info.integer
            if not integer:  # the fractions may all have been negative, now 0
                integer = bool((batch.labels == np.floor(batch.labels)).all())
                firsts[K.SCAN_FRACTION] = -1 if integer else int(
                    np.flatnonzero(batch.labels != np.floor(batch.labels))[0])
            info = LabelInfo(integer, max(info.lo, 0.0), max(info.hi, 0.0))
    if gain.mode == K.TABLE:
        row = firsts[K.SCAN_FRACTION]
        if row < 0 and (info.lo < 0 or info.hi >= len(gain.table)):
            row = int(np.flatnonzero((batch.labels < 0) | (batch.labels >= len(gain.table)))[0])
        if row >= 0:
            fix = ("name gains for grades up to that only, or leave the gain pairs out"
                   if gain.name else "extend the table or use gain='exp2'/'linear'")
            raise ValueError(f"with {gain.describe()} labels must be integers 0..{len(gain.table) - 1}, "
                             f"but {batch.name(batch.query_of_row(row))} has label "
                             f"{plain(batch.labels[row])!r}; {fix}")
    if gain.mode == K.EXP2 and info.hi > EXP2_MAX_LABEL:
        row = int(np.flatnonzero(batch.labels > EXP2_MAX_LABEL)[0])
        raise ValueError(f"label {plain(batch.labels[row])!r} in "
                         f"{batch.name(batch.query_of_row(row))} "
                         f"overflows gain='exp2' (2**label - 1 is infinite above label 1023); "
                         f"use gain='linear' or rescale the labels")
    return info


def nan_last(scores: np.ndarray) -> np.ndarray:
    """Scores (float32/float64) ordered like ``scores`` with NaN below -inf, all
    NaN tied: NaN becomes -inf where no score is -inf, else every score becomes
    its rank (NaN one below the lowest)."""
    nan = np.isnan(scores)
    if not np.isneginf(scores).any():
        return np.where(nan, scores.dtype.type(-np.inf), scores)
    ranks = dense_ranks(scores)
    ranks[nan] = -1
    return ranks


def tied_queries(offsets: np.ndarray, scores: np.ndarray) -> np.ndarray | None:
    """Which queries (CSR ``offsets``) have two equal scores (-0.0 equals 0.0) or a
    NaN one, a bool a query; None when none has. Under a rule that breaks ties by
    the rows' order ("stable" on an order such as trec_eval's), only these queries'
    rankings depend on that order.

    >>> tied_queries(np.array([0, 2, 4]), np.array([1.0, 1.0, 0.0, -0.0])).tolist()
    [True, True]
    >>> tied_queries(np.array([0, 2]), np.array([2.0, 1.0])) is None
    True
    """
    n_q = len(offsets) - 1
    if not n_q:
        return None
    bits = frozen(scores).view(np.uint64 if scores.dtype.itemsize == 8 else np.uint32)
    out = np.empty(n_q, np.uint8)
    with KERNEL_LOCK:
        K.tied_groups(frozen(offsets), bits, work_chunks(offsets, offsets), out)
    tied = out.view(bool)
    return tied if tied.any() else None


def ranx_order(offsets: np.ndarray, scores: np.ndarray, tied: np.ndarray | None
               ) -> np.ndarray | None:
    """ties="ranx": the rows of each query (CSR ``offsets``) in the order ranx's
    ranking puts them (Numba's quicksort of the negated scores, not stable), sorted
    only for the queries ``tied`` flags (:func:`tied_queries`); the others keep
    their input order, which ranks the same. None when no query ties.

    >>> ranx_order(np.array([0, 3, 5]), np.array([1.0, 3.0, 1.0, 2.0, 5.0]),
    ...            np.array([True, False])).tolist()
    [1, 0, 2, 3, 4]
    """
    if tied is None:
        return None
    out = np.empty(int(offsets[-1]), np.int64)
    offsets = frozen(np.asarray(offsets, np.int64))
    with KERNEL_LOCK:  # on every core, as tied_queries: callers' threads take turns
        K.argsort_order(offsets, frozen(np.asarray(scores, np.float64)),
                        frozen(np.asarray(tied).view(np.uint8)), work_chunks(offsets, offsets),
                        out)
    return out


def at_or_above_kth(offsets: np.ndarray, groups: np.ndarray, scores: np.ndarray,
                    k: int) -> tuple[np.ndarray, np.ndarray]:
    """(keep, unsure): for each group of ``groups`` (CSR ``offsets``, each longer than
    ``k``), whether each row's score is at or above the group's k-th largest (ties
    with it kept; rows of other groups: True), and which of ``groups`` hold a NaN
    score, left for the caller to order (keep is True there).

    >>> keep, unsure = at_or_above_kth(np.array([0, 4]), np.array([0]),
    ...                                np.array([3.0, 1.0, 2.0, 2.0]), 2)
    >>> keep.tolist(), unsure.tolist()
    ([True, False, True, True], [False])
    """
    keep = np.ones(int(offsets[-1]), bool)
    unsure = np.zeros(len(groups), bool)
    K.at_or_above_kth(frozen(np.asarray(offsets, np.int64)), frozen(np.asarray(groups, np.int64)),
                      frozen(np.asarray(scores, np.float64)), int(k), keep, unsure)
    return keep, unsure


def work_chunks(offsets: np.ndarray, ioffsets: np.ndarray) -> np.ndarray:
    """Query boundaries splitting the batch into chunks of about equal work."""
    from ._kernels.threads import thread_count

    n_q = len(offsets) - 1
    n_chunks = max(1, min(n_q, 8 * thread_count()))
    cost = offsets[1:] + 8 * np.arange(1, n_q + 1)  # rows plus a per-query overhead
    if ioffsets is not offsets:
        cost = cost + ioffsets[1:]
    targets = np.linspace(0, cost[-1], n_chunks + 1)[1:-1]
    inner = np.searchsorted(cost, targets, side="right")
    return np.unique(np.concatenate(([0], inner, [n_q]))).astype(np.int64)


def discounts(length: int, log_base: float) -> np.ndarray:
    # the same expression as scikit-learn, so discounts agree to the last bit
    with np.errstate(divide="ignore"):
        return 1 / (np.log(np.arange(length) + 2) / np.log(log_base))


def hist_order(gain: Gain, info: LabelInfo) -> np.ndarray:
    """Label values by gain, highest first, when labels are small non-negative ints."""
    if not (info.integer and info.lo >= 0 and info.hi < HIST_LABELS):
        return np.zeros(0, np.int64)
    values = np.arange(int(info.hi) + 1)
    gains = gain.table[values] if gain.mode == K.TABLE else values.astype(np.float64)
    return values[np.argsort(-gains, kind="stable")].astype(np.int64)


@dataclass
class MeasurePlan:
    """What the measures need from the kernels: measure j has code ``codes[j]``,
    family ``families[j]`` (``codes.F_*``: the kernel that scores it), cutoff
    ``cutoffs[j]`` (-1: the whole list) and reads flag bit ``bits[j]``, with number
    parameters ``params[j]`` (float64, a row per measure); ``flags`` holds those
    bits per row (uint8, empty when no measure reads flags); ``n_rel[q, b]`` is R
    of query q at bit b."""
    codes: np.ndarray
    cutoffs: np.ndarray
    bits: np.ndarray
    flags: np.ndarray
    n_rel: np.ndarray
    n_bits: int = 0
    params: np.ndarray = field(default_factory=lambda: np.zeros((0, 1)))
    families: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))

    @property
    def n_measures(self) -> int:
        return len(self.codes)

    @property
    def binary(self) -> np.ndarray:
        """The indices of the binary measures (those read from flag bits alone)."""
        return np.flatnonzero(self.families != K.F_GRADED)

    @property
    def graded(self) -> np.ndarray:
        """The indices of the graded measures (those that read the gains)."""
        return np.flatnonzero(self.families == K.F_GRADED)

    def rows(self, which: np.ndarray) -> "MeasurePlan":
        """The plan of measures ``which`` alone (indices into this plan's)."""
        return dataclasses.replace(self, codes=self.codes[which], cutoffs=self.cutoffs[which],
                                   bits=self.bits[which], params=self.params[which],
                                   families=self.families[which])

    @staticmethod
    def side_by_side(plans: list) -> "MeasurePlan":
        """One plan of the measures of ``plans`` (plans of the same measures over the
        same rows, as several label sets have), set after set: plan i's flag bits
        moved up by i times their number, so one pass scores them all (the flags of
        every plan together must fit in a row's 8 bits).

        >>> one = MeasurePlan(np.array([5]), np.array([10]), np.array([[0, 0, 0]]),
        ...                   np.array([1, 0], np.uint8), np.array([[1], [0]]), 1)
        >>> two = dataclasses.replace(one, flags=np.array([0, 1], np.uint8),
        ...                           n_rel=np.array([[0], [1]]))
        >>> both = MeasurePlan.side_by_side([one, two])
        >>> both.flags.tolist(), both.bits.tolist(), both.n_rel.tolist()
        ([1, 2], [[0, 0, 0], [1, 1, 1]], [[1, 0], [0, 1]])
        """
        nb = plans[0].n_bits
        assert nb * len(plans) <= 8, "more flag bits than a row has"
        flags = np.zeros(len(plans[0].flags), np.uint8)
        for i, p in enumerate(plans):
            flags |= p.flags << np.uint8(i * nb)
        return MeasurePlan(np.concatenate([p.codes for p in plans]),
                           np.concatenate([p.cutoffs for p in plans]),
                           np.concatenate([p.bits + i * nb for i, p in enumerate(plans)]),
                           flags, np.hstack([p.n_rel[:, :nb] for p in plans]),
                           nb * len(plans), np.vstack([p.params for p in plans]),
                           np.concatenate([p.families for p in plans]))

    def for_kernels(self):
        """The plan as the kernels take it (:class:`fastndcg._kernels.bundles.Measures`),
        every array read-only."""
        F = frozen
        return K.Measures(codes=F(self.codes), families=F(self.families),
                          cutoffs=F(self.cutoffs), bits=F(self.bits), params=F(self.params),
                          flags=F(self.flags), n_bits=np.int64(self.n_bits),
                          n_rel=F(self.n_rel))


def make_plan(lay, flags: np.ndarray, n_rel: np.ndarray) -> MeasurePlan:
    """The plan of a :class:`fastndcg.measures.Layout` for one batch: its flags per
    row and R per query."""
    def ints(values):
        return np.array(values, np.int64)

    width = max([1] + [len(p) for p in lay.params])
    params = np.zeros((len(lay.codes), width))
    for j, p in enumerate(lay.params):
        params[j, :len(p)] = p
    return MeasurePlan(ints(lay.codes), ints(lay.cutoffs), ints(lay.bits).reshape(-1, 3),
                       flags if lay.n_bits else np.zeros(0, np.uint8), n_rel,
                       lay.n_bits, params, ints(lay.families))


def no_measures(n_q: int) -> MeasurePlan:
    empty = np.zeros(0, np.int64)
    return MeasurePlan(empty, empty, np.zeros((0, 3), np.int64), np.zeros(0, np.uint8),
                       np.zeros((n_q, 1), np.int64))


def run_kernels(batch: Batch, cutoffs: list, gain: Gain, tmode: int, log_base: float,
                info: LabelInfo, want_dcg: bool, want_idcg: bool, ideal: Batch | None = None,
                plan: MeasurePlan | None = None):
    """DCG and IDCG, each (n_queries, len(cutoffs)) float64 (or None if not wanted),
    and the values of ``plan``'s measures, (n_queries, n_measures) (or None): every
    query is ranked once for all of them."""
    ideal = batch if ideal is None else ideal
    n_q = batch.n_queries
    plan = no_measures(n_q) if plan is None else plan
    lengths = np.diff(batch.offsets)
    longest = max(1, int(lengths.max(initial=0)), int(np.diff(ideal.offsets).max(initial=0)))
    effective = [longest if c is None else min(c, longest) for c in cutoffs]
    unique = sorted(set(effective)) or [1]
    columns = [unique.index(e) for e in effective]
    want_dcg = want_dcg and bool(cutoffs)
    want_idcg = want_idcg and bool(cutoffs)
    labels, ilabels = batch.labels, ideal.labels
    if labels.dtype != ilabels.dtype:  # one label type for both: one compiled variant
        labels, ilabels = labels.astype(np.float64), ilabels.astype(np.float64)
    out_dcg = np.zeros((n_q, len(unique)))
    out_idcg = np.zeros((n_q, len(unique)))
    out_m = np.zeros((n_q, plan.n_measures))
    if n_q:
        F = frozen
        lists = K.Lists(F(batch.offsets), F(batch.scores), F(labels))
        ideal_lists = K.Ideal(F(ideal.offsets), F(ilabels))
        cuts = K.make_cuts(F(np.array(unique, np.int64)),
                           F(discounts(max(unique[-1], 1), log_base)))
        rules = K.Rules(gain.mode, F(gain.table), tmode)
        with KERNEL_LOCK:
            K.score_batch(lists, ideal_lists, cuts, rules, plan.for_kernels(),
                          F(hist_order(gain, info)), F(work_chunks(batch.offsets, ideal.offsets)),
                          want_dcg, want_idcg, K.Outputs(out_dcg, out_idcg, out_m))
    if columns != list(range(len(unique))):  # repeated or unsorted cutoffs
        out_dcg, out_idcg = out_dcg[:, columns], out_idcg[:, columns]
    return (out_dcg if want_dcg else None,
            out_idcg if want_idcg else None,
            out_m if plan.n_measures else None)


def check_finite(values: np.ndarray, batch: Batch, what: str) -> None:
    """Gains near 2**1023 can sum past the largest float: say so, never return NaN."""
    bad = ~np.isfinite(values)
    if bad.any():
        _overflow(what, batch, int(np.argwhere(bad)[0][0]))


def _overflow(what: str, batch: Batch, q: int):
    raise ValueError(f"{what} overflows for {batch.name(q)}: its gains are too large to "
                     f"add up in float64; use gain='linear' or rescale the labels")


def normalise(dcg: np.ndarray, idcg: np.ndarray, zero_idcg: str, batch: Batch,
              cutoffs: list, in_place: bool = False) -> np.ndarray:
    """NDCG from DCG and IDCG ((n_queries, n_cutoffs) float64), with the
    ``zero_idcg`` rule where IDCG is 0, in one compiled pass that also checks both
    are finite (see :func:`check_finite`). ``in_place``: written over ``dcg``
    (an array of the caller's own that nothing reads after), which saves a new
    array (its first touch: ~8 ns a query of four cutoffs)."""
    out = dcg if in_place else np.empty(dcg.shape)
    first = np.full(3, -1, np.int64)
    if dcg.size:
        fill = {"zero": 0.0, "one": 1.0, "nan": np.nan, "error": 0.0}[zero_idcg]
        K.ndcg_ratio(frozen(dcg), frozen(idcg), fill, out, first)
    n_cut = max(1, dcg.shape[1])
    for what, at in (("IDCG", first[0]), ("DCG", first[1])):
        if at >= 0:
            _overflow(what, batch, int(at) // n_cut)
    if zero_idcg == "error" and first[2] >= 0:
        q, c = divmod(int(first[2]), n_cut)
        cut = "" if cutoffs[c] is None else f"@{cutoffs[c]}"
        raise ValueError(f"IDCG{cut} is 0 for {batch.name(q)}: no item has a non-zero gain; "
                         f"pass zero_idcg='zero' (scikit-learn, trec_eval), 'one' "
                         f"(LightGBM) or 'nan' to score such queries")
    return out
