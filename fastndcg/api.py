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
from typing import Any

import numpy as np

from . import _core as C
from . import _kernels as K
from . import _validate as V
from . import options as O
from .presets import SEMANTIC_OPTIONS, read_grades, resolve

ArrayLike = Any


# --------------------------------------------------------------------------- arrays

def _is_arrow(x) -> bool:
    return type(x).__module__.split(".")[0] == "pyarrow"


def _unmasked(x, name: str):
    """A numpy masked array without masked values as its data; masked values are an
    error (ignoring the mask would score values the caller hid)."""
    if isinstance(x, np.ma.MaskedArray):
        mask = np.ma.getmaskarray(x)
        if mask.any():
            raise ValueError(f"{name} is a masked array with {int(mask.sum())} masked value(s) "
                             f"(first at row {int(np.flatnonzero(mask)[0])}); drop those rows "
                             f"or fill them (e.g. {name}.filled(0))")
        return np.ma.getdata(x)
    return x


def _column(x, name: str) -> np.ndarray:
    """A 1-D numeric NumPy view of ``x`` (copied only when NumPy or Numba need it)."""
    if _is_arrow(x):
        if x.null_count:
            import pyarrow.compute as pc
            row = pc.index(pc.is_null(x), True).as_py()
            raise ValueError(f"{name} has {x.null_count} null value(s) (first at row {row}); "
                             f"fill or drop them before scoring")
        from ._arrow import as_numpy
        x = as_numpy(x)  # chunks combined; not x.to_numpy(): it imports pandas
    if isinstance(x, (str, bytes)) or x is None:
        raise TypeError(f"{name} must be an array of numbers, got {V.shown(x)} "
                        f"({type(x).__name__})")
    x = _unmasked(x, name)
    try:
        arr = np.asarray(x)
    except ValueError:  # ragged nested lists
        raise ValueError(f"{name} must be a 1-D array of numbers (one per row); got nested "
                         f"sequences of different lengths: {V.shown(x)}") from None
    if arr.ndim == 0:  # a scalar, or a dict / set / generator NumPy cannot unpack
        raise ValueError(f"{name} must be 1-D (one value per row), got {V.shown(x)} "
                         f"({type(x).__name__}), a single value; pass a list or a 1-D array "
                         f"of numbers")
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D (one value per row), got shape {arr.shape}; for "
                         f"a dense (n_queries, n_items) matrix use fastndcg.ndcg_score, or pass "
                         f"{name}.ravel() with offsets")
    return C.numeric(arr, name, C.kernel_labels if name == "labels" else C.kernel_scores)


def _offsets(offsets, n_rows: int, rows: str = "scores") -> np.ndarray:
    if _is_arrow(offsets):
        if offsets.null_count:  # else to_numpy gives floats, blamed on a dtype never passed
            raise ValueError(f"offsets has {offsets.null_count} null value(s) (first at entry "
                             f"{offsets.to_pylist().index(None)}): {V.shown(offsets.to_pylist())}; "
                             f"every entry is a row position, e.g. [0, 2, 4] for two queries of "
                             f"2 rows")
        from ._arrow import as_numpy
        offsets = as_numpy(offsets)
    arr = np.asarray(offsets)
    if arr.ndim == 0:
        raise ValueError(f"offsets must be a 1-D array of n_queries + 1 row positions starting "
                         f"at 0, got {V.shown(offsets)} ({type(offsets).__name__}), a single "
                         f"value; e.g. [0, 2, 4] for two queries of 2 rows")
    if arr.ndim != 1 or len(arr) == 0:
        raise ValueError(f"offsets must be a 1-D array of n_queries + 1 row positions starting "
                         f"at 0, got shape {arr.shape}")
    if arr.dtype.kind not in "iu":
        raise TypeError(f"offsets must hold integer row positions, got dtype {arr.dtype}; "
                        f"convert them, e.g. numpy.asarray(offsets, dtype=numpy.int64)")
    if arr[0] != 0:
        raise ValueError(f"offsets must start at 0, got offsets[0] = {arr[0]}")
    if arr[-1] != n_rows:
        raise ValueError(f"offsets must end at len({rows}) = {n_rows}, got offsets[-1] = "
                         f"{arr[-1]}; the last entry closes the last query")
    down = np.flatnonzero(arr[1:] < arr[:-1])
    if len(down):
        i = int(down[0])
        raise ValueError(f"offsets must be non-decreasing, but offsets[{i + 1}] = {arr[i + 1]} "
                         f"< offsets[{i}] = {arr[i]} (query {i})")
    return np.ascontiguousarray(arr, dtype=np.int64)


def _group(scores, labels, offsets, query_ids, score_name="scores") -> C.Batch:
    """Columns plus offsets or query ids -> a C.Batch with rows grouped by query."""
    n = len(labels)
    if scores is not None and len(scores) != n:
        raise ValueError(f"{score_name} and labels must have the same length, got "
                         f"{len(scores)} and {n}")
    if offsets is not None and query_ids is not None:
        raise ValueError("pass offsets or query_ids, not both")
    if query_ids is None:
        offs = (np.array([0, n], np.int64) if offsets is None
                else _offsets(offsets, n, score_name if scores is not None else "labels"))
        return C.Batch(offs, scores, labels)
    import pyarrow as pa
    import pyarrow.compute as pc

    from ._arrow import as_numpy, from_numpy, scalar

    try:
        if _is_arrow(query_ids):
            ids = query_ids
        else:
            raw = _unmasked(query_ids, "query_ids")
            if type(raw).__module__.split(".")[0] == "pandas":
                ids = pa.array(raw)  # keeps missing values (NA, None) as nulls
            else:
                try:
                    raw = np.asarray(raw)
                except ValueError:
                    raise ValueError(f"query_ids must be a 1-D array of ids (numbers or "
                                     f"strings), one per row; got nested sequences of different "
                                     f"lengths: {V.shown(query_ids)}") from None
                if raw.ndim != 1:
                    got = (f"shape {raw.shape}" if raw.ndim else
                           f"{type(query_ids).__name__}, a single value")
                    raise TypeError(f"query_ids must be a 1-D array of ids (numbers or "
                                    f"strings), one per row; got {V.shown(query_ids)} "
                                    f"({got})")
                if not raw.dtype.isnative:
                    raw = raw.astype(raw.dtype.newbyteorder("="))
                if raw.dtype.kind in "biu":  # no missing values: shared, not converted
                    ids = from_numpy(raw)
                else:
                    ids = pa.array(raw, from_pandas=True)  # NaN and None are missing ids
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        kinds = None
        if isinstance(raw, np.ndarray) and raw.dtype == object:
            kinds = sorted({type(v).__name__ for v in raw.tolist()})
        if kinds and len(kinds) > 1:
            why = f"mixes kinds of ids ({', '.join(kinds)}): {V.shown(query_ids)}"
        elif isinstance(raw, np.ndarray):
            why = f"got dtype {raw.dtype}: {V.shown(query_ids)}"
        else:
            why = f"got {V.shown(query_ids)} ({type(query_ids).__name__})"
        fix = ("make every id one kind, e.g. a string" if kinds and len(kinds) > 1 else
               "convert them to numbers or strings")
        raise TypeError(f"query_ids must be a 1-D array of ids (numbers or strings), one per "
                        f"row; {why}; {fix}") from None
    if isinstance(ids, pa.ChunkedArray):
        ids = ids.combine_chunks()
    if pa.types.is_dictionary(ids.type):  # categorical ids: group by value, not by code
        ids = ids.dictionary_decode()
    if not (pa.types.is_integer(ids.type) or pa.types.is_floating(ids.type)
            or pa.types.is_string(ids.type) or pa.types.is_large_string(ids.type)
            or pa.types.is_binary(ids.type) or pa.types.is_large_binary(ids.type)
            or pa.types.is_boolean(ids.type)):
        raise TypeError(f"query_ids must hold numbers or strings (one id per row), got "
                        f"{ids.type}; make one id of each, e.g. a string")
    if pa.types.is_floating(ids.type):
        bad = pc.is_nan(ids).fill_null(False)
        if pc.any(bad).as_py():
            row = pc.index(bad, True).as_py()
            raise ValueError(f"query_ids has NaN (first at row {row}): a missing query id; "
                             f"every row needs a query: fill or drop those rows")
        ids = pc.add(ids, scalar(0.0, ids.type))  # -0.0 and 0.0 are one query
    if len(ids) != n:
        raise ValueError(f"query_ids must have one id per row: got {len(ids)} ids for {n} rows")
    if ids.null_count:
        row = pc.index(pc.is_null(ids), True).as_py()
        raise ValueError(f"query_ids has {ids.null_count} missing id(s) (null, None or NA; "
                         f"first at row {row}); every row needs a query: fill or drop them")
    encoded = ids.dictionary_encode()  # codes numbered by first appearance
    codes = as_numpy(encoded.indices)
    n_queries = len(encoded.dictionary)
    offs = np.zeros(n_queries + 1, np.int64)
    np.cumsum(np.bincount(codes, minlength=n_queries), out=offs[1:])
    if n > 1 and not (codes[1:] >= codes[:-1]).all():
        order = np.argsort(codes, kind="stable")  # keeps input order inside a query
        scores = None if scores is None else scores[order]
        labels = labels[order]
    return C.Batch(offs, scores, labels, ids=encoded.dictionary.to_pylist())


# --------------------------------------------------------------------------- value checks


# --------------------------------------------------------------------------- kernel driver


def _shape(values: np.ndarray, multi: bool) -> np.ndarray:
    return values if multi else np.ascontiguousarray(values[:, 0])


def _settings(where: str, given: dict) -> tuple:
    """(the entry point's options, its semantic options resolved against the preset)
    of an arrays function called with the options ``given``."""
    entry = O.ENTRY_POINTS[where]
    o = entry.bound(given)
    preset = o.get("preset")
    options = resolve(preset, "arrays", **{n: o[n] for n in SEMANTIC_OPTIONS if n in o})
    return entry, o, options


def _prepare(entry: O.Entry, scores, labels, offsets, query_ids, k, options: dict,
             preset: str | None = None):
    cutoffs, multi = C.parse_cutoffs(k)
    gain_spec = entry.check("gain", options["gain"])
    tmode = C.TIES[entry.check("ties", options["ties"])]
    base = entry.check("log_base", options["log_base"])
    nan_scores = entry.check("nan_scores", options["nan_scores"])
    negative_labels = entry.check("negative_labels", options["negative_labels"])
    scores = _column(scores, "scores")
    if options["score_precision"] == "float32" and scores.dtype != np.float32:
        scores = scores.astype(np.float32)  # compared as 32-bit floats (pytrec_eval)
    batch = _group(scores, _column(labels, "labels"), offsets, query_ids)
    batch.labels = read_grades(  # each grade as the preset's tool reads it
        batch.labels, preset, lambda row: f"labels[{row}] ({batch.name(batch.query_of_row(row))})",
        exp2=gain_spec.mode == K.EXP2)
    batch.raw = batch.labels  # check_values replaces, never changes, the labels
    info = C.check_values(batch, gain_spec, nan_scores, negative_labels)
    return batch, cutoffs, multi, gain_spec, tmode, base, info


# --------------------------------------------------------------------------- public API

@O.takes_options("fastndcg.ndcg")
def ndcg(scores: ArrayLike, labels: ArrayLike, offsets: ArrayLike | None = None, *,
         query_ids: ArrayLike | None = None, **options) -> np.ndarray:
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
    **options : the options below (presets: "sklearn", "lightgbm", "xgboost",
        "xgboost-", ...; see :mod:`fastndcg.presets`).

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
    entry, o, options = _settings("fastndcg.ndcg", options)
    zero_idcg = entry.check("zero_idcg", options["zero_idcg"])
    batch, cutoffs, multi, gain_spec, tmode, base, info = _prepare(
        entry, scores, labels, offsets, query_ids, o["k"], options, o["preset"])
    dcg_v, idcg_v, _ = C.run_kernels(batch, cutoffs, gain_spec, tmode, base, info, True, True)
    return _shape(C.normalise(dcg_v, idcg_v, zero_idcg, batch, cutoffs, in_place=True), multi)


@O.takes_options("fastndcg.dcg")
def dcg(scores: ArrayLike, labels: ArrayLike, offsets: ArrayLike | None = None, *,
        query_ids: ArrayLike | None = None, **options) -> np.ndarray:
    """DCG@k of every query; arguments as :func:`ndcg` (without ``zero_idcg``).

    Parameters
    ----------
    scores, labels, offsets, query_ids : as :func:`ndcg` takes them.
    **options : the options below.

    Example
    -------
    >>> import fastndcg
    >>> fastndcg.dcg([0.9, 0.3, 0.3], [2, 0, 1], k=None, gain="linear")
    array([2.56546488])
    """
    entry, o, options = _settings("fastndcg.dcg", options)
    batch, cutoffs, multi, gain_spec, tmode, base, info = _prepare(
        entry, scores, labels, offsets, query_ids, o["k"], options, o["preset"])
    dcg_v, _, _ = C.run_kernels(batch, cutoffs, gain_spec, tmode, base, info, True, False)
    C.check_finite(dcg_v, batch, "DCG")
    return _shape(dcg_v, multi)


@O.takes_options("fastndcg.idcg")
def idcg(labels: ArrayLike, offsets: ArrayLike | None = None, *,
         query_ids: ArrayLike | None = None, **options) -> np.ndarray:
    """IDCG@k (the DCG of the ideal ordering) of every query's labels.

    Parameters
    ----------
    labels, offsets, query_ids : as :func:`ndcg` takes them.
    **options : the options below.

    Example
    -------
    >>> import fastndcg
    >>> fastndcg.idcg([0, 2, 1, 3], [0, 2, 4], k=1, gain="linear")
    array([2., 3.])
    """
    entry, o, options = _settings("fastndcg.idcg", options)
    cutoffs, multi = C.parse_cutoffs(o["k"])
    gain_spec = entry.check("gain", options["gain"])
    base = entry.check("log_base", options["log_base"])
    negative_labels = entry.check("negative_labels", options["negative_labels"])
    batch = _group(None, _column(labels, "labels"), offsets, query_ids)
    batch.scores = np.zeros(0)  # unused; float64 shares ndcg's compiled specialisation
    info = C.check_values(batch, gain_spec, "error", negative_labels, check_scores=False)
    _, idcg_v, _ = C.run_kernels(batch, cutoffs, gain_spec, K.STABLE, base, info, False, True)
    C.check_finite(idcg_v, batch, "IDCG")
    return _shape(idcg_v, multi)


@O.takes_options("fastndcg.measure")
def measure(scores: ArrayLike, labels: ArrayLike, offsets: ArrayLike | None = None, *,
            query_ids: ArrayLike | None = None, **options) -> dict:
    """Any measures of every query of a ragged batch, from one ranking of each query.

    ``measure`` names them as trec_eval does (``"map"``, ``"P.5,10"``,
    ``"recip_rank"``), as ir_measures does (``"AP"``, ``"P@5"``, ``"RR(rel=2)@10"``,
    ``"nDCG@10"``) or by fastndcg's column names (``"ap"``, ``"p@5"``), as a string
    (several separated by spaces) or a list; see :mod:`fastndcg.measures`. ``rel``:
    the relevance threshold of the measures that do not name one (default 1: a
    label >= 1 is relevant). This is list mode: the list is the whole judged set,
    so R (the denominator of recall, AP and R-precision) counts the relevant
    items of the list. Ties apply to every measure ("average" is the exact
    expected value over all orderings of tied items; "optimistic"/"pessimistic"
    the best/worst ordering for the measure).

    Parameters
    ----------
    scores, labels, offsets, query_ids : as :func:`ndcg` takes them.
    **options : the options below.

    Returns
    -------
    dict of column name (``"ndcg@10"``, ``"ap"``, ``"p@5"``, ``"rr(rel=2)"``, ...)
    to a float64 array of shape (n_queries,), NDCG columns first, then the others in
    the order named.

    Example
    -------
    >>> import fastndcg
    >>> out = fastndcg.measure([0.9, 0.5, 0.5, 0.1], [0, 1, 0, 1], [0, 4],
    ...                        measure=["AP", "RR", "P@2"])
    >>> {name: round(float(v[0]), 4) for name, v in out.items()}
    {'ap': 0.4583, 'rr': 0.4167, 'p@2': 0.25}
    """
    from . import measures as M

    entry = O.ENTRY_POINTS["fastndcg.measure"]
    o = entry.bound(options)
    preset, gain, named = o["preset"], o["gain"], o["measure"]
    if preset is not None:
        entry.check("preset", preset)
    rel = None if o["rel"] is None else entry.check("rel", o["rel"])
    parsed = entry.check("measure", named, rel=rel, ranx=preset == "ranx")
    if gain is not None and parsed.gain is not None and not C.same_gain(gain, parsed.gain):
        raise V.refuse(ValueError, "gain", gain,
                       f"{V.spelled('measure', repr(named))} means "
                       f"{V.spelled('gain', repr(parsed.gain))}, but "
                       f"{V.spelled('gain', repr(gain))} was given; drop one of them")
    for m in parsed.others:
        if M.REGISTRY[m.kind].judgments:
            raise V.refuse(ValueError, "measure", named,
                           f"measure {m.column(parsed.rel)!r} counts judged documents, so it "
                           f"needs judgments: use fastndcg.evaluate(run, qrels=...); here "
                           f"every item is judged")
    o["gain"] = parsed.gain if parsed.gain is not None else gain
    _, _, options = _settings("fastndcg.measure", o)
    zero_idcg = entry.check("zero_idcg", options["zero_idcg"])
    M.check_ties(parsed.others, options["ties"], parsed.rel, options["negative_labels"])
    k = parsed.ndcg if parsed.ndcg else [1]
    batch, cutoffs, _, gain_spec, tmode, base, info = _prepare(
        entry, scores, labels, offsets, query_ids, k, options, preset)
    cutoffs = parsed.ndcg
    lay = M.layout(parsed.others, parsed.rel, trec9=preset == "pytrec_eval")
    raw = batch.raw
    flags = M.flags_of(lay, raw)
    n_rel = M.count_relevant(lay, batch.offsets, raw)
    dcg_v, idcg_v, values = C.run_kernels(batch, cutoffs, gain_spec, tmode, base, info,
                                          True, True, plan=C.make_plan(lay, flags, n_rel))
    out = {}
    if cutoffs:
        nd = C.normalise(dcg_v, idcg_v, zero_idcg, batch, cutoffs)
        for i, c in enumerate(cutoffs):
            out[M.column_name("ndcg", c)] = np.ascontiguousarray(nd[:, i])
    for j, m in enumerate(parsed.others):
        out[m.column(parsed.rel)] = np.ascontiguousarray(values[:, j])
    return out


# --------------------------------------------------------------------------- scikit-learn

_SK_TARGETS = ("multilabel-indicator", "continuous-multioutput", "multiclass-multioutput")


def _sk_param_error(func: str, name: str, expected: str, value) -> ValueError:
    return ValueError(f"The '{name}' parameter of {func} must be {expected}. Got {value!r} instead.")


def _sk_array(x, func: str, name: str) -> np.ndarray:
    """scikit-learn's check_array(x, ensure_2d=False) rules and messages, each
    prefixed with the parameter's name (scikit-learn's text follows unchanged)."""
    try:
        return _sk_checked(x, func, name)
    except (ValueError, TypeError) as err:
        text = str(err)
        if text.startswith(f"The '{name}'"):
            raise
        raise type(err)(f"{name}: {text}") from None


def _sk_checked(x, func: str, name: str) -> np.ndarray:
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
    weights = None if sample_weight is None else _sk_weights(sample_weight)
    if weights is not None:
        lengths.append(len(weights))
    if len(set(lengths)) > 1:
        raise ValueError(f"Found input variables with inconsistent numbers of samples: {lengths} "
                         f"(rows of y_true, y_score{', sample_weight' if weights is not None else ''})")
    return y_true, y_score, (None if k is None else int(k)), weights


class WeightsSumToZero(ValueError, ZeroDivisionError):
    """Weights that sum to zero: a ValueError, and the ZeroDivisionError that
    scikit-learn (NumPy's average) raises there."""


def _sk_weights(sample_weight) -> np.ndarray:
    """One finite weight per row, not all zero (scikit-learn would answer NaN or raise
    NumPy's ZeroDivisionError)."""
    try:
        w = np.asarray(sample_weight, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"sample_weight must be a 1-D array of numbers, one per row of "
                        f"y_true, got {V.shown(sample_weight)}") from None
    if w.ndim != 1:
        raise ValueError(f"sample_weight must be 1-D (one weight per row of y_true), got "
                         f"{V.shown(sample_weight)} of shape {w.shape}")
    bad = np.flatnonzero(~np.isfinite(w))
    if bad.size:
        raise ValueError(f"sample_weight[{bad[0]}] is {w[bad[0]]}; weights must be finite "
                         f"numbers")
    if w.size and math.fsum(_scaled_weights(w)) == 0.0:  # scaled: fsum cannot overflow
        raise WeightsSumToZero(f"sample_weight sums to zero ({V.shown(sample_weight)}), so the "
                         f"weighted mean is undefined; give the rows weights that do not cancel")
    return w


def _sk_target_type(y_true: np.ndarray) -> None:
    """Reject what scikit-learn's type_of_target does not call a multi-output target."""
    if y_true.ndim == 2 and y_true.shape[1] > 1:
        return  # always one of _SK_TARGETS for a numeric 2-D array
    flat = y_true.ravel()
    if flat.dtype.kind == "f" and (flat != np.round(flat)).any():
        kind = "continuous"
    else:
        kind = "binary" if len(np.unique(flat)) <= 2 else "multiclass"
    raise ValueError(f"y_true: Only {_SK_TARGETS} formats are supported. Got {kind} instead")


def _sk_rows(y_true: np.ndarray, y_score: np.ndarray, k, log_base: float, ignore_ties: bool,
             want_idcg: bool):
    """Per-row DCG (and IDCG) of a dense matrix, with linear gain."""
    if y_true.shape != y_score.shape:
        raise ValueError(f"y_true and y_score must have the same shape, got {y_true.shape} "
                         f"and {y_score.shape}")
    n_rows, n_items = y_true.shape
    offsets = np.arange(0, n_rows * n_items + 1, n_items, dtype=np.int64)
    labels = C.numeric(y_true, "y_true", C.kernel_labels)
    if ignore_ties:
        # scikit-learn ranks ties in the order of NumPy's argsort, reversed: reproduce it
        order = np.argsort(y_score)[:, ::-1]
        labels = np.take_along_axis(labels, order, axis=1)
        scores = np.zeros(labels.size)  # all tied: "stable" keeps this order
        tmode = K.STABLE
    else:
        scores = np.ascontiguousarray(C.numeric(y_score, "y_score", C.kernel_scores)).ravel()
        tmode = K.AVERAGE
    batch = C.Batch(offsets, scores, np.ascontiguousarray(labels).ravel())
    _, info = C.scan(batch, check_scores=False)  # values were checked as scikit-learn does
    return C.run_kernels(batch, [k], C.Gain(K.LINEAR, np.zeros(1)), tmode, log_base, info, True,
                         want_idcg)[:2]


def _scaled_weights(sample_weight):
    """Weights times a power of two (exact; the weighted mean does not change) when
    their largest is so large or small that summing them would overflow or lose
    them; ordinary weights are passed on untouched."""
    if sample_weight is None:
        return None
    w = np.asarray(sample_weight, dtype=np.float64)
    top = float(np.max(np.abs(w), initial=0.0))
    if top == 0.0 or not np.isfinite(top) or 2.0 ** -500 <= top <= 2.0 ** 500:
        return sample_weight
    return np.ldexp(w, -int(np.frexp(top)[1]))


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
    y_true, y_score, k, weights = _sk_inputs("ndcg_score", y_true, y_score, k, sample_weight,
                                             ignore_ties)
    if y_true.min() < 0:
        raise ValueError("ndcg_score should not be used on negative y_true values.")
    if y_true.ndim > 1 and y_true.shape[1] <= 1:
        raise ValueError("y_true: Computing NDCG is only meaningful when there is more than 1 "
                         f"document. Got {y_true.shape[1]} instead.")
    _sk_target_type(y_true)
    dcg_v, idcg_v = _sk_rows(y_true, y_score, k, 2.0, bool(ignore_ties), True)
    gain = np.divide(dcg_v[:, 0], idcg_v[:, 0], out=np.zeros(len(dcg_v)),
                     where=idcg_v[:, 0] != 0)
    return float(np.average(gain, weights=_scaled_weights(weights)))


def dcg_score(y_true: ArrayLike, y_score: ArrayLike, *, k: int | None = None,
              log_base: float = 2, sample_weight: ArrayLike | None = None,
              ignore_ties: bool = False) -> float:
    """Drop-in replacement for ``sklearn.metrics.dcg_score`` (linear gain, tie-aware
    unless ``ignore_ties=True``). ``log_base`` must be a finite number > 1, else a
    ``ValueError`` (scikit-learn's own message where scikit-learn refuses it too:
    not a number, <= 0 or infinite). scikit-learn also takes 0 < log_base <= 1,
    where every discount is meaningless: it warns and returns 0.0 at 1, and DCGs
    are negative below 1; fastndcg refuses those as :func:`ndcg` does.

    Example
    -------
    >>> import fastndcg
    >>> round(fastndcg.dcg_score([[10, 0, 0, 1, 5]], [[.1, .2, .3, 4, 70]]), 6)
    9.499458
    """
    if (isinstance(log_base, (bool, np.bool_)) or not isinstance(log_base, numbers.Real)
            or not 0 < log_base < math.inf):
        raise _sk_param_error("dcg_score", "log_base", "a float in the range (0.0, inf)", log_base)
    # scikit-learn takes 0 < log_base <= 1 (0.0 and a warning at 1): refused, as by ndcg
    C.parse_log_base(log_base)
    y_true, y_score, k, weights = _sk_inputs("dcg_score", y_true, y_score, k, sample_weight,
                                             ignore_ties)
    _sk_target_type(y_true)
    dcg_v, _ = _sk_rows(y_true, y_score, k, float(log_base), bool(ignore_ties), False)
    return float(np.average(dcg_v[:, 0], weights=_scaled_weights(weights)))
