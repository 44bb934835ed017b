"""Results of an evaluation: the :class:`Report` of one, the :class:`Runs` of several
runs, the :class:`LabelSets` of one run under several label sets.

A :class:`Report` is made of the evaluation's :class:`~fastndcg.totals.Totals`
(means and counts) and its per-query results (a table in memory, or the path
:class:`~fastndcg.output.Output` committed them to, read back on first access).
The exact totals (:mod:`fastndcg.totals`), the per-query parts
(:mod:`fastndcg.parts`) and the output staging (:mod:`fastndcg.output`) have
modules of their own; their public names import from here as well.
"""

from __future__ import annotations

import os
from typing import Any, Sequence

import pyarrow as pa

from . import _validate as V
from .output import FILE_EXTS, Output, OutputIsInput, read_per_query
from .parts import LABELS, RUNID, Part, PartWriter, Rows
from .tables import render
from .totals import Totals

__all__ = ["Totals", "Report", "Output", "OutputIsInput", "PartWriter", "Part", "Rows",
           "Runs", "LabelSets"]


class Report:
    """What :func:`fastndcg.evaluate` found.

    Attributes
    ----------
    per_query : pyarrow.Table -- the query id (named as in the source), ``n_docs``
        (rows of the query in the run/log), then one float64 ``ndcg@K`` column per
        cutoff; one row per scored query, in order of first appearance. With
        ``per_query=PATH`` it is read back from that file or directory on first
        access (``per_query_path`` says where); with ``per_query=False`` none was
        kept and reading it is an error.
    mean : dict -- ``{"ndcg@K": mean over queries}`` (NaN values left out).
    n_queries : queries scored (rows of ``per_query``).
    n_rows : rows read from the log or run.
    n_zero_idcg : scored queries whose IDCG is 0 (no relevant item): scored by
        ``zero_idcg``; with "nan" they are left out of ``mean``.
    n_unjudged : qrels mode: queries of the run without any judgment, left out
        (as trec_eval does).
    n_missing : qrels mode: judged queries absent from the run: scored 0 with
        ``complete=True`` (and then part of ``per_query``), else left out.
    n_scattered : queries whose rows were not adjacent in the source (each was
        regrouped and scored whole).
    seconds : wall time of the evaluation.
    source : what was evaluated, in words (a path, or the kind of table).
    inputs : the files the evaluation read (:meth:`write` never writes over them).
    per_query_path : where the per-query results were written (``per_query=PATH``),
        else None.
    totals : the mergeable :class:`Totals` behind ``mean`` and the counts.
    complete : whether judged queries missing from the run were scored 0.
    qrels_mode : whether the run was joined to qrels.
    ppi : with ``human_qrels=``, the prediction-powered means and intervals
        (:class:`fastndcg.ppi.PPI`), printed under the means; else None.
    """

    def __init__(self, per_query: Any, totals: Totals, *, n_unjudged: int = 0,
                 n_missing: int = 0, complete: bool = False, qrels_mode: bool = False,
                 seconds: float = 0.0, source: str = "", n_scattered: int = 0,
                 schema: pa.Schema | None = None, inputs: Sequence[str] = ()) -> None:
        self._per_query = per_query if isinstance(per_query, pa.Table) else None
        self.inputs = tuple(inputs)  # the files read: write() never writes over them
        self.per_query_path = per_query if isinstance(per_query, str) else None
        self._schema = schema
        self.totals = totals
        self.n_unjudged = n_unjudged
        self.n_missing = n_missing
        self.n_scattered = n_scattered
        self.complete = complete
        self.qrels_mode = qrels_mode
        self.seconds = seconds
        self.source = source
        self.ppi = None  # the prediction-powered means (human_qrels=), a fastndcg.ppi.PPI

    @property
    def per_query(self) -> pa.Table:
        if self._per_query is None:
            if self.per_query_path is None:
                raise ValueError("this evaluation kept no per-query results (per_query=False); "
                                 "pass per_query=None to keep them in memory, or a path to "
                                 "write them to a file")
            self._per_query = read_per_query(self.per_query_path, self._schema)
        return self._per_query

    def forget_per_query(self) -> None:
        """Keep no per-query results (``per_query=False`` runs that staged them)."""
        self._per_query = None
        self.per_query_path = None

    n_queries = property(lambda self: self.totals.n_queries)
    n_rows = property(lambda self: self.totals.n_rows)
    n_zero_idcg = property(lambda self: self.totals.n_zero_idcg)
    mean = property(lambda self: self.totals.mean)

    def to_pandas(self):
        """``per_query`` as a pandas DataFrame (needs pandas)."""
        return self.per_query.to_pandas()

    def to_dict(self) -> dict[str, Any]:
        """Counts and means as plain numbers (what ``--format json`` prints)."""
        out: dict[str, Any] = {"n_queries": self.n_queries, "n_zero_idcg": self.n_zero_idcg,
                               "n_rows": self.n_rows}
        if self.qrels_mode:
            out.update(n_unjudged=self.n_unjudged, n_missing=self.n_missing,
                       complete=self.complete)
        out.update(self.mean)
        if self.ppi is not None:
            out["ppi"] = self.ppi.to_dict()
        out["seconds"] = round(self.seconds, 4)
        return out

    def write(self, path: str | os.PathLike) -> None:
        """Write ``per_query`` to ``.parquet`` or ``.csv`` (chosen by the extension),
        through the output guard (links, FIFOs, directories, writability)."""
        kept = (self.per_query_path,) if self.per_query_path else ()
        path = V.output_path(path, "path", self.inputs + kept, exts=FILE_EXTS)
        if os.path.splitext(path)[1].lower() in (".parquet", ".pq"):
            import pyarrow.parquet as pq
            pq.write_table(self.per_query, path)
        else:
            import pyarrow.csv as csv
            csv.write_csv(self.per_query, path)

    def format_table(self) -> str:
        """An aligned text table of the means and counts."""
        counts = [("queries", self.n_queries), ("rows", self.n_rows),
                  ("zero-IDCG queries", self.n_zero_idcg)]
        if self.qrels_mode:
            counts += [("unjudged queries (left out)", self.n_unjudged),
                       (f"judged queries not in run ({'scored 0' if self.complete else 'left out'})",
                        self.n_missing)]
        rows = [(name, f"{value:.4f}") for name, value in self.mean.items()]
        rows += [(name, f"{value:,}") for name, value in counts]
        rate = self.n_rows / self.seconds if self.seconds > 0 else 0.0
        rows.append(("time", f"{self.seconds:.3f} s ({rate / 1e6:,.1f}M rows/s)"))
        table = render(None, rows, "ll")
        return table if self.ppi is None else f"{table}\n\n{self.ppi.format_table()}"

    def __repr__(self) -> str:
        means = ", ".join(f"{k}={v:.4f}" for k, v in self.mean.items())
        return f"<Report {self.n_queries:,} queries, {self.n_rows:,} rows: {means}>"


def _counts_header(first: Report) -> list[str]:
    """The columns of a table row of a Report: its means, then its counts."""
    header = [*first.mean, "queries", "rows", "zero-IDCG"]
    return header + (["unjudged", "missing"] if first.qrels_mode else [])


def _counts_row(r: Report) -> list[str]:
    row = [*(f"{v:.4f}" for v in r.mean.values()), f"{r.n_queries:,}", f"{r.n_rows:,}",
           f"{r.n_zero_idcg:,}"]
    return row + ([f"{r.n_unjudged:,}", f"{r.n_missing:,}"] if r.qrels_mode else [])


def _legend(first: Report) -> str:
    return (f"unjudged: run queries without judgments (left out); missing: judged queries "
            f"not in the run ({'scored 0' if first.complete else 'left out'})")


class LabelSets:
    """What :func:`fastndcg.evaluate` found with several label sets
    (``qrels={name: qrels, ...}``): the run read and ranked once, each set scored
    from that ranking.

    Attributes
    ----------
    reports : label set name -> the :class:`Report` of the run under that set, in
        the order the sets were given: the very numbers ``evaluate`` gives with
        that set alone. ``label_sets["llm"]`` is ``label_sets.reports["llm"]``.
    per_query : every set's per-query results, set after set, with a first column
        ``labels`` (the set's name): a pyarrow Table (``per_query=None``), the path
        written, or None (``per_query=False``).
    seconds : wall time of the whole evaluation.
    source : what was evaluated, in words.

    >>> import pyarrow as pa, fastndcg
    >>> run = pa.table({"query_id": [1, 1, 2, 2], "doc_id": [10, 11, 20, 21],
    ...                 "score": [0.9, 0.4, 0.8, 0.7]})
    >>> human = pa.table({"query_id": [1, 2], "doc_id": [11, 20], "label": [1, 2]})
    >>> llm = pa.table({"query_id": [1, 2], "doc_id": [10, 20], "label": [1, 1]})
    >>> sets = fastndcg.evaluate(run, qrels={"human": human, "llm": llm}, k=[1])
    >>> {name: r.mean["ndcg@1"] for name, r in sets.reports.items()}
    {'human': 0.5, 'llm': 1.0}
    >>> sets.per_query.column_names
    ['labels', 'query_id', 'n_docs', 'ndcg@1']
    """

    def __init__(self, reports: dict, per_query: Any, seconds: float, source: str = "") -> None:
        self.reports, self.per_query, self.seconds, self.source = (reports, per_query, seconds,
                                                                   source)

    def __getitem__(self, name: str) -> Report:
        return self.reports[name]

    @property
    def n_rows(self) -> int:
        """Rows read from the run (once, for every set)."""
        return next(iter(self.reports.values())).n_rows

    def to_dicts(self) -> list[dict[str, Any]]:
        """One dict a label set: ``labels``, then :meth:`Report.to_dict` (what
        ``--format json`` prints, a line each)."""
        return [{LABELS: name, **r.to_dict()} for name, r in self.reports.items()]

    def format_table(self) -> str:
        """An aligned text table: one row per label set, ``labels`` first, its means
        and counts."""
        first = next(iter(self.reports.values()))
        header = [LABELS, *_counts_header(first)]
        rows = [[name, *_counts_row(r)] for name, r in self.reports.items()]
        lines = [render(header, rows, "l" + "r" * (len(header) - 1))]
        if first.qrels_mode:
            lines.append(_legend(first))
        lines.append(f"{len(self.reports)} label sets, {self.n_rows:,} rows read and ranked "
                     f"once in {self.seconds:.3f} s")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<LabelSets {len(self.reports)}: {', '.join(self.reports)}>"


class Runs:
    """What ``evaluate_runs`` (``from fastndcg import evaluate_runs``) found.

    Attributes
    ----------
    reports : runid -> :class:`Report` of that run, in the order the runs were given
        (with several label sets, ``qrels={name: qrels}``, the :class:`LabelSets`
        of that run).
    sources : runid -> the run as given (a path, or the source of a pair).
    per_query : every run's per-query results, run after run, with a first column
        ``runid`` (then ``labels`` with several label sets): a pyarrow Table
        (``per_query=None``), the path written, or None (``per_query=False``).
    seconds : wall time of the whole evaluation (the qrels, read once, included).
    """

    def __init__(self, reports: dict, sources: dict, per_query: Any, seconds: float) -> None:
        self.reports, self.sources = reports, sources
        self.per_query, self.seconds = per_query, seconds

    def _entries(self):
        """(runid, label set name or None, Report) a row of the tables."""
        for runid, r in self.reports.items():
            if isinstance(r, LabelSets):
                for name, report in r.reports.items():
                    yield runid, name, report
            else:
                yield runid, None, r

    def to_dicts(self) -> list[dict[str, Any]]:
        """One dict a run (a run and label set with several sets): ``runid``
        (``labels``), ``source`` (a path; None for other sources), then
        :meth:`Report.to_dict` (what ``--format json`` prints, a line each)."""
        out = []
        for runid, name, r in self._entries():
            source = self.sources[runid]
            out.append({RUNID: runid, **({} if name is None else {LABELS: name}),
                        "source": source if isinstance(source, str) else None, **r.to_dict()})
        return out

    def format_table(self) -> str:
        """An aligned text table: one row per run (run and label set), ``runid``
        first, its means and counts, ``source`` last."""
        entries = list(self._entries())
        first = entries[0][2]
        keys = [RUNID] + ([LABELS] if entries[0][1] is not None else [])
        header = [*keys, *_counts_header(first), "time", "source"]
        rows = []
        for d, (_, _, r) in zip(self.to_dicts(), entries):
            rows.append([*(d[k] for k in keys), *_counts_row(r), f"{r.seconds:.3f} s",
                         d["source"] or "-"])
        lines = [render(header, rows, "l" * len(keys) + "r" * (len(header) - len(keys) - 1)
                        + "l")]
        if first.qrels_mode:
            lines.append(_legend(first))
        n_rows = sum(r.n_rows for r in self.reports.values())
        lines.append(f"{len(self.reports)} runs, {n_rows:,} rows in {self.seconds:.3f} s")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<Runs {len(self.reports)}: {', '.join(self.reports)}>"
