"""Scoring one partition: whole-query chunks -> kernels -> per-query results + Totals.

:func:`score_partition` is the one function that scores a stream of record
batches, for :func:`fastndcg.evaluate` (the whole log is one partition) and for
:mod:`fastndcg.dask` (one partition per task) alike. It writes per-query results
to a :class:`~fastndcg.report.PartWriter` as they are produced and returns a
:class:`PartitionResult`: mergeable totals, whether the query ids came in
strictly increasing order (the cheap proof that no query is scattered), and, for
a partition of a larger log, its two edge queries unscored (they may continue in
the neighbouring partitions).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from . import _core as C
from . import _validate as V
from . import _kernels as K
from . import foreign
from . import measures as M
from ._arrow import from_numpy, numbers, strictly_increasing
from .chunks import Chunk, query_chunks
from .qrels import DocIds, NamedBatch, Names, Qrels, chunk_docs, gather_ideal, join, trec_order
from . import options as O
from .presets import DEFAULT_K, SEMANTIC_OPTIONS, read_grades, resolve
from .parts import LABELS, PartWriter, Rows
from .totals import Totals

__all__ = ["Options", "check_options", "Scorer", "SetScorer", "score_partition", "score_sets",
           "PartitionResult",
           "SortCheck", "sorted_before"]


@dataclass
class Options:
    """Validated semantic options and column names of an evaluation."""
    cutoffs: list
    names: list[str]
    gain: C.Gain
    ties: str
    tmode: int
    log_base: float
    zero_idcg: str
    nan_scores: str
    negative_labels: str
    query: str = "query_id"
    doc: str = "doc_id"
    score: str = "score"
    label: str = "label"
    complete: bool = False
    qrels_mode: bool = False
    score_precision: str = "float64"
    preset: str | None = None
    weight: str | None = None  # column of per-query weights (weighted means)
    explain: tuple = ()        # explaining columns: "dcg", "idcg", "n_relevant", ...
    others: tuple = ()         # the measures besides NDCG (fastndcg.measures.Measure)
    rel: int = 1               # their relevance threshold, unless they name one
    layout: Any = None         # how they reach the kernels (fastndcg.measures.Layout)
    in_order: bool = False     # ties="ranx": the rows of each query are in ranx's order
    #                            already (a ranx Run), so they are not sorted again
    order: str | None = None   # a column whose ascending order is each query's input order
    #                            (Spark keeps none): each query's rows are sorted by it first


# tie rules that put each query's rows in an order first ("stable" then ranks them):
# "trec" by document id descending, "ranx" as Numba's argsort of the negated scores
ORDERED = ("trec", "ranx")


MAX_BATCH_ROWS = 1 << 31  # rows a batch may hold (Arrow's reader takes an int64)


def in_given_order(chunk: Chunk, column: str) -> Chunk:
    """``chunk`` with the rows of each query sorted by ``column`` ascending (rows with
    equal values keep their order): the input order that ``order=`` names."""
    values = chunk.table.column(column)
    if values.null_count:
        raise ValueError(f"column {column!r} (order=) has missing values; every row needs its "
                         f"position in the input order")
    lengths = np.diff(chunk.offsets)
    owner = np.repeat(np.arange(len(lengths), dtype=np.int64), lengths)
    rows = pc.sort_indices(pa.table({"q": owner, "o": values}),
                           [("q", "ascending"), ("o", "ascending")]).to_numpy()
    if (rows == np.arange(len(rows))).all():
        return chunk  # in order already (the usual case: Spark sorted them)
    return Chunk(chunk.ids, chunk.offsets, chunk.table.take(from_numpy(rows)))


def read_as(opts: Options, source) -> Options:
    """``opts`` for reading ``source``: a ranx ``Run`` holds each query's rows in ranx's
    ranking already, so ``ties="ranx"`` takes them in that order (as ranx's evaluate
    does) rather than sorting them again."""
    if opts.ties == "ranx" and foreign.ranked_by_ranx(source):
        return dataclasses.replace(opts, in_order=True)
    return opts


def check_options(*, per_query=None, batch_rows: int = 1 << 20,
                  where: str = "fastndcg._evaluate.check_options", **given
                  ) -> tuple[Options, dict]:
    """Validate :func:`fastndcg.evaluate`'s options (not the data): the options and
    the columns to read (name -> role). ``given``: the evaluation options given
    (:data:`fastndcg.options.OPTIONS`; the others take their defaults, an unknown
    one is refused in the name of ``where``); ``per_query`` and ``batch_rows``:
    the caller's, which some options depend on. The command line calls it first,
    to tell usage errors (exit 2) from bad data (exit 1). Each option goes through
    its validator (:func:`fastndcg.options.check`), here in the order that the
    rules spanning options need. Semantic options left None come from ``preset``
    (:mod:`fastndcg.presets`), else fastndcg's defaults. ``measure`` names the
    cutoffs (and gain) as trec_eval or ir_measures do, instead of ``k``."""
    o = O.bound(given, where)
    o["qrels"] = O.check("qrels", o["qrels"])
    O.check("human_qrels", o["human_qrels"])
    qrels, k, measure, preset, gain = o["qrels"], o["k"], o["measure"], o["preset"], o["gain"]
    others: list = []
    default_rel = 1 if o["rel"] is None else O.check("rel", o["rel"])
    if measure is not None:
        if k is not DEFAULT_K:
            raise V.refuse(ValueError, "measure", measure,
                           f"give the measures once: {V.spelled('k', repr(k))} (NDCG cutoffs) "
                           f"or {V.spelled('measure', repr(measure))}, not both; name NDCG in "
                           f"{V.spelled('measure')}, e.g. 'nDCG@10'")
        parsed = O.check("measure", measure, rel=default_rel, ranx=preset == "ranx")
        k, implied, others = parsed.ndcg, parsed.gain, parsed.others
        if implied is not None:
            if gain is not None and not C.same_gain(gain, implied):
                raise V.refuse(ValueError, "gain", gain,
                               f"{V.spelled('measure')} {measure!r} means "
                               f"{V.spelled('gain', repr(implied))}, but "
                               f"{V.spelled('gain', repr(gain))} was given; drop one of them")
            gain = implied
        for m in others:
            if M.REGISTRY[m.kind].judgments and qrels is None:
                raise V.refuse(ValueError, "measure", measure,
                               f"{V.spelled('measure')} {m.column(default_rel)!r} counts judged "
                               f"documents, so it needs judgments: pass "
                               f"{V.spelled('qrels', ref=True)}; in list mode every item is "
                               f"judged")
    sem = resolve(preset, "log" if qrels is None else "qrels",
                  **{name: (gain if name == "gain" else o[name]) for name in SEMANTIC_OPTIONS})
    cutoffs = O.check("k", k) if (k or not others) else []
    gain_spec = O.check("gain", sem["gain"])
    ties = O.check("ties", sem["ties"])
    M.check_ties(others, ties, default_rel, sem["negative_labels"])
    tmode = K.STABLE if ties in ORDERED else C.TIES[ties]  # rows are put in that order
    base = O.check("log_base", sem["log_base"])
    zero_idcg, nan_scores, negative_labels = (O.check(name, sem[name]) for name in
                                              ("zero_idcg", "nan_scores", "negative_labels"))
    names = ["ndcg" if c is None else f"ndcg@{c}" for c in cutoffs]
    if len(set(names)) != len(names):
        raise V.refuse(ValueError, "k", k, f"{V.spelled('k')} lists a cutoff twice: {cutoffs}; "
                       f"give each cutoff once")
    names += [m.column(default_rel) for m in others]
    complete = O.check("complete", o["complete"])
    if complete and qrels is None:
        raise V.refuse(ValueError, "complete", o["complete"],
                       f"{V.spelled('complete', True, '')} scores judged queries missing from "
                       f"the run, so it needs {V.spelled('qrels', ref=True)}; drop "
                       f"{V.spelled('complete')} or pass the judgments")
    V.count(batch_rows, "batch_rows", hi=MAX_BATCH_ROWS, fix="rows read at once; the "
            "default 1048576 suits most logs")
    query, doc, score, label = (O.check(name, o[name]) for name in ("query", "doc", "score",
                                                                     "label"))
    weight = O.check("weight", o["weight"])
    if weight is not None and complete:
        raise V.refuse(ValueError, "weight", weight,
                       f"{V.spelled('complete', True, '')} scores judged queries that are "
                       f"absent from the run, and those have no weight; drop "
                       f"{V.spelled('complete')} or {V.spelled('weight')}")
    human = o["human_qrels"] is not None  # joined by document, even in list mode
    if qrels is None and ties != "trec" and not human and doc != "doc_id":  # never read
        raise V.refuse(ValueError, "doc", doc,
                       f"{V.spelled('doc', V.shown(doc))} names the document column, which is "
                       f"read only with {V.spelled('qrels', ref=True)} (to join judgments) or "
                       f"{V.spelled('ties', repr('trec'), 'trec')} (to break ties by document "
                       f"id); drop {V.spelled('doc')}, or pass one of them")
    roles = {query: "query", score: "score"}
    if qrels is None:
        roles[label] = "label"
    if qrels is not None or ties == "trec" or human:
        roles[doc] = "doc"
    if len(roles) < 2 + (qrels is None) + (doc in roles):
        raise V.refuse(ValueError, "query", query,
                       f"the query, doc, score and label columns must be different, got "
                       f"{V.spelled('query', repr(query))}, {V.spelled('doc', repr(doc))}, "
                       f"{V.spelled('score', repr(score))}, {V.spelled('label', repr(label))}")
    check_human(o, qrels is not None, weight)
    explain = O.check("explain", o["explain"], qrels_mode=qrels is not None)
    if explain and per_query is False:
        raise V.refuse(ValueError, "explain", o["explain"],
                       f"{V.spelled('explain')} adds per-query columns, but "
                       f"{V.spelled('per_query', False, '')} keeps none; pass "
                       f"{V.spelled('per_query', None, 'OUT')} (a table) or a path, or drop "
                       f"{V.spelled('explain')}")
    if weight is not None:
        if weight in roles:
            raise V.refuse(ValueError, "weight", weight,
                           f"{V.spelled('weight', repr(weight))} is also the {roles[weight]} "
                           f"column; name the column of query weights")
        roles[weight] = "weight"
    if O.label_sets(qrels) is not None and LABELS in (query, weight):
        raise ValueError(f"with several label sets the per-query results name each row's set "
                         f"in a column {LABELS!r}, which is also the "
                         f"{'query' if query == LABELS else 'weight'} column here; rename "
                         f"that column in the source")
    opts = Options(cutoffs, names, gain_spec, ties, tmode, base, zero_idcg, nan_scores,
                   negative_labels, query, doc, score, label, complete, qrels is not None,
                   sem["score_precision"], preset, weight, explain, tuple(others), default_rel,
                   M.layout(others, default_rel, trec9=preset == "pytrec_eval"))
    return opts, roles


def check_human(o: dict, qrels_mode: bool, weight: str | None) -> None:
    """The options of prediction-powered means (``human_qrels``, ``confidence``,
    ``ppi``): each valid, and ``confidence`` and ``ppi`` only with ``human_qrels``,
    which needs unweighted means. The LLM's labels are ``qrels`` or, in list mode,
    the run's label column."""
    confidence, lam = O.check("confidence", o["confidence"]), O.check("ppi", o["ppi"])
    if o["human_qrels"] is None:
        changed = [(name, value) for name, value in (("confidence", confidence), ("ppi", lam))
                   if value != O.OPTIONS[name].default]
        if changed:
            named = " and ".join(V.spelled(name, repr(value), value) for name, value in changed)
            raise V.refuse(ValueError, changed[0][0], o[changed[0][0]],
                           f"{named} set the prediction-powered means, which need "
                           f"{V.spelled('human_qrels', ref=True)} (human judgments of a sample "
                           f"of the queries); pass it, or drop {named}")
        return
    if weight is not None:
        raise V.refuse(ValueError, "weight", weight,
                       f"{V.spelled('human_qrels', ref=True)} gives prediction-powered means "
                       f"of queries counted once each; weighted ones "
                       f"({V.spelled('weight', repr(weight))}) are not supported: drop the "
                       f"weights or {V.spelled('human_qrels', ref=True)}")


def _col(kind: str, cutoff) -> str:
    return kind if cutoff is None else f"{kind}@{cutoff}"


def explain_columns(opts: "Options") -> list[tuple[str, pa.DataType]]:
    """(name, type) of the explaining columns, in table order."""
    cols = []
    for kind in ("dcg", "idcg"):
        if kind in opts.explain:
            cols += [(_col(kind, c), pa.float64()) for c in opts.cutoffs]
    for kind in ("n_relevant", "n_judged"):
        if kind in opts.explain:
            cols.append((kind, pa.int64()))
    if "judged" in opts.explain:
        cols += [(_col("judged", c), pa.float64()) for c in opts.cutoffs]
    return cols


def _per_query_sum(offsets: np.ndarray, flags: np.ndarray) -> np.ndarray:
    c = np.concatenate(([0], np.cumsum(flags, dtype=np.int64)))
    return c[offsets[1:]] - c[offsets[:-1]]


def _positive_gain(labels: np.ndarray, opts: "Options") -> np.ndarray:
    """Whether each label's gain is above 0 (a relevant item)."""
    if opts.gain.mode == K.TABLE:
        idx = np.clip(labels.astype(np.int64), 0, len(opts.gain.table) - 1)
        return opts.gain.table[idx] > 0
    return labels > 0


def _top_fraction(offsets, scores, flags, labels, opts: "Options") -> np.ndarray:
    """(n_queries, n_cutoffs): the fraction of each query's top min(K, n) rows that
    are flagged, ranked as the NDCG is (tied scores: their average for "average",
    else the tie rule's order)."""
    n_q = len(offsets) - 1
    n = len(scores)
    lengths = np.diff(offsets)
    qidx = np.repeat(np.arange(n_q), lengths)
    key = scores.astype(np.float64) if scores.dtype.kind == "f" else scores
    second = np.zeros(n)
    if opts.tmode == K.OPTIMISTIC:
        second = -_gains(labels, opts)
    elif opts.tmode == K.PESSIMISTIC:
        second = _gains(labels, opts)
    order = np.lexsort((np.arange(n), second, -key.astype(np.float64), qidx))
    ranked = flags[order].astype(np.float64)
    if opts.tmode == K.AVERAGE and n:
        s = key[order]
        q = qidx[order]
        new = np.concatenate(([True], (s[1:] != s[:-1]) | (q[1:] != q[:-1])))
        start = np.flatnonzero(new)
        sizes = np.diff(np.append(start, n))
        means = np.add.reduceat(ranked, start) / sizes
        ranked = np.repeat(means, sizes)
    c = np.concatenate(([0.0], np.cumsum(ranked)))
    out = np.zeros((n_q, len(opts.cutoffs)))
    for i, cut in enumerate(opts.cutoffs):
        top = lengths if cut is None else np.minimum(lengths, cut)
        got = c[offsets[:-1] + top] - c[offsets[:-1]]
        out[:, i] = np.divide(got, top, out=np.zeros(n_q), where=top > 0)
    return out


def _gains(labels: np.ndarray, opts: "Options") -> np.ndarray:
    lab = labels.astype(np.float64)
    if opts.gain.mode == K.TABLE:
        return opts.gain.table[lab.astype(np.int64)]
    if opts.gain.mode == K.EXP2:
        return np.exp2(lab) - 1
    return lab


@dataclass
class Ranked:
    """A chunk read once for every label set of an evaluation (:meth:`Scorer.rank`)."""
    chunk: Chunk               # in the input order ``order=`` names
    scores: np.ndarray         # in the chunk's row order
    order: np.ndarray | None   # the rows in the tie rule's order (trec, ranx), or None
    # ties="trec": the queries whose scores tie (a bool a query; None when none do),
    # the only ones whose rows trec's order moves
    tied: np.ndarray | None = None
    docs: DocIds | None = None  # the document ids as every set's join reads them
    _ordered: np.ndarray | None = None

    def ordered_scores(self) -> np.ndarray:
        """The scores in the tie rule's order (``scores[order]``), gathered once."""
        if self._ordered is None:
            self._ordered = self.scores[self.order]
        return self._ordered


@dataclass
class Prepared:
    """A chunk under one label set, ready to score (:meth:`Scorer.prepare`)."""
    chunk: Chunk
    scores: np.ndarray          # in the tie rule's order
    labels: np.ndarray          # the same
    order: np.ndarray | None
    batch: NamedBatch
    info: Any                   # the labels' LabelInfo
    plan: Any                   # the measures' C.MeasurePlan (None: NDCG alone)
    ideal: Any                  # qrels mode: the ideal lists (C.Batch)
    judged_q: np.ndarray | None  # qrels mode: each query's judged index (-1: none)


FLAG_BITS = 8  # the flag bits a row has (uint8): the sets sharing one binary pass fit in them


def binary_values(preps: list[Prepared], opts: Options) -> list[np.ndarray] | None:
    """The binary measures (AP, RR, P@k, recall, bpref ...) of several label sets
    of one chunk, from one pass over its rows for as many sets as their flag bits
    fit in a row's (``FLAG_BITS``): each set's flags shifted to bits of their own,
    one tie group entry for an item flagged under any of them (an entry with no
    item flagged under a set adds nothing to that set's measures, so each set's
    values are those of its own pass, to the last bit). One array a set
    (n_queries, n_binary), or None when there is nothing to share (one set, no
    binary measure, or more flag bits than a row has)."""
    plan = preps[0].plan
    if len(preps) < 2 or plan is None or not plan.n_bits or plan.n_bits > FLAG_BITS // 2:
        return None
    binary = plan.binary
    if not len(binary):
        return None
    per_pass = FLAG_BITS // plan.n_bits
    out: list[np.ndarray] = []
    first = preps[0]
    for start in range(0, len(preps), per_pass):
        group = [p.plan.rows(binary) for p in preps[start:start + per_pass]]
        joined = C.MeasurePlan.side_by_side(group)
        _, _, values = C.run_kernels(first.batch, [], opts.gain, opts.tmode, opts.log_base,
                                     first.info, False, False, plan=joined)
        out += np.hsplit(values, len(group))
    return out


def _placed(plan, binary: np.ndarray, graded: np.ndarray, values) -> np.ndarray:
    """The values of every measure of ``plan``: the binary ones from ``binary``, the
    graded ones (rows ``graded`` of the plan) from ``values``."""
    out = np.empty((len(binary), plan.n_measures))
    out[:, plan.binary] = binary
    if len(graded):
        out[:, graded] = values
    return out


@dataclass
class Scored(Rows):
    """Per-query results of a chunk, and what qrels mode learnt about its queries."""
    unjudged: pa.Array | None = None
    judged: np.ndarray | None = None  # qrels mode: judged query indices seen


_TIE_CHECK_ROWS = 1 << 17  # a smaller chunk is ordered whole: the check would cost more


def _tied(chunk: Chunk, scores: np.ndarray) -> np.ndarray | None:
    """The queries of ``chunk`` whose scores tie (:func:`fastndcg._core.tied_queries`),
    or all of them for a chunk of fewer rows than ``_TIE_CHECK_ROWS``, where loading
    and running the check costs more than ordering every query."""
    if chunk.table.num_rows < _TIE_CHECK_ROWS:
        n_q = len(chunk.offsets) - 1
        return np.ones(n_q, bool) if n_q else None
    return C.tied_queries(chunk.offsets, scores)


class Scorer:
    """Scores chunks of whole queries: list mode, or qrels mode with ``qrels``."""

    def __init__(self, opts: Options, qrels: Qrels | None = None) -> None:
        self.opts = opts
        self.qrels = qrels
        self._warned = False  # a grade was truncated (and said) in list mode
        # the ids of the queries without judgments are kept (for their count, with
        # duplicates across partitions taken out); a sample's judgments (human_qrels)
        # leave most queries unjudged, and keep only the first chunk's, for messages
        self.keeps_unjudged = qrels is None or not qrels.sample

    def score_chunk(self, chunk: Chunk) -> Scored:
        return self.score_ranked(self.rank(chunk))

    def rank(self, chunk: Chunk) -> "Ranked":
        """What every label set's scoring of ``chunk`` shares: the rows in the input
        order ``order=`` names, the scores, and the order of the tie rule when it
        does not come from a join (ranx's; trec's in list mode)."""
        opts = self.opts
        if opts.order is not None:
            chunk = in_given_order(chunk, opts.order)
        scores = numbers(chunk.table.column(opts.score), C.kernel_scores)
        if opts.score_precision == "float32" and scores.dtype != np.float32:
            scores = scores.astype(np.float32)  # compared as 32-bit floats (pytrec_eval)
        order = tied = None
        if opts.ties == "trec":  # the order matters only where scores tie
            tied = _tied(chunk, scores)
            if self.qrels is None:
                order = trec_order(chunk, opts.doc, tied)
        if opts.ties == "ranx" and not opts.in_order:  # as for trec: only where scores tie
            order = C.ranx_order(chunk.offsets, scores, _tied(chunk, scores))
        return Ranked(chunk, scores, order, tied)

    def score_ranked(self, ranked: "Ranked") -> Scored:
        """The per-query results of a chunk read by :meth:`rank` (by this scorer or
        by the scorer of another label set of the same evaluation)."""
        return self.finish(self.prepare(ranked))

    def prepare(self, ranked: "Ranked") -> "Prepared":
        """The chunk's labels under this scorer's set (the join in qrels mode), in
        the tie rule's order, checked, with the plan of its binary measures: all
        that :meth:`finish` (or the binary pass shared by several sets,
        :func:`binary_values`) scores."""
        opts = self.opts
        chunk, scores, order = ranked.chunk, ranked.scores, ranked.order
        ideal = info_override = judged_q = None
        lay = opts.layout
        flags = grades = None
        if self.qrels is None:
            labels = raw = self._grades(chunk, numbers(chunk.table.column(opts.label),
                                                       C.kernel_labels))
            if lay.n_bits:
                flags = M.flags_of(lay, labels)  # the grades as given, before any policy
        else:
            # trec's order depends on the document ids alone: the first join finds it,
            # the other label sets' joins reuse it
            find = ranked.tied if order is None else None
            labels, found, judged_q, ideal, grades = join(chunk, self.qrels, opts.doc, find,
                                                          lay.n_bits > 0, ranked.docs)
            if find is not None:
                order = ranked.order = found
            if grades is not None:
                flags = M.flags_of(lay, grades[0], grades[1])
            info_override = self.qrels.info
        if order is not None:
            # rows in docno-descending (trec) or ranx's order within each query: "input
            # order wins" on tied scores is then that rule's tie-break (tmode is STABLE)
            scores, labels = ranked.ordered_scores(), labels[order]
            flags = None if flags is None else flags[order]
        batch = NamedBatch(chunk.offsets, scores, labels, ids=Names(chunk.ids))
        try:
            info = C.check_values(batch, opts.gain, opts.nan_scores,
                                  "keep" if self.qrels is not None else opts.negative_labels,
                                  labels_checked=info_override)
        except ValueError as err:
            where = (f"column {opts.score!r}" if str(err).startswith("scores")
                     else f"column {opts.label!r}")
            raise ValueError(f"in {where}: {err}") from None
        plan = None
        if opts.others:
            n_rel = (self._relevant(judged_q) if self.qrels is not None
                     else M.count_relevant(lay, chunk.offsets, raw))
            plan = C.make_plan(lay, flags if flags is not None else np.zeros(0, np.uint8), n_rel)
        return Prepared(chunk, scores, labels, order, batch, info, plan, ideal, judged_q)

    def finish(self, prep: "Prepared", binary: np.ndarray | None = None) -> Scored:
        """The per-query results of a chunk from :meth:`prepare`. ``binary``: the
        values of the plan's binary measures, already scored (n_queries, n_binary,
        in the plan's order of them; :func:`binary_values`), so that only its graded
        measures are scored here."""
        opts = self.opts
        chunk, scores, labels, order = prep.chunk, prep.scores, prep.labels, prep.order
        batch, ideal, judged_q, plan = prep.batch, prep.ideal, prep.judged_q, prep.plan
        graded = None
        if binary is not None:
            graded = plan.graded
            plan = plan.rows(graded) if len(graded) else None
        dcg, idcg, mvals = C.run_kernels(batch, opts.cutoffs, opts.gain, opts.tmode,
                                         opts.log_base, prep.info, True, True, ideal=ideal,
                                         plan=plan)
        if binary is not None:
            mvals = _placed(prep.plan, binary, graded, mvals)
        if not opts.cutoffs:
            dcg = idcg = np.zeros((batch.n_queries, 0))
        ids, n_docs, unjudged, judged = chunk.ids, np.diff(chunk.offsets), None, None
        weight = None if opts.weight is None else self._weights(chunk)
        extra = (self._explain(chunk, scores, labels, dcg, idcg, ideal, order)
                 if opts.explain else None)
        if judged_q is not None:
            keep = judged_q >= 0
            judged = judged_q[keep]
            if not keep.all():
                # queries without judgments are left out (and counted), before zero_idcg
                unjudged = ids.filter(from_numpy(~keep))
                ids, n_docs = ids.filter(from_numpy(keep)), n_docs[keep]
                dcg, idcg = dcg[keep], idcg[keep]
                weight = None if weight is None else weight[keep]
                batch = NamedBatch(None, None, None, ids=Names(ids))
        if extra is not None and judged_q is not None and not keep.all():
            extra = {k: v[keep] for k, v in extra.items()}
        values = C.normalise(dcg, idcg, opts.zero_idcg, batch, opts.cutoffs)
        if mvals is not None:
            values = np.hstack([values, mvals if judged_q is None or keep.all() else mvals[keep]])
        return Scored(ids, n_docs, values, (idcg == 0).any(axis=1), weight, extra,
                      unjudged=unjudged, judged=judged)

    def _grades(self, chunk: Chunk, labels: np.ndarray) -> np.ndarray:
        """List mode: the labels as the preset's tool reads them; a truncated grade is
        said once for the partition (:func:`fastndcg.presets.read_grades`)."""
        def where(row: int) -> str:
            q = int(np.searchsorted(chunk.offsets, row, "right")) - 1
            return (f"column {self.opts.label!r}, query {chunk.ids[q].as_py()!r} (its row "
                    f"{row - int(chunk.offsets[q]):,})")

        read = read_grades(labels, self.opts.preset, where, warn=not self._warned,
                           exp2=self.opts.gain.mode == K.EXP2)
        self._warned = self._warned or read is not labels
        return read

    def _relevant(self, judged_q: np.ndarray) -> np.ndarray:
        """R of each query at each threshold of the layout (0 for unjudged queries)."""
        lay = self.opts.layout
        out = np.zeros((len(judged_q), max(lay.n_bits, 1)), np.int64)
        ok = judged_q >= 0
        for b, r in enumerate(lay.rels):
            out[ok, b] = self.qrels.relevant_counts(r)[judged_q[ok]]
        if lay.judged_bit >= 0:  # the judged documents of the query
            out[ok, lay.judged_bit] = np.diff(self.qrels.offsets)[judged_q[ok]]
        return out

    def _explain(self, chunk: Chunk, scores, labels, dcg, idcg, ideal, order) -> dict:
        """The explaining columns of every query of the chunk (before unjudged queries
        are left out)."""
        opts = self.opts
        out: dict = {}
        names = explain_columns(opts)
        for i, c in enumerate(opts.cutoffs):
            if "dcg" in opts.explain:
                out[_col("dcg", c)] = dcg[:, i]
            if "idcg" in opts.explain:
                out[_col("idcg", c)] = idcg[:, i]
        ioff, ilabels = ((chunk.offsets, labels) if ideal is None
                         else (ideal.offsets, ideal.labels))
        if "n_relevant" in opts.explain:
            out["n_relevant"] = _per_query_sum(ioff, _positive_gain(ilabels, opts))
        if "n_judged" in opts.explain:
            out["n_judged"] = np.diff(ioff).astype(np.int64)
        if "judged" in opts.explain:
            judged_rows = self.qrels.judged_rows(chunk, opts.query, opts.doc)
            if order is not None:  # the rows were put in the rule's order above
                judged_rows = judged_rows[order]
            fractions = _top_fraction(chunk.offsets, scores, judged_rows, labels, opts)
            for i, c in enumerate(opts.cutoffs):
                out[_col("judged", c)] = fractions[:, i]
        return {n: out[n] for n, _ in names}

    def _weights(self, chunk: Chunk) -> np.ndarray:
        """Each query's weight: finite, >= 0 and the same on every row of the query."""
        name = self.opts.weight
        w = np.asarray(numbers(chunk.table.column(name), None), np.float64)
        starts = chunk.offsets[:-1]
        lo, hi = np.minimum.reduceat(w, starts), np.maximum.reduceat(w, starts)
        lo_, hi_ = lo.tolist(), hi.tolist()  # plain floats for messages
        bad = np.flatnonzero(~np.isfinite(lo) | ~np.isfinite(hi) | (lo < 0) | (lo != hi))
        if len(bad):
            q = int(bad[0])
            qid = chunk.ids[q].as_py()
            if lo[q] != hi[q] and np.isfinite(lo[q]) and np.isfinite(hi[q]):
                raise ValueError(f"column {name!r} (query weights) varies within query {qid!r} "
                                 f"({lo_[q]!r} to {hi_[q]!r}); a query has one weight: give "
                                 f"every row of a query the same value")
            value = lo_[q] if not np.isfinite(lo[q]) or lo[q] < 0 else hi_[q]
            raise ValueError(f"column {name!r} (query weights) has {value!r} in query {qid!r}; "
                             f"weights must be finite numbers >= 0")
        return lo

    def missing(self, seen: np.ndarray) -> Scored | None:
        """Judged queries never seen in the run, scored with an empty ranking (DCG 0)."""
        qr = self.qrels
        if qr is None or seen.all():
            return None
        idx = np.flatnonzero(~seen)
        n = len(idx)
        ids = qr.ids.take(from_numpy(idx))
        batch = NamedBatch(np.zeros(n + 1, np.int64), np.zeros(0, np.float64),
                           np.zeros(0, qr.labels.dtype), ids=Names(ids))
        ideal = gather_ideal(qr, idx.astype(np.int64))
        plan = None
        if self.opts.others:
            plan = C.make_plan(self.opts.layout, np.zeros(0, np.uint8),
                               self._relevant(idx.astype(np.int64)))
        dcg, idcg, mvals = C.run_kernels(batch, self.opts.cutoffs, self.opts.gain,
                                         self.opts.tmode, self.opts.log_base, qr.info, True,
                                         True, ideal=ideal, plan=plan)
        if not self.opts.cutoffs:
            dcg = idcg = np.zeros((n, 0))
        values = C.normalise(dcg, idcg, self.opts.zero_idcg, batch, self.opts.cutoffs)
        if mvals is not None:
            values = np.hstack([values, mvals])
        extra = None
        if self.opts.explain:
            extra = {}
            for name, _ in explain_columns(self.opts):
                extra[name] = (np.zeros(n, np.int64) if name.startswith("n_") else np.zeros(n))
            for i, c in enumerate(self.opts.cutoffs):
                if "idcg" in self.opts.explain:
                    extra[_col("idcg", c)] = idcg[:, i]
            if "n_relevant" in self.opts.explain:
                extra["n_relevant"] = _per_query_sum(ideal.offsets,
                                                     _positive_gain(ideal.labels, self.opts))
            if "n_judged" in self.opts.explain:
                extra["n_judged"] = np.diff(ideal.offsets).astype(np.int64)
        return Scored(ids, np.zeros(n, np.int64), values, (idcg == 0).any(axis=1), None, extra)


class SortCheck:
    """Tracks, in O(1) memory, whether run ids come in strictly increasing order
    (then no query id can repeat: no query is scattered)."""

    def __init__(self) -> None:
        self.sorted = True
        self.first = None
        self.last = None
        self.n_runs = 0

    def update(self, ids: pa.Array) -> None:
        if not len(ids):
            return
        self.n_runs += len(ids)
        head, tail = ids[0].as_py(), ids[len(ids) - 1].as_py()
        if self.first is None:
            self.first = head
        elif self.sorted and not sorted_before(self.last, head):
            self.sorted = False
        if self.sorted and not strictly_increasing(ids):
            self.sorted = False
        self.last = tail


def sorted_before(a, b, allow_equal: bool = False) -> bool:
    """Whether id ``a`` comes before id ``b`` (byte order for strings, as Arrow
    compares); ids of different types are never in order."""
    if type(a) is not type(b):
        return False
    if isinstance(a, str):
        a, b = a.encode(), b.encode()
    return a < b or (allow_equal and a == b)


@dataclass
class PartitionResult:
    """What one partition produced (see :func:`score_partition`)."""
    totals: Totals
    sorted: bool                # run ids strictly increasing (edges included)
    first_id: Any = None        # first and last run id (None: no rows)
    last_id: Any = None
    n_runs: int = 0
    unjudged: pa.Array | None = None         # unique ids of runs without judgments
    seen: np.ndarray | None = None           # qrels mode: judged queries present
    head: pa.Table | None = None             # edges mode: first run, unscored
    tail: pa.Table | None = None             # edges mode: last run, unscored (None if one run)
    n_rows: int = 0
    extra: dict = field(default_factory=dict)




def score_partition(batches: Iterator[pa.RecordBatch], scorer: Scorer, writer: PartWriter, *,
                    edges: bool = False, progress=None, on_ids=None,
                    only: pa.Array | None = None, row0: int = 0) -> PartitionResult:
    """Score every query of a stream of batches, writing results to ``writer``.

    ``edges=True`` (a partition of a larger log): the first and the last run are
    returned unscored as ``head``/``tail``, since their queries may go on in the
    neighbouring partitions. ``on_ids(ids)`` sees the id of every run, in order.
    ``only``: score just the runs with these ids (the fragments of scattered
    queries, exactly as the first pass scored them). ``row0``: the row number of
    the first row in the whole log (for messages). :func:`score_sets` scores
    several label sets in one pass; this is its case of one."""
    return score_sets(batches, [scorer], [writer], edges=edges, progress=progress,
                      on_ids=on_ids, only=only, row0=row0)[0]


class SetScorer:
    """Scores each chunk under several label sets: one :class:`Scorer` a set (the
    same options, each its own qrels), the chunk read and put in order once
    (:meth:`Scorer.rank`). :meth:`score_chunk` gives one :class:`Scored` a set."""

    def __init__(self, scorers: list[Scorer]) -> None:
        self.scorers = scorers
        self.opts = scorers[0].opts

    def score_chunk(self, chunk: Chunk) -> list[Scored]:
        if len(self.scorers) == 1:  # any scorer (a comparison's too) scores a chunk alone
            return [self.scorers[0].score_chunk(chunk)]
        ranked = self.scorers[0].rank(chunk)
        if self.scorers[0].qrels is not None:  # every set's join reads them: made once
            ranked.docs = chunk_docs(ranked.chunk, self.opts.doc)
        preps = [s.prepare(ranked) for s in self.scorers]
        shared = binary_values(preps, self.opts)
        if shared is None:
            return [s.finish(p) for s, p in zip(self.scorers, preps)]
        return [s.finish(p, b) for s, p, b in zip(self.scorers, preps, shared)]


def score_sets(batches: Iterator[pa.RecordBatch], scorers: list[Scorer],
               writers: list[PartWriter], *, edges: bool = False, progress=None, on_ids=None,
               only: pa.Array | None = None, row0: int = 0, on_scored=None
               ) -> list[PartitionResult]:
    """:func:`score_partition` under several label sets at once: ``scorers[i]`` (the
    same options, each with its own qrels) writes to ``writers[i]``. The batches are
    read, grouped into queries and put in order once; each set is then joined and
    scored from that, and gives the very results it gives alone. One
    :class:`PartitionResult` a set (the edges and the order of the ids are the
    same in each). ``on_scored(rows)`` sees each chunk's results, one
    :class:`Scored` a set (the prediction-powered sums are added from them)."""
    opts = scorers[0].opts
    several = SetScorer(scorers)
    totals = [Totals.empty(opts.names, weighted=opts.weight is not None) for _ in scorers]
    check = SortCheck()
    unjudged: list[list[pa.Array]] = [[] for _ in scorers]
    seen = [None if s.qrels is None else np.zeros(s.qrels.n_queries, bool) for s in scorers]
    head = tail = None
    n_rows = 0
    chunks = query_chunks(batches, opts.query, progress, row0=row0)
    pending: Chunk | None = None  # edges mode: the last chunk is the tail, so hold one back

    def score(chunk: Chunk) -> None:
        if only is not None:
            chunk = chunk.select(only)
            if chunk is None:
                return
        scored = several.score_chunk(chunk)
        if on_scored is not None:
            on_scored(scored)
        for i, s in enumerate(scored):
            totals[i] = totals[i].merge(writers[i].add(s))
            if s.unjudged is not None and (scorers[i].keeps_unjudged or not unjudged[i]):
                unjudged[i].append(s.unjudged)
            if s.judged is not None:
                seen[i][s.judged] = True

    for chunk in chunks:
        check.update(chunk.ids)
        n_rows += chunk.table.num_rows
        if on_ids is not None:
            on_ids(chunk.ids)
        if not edges:
            score(chunk)
            continue
        if head is None:
            head = chunk.query_rows(0)
            chunk = chunk.drop_first()
            if chunk is None:
                continue
        if pending is not None:
            score(pending)
        pending = chunk
    if pending is not None:  # the last chunk of a stream is exactly its last run
        tail = pending.query_rows(0)
    out = []
    for t, u, s in zip(totals, unjudged, seen):
        t.n_rows = n_rows
        ids_unjudged = pc.unique(pa.chunked_array(u).combine_chunks()) if u else None
        out.append(PartitionResult(t, check.sorted, check.first, check.last, check.n_runs,
                                   ids_unjudged, s, head, tail, n_rows))
    return out
