"""fastndcg inside ir_measures: a provider, and ``use()`` to put it first.

ir_measures computes each measure with the first provider of its pipeline that
supports it. Importing this module registers fastndcg's provider under the name
``"fastndcg"`` (``ir_measures.providers.registry["fastndcg"]``); :func:`use`
puts it first in ir_measures' default pipeline, so ``ir_measures.calc_aggregate``,
``iter_calc``, ``evaluator`` and PyTerrier's ``pt.Experiment`` run on fastndcg
with no other change. ``use(False)`` puts the pipeline back as it was.

The numbers are ir_measures' own. For each measure the provider finds the one
ir_measures' default pipeline would have asked (ignoring this one) and
reproduces its rules, ties included:

* **pytrec_eval** (nDCG with ``dcg="log2"`` and ``gains=``, AP, RR, P, R,
  Success, Rprec, Bpref, NumRet, NumQ, NumRel, SetP, SetR, SetF, SetAP, infAP,
  IPrec, and ``judged_only=True`` wherever ir_measures takes it):
  trec_eval 9's measures on scores rounded to 32-bit floats, ties broken by
  document id descending (``preset="pytrec_eval"``, whose IPrec reads trec_eval
  9's relevant item, int(recall x R + 0.9)); an nDCG ``gains=`` table maps each
  judgment (a label missing from it keeps its value), as pytrec_eval's provider
  does; ``judged_only=True`` (trec_eval's ``-J``) scores the run cut to its
  documents judged with a label >= 0, a run query left with none on an empty
  ranking;
* **msmarco** (``RR@k``) and **judged** (``Judged@k``): scores as doubles, ties
  broken by document id ascending;
* **gdeval** (``ERR@k``, ``nDCG(dcg="exp-log2")@k``): scores as doubles, ties
  broken by document id descending, values as gdeval prints them (5 decimals).
  ERR divides gains by 2^max(4, the query's largest grade): gdeval's 2^4 for
  the grades gdeval reads (it refuses grades above 4). These need no Perl: where
  Perl is missing, and ir_measures cannot compute them at all, fastndcg still
  does, by gdeval's rules. One quirk is not copied: gdeval.pl keeps only what
  follows the last ``-`` of a query id, so ir_measures reports query
  ``2024-127266`` as ``127266`` (and 0 under its own id); fastndcg reports it
  under its id.

Inputs as ir_measures takes them: an empty run (``{}``, ``[]``) scores each judged
query with each measure's ``DEFAULT`` (0), empty judgments give no per-query value
(NaN aggregates), a run none of whose queries is judged gives each judged query 0.
A query judged with an empty dict (``{"q1": {}}``) counts as judged (0 for it)
wherever a measure of pytrec_eval or judged is in the call, as ir_measures' providers
take the dict's keys then; with only msmarco's and gdeval's measures it does not.
Where ir_measures would not match ids, fastndcg refuses rather than guess: integer
query (or document) ids on one side and string ids on the other (``1`` vs ``"1"``:
ir_measures' pytrec_eval refuses integer ids, its msmarco and judged providers then
score every query 0), a missing id (``None``), records of both kinds in one list, and
a run given as the judgments or the judgments as the run (ranx's ``Run``/``Qrels``,
ScoredDoc/Qrel records). Integer ids on both sides, which ir_measures' pytrec_eval
refuses, are scored as their text would be.

Every other measure is left to the providers that follow: cwl_eval's RBP, the
intent-aware measures, ir_measures' accuracy and compat measures. As in ir_measures, a judged query missing from the run gets each
measure's ``DEFAULT`` (0), and the aggregates are ir_measures' aggregators over
the per-query values.

ir_measures' command line takes ``--provider`` from the providers registered
before it starts; ``python -m fastndcg.ir_measures ARGS`` is ir_measures' command
line with this provider registered (``--provider fastndcg``).

Needs the ``ir_measures`` extra (``pip install fastndcg[ir_measures]``);
``import fastndcg`` alone never imports ir_measures.

>>> import ir_measures
>>> from ir_measures import nDCG, AP
>>> import fastndcg.ir_measures as fim
>>> qrels = {"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 2}}
>>> run = {"q1": {"d1": 0.5, "d2": 0.9}, "q2": {"d3": 0.1}}
>>> fim.provider.calc_aggregate([nDCG@10, AP], qrels, run)[AP]
0.75
>>> with fim.used():
...     ir_measures.calc_aggregate([nDCG@10], qrels, run)[nDCG@10] == \\
...         fim.provider.calc_aggregate([nDCG@10], qrels, run)[nDCG@10]
True
"""

from __future__ import annotations

import contextlib
import math
import numbers
import itertools
from typing import Iterable, Iterator

import ir_measures
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from ir_measures import Metric, providers

from . import _validate as V
from . import foreign, io
from . import measures as M
from ._evaluate import evaluate
from .qrels import judged_docs_only

__all__ = ["provider", "use", "used", "FastndcgProvider", "main"]

NAME = "fastndcg"
# the rules of the provider that would have answered: evaluate's options
_RULES = {
    "pytrec_eval": {"preset": "pytrec_eval"},
    "msmarco": {"preset": "trec_eval", "ties": "stable", "order": "doc_ascending"},
    "judged": {"preset": "trec_eval", "ties": "stable", "order": "doc_ascending"},
    # gdeval.pl: doubles, ties by document id descending, printed with 5 decimals
    "gdeval": {"preset": "trec_eval", "decimals": 5},
}
_RUN = {"query_id": "query", "doc_id": "doc", "score": "score"}
_QRELS = {"query_id": "query", "doc_id": "doc", "label": "label"}


def _answering(measure) -> str | None:
    """The name of the provider ir_measures' default pipeline would ask for
    ``measure`` when fastndcg is not in it; where no provider that supports it is
    installed (gdeval without Perl), the first that supports it."""
    unavailable = None
    for p in _original_providers():
        try:
            if not p.supports(measure):
                continue
            if p.is_available():
                return p.NAME
        except Exception:  # a provider that cannot judge the measure does not answer it
            continue
        unavailable = unavailable or p.NAME
    return unavailable


def _reading(measure) -> tuple[str, tuple | None, bool] | None:
    """fastndcg's reading of an ir_measures measure: (measure name, the gains
    table of an nDCG that has one, whether it ranks the judged documents only), or
    None where fastndcg has none."""
    params = getattr(measure, "params", {})
    judged_only = params.get("judged_only") is True
    if judged_only:  # trec_eval's -J: the measure of the run cut to its judged documents
        measure = measure(judged_only=False)
        params = measure.params
    gains = None
    if measure.NAME == "nDCG" and isinstance(params.get("gains"), dict):  # before str()
        for label, gain in params["gains"].items():
            for what, value in (("grade", label), ("gain", gain)):
                if (isinstance(value, bool) or not isinstance(value, numbers.Real)
                        or not math.isfinite(value)):
                    raise ValueError(f"nDCG(gains={V.shown(params['gains'])}): gains maps "
                                     f"grade {V.shown(label)} to {V.shown(gain)}, but each "
                                     f"{what} must be a finite number (ir_measures' "
                                     f"pytrec_eval refuses it too); e.g. "
                                     f"nDCG(gains={{0: 0, 1: 1, 2: 3}})")
    text = str(measure)
    if measure.NAME == "NumRet" and isinstance(params.get("rel"), int):
        text = f"NumRelRet(rel={params['rel']})"  # pytrec_eval's num_rel_ret
    if measure.NAME == "SetP" and params.get("relative") is True:
        rel = params.get("rel")
        text = "SetRelP" + (f"(rel={rel})" if isinstance(rel, int) else "")
    if measure.NAME == "nDCG" and isinstance(params.get("gains"), dict):
        # pytrec_eval maps each judgment through the table (a label missing from it
        # keeps its value), then scores linear gains
        gains = tuple(sorted(params["gains"].items()))
        cutoff = params.get("cutoff")
        text = "nDCG" if not isinstance(cutoff, int) else f"nDCG@{cutoff}"
    try:
        parsed = M.parse(text)
    except ValueError:
        return None
    if len(parsed.ndcg) + len(parsed.others) != 1:
        return None
    return text, gains, judged_only


class FastndcgProvider(providers.Provider):
    """ir_measures' measures computed by fastndcg, each with the rules of the
    provider that would otherwise answer it (see the module)."""

    NAME = NAME

    def supports(self, measure) -> bool:
        measure.validate_params()
        if _reading(measure) is None:
            return False
        return _answering(measure) in _RULES

    def _evaluator(self, measures, qrels):
        measures = list(measures)
        for m in measures:
            if not self.supports(m):
                raise ValueError(f"the fastndcg provider does not compute {m}; leave it to "
                                 f"ir_measures' own providers (ir_measures.calc_aggregate "
                                 f"after fastndcg.ir_measures.use() does)")
        table, qrels = _table(qrels, _QRELS, "qrels")
        return FastndcgEvaluator(measures, table,
                                 empty_queries=foreign.empty_queries(qrels, "qrels"))


def _table(source, roles: dict, name: str) -> tuple[pa.Table, object]:
    """Any run or qrels ir_measures accepts (a TREC file path, a DataFrame, a dict of
    dicts, namedtuples; empty ones too), read once as an Arrow table with fastndcg's
    column names; and ``source`` (an iterator rebuilt where it was peeked at)."""
    if isinstance(source, str):
        reader = io.read_trec_qrels if name == "qrels" else io.read_trec_run
        return reader(source), source
    if hasattr(source, "__next__") and hasattr(source, "__iter__") and not isinstance(
            source, pa.RecordBatchReader):  # an iterator of records: an empty one is empty
        first = next(source, _NOTHING)
        source = [] if first is _NOTHING else itertools.chain([first], source)
    if (isinstance(source, (list, tuple)) and not source) or (
            isinstance(source, dict) and all(isinstance(d, dict) and not d
                                             for d in source.values())):
        foreign.empty_queries(source, name)  # the ids of {"q1": {}} checked as a table's
        # ir_measures takes these: an empty run scores each judged query 0, and empty
        # judgments judge no query
        return pa.table({c: pa.array([], pa.string() if r in ("query", "doc") else
                                     pa.float64()) for c, r in roles.items()}), source
    src = io.open_source(source, roles, name=name)
    batches = list(src.batches())
    if not batches:
        return (src.schema.empty_table() if src.schema is not None else pa.table({})), source
    return pa.Table.from_batches(batches), source


_NOTHING = object()


def _kind(ids) -> str | None:
    """'integers' or 'strings': how ir_measures tells ids apart (1 is not '1')."""
    if isinstance(ids, pa.DataType):
        return "integers" if pa.types.is_integer(ids) else "strings"
    if not ids:
        return None
    return "integers" if isinstance(ids[0], int) else "strings"


def _same_kind(what: str, run, run_example, qrels, qrels_example) -> None:
    """Refuses integer ids on one side and string ids on the other. ir_measures'
    pytrec_eval provider refuses integer ids, its msmarco and judged providers then
    match no query (every measure 0), its gdeval provider matches them as text: the
    one answer all agree on is none."""
    if run is None or qrels is None or run == qrels:
        return
    whose = {"run": ("the run's", run_example), "qrels": ("the qrels'", qrels_example)}
    ints, texts = ("run", "qrels") if run == "integers" else ("qrels", "run")
    raise TypeError(f"{whose[ints][0]} {what} ids are integers (e.g. "
                    f"{V.shown(whose[ints][1])}) but {whose[texts][0]} are strings (e.g. "
                    f"{V.shown(whose[texts][1])}): ir_measures does not match them (its "
                    f"pytrec_eval provider refuses integer ids); make {whose[ints][0]} {what} "
                    f"ids strings, e.g. str({'doc' if what == 'document' else what}_id)")


def _doc_ascending(run: pa.Table) -> pa.Table:
    """The run sorted by query, score descending, then document id ascending (the
    order msmarco's and judged's evaluators rank in), for stable ties."""
    docs = run.column("doc_id")
    if not pa.types.is_string(docs.type) and not pa.types.is_large_string(docs.type):
        docs = pc.cast(docs, pa.string())
    keyed = pa.table({"q": run.column("query_id"), "s": run.column("score"), "d": docs})
    order = pc.sort_indices(keyed, [("q", "ascending"), ("s", "descending"),
                                    ("d", "ascending")])
    return run.take(order)


def _mapped(qrels: pa.Table, gains: tuple) -> pa.Table:
    """The judgments with each label mapped through ``gains`` ((label, gain) pairs; a
    label missing from them keeps its value)."""
    labels = np.asarray(qrels.column("label"), dtype=np.float64)
    out = labels.copy()
    for label, gain in gains:
        out[labels == label] = gain
    return qrels.set_column(qrels.column_names.index("label"), "label", pa.array(out))


def _pipeline_order(measures: list) -> list:
    """``measures`` in the order ir_measures' default pipeline (without fastndcg)
    first yields them, learnt from one probe query in this process: tables built
    from the results (PyTerrier's ``Experiment``) then have the same columns in
    the same order."""
    probe_qrels = {"1": {"d": 1}}  # a numeric topic, as gdeval.pl requires
    probe_run = {"1": {"d": 1.0}}
    seen: list = []
    try:
        pipeline = providers.FallbackProvider(_original_providers())
        for metric in pipeline.iter_calc(measures, probe_qrels, probe_run):
            if metric.measure not in seen:
                seen.append(metric.measure)
    except Exception:  # the order is cosmetic: keep the caller's
        return list(measures)
    return seen + [m for m in measures if m not in seen]


class FastndcgEvaluator(providers.Evaluator):
    """Scores runs against one set of judgments (read once)."""

    def __init__(self, measures: list, qrels: pa.Table, *, empty_queries: Iterable = ()):
        ids = qrels.column("query_id").unique().to_pylist() if qrels.num_rows else []
        judged_ids = set(ids)
        empty = [q for q in empty_queries if q not in judged_ids]
        measures = _pipeline_order(measures)
        # queries judged with an empty dict ({"q1": {}}): ir_measures' pytrec_eval and
        # judged providers take the dict's keys as the judged queries (each measure's
        # default, 0, for them), msmarco's and gdeval's the judgments' queries; in a call
        # with several, ir_measures fills in the defaults of every measure for the
        # queries of the first provider in its pipeline (pytrec_eval, judged, msmarco,
        # gdeval in this order)
        if empty and any(_answering(m) in ("pytrec_eval", "judged") for m in measures):
            ids = ids + empty
        self.query_kind = (_kind(qrels.column("query_id").type) if qrels.num_rows
                           else _kind(list(empty_queries)))
        self.query_example = (qrels.column("query_id")[0].as_py() if qrels.num_rows
                              else next(iter(empty_queries), None))
        self.judged = qrels
        self.judged_ids = pc.unique(qrels.column("query_id")) if qrels.num_rows else None
        super().__init__(measures, set(ids))
        # one evaluate call per (rules, gains table, NDCG gain): its options, its
        # judgments (mapped once through the gains table) and its measures as
        # (measure, fastndcg name, output column)
        groups: dict = {}
        for m in measures:
            rules = _RULES[_answering(m)]
            name, gains, judged_only = _reading(m)
            parsed = M.parse(name)
            key = (tuple(sorted(rules.items())), gains, parsed.gain, judged_only)
            if key not in groups:
                options = dict(rules, judged_only=judged_only)
                groups[key] = (options, qrels if gains is None else _mapped(qrels, gains), [])
            groups[key][2].append((m, name, parsed.columns[0]))
        self.groups = list(groups.values())

    def _iter_calc(self, run) -> Iterator[Metric]:
        table, _ = _table(run, _RUN, "run")
        if table.num_rows == 0:
            return  # every judged query gets each measure's default
        _same_kind("query", _kind(table.column("query_id").type),
                   table.column("query_id")[0].as_py(), self.query_kind, self.query_example)
        judged = self.judged
        if judged.num_rows == 0:
            return  # nothing judged: no value (ir_measures' aggregates are NaN then)
        _same_kind("document", _kind(table.column("doc_id").type),
                   table.column("doc_id")[0].as_py(), _kind(judged.column("doc_id").type),
                   judged.column("doc_id")[0].as_py())
        run_ids, judged_ids = table.column("query_id"), self.judged_ids
        if run_ids.type != judged_ids.type:  # (one kind: int32 and int64, or text types)
            run_ids, judged_ids = run_ids.cast(pa.large_string()), judged_ids.cast(
                pa.large_string())
        if not pc.any(pc.is_in(run_ids, value_set=judged_ids)).as_py():
            return  # no run query judged: each judged query gets each measure's default
        yield from self._values(table)

    def _values(self, table: pa.Table) -> Iterator[Metric]:
        results = {}
        for rules, qrels, group in self.groups:
            options = dict(rules)
            decimals = options.pop("decimals", None)
            source = table
            if options.pop("order", None) == "doc_ascending":
                source = _doc_ascending(table)
            if options.pop("judged_only"):
                # pytrec_eval's judged_docs_only_flag (trec_eval -J): the documents judged
                # with a label >= 0; a run query left with none is scored on an empty
                # ranking, and only the run's queries are reported
                source, options["complete"] = judged_docs_only(source, qrels), True
            # messages name what the user gave (the run, the qrels), not the tables
            # they were read into
            report = evaluate(io.Given(source, "run", "the run"),
                              qrels=io.Given(qrels, "qrels", "the qrels"),
                              measure=[name for _, name, _ in group], **options)
            per_query = report.per_query
            if options.get("complete"):
                present = pc.is_in(per_query.column("query_id"),
                                   value_set=pc.unique(table.column("query_id")).cast(
                                       per_query.column("query_id").type))
                per_query = per_query.filter(present)
            qids = per_query.column("query_id").to_pylist()
            for m, _, column in group:
                values = np.asarray(per_query.column(column), np.float64).tolist()
                if decimals is not None:  # as printed, then read back
                    values = [float(f"{v:.{decimals}f}") for v in values]
                results[m] = (qids, values)
        for m in self.measures:  # in the order ir_measures' own pipeline yields them
            qids, values = results[m]
            for qid, v in zip(qids, values):
                yield Metric(query_id=qid, measure=m, value=v)


provider = FastndcgProvider()
providers.register(provider)

_saved: list | None = None


def _original_providers() -> list:
    pipeline = ir_measures.DefaultPipeline.providers
    return [p for p in pipeline if p is not provider]


def use(on: bool = True) -> None:
    """Put fastndcg's provider first in ir_measures' default pipeline (``on``), or
    put the pipeline back as it was before (``use(False)``).

    >>> import ir_measures, fastndcg.ir_measures as fim
    >>> fim.use(); ir_measures.DefaultPipeline.providers[0].NAME
    'fastndcg'
    >>> fim.use(False); ir_measures.DefaultPipeline.providers[0].NAME != 'fastndcg'
    True
    """
    global _saved
    try:
        on = V.flag(on, "fastndcg.ir_measures.use()'s argument")
    except TypeError as err:
        raise TypeError(f"{err}; use() or use(True) puts fastndcg first in ir_measures' "
                        f"pipeline, use(False) puts the pipeline back") from None
    pipeline = ir_measures.DefaultPipeline.providers
    if on:
        if _saved is None:
            _saved = list(pipeline)
        pipeline[:] = [provider] + [p for p in pipeline if p is not provider]
    elif _saved is not None:
        pipeline[:] = _saved
        _saved = None


@contextlib.contextmanager
def used():
    """:func:`use` for the duration of a ``with`` block."""
    was = _saved is not None
    use(True)
    try:
        yield provider
    finally:
        if not was:
            use(False)


def main(argv: Iterable[str] | None = None) -> None:
    """ir_measures' command line with the fastndcg provider registered."""
    import sys

    from ir_measures.__main__ import main_cli

    if argv is not None:
        sys.argv = [sys.argv[0], *argv]
    main_cli()


if __name__ == "__main__":
    main()
