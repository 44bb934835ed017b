"""Agreement of two label sets: per label, and on the order of the systems.

:func:`agreement` reads two sets of judgments (any qrels source
:func:`fastndcg.evaluate` takes: TREC qrels files, Parquet, tables) and lines them
up on the (query, document) pairs both judged, with the qrels join the
evaluation uses. On those pairs it gives the confusion matrix of the grades and,
overall and per query, Cohen's kappa (unweighted, linear and quadratic weights:
scikit-learn's ``cohen_kappa_score``) and Krippendorff's alpha of the two sets as
two coders (nominal, ordinal and interval: the ``krippendorff`` package), in one
counting pass per query (:mod:`fastndcg._kernels.agreement`). Grades are values:
integers or floats, the confusion matrix over the distinct values.

Given runs, every run is evaluated under each label set, and the two orders of
the systems are compared: Kendall's tau-b (``scipy.stats.kendalltau``),
tau_AP (Yilmaz, Aslam & Robertson 2008: the second set's order judged against
the first's) and Spearman's rho (``scipy.stats.spearmanr``), with the pairs of systems
whose order flips and the paired t-test p-value of each under either set
(:func:`fastndcg._compare.stats.ttest_paired`).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from . import _core as C
from . import _kernels as K
from . import _validate as V
from . import io
from ._arrow import as_numpy
from ._compare.stats import ttest_paired
from ._evaluate import check_options, evaluate_runs, run_items
from .options import takes_options
from .presets import DEFAULT_K
from .qrels import Qrels, duplicate_error, line_up, load_qrels
from .tables import render

__all__ = ["agreement", "Agreement", "SystemAgreement", "Flip", "STATISTICS",
           "grade_agreement", "kendall_tau_b", "tau_ap", "spearman_rho"]

# the label statistics, in the order of the kernel's output columns
STATISTICS = ("kappa", "kappa_linear", "kappa_quadratic", "alpha_nominal", "alpha_ordinal",
              "alpha_interval")
_DESCRIBED = {"kappa": "Cohen's kappa", "kappa_linear": "Cohen's kappa, linear weights",
              "kappa_quadratic": "Cohen's kappa, quadratic weights",
              "alpha_nominal": "Krippendorff's alpha, nominal",
              "alpha_ordinal": "Krippendorff's alpha, ordinal",
              "alpha_interval": "Krippendorff's alpha, interval"}
_SMALL_RANGE = 1 << 16  # integral grades spanning fewer values are coded by subtraction


@dataclass
class Flip:
    """A pair of systems ordered one way under the first set, the other under the
    second: their mean difference (``first`` minus ``second``) and the paired
    t-test's two-sided p-value under each set, on the queries both were scored on."""
    first: str
    second: str
    diff_a: float
    p_a: float
    diff_b: float
    p_b: float


@dataclass
class SystemAgreement:
    """How the two label sets order the systems under one measure.

    Attributes
    ----------
    measure : the measure's name (a per-query column of :func:`fastndcg.evaluate`).
    systems : the runids, in the order given.
    mean_a, mean_b : each system's mean under the first and the second set.
    kendall_tau_b, tau_ap, spearman_rho : the agreement of the two orders.
    flips : the pairs whose order flips (:class:`Flip`).
    """
    measure: str
    systems: list
    mean_a: np.ndarray
    mean_b: np.ndarray
    kendall_tau_b: float
    tau_ap: float
    spearman_rho: float
    flips: list


@dataclass
class Agreement:
    """What :func:`agreement` found.

    Attributes
    ----------
    names : the two label sets' names (first, second).
    values : the distinct grades of the pairs both judged, ascending.
    confusion : ``confusion[i, j]``: documents graded ``values[i]`` by the first set
        and ``values[j]`` by the second (int64).
    overall : statistic -> value over every pair (:data:`STATISTICS`); NaN when
        undefined (a single distinct grade).
    per_query : one row per query with a document both sets judged: the query id,
        ``n_both``, ``n_only_a``, ``n_only_b`` (its documents judged by both, the
        first only, the second only) and every statistic on that query alone.
    n_both, n_only_a, n_only_b : documents judged by both sets, the first only, the
        second only.
    n_queries, n_queries_a, n_queries_b : queries with a document both judged;
        queries each set judges.
    systems : one :class:`SystemAgreement` a measure (empty without runs).
    """
    names: tuple
    values: np.ndarray
    confusion: np.ndarray
    overall: dict
    per_query: pa.Table
    n_both: int
    n_only_a: int
    n_only_b: int
    n_queries: int
    n_queries_a: int
    n_queries_b: int
    systems: list = field(default_factory=list)
    inputs: tuple = ()  # the files read: write() never writes over them

    def to_dict(self) -> dict[str, Any]:
        """Everything but the per-query table as plain Python (NaN as None): what
        ``fastndcg agreement --format json`` prints."""
        return _clean({
            "names": list(self.names), "n_both": self.n_both, "n_only_a": self.n_only_a,
            "n_only_b": self.n_only_b, "n_queries": self.n_queries,
            "n_queries_a": self.n_queries_a, "n_queries_b": self.n_queries_b,
            "values": self.values.tolist(), "confusion": self.confusion.tolist(),
            **self.overall,
            "systems": [{"measure": s.measure, "systems": list(s.systems),
                         "mean_a": s.mean_a.tolist(), "mean_b": s.mean_b.tolist(),
                         "kendall_tau_b": s.kendall_tau_b, "tau_ap": s.tau_ap,
                         "spearman_rho": s.spearman_rho,
                         "flips": [vars(f).copy() for f in s.flips]} for s in self.systems]})

    def format_table(self) -> str:
        """An aligned text report: the counts, the statistics, the confusion matrix
        and, with runs, each measure's systems, correlations and flipped pairs."""
        a, b = self.names
        lines = [f"label agreement: {a} vs {b}",
                 f"documents judged by both {self.n_both:,} (in {self.n_queries:,} queries); "
                 f"by {a} only {self.n_only_a:,}; by {b} only {self.n_only_b:,}", ""]
        per_q = [np.asarray(self.per_query.column(s).to_numpy(zero_copy_only=False))
                 for s in STATISTICS]
        rows = [[_DESCRIBED[s], _num(self.overall[s]), _num(_nanmean(v))]
                for s, v in zip(STATISTICS, per_q)]
        lines += [render(["statistic", "overall", "mean over queries"], rows, "lrr"), ""]
        head = [f"{a} \\ {b}", *(_grade(v) for v in self.values)]
        body = [[_grade(v), *(f"{c:,}" for c in row)]
                for v, row in zip(self.values, self.confusion)]
        lines.append(render(head, body, "l" + "r" * len(self.values),
                            title=f"confusion matrix (rows: {a}, columns: {b})"))
        for s in self.systems:
            lines += ["", _format_systems(s, a, b)]
        return "\n".join(lines)

    def write(self, path: str | os.PathLike) -> None:
        """Write ``per_query`` to ``.parquet`` or ``.csv`` (by the extension), never
        over a file it was computed from."""
        path = V.output_path(path, "path", self.inputs, exts=(".parquet", ".pq", ".csv"))
        if os.path.splitext(path)[1].lower() == ".csv":
            import pyarrow.csv as csv
            csv.write_csv(self.per_query, path)
        else:
            import pyarrow.parquet as pq
            pq.write_table(self.per_query, path)

    def __repr__(self) -> str:
        return (f"<Agreement {self.names[0]} vs {self.names[1]}: {self.n_both:,} documents "
                f"judged by both, kappa={self.overall['kappa']:.4f}>")


def _format_systems(s: SystemAgreement, a: str, b: str) -> str:
    rows = [[name, _num(x), _num(y)] for name, x, y in zip(s.systems, s.mean_a, s.mean_b)]
    out = [render(["system", a, b], rows, "lrr", title=f"{s.measure}: mean of each system"),
           f"Kendall's tau-b {_num(s.kendall_tau_b)}   tau_AP ({a} the reference) "
           f"{_num(s.tau_ap)}   Spearman's rho {_num(s.spearman_rho)}"]
    if s.flips:
        rows = [[f.first, f.second, _num(f.diff_a), _num(f.p_a), _num(f.diff_b), _num(f.p_b)]
                for f in s.flips]
        out.append(render(["system", "vs", f"diff ({a})", f"p ({a})", f"diff ({b})",
                           f"p ({b})"], rows, "llrrrr",
                          title=f"{len(s.flips)} pairs flip (paired t-test p under each set)"))
    else:
        out.append("no pair of systems flips")
    return "\n".join(out)


def _num(x: float) -> str:
    return "nan" if math.isnan(x) else f"{x:.4f}"


def _grade(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else repr(float(v))


def _nanmean(v: np.ndarray) -> float:
    v = v[~np.isnan(v)]
    return float(v.mean()) if len(v) else math.nan


def _clean(obj):
    if isinstance(obj, float):
        return None if not math.isfinite(obj) else obj
    if isinstance(obj, dict):
        return {k: _clean(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_clean(v) for v in obj]
    return obj


# ------------------------------------------------------------------ the label sets


def _set_name(source, fallback: str) -> str:
    if isinstance(source, (str, os.PathLike)):
        return os.path.basename(os.fspath(source).rstrip("/" + os.sep)) or os.fspath(source)
    return fallback


def _names(a, b, names) -> tuple[str, str]:
    if names is not None:
        if (not isinstance(names, (tuple, list)) or len(names) != 2
                or not all(isinstance(n, str) and n for n in names)):
            raise TypeError(f"names must be two non-empty strings (first, second), got "
                            f"{V.shown(names)}")
        if names[0] == names[1]:
            raise ValueError(f"names must differ, got {names[0]!r} twice")
        return names[0], names[1]
    first, second = _set_name(a, "a"), _set_name(b, "b")
    if first == second:
        first, second = os.fspath(a), os.fspath(b)
    return first, second


def _same_source(a, b) -> bool:
    if a is b:
        return True
    if isinstance(a, (str, os.PathLike)) and isinstance(b, (str, os.PathLike)):
        pa_, pb = os.fspath(a), os.fspath(b)
        if os.path.exists(pa_) and os.path.exists(pb):
            return os.path.samefile(pa_, pb)
        return os.path.abspath(pa_) == os.path.abspath(pb)
    return False


def _named(err: Exception, name: str) -> Exception:
    return type(err)(f"label set {name!r}: {err}")


def _load(source, name: str, query: str, doc: str, label: str, unique: bool = True) -> Qrels:
    """A label set read as the evaluation reads qrels; grades kept as judged
    (``unique=False``: not yet checked for a document judged twice, see
    :func:`fastndcg.qrels.load_qrels`)."""
    try:
        qrels = load_qrels(source, query, doc, label, C.parse_gain("linear"), "keep",
                           unique=unique)
    except (ValueError, TypeError) as err:
        raise _named(err, name) from None
    if qrels.inexact is not None:  # grades held alike would agree where they differ
        raise ValueError(f"label set {name!r}: grade {qrels.inexact} is an integer past 2**53, "
                         f"which is compared only approximately (two such grades can be held "
                         f"alike, and would agree); give the grades as smaller codes, e.g. "
                         f"their ranks")
    return qrels


def _load_both(a, b, names: tuple, query: str, doc: str, label: str) -> tuple:
    """(first, second, match, judged_q): both label sets read and lined up as
    :func:`fastndcg.qrels.line_up` does, each checked for a document judged twice
    in that pass; the errors those of two loads, in the same order."""
    qa = _load(a, names[0], query, doc, label, unique=False)
    try:
        qb = _load(b, names[1], query, doc, label, unique=False)
    except (ValueError, TypeError):
        try:  # the first set's document judged twice comes first
            qa.check_unique()
        except ValueError as err:
            raise _named(err, names[0]) from None
        raise
    match, judged_q, duplicates = line_up(qa, qb)
    for qr, name, dup in zip((qa, qb), names, duplicates):
        if dup is not None:
            raise _named(duplicate_error(qr.subject, qr.ids, qr.docs, dup), name) from None
    return qa, qb, match, judged_q


def _codes(ga: np.ndarray, gb: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(codes of ga, codes of gb, values): each grade's position in ``values``, the
    sorted grades (integral grades of a small range: every value of the range)."""
    if len(ga) and (ga.dtype.kind in "iu" or (np.array_equal(ga, np.floor(ga))
                                              and np.array_equal(gb, np.floor(gb)))):
        lo = min(ga.min(), gb.min())
        hi = max(ga.max(), gb.max())
        if float(hi) - float(lo) < _SMALL_RANGE:
            values = np.arange(int(lo), int(hi) + 1, dtype=np.float64)
            return (np.subtract(ga, lo, dtype=np.int64, casting="unsafe"),
                    np.subtract(gb, lo, dtype=np.int64, casting="unsafe"), values)
    values = np.unique(np.concatenate([ga, gb]).astype(np.float64))
    return (np.searchsorted(values, ga).astype(np.int64),
            np.searchsorted(values, gb).astype(np.int64), values)


_ONCE = np.zeros(0, np.int64)  # no weights: each pair counts once
_DENSE_CELLS = 1 << 22  # codes of up to this many (first, second) cells are counted densely
MAX_GRADES = 4096  # distinct grades of the shared documents (the confusion matrix's side)


def _confusion(ca: np.ndarray, cb: np.ndarray, values: np.ndarray, names: tuple,
               counts: np.ndarray | None = None) -> tuple:
    """(grades, confusion matrix, (first, second) codes of its nonzero cells, their
    counts): the matrix over the distinct grades the pairs use. ``counts``: the
    pairs counted in dense cells already (:func:`_dense_cells`), else counted here."""
    size = len(values)
    if counts is None and _dense_cells(size):
        counts = np.bincount(ca * size + cb, minlength=size * size)
    if counts is not None:
        cells = np.flatnonzero(counts)
        cell_counts = counts[cells]
    else:
        cells, cell_counts = np.unique(ca * size + cb, return_counts=True)
    first, second = cells // size, cells % size
    used = np.unique(np.concatenate([first, second]))
    if len(used) > MAX_GRADES:
        raise ValueError(
            f"the documents {names[0]!r} and {names[1]!r} both judge have {len(used):,} "
            f"distinct grades, more than {MAX_GRADES:,}: their confusion matrix would hold "
            f"{len(used) ** 2:,} cells; round the grades (to 2 decimals, say) first")
    confusion = np.zeros((len(used), len(used)), np.int64)
    confusion[np.searchsorted(used, first), np.searchsorted(used, second)] = cell_counts
    return values[used], confusion, (first, second), cell_counts


def _dense_cells(size: int) -> bool:
    """Whether the pairs of ``size`` codes are counted in an array of every cell."""
    return size * size <= _DENSE_CELLS


def _interval_values(values: np.ndarray) -> np.ndarray:
    """The sorted distinct grades as interval alpha reads them: less the smallest, then
    scaled by a power of two to at most 1. Interval alpha is the same for grades
    shifted and scaled alike; the shift is exact where grades are close (1e15 and
    1e15 + 1, 1 and the next double up, whose deviations from their mean would
    otherwise be lost to rounding), the scaling always (squares of 1e300 do not
    overflow, nor those of 1e-300 underflow).

    >>> _interval_values(np.array([1.0, 2.0, 5.0])).tolist()
    [0.0, 0.125, 0.5]
    """
    if not len(values):
        return values
    with np.errstate(over="ignore"):
        shifted = values - values[0]
    top = float(shifted[-1])
    if math.isinf(top):  # the range overflows (-1e308 to 1e308): halved first, exactly
        values = np.ldexp(values, -math.frexp(float(np.abs(values).max()))[1] - 1)
        shifted = values - values[0]
        top = float(shifted[-1])
    return shifted if top == 0.0 else np.ldexp(shifted, -math.frexp(top)[1])


def _statistics(offsets: np.ndarray, ca: np.ndarray, cb: np.ndarray, values: np.ndarray,
                weights: np.ndarray = _ONCE) -> np.ndarray:
    out = np.empty((len(offsets) - 1, K.N_STATS), np.float64)
    values = _interval_values(values)
    with C.KERNEL_LOCK:
        K.agreement_groups(offsets, ca, cb, weights, values, C.work_chunks(offsets, offsets),
                           out)
    return out


def _pairs(qa: Qrels, qb: Qrels, match: np.ndarray) -> tuple:
    """(codes of the first set's grades, of the second's, values, pairs of each query
    of the first set, the pairs counted by cell or None): the pairs both sets judge,
    in the first set's order, coded as :func:`_codes` codes them. Integral grades of a small range are coded in one
    pass (:func:`fastndcg._kernels.agreement.pair_codes`), over the range of every
    grade of either set: the codes of the grades the pairs use keep their order."""
    lo = min(qa.info.lo, qb.info.lo)
    hi = max(qa.info.hi, qb.info.hi)
    if qa.info.integer and qb.info.integer and hi - lo < _SMALL_RANGE:
        values = np.arange(int(lo), int(hi) + 1, dtype=np.float64)
        ca = np.empty(len(qa.labels), np.int64)
        cb = np.empty(len(qa.labels), np.int64)
        both_q = np.empty(qa.n_queries, np.int64)
        cells = np.zeros(len(values) ** 2 if _dense_cells(len(values)) else 0, np.int64)
        with C.KERNEL_LOCK:
            n_both = K.pair_codes(qa.offsets, match, qa.labels, qb.labels, int(lo), len(values),
                                  ca, cb, both_q, cells)
        return ca[:n_both], cb[:n_both], values, both_q, cells if len(cells) else None
    ia = np.flatnonzero(match >= 0)  # the pairs, grouped by the first set's queries
    ca, cb, values = _codes(qa.labels[ia], qb.labels[match[ia]])
    return ca, cb, values, np.diff(np.searchsorted(ia, qa.offsets)), None


def label_agreement(qa: Qrels, qb: Qrels, names: tuple, query: str, match: np.ndarray,
                    judged_q: np.ndarray) -> Agreement:
    """The label part of :func:`agreement` on two label sets lined up
    (:func:`fastndcg.qrels.line_up`: ``match`` and ``judged_q``)."""
    ca, cb, values, both_q, counts = _pairs(qa, qb, match)
    n_both = len(ca)
    if n_both == 0:
        raise ValueError(
            f"label sets {names[0]!r} and {names[1]!r} share no judged document: none of "
            f"the {len(qa.labels):,} judgments of {names[0]!r} ({qa.n_queries:,} queries) "
            f"is of a (query, document) pair {names[1]!r} judges ({len(qb.labels):,} "
            f"judgments, {qb.n_queries:,} queries), so there is nothing to agree on; do "
            f"their query and document ids match (same spelling, same columns)?")
    shared = both_q > 0
    grades, confusion, overall = _overall(ca, cb, values, names, counts)
    bounds = np.zeros(int(shared.sum()) + 1, np.int64)
    np.cumsum(both_q[shared], out=bounds[1:])
    per = _statistics(bounds, ca, cb, values)
    only_a = (np.diff(qa.offsets) - both_q)[shared]
    jq = judged_q[shared]
    only_b = np.where(jq >= 0, qb.offsets[jq + 1] - qb.offsets[np.maximum(jq, 0)], 0) - both_q[shared]
    table = {query: qa.ids.filter(pa.array(shared)), "n_both": both_q[shared],
             "n_only_a": only_a, "n_only_b": only_b}
    table.update({s: per[:, i] for i, s in enumerate(STATISTICS)})
    return Agreement(names=names, values=grades, confusion=confusion,
                     overall=overall,
                     per_query=pa.table(table), n_both=n_both,
                     n_only_a=len(qa.labels) - n_both, n_only_b=len(qb.labels) - n_both,
                     n_queries=int(shared.sum()), n_queries_a=qa.n_queries,
                     n_queries_b=qb.n_queries)


def _overall(ca: np.ndarray, cb: np.ndarray, values: np.ndarray, names: tuple,
             counts: np.ndarray | None = None) -> tuple:
    """(grades, confusion matrix, statistic -> value) of every pair (``counts``: as
    :func:`_confusion` takes them)."""
    grades, confusion, cells, cell_counts = _confusion(ca, cb, values, names, counts)
    out = _statistics(np.array([0, len(cell_counts)], np.int64), cells[0], cells[1], values,
                      cell_counts)[0]
    return grades, confusion, {s: float(out[i]) for i, s in enumerate(STATISTICS)}


def grade_agreement(a: Sequence[float], b: Sequence[float]) -> dict[str, float]:
    """Kappa and alpha of two grades of each item, already lined up: ``a[i]`` and
    ``b[i]`` grade item i. The statistics of :data:`STATISTICS`, as
    :func:`agreement` gives them overall (``cohen_kappa_score(a, b, weights=...)``
    and ``krippendorff.alpha([a, b], level_of_measurement=...)``).

    >>> stats = grade_agreement([2, 1, 0, 0, 1, 2], [2, 0, 0, 1, 1, 2])
    >>> stats["kappa"], round(stats["alpha_ordinal"], 4)
    (0.5, 0.7708)
    """
    try:
        raw = [np.asarray(x) for x in (a, b)]
    except ValueError:  # a ragged nesting
        raw = [np.asarray(x, object) for x in (a, b)]
    if any(r.ndim != 1 for r in raw):
        raise ValueError(f"a and b must be two 1-D arrays of the same non-zero length (a grade "
                         f"of each item in each), got shapes {raw[0].shape} and {raw[1].shape}")
    ga, gb = (C.numeric(r, name, C.kernel_labels) for r, name in zip(raw, ("a", "b")))
    if len(ga) != len(gb) or not len(ga):
        raise ValueError(f"a and b must be two 1-D arrays of the same non-zero length (a grade "
                         f"of each item in each), got shapes {ga.shape} and {gb.shape}")
    for g, name in ((ga, "a"), (gb, "b")):
        if g.dtype.kind == "f" and not np.isfinite(g).all():
            i = int(np.flatnonzero(~np.isfinite(g))[0])
            raise ValueError(f"grades must be finite, but {name}[{i}] is {float(g[i])!r}")
    return _overall(*_codes(ga, gb), ("a", "b"))[2]


# ------------------------------------------------------------------ the orders of systems


def _ranks(x: np.ndarray) -> np.ndarray:
    """Average ranks (1-based, ties sharing the mean of their ranks)."""
    order = np.argsort(x, kind="stable")
    xs = x[order]
    starts = np.flatnonzero(np.concatenate(([True], xs[1:] != xs[:-1])))
    ends = np.append(starts[1:], len(x))
    avg = (starts + ends + 1) / 2.0
    out = np.empty(len(x))
    out[order] = np.repeat(avg, ends - starts)
    return out


def _scorings(x, y, names: tuple) -> tuple[np.ndarray, np.ndarray]:
    """Two scorings of the same items (the correlations' arguments, ``names``) as
    float64 arrays, or an error that says what they must be."""
    try:
        a, b = np.asarray(x), np.asarray(y)
        if a.dtype.kind not in "biuf" or b.dtype.kind not in "biuf":
            raise TypeError  # text, objects: not parsed as numbers
        a, b = a.astype(np.float64), b.astype(np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{names[0]} and {names[1]} must be sequences of numbers (a score of "
                        f"each item in each), got {V.shown(x)} and {V.shown(y)}") from None
    if a.ndim != 1 or b.ndim != 1 or len(a) != len(b):
        raise ValueError(f"{names[0]} and {names[1]} must be two 1-D sequences of the same "
                         f"length (a score of each item in each), got shapes {a.shape} and "
                         f"{b.shape}")
    return a, b


def kendall_tau_b(x: Sequence[float], y: Sequence[float]) -> float:
    """Kendall's tau-b of two scorings of the same items: ``scipy.stats.kendalltau``.

    >>> round(kendall_tau_b([0.1, 0.2, 0.3, 0.4], [0.1, 0.3, 0.2, 0.4]), 12)
    0.666666666667
    """
    x, y = _scorings(x, y, ("x", "y"))
    if len(x) < 2 or np.isnan(x).any() or np.isnan(y).any():
        return math.nan
    iu = np.triu_indices(len(x), 1)
    # the sign of each pair's difference, by comparison (a difference of 1e308 and
    # -1e308 overflows, one of two infinities is NaN)
    dx = (np.greater.outer(x, x).astype(np.int8) - np.less.outer(x, x))[iu]
    dy = (np.greater.outer(y, y).astype(np.int8) - np.less.outer(y, y))[iu]
    untied_x, untied_y = np.count_nonzero(dx), np.count_nonzero(dy)
    if untied_x == 0 or untied_y == 0:
        return math.nan
    concordant = int(np.sum(dx * dy, dtype=np.int64))  # concordant less discordant pairs
    return float(concordant / math.sqrt(untied_x) / math.sqrt(untied_y))


def tau_ap(reference: Sequence[float], other: Sequence[float]) -> float:
    """tau_AP (Yilmaz, Aslam & Robertson 2008) of ``other``'s order of the items,
    judged against ``reference``'s, both ranking higher scores first.

    The order being judged is walked from the top: for the item at rank i = 2..N
    of ``other``, C(i) counts the items ``other`` puts above it that ``reference``
    also scores higher, and tau_AP = 2/(N-1) * sum_i C(i)/(i-1) - 1. Errors near
    the top of ``other`` cost more; it is not symmetric (``tau_ap(x, y)`` is
    ircor's ``tauAP(x, y)``, x the truth).

    Ties. An item tied with i in ``reference`` is not above it there, so it does
    not count for C(i). Items tied in ``other`` have no order between them: the
    value is the mean of the definition over every order of ``other``'s tied
    items (exact, and independent of the order the items are given in). Two
    items tied in both leave the order undefined: NaN, as for fewer than two
    items or a NaN score.

    >>> tau_ap([0.9, 0.8, 0.7, 0.6, 0.5], [0.5, 0.9, 0.8, 0.7, 0.6])
    0.5
    >>> round(tau_ap([0.4, 0.3, 0.2, 0.1], [0.4, 0.3, 0.1, 0.2]), 12)
    0.777777777778
    """
    x, y = _scorings(reference, other, ("reference", "other"))
    n = len(x)
    if n < 2 or np.isnan(x).any() or np.isnan(y).any():
        return math.nan
    order = np.argsort(-y, kind="stable")
    xs, ys = x[order], y[order]
    higher = xs[None, :] > xs[:, None]                  # [i, j]: the reference puts j above i
    if ((xs[None, :] == xs[:, None]) & (ys[None, :] == ys[:, None])
            & ~np.eye(n, dtype=bool)).any():
        return math.nan
    first = np.flatnonzero(np.concatenate(([True], ys[1:] != ys[:-1])))
    size = np.diff(np.append(first, n))
    start = np.repeat(first, size)                      # 0-based rank of each item's tie group
    m = np.repeat(size, size)
    group = np.repeat(np.arange(len(first)), size)
    before = (higher & (group[None, :] < group[:, None])).sum(axis=1)   # in earlier groups
    within = (higher & (group[None, :] == group[:, None])).sum(axis=1)  # in its own group
    total = 0.0
    for i in range(n):  # each item at each rank of its tie group, with equal chance
        u = np.arange(m[i])
        rank = start[i] + u                             # 0-based: rank - 1 items above it
        c = before[i] + (u * (within[i] / (m[i] - 1)) if m[i] > 1 else np.zeros(1))
        keep = rank > 0
        total += float((c[keep] / rank[keep]).sum()) / m[i]
    return float(2.0 / (n - 1) * total - 1.0)


def spearman_rho(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman's rho, the correlation of the average ranks:
    ``scipy.stats.spearmanr``.

    >>> round(spearman_rho([0.1, 0.2, 0.3, 0.4], [0.1, 0.3, 0.2, 0.4]), 12)
    0.8
    """
    x, y = _scorings(x, y, ("x", "y"))
    if len(x) < 2 or np.isnan(x).any() or np.isnan(y).any():
        return math.nan
    rx, ry = _ranks(x), _ranks(y)
    rx -= rx.mean()
    ry -= ry.mean()
    den = math.sqrt(float((rx * rx).sum()) * float((ry * ry).sum()))
    return float((rx * ry).sum() / den) if den > 0 else math.nan


def _per_query(report, query: str, measure: str) -> tuple[pa.Array, np.ndarray]:
    t = report.per_query
    return t.column(query).combine_chunks(), as_numpy(t.column(measure).combine_chunks())


def _paired_p(first: tuple, second: tuple, names: tuple, label_set: str) -> float:
    """The paired t-test's p-value of two systems' per-query values (ids, values) on
    the queries both were scored on (NaN values left out)."""
    ids_1, v1 = first
    ids_2, v2 = second
    pos = pc.index_in(ids_1, value_set=ids_2)
    ok = as_numpy(pc.is_valid(pos), zero_copy_only=False)
    if not ok.any():
        raise ValueError(f"runs {names[0]!r} and {names[1]!r} have no query in common under "
                         f"label set {label_set!r}, so they cannot be compared query by "
                         f"query; give runs of the same queries")
    d = v1[ok] - v2[as_numpy(pos.filter(pa.array(ok)), zero_copy_only=False)]
    return ttest_paired(d[~np.isnan(d)])[1]


def system_agreement(reports_a: Mapping, reports_b: Mapping, names: tuple, query: str
                     ) -> list[SystemAgreement]:
    """The system part of :func:`agreement`: the runs' reports (runid -> Report)
    under each label set."""
    systems = list(reports_a)
    measures = list(next(iter(reports_a.values())).mean)
    out = []
    for m in measures:
        mean_a = np.array([reports_a[s].mean[m] for s in systems])
        mean_b = np.array([reports_b[s].mean[m] for s in systems])
        values_a = {s: _per_query(reports_a[s], query, m) for s in systems}
        values_b = {s: _per_query(reports_b[s], query, m) for s in systems}
        flips = []
        for i in range(len(systems)):
            for j in range(i + 1, len(systems)):
                da, db = mean_a[i] - mean_a[j], mean_b[i] - mean_b[j]
                pair = (systems[i], systems[j])
                p_a = _paired_p(values_a[pair[0]], values_a[pair[1]], pair, names[0])
                p_b = _paired_p(values_b[pair[0]], values_b[pair[1]], pair, names[1])
                if da * db < 0:
                    flips.append(Flip(pair[0], pair[1], float(da), p_a, float(db), p_b))
        out.append(SystemAgreement(m, systems, mean_a, mean_b, kendall_tau_b(mean_a, mean_b),
                                   tau_ap(mean_a, mean_b), spearman_rho(mean_a, mean_b), flips))
    return out


@takes_options("fastndcg.agreement")
def agreement(a, b, *, runs=None, runid: str = "tag", names: Sequence[str] | None = None,
              **options) -> Agreement:
    """How far two label sets agree: per label, and on the order of the systems.

    Parameters
    ----------
    a, b : the two label sets, each a qrels source as ``qrels=`` of
        :func:`fastndcg.evaluate` takes (a TREC qrels file, a Parquet file, a table);
        grades may be integers or floats. ``a`` is the reference of tau_AP.
    runs : the systems, as :func:`fastndcg.evaluate_runs` takes them (at
        least two); without them only the labels are compared.
    runid : how runs given by path are named (as ``evaluate_runs``).
    names : the two sets' names in the output (default: their file names, else
        "a" and "b").
    **options : the evaluation options (:data:`fastndcg.options.OPTIONS`) of the
        runs' evaluation under each set (``measure``, ``k``, ``preset``, ...); the
        column options also name the label sets' columns. ``qrels`` is not one:
        the label sets are ``a`` and ``b``.

    The labels are compared on the (query, document) pairs both sets judge; the
    counts of those judged by one set only are reported. Every statistic is NaN
    on a query (or overall) with a single distinct grade. Each run is evaluated
    under each set as :func:`fastndcg.evaluate` would evaluate it, and a pair
    flips when its order under one set is the reverse of the other (a tie flips
    nothing).

    Example
    -------
    >>> import pyarrow as pa, fastndcg
    >>> human = pa.table({"query_id": ["q1"] * 4 + ["q2"] * 3,
    ...                   "doc_id": ["d1", "d2", "d3", "d4", "d1", "d2", "d3"],
    ...                   "label": [2, 1, 0, 0, 1, 0, 2]})
    >>> llm = pa.table({"query_id": ["q1"] * 4 + ["q2"] * 2,
    ...                 "doc_id": ["d1", "d2", "d3", "d4", "d1", "d3"],
    ...                 "label": [2, 0, 0, 1, 1, 2]})
    >>> result = fastndcg.agreement(human, llm, names=("human", "llm"))
    >>> result.n_both, result.n_only_a, result.n_only_b
    (6, 1, 0)
    >>> round(result.overall["kappa"], 4), round(result.overall["alpha_ordinal"], 4)
    (0.5, 0.7708)
    >>> result.confusion.tolist()
    [[1, 1, 0], [1, 1, 0], [0, 0, 2]]
    """
    label_names = _names(a, b, names)
    if _same_source(a, b):
        raise ValueError(f"label sets {label_names[0]!r} and {label_names[1]!r} are the same "
                         f"{'file' if isinstance(a, (str, os.PathLike)) else 'object'}, "
                         f"given twice; give two different label sets")
    opts, _ = check_options(where="fastndcg.agreement", **{**options, "qrels": a})
    if runs is None:
        asked = [k for k in ("measure", "k")
                 if options.get(k, DEFAULT_K) not in (None, DEFAULT_K)]
        if runid != "tag":
            asked.insert(0, "runid")
        if asked:
            what = "names" if asked[0] == "runid" else "scores"
            raise ValueError(f"{asked[0]}= {what} runs, and none were given: pass runs=[...] "
                             f"(two or more) to compare the systems' orders, or drop "
                             f"{asked[0]}=")
    else:
        runs = run_items(runs)
        n_runs = len(runs)
        if n_runs < 2:
            raise ValueError(f"comparing the orders of systems needs two or more runs, got "
                             f"{n_runs}; give more runs, or none to compare the labels only")
    qa, qb, match, judged_q = _load_both(a, b, label_names, opts.query, opts.doc, opts.label)
    result = label_agreement(qa, qb, label_names, opts.query, match, judged_q)
    result.inputs = tuple(io.input_paths(a) + io.input_paths(b))
    if runs is not None:
        # both sets given as label sets: each run read and ranked once, scored under each
        evaluated = evaluate_runs(runs, runid=runid, per_query=None,
                                  **{**options, "qrels": dict(zip(label_names, (a, b)))})
        if len(evaluated.reports) < 2:
            raise ValueError(f"comparing the orders of systems needs two or more runs, got "
                             f"{len(evaluated.reports)}; give more runs, or none to compare "
                             f"the labels only")
        under = [{runid_: sets.reports[name] for runid_, sets in evaluated.reports.items()}
                 for name in label_names]
        result.systems = system_agreement(under[0], under[1], label_names, opts.query)
    return result
