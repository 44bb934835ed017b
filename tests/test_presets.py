"""``preset=``: each named tool's NDCG, checked against the tool itself.

1. ``trec_eval``: every output file of the real trec_eval program in
   tests/data/real/trec_eval_out/ (``-q`` and ``-q -c``; see tests/data/real/README.md
   and NOTICE.md) is reproduced line for line at the 4 printed decimals: ``ndcg``,
   ``ndcg_cut_1,3,5,10,20,100,1000`` per query and ``all``, and ``num_q``.
2. ``pytrec_eval``: on runs generated over every real qrels file, with scores that
   differ only beyond float32 precision, fastndcg agrees with pytrec_eval per query
   to 1e-12, and ``trec_eval`` (scores compared as doubles) disagrees somewhere.
3. ``sklearn``: per row and as a mean, scikit-learn's ndcg_score / dcg_score on
   tie-heavy dense matrices.
4. ``lightgbm``: LightGBM's own ndcg@k of a trained model and of tie-heavy fixed
   scores (a booster with no trees evaluates its datasets' init_score).
5. ``xgboost`` / ``xgboost-``: XGBoost's own ``ndcg@k`` / ``ndcg@k-`` of fixed
   scores (``base_margin`` and 0 boosting rounds).
6. How presets combine with explicit options, their errors, and the CLI.

No expected number is hard-coded: every reference value comes from a tool's output.
"""

from __future__ import annotations

import gzip
import json
import random
from collections import defaultdict
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

import fastndcg
from trec_output import parse_trec_eval
import fastndcg.cli
import fastndcg.presets
from fastndcg.presets import PRESETS

DATA = Path(__file__).parent / "data"
REAL = DATA / "real"
TOL = 1e-12

# run -> qrels, as in the table of tests/data/real/README.md
RUN_QRELS = {
    "core18_title_rm3": "core18", "core18_desc_rm3": "core18",
    "cedr-wt_valid.wt11": "cedr-wt", "cedr-wt_test.wt12": "cedr-wt",
    "cedr-wt_test.wt13": "cedr-wt", "cedr-wt_test.wt14": "cedr-wt",
    "rag24": "rag24",
}
# the .q.txt files that trec_eval 9.0.8 wrote (the others: 10.0-rc3)
TREC_EVAL_9 = {f"{name}.q.txt" for name in RUN_QRELS if name.startswith("cedr-")}
TREC_CUTOFFS = [1, 3, 5, 10, 20, 100, 1000]
QRELS_NAMES = ["cedr-wt", "core18", "covid-round5", "dl19-passage", "dl20-passage",
               "msmarco-passage.dev-subset", "rag24", "web.51-100"]


def run_path(name: str) -> Path:
    return REAL / "runs" / f"{name}.run.gz"


def qrels_path(name: str) -> Path:
    return REAL / "qrels" / f"qrels.{name}.txt.gz"


def test_real_data_present():
    outputs = sorted(p.name for p in (REAL / "trec_eval_out").iterdir()
                     if p.name.endswith((".q.txt", ".qc.txt")))
    assert outputs == sorted(f"{n}.{s}.txt" for n in RUN_QRELS for s in ("q", "qc"))
    # trec_eval's other measures on the same runs (tests/test_trec_eval_measures.py)
    assert all((REAL / "trec_eval_out" / f"{n}.measures.qc.txt.gz").exists() for n in RUN_QRELS)
    assert sorted(p.name for p in (REAL / "runs").iterdir()) == sorted(
        run_path(n).name for n in RUN_QRELS)
    assert sorted(p.name for p in (REAL / "qrels").iterdir()) == sorted(
        qrels_path(n).name for n in QRELS_NAMES)


# --------------------------------------------------------------------------- 1. trec_eval

_parse_trec_eval = parse_trec_eval


def _column(measure: str) -> str:
    return "ndcg" if measure == "ndcg" else f"ndcg@{measure[len('ndcg_cut_'):]}"


def _printed(value: float) -> str:
    return f"{round(value, 4):.4f}"  # trec_eval prints "%.4f"


def _trec_eval_reports(name: str, complete: bool, **options):
    run, qrels = run_path(name), qrels_path(RUN_QRELS[name])
    cut = fastndcg.evaluate(run, qrels=qrels, k=TREC_CUTOFFS, complete=complete, **options)
    whole = fastndcg.evaluate(run, qrels=qrels, k=None, complete=complete, **options)
    return cut, whole


def _printed_by_fastndcg(reports) -> dict[str, dict[str, str]]:
    """The same ``{measure: {qid or "all": value}}`` as trec_eval would print it."""
    out: dict[str, dict[str, str]] = {}
    for report in reports:
        rows = report.per_query.to_pylist()
        ids = [r["query_id"] for r in rows]
        assert len(set(ids)) == len(ids), "a query scored twice"
        for column in report.per_query.column_names[2:]:
            measure = "ndcg" if column == "ndcg" else f"ndcg_cut_{column[len('ndcg@'):]}"
            values = {str(r["query_id"]): _printed(r[column]) for r in rows}
            values["all"] = _printed(report.mean[column])
            out[measure] = values
        out.setdefault("num_q", {})["all"] = str(report.n_queries)
    return out


def _compare_printed(expected: dict, got: dict, where: str) -> int:
    assert set(got) == set(expected), f"{where}: measures {sorted(got)} vs {sorted(expected)}"
    n = 0
    for measure, values in expected.items():
        assert set(got[measure]) == set(values), \
            f"{where} {measure}: queries {sorted(set(got[measure]) ^ set(values))} on one side"
        for qid, printed in values.items():
            assert got[measure][qid] == printed, \
                f"{where} {measure} {qid}: fastndcg {got[measure][qid]} vs trec_eval {printed}"
            n += 1
    return n


def _query_ids(path: Path) -> set[str]:
    with gzip.open(path, "rt") as f:
        return {line.split()[0] for line in f if line.strip()}


TREC_EVAL_FILES = sorted(f"{n}.{s}.txt" for n in RUN_QRELS for s in ("q", "qc"))


@pytest.mark.parametrize("output", TREC_EVAL_FILES)
def test_trec_eval_preset_reproduces_real_trec_eval(output):
    """Every line of trec_eval's output, at its 4 printed decimals."""
    path = REAL / "trec_eval_out" / output
    name, suffix = output[:-len(".txt")].rsplit(".", 1)
    complete = suffix == "qc"
    expected = _parse_trec_eval(path)
    assert set(expected) == {"num_q", "ndcg"} | {f"ndcg_cut_{k}" for k in TREC_CUTOFFS}
    reports = _trec_eval_reports(name, complete, preset="trec_eval")
    n = _compare_printed(expected, _printed_by_fastndcg(reports), output)
    assert n == sum(1 for line in path.read_text().splitlines() if line.strip())

    # -c adds the judged queries missing from the run, with no documents
    judged, retrieved = _query_ids(qrels_path(RUN_QRELS[name])), _query_ids(run_path(name))
    for report in reports:
        assert report.n_missing == len(judged - retrieved)
        assert report.n_unjudged == len(retrieved - judged)
        assert report.n_queries == (len(judged) if complete else len(judged & retrieved))


@pytest.mark.parametrize("output", sorted(TREC_EVAL_9))
def test_pytrec_eval_preset_reproduces_trec_eval_9(output):
    """trec_eval 9.0.8 compares scores as float32, as pytrec_eval does."""
    name = output[:-len(".q.txt")]
    reports = _trec_eval_reports(name, False, preset="pytrec_eval")
    _compare_printed(_parse_trec_eval(REAL / "trec_eval_out" / output),
                     _printed_by_fastndcg(reports), output)


@pytest.mark.parametrize("name,override", [
    ("rag24", dict(ties="stable")),
    ("cedr-wt_valid.wt11", dict(ties="stable")),
    ("cedr-wt_valid.wt11", dict(ties="average")),
    ("cedr-wt_valid.wt11", dict(negative_labels="keep")),
    ("cedr-wt_valid.wt11", dict(gain="exp2")),
], ids=lambda v: v if isinstance(v, str) else ",".join(f"{n}={x}" for n, x in v.items()))
def test_real_outputs_depend_on_the_preset_rules(name, override):
    """The files are not reproduced vacuously: they contain ties that trec_eval breaks
    by document id, and negative grades that it counts as 0; changing one rule of the
    preset changes at least one printed value."""
    expected = _parse_trec_eval(REAL / "trec_eval_out" / f"{name}.qc.txt")
    got = _printed_by_fastndcg(_trec_eval_reports(name, True, preset="trec_eval", **override))
    differ = sum(got[m][q] != v for m, values in expected.items() for q, v in values.items())
    assert differ > 0


# --------------------------------------------------------------------------- 2. pytrec_eval

# float32-representable bases; base * (1 + j * 1e-10) with j < 200 rounds back to the
# base in float32 (checked below) but stays distinct in float64
BASES = (0.5, 1.0, 2.5, 4.0, -0.75, 12.25, 100.5)
N_QUERIES, MAX_JUDGED, N_UNJUDGED = 25, 40, 10
PYTREC_CUTOFFS = [5, 10, 100]


def _read_qrels(path: Path) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = defaultdict(dict)
    with gzip.open(path, "rt") as f:
        for line in f:
            fields = line.split()
            if fields:
                qid, _, doc, rel = fields
                assert doc not in qrels[qid], f"{path.name}: {qid} {doc} judged twice"
                qrels[qid][doc] = int(rel)
    return dict(qrels)


def _near_tie_run(qrels: dict, rng: random.Random) -> tuple[dict, dict]:
    """A run over a sample of the judged queries: a sample of each one's judged
    documents plus unjudged ones (judged for other queries), scored in a few groups
    whose scores differ only beyond float32 precision (some exactly tied too).
    Returns (run, groups) with groups[q][doc] = the base of the doc's group."""
    qids = sorted(qrels)
    pool = sorted({d for docs in qrels.values() for d in docs})
    run, groups = {}, {}
    for q in rng.sample(qids, min(N_QUERIES, len(qids))):
        judged = sorted(qrels[q])
        docs = rng.sample(judged, min(MAX_JUDGED, len(judged)))
        extra: list[str] = []
        while len(extra) < N_UNJUDGED:
            d = rng.choice(pool)
            if d not in qrels[q] and d not in extra:
                extra.append(d)
        docs += extra
        rng.shuffle(docs)
        bases = rng.sample(BASES, 3)
        groups[q] = {d: rng.choice(bases) for d in docs}
        run[q] = {d: b * (1 + rng.randrange(200) * 1e-10) for d, b in groups[q].items()}
    return run, groups


def _write_run(path: Path, run: dict) -> None:
    with open(path, "w") as f:
        for q, docs in run.items():
            for rank, (d, s) in enumerate(docs.items(), 1):
                f.write(f"{q} Q0 {d} {rank} {s!r} generated\n")  # repr round-trips


def _per_query_merged(run: Path, qrels: Path, **options) -> dict[str, dict]:
    cut = fastndcg.evaluate(run, qrels=qrels, k=PYTREC_CUTOFFS, **options)
    whole = fastndcg.evaluate(run, qrels=qrels, k=None, **options)
    merged = {r["query_id"]: r for r in cut.per_query.to_pylist()}
    for r in whole.per_query.to_pylist():
        merged[r["query_id"]]["ndcg"] = r["ndcg"]
    assert len(merged) == cut.n_queries == whole.n_queries
    return merged, cut


@pytest.mark.parametrize("qrels_name", QRELS_NAMES)
def test_pytrec_eval_preset_matches_pytrec_eval(tmp_path, qrels_name):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels_file = qrels_path(qrels_name)
    qrels = _read_qrels(qrels_file)
    run, groups = _near_tie_run(qrels, random.Random(qrels_name))
    run["fastndcg-unjudged-query"] = {"x": 1.0, "y": 1.0}  # left out by both

    # the data do what they are meant to: groups tie in float32, not in float64
    n_split = 0
    for q, docs in groups.items():
        for base in set(docs.values()):
            scores = [run[q][d] for d, b in docs.items() if b == base]
            assert set(np.float32(scores).tolist()) == {base}
            n_split += len(set(scores)) > 1
    assert n_split > 0

    path = tmp_path / "run.txt"
    _write_run(path, run)
    measures = {"ndcg", "ndcg_cut." + ",".join(map(str, PYTREC_CUTOFFS))}
    expected = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    both = set(run) & set(qrels)
    assert set(expected) == both  # pytrec_eval: run queries that have judgments

    got, report = _per_query_merged(path, qrels_file, preset="pytrec_eval")
    assert set(got) == both
    assert report.n_missing == len(qrels) - len(both) and report.n_unjudged == 1
    columns = [("ndcg", "ndcg")] + [(f"ndcg@{k}", f"ndcg_cut_{k}") for k in PYTREC_CUTOFFS]
    for q in both:
        assert got[q]["n_docs"] == len(run[q])
        for column, measure in columns:
            assert abs(got[q][column] - expected[q][measure]) <= TOL, \
                f"{qrels_name} query {q} {measure}: fastndcg {got[q][column]!r} vs " \
                f"pytrec_eval {expected[q][measure]!r}"

    # trec_eval 10.x compares the scores as doubles: it ranks these runs differently
    as_doubles, _ = _per_query_merged(path, qrels_file, preset="trec_eval")
    assert set(as_doubles) == both
    differ = [q for q in both for column, measure in columns
              if abs(as_doubles[q][column] - expected[q][measure]) > 1e-9]
    assert differ, f"{qrels_name}: the run does not exercise float32 rounding"


def test_pytrec_eval_semantics_assumed_above():
    """What pytrec_eval does with the cases the real qrels contain (as trec_eval):
    negative grades count as 0; judged queries missing from the run and run queries
    without judgments are left out; scores are compared as float32, ties broken by
    document id descending."""
    pytrec_eval = pytest.importorskip("pytrec_eval")

    def ev(qrels, run):
        return pytrec_eval.RelevanceEvaluator(qrels, {"ndcg"}).evaluate(run)

    run = {"q": {"a": 2.0, "b": 1.0}}
    assert ev({"q": {"a": -2, "b": 1}}, run) == ev({"q": {"a": 0, "b": 1}}, run)
    assert set(ev({"q": {"a": 1}, "missing": {"a": 1}},
                  {"q": {"a": 1.0}, "unjudged": {"a": 1.0}})) == {"q"}
    # a (label 0) above b (label 1) only as doubles; as float32 they tie and "b" > "a"
    assert ev({"q": {"a": 0, "b": 1}}, {"q": {"a": 1.0 + 1e-9, "b": 1.0}})["q"]["ndcg"] == 1.0
    assert ev({"q": {"a": 0, "b": 1}}, {"q": {"a": 1.0 + 1e-6, "b": 1.0}})["q"]["ndcg"] < 1.0
    assert ev({"q": {"a": 1, "b": 0}}, {"q": {"a": 1.0, "b": 1.0}})["q"]["ndcg"] < 1.0


# --------------------------------------------------------------------------- 3. sklearn

@pytest.fixture(scope="module")
def dense():
    rng = np.random.default_rng(7)
    n_rows, n_items = 40, 12
    y_true = rng.integers(0, 4, (n_rows, n_items))
    y_true[[3, 17]] = 0  # rows without a relevant item
    y_score = rng.choice([0.1, 0.2, 0.3, 0.5], (n_rows, n_items))  # tie-heavy
    y_score[5] = 0.3  # one row fully tied
    offsets = np.arange(0, n_rows * n_items + 1, n_items)
    return y_true, y_score, offsets


@pytest.mark.parametrize("k", [1, 3, 5, None])
def test_sklearn_preset_per_row(dense, k):
    sk = pytest.importorskip("sklearn.metrics")
    y_true, y_score, offsets = dense
    got = fastndcg.ndcg(y_score.ravel(), y_true.ravel(), offsets, k=k, preset="sklearn")
    got_dcg = fastndcg.dcg(y_score.ravel(), y_true.ravel(), offsets, k=k, preset="sklearn")
    for row in range(len(y_true)):
        t, s = y_true[row:row + 1], y_score[row:row + 1]
        assert abs(got[row] - sk.ndcg_score(t, s, k=k)) <= TOL, f"row {row}"
        assert abs(got_dcg[row] - sk.dcg_score(t, s, k=k)) <= TOL, f"row {row}"
    # ties matter on these data: input order would give other values
    stable = fastndcg.ndcg(y_score.ravel(), y_true.ravel(), offsets, k=k, preset="sklearn",
                           ties="stable")
    assert np.any(np.abs(stable - got) > 1e-9)


def test_sklearn_preset_evaluate_mean(dense):
    sk = pytest.importorskip("sklearn.metrics")
    y_true, y_score, _ = dense
    n_rows, n_items = y_true.shape
    log = pa.table({"query_id": np.repeat(np.arange(n_rows), n_items),
                    "score": y_score.ravel(), "label": y_true.ravel()})
    report = fastndcg.evaluate(log, preset="sklearn", k=[1, 3, 5])
    for k in (1, 3, 5):
        assert abs(report.mean[f"ndcg@{k}"] - sk.ndcg_score(y_true, y_score, k=k)) <= TOL
    report = fastndcg.evaluate(log, preset="sklearn", k=None)
    assert abs(report.mean["ndcg"] - sk.ndcg_score(y_true, y_score)) <= TOL


def test_sklearn_preset_rejects_negative_labels_like_sklearn():
    sk = pytest.importorskip("sklearn.metrics")
    with pytest.raises(ValueError):
        sk.ndcg_score([[1, -1, 0]], [[0.1, 0.2, 0.3]])
    with pytest.raises(ValueError, match="negative"):
        fastndcg.ndcg([0.1, 0.2, 0.3], [1, -1, 0], k=None, preset="sklearn")


# --------------------------------------------------------------------------- 4. LightGBM

LGB_CUTOFFS = [1, 3, 5, 10]
N_ESTIMATORS = 30


@pytest.fixture(scope="module")
def lgb_data():
    pytest.importorskip("lightgbm")
    datasets = pytest.importorskip("sklearn.datasets")
    d = DATA / "lightgbm"
    X_train, y_train, X_test, y_test = datasets.load_svmlight_files(
        [str(d / "rank.train"), str(d / "rank.test")])
    q_train = np.loadtxt(d / "rank.train.query", dtype=np.int64, ndmin=1)
    q_test = np.loadtxt(d / "rank.test.query", dtype=np.int64, ndmin=1)
    return X_train, y_train, q_train, X_test, y_test, q_test


@pytest.fixture(scope="module")
def lgb_model(lgb_data):
    import lightgbm as lgb
    X_train, y_train, q_train, X_test, y_test, q_test = lgb_data
    train = lgb.Dataset(X_train, y_train, group=q_train)
    params = {"objective": "lambdarank", "metric": "ndcg", "eval_at": LGB_CUTOFFS,
              "num_leaves": 15, "min_data_in_leaf": 5, "seed": 0, "deterministic": True,
              "verbose": -1, "num_threads": 1}
    valid = lgb.Dataset(X_test, y_test, group=q_test, reference=train)
    evals: dict = {}
    booster = lgb.train(params, train, num_boost_round=N_ESTIMATORS, valid_sets=[valid],
                        valid_names=["test"], callbacks=[lgb.record_evaluation(evals)])
    return booster, evals["test"]


def _offsets(counts) -> np.ndarray:
    return np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)


def _lightgbm_eval(X, y, groups, scores) -> np.ndarray:
    """LightGBM's ndcg@k of fixed scores: a booster with no trees predicts exactly
    the init_score of its datasets."""
    import lightgbm as lgb
    params = {"objective": "lambdarank", "metric": "ndcg", "eval_at": LGB_CUTOFFS,
              "verbose": -1, "num_threads": 1, "deterministic": True}
    train = lgb.Dataset(X, y, group=groups, init_score=scores, params=params)
    valid = lgb.Dataset(X, y, group=groups, init_score=scores, reference=train)
    booster = lgb.Booster(params=params, train_set=train)
    booster.add_valid(valid, "fixed")
    assert booster.num_trees() == 0
    result = {r[1]: float(r[2]) for r in booster.eval_valid()}
    return np.array([result[f"ndcg@{k}"] for k in LGB_CUTOFFS])


def _has_ties(scores, offsets) -> bool:
    return any(np.unique(scores[a:b]).size < b - a for a, b in zip(offsets[:-1], offsets[1:]))


def test_lightgbm_preset_matches_model_evaluation(lgb_data, lgb_model):
    *_, X_test, y_test, q_test = lgb_data
    booster, evals = lgb_model
    expected = np.array([evals[f"ndcg@{k}"][-1] for k in LGB_CUTOFFS])
    scores = booster.predict(X_test, raw_score=True, num_iteration=N_ESTIMATORS)
    got = fastndcg.ndcg(scores, y_test, _offsets(q_test), k=LGB_CUTOFFS, preset="lightgbm")
    assert np.abs(got.mean(axis=0) - expected).max() <= TOL


@pytest.mark.parametrize("decimals", [1, 0, None])
def test_lightgbm_preset_tie_heavy(lgb_data, lgb_model, decimals):
    """Predictions rounded (1 or 0 decimals) or all equal, two queries without a
    relevant document: scored by LightGBM itself."""
    *_, X_test, y_test, q_test = lgb_data
    booster, _ = lgb_model
    offsets = _offsets(q_test)
    raw = booster.predict(X_test, raw_score=True, num_iteration=N_ESTIMATORS)
    scores = np.zeros_like(raw) if decimals is None else np.round(raw, decimals)
    labels = y_test.copy()
    labels[offsets[0]:offsets[1]] = 0
    labels[offsets[7]:offsets[8]] = 0
    assert _has_ties(scores, offsets)
    expected = _lightgbm_eval(X_test, labels, q_test, scores)
    got = fastndcg.ndcg(scores, labels, offsets, k=LGB_CUTOFFS, preset="lightgbm")
    assert np.all(got[[0, 7]] == 1.0)
    assert np.abs(got.mean(axis=0) - expected).max() <= TOL
    average = fastndcg.ndcg(scores, labels, offsets, k=LGB_CUTOFFS, preset="lightgbm",
                            ties="average")
    assert np.any(np.abs(average.mean(axis=0) - expected) > 1e-9)  # the tie rule matters


def test_lightgbm_compares_scores_as_doubles():
    """LightGBM keeps init_score as doubles: scores 1e-12 apart do not tie, as the
    preset's float64 precision says."""
    X = np.arange(8, dtype=np.float64).reshape(4, 2)
    labels = np.array([1.0, 0.0, 0.0, 2.0])
    scores = np.array([1.0, 1.0 + 1e-12, 5.0, 0.0])
    pytest.importorskip("lightgbm")
    expected = _lightgbm_eval(X, labels, [4], scores)
    got = fastndcg.ndcg(scores, labels, k=LGB_CUTOFFS, preset="lightgbm")[0]
    assert np.abs(got - expected).max() <= TOL
    as_float32 = fastndcg.ndcg(scores, labels, k=LGB_CUTOFFS, preset="lightgbm",
                               score_precision="float32")[0]
    assert np.abs(as_float32 - expected).max() > 1e-9


# --------------------------------------------------------------------------- 5. XGBoost

XGB_CUTOFFS = [1, 3, 5, 10]


def _xgboost_eval(scores, labels, qid, metrics) -> dict[str, float]:
    """XGBoost's own metrics of fixed scores: with 0 boosting rounds the booster's
    prediction is the DMatrix's base_margin."""
    xgb = pytest.importorskip("xgboost")
    dmat = xgb.DMatrix(np.zeros((len(scores), 1)), label=labels, qid=qid,
                       base_margin=scores)
    bst = xgb.train({"objective": "rank:ndcg", "eval_metric": list(metrics), "nthread": 1},
                    dmat, num_boost_round=0)
    assert np.array_equal(bst.predict(dmat, output_margin=True),
                          np.asarray(scores, np.float32))
    line = bst.eval(dmat)  # "[0]\teval-ndcg@3:0.46440125988223052\t..."
    values = {}
    for item in line.split("\t")[1:]:
        name, value = item.rsplit(":", 1)
        values[name[len("eval-"):]] = float(value)
    assert set(values) == set(metrics)
    return values


def _xgb_sample(seed: int, max_size: int = 30):
    """Tie-heavy fixed scores (float32 values, as XGBoost's predictions are), labels
    0..4, some queries without a relevant item, one of a single item."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, max_size + 1, 60)
    sizes[0] = 1
    qid = np.repeat(np.arange(len(sizes)), sizes)
    labels = rng.integers(0, 5, len(qid)).astype(np.float64)
    offsets = _offsets(sizes)
    for q in (1, 4, 9, 20, 33):
        labels[offsets[q]:offsets[q + 1]] = 0
    scores = rng.choice(np.float32([-1.0, 0.0, 0.25, 0.5, 2.0]), len(qid))
    return scores, labels, qid, offsets


def _xgb_metrics():
    return ([f"ndcg@{k}" for k in XGB_CUTOFFS] + [f"ndcg@{k}-" for k in XGB_CUTOFFS]
            + ["ndcg", "ndcg-"])


@pytest.mark.parametrize("seed", [0, 1])
def test_xgboost_presets_match_xgboost(seed):
    scores, labels, qid, offsets = _xgb_sample(seed)
    expected = _xgboost_eval(scores, labels, qid, _xgb_metrics())
    zero = [1, 4, 9, 20, 33]
    for preset, suffix, on_zero in (("xgboost", "", 1.0), ("xgboost-", "-", 0.0)):
        cut = fastndcg.ndcg(scores, labels, offsets, k=XGB_CUTOFFS, preset=preset)
        whole = fastndcg.ndcg(scores, labels, offsets, k=None, preset=preset)
        assert np.all(cut[zero] == on_zero) and np.all(whole[zero] == on_zero)
        for i, k in enumerate(XGB_CUTOFFS):
            assert abs(cut[:, i].mean() - expected[f"ndcg@{k}{suffix}"]) <= TOL, \
                f"{preset} ndcg@{k}: fastndcg {cut[:, i].mean()!r} vs XGBoost " \
                f"{expected[f'ndcg@{k}{suffix}']!r}"
        # queries have at most 32 items here: XGBoost's plain "ndcg" is the whole list
        assert abs(whole.mean() - expected[f"ndcg{suffix}"]) <= TOL


def test_xgboost_ties_keep_input_order():
    """XGBoost ranks tied predictions in input order (a stable sort by prediction
    descending): exactly ties="stable", not the reverse and not tie-averaging."""
    scores, labels, qid, offsets = _xgb_sample(2)
    metrics = [f"ndcg@{k}" for k in XGB_CUTOFFS]
    expected = np.array([_xgboost_eval(scores, labels, qid, metrics)[m] for m in metrics])
    stable = fastndcg.ndcg(scores, labels, offsets, k=XGB_CUTOFFS, preset="xgboost").mean(0)
    assert np.abs(stable - expected).max() <= TOL
    # each query's rows reversed: the same scores in the other input order
    rev = np.concatenate([np.arange(b - 1, a - 1, -1) for a, b in zip(offsets[:-1], offsets[1:])])
    reversed_ = fastndcg.ndcg(scores[rev], labels[rev], offsets, k=XGB_CUTOFFS,
                              preset="xgboost").mean(0)
    assert np.abs(reversed_ - expected).max() > 1e-9
    for ties in ("average", "optimistic", "pessimistic"):
        other = fastndcg.ndcg(scores, labels, offsets, k=XGB_CUTOFFS, preset="xgboost",
                              ties=ties).mean(0)
        assert np.abs(other - expected).max() > 1e-9, ties


def test_xgboost_plain_ndcg_is_truncated_at_32():
    """XGBoost's "ndcg" / "ndcg-" without @k is ndcg@32 (LambdaRankParam's default
    truncation), not the whole list: with longer lists it equals k=32, not k=None."""
    scores, labels, qid, offsets = _xgb_sample(3, max_size=80)
    assert np.diff(offsets).max() > 32
    expected = _xgboost_eval(scores, labels, qid, ["ndcg", "ndcg-", "ndcg@100"])
    for preset, suffix in (("xgboost", ""), ("xgboost-", "-")):
        at32, whole = fastndcg.ndcg(scores, labels, offsets, k=[32, None], preset=preset).T
        assert abs(at32.mean() - expected[f"ndcg{suffix}"]) <= TOL
        assert abs(whole.mean() - expected[f"ndcg{suffix}"]) > 1e-9
    # an explicit cutoff above 32 is honoured (lists have at most 80 items)
    whole = fastndcg.ndcg(scores, labels, offsets, k=None, preset="xgboost")
    assert abs(whole.mean() - expected["ndcg@100"]) <= TOL


def test_xgboost_float64_scores_are_compared_as_float32():
    """XGBoost stores base_margin (and predicts) as float32. Scores that differ only
    beyond float32 precision tie in XGBoost; XGBoost's value is fastndcg's with
    score_precision="float32" (its own predictions are float32 already, where both
    precisions agree)."""
    labels = np.array([1.0, 0.0, 0.0, 2.0])
    scores = np.array([1.0, 1.0 + 1e-9, 5.0, 0.0])  # one tie in float32 only
    qid = np.zeros(4, np.int64)
    metrics = [f"ndcg@{k}" for k in XGB_CUTOFFS]
    values = _xgboost_eval(scores, labels, qid, metrics)
    expected = np.array([values[m] for m in metrics])
    as_float32 = fastndcg.ndcg(scores, labels, k=XGB_CUTOFFS, preset="xgboost",
                               score_precision="float32")[0]
    assert np.abs(as_float32 - expected).max() <= TOL
    float32_scores = fastndcg.ndcg(scores.astype(np.float32), labels, k=XGB_CUTOFFS,
                                   preset="xgboost")[0]
    assert np.abs(float32_scores - expected).max() <= TOL


def test_xgboost_preset_alone_on_float64_near_ties():
    """XGBoost rounds margins to float32 before ranking, so the presets do too."""
    labels = np.array([1.0, 0.0, 0.0, 2.0])
    scores = np.array([1.0, 1.0 + 1e-9, 5.0, 0.0])
    metrics = [f"ndcg@{k}" for k in XGB_CUTOFFS]
    values = _xgboost_eval(scores, labels, np.zeros(4, np.int64), metrics)
    got = fastndcg.ndcg(scores, labels, k=XGB_CUTOFFS, preset="xgboost")[0]
    assert np.abs(got - [values[m] for m in metrics]).max() <= TOL


# --------------------------------------------------------------------------- 6. behaviour

def _arrays():
    rng = np.random.default_rng(11)
    sizes = rng.integers(1, 15, 30)
    offsets = _offsets(sizes)
    labels = rng.integers(0, 4, offsets[-1])
    labels[offsets[2]:offsets[3]] = 0
    scores = rng.choice([0.0, 0.5, 1.0, 1.5], offsets[-1])
    return scores, labels, offsets


@pytest.mark.parametrize("preset,override,by_hand", [
    ("lightgbm", dict(zero_idcg="zero"), dict(gain="exp2", ties="stable", zero_idcg="zero")),
    ("lightgbm", dict(gain="linear"), dict(gain="linear", ties="stable", zero_idcg="one")),
    ("xgboost-", dict(gain="linear"), dict(gain="linear", ties="stable", zero_idcg="zero",
                                           score_precision="float32")),
    ("sklearn", dict(zero_idcg="one"), dict(gain="linear", ties="average", zero_idcg="one")),
    ("trec_eval", dict(ties="average"),
     dict(gain="linear", ties="average", zero_idcg="zero", negative_labels="zero")),
    ("pytrec_eval", dict(ties="stable"),
     dict(gain="linear", ties="stable", zero_idcg="zero", negative_labels="zero",
          score_precision="float32")),
], ids=["lightgbm+zero_idcg", "lightgbm+gain", "xgboost-+gain", "sklearn+zero_idcg",
        "trec_eval+ties", "pytrec_eval+ties"])
def test_explicit_options_override_the_preset_arrays(preset, override, by_hand):
    scores, labels, offsets = _arrays()
    k = [1, 3, 10, None]
    got = fastndcg.ndcg(scores, labels, offsets, k=k, preset=preset, **override)
    assert np.array_equal(got, fastndcg.ndcg(scores, labels, offsets, k=k, **by_hand))
    # not vacuous: the preset and the override both change the result here
    assert not np.array_equal(got, fastndcg.ndcg(scores, labels, offsets, k=k, **override))
    if not PRESETS[preset].needs_doc_ids:
        assert not np.array_equal(got, fastndcg.ndcg(scores, labels, offsets, k=k,
                                                     preset=preset))
    got = fastndcg.dcg(scores, labels, offsets, k=k, preset=preset,
                       **{n: v for n, v in override.items() if n != "zero_idcg"})
    want = fastndcg.dcg(scores, labels, offsets, k=k,
                        **{n: v for n, v in by_hand.items() if n != "zero_idcg"})
    assert np.array_equal(got, want)


def test_explicit_options_override_the_preset_qrels():
    run, qrels = run_path("cedr-wt_valid.wt11"), qrels_path("cedr-wt")
    k = [1, 5, 20]
    got = fastndcg.evaluate(run, qrels=qrels, k=k, preset="trec_eval", gain="exp2")
    want = fastndcg.evaluate(run, qrels=qrels, k=k, gain="exp2", ties="trec",
                             negative_labels="zero", zero_idcg="zero")
    assert got.per_query.equals(want.per_query)
    assert got.mean == want.mean
    plain = fastndcg.evaluate(run, qrels=qrels, k=k, preset="trec_eval")
    assert not plain.per_query.equals(got.per_query)


@pytest.mark.parametrize("call", ["ndcg", "dcg", "evaluate"])
def test_unknown_preset_lists_the_names(call):
    with pytest.raises(ValueError) as err:
        if call == "evaluate":
            fastndcg.evaluate(pa.table({"query_id": [1, 1], "score": [0.1, 0.2],
                                        "label": [0, 1]}), preset="trec-eval")
        else:
            getattr(fastndcg, call)([0.1, 0.2], [0, 1], preset="trec-eval")
    message = str(err.value)
    assert "trec-eval" in message
    for name in PRESETS:
        assert repr(name) in message


@pytest.mark.parametrize("preset", ["trec_eval", "pytrec_eval"])
@pytest.mark.parametrize("call", ["ndcg", "dcg"])
def test_trec_presets_need_document_ids(call, preset):
    with pytest.raises(ValueError) as err:
        getattr(fastndcg, call)([0.1, 0.2, 0.2], [0, 1, 2], preset=preset)
    message = str(err.value)
    assert "document id" in message and "evaluate" in message and "qrels" in message


@pytest.mark.parametrize("preset", ["sklearn", "lightgbm", "xgboost", "xgboost-"])
def test_learning_to_rank_presets_refuse_qrels(preset):
    with pytest.raises(ValueError, match="qrels"):
        fastndcg.evaluate(run_path("rag24"), qrels=qrels_path("rag24"), preset=preset)


def test_cli_preset_equals_python(capsys):
    run, qrels = run_path("rag24"), qrels_path("rag24")
    code = fastndcg.cli.main(["evaluate", str(run), "--qrels", str(qrels), "--preset",
                              "trec_eval", "-k", "5,10", "--format", "json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    got = json.loads(captured.out)
    want = fastndcg.evaluate(str(run), qrels=str(qrels), preset="trec_eval", k=[5, 10]).to_dict()
    got.pop("seconds")
    want.pop("seconds")
    assert got == want
    assert set(want) >= {"ndcg@5", "ndcg@10", "n_queries"}
