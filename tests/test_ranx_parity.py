"""``preset="ranx"`` against ranx itself (installed for real): ranx's metric names,
its semantics and its order of tied scores, per query, on every real run of
``tests/data/real`` and on tie-heavy versions of them, whatever shape the run is
given in (a ranx ``Run``, a dict of dicts, a DataFrame, a TREC run file)."""

from __future__ import annotations

import gzip
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from strategies import examples

ranx = pytest.importorskip("ranx")
from ranx.data_structures.common import sort_dict_by_key  # noqa: E402
from ranx.data_structures.generic import create_empty_results_dict  # noqa: E402

import fastndcg  # noqa: E402
from fastndcg.measures import parse  # noqa: E402

REAL = Path(__file__).parent / "data" / "real"
QRELS_OF = {"core18_": "qrels.core18.txt.gz", "cedr-wt_": "qrels.cedr-wt.txt.gz",
            "rag24": "qrels.rag24.txt.gz"}
RUNS = sorted(p.name for p in (REAL / "runs").glob("*.run.gz"))

# every metric name ranx and fastndcg share, with cutoffs, whole lists and levels
METRICS = ["ndcg", "ndcg@5", "ndcg@10", "ndcg@1000", "map", "map@100", "mrr", "mrr@10",
           "precision", "precision@5", "precision@20-l2", "recall", "recall@100",
           "recall@1000-l2", "hit_rate", "hit_rate@1", "hit_rate@10-l2", "r-precision",
           "r-precision-l2", "bpref", "bpref-l2", "f1", "f1@10", "f1@5-l2", "map@0", "hits",
           "hits@10", "hits@5-l2"]
# one run of each collection for the tie-heavy versions (every shape of each)
TIED_RUNS = ["cedr-wt_test.wt12.run.gz", "core18_desc_rm3.run.gz"]
BURGES = ["ndcg_burges", "ndcg_burges@10", "ndcg_burges@20"]  # another gain: another call


def _qrels_path(run: str) -> Path:
    return REAL / "qrels" / next(q for p, q in QRELS_OF.items() if run.startswith(p))


def _comparable(run, qrels):
    """``run`` holding exactly the judged queries, as ranx's make_comparable leaves it
    (an empty ranking for a judged query it lacks) but without its second sort of
    every query, which can reorder tied scores again: each query keeps the order
    the Run was built with."""
    for q in qrels.qrels:
        if q not in run.run:
            run.run[q] = create_empty_results_dict()
    for q in [q for q in run.run if q not in qrels.qrels]:
        del run.run[q]
    run.run = sort_dict_by_key(run.run)  # queries in the qrels' order, as ranx pairs them
    return run


def _bpref_one_by_one(qrels, run, metric) -> list:
    """ranx's bpref of each query by ranx's own function, called query by query.
    ranx.evaluate runs it in a Numba parallel loop, where a judged query without a
    relevant document raises ZeroDivisionError, which the loop swallows; the value of
    the query after it is then lost (left 0). Called one by one, that query raises
    and the others keep their values; the raising one is 0 in ranx's output."""
    from ranx.metrics.bpref import _bpref
    level = int(metric.partition("-l")[2] or 1)
    q_list, r_list = qrels.to_typed_list(), run.to_typed_list()
    out = []
    for i in range(len(q_list)):
        try:
            out.append(_bpref(q_list[i], r_list[i], level))
        except ZeroDivisionError:
            out.append(0.0)
    return out


def _ranx_per_query(qrels, run, metrics) -> dict:
    """{fastndcg's column: {query: value}} from ranx.evaluate (bpref: ranx's function
    called for each query, see :func:`_bpref_one_by_one`)."""
    got = ranx.evaluate(qrels, run, metrics, return_mean=False, save_results_in_run=False)
    got = got if isinstance(got, dict) else {metrics[0]: got}
    ids = list(run.run.keys())
    for m in metrics:
        if m.startswith("bpref"):
            got[m] = _bpref_one_by_one(qrels, run, m)
    return {parse([m], ranx=True).columns[0]: dict(zip(ids, map(float, got[m])))
            for m in metrics}


def _check(report, want: dict) -> None:
    """Every query and metric ranx gave, per query, to 1e-12 (NaN where ranx's is)."""
    rows = report.per_query.to_pylist()
    for column, values in want.items():
        got = {str(r["query_id"]): r[column] for r in rows}
        assert got.keys() == values.keys(), column
        for q, w in values.items():
            if math.isnan(w):
                assert math.isnan(got[q]), (column, q, got[q])
            else:
                assert got[q] == pytest.approx(w, rel=1e-12, abs=1e-12), (column, q, got[q], w)


@pytest.fixture(scope="module", params=RUNS)
def real(request):
    run_path = REAL / "runs" / request.param
    qrels_path = _qrels_path(request.param)
    return run_path, qrels_path


@pytest.mark.parametrize("metrics", [METRICS, BURGES], ids=["metrics", "burges"])
def test_run_files_equal_ranx(real, metrics):
    """The TREC files as ranx reads them (Run.from_file: each query sorted once, in
    file order) and as fastndcg reads them, with complete=True for the judged queries
    a run lacks (make_comparable's empty rankings)."""
    run_path, qrels_path = real
    qrels = ranx.Qrels.from_file(str(qrels_path))
    run = _comparable(ranx.Run.from_file(str(run_path)), qrels)
    want = _ranx_per_query(qrels, run, metrics)
    got = fastndcg.evaluate(str(run_path), qrels=str(qrels_path), preset="ranx",
                            measure=metrics, complete=True)
    _check(got, want)
    got = fastndcg.evaluate(run, qrels=qrels, preset="ranx", measure=metrics, complete=True)
    _check(got, want)


def _tied(run_path: Path, qrels) -> dict:
    """A dict of dicts of the judged queries of a real run with its scores coarsened to
    a few values (long runs of tied scores, which Numba's quicksort reorders), in
    file order."""
    out: dict = {}
    with gzip.open(run_path, "rt") as f:
        for line in f:
            q, _, d, rank, score, _ = line.split()
            if q in qrels.qrels:
                out.setdefault(q, {})[d] = float(int(rank) // 25) * -0.5
    return out


@pytest.mark.parametrize("run_name", TIED_RUNS)
@pytest.mark.parametrize("shape", ["Run", "dict", "DataFrame", "file"])
def test_tied_scores_follow_ranx_order(run_name, shape, tmp_path):
    """Scores tied in runs of 25 and more: the order ranx's Run gives them (an unstable
    quicksort of the input order) decides every measure, and each input shape is read
    in the order that makes the same Run."""
    pd = pytest.importorskip("pandas")
    run_path, qrels_path = REAL / "runs" / run_name, _qrels_path(run_name)
    qrels = ranx.Qrels.from_file(str(qrels_path))
    data = _tied(run_path, qrels)
    run = _comparable(ranx.Run(data), qrels)
    metrics = [m for m in METRICS if not m.startswith("ndcg")] + ["ndcg@10", "ndcg@100"]
    want = _ranx_per_query(qrels, run, metrics)
    # ties matter here: input order (the file's) scores differently somewhere
    stable = fastndcg.evaluate(data, qrels=qrels, preset="ranx", ties="stable",
                               measure=metrics, complete=True)
    source = {"Run": run, "dict": data}.get(shape)
    if shape == "DataFrame":
        source = pd.DataFrame([(q, d, s) for q, docs in data.items() for d, s in docs.items()],
                              columns=["query_id", "doc_id", "score"])
    elif shape == "file":
        source = tmp_path / "tied.run"
        source.write_text("".join(f"{q} Q0 {d} {i + 1} {s} tied\n" for q, docs in data.items()
                                  for i, (d, s) in enumerate(docs.items())))
        source = str(source)
    got = fastndcg.evaluate(source, qrels=qrels, preset="ranx", measure=metrics,
                            complete=True)
    _check(got, want)
    diffs = [c for c in want if not np.allclose(
        stable.per_query.column(c).to_numpy(), got.per_query.column(c).to_numpy(),
        equal_nan=True)]
    assert diffs, "no measure tells the stable order from ranx's: the test shows nothing"


SETTINGS = settings(max_examples=examples(0.4), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@SETTINGS
@given(st.lists(st.tuples(st.lists(st.integers(0, 3), min_size=1, max_size=60),
                          st.lists(st.integers(-1, 3), min_size=1, max_size=60)),
                min_size=1, max_size=5), st.data())
def test_random_tied_runs_equal_ranx(queries, data):
    """Small queries whose scores take at most four values (lists longer than the
    16 rows Numba sorts by insertion, and shorter), random judgments with negative
    and zero labels and unjudged documents; every metric per query."""
    run, judged = {}, {}
    for i, (scores, grades) in enumerate(queries):
        q = f"q{i}"
        run[q] = {f"d{j}": float(s) for j, s in enumerate(scores)}
        judged[q] = {f"d{j}": int(g) for j, g in enumerate(grades)
                     if data.draw(st.booleans())}
        if not judged[q]:
            judged[q] = {"d0": int(grades[0])}
    qrels = ranx.Qrels(judged)
    ranx_run = ranx.Run(run)
    metrics = METRICS[:-1]
    want = _ranx_per_query(qrels, ranx_run, metrics)
    for source in (ranx_run, run):
        got = fastndcg.evaluate(source, qrels=qrels, preset="ranx", measure=metrics)
        _check(got, want)


def test_names_and_errors():
    p = parse("ndcg@10 map@100 mrr@10 precision@5 recall@100 hit_rate@10 r-precision "
              "bpref f1@10", ranx=True)
    assert p.gain == "linear"
    assert p.columns == ["ndcg@10", "ap@100", "rr@10", "p@5", "r@100", "success@10", "rprec",
                         "bpref_ranx", "f1@10"]
    assert parse("ndcg_burges@10").gain == "exp2"
    # trec_eval's reading without ranx=True: its recall is at its cutoffs, its bpref its own
    assert parse("recall bpref").columns[-1] == "bpref"
    assert parse("recall", ranx=True).columns == ["r"]
    assert parse("precision@5-l2").columns == ["p@5(rel=2)"]
    assert parse("hits hits@10 hits@5-l2", ranx=True).columns == ["hits", "hits@10",
                                                                  "hits@5(rel=2)"]
    for bad, words in [("ndcg@10-l2", "relevance level"), ("dcg@10", "not a metric"),
                       ("bpref@10", "no cutoff"), ("precision@x", "not a whole number"),
                       ("recall@5-lx", "relevance level")]:
        with pytest.raises(ValueError, match=words):
            parse(bad, ranx=True)
    with pytest.raises(ValueError, match="different gains"):
        parse("ndcg@10 ndcg_burges@10", ranx=True)


def test_preset_ranx_refused_on_arrays():
    with pytest.raises(ValueError, match="evaluate"):
        fastndcg.ndcg([1.0, 0.5], [1, 0], preset="ranx")
    with pytest.raises(ValueError, match="ties='ranx'"):
        fastndcg.ndcg([1.0, 0.5], [1, 0], ties="ranx")


def test_ranx_objects_read_as_their_dicts(monkeypatch):
    """A Run and a Qrels are read by a compiled walk of ranx's typed dicts (here at any
    size): the same table as their to_dict() read as dicts of dicts, ids in 1- to
    4-byte UTF-8."""
    from fastndcg import foreign
    monkeypatch.setattr(foreign, "RANX_WALK_DOCS", 0)
    ids = ["d1", "é", "日本", "😀x", "", "a b", "0"]
    run = ranx.Run({"q1": {d: float(i % 3) for i, d in enumerate(ids)}, "ü": {"x": 1.5},
                    "2": {"😀x": -0.5, "d1": 0.0}})
    qrels = ranx.Qrels({"q1": {"é": 2, "0": 0}, "ü": {"x": 1}, "2": {"d1": 3}})
    for obj, roles in ((run, {"query_id": "query", "doc_id": "doc", "score": "score"}),
                       (qrels, {"query_id": "query", "doc_id": "doc", "label": "label"})):
        got = foreign.table_of(obj, roles, "source")[0]
        want = foreign.table_of(obj.to_dict(), roles, "source")[0]
        assert got.equals(want), (got.to_pylist(), want.to_pylist())


def test_command_line_preset_ranx():
    """``fastndcg evaluate RUN --qrels QRELS --preset ranx -m ...``: ranx's names read
    first, ranx's means (the judged queries the run has: ranx's own keys)."""
    import json

    from test_cli import run_cli
    run_path = REAL / "runs" / "core18_title_rm3.run.gz"
    qrels_path = _qrels_path(run_path.name)
    qrels = ranx.Qrels.from_file(str(qrels_path))
    run = _comparable(ranx.Run.from_file(str(run_path)), qrels)
    metrics = ["ndcg@10", "map@100", "recall", "bpref"]
    want = ranx.evaluate(qrels, run, metrics, save_results_in_run=False)
    out = run_cli(["evaluate", run_path, "--qrels", qrels_path, "--preset", "ranx",
                   "-m", " ".join(metrics), "--format", "json"])
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    for m, column in zip(metrics, parse(metrics, ranx=True).columns):
        assert got[column] == pytest.approx(want[m], rel=1e-12, abs=1e-12), m


def test_large_runs_order_only_their_tied_queries():
    """A chunk large enough for the check of tied scores (fastndcg sorts ranx's
    order only for the queries whose scores tie): tied queries of long runs of
    equal scores (which Numba's quicksort reorders), beside queries of distinct
    scores, some given in descending order, some in none; every query against
    ranx per query, and the same from the chunk cut small (ordered whole)."""
    rng = np.random.default_rng(5)
    n_q, n_d = 1320, 100  # 132,000 rows: over the 131,072 rows a chunk is checked from
    run, judged = {}, {}
    for i in range(n_q):
        q = f"q{i:04d}"
        if i % 3 == 0:
            s = rng.integers(0, 4, n_d) * 0.25
        elif i % 3 == 1:
            s = np.sort(rng.uniform(0, 1, n_d))[::-1]
        else:
            s = rng.uniform(0, 1, n_d)
        run[q] = {f"d{j}": float(v) for j, v in enumerate(s)}
        judged[q] = {f"d{j}": int(rng.integers(0, 4)) for j in rng.choice(n_d, 12, replace=False)}
    qrels, ranx_run = ranx.Qrels(judged), ranx.Run(run)
    metrics = ["ndcg@10", "ndcg", "map", "mrr", "precision@5", "r-precision"]
    want = _ranx_per_query(qrels, ranx_run, metrics)
    _check(fastndcg.evaluate(ranx_run, qrels=qrels, preset="ranx", measure=metrics), want)
    _check(fastndcg.evaluate(run, qrels=qrels, preset="ranx", measure=metrics), want)
    _check(fastndcg.evaluate(run, qrels=qrels, preset="ranx", measure=metrics,
                             batch_rows=1000), want)
    stable = fastndcg.evaluate(run, qrels=qrels, preset="ranx", ties="stable",
                               measure=metrics).per_query.to_pylist()
    assert any(r["ndcg@10"] != pytest.approx(want["ndcg@10"][r["query_id"]], abs=1e-12)
               for r in stable), "the stable order scores the same: the test shows nothing"
