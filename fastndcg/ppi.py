"""Prediction-powered means: many queries judged by an LLM, a few by people.

The queries of an evaluation fall in two disjoint sets: the *labelled sample*,
the queries with human judgments (each has a value under the human labels, Y,
and under the LLM labels, Ŷ), and the *unlabelled set*, the others (only Ŷ). The
labelled sample is assumed to be a uniform random sample of the queries. Then,
for each measure, with λ in [0, 1]::

    θ(λ) = λ · mean(Ŷ, unlabelled) + mean(Y - λ·Ŷ, labelled)

is an unbiased estimate of the mean the human labels would give over all the
queries, whatever the LLM's errors: the labelled sample measures the LLM's bias
and takes it off. Its standard error is ``sqrt(var(Y - λŶ) / n + λ² var(Ŷ) / N)``
(variances over the labelled and the unlabelled set, divided by their sizes, as
``ppi_py`` takes them), and the interval is θ ± z · se, z the normal quantile.
λ = 0 is the classical mean of the human sample alone, λ = 1 plain PPI
(Angelopoulos et al., Science 2023), and the default, PPI++ (Angelopoulos, Duchi
& Zrnic 2023), the power-tuned λ that minimises the variance::

    λ = cov(Y, Ŷ) / ((1 + n / N) · var(Ŷ over both sets, n + N - 1 degrees))

clipped to [0, 1] (0 when the LLM's values do not vary). These are
``ppi_py.ppi_mean_ci`` and ``ppi_mean_pointestimate``'s formulas, and the
classical interval ``classical_mean_ci``'s.

**Sums.** :class:`Sums` holds, per measure, the counts n and N and fixed-point
sums (:func:`fastndcg._kernels.fix_dot`) of Y, Ŷ, Y², Ŷ², YŶ over the labelled
queries and of Ŷ, Ŷ² over the unlabelled ones: each product is added with its
rounding error, so the sums are exact, merge exactly (any order, partitioning or
machine gives the same bits) and do not grow with the queries. The moments are
then formed exactly from the sums and rounded once.

>>> import numpy as np
>>> llm = np.array([[0.9], [0.5], [0.7], [0.2], [0.6], [0.4]])
>>> human = np.array([[0.8], [0.4], [0.7], [np.nan], [np.nan], [np.nan]])
>>> sums = Sums.empty(["ndcg@10"])
>>> sums.add(llm, human, ~np.isnan(human[:, 0]))
>>> result = sums.estimate(confidence=0.9, ppi=1.0)
>>> m = result.measures["ndcg@10"]
>>> (m.n, m.N, round(m.estimate, 4))  # 0.4 + mean(0.8-0.9, 0.4-0.5, 0.7-0.7)
(3, 3, 0.3333)
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from fractions import Fraction
from statistics import NormalDist
from typing import Any

import numpy as np

import pyarrow as pa
import pyarrow.compute as pc

from . import _validate as V
from .measures import summary_of
from .tables import render

__all__ = ["Sums", "Lining", "PPI", "Estimate", "CONFIDENCE", "TUNED", "ASSUMPTION",
           "check_ppi", "check_confidence", "lined_up", "matched"]

CONFIDENCE = 0.95
TUNED = "tuned"
ASSUMPTION = ("the queries with human judgments are taken to be a uniform random sample of "
              "the queries")

# labelled sums, in order: Y, Ŷ, Y², Ŷ², YŶ (as the products a * b of these columns)
_LAB_A = (0, 1, 0, 1, 0)   # 0: Y, 1: Ŷ, 2: ones
_LAB_B = (2, 2, 0, 1, 1)
# unlabelled sums: Ŷ, Ŷ²
_UNL_A = (1, 1)
_UNL_B = (2, 1)


def check_ppi(value, name: str = "ppi") -> str | float:
    """``ppi=``: ``"tuned"`` (PPI++'s power-tuned λ) or a fixed λ, a number from 0
    (the human sample alone) to 1 (plain PPI).

    >>> check_ppi("tuned"), check_ppi(1)
    ('tuned', 1.0)
    """
    if isinstance(value, str) and value == TUNED:
        return value
    if (isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real)
            or not 0 <= value <= 1):
        raise V.refuse(ValueError, name, value, f"{V.spelled(name)} takes 'tuned' (the "
                       f"power-tuned λ of PPI++) or a number from 0 to 1 (a fixed λ: 1 is plain "
                       f"PPI, 0 the human sample alone), got {V.shown(value)}")
    return float(value)


def check_confidence(value, name: str = "confidence") -> float:
    """``confidence=``: the level of the intervals, strictly between 0 and 1.

    >>> check_confidence(0.9)
    0.9
    """
    return V.level(value, name)


@dataclass
class Estimate:
    """One measure's means and intervals (see :class:`PPI`)."""
    llm_mean: float     # the mean with LLM labels over the n + N queries
    human_mean: float   # the classical mean of the human sample
    human_low: float
    human_high: float
    estimate: float     # the prediction-powered estimate
    low: float
    high: float
    se: float           # its standard error
    lam: float          # λ
    n: int              # queries of the human sample
    N: int              # queries without human judgments

    def to_dict(self) -> dict[str, Any]:
        return dict(vars(self))


@dataclass
class PPI:
    """Prediction-powered means of an evaluation: ``report.ppi``.

    Attributes
    ----------
    measures : measure column -> :class:`Estimate`: ``llm_mean`` (LLM labels, the n + N
        queries), ``human_mean`` with ``human_low`` / ``human_high`` (the classical
        mean and interval of the n queries with human judgments alone),
        ``estimate`` with ``low`` / ``high`` and ``se`` (prediction-powered), ``lam``
        (λ), ``n`` (queries with human judgments) and ``N`` (queries without).
    confidence : the level of the intervals.
    ppi : "tuned" (PPI++) or the fixed λ asked for.
    n_human_only : queries judged by people but not scored with the LLM labels (left
        out: PPI needs both values of a labelled query).
    left_out : measure columns not averaged by a plain mean (sums, geometric means),
        which have no prediction-powered mean here.
    assumption : what the intervals assume, in words.
    """
    measures: dict
    confidence: float
    ppi: str | float
    n_human_only: int = 0
    left_out: list = field(default_factory=list)
    assumption: str = ASSUMPTION

    @property
    def method(self) -> str:
        """The estimator in words."""
        return ("PPI++ (power-tuned λ)" if self.ppi == TUNED else
                "plain PPI (λ = 1)" if self.ppi == 1.0 else f"PPI with λ = {self.ppi:g}")

    def to_dict(self) -> dict[str, Any]:
        """Plain numbers (what ``--format json`` prints under ``"ppi"``)."""
        return {"confidence": self.confidence, "ppi": self.ppi, "method": self.method,
                "assumption": self.assumption, "n_human_only": self.n_human_only,
                "left_out": list(self.left_out),
                "measures": {m: e.to_dict() for m, e in self.measures.items()}}

    def format_table(self) -> str:
        """An aligned text table: a row a measure."""
        pct = f"{self.confidence * 100:g}%"
        head = ["measure", "LLM labels", "human sample", f"{pct} interval", "PPI",
                f"{pct} interval", "λ", "n", "N"]
        rows = [[m, f"{e.llm_mean:.4f}", f"{e.human_mean:.4f}",
                 f"[{e.human_low:.4f}, {e.human_high:.4f}]", f"{e.estimate:.4f}",
                 f"[{e.low:.4f}, {e.high:.4f}]", f"{e.lam:.4f}", f"{e.n:,}", f"{e.N:,}"]
                for m, e in self.measures.items()]
        lines = [render(head, rows, "lrrrrrrrr",
                        title=f"prediction-powered means: {self.method}")]
        lines.append(f"n: queries with human judgments; N: without. {self.assumption[0].upper()}"
                     f"{self.assumption[1:]}.")
        if self.n_human_only:
            lines.append(f"{self.n_human_only:,} queries with human judgments have no LLM "
                         f"judgment and are left out.")
        if self.left_out:
            lines.append(f"not averaged by a mean, so left out: {', '.join(self.left_out)}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        items = ", ".join(f"{m}={e.estimate:.4f} [{e.low:.4f}, {e.high:.4f}]"
                          for m, e in self.measures.items())
        return f"<PPI {self.method}: {items}>"


@dataclass
class Sums:
    """Mergeable sums behind :class:`PPI` (see the module docstring): per measure,
    ``n`` and ``N`` and the fixed-point limbs of the labelled sums (Y, Ŷ, Y², Ŷ², YŶ)
    and of the unlabelled ones (Ŷ, Ŷ²)."""
    names: list
    n: np.ndarray
    N: np.ndarray
    labelled: np.ndarray     # (M, 5, FIX_LIMBS) int64
    unlabelled: np.ndarray   # (M, 2, FIX_LIMBS) int64
    n_human_only: int = 0

    @classmethod
    def empty(cls, names) -> "Sums":
        from . import _kernels as K
        m = len(names)
        return cls(list(names), np.zeros(m, np.int64), np.zeros(m, np.int64),
                   np.zeros((m, len(_LAB_A), K.FIX_LIMBS), np.int64),
                   np.zeros((m, len(_UNL_A), K.FIX_LIMBS), np.int64))

    def add(self, llm: np.ndarray, human: np.ndarray, labelled: np.ndarray) -> None:
        """Add queries: ``llm`` and ``human`` (q, M) values (``human`` read only where
        ``labelled``, the queries with human judgments). A query without a value
        (NaN) under the labels it is read with is left out of that measure."""
        from . import _kernels as K
        llm = np.asarray(llm, np.float64)
        human = np.asarray(human, np.float64)
        labelled = np.asarray(labelled, bool)
        for m, name in enumerate(self.names):
            yhat, y = llm[:, m], human[:, m]
            has = ~np.isnan(yhat)
            lab = labelled & has & ~np.isnan(y)
            unl = ~labelled & has
            for rows, a_cols, b_cols, limbs, count in (
                    (lab, _LAB_A, _LAB_B, self.labelled[m], self.n),
                    (unl, _UNL_A, _UNL_B, self.unlabelled[m], self.N)):
                k = int(rows.sum())
                if not k:
                    continue
                cols = np.stack([y[rows], yhat[rows], np.ones(k)], axis=1)
                for start in range(0, k, 1 << 30):
                    part = cols[start:start + (1 << 30)]
                    bad = K.fix_dot(np.ascontiguousarray(part[:, a_cols]),
                                    np.ascontiguousarray(part[:, b_cols]), limbs)
                    if bad >= 0:
                        raise ValueError(f"{name}: a query's value (or its square) is not "
                                         f"finite or lies beyond 2**90, which the sums of the "
                                         f"prediction-powered mean do not hold; use measures "
                                         f"of ordinary size")
                    K.fix_normalize(limbs)
                count[m] += k

    def merge(self, other: "Sums") -> "Sums":
        """These sums and ``other``'s (exact); returns self."""
        return self._combine(other, 1)

    def subtract(self, other: "Sums") -> "Sums":
        """These sums without ``other``'s, queries (or fragments of queries) that were
        added to them: exact, as the limbs are integers, so taking queries out and
        adding them again gives the very bits of never having taken them out;
        returns self.

        >>> a, b = Sums.empty(["m"]), Sums.empty(["m"])
        >>> a.add(np.array([[0.1], [0.7]]), np.array([[0.3], [np.nan]]), np.array([True, False]))
        >>> b.add(np.array([[0.7]]), np.array([[np.nan]]), np.array([False]))
        >>> once = Sums.empty(["m"])
        >>> once.add(np.array([[0.1]]), np.array([[0.3]]), np.array([True]))
        >>> a = a.subtract(b)
        >>> (int(a.N[0]), np.array_equal(a.unlabelled, once.unlabelled),
        ...  np.array_equal(a.labelled, once.labelled))
        (0, True, True)
        """
        return self._combine(other, -1)

    def _combine(self, other: "Sums", sign: int) -> "Sums":
        from . import _kernels as K
        if self.names != other.names:
            raise ValueError(f"cannot merge the sums of {self.names} and {other.names}")
        self.n += sign * other.n
        self.N += sign * other.N
        self.labelled += sign * other.labelled
        self.unlabelled += sign * other.unlabelled
        K.fix_normalize(self.labelled.reshape(-1, K.FIX_LIMBS))
        K.fix_normalize(self.unlabelled.reshape(-1, K.FIX_LIMBS))
        self.n_human_only += sign * other.n_human_only
        return self

    def estimate(self, confidence: float = CONFIDENCE, ppi: str | float = TUNED,
                 left_out=()) -> PPI:
        """The :class:`PPI` of these sums. Each measure needs at least 2 queries with
        human judgments and 1 without (a ValueError names the measure)."""
        confidence = check_confidence(confidence)
        ppi = check_ppi(ppi)
        self.check()
        z = NormalDist().inv_cdf(1 - (1 - confidence) / 2)
        out = {name: _estimate(self._sums(m), int(self.n[m]), int(self.N[m]), z, ppi)
               for m, name in enumerate(self.names)}
        return PPI(out, confidence, ppi, self.n_human_only, list(left_out))

    def check(self) -> None:
        """What :meth:`estimate` needs of the queries: each measure at least 2 with
        human judgments and 1 without (a ValueError names the first measure short
        of them), so that an evaluation can fail before it commits anything."""
        for m, name in enumerate(self.names):
            n, N = int(self.n[m]), int(self.N[m])
            if n < 2:
                raise ValueError(f"{name}: {n} quer{'y' if n == 1 else 'ies'} with human "
                                 f"judgments have a value, and a prediction-powered interval "
                                 f"needs at least 2 (it estimates the LLM's error from them); "
                                 f"judge more queries by hand")
            if N < 1:
                raise ValueError(f"{name}: every query has human judgments, so there are no "
                                 f"LLM-labelled queries to add to them; the human labels' own "
                                 f"mean (the human judgments given as the qrels) is the answer")

    def _sums(self, m: int) -> list[Fraction]:
        from . import _kernels as K
        scale = 1 << K.FIX_SHIFT
        return [Fraction(K.fix_to_int(row), scale)
                for row in (*self.labelled[m], *self.unlabelled[m])]


def _sqrt(x: Fraction) -> float:
    return math.sqrt(max(float(x), 0.0))


def _estimate(sums: list[Fraction], n: int, N: int, z: float, ppi) -> Estimate:
    """One measure's :class:`Estimate` from its exact sums (moments formed exactly,
    each rounded once)."""
    sy, sh, syy, shh, syh, uh, uhh = sums
    my, mh = sy / n, sh / n
    var_y = syy / n - my * my                      # population variances, as NumPy's std
    human_se = _sqrt(var_y) / math.sqrt(n)
    if ppi == TUNED:
        cov = syh / n - my * mh
        total, s1, s2 = n + N, sh + uh, shh + uhh
        pooled = (s2 - s1 * s1 / total) / (total - 1)  # n + N - 1 degrees of freedom
        lam = 0.0 if pooled == 0 else float(min(max(cov / ((1 + Fraction(n, N)) * pooled), 0),
                                                1))
    else:
        lam = ppi
    q = Fraction(lam)
    est = q * uh / N + (sy - q * sh) / n
    rect = (syy - 2 * q * syh + q * q * shh) / n - ((sy - q * sh) / n) ** 2
    imputed = q * q * (uhh / N - (uh / N) ** 2)
    se = math.sqrt(max(float(rect / n + imputed / N), 0.0))
    est_f, hm = float(est), float(my)
    return Estimate(float((sh + uh) / (n + N)), hm, hm - z * human_se, hm + z * human_se,
                    est_f, est_f - z * se, est_f + z * se, se, lam, n, N)


def _means(names: list) -> list[int]:
    """The columns of ``names`` averaged by a plain mean (the ones PPI estimates)."""
    return [i for i, n in enumerate(names) if summary_of(n) == "mean"]


def matched(ids: pa.Array, hids: pa.Array) -> pa.Array:
    """For each id of ``ids``, its position among ``hids`` (null where absent): how a
    query's value under the LLM's labels finds its value under the human labels.

    >>> matched(pa.array([3, 1, 2]), pa.array([1, 3])).to_pylist()
    [1, 0, None]
    """
    if ids.type != hids.type:
        ids, hids = ids.cast(pa.large_string()), hids.cast(pa.large_string())
    return pc.index_in(ids, value_set=hids)


class Lining:
    """:class:`Sums` added chunk by chunk while a run is scored under the LLM's and
    the human labels at once: call it with each chunk's ``[llm_rows, human_rows]``
    (per-query results: ``ids`` and ``values``, a column a measure of ``names``, in
    the chunk's order; None for no rows). A query's two values are lined up by its
    id within the chunk, so nothing is kept from one chunk to the next: the memory
    stays flat at any number of queries, and the sums of the partitions of a run
    merge (:meth:`merge`) to the very bits of one pass.

    ``skip``: query ids whose rows are passed over (the fragments of queries
    whose rows are not adjacent, added whole afterwards).

    >>> from types import SimpleNamespace as Rows
    >>> lining = Lining(["ndcg@10"])
    >>> lining([Rows(ids=pa.array([1, 2, 3]), values=np.array([[0.9], [0.5], [0.7]])),
    ...         Rows(ids=pa.array([1, 3]), values=np.array([[0.8], [0.6]]))])
    >>> lining([Rows(ids=pa.array([4]), values=np.array([[0.2]])), None])
    >>> e = lining.estimate(ppi=1.0).measures["ndcg@10"]
    >>> e.n, e.N, round(e.estimate, 4)  # 0.35 + mean(0.8 - 0.9, 0.6 - 0.7)
    (2, 2, 0.25)
    """

    def __init__(self, names: list, skip: pa.Array | None = None) -> None:
        self.names = list(names)
        self.cols = _means(self.names)
        self.sums = Sums.empty([self.names[i] for i in self.cols])
        self.skip = skip
        self.n_queries = 0   # queries with a value under the LLM's labels
        self.n_shared = 0    # ... and with one under the human labels

    def __call__(self, rows: list) -> None:
        llm, human = rows
        if llm is not None and self.skip is not None:
            llm = _without(llm, self.skip)
        if human is not None and self.skip is not None:
            human = _without(human, self.skip)
        n_llm = 0 if llm is None else len(llm.ids)
        n_human = 0 if human is None else len(human.ids)
        if not n_llm:
            self.sums.n_human_only += n_human
            return
        values = np.asarray(llm.values, np.float64)[:, self.cols]
        if n_human:
            where = matched(llm.ids, human.ids)
            labelled = where.is_valid().to_numpy(zero_copy_only=False)
            pos = where.fill_null(0).to_numpy(zero_copy_only=False)
            human_values = np.asarray(human.values, np.float64)[pos][:, self.cols]
        else:
            labelled = np.zeros(n_llm, bool)
            human_values = np.full_like(values, np.nan)
        shared = int(labelled.sum())
        self.sums.add(values, human_values, labelled)
        self.sums.n_human_only += n_human - shared
        self.n_queries += n_llm
        self.n_shared += shared

    def reset(self, skip: pa.Array | None = None) -> None:
        """Start again from no queries (passing over the ids ``skip``)."""
        self.__init__(self.names, skip)

    def merge(self, other: "Lining") -> "Lining":
        """These sums and ``other``'s (another partition's; exact); returns self."""
        self.sums.merge(other.sums)
        self.n_queries += other.n_queries
        self.n_shared += other.n_shared
        return self

    def subtract(self, other: "Lining") -> "Lining":
        """These sums without ``other``'s, rows that were added to them (the fragments
        of queries whose rows are not adjacent, added again whole; exact); returns
        self."""
        self.sums.subtract(other.sums)
        self.n_queries -= other.n_queries
        self.n_shared -= other.n_shared
        return self

    def estimate(self, confidence: float = CONFIDENCE, ppi: str | float = TUNED) -> PPI:
        """The :class:`PPI` of the queries added."""
        cols = set(self.cols)
        return self.sums.estimate(confidence, ppi,
                                  [n for i, n in enumerate(self.names) if i not in cols])


def _without(rows, ids: pa.Array):
    """``rows`` less those whose id is among ``ids`` (None when none is left)."""
    keep = ~matched(rows.ids, ids).is_valid().to_numpy(zero_copy_only=False)
    if keep.all():
        return rows
    return rows.select(keep) if keep.any() else None


def lined_up(llm: pa.Table, human: pa.Table, query: str, confidence: float = CONFIDENCE,
             ppi: str | float = TUNED) -> PPI:
    """The :class:`PPI` of two evaluations of one run: ``llm``, its per-query values
    with the LLM's labels (every query), and ``human``, with the human labels (the
    sample), lined up by the query id column ``query``. The measures averaged by a
    mean are estimated; the others are listed as left out.

    >>> llm = pa.table({"q": [1, 2, 3, 4], "ndcg@10": [0.9, 0.5, 0.7, 0.2]})
    >>> human = pa.table({"q": [2, 1], "ndcg@10": [0.4, 0.8]})
    >>> e = lined_up(llm, human, "q", ppi=1.0).measures["ndcg@10"]
    >>> e.n, e.N, round(e.estimate, 4)  # 0.45 + mean(0.8 - 0.9, 0.4 - 0.5)
    (2, 2, 0.35)
    """
    from types import SimpleNamespace as Rows
    names = [n for n in llm.column_names if n in human.column_names and n != query
             and pa.types.is_floating(llm.schema.field(n).type)]

    def rows(t: pa.Table):
        if not len(t):
            return None
        return Rows(ids=t.column(query).combine_chunks(),
                    values=np.column_stack([t.column(n).to_numpy() for n in names]))
    lining = Lining(names)
    lining([rows(llm), rows(human)])
    return lining.estimate(confidence, ppi)
