"""Streaming evaluation of search logs: the single-machine driver.

Data flows one way, each step in its own module: :mod:`fastndcg.io` (source ->
record batches of the needed columns), :mod:`fastndcg.chunks` (batches -> chunks
of whole queries), :mod:`fastndcg.qrels` (judgments, and the join of each chunk
to them), :mod:`fastndcg.partition` (chunks -> kernels -> per-query results and
mergeable totals; the same function scores a Dask partition),
:mod:`fastndcg.scattered` (queries whose rows are not adjacent) and
:mod:`fastndcg.report` (result parts, the output target and the :class:`Report`).

Memory is bounded by a few batches (1M rows each) and the largest query. With
``per_query=None`` the per-query table is kept in memory (about 50 bytes a
query); with a path it is written as it is produced, and with ``False`` not at
all: then memory does not grow with the number of queries.
"""

from __future__ import annotations

import contextlib
import dataclasses

import os
import time
from collections.abc import Iterator, Mapping
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from . import io
from . import _validate as V
from ._progress import Progress
from .options import bound, takes_options
from .partition import explain_columns
from .options import label_sets
from .partition import Options, Scorer, SetScorer, check_options, read_as, score_sets
from .qrels import Qrels, load_qrels
from .output import Output
from .parts import LABELS, RUNID, Part, PartWriter, result_schema, tagged_part
from .ppi import Lining
from .report import LabelSets, Report, Runs
from .totals import Totals
from .scattered import Fixed, IdSpill, patch, rescore

__all__ = ["evaluate", "evaluate_runs", "Runs", "LabelSets", "RunidClash", "Report", "Totals",
           "check_options", "id_type", "open_run", "check_human_beside", "load_human",
           "check_scored", "HUMAN_SETS", "run_items"]


def id_type(schema: pa.Schema | None, query: str, qrels: Qrels | None, complete: bool
            ) -> pa.DataType:
    """The type of the query id column of the per-query results: int64 for integer
    ids, else large_string (also when integer run ids meet string judged ids and
    judged queries missing from the run are added)."""
    t = None
    if schema is not None and query in schema.names:
        t = schema.field(query).type
        if pa.types.is_dictionary(t):
            t = t.value_type
    run = ((pa.uint64() if t == pa.uint64() else pa.int64())
           if t is not None and pa.types.is_integer(t) else pa.large_string())
    if qrels is not None and complete and qrels.ids.type != run:
        return pa.large_string()
    return run


_TAG = "\x00run tag"  # the column the run tags are read into (never a role's name)


def open_run(source, opts: Options, roles: dict, batch_rows: int,
             tags: list | None = None) -> io.Source:
    """The log or run as a :class:`~fastndcg.io.Source` (a TREC run file in qrels mode).
    With ``tags`` (a list), the run tags of a TREC run file (its 6th field) are read
    in the same pass, and the first two distinct ones appended to it."""
    def trec(p):
        if tags is None:
            return io.read_trec_run(p, query=opts.query, doc=opts.doc, score=opts.score)
        table = io.read_trec_run(p, query=opts.query, doc=opts.doc, score=opts.score, tag=_TAG)
        tags.extend(pc.unique(table.column(_TAG)).slice(0, 2).to_pylist())
        return table  # the source selects the roles' columns: the tags are not scored

    return io.open_source(source, roles, batch_rows=batch_rows,
                          trec=trec if opts.qrels_mode else None)


@takes_options("fastndcg.evaluate")
def evaluate(source, *, per_query=None, progress: bool = False, batch_rows: int = 1 << 20,
             **options) -> Report | LabelSets:
    """NDCG@k, and any other measure, of every query of a search log, streamed in
    record batches.

    With several label sets (``qrels={"human": ..., "llm": ...}``) the run is read
    and ranked once, each set is scored from that ranking with the very numbers it
    gives alone, and the result is a :class:`~fastndcg.report.LabelSets`: a
    :class:`Report` per set, and per-query rows with a first column ``labels``.

    Parameters
    ----------
    source : a Parquet file, a directory or glob of Parquet files, a pyarrow Table /
        Dataset / RecordBatchReader, or a pandas or polars DataFrame, one row per
        (query, item). With ``qrels`` also a TREC run file (``qid Q0 docno rank
        score tag``, optionally compressed).
    **options : the evaluation options (:data:`fastndcg.options.OPTIONS`), each
        listed here with what it means.
    per_query : ``None`` (default) keeps the per-query table in memory; a path
        writes it as it is produced, to a ``.parquet`` / ``.csv`` file or, for any
        other name or an existing directory, to a directory of Parquet parts, and
        ``report.per_query`` reads it back on access; ``False`` keeps none. With a
        path or False, memory does not grow with the number of queries. The
        target is checked before anything is read: it must not be (or be inside,
        or hold) a file the evaluation reads, and it is written only when the
        evaluation succeeds.
    progress : draw a progress bar with rows/s on stderr.
    batch_rows : rows per record batch read (memory vs. per-batch overhead).

    The rows of one query may straddle batches, row groups and files; rows of a
    query that are not adjacent are regrouped (see :mod:`fastndcg.scattered`).

    Example
    -------
    >>> import pyarrow as pa, fastndcg
    >>> log = pa.table({"query_id": [7, 7, 7, 9, 9], "score": [0.9, 0.5, 0.1, 0.3, 0.8],
    ...                 "label": [0, 2, 1, 1, 0]})
    >>> report = fastndcg.evaluate(log, k=[1, 3], gain="linear")
    >>> report.per_query.column_names
    ['query_id', 'n_docs', 'ndcg@1', 'ndcg@3']
    >>> [round(v, 4) for v in report.per_query["ndcg@3"].to_pylist()]
    [0.6697, 0.6309]
    >>> report.n_queries, round(report.mean["ndcg@3"], 4)
    (2, 0.6503)
    """
    started = time.perf_counter()
    progress = V.flag(progress, "progress")
    opts, roles = check_options(per_query=per_query, batch_rows=batch_rows, **options)
    qrels, human = options.get("qrels"), options.get("human_qrels")
    check_human_beside(qrels, human)
    output = Output(per_query, io.input_paths(source) + judgment_paths(qrels, human))
    try:
        judged = load_judgments(qrels, opts)
        src = open_run(source, opts, roles, batch_rows)
        if label_sets(qrels) is not None:
            reports, parts = score_label_sets(src, read_as(opts, source), judged, output, 0,
                                              progress)
            seconds = time.perf_counter() - started
            for r in reports.values():
                r.seconds = seconds
            return LabelSets(reports, output.commit(parts), seconds, src.describe)
        if human is None:
            report = _run(src, read_as(opts, source), judged[None], output, progress)
        else:
            report = _with_ppi(source, src, opts, judged[None], output, progress,
                               bound(options))
    except BaseException:
        output.abort()
        raise
    report.seconds = time.perf_counter() - started
    return report


def _with_ppi(source, src: io.Source, opts: Options, judged: Qrels, output: Output,
              progress: bool, options: dict) -> Report:
    """The evaluation with the LLM's judgments ``judged`` (its per-query results put
    in ``output``), with ``report.ppi``: the prediction-powered means from the
    human judgments ``options["human_qrels"]``. The run is read and scored once
    under both; the sums of the means are added as it goes, so nothing grows with
    the number of queries but the per-query results asked for."""
    human = load_human(options["human_qrels"], opts, judged)
    lining = Lining(opts.names)
    report, _ = _run_sets(src, read_as(opts, source), [judged, human],
                          [output, Output(False, [])], progress, HUMAN_SETS, lining)
    report.ppi = lining.estimate(options["confidence"], options["ppi"])
    return report


# the names of the two sets of judgments of prediction-powered means, in messages: the
# LLM's (qrels=, named as one source is) and the human ones
HUMAN_SETS = [None, "human_qrels"]


def check_human_beside(qrels, human) -> None:
    """``human_qrels=`` (``human``) is compared with one source of judgments in
    ``qrels=``, the LLM's: label sets beside it are refused before anything is read.

    >>> check_human_beside("llm.txt", "human.txt")
    """
    if human is not None and label_sets(qrels) is not None:
        raise V.refuse(ValueError, "human_qrels", human,
                       f"{V.spelled('human_qrels', ref=True)} is compared with one source of "
                       f"judgments in {V.spelled('qrels', ref=True)} (the LLM's), not with "
                       f"label sets; give the LLM's judgments alone as the qrels, or drop "
                       f"{V.spelled('human_qrels', ref=True)} and give the human judgments "
                       f"as a label set")


def load_human(human, opts: Options, judged: Qrels | None) -> Qrels:
    """The human judgments ``human`` (``human_qrels=``) read as the LLM's ``judged``
    were, checked to judge at least 2 of the queries the LLM's judge, before the
    run is read (the sample of prediction-powered means). ``judged`` None: the
    LLM's labels are the run's (list mode), checked once it is scored."""
    out = dataclasses.replace(load_qrels(human, opts.query, opts.doc, opts.label, opts.gain,
                                         opts.negative_labels, opts.preset,
                                         name="human_qrels"), sample=True)
    if judged is not None:
        _check_sample(_shared(judged.ids, out.ids), len(judged.ids),
                      "judged by the LLM's qrels", out, "both qrels")
    return out


def check_scored(lining: Lining, human: Qrels, inline: bool = False) -> None:
    """The prediction-powered sums ``lining`` of a scored run hold a human sample of
    at least 2 of the queries scored with the LLM's judgments (``human``: the
    human judgments, named in the message; ``inline``: the LLM's labels are the
    run's own), and each measure the queries its estimate needs: checked before
    any result is committed."""
    if inline:
        _check_sample(lining.n_shared, lining.n_queries,
                      "of the run (scored with its labels, the LLM's)", human,
                      "the run and of human_qrels")
    else:
        _check_sample(lining.n_shared, lining.n_queries, "scored with the LLM's judgments",
                      human, "the run and of both qrels")
    lining.sums.check()


def _shared(ids, judged) -> int:
    """How many of the query ids ``ids`` are among ``judged``."""
    if ids.type != judged.type:
        ids, judged = ids.cast(pa.large_string()), judged.cast(pa.large_string())
    return pc.sum(pc.is_in(ids, value_set=judged)).as_py() or 0


def _check_sample(shared: int, total: int, which: str, human: Qrels, whose: str) -> None:
    """A human sample of ``shared`` of the ``total`` queries ``which`` needs at least 2."""
    if shared < 2:
        example = "" if not len(human.ids) else f" (e.g. {human.ids[0].as_py()!r})"
        raise ValueError(f"human_qrels judge {shared} of the {total:,} queries {which}"
                         f"{example}, and prediction-powered means need a human sample of "
                         f"at least 2 of them; do the query ids of {whose} match (same "
                         f"spelling, same column)?")


def load_judgments(qrels, opts: Options) -> dict:
    """The judgments of an evaluation, each source read and checked once:
    ``{None: None}`` in list mode, ``{None: Qrels}`` for one source, ``{name: Qrels}`` for label sets
    (``qrels={name: source}``; a message about one names it, as ``qrels['llm']``)."""
    if qrels is None:
        return {None: None}
    sets = label_sets(qrels)
    if sets is None:
        return {None: load_qrels(qrels, opts.query, opts.doc, opts.label, opts.gain,
                                 opts.negative_labels, opts.preset)}
    return {name: load_qrels(q, opts.query, opts.doc, opts.label, opts.gain,
                             opts.negative_labels, opts.preset, name=f"qrels[{name!r}]")
            for name, q in sets.items()}


def judgment_paths(qrels, human=None) -> list[str]:
    """The files the judgments read (every label set's, and ``human``'s, the
    ``human_qrels=``): an output must be none of them."""
    sets = label_sets(qrels)
    sources = ([qrels] if sets is None else list(sets.values())) + [human]
    return [p for q in sources if q is not None for p in io.input_paths(q)]


def score_label_sets(src: io.Source, opts: Options, judged: dict, output: Output, first: int,
                     progress: bool, runid: str | None = None) -> tuple[dict, list]:
    """A run scored under every label set of ``judged`` (name -> Qrels) in one pass:
    (name -> :class:`Report`, the per-query parts, tagged with ``labels`` (and
    ``runid``), for ``output``'s parts ``first``, ``first + 1``, ...)."""
    names = list(judged)
    outputs = [run_output(output, first + j) for j in range(len(names))]
    reports = _run_sets(src, opts, list(judged.values()), outputs, progress, names)
    return dict(zip(names, reports)), set_parts(names, reports, output, first, runid)


def set_parts(names: list, reports: list, output: Output, first: int = 0,
              runid: str | None = None) -> list:
    """The per-query results of each label set's Report (each staged by
    :func:`run_output` ``first + j``) as ``output``'s parts ``first``, ``first + 1``,
    ..., tagged with ``labels`` (and ``runid``); none when ``output`` keeps none."""
    if output.kind == "none":
        return []
    return [_as_part(report, ({} if runid is None else {RUNID: runid}) | {LABELS: name},
                     output, first + j)
            for j, (name, report) in enumerate(zip(names, reports))]


def _as_part(report: Report, tags: dict, output: Output, index: int):
    """A run's (or label set's) staged per-query results as part ``index`` of
    ``output``, its first columns ``tags``; the staged file is removed."""
    staged = report.per_query_path
    part = tagged_part(report.per_query if staged is None else staged, tags,
                       output.part_path(index))
    if staged is not None:
        os.remove(staged)
        report.forget_per_query()
    return part


class RunidClash(ValueError):
    """Two runs of :func:`evaluate_runs` would have the same runid: ``runid``, the
    sources ``first`` and ``second``, and ``origin``, what the second's runid
    came from ("tag", "file" or "given")."""

    def __init__(self, runid: str, first, second, origin: str) -> None:
        self.runid, self.first, self.second, self.origin = runid, first, second, origin
        self.why = {"tag": "the run tag of their lines", "file": "their file name"}.get(
            origin, "as named")
        fix = {"tag": "name the runs by file name (runid='file') or give each its runid "
                      "as a (runid, source) pair",
               "file": "give each its runid as a (runid, source) pair"}.get(
                   origin, "give each run its own runid")
        super().__init__(f"runs {_shown(first)} and {_shown(second)} both have runid "
                         f"{runid!r} ({self.why}); {fix}")


def _shown(source) -> str:
    return repr(source) if isinstance(source, str) else f"<{type(source).__name__}>"


@takes_options("fastndcg.evaluate_runs")
def evaluate_runs(runs, *, runid: str = "tag", per_query=None, progress: bool = False,
                  batch_rows: int = 1 << 20, **options) -> Runs:
    """Several runs (or logs) evaluated one after another in this process, each
    exactly as :func:`evaluate` would evaluate it alone, the qrels read once.

    Parameters
    ----------
    runs : a sequence of runs, each a path (TREC run file, Parquet file or
        directory) or a ``(runid, source)`` pair (any source :func:`evaluate`
        takes); or a mapping runid -> source.
    runid : how a run given by its path is named: ``"tag"`` (default) its run tag
        (the 6th field of a TREC run file) when all its lines have the same one,
        else its file name; ``"file"`` its file name. Two runs with one runid are
        a :class:`RunidClash` (a ``ValueError``) naming both, raised before
        anything is read where the names are known without reading.
    per_query : as :func:`evaluate`'s, for all the runs together: ``None`` a
        Table, a path a ``.parquet`` / ``.csv`` file or a directory (one Parquet
        part a run), ``False`` none; the first column is ``runid``. Each run's
        results are staged as the run is scored, so memory does not grow with the
        number of runs (except with ``None``).
    **options : the evaluation options (:data:`fastndcg.options.OPTIONS`), the
        same for every run.

    A run that fails (a malformed line, no judged query) stops the evaluation
    with :func:`evaluate`'s error, which names the file; nothing is written then.
    """
    started = time.perf_counter()
    if runid not in ("tag", "file"):
        raise ValueError(f"runid must be 'tag' (the run tag of a TREC run file, else the file "
                         f"name) or 'file' (the file name), got {runid!r}")
    progress = V.flag(progress, "progress")
    items = [_run_item(r) for r in run_items(runs)]
    if not items:
        raise ValueError("runs is empty: give at least one run")
    opts, roles = check_options(per_query=per_query, batch_rows=batch_rows, **options)
    qrels = options.get("qrels")
    # runids known without reading anything are checked before anything is read
    taken: dict = {}
    names = []
    for name, source in items:
        origin = "given"
        if name is None and (runid == "file" or not _tagged(source, opts)):
            name, origin = _file_name(source), "file"
        if name is not None:
            _claim(taken, name, source, origin)
        names.append(name)
    inputs = [p for _, source in items for p in io.input_paths(source)]
    output = Output(per_query, inputs + judgment_paths(qrels))
    reports: dict = {}
    sources: dict = {}
    parts = []
    try:
        # read and indexed once, then joined to every run (its hash indexes are cached)
        judged = load_judgments(qrels, opts)
        sets = label_sets(qrels) is not None
        for i, ((_, source), name) in enumerate(zip(items, names)):
            t0 = time.perf_counter()
            tags = [] if name is None else None
            src = open_run(source, opts, roles, batch_rows, tags)
            if name is None:
                name, origin = (tags[0], "tag") if len(tags) == 1 else (_file_name(source), "file")
                _claim(taken, name, source, origin)
            with _naming(src.named if src.paths else f"run {name!r}"):
                if sets:
                    by_set, run_parts = score_label_sets(src, read_as(opts, source), judged,
                                                         output, i * len(judged), progress,
                                                         name)
                else:
                    report = _run(src, read_as(opts, source), judged[None],
                                  run_output(output, i), progress)
            if sets:
                seconds = time.perf_counter() - t0
                for r in by_set.values():
                    r.seconds = seconds
                report = LabelSets(by_set, None, seconds, src.describe)
                parts += run_parts
            else:
                report.seconds = time.perf_counter() - t0
                if output.kind != "none":
                    parts.append(_as_part(report, {RUNID: name}, output, i))
            reports[name], sources[name] = report, source
        per_query_out = output.commit(parts)
    except BaseException:
        output.abort()
        raise
    return Runs(reports, sources, per_query_out, time.perf_counter() - started)


@contextlib.contextmanager
def _naming(run: str):
    """A refusal of one of several runs names the run (``run``: its file, or its
    runid for one in memory), unless its message does already."""
    try:
        yield
    except (ValueError, TypeError) as err:
        if type(err) not in (ValueError, TypeError) or run in str(err):
            raise
        raise type(err)(f"{run}: {err}") from None


def run_items(runs) -> list:
    """The runs of :func:`evaluate_runs` (a sequence of runs, or a mapping runid ->
    run) as a list of its items; one path, a number or any other single value is
    refused, never read as a sequence of its characters.

    >>> run_items({"bm25": "bm25.run"})
    [('bm25', 'bm25.run')]
    """
    if isinstance(runs, Mapping):
        return list(runs.items())
    if isinstance(runs, (str, bytes, os.PathLike)):
        raise TypeError(f"runs takes several runs (a list of paths or (runid, source) "
                        f"pairs, or a mapping runid -> run); got the one path "
                        f"{V.shown(runs)}: give runs=[{V.shown(runs)}, ...]")
    if not isinstance(runs, (list, tuple, Iterator)):  # (a table or a frame is one run)
        raise TypeError(f"runs must be a list of runs (paths, or (runid, source) pairs) or a "
                        f"mapping runid -> run, got {V.shown(runs)} ({type(runs).__name__}); "
                        f"give one run as runs=[(runid, run)]")
    return list(runs)


def _run_item(run) -> tuple:
    """(runid or None, source) of one of :func:`evaluate_runs`' runs (a pair whose
    runid is None is named as a path is)."""
    name = None
    if isinstance(run, tuple):
        if len(run) != 2 or not (run[0] is None or isinstance(run[0], str) and run[0]):
            raise TypeError(f"runs: a run given as a pair is (runid, source) with a non-empty "
                            f"runid string, got {V.shown(run)}")
        name, run = run
    return name, (os.fspath(run) if isinstance(run, os.PathLike) else run)


def _tagged(source, opts: Options) -> bool:
    """Whether the run is a TREC run file (whose lines carry run tags)."""
    return (opts.qrels_mode and isinstance(source, str) and os.path.isfile(source)
            and not io.is_parquet_file(source))


def _file_name(source) -> str:
    if not isinstance(source, str):
        raise TypeError(f"runs: a run that is not a path has no file name to be named by: "
                        f"give it as a (runid, source) pair, got {V.shown(source)} "
                        f"({type(source).__name__})")
    return os.path.basename(source.rstrip("/" + os.sep)) or source


def _claim(taken: dict, name: str, source, origin: str) -> None:
    if name in taken:
        raise RunidClash(name, taken[name], source, origin)
    taken[name] = source


def run_output(output: Output, i: int) -> Output:
    """Where run ``i`` of several puts its per-query results: a Parquet file in the
    staging folder of the common target, memory, or nowhere, as the target."""
    if output.kind == "path":
        return Output(os.path.join(output.staging, f"run-{i:06d}.parquet"), [])
    return Output(None if output.kind == "memory" else False, [])


def _run(src: io.Source, opts: Options, judged: Qrels | None, output: Output,
         progress: bool) -> Report:
    return _run_sets(src, opts, [judged], [output], progress)[0]


def _run_sets(src: io.Source, opts: Options, judged: list, outputs: list, progress: bool,
              names: list | None = None, lining: Lining | None = None) -> list[Report]:
    """``src`` scored under each of ``judged`` (the Qrels of a label set each, or
    ``[None]`` in list mode), in one pass over the run, each set's per-query
    results to its own of ``outputs``: one :class:`Report` a set. ``names``: the
    label sets' names (for messages), None for one set. ``lining``: with two sets
    (the LLM's, the human labels), the prediction-powered sums, added as the
    queries are scored (and checked, :func:`check_scored`, before any result is
    committed)."""
    schemas = [result_schema(opts.query, id_type(src.schema, opts.query, j, opts.complete),
                             opts.names, weight=opts.weight, extra=explain_columns(opts))
               for j in judged]
    scorers = [Scorer(opts, j) for j in judged]
    writers = [PartWriter(schema, out.part_path(0), keep=out.kind != "none")
               for schema, out in zip(schemas, outputs)]
    # the run ids, for the check of repeated ids if the run is not sorted: a one-shot
    # reader's all (spilled to disk past SPILL_IDS), another source's while they fit
    # in memory (reading the query column again costs more: ~2.5 ns a row of text ids)
    spill = IdSpill(memo=src.rereadable)
    bar = Progress(src.num_rows, enabled=bool(progress))
    try:
        results = score_sets(src.batches(prefetch=True), scorers, writers, progress=bar,
                             on_ids=spill.add,
                             on_scored=lining)
        totals = [r.totals for r in results]
        n_missing = [0] * len(judged)
        added = [None] * len(judged)  # complete=True: the judged queries the run lacks
        for i, (scorer, result) in enumerate(zip(scorers, results)):
            if scorer.qrels is not None:
                missing = scorer.missing(result.seen)
                n_missing[i] = 0 if missing is None else len(missing.ids)
                if missing is not None and opts.complete:
                    totals[i] = totals[i].merge(writers[i].add(missing))
                    added[i] = missing
    except BaseException:
        for w in writers:
            w.abort()
        spill.close()
        raise
    finally:
        bar.close()
    parts = [w.close() for w in writers]
    n_scattered = 0
    if results[0].sorted:
        spill.close()  # (a sorted run repeats no id: its spill files go)
    else:  # the run's order: the same under every set
        dup = repeated_ids(src, opts.query, results[0].n_runs, spill)
        if dup is not None:
            if not src.rereadable:
                for part in parts:
                    part.remove()
                raise ValueError(
                    f"the rows of query {dup[0].as_py()!r} are not adjacent in {src.named} "
                    f"({len(dup):,} queries are split like this), and a RecordBatchReader "
                    f"cannot be read twice to regroup them; sort the log by {opts.query!r} "
                    f"first, or pass a file, Table or Dataset")
            if outputs[0].kind == "none":
                # no per-query results to repair: run again, staging them on disk
                for part in parts:
                    part.remove()
                return _rerun_staged(src, opts, judged, names, lining)
            # the scattered queries read again once, and scored under every set
            scored = rescore(src.batches(), opts.query, dup, SetScorer(scorers))
            if lining is not None:  # the sums saw fragments: add them again, whole
                _sums_again(src, scorers, schemas, dup, scored, lining)
            for i, (schema, out) in enumerate(zip(schemas, outputs)):
                fixed = Fixed(dup, [each[i] for each in scored], len(opts.names))
                repaired = PartWriter(schema, out.part_path(1))
                try:
                    new_totals = patch(parts[i], repaired, fixed)
                except BaseException:
                    repaired.abort()
                    raise
                parts[i].remove()
                parts[i] = repaired.close()
                new_totals.n_rows = totals[i].n_rows
                totals[i] = new_totals
            n_scattered = len(dup)
    if lining is not None:
        lining(added)
    for i, result in enumerate(results):
        check_weights(totals[i], opts)
        judging = scorers[i].qrels  # named by its set, else by the argument it came as
        given_as = None if judging is None or judging.argument == "qrels" else judging.argument
        check_nonempty(totals[i].n_rows, src.named,
                       None if result.seen is None else result.seen.any(), result.unjudged,
                       names[i] if names is not None else given_as,
                       None if judging is None else judging.sample)
    if lining is not None:  # before anything is committed: a failed run writes nothing
        check_scored(lining, judged[1], judged[0] is None)
    reports = []
    for i, (result, out) in enumerate(zip(results, outputs)):
        per_query = out.commit([parts[i]])
        unjudged = 0 if result.unjudged is None else len(result.unjudged)
        reports.append(Report(per_query, totals[i], n_unjudged=unjudged,
                              n_missing=n_missing[i], complete=opts.complete,
                              qrels_mode=judged[i] is not None, source=src.describe,
                              n_scattered=n_scattered, schema=schemas[i], inputs=out.inputs))
    return reports


def check_nonempty(n_rows: int, describe: str, judged_seen: bool | None, unjudged,
                   labels: str | None = None, sample: bool | None = None) -> None:
    """An empty log, or a run none of whose queries is judged, is an error, not NaN.
    ``labels``: the name of the label set judging it, if one of several, or of the
    argument it was given as (``"human_qrels"``); ``sample``: whether those are a
    sample's, whose unjudged ids are only an example (default: for human_qrels)."""
    if n_rows == 0:
        if describe.startswith("the "):  # an object in memory ("the Arrow table given as ...")
            raise ValueError(f"{describe} holds no rows: it is empty (filtered to nothing, or "
                             f"a reader that was read already), so nothing is evaluated; "
                             f"pass it with the rows to score")
        raise ValueError(f"{describe} holds no rows (an empty file, a file without row "
                         f"groups, or a reader that was already read): nothing to evaluate")
    if judged_seen is not None and not judged_seen:
        n = 0 if unjudged is None else len(unjudged)
        example = "" if not n else f" (e.g. run query {unjudged[0].as_py()!r})"
        if sample is None:
            sample = labels == HUMAN_SETS[1]
        qrels = ("the qrels" if labels is None else labels if labels == HUMAN_SETS[1] else
                 f"the qrels of label set {labels!r}")
        some = "" if sample else f" {n:,}"  # (a sample's ids: the first chunk's only)
        raise ValueError(f"none of the{some} queries of {describe} has a judgment in {qrels}"
                         f"{example}: do the run's and the qrels' query ids match (same "
                         f"spelling, same column)?")


def finish(totals: Totals, n_rows: int, opts: Options, seen: Any, unjudged: list,
           parts: list, output: Output, describe: str, schema_out: pa.Schema, *,
           n_missing: int = 0, n_scattered: int = 0, labels: str | None = None) -> Report:
    """The merged results of a distributed run (Dask, Spark) as one Report: the
    checks of an empty or weightless log, the parts committed, the counts.
    ``labels``: the name of the label set scored, if one of several."""
    totals.n_rows = n_rows
    unjudged_ids = check_finished(totals, n_rows, opts, seen, unjudged, describe, labels)
    per_query = output.commit(parts)
    n_unjudged = 0 if unjudged_ids is None else len(pc.unique(unjudged_ids))
    return Report(per_query, totals, n_unjudged=n_unjudged, n_missing=n_missing,
                  complete=opts.complete, qrels_mode=opts.qrels_mode, source=describe,
                  n_scattered=n_scattered, schema=schema_out, inputs=output.inputs)


def check_finished(totals: Totals, n_rows: int, opts: Options, seen: Any, unjudged: list,
                   describe: str, labels: str | None = None) -> pa.Array | None:
    """The checks :func:`finish` makes of a distributed run's merged results (an empty
    or weightless log, no judged query), before anything is committed; returns the
    unjudged query ids (None: none)."""
    from ._arrow import concat_ids
    check_weights(totals, opts)
    found = [u for u in unjudged if len(u)]
    unjudged_ids = pa.concat_arrays(concat_ids(found)) if found else None
    check_nonempty(n_rows, describe, None if seen is None else bool(seen.any()), unjudged_ids,
                   labels)
    return unjudged_ids


def check_weights(totals: Totals, opts: Options) -> None:
    """Weighted means need some weight: all-zero weights are an error, not NaN."""
    if opts.weight is not None and totals.n_queries and not (totals.weights > 0).any():
        raise ValueError(f"the query weights in column {opts.weight!r} sum to zero over the "
                         f"{totals.n_queries:,} queries scored, so no weighted mean exists; "
                         f"check the column")


def repeated_ids(src: io.Source, query: str, n_runs: int, spill: IdSpill | None = None
                 ) -> pa.Array | None:
    """The query ids that label more than one run of ``src`` (None: none), in memory
    bounded by :class:`~fastndcg.scattered.IdSpill`. ``spill``: the run ids noted as
    the run was scored; they are read again when it holds none (None, or a memo
    that gave up: more than fit in memory)."""
    if spill is None or spill.gave_up:
        from .chunks import run_ids
        spill = IdSpill(expected=n_runs)
        for ids in run_ids(src.batches(columns=[query]), query):
            spill.add(ids)
    return spill.duplicates()  # (removes its files)


def _sums_again(src: io.Source, scorers: list, schemas: list, dup: pa.Array, scored: list,
                lining: Lining) -> None:
    """The prediction-powered sums of a run whose queries ``dup`` are scattered:
    ``lining`` emptied, the run scored again without them (nothing written), and
    their whole-query results ``scored`` added."""
    lining.reset(skip=dup)
    score_sets(src.batches(), scorers, [PartWriter(schema, None, keep=False)
                                        for schema in schemas], on_scored=lining)
    lining.skip = None
    for each in scored:
        lining(each)


def _rerun_staged(src: io.Source, opts: Options, judged: list, names: list | None,
                  lining: Lining | None = None) -> list[Report]:
    if lining is not None:
        lining.reset()
    import tempfile

    with tempfile.TemporaryDirectory(prefix="fastndcg-stage-") as tmp:
        staged = [Output(os.path.join(tmp, f"per_query-{i}"), []) for i in range(len(judged))]
        reports = _run_sets(src, opts, judged, staged, False, names, lining)
    for report in reports:
        report.forget_per_query()
    return reports
