"""Parity with LightGBM's own NDCG@k evaluation on LightGBM's lambdarank sample.

The data (tests/data/lightgbm/, see README.md there) are unmodified copies of
microsoft/LightGBM's examples/lambdarank files. A small fixed LGBMRanker is trained
on rank.train and evaluated by LightGBM on rank.test; fastndcg with LightGBM's
conventions (gain 2**r - 1, discount 1/log2(2 + i), stable sort by score descending,
queries without a relevant document scoring 1) must give the same mean NDCG@k to
1e-12. No expected number is hard-coded: every reference value comes from LightGBM.
"""

import inspect
from pathlib import Path

import numpy as np
import pytest

lgb = pytest.importorskip("lightgbm")
sklearn_datasets = pytest.importorskip("sklearn.datasets")

import fastndcg  # noqa: E402

DATA = Path(__file__).parent / "data" / "lightgbm"
CUTOFFS = [1, 3, 5, 10]
TOL = 1e-12
N_ESTIMATORS = 30
LGB_NDCG = dict(gain="exp2", ties="stable", zero_idcg="one")


def _offsets(counts):
    return np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)


@pytest.fixture(scope="module")
def data():
    X_train, y_train, X_test, y_test = sklearn_datasets.load_svmlight_files(
        [str(DATA / "rank.train"), str(DATA / "rank.test")])
    q_train = np.loadtxt(DATA / "rank.train.query", dtype=np.int64, ndmin=1)
    q_test = np.loadtxt(DATA / "rank.test.query", dtype=np.int64, ndmin=1)
    return X_train, y_train, q_train, X_test, y_test, q_test


@pytest.fixture(scope="module")
def model(data):
    X_train, y_train, q_train, X_test, y_test, q_test = data
    ranker = lgb.LGBMRanker(n_estimators=N_ESTIMATORS, num_leaves=15,
                            min_child_samples=5, random_state=0, deterministic=True,
                            verbose=-1, n_jobs=1)
    # LightGBM 4.7 deprecates eval_set in favour of eval_X / eval_y.
    if "eval_X" in inspect.signature(ranker.fit).parameters:
        evals = dict(eval_X=(X_test,), eval_y=(y_test,))
    else:
        evals = dict(eval_set=[(X_test, y_test)])
    ranker.fit(X_train, y_train, group=q_train, eval_group=[q_test],
               eval_at=CUTOFFS, **evals)
    return ranker


def _has_ties(scores, offsets):
    return any(np.unique(scores[a:b]).size < b - a
               for a, b in zip(offsets[:-1], offsets[1:]))


def _lightgbm_eval_fixed_scores(X, y, groups, scores):
    """LightGBM's NDCG@k of fixed scores: a booster with zero trees predicts exactly
    the init_score of its datasets, so evaluating it evaluates `scores`."""
    params = {"objective": "lambdarank", "metric": "ndcg", "eval_at": CUTOFFS,
              "verbose": -1, "num_threads": 1, "deterministic": True}
    train = lgb.Dataset(X, y, group=groups, init_score=scores, params=params)
    valid = lgb.Dataset(X, y, group=groups, init_score=scores, reference=train)
    booster = lgb.Booster(params=params, train_set=train)
    booster.add_valid(valid, "fixed")
    assert booster.current_iteration() == 0 and booster.num_trees() == 0
    result = {r[1]: float(r[2]) for r in booster.eval_valid()}
    return np.array([result[f"ndcg@{k}"] for k in CUTOFFS])


def _assert_close(lightgbm_values, fastndcg_values):
    for k, a, b in zip(CUTOFFS, lightgbm_values, fastndcg_values):
        assert abs(a - b) <= TOL, f"ndcg@{k}: LightGBM {a!r} vs fastndcg {b!r}"


def test_sample_parses(data):
    X_train, y_train, q_train, X_test, y_test, q_test = data
    assert len(q_train) == 201 and q_train.sum() == X_train.shape[0] == 3005
    assert len(q_test) == 50 and q_test.sum() == X_test.shape[0] == len(y_test) == 768
    assert set(np.unique(y_test)) <= {0, 1, 2, 3, 4}


def test_matches_lightgbm_eval_of_model(data, model):
    *_, X_test, y_test, q_test = data
    valid = model.evals_result_["valid_0"]
    assert all(len(valid[f"ndcg@{k}"]) == N_ESTIMATORS for k in CUTOFFS)
    lightgbm_values = np.array([valid[f"ndcg@{k}"][-1] for k in CUTOFFS])

    # Raw scores of all trees: the same model LightGBM evaluated at the last iteration.
    assert model.booster_.current_iteration() == N_ESTIMATORS
    scores = model.predict(X_test, raw_score=True, num_iteration=N_ESTIMATORS)
    offsets = _offsets(q_test)
    result = fastndcg.ndcg(scores, y_test, offsets, k=CUTOFFS, **LGB_NDCG)
    assert result.shape == (50, len(CUTOFFS))
    _assert_close(lightgbm_values, result.mean(axis=0))

    # Meaningful: the model's predictions tie within at least one query (identical
    # leaf paths give bit-identical sums), and those ties change NDCG@k, so the tie
    # rule is being exercised rather than vacuously satisfied.
    assert _has_ties(scores, offsets)
    average = fastndcg.ndcg(scores, y_test, offsets, k=CUTOFFS, gain="exp2",
                            ties="average", zero_idcg="one").mean(axis=0)
    assert np.any(average != result.mean(axis=0))


def test_matches_lightgbm_eval_of_rounded_scores(data, model):
    """Many ties: the model's predictions rounded to 1 decimal, evaluated by LightGBM."""
    *_, X_test, y_test, q_test = data
    scores = np.round(model.predict(X_test, raw_score=True,
                                    num_iteration=N_ESTIMATORS), 1)
    offsets = _offsets(q_test)
    assert _has_ties(scores, offsets)
    lightgbm_values = _lightgbm_eval_fixed_scores(X_test, y_test, q_test, scores)
    result = fastndcg.ndcg(scores, y_test, offsets, k=CUTOFFS, **LGB_NDCG).mean(axis=0)
    _assert_close(lightgbm_values, result)
    average = fastndcg.ndcg(scores, y_test, offsets, k=CUTOFFS, gain="exp2",
                            ties="average", zero_idcg="one").mean(axis=0)
    assert np.any(average != result)


def test_matches_lightgbm_on_query_without_relevant_documents(data, model):
    """rank.test has no all-zero query; zero the labels of two to check that LightGBM
    and zero_idcg="one" agree on them (derived in memory, the files are untouched)."""
    *_, X_test, y_test, q_test = data
    offsets = _offsets(q_test)
    labels = y_test.copy()
    labels[offsets[0]:offsets[1]] = 0
    labels[offsets[7]:offsets[8]] = 0
    scores = np.round(model.predict(X_test, raw_score=True,
                                    num_iteration=N_ESTIMATORS), 1)
    lightgbm_values = _lightgbm_eval_fixed_scores(X_test, labels, q_test, scores)
    per_query = fastndcg.ndcg(scores, labels, offsets, k=CUTOFFS, **LGB_NDCG)
    assert np.all(per_query[[0, 7]] == 1.0)
    _assert_close(lightgbm_values, per_query.mean(axis=0))
