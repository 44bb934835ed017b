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
from typing import Iterable, Iterator

import ir_measures
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from ir_measures import Metric, providers

from . import io
from . import measures as M
from .evaluate import evaluate
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
        return FastndcgEvaluator(measures, _table(qrels, _QRELS, "qrels"))


def _table(source, roles: dict, name: str) -> pa.Table:
    """Any run or qrels ir_measures accepts (a TREC file path, a DataFrame, a dict of
    dicts, namedtuples), read once as an Arrow table with fastndcg's column names."""
    if isinstance(source, str):
        reader = io.read_trec_qrels if name == "qrels" else io.read_trec_run
        return reader(source)
    src = io.open_source(source, roles, name=name)
    batches = list(src.batches())
    if not batches:
        return src.schema.empty_table() if src.schema is not None else pa.table({})
    return pa.Table.from_batches(batches)


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

    def __init__(self, measures: list, qrels: pa.Table):
        ids = qrels.column("query_id").unique().to_pylist() if qrels.num_rows else []
        measures = _pipeline_order(measures)
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
        table = _table(run, _RUN, "run")
        if table.num_rows == 0:
            return
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
            report = evaluate(source, qrels=qrels, measure=[name for _, name, _ in group],
                              **options)
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
