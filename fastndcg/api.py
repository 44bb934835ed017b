"""Public functions: ``ndcg``, ``dcg``, ``idcg`` on ragged batches and the
scikit-learn drop-ins ``ndcg_score``, ``dcg_score``.

All validation happens here, once, at the boundary; the kernels in
``_kernels.py`` trust what they are given. Callers' arrays are never modified:
where a value must change (NaN scores ranked last, negative labels clipped,
rows regrouped by query id) a new array is made.
"""

from __future__ import annotations

import math
import numbers
import threading
from dataclasses import dataclass
from typing import Any, Sequence, Union

import numpy as np

from . import _kernels as K

ArrayLike = Any
Cutoff = Union[int, None, Sequence[int]]

_GAIN_NAMES = {"exp2": K.EXP2, "linear": K.LINEAR}
_TIES = {"average": K.AVERAGE, "stable": K.STABLE, "optimistic": K.OPTIMISTIC,
         "pessimistic": K.PESSIMISTIC}
_ZERO_IDCG = ("zero", "one", "nan", "error")
_NAN_SCORES = ("error", "last")
_NEGATIVE_LABELS = ("error", "zero", "keep")
_HIST_LABELS = 32  # integer labels 0..31 are counted for IDCG instead of selected
_EXP2_MAX_LABEL = 1023.0  # 2**1024 overflows a float64
_EXP2_TABLE = 2.0 ** np.arange(64) - 1.0  # exact exp2 gains of the labels 0..63

# Numba's "workqueue" threading layer aborts on concurrent parallel launches; the
# kernels already use every core, so calls from several Python threads take turns.
_KERNEL_LOCK = threading.Lock()


# --------------------------------------------------------------------------- options

def _choice(name: str, value, choices) -> str:
    if not isinstance(value, str) or value not in choices:
        listed = ", ".join(repr(c) for c in choices)
        raise ValueError(f"{name} must be one of {listed}; got {value!r}")
    return value


def _cutoffs(k) -> tuple[list, bool]:
    """Validated cutoffs as a list (None = whole list) and whether k was a sequence."""
    def one(v, where):
        if v is None and where == "k":
            return None
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Integral):
            if where == "k":
                raise TypeError(f"k must be an int >= 1 or None, got {v!r} "
                                f"({type(v).__name__}); for several cutoffs pass a list such "
                                f"as k=[1, 3, 5, 10]")
            raise TypeError(f"{where} must be an int >= 1, got {v!r} ({type(v).__name__}); a "
                            f"list of cutoffs holds ints only (k=None alone means the whole "
                            f"list)")
        if v < 1:
            raise ValueError(f"{where} must be >= 1, got {int(v)}; pass a positive cutoff "
                             f"such as k=10, or k=None for the whole list")
        return int(v)

    if k is None or isinstance(k, (numbers.Integral, np.bool_)):
        return [one(k, "k")], False
    if isinstance(k, (str, bytes)) or not hasattr(k, "__iter__"):
        raise TypeError(f"k must be an int, None or a sequence of ints, got {k!r} "
                        f"({type(k).__name__})")
    values = list(np.asarray(k).ravel()) if isinstance(k, np.ndarray) else list(k)
    if not values:
        raise ValueError("k is an empty sequence; pass at least one cutoff, e.g. k=[10]")
    return [one(v, f"k[{i}]") for i, v in enumerate(values)], True


def _log_base(value) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"log_base must be a real number > 1, got {value!r} ({type(value).__name__})")
    if not (math.isfinite(value) and value > 1):
        raise ValueError(f"log_base must be a finite number > 1, got {value!r}; "
                         f"the usual choice is log_base=2")
    return float(value)


@dataclass(frozen=True)
class _Gain:
    mode: int
    table: np.ndarray  # float64; length 1 (unused) unless mode == TABLE

    def describe(self) -> str:
        return {K.EXP2: "gain='exp2'", K.LINEAR: "gain='linear'"}.get(
            self.mode, f"a gain table of length {len(self.table)}")


def _gain(gain) -> _Gain:
    if isinstance(gain, str):
        if gain not in _GAIN_NAMES:
            raise ValueError(f"gain must be 'exp2', 'linear' or a 1-D table of gains indexed "
                             f"by integer label, got {gain!r}")
        mode = _GAIN_NAMES[gain]
        return _Gain(mode, _EXP2_TABLE if mode == K.EXP2 else np.zeros(1))
    if gain is None or isinstance(gain, (numbers.Number, bytes)):
        raise TypeError(f"gain must be 'exp2', 'linear' or a 1-D table of gains indexed by "
                        f"integer label (e.g. [0, 1, 3, 7]), got {gain!r}")
    try:
        table = np.array(gain, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"gain must be 'exp2', 'linear' or a 1-D table of numbers, "
                        f"got {gain!r}") from None
    if table.ndim != 1 or len(table) == 0:
        raise ValueError(f"a gain table must be a non-empty 1-D sequence (gain[label], e.g. "
                         f"[0, 1, 3, 7]), got shape {table.shape}")
    if not np.isfinite(table).all():
        raise ValueError(f"the gain table must hold finite numbers, got {table.tolist()}")
    return _Gain(K.TABLE, table)


# --------------------------------------------------------------------------- arrays

def _is_arrow(x) -> bool:
    return type(x).__module__.split(".")[0] == "pyarrow"


def _column(x, name: str) -> np.ndarray:
    """A 1-D numeric NumPy view of ``x`` (copied only when NumPy or Numba need it)."""
    if _is_arrow(x):
        if x.null_count:
            raise ValueError(f"{name} has {x.null_count} null value(s); fill or drop "
                             f"them before scoring")
        if hasattr(x, "combine_chunks"):
            x = x.combine_chunks()
        x = x.to_numpy(zero_copy_only=False)
    if isinstance(x, (str, bytes)) or x is None:
        raise TypeError(f"{name} must be an array of numbers, got {type(x).__name__}")
    arr = np.asarray(x)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D (one value per row), got shape {arr.shape}; for "
                         f"a dense (n_queries, n_items) matrix use fastndcg.ndcg_score, or pass "
                         f"{name}.ravel() with offsets")
    return _numeric(arr, name, _WIDEN_LABELS if name == "labels" else _WIDEN_SCORES)


# Each dtype reaching the kernels is one compiled specialisation (tens of seconds the
# first time), so rarer dtypes are widened, exactly, to a few common ones. Scores keep
# float32/float64/int32/int64/uint64 and labels int8/int32/int64/float32/float64.
_WIDEN_SCORES = {"b": np.int32, "i1": np.int32, "i2": np.int32, "u1": np.int32,
                 "u2": np.int32, "u4": np.int64, "f2": np.float32}
_WIDEN_LABELS = {"b": np.int8, "u1": np.int32, "i2": np.int32, "u2": np.int32,
                 "u4": np.int64, "u8": np.float64, "f2": np.float32}


def _numeric(arr: np.ndarray, name: str, widen: dict | None = None) -> np.ndarray:
    kind = arr.dtype.kind
    if kind not in "biuf":
        hint = " (missing values?)" if kind == "O" else ""
        raise TypeError(f"{name} must hold numbers, got dtype {arr.dtype}{hint}; convert it, "
                        f"e.g. numpy.asarray({name}, dtype=float)")
    if arr.dtype.itemsize > 8:  # long double
        arr = arr.astype(np.float64)
    if not arr.dtype.isnative:
        arr = arr.astype(arr.dtype.newbyteorder("="))
    code = "b" if kind == "b" else f"{kind}{arr.dtype.itemsize}"
    if widen and code in widen:
        arr = arr.astype(widen[code])
    return arr


def _offsets(offsets, n_rows: int) -> np.ndarray:
    arr = np.asarray(offsets.to_numpy(zero_copy_only=False) if _is_arrow(offsets) else offsets)
    if arr.ndim != 1 or len(arr) == 0:
        raise ValueError(f"offsets must be a 1-D array of n_queries + 1 row positions starting "
                         f"at 0, got shape {arr.shape}")
    if arr.dtype.kind not in "iu":
        raise TypeError(f"offsets must hold integer row positions, got dtype {arr.dtype}; "
                        f"convert them, e.g. numpy.asarray(offsets, dtype=numpy.int64)")
    if arr[0] != 0:
        raise ValueError(f"offsets must start at 0, got offsets[0] = {arr[0]}")
    if arr[-1] != n_rows:
        raise ValueError(f"offsets must end at len(scores) = {n_rows}, got offsets[-1] = "
                         f"{arr[-1]}; the last entry closes the last query")
    down = np.flatnonzero(arr[1:] < arr[:-1])
    if len(down):
        i = int(down[0])
        raise ValueError(f"offsets must be non-decreasing, but offsets[{i + 1}] = {arr[i + 1]} "
                         f"< offsets[{i}] = {arr[i]} (query {i})")
    return np.ascontiguousarray(arr, dtype=np.int64)


@dataclass
class _Batch:
    """Clean CSR input for the kernels, plus what is needed to name a query."""
    offsets: np.ndarray
    scores: np.ndarray
    labels: np.ndarray
    ids: Any = None  # query id of each query (first-appearance order), or None

    @property
    def n_queries(self) -> int:
        return len(self.offsets) - 1

    def name(self, q: int) -> str:
        if self.ids is not None:
            return f"query {self.ids[q]!r} (query index {q})"
        return f"query {q} (rows {self.offsets[q]}:{self.offsets[q + 1]})"

    def query_of_row(self, row: int) -> int:
        return int(np.searchsorted(self.offsets, row, side="right") - 1)


def _group(scores, labels, offsets, query_ids, score_name="scores") -> _Batch:
    """Columns plus offsets or query ids -> a _Batch with rows grouped by query."""
    n = len(labels)
    if scores is not None and len(scores) != n:
        raise ValueError(f"{score_name} and labels must have the same length, got "
                         f"{len(scores)} and {n}")
    if offsets is not None and query_ids is not None:
        raise ValueError("pass offsets or query_ids, not both")
    if query_ids is None:
        offs = np.array([0, n], np.int64) if offsets is None else _offsets(offsets, n)
        return _Batch(offs, scores, labels)
    import pyarrow as pa

    try:
        if _is_arrow(query_ids):
            ids = query_ids
        else:
            raw = np.asarray(query_ids)
            if not raw.dtype.isnative:
                raw = raw.astype(raw.dtype.newbyteorder("="))
            ids = pa.array(raw)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as err:
        raise TypeError(f"query_ids must be a 1-D array of ids (numbers or strings): {err}") from None
    if isinstance(ids, pa.ChunkedArray):
        ids = ids.combine_chunks()
    if len(ids) != n:
        raise ValueError(f"query_ids must have one id per row: got {len(ids)} ids for {n} rows")
    if ids.null_count:
        raise ValueError(f"query_ids has {ids.null_count} null id(s); every row needs a query")
    encoded = ids.dictionary_encode()  # codes numbered by first appearance
    codes = encoded.indices.to_numpy(zero_copy_only=False)
    n_queries = len(encoded.dictionary)
    offs = np.zeros(n_queries + 1, np.int64)
    np.cumsum(np.bincount(codes, minlength=n_queries), out=offs[1:])
    if n > 1 and not (codes[1:] >= codes[:-1]).all():
        order = np.argsort(codes, kind="stable")  # keeps input order inside a query
        scores = None if scores is None else scores[order]
        labels = labels[order]
    return _Batch(offs, scores, labels, ids=encoded.dictionary.to_pylist())


# --------------------------------------------------------------------------- value checks

def _plain(value):
    """A NumPy scalar as the plain Python number it is (for messages)."""
    return value.item() if hasattr(value, "item") else value


@dataclass(frozen=True)
class _LabelInfo:
    integer: bool
    lo: float
    hi: float


def _scan(batch: _Batch, check_scores: bool) -> tuple[np.ndarray, _LabelInfo]:
    scores = batch.scores if check_scores else batch.scores[:0]
    n_chunks = max(1, min(64, len(batch.labels) // 65536))
    first, lmin, lmax = K.scan_values(scores, batch.labels, n_chunks)
    firsts = np.where(first < 0, np.iinfo(np.int64).max, first).min(axis=0)
    firsts[firsts == np.iinfo(np.int64).max] = -1
    lo, hi = float(lmin.min()), float(lmax.max())
    if lo > hi:  # no finite label at all (no rows)
        lo = hi = 0.0
    return firsts, _LabelInfo(bool(firsts[K.SCAN_FRACTION] < 0), lo, hi)


def _check_values(batch: _Batch, gain: _Gain, nan_scores: str, negative_labels: str,
                  check_scores: bool = True) -> _LabelInfo:
    """Raise for bad values; replace NaN scores / negative labels per the policies.

    Updates ``batch`` in place with new arrays (never the caller's arrays)."""
    firsts, info = _scan(batch, check_scores)
    labels = batch.labels
    row = firsts[K.SCAN_BAD_LABEL]
    if row >= 0:
        raise ValueError(f"labels must be finite, but {batch.name(batch.query_of_row(row))} "
                         f"has label {_plain(labels[row])!r}; drop or fix those rows")
    row = firsts[K.SCAN_NAN_SCORE]
    if row >= 0:
        if nan_scores == "error":
            raise ValueError(f"scores contain NaN (first in {batch.name(batch.query_of_row(row))}); "
                             f"pass nan_scores='last' to rank NaN below every score, or drop "
                             f"those rows")
        batch.scores = _nan_last_keys(batch.scores)
    row = firsts[K.SCAN_NEGATIVE]
    if row >= 0:
        if negative_labels == "error":
            raise ValueError(f"labels must not be negative, but "
                             f"{batch.name(batch.query_of_row(row))} has label "
                             f"{_plain(labels[row])!r}; "
                             f"pass negative_labels='zero' to treat negatives as 0 (as "
                             f"trec_eval does) or 'keep' to use them as they are")
        if negative_labels == "zero":
            batch.labels = np.maximum(labels, labels.dtype.type(0))
            integer = info.integer
            if not integer:  # the fractions may all have been negative, now 0
                integer = bool((batch.labels == np.floor(batch.labels)).all())
                firsts[K.SCAN_FRACTION] = -1 if integer else int(
                    np.flatnonzero(batch.labels != np.floor(batch.labels))[0])
            info = _LabelInfo(integer, max(info.lo, 0.0), max(info.hi, 0.0))
    if gain.mode == K.TABLE:
        row = firsts[K.SCAN_FRACTION]
        if row < 0 and (info.lo < 0 or info.hi >= len(gain.table)):
            row = int(np.flatnonzero((batch.labels < 0) | (batch.labels >= len(gain.table)))[0])
        if row >= 0:
            raise ValueError(f"with {gain.describe()} labels must be integers 0..{len(gain.table) - 1}, "
                             f"but {batch.name(batch.query_of_row(row))} has label "
                             f"{_plain(batch.labels[row])!r}; extend the table or use "
                             f"gain='exp2'/'linear'")
    if gain.mode == K.EXP2 and info.hi > _EXP2_MAX_LABEL:
        row = int(np.flatnonzero(batch.labels > _EXP2_MAX_LABEL)[0])
        raise ValueError(f"label {_plain(batch.labels[row])!r} in "
                         f"{batch.name(batch.query_of_row(row))} "
                         f"overflows gain='exp2' (2**label - 1 is infinite above label 1023); "
                         f"use gain='linear' or rescale the labels")
    return info


def _nan_last_keys(scores: np.ndarray) -> np.ndarray:
    """Integer keys ordered like ``scores`` with NaN below -inf (all NaN tied)."""
    itype = np.int32 if scores.dtype.itemsize <= 4 else np.int64
    values = scores.astype(np.float32 if itype is np.int32 else np.float64) + 0.0  # -0.0 -> 0.0
    bits = values.view(itype)
    keys = np.where(bits < 0, bits ^ np.iinfo(itype).max, bits)
    keys[np.isnan(values)] = np.iinfo(itype).min
    return keys


# --------------------------------------------------------------------------- kernel driver

def _chunks(offsets: np.ndarray, ioffsets: np.ndarray) -> np.ndarray:
    """Query boundaries splitting the batch into chunks of about equal work."""
    import numba

    n_q = len(offsets) - 1
    n_chunks = max(1, min(n_q, 8 * numba.get_num_threads()))
    cost = offsets[1:] + 8 * np.arange(1, n_q + 1)  # rows plus a per-query overhead
    if ioffsets is not offsets:
        cost = cost + ioffsets[1:]
    targets = np.linspace(0, cost[-1], n_chunks + 1)[1:-1]
    inner = np.searchsorted(cost, targets, side="right")
    return np.unique(np.concatenate(([0], inner, [n_q]))).astype(np.int64)


def _discounts(length: int, log_base: float) -> np.ndarray:
    # the same expression as scikit-learn, so discounts agree to the last bit
    with np.errstate(divide="ignore"):
        return 1 / (np.log(np.arange(length) + 2) / np.log(log_base))


def _hist_order(gain: _Gain, info: _LabelInfo) -> np.ndarray:
    """Label values by gain, highest first, when labels are small non-negative ints."""
    if not (info.integer and info.lo >= 0 and info.hi < _HIST_LABELS):
        return np.zeros(0, np.int64)
    values = np.arange(int(info.hi) + 1)
    gains = gain.table[values] if gain.mode == K.TABLE else values.astype(np.float64)
    return values[np.argsort(-gains, kind="stable")].astype(np.int64)


def _run(batch: _Batch, cutoffs: list, gain: _Gain, tmode: int, log_base: float,
         info: _LabelInfo, want_dcg: bool, want_idcg: bool, ideal: _Batch | None = None):
    """DCG and IDCG, each (n_queries, len(cutoffs)) float64 (or None if not wanted)."""
    ideal = batch if ideal is None else ideal
    n_q = batch.n_queries
    lengths = np.diff(batch.offsets)
    longest = max(1, int(lengths.max(initial=0)), int(np.diff(ideal.offsets).max(initial=0)))
    effective = [longest if c is None else min(c, longest) for c in cutoffs]
    unique = sorted(set(effective))
    columns = [unique.index(e) for e in effective]
    out_dcg = np.zeros((n_q, len(unique)))
    out_idcg = np.zeros((n_q, len(unique)))
    if n_q:
        scores = batch.scores
        with _KERNEL_LOCK:
            K.dcg_idcg_batch(batch.offsets, scores, batch.labels, ideal.offsets, ideal.labels,
                             np.array(unique, np.int64), _discounts(unique[-1], log_base),
                             gain.mode, gain.table, tmode, _hist_order(gain, info), _chunks(batch.offsets, ideal.offsets),
                             want_dcg, want_idcg, out_dcg, out_idcg)
    return (out_dcg[:, columns] if want_dcg else None,
            out_idcg[:, columns] if want_idcg else None)


def _check_finite(values: np.ndarray, batch: _Batch, what: str) -> None:
    """Gains near 2**1023 can sum past the largest float: say so, never return NaN."""
    bad = ~np.isfinite(values)
    if bad.any():
        q = int(np.argwhere(bad)[0][0])
        raise ValueError(f"{what} overflows for {batch.name(q)}: its gains are too large to "
                         f"add up in float64; use gain='linear' or rescale the labels")


def _shape(values: np.ndarray, multi: bool) -> np.ndarray:
    return values if multi else np.ascontiguousarray(values[:, 0])


def _prepare(scores, labels, offsets, query_ids, gain, ties, log_base, nan_scores,
             negative_labels, k):
    cutoffs, multi = _cutoffs(k)
    gain_spec = _gain(gain)
    if ties == "trec":
        raise ValueError("ties='trec' breaks ties by document id (trec_eval's rule), and these "
                         "functions take no document ids; it belongs to qrels mode. Here use "
                         "'average', 'stable', 'optimistic' or 'pessimistic'")
    tmode = _TIES[_choice("ties", ties, tuple(_TIES))]
    base = _log_base(log_base)
    _choice("nan_scores", nan_scores, _NAN_SCORES)
    _choice("negative_labels", negative_labels, _NEGATIVE_LABELS)
    batch = _group(_column(scores, "scores"), _column(labels, "labels"), offsets, query_ids)
    info = _check_values(batch, gain_spec, nan_scores, negative_labels)
    return batch, cutoffs, multi, gain_spec, tmode, base, info


def _normalise(dcg: np.ndarray, idcg: np.ndarray, zero_idcg: str, batch: _Batch,
               cutoffs: list) -> np.ndarray:
    zero = idcg == 0
    out = np.divide(dcg, idcg, out=np.zeros_like(dcg), where=~zero)
    if zero.any():
        if zero_idcg == "error":
            q, c = (int(i) for i in np.argwhere(zero)[0])
            cut = "" if cutoffs[c] is None else f"@{cutoffs[c]}"
            raise ValueError(f"IDCG{cut} is 0 for {batch.name(q)}: no item has a non-zero gain; "
                             f"pass zero_idcg='zero' (scikit-learn, trec_eval), 'one' "
                             f"(LightGBM) or 'nan' to score such queries")
        out[zero] = {"zero": 0.0, "one": 1.0, "nan": np.nan}[zero_idcg]
    return out


# --------------------------------------------------------------------------- public API

def ndcg(scores: ArrayLike, labels: ArrayLike, offsets: ArrayLike | None = None, *,
         query_ids: ArrayLike | None = None, k: Cutoff = 10, gain="exp2",
         ties: str = "average", log_base: float = 2.0, zero_idcg: str = "zero",
         nan_scores: str = "error", negative_labels: str = "error") -> np.ndarray:
    """NDCG@k of every query of a ragged batch.

    Parameters
    ----------
    scores, labels : 1-D arrays of equal length, any numeric dtype (NumPy, Arrow,
        pandas); one row per (query, item).
    offsets : CSR boundaries: query q owns rows ``offsets[q]:offsets[q+1]``
        (integers from 0, non-decreasing, ending at ``len(scores)``).
    query_ids : alternatively, one id per row; rows of one id form one query even
        when not adjacent, queries ordered by first appearance (as
        ``pandas.unique(query_ids)``). With neither, all rows are one query.
    k : cutoff (int >= 1), None for the whole list, or a sequence of cutoffs
        (all computed in one pass).
    gain : "exp2" (2**r - 1), "linear" (r) or a table ``gain[r]`` for integer labels.
    ties : "average" (tie-aware, as scikit-learn), "stable" (input order wins, as
        LightGBM), "optimistic" / "pessimistic" (highest / lowest gain first).
    log_base : discount base b > 1: 1 / log_b(rank + 1).
    zero_idcg : result when IDCG@k is 0: "zero", "one", "nan" or "error".
    nan_scores : "error" or "last" (NaN ranks below every number, NaNs tied).
    negative_labels : "error", "zero" (treated as 0) or "keep".

    Returns
    -------
    numpy.ndarray of float64: shape (n_queries,), or (n_queries, len(k)) when k is
    a sequence.

    Example
    -------
    >>> import fastndcg
    >>> fastndcg.ndcg([0.9, 0.3, 0.3, 0.8, 0.1], [2, 0, 1, 1, 0], [0, 3, 5], k=[1, 3])
    array([[1.        , 0.98197022],
           [1.        , 1.        ]])
    """
    _choice("zero_idcg", zero_idcg, _ZERO_IDCG)
    batch, cutoffs, multi, gain_spec, tmode, base, info = _prepare(
        scores, labels, offsets, query_ids, gain, ties, log_base, nan_scores,
        negative_labels, k)
    dcg_v, idcg_v = _run(batch, cutoffs, gain_spec, tmode, base, info, True, True)
    _check_finite(idcg_v, batch, "IDCG")
    _check_finite(dcg_v, batch, "DCG")
    return _shape(_normalise(dcg_v, idcg_v, zero_idcg, batch, cutoffs), multi)


def dcg(scores: ArrayLike, labels: ArrayLike, offsets: ArrayLike | None = None, *,
        query_ids: ArrayLike | None = None, k: Cutoff = 10, gain="exp2",
        ties: str = "average", log_base: float = 2.0, nan_scores: str = "error",
        negative_labels: str = "error") -> np.ndarray:
    """DCG@k of every query; arguments as :func:`ndcg` (without ``zero_idcg``).

    Example
    -------
    >>> import fastndcg
    >>> fastndcg.dcg([0.9, 0.3, 0.3], [2, 0, 1], k=None, gain="linear")
    array([2.56546488])
    """
    batch, cutoffs, multi, gain_spec, tmode, base, info = _prepare(
        scores, labels, offsets, query_ids, gain, ties, log_base, nan_scores,
        negative_labels, k)
    dcg_v, _ = _run(batch, cutoffs, gain_spec, tmode, base, info, True, False)
    _check_finite(dcg_v, batch, "DCG")
    return _shape(dcg_v, multi)


def idcg(labels: ArrayLike, offsets: ArrayLike | None = None, *,
         query_ids: ArrayLike | None = None, k: Cutoff = 10, gain="exp2",
         log_base: float = 2.0, negative_labels: str = "error") -> np.ndarray:
    """IDCG@k (the DCG of the ideal ordering) of every query's labels.

    Example
    -------
    >>> import fastndcg
    >>> fastndcg.idcg([0, 2, 1, 3], [0, 2, 4], k=1, gain="linear")
    array([2., 3.])
    """
    cutoffs, multi = _cutoffs(k)
    gain_spec = _gain(gain)
    base = _log_base(log_base)
    _choice("negative_labels", negative_labels, _NEGATIVE_LABELS)
    batch = _group(None, _column(labels, "labels"), offsets, query_ids)
    batch.scores = np.zeros(0)  # unused; float64 shares ndcg's compiled specialisation
    info = _check_values(batch, gain_spec, "error", negative_labels, check_scores=False)
    _, idcg_v = _run(batch, cutoffs, gain_spec, K.STABLE, base, info, False, True)
    _check_finite(idcg_v, batch, "IDCG")
    return _shape(idcg_v, multi)


# --------------------------------------------------------------------------- scikit-learn

_SK_TARGETS = ("multilabel-indicator", "continuous-multioutput", "multiclass-multioutput")


def _sk_param_error(func: str, name: str, expected: str, value) -> ValueError:
    return ValueError(f"The '{name}' parameter of {func} must be {expected}. Got {value!r} instead.")


def _sk_array(x, func: str, name: str) -> np.ndarray:
    """scikit-learn's check_array(x, ensure_2d=False) rules and messages."""
    if x is None or isinstance(x, (str, bytes, numbers.Number)):
        raise _sk_param_error(func, name, "an array-like", x)
    arr = np.asarray(x)
    if arr.dtype.kind in "US":
        raise ValueError("dtype='numeric' is not compatible with arrays of bytes/strings."
                         "Convert your data to numeric values explicitly instead.")
    if arr.dtype.kind == "c":
        raise ValueError(f"Complex data not supported\n{arr}\n")
    if arr.dtype.kind == "O":
        arr = arr.astype(np.float64)
    if arr.ndim >= 3:
        raise ValueError(f"Found array with dim {arr.ndim}, while dim <= 2 is required.")
    if arr.ndim == 0:
        raise ValueError(f"Expected 2D array, got scalar array instead: {name}={arr}.")
    if arr.shape[0] < 1:
        raise ValueError(f"Found array with 0 sample(s) (shape={arr.shape}) while a minimum "
                         f"of 1 is required.")
    if arr.ndim == 2 and arr.shape[1] < 1:
        raise ValueError(f"Found array with 0 feature(s) (shape={arr.shape}) while a minimum "
                         f"of 1 is required.")
    if arr.dtype.kind == "f":
        if np.isnan(arr).any():
            raise ValueError("Input contains NaN.")
        if not np.isfinite(arr).all():
            raise ValueError(f"Input contains infinity or a value too large for {arr.dtype!r}.")
    return arr


def _sk_inputs(func: str, y_true, y_score, k, sample_weight, ignore_ties):
    if k is not None and (not isinstance(k, numbers.Integral) or k < 1):
        raise _sk_param_error(func, "k", "an int in the range [1, inf) or None", k)
    if not isinstance(ignore_ties, (bool, np.bool_)):
        raise _sk_param_error(func, "ignore_ties",
                              "an instance of 'bool' or an instance of 'numpy.bool'", ignore_ties)
    y_true = _sk_array(y_true, func, "y_true")
    y_score = _sk_array(y_score, func, "y_score")
    lengths = [len(y_true), len(y_score)]
    if sample_weight is not None:
        lengths.append(len(np.asarray(sample_weight)))
    if len(set(lengths)) > 1:
        raise ValueError(f"Found input variables with inconsistent numbers of samples: {lengths}")
    return y_true, y_score, (None if k is None else int(k))


def _sk_target_type(y_true: np.ndarray) -> None:
    """Reject what scikit-learn's type_of_target does not call a multi-output target."""
    if y_true.ndim == 2 and y_true.shape[1] > 1:
        return  # always one of _SK_TARGETS for a numeric 2-D array
    flat = y_true.ravel()
    if flat.dtype.kind == "f" and (flat != np.round(flat)).any():
        kind = "continuous"
    else:
        kind = "binary" if len(np.unique(flat)) <= 2 else "multiclass"
    raise ValueError(f"Only {_SK_TARGETS} formats are supported. Got {kind} instead")


def _sk_rows(y_true: np.ndarray, y_score: np.ndarray, k, log_base: float, ignore_ties: bool,
             want_idcg: bool):
    """Per-row DCG (and IDCG) of a dense matrix, with linear gain."""
    if y_true.shape != y_score.shape:
        raise ValueError(f"y_true and y_score must have the same shape, got {y_true.shape} "
                         f"and {y_score.shape}")
    n_rows, n_items = y_true.shape
    offsets = np.arange(0, n_rows * n_items + 1, n_items, dtype=np.int64)
    labels = _numeric(y_true, "y_true", _WIDEN_LABELS)
    if ignore_ties:
        # scikit-learn ranks ties in the order of NumPy's argsort, reversed: reproduce it
        order = np.argsort(y_score)[:, ::-1]
        labels = np.take_along_axis(labels, order, axis=1)
        scores = np.zeros(labels.size)  # all tied: "stable" keeps this order
        tmode = K.STABLE
    else:
        scores = np.ascontiguousarray(_numeric(y_score, "y_score", _WIDEN_SCORES)).ravel()
        tmode = K.AVERAGE
    batch = _Batch(offsets, scores, np.ascontiguousarray(labels).ravel())
    _, info = _scan(batch, check_scores=False)  # values were checked as scikit-learn does
    return _run(batch, [k], _Gain(K.LINEAR, np.zeros(1)), tmode, log_base, info, True, want_idcg)


def ndcg_score(y_true: ArrayLike, y_score: ArrayLike, *, k: int | None = None,
               sample_weight: ArrayLike | None = None, ignore_ties: bool = False) -> float:
    """Drop-in replacement for ``sklearn.metrics.ndcg_score``: same results (to
    1e-12, ties included) and the same ValueErrors, much faster.

    ``y_true`` and ``y_score`` are (n_samples, n_labels) matrices; gain is linear,
    ties are averaged unless ``ignore_ties=True`` (then ties are ordered exactly
    as scikit-learn orders them, by NumPy's argsort).

    Example
    -------
    >>> import fastndcg
    >>> round(fastndcg.ndcg_score([[10, 0, 0, 1, 5]], [[.1, .2, .3, 4, 70]]), 6)
    0.695694
    """
    y_true, y_score, k = _sk_inputs("ndcg_score", y_true, y_score, k, sample_weight, ignore_ties)
    if y_true.min() < 0:
        raise ValueError("ndcg_score should not be used on negative y_true values.")
    if y_true.ndim > 1 and y_true.shape[1] <= 1:
        raise ValueError("Computing NDCG is only meaningful when there is more than 1 "
                         f"document. Got {y_true.shape[1]} instead.")
    _sk_target_type(y_true)
    dcg_v, idcg_v = _sk_rows(y_true, y_score, k, 2.0, bool(ignore_ties), True)
    gain = np.divide(dcg_v[:, 0], idcg_v[:, 0], out=np.zeros(len(dcg_v)),
                     where=idcg_v[:, 0] != 0)
    return float(np.average(gain, weights=sample_weight))


def dcg_score(y_true: ArrayLike, y_score: ArrayLike, *, k: int | None = None,
              log_base: float = 2, sample_weight: ArrayLike | None = None,
              ignore_ties: bool = False) -> float:
    """Drop-in replacement for ``sklearn.metrics.dcg_score`` (linear gain, tie-aware
    unless ``ignore_ties=True``); like scikit-learn it accepts any log_base > 0.

    Example
    -------
    >>> import fastndcg
    >>> round(fastndcg.dcg_score([[10, 0, 0, 1, 5]], [[.1, .2, .3, 4, 70]]), 6)
    9.499458
    """
    if (isinstance(log_base, (bool, np.bool_)) or not isinstance(log_base, numbers.Real)
            or not log_base > 0):
        raise _sk_param_error("dcg_score", "log_base", "a float in the range (0.0, inf)", log_base)
    y_true, y_score, k = _sk_inputs("dcg_score", y_true, y_score, k, sample_weight, ignore_ties)
    _sk_target_type(y_true)
    dcg_v, _ = _sk_rows(y_true, y_score, k, float(log_base), bool(ignore_ties), False)
    return float(np.average(dcg_v[:, 0], weights=sample_weight))
