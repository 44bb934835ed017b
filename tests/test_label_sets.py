"""Several label sets in one call: ``qrels={name: qrels}`` and ``--qrels NAME=PATH``.

Each set must give exactly, to the last bit, what ``evaluate`` gives with that set
alone: the means, the counts and every per-query value (the per-query table is
long, a ``labels`` column first). Checked on the real runs and qrels of
``tests/data/real`` (with label sets made from them: grades changed, queries and
documents dropped, documents judged that the first set does not judge) and, with
hypothesis, on random tie-heavy runs. The run is read once: a one-shot
RecordBatchReader serves every set.
"""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import fastndcg
from fastndcg import evaluate_runs
from inprocess import run as run_cli
from strategies import examples

REAL = Path(__file__).parent / "data" / "real"
RUNS = REAL / "runs"
QRELS = REAL / "qrels"
CORE_QRELS = QRELS / "qrels.core18.txt.gz"
CORE = [RUNS / "core18_title_rm3.run.gz", RUNS / "core18_desc_rm3.run.gz"]
MEASURES = ["ndcg_cut.5,10", "map", "P.5,10", "recip_rank", "Rprec", "bpref"]


def _qrels_table(path: Path) -> pa.Table:
    rows = [line.split() for line in gzip.open(path, "rt") if line.strip()]
    return pa.table({"query_id": [r[0] for r in rows], "doc_id": [r[2] for r in rows],
                     "label": np.array([int(r[3]) for r in rows], np.int64)})


def _other_judge(table: pa.Table, seed: int) -> pa.Table:
    """Another judge of the same pool: grades moved by -1..+1, a tenth of the
    judgments and a few whole queries left out."""
    rng = np.random.default_rng(seed)
    n = table.num_rows
    labels = np.clip(table["label"].to_numpy() + rng.integers(-1, 2, n), 0, 3)
    queries = pc.unique(table["query_id"]).to_pylist()
    dropped = set(rng.choice(queries, size=max(1, len(queries) // 10), replace=False).tolist())
    keep = (rng.random(n) > 0.1) & ~np.isin(table["query_id"].to_numpy(zero_copy_only=False),
                                            list(dropped))
    return pa.table({"query_id": table["query_id"], "doc_id": table["doc_id"],
                     "label": labels}).filter(pa.array(keep))


def _write_trec(table: pa.Table, path: Path) -> Path:
    with open(path, "w") as f:
        for q, d, g in zip(*(table[c].to_pylist() for c in ("query_id", "doc_id", "label"))):
            f.write(f"{q} 0 {d} {g}\n")
    return path


def _set_rows(per_query: pa.Table, name: str) -> pa.Table:
    return per_query.filter(pc.equal(per_query["labels"], name)).drop_columns(["labels"])


def _same_report(got: fastndcg.Report, want: fastndcg.Report) -> None:
    """Equal to the last bit: means (NaN where NaN), counts, per-query values."""
    assert list(got.mean) == list(want.mean)
    for k, v in want.mean.items():
        w = got.mean[k]
        assert (math.isnan(v) and math.isnan(w)) or w == v, k
    for attr in ("n_queries", "n_rows", "n_zero_idcg", "n_unjudged", "n_missing",
                 "n_scattered", "qrels_mode", "complete"):
        assert getattr(got, attr) == getattr(want, attr), attr


def _same_rows(got: pa.Table, want: pa.Table) -> None:
    assert got.schema.remove_metadata() == want.schema.remove_metadata()
    assert got.num_rows == want.num_rows
    for name in want.column_names:
        a, b = got[name].to_numpy(zero_copy_only=False), want[name].to_numpy(zero_copy_only=False)
        if a.dtype.kind == "f":
            assert np.array_equal(a.view(np.int64), b.view(np.int64)), name  # bits
        else:
            assert np.array_equal(a, b), name


@pytest.fixture(scope="module")
def core_sets(tmp_path_factory) -> dict:
    """Three label sets of Core 2018: the qrels file, another judge as a TREC file,
    a third as an Arrow table (integer document ids read as strings)."""
    d = tmp_path_factory.mktemp("sets")
    table = _qrels_table(CORE_QRELS)
    return {"human": str(CORE_QRELS),
            "llm": str(_write_trec(_other_judge(table, 1), d / "llm.qrels")),
            "llm2": _other_judge(table, 2)}


@pytest.mark.parametrize("options", [
    dict(preset="trec_eval", measure=MEASURES),
    dict(preset="trec_eval", measure=MEASURES, complete=True),
    dict(k=[1, 3, 10, None], ties="average", gain="linear"),
    dict(measure=["nDCG@10", "AP(rel=2)", "P@5", "Judged@10"], ties="optimistic"),
    dict(preset="ranx", measure=["ndcg@10", "map@100", "mrr"]),
    dict(preset="pytrec_eval", measure=MEASURES, explain=True),
], ids=["trec_eval", "complete", "average", "optimistic", "ranx", "pytrec_eval-explain"])
def test_real_runs_each_set_equals_its_own_call(core_sets, options):
    """On both Core 2018 runs, under each tool's semantics: every set's report and
    per-query rows equal the call with that set alone, bit for bit."""
    for run in CORE:
        sets = fastndcg.evaluate(str(run), qrels=core_sets, **options)
        assert isinstance(sets, fastndcg.LabelSets)
        assert list(sets.reports) == list(core_sets)
        assert sets.per_query.column_names[0] == "labels"
        assert pc.unique(sets.per_query["labels"]).to_pylist() == list(core_sets)
        means = []
        for name, qrels in core_sets.items():
            alone = fastndcg.evaluate(str(run), qrels=qrels, **options)
            _same_report(sets[name], alone)
            _same_rows(_set_rows(sets.per_query, name), alone.per_query)
            means.append(alone.mean)
        assert means[0] != means[1]  # the sets differ: one cannot stand in for another


def test_many_runs_by_label_sets(core_sets, tmp_path):
    """Several runs x several sets: one row a run and set in the tables and the
    per-query file (runid, then labels), each equal to the run and set alone."""
    out = tmp_path / "pq.parquet"
    runs = evaluate_runs([str(r) for r in CORE], runid="file", qrels=core_sets,
                         measure=MEASURES, preset="trec_eval", per_query=str(out))
    per_query = pq.read_table(out)
    assert per_query.column_names[:2] == ["runid", "labels"]
    dicts = runs.to_dicts()
    assert [(d["runid"], d["labels"]) for d in dicts] == [
        (r.name, s) for r in CORE for s in core_sets]
    for d in dicts:
        run = RUNS / d["runid"]
        alone = fastndcg.evaluate(str(run), qrels=core_sets[d["labels"]], measure=MEASURES,
                                  preset="trec_eval")
        _same_report(runs.reports[d["runid"]][d["labels"]], alone)
        assert {k: d[k] for k in alone.mean} == alone.mean
        rows = per_query.filter(pc.and_(pc.equal(per_query["runid"], d["runid"]),
                                        pc.equal(per_query["labels"], d["labels"])))
        _same_rows(rows.drop_columns(["runid", "labels"]), alone.per_query)
    table = runs.format_table().splitlines()
    assert table[0].split()[:3] == ["runid", "labels", "ndcg@5"]
    assert len(table) == 1 + len(CORE) * len(core_sets) + 2


def test_a_one_shot_reader_serves_every_set(core_sets):
    """The run is read once: a RecordBatchReader, which cannot be read twice, gives
    every set its numbers (and rows split across batches, queries scattered in a
    Table, are regrouped once for all sets)."""
    run = fastndcg.io.read_trec_run(str(CORE[0]))
    reader = pa.RecordBatchReader.from_batches(run.schema, run.to_batches(max_chunksize=777))
    sets = fastndcg.evaluate(reader, qrels=core_sets, measure=MEASURES, preset="trec_eval")
    shuffled = run.take(pa.array(np.random.default_rng(0).permutation(run.num_rows)))
    scattered = fastndcg.evaluate(shuffled, qrels=core_sets, measure=MEASURES,
                                  preset="trec_eval")
    for name, qrels in core_sets.items():
        alone = fastndcg.evaluate(run, qrels=qrels, measure=MEASURES, preset="trec_eval")
        _same_report(sets[name], alone)
        alone_s = fastndcg.evaluate(shuffled, qrels=qrels, measure=MEASURES,
                                    preset="trec_eval")
        assert scattered[name].n_scattered == alone_s.n_scattered > 0
        _same_report(scattered[name], alone_s)
        _same_rows(_set_rows(scattered.per_query, name), alone_s.per_query)


def _ids(draw, n, prefix):
    return [f"{prefix}{i}" for i in draw(st.lists(st.integers(0, 6), min_size=n, max_size=n))]


@st.composite
def run_and_sets(draw):
    """A tie-heavy run (string ids, each document once a query) and 1 to 6 label sets
    judging some of its documents and some it never retrieved."""
    n_q = draw(st.integers(1, 5))
    q, d, s = [], [], []
    for i in range(n_q):
        docs = sorted(set(_ids(draw, draw(st.integers(1, 8)), "d")))
        q += [f"q{i}"] * len(docs)
        d += docs
        s += draw(st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0]), min_size=len(docs),
                           max_size=len(docs)))
    run = pa.table({"query_id": q, "doc_id": d, "score": s})
    sets = {}
    for j in range(draw(st.integers(1, 6))):
        pairs = sorted({(f"q{draw(st.integers(0, n_q))}", f"d{draw(st.integers(0, 8))}")
                        for _ in range(draw(st.integers(1, 12)))})
        labels = draw(st.lists(st.integers(0, 3), min_size=len(pairs), max_size=len(pairs)))
        sets[f"set{j}"] = pa.table({"query_id": [p[0] for p in pairs],
                                    "doc_id": [p[1] for p in pairs], "label": labels})
    return run, sets


@settings(max_examples=examples(), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(run_and_sets(), st.sampled_from([
    dict(ties="trec", gain="linear", measure=["ndcg_cut.3", "map", "P.2", "bpref"]),
    dict(ties="average", k=[1, 2, None], zero_idcg="nan"),
    dict(ties="stable", measure=["nDCG@3", "RR", "Judged@2"], complete=True),
    # graded measures beside binary ones at two thresholds and the judged bit: the
    # binary ones of up to 2 sets share a pass (3 flag bits a set), the others alone
    dict(ties="trec", gain="linear", measure=["rbp.p=0.8", "map", "P.2", "bpref",
                                              "ndcg_rel", "infAP", "AP(rel=2)"]),
]))
def test_random_runs_each_set_equals_its_own_call(case, options):
    run, sets = case
    try:
        got = fastndcg.evaluate(run, qrels=sets, **options)
    except ValueError as err:  # a set that judges none of the run's queries
        assert "has a judgment in the qrels of label set" in str(err)
        with pytest.raises(ValueError, match="has a judgment in the qrels"):
            for qrels in sets.values():
                fastndcg.evaluate(run, qrels=qrels, **options)
        return
    for name, qrels in sets.items():
        alone = fastndcg.evaluate(run, qrels=qrels, **options)
        _same_report(got[name], alone)
        _same_rows(_set_rows(got.per_query, name), alone.per_query)


# ----------------------------------------------------------------------- bad input

RUN = pa.table({"query_id": ["1", "1"], "doc_id": ["a", "b"], "score": [1.0, 0.5]})
JUDGED = pa.table({"query_id": ["1"], "doc_id": ["a"], "label": [1]})


@pytest.mark.parametrize("qrels, error, text", [
    ({}, ValueError, r"^qrels: the dict is empty .*\{name: qrels, \.\.\.\}"),
    ({1: JUDGED}, TypeError, r"^qrels: a label set is named by a non-empty string .*got 1 "
                             r"\(int\)"),
    ({"": JUDGED}, ValueError, r"^qrels: a label set is named by a non-empty string"),
    ({"human": JUDGED, "  ": JUDGED}, ValueError, r"a label set is named by a non-empty"),
    ({"human": None}, TypeError, r"^qrels\['human'\] must be judgments .*got None"),
    ({"human": 3}, TypeError, r"^qrels\['human'\] must be judgments"),
    ({"human": {"llm": {"1": {"a": 1}}}}, TypeError,
     r"^qrels\['human'\] .*label sets do not nest"),
    ({"human": JUDGED, "llm": [1, 2]}, TypeError, r"^qrels\['llm'\]: cannot read a list as "
                                                  r"judgments"),
    ({"human": JUDGED, "llm": "/no/such/qrels.txt"}, FileNotFoundError,
     r"/no/such/qrels\.txt"),
])
def test_bad_label_sets(qrels, error, text):
    with pytest.raises(error, match=text):
        fastndcg.evaluate(RUN, qrels=qrels, k=[1])


def test_a_set_judging_nothing_is_named():
    other = pa.table({"query_id": ["9"], "doc_id": ["a"], "label": [1]})
    with pytest.raises(ValueError, match=r"has a judgment in the qrels of label set 'llm'"):
        fastndcg.evaluate(RUN, qrels={"human": JUDGED, "llm": other}, k=[1])


def test_a_column_named_labels_is_refused():
    run = RUN.rename_columns(["labels", "doc_id", "score"])
    with pytest.raises(ValueError, match=r"column 'labels', which is also the query column"):
        fastndcg.evaluate(run, qrels={"human": JUDGED.rename_columns(["labels", "doc_id",
                                                                       "label"])},
                          query="labels", k=[1])
    # one source keeps working with such a column
    one = fastndcg.evaluate(run, qrels=JUDGED.rename_columns(["labels", "doc_id", "label"]),
                            query="labels", k=[1])
    assert one.mean == {"ndcg@1": 1.0}


def test_a_dict_of_dicts_is_still_one_source():
    """{query: {doc: grade}} stays judgments; label sets may be such dicts too."""
    one = fastndcg.evaluate(RUN, qrels={"1": {"a": 1}}, k=[1])
    assert isinstance(one, fastndcg.Report) and one.mean == {"ndcg@1": 1.0}
    sets = fastndcg.evaluate(RUN, qrels={"h": {"1": {"a": 1}}, "l": {"1": {"b": 1}}}, k=[1])
    assert {n: r.mean["ndcg@1"] for n, r in sets.reports.items()} == {"h": 1.0, "l": 0.0}


# ----------------------------------------------------------------------- command line

def test_command_line_sets_equal_separate_calls(core_sets, tmp_path):
    """--qrels NAME=PATH repeated: a JSON line a set equal to the set's own command,
    and a table row a set; a plain --qrels PATH prints what it always did."""
    files = {k: v for k, v in core_sets.items() if isinstance(v, str)}
    args = [a for n, p in files.items() for a in ("--qrels", f"{n}={p}")]
    m_args = [a for m in MEASURES for a in ("-m", m)]
    proc = run_cli(["evaluate", CORE[0], *args, "--preset", "trec_eval", *m_args,
                    "--format", "json"])
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [o["labels"] for o in lines] == list(files)
    for got, path in zip(lines, files.values()):
        alone = run_cli(["evaluate", CORE[0], "--qrels", path, "--preset", "trec_eval",
                         *m_args, "--format", "json"])
        want = json.loads(alone.stdout)
        assert "labels" not in want
        got.pop("labels")
        got.pop("seconds"), want.pop("seconds")
        assert got == want
    table = run_cli(["evaluate", CORE[0], *args, "-m", "ndcg_cut.10"])
    assert table.returncode == 0, table.stderr
    rows = table.stdout.splitlines()
    assert rows[0].endswith("(qrels " + ", ".join(f"{n}={p}" for n, p in files.items()) + ")")
    assert rows[1].split()[:2] == ["labels", "ndcg@10"]
    assert [r.split()[0] for r in rows[2:4]] == list(files)


@pytest.mark.parametrize("extra, text", [
    (["--qrels", "human=B"], r"--qrels names the label set 'human' twice"),
    (["--qrels", "B"], r"--qrels '.*' has no name: with several --qrels, each names its "
                       r"label set"),
    (["--qrels", "=B"], r"--qrels '=.*': the name before '=' is empty"),
    (["--qrels", "llm=/no/such/file"], r"--qrels 'llm=/no/such/file' does not exist"),
])
def test_command_line_bad_label_sets(extra, text):
    import re
    extra = [str(CORE_QRELS) if a == "B" else a.replace("=B", f"={CORE_QRELS}")
             for a in extra]
    proc = run_cli(["evaluate", CORE[0], "--qrels", f"human={CORE_QRELS}", *extra,
                    "-m", "ndcg_cut.10"])
    assert proc.returncode == 2, proc.stderr
    assert re.search(text, proc.stderr), proc.stderr
    assert proc.stdout == ""


# ----------------------------------------------------------------------- Dask

def _same_sets(got: fastndcg.LabelSets, want: fastndcg.LabelSets) -> None:
    """Dask against one machine: the counts equal, the means as ``test_dask`` holds
    a Dask mean to the one-machine mean (partial sums merged in another order:
    equal to 1e-12; the per-query values are compared bit for bit apart)."""
    assert isinstance(got, fastndcg.LabelSets)
    assert list(got.reports) == list(want.reports)
    for name, w in want.reports.items():
        g = got[name]
        assert list(g.mean) == list(w.mean)
        for k, v in w.mean.items():
            assert g.mean[k] == pytest.approx(v, rel=1e-12, nan_ok=True), (name, k)
        for attr in ("n_queries", "n_rows", "n_zero_idcg", "n_unjudged", "n_missing",
                     "n_scattered", "qrels_mode", "complete"):
            assert getattr(g, attr) == getattr(w, attr), (name, attr)


@pytest.mark.parametrize("options", [
    dict(preset="trec_eval", measure=MEASURES),
    dict(preset="trec_eval", measure=MEASURES, complete=True),
    dict(preset="pytrec_eval", measure=MEASURES, explain=True),
], ids=["trec_eval", "complete", "pytrec_eval-explain"])
def test_dask_sets_equal_one_machine(core_sets, dask_client, options):
    """The Core 2018 run cut into partitions that queries straddle: every set's
    report and the long per-query table equal ``fastndcg.evaluate``'s, bit for bit."""
    fdask = pytest.importorskip("fastndcg.dask")
    want = fastndcg.evaluate(str(CORE[0]), qrels=core_sets, **options)
    got = fdask.evaluate(str(CORE[0]), qrels=core_sets, client=dask_client,
                         partition_rows=4_999, **options)
    _same_sets(got, want)
    _same_rows(got.per_query, want.per_query)
    assert got["human"].mean != got["llm"].mean
    for name, qrels in core_sets.items():  # each set as Dask scores it alone: to the bit
        alone = fdask.evaluate(str(CORE[0]), qrels=qrels, client=dask_client,
                               partition_rows=4_999, **options)
        _same_report(got[name], alone)


@pytest.mark.parametrize("per_query", ["memory", "directory", "none"])
def test_dask_sets_regroup_scattered_queries(core_sets, dask_client, tmp_path, per_query):
    """Queries scattered over the partitions are found once and regrouped under
    every set, whether the per-query parts are rewritten (in memory, on disk) or
    only the means are kept."""
    fdask = pytest.importorskip("fastndcg.dask")
    run = fastndcg.io.read_trec_run(str(CORE[0]))
    shuffled = run.take(pa.array(np.random.default_rng(3).permutation(run.num_rows)))
    target = {"memory": None, "directory": str(tmp_path / "out"), "none": False}[per_query]
    want = fastndcg.evaluate(shuffled, qrels=core_sets, measure=MEASURES, preset="trec_eval")
    got = fdask.evaluate(shuffled, qrels=core_sets, client=dask_client, per_query=target,
                         partition_rows=9_999, measure=MEASURES, preset="trec_eval")
    _same_sets(got, want)
    assert got["llm"].n_scattered > 0
    if per_query == "none":
        assert got.per_query is None
        return
    rows = got.per_query if per_query == "memory" else pq.read_table(got.per_query)
    if per_query == "directory":
        assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
            f"part-{i:06d}.parquet" for i in range(len(core_sets))]
    _same_rows(rows, want.per_query)


def test_dask_names_the_set_that_judges_nothing(dask_client):
    fdask = pytest.importorskip("fastndcg.dask")
    other = pa.table({"query_id": ["9"], "doc_id": ["a"], "label": [1]})
    with pytest.raises(ValueError, match=r"the qrels of label set 'llm'"):
        fdask.evaluate(RUN, qrels={"human": JUDGED, "llm": other}, k=[1], client=dask_client)


def test_command_line_sets_on_dask_workers(core_sets, tmp_path):
    """``--workers`` with ``--qrels NAME=PATH``: the same JSON lines and per-query
    parts as on this machine."""
    pytest.importorskip("distributed")
    files = {k: v for k, v in core_sets.items() if isinstance(v, str)}
    args = [a for n, p in files.items() for a in ("--qrels", f"{n}={p}")]
    m_args = [a for m in MEASURES for a in ("-m", m)]
    here = run_cli(["evaluate", CORE[0], *args, "--preset", "trec_eval", *m_args,
                    "--format", "json", "--per-query", str(tmp_path / "here")])
    there = run_cli(["evaluate", CORE[0], *args, "--preset", "trec_eval", *m_args,
                     "--format", "json", "--workers", "2", "--per-query", str(tmp_path / "dask")])
    assert here.returncode == 0 and there.returncode == 0, here.stderr + there.stderr
    lines = [[json.loads(line) for line in p.stdout.splitlines()] for p in (here, there)]
    for a, b in zip(*lines):
        a.pop("seconds"), b.pop("seconds")
    assert [o["labels"] for o in lines[1]] == list(files)
    for a, b in zip(*lines):  # the means as _same_sets holds them, the rest equal
        assert list(a) == list(b)
        assert {k: v for k, v in b.items() if not isinstance(v, float)} == {
            k: v for k, v in a.items() if not isinstance(v, float)}
        assert {k: v for k, v in b.items() if isinstance(v, float)} == pytest.approx(
            {k: v for k, v in a.items() if isinstance(v, float)}, rel=1e-12)
    _same_rows(pq.read_table(tmp_path / "dask"), pq.read_table(tmp_path / "here"))
