"""fastndcg.ndcg_score / dcg_score against scikit-learn itself: same numbers (1e-12),
ties included, and the same ValueErrors."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fastndcg

from strategies import examples

sk = pytest.importorskip("sklearn.metrics")

SETTINGS = settings(max_examples=examples(1.2), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


@st.composite
def dense(draw, min_cols=2):
    rows = draw(st.integers(1, 6))
    cols = draw(st.integers(min_cols, 9))
    true = draw(st.lists(st.sampled_from([0, 0, 1, 2, 3, 0.5]), min_size=rows * cols,
                         max_size=rows * cols))
    score = draw(st.lists(st.sampled_from([-1.0, 0.0, 0.1, 0.1, 2.0, 5.5]),
                          min_size=rows * cols, max_size=rows * cols))
    y_true = np.array(true, dtype=np.float64).reshape(rows, cols)
    if draw(st.booleans()):
        y_true = np.round(y_true).astype(np.int64)
    y_score = np.array(score).reshape(rows, cols)
    if draw(st.booleans()):
        y_score = y_score.astype(np.float32)
    return y_true, y_score


def weights(rows):
    return st.one_of(st.none(), st.lists(st.sampled_from([0.5, 1.0, 2.0, 3.0]),
                                         min_size=rows, max_size=rows))


@SETTINGS
@given(data=dense(), k=st.one_of(st.none(), st.integers(1, 12)), ignore_ties=st.booleans(),
       draw=st.data())
def test_ndcg_score_matches_sklearn(data, k, ignore_ties, draw):
    y_true, y_score = data
    w = draw.draw(weights(len(y_true)))
    want = sk.ndcg_score(y_true, y_score, k=k, sample_weight=w, ignore_ties=ignore_ties)
    got = fastndcg.ndcg_score(y_true, y_score, k=k, sample_weight=w, ignore_ties=ignore_ties)
    assert isinstance(got, float)
    assert abs(got - want) <= 1e-12


@SETTINGS
@given(data=dense(min_cols=2), k=st.one_of(st.none(), st.integers(1, 12)),
       log_base=st.sampled_from([2, 10, 1.5, 1.01]), ignore_ties=st.booleans(), draw=st.data())
def test_dcg_score_matches_sklearn(data, k, log_base, ignore_ties, draw):
    y_true, y_score = data
    y_true = y_true - (y_true.dtype.kind == "i")  # dcg_score allows negative relevance
    w = draw.draw(weights(len(y_true)))
    want = sk.dcg_score(y_true, y_score, k=k, log_base=log_base, sample_weight=w,
                        ignore_ties=ignore_ties)
    got = fastndcg.dcg_score(y_true, y_score, k=k, log_base=log_base, sample_weight=w,
                             ignore_ties=ignore_ties)
    assert abs(got - want) <= 1e-12 * max(1.0, abs(want))


def test_tie_heavy_matrix_matches_sklearn():
    rng = np.random.default_rng(3)
    y_true = rng.integers(0, 5, (300, 50))
    y_score = np.round(rng.random((300, 50)), 1)  # ~5 ties per row and value
    for k in (None, 1, 5, 10, 49):
        assert abs(fastndcg.ndcg_score(y_true, y_score, k=k)
                   - sk.ndcg_score(y_true, y_score, k=k)) <= 1e-12
        assert abs(fastndcg.dcg_score(y_true, y_score, k=k)
                   - sk.dcg_score(y_true, y_score, k=k)) <= 1e-12 * 100


BAD = {
    "1-D y_true": ([1, 0, 2], [0.1, 0.2, 0.3]),
    "binary 1-D": ([1, 0], [0.1, 0.2]),
    "continuous 1-D": ([1.5, 0, 2], [0.1, 0.2, 0.3]),
    "single document": ([[1], [0]], [[0.1], [0.2]]),
    "negative y_true": ([[1, -1, 0]], [[0.1, 0.2, 0.3]]),
    "NaN y_true": ([[1, np.nan, 0]], [[0.1, 0.2, 0.3]]),
    "NaN y_score": ([[1, 2, 0]], [[0.1, np.nan, 0.3]]),
    "inf y_score": ([[1, 2, 0]], [[0.1, np.inf, 0.3]]),
    "lengths differ": ([[1, 2, 0], [1, 0, 0]], [[0.1, 0.2, 0.3]]),
    "3-D": ([[[1, 2, 0]]], [[[0.1, 0.2, 0.3]]]),
    "no samples": (np.zeros((0, 3)), np.zeros((0, 3))),
    "no documents": (np.zeros((2, 0)), np.zeros((2, 0))),
    "strings": ([["a", "b"]], [[0.1, 0.2]]),
    "complex": ([[1j, 2]], [[0.1, 0.2]]),
    "None inside": (np.array([[1, None]], dtype=object), [[0.1, 0.2]]),
}


def same_with_name(ours: str, theirs: str) -> None:
    """scikit-learn's message verbatim; where it names no parameter, ours adds the name
    (a ``y_true: `` prefix, or the arrays whose lengths differ) and nothing else."""
    assert theirs in ours, (ours, theirs)
    extra = ours.replace(theirs, "", 1)
    assert re.fullmatch(r"|(y_true|y_score): | \(rows of y_true, y_score(, sample_weight)?\)",
                        extra), (ours, theirs)


@pytest.mark.parametrize("func", ["ndcg_score", "dcg_score"])
@pytest.mark.parametrize("case", sorted(BAD))
def test_same_errors_as_sklearn(func, case):
    if func == "dcg_score" and case == "negative y_true":
        pytest.skip("dcg_score accepts negative relevance (tested below)")
    y_true, y_score = BAD[case]
    with pytest.raises(ValueError) as theirs:
        getattr(sk, func)(y_true, y_score)
    with pytest.raises(ValueError) as ours:
        getattr(fastndcg, func)(y_true, y_score)
    same_with_name(str(ours.value), str(theirs.value))


def test_negative_y_true_allowed_in_dcg_score_like_sklearn():
    y_true, y_score = [[1, -1, 0]], [[0.1, 0.2, 0.3]]
    assert abs(fastndcg.dcg_score(y_true, y_score) - sk.dcg_score(y_true, y_score)) <= 1e-12


@pytest.mark.parametrize("func", ["ndcg_score", "dcg_score"])
@pytest.mark.parametrize("kwargs", [{"k": 0}, {"k": 2.0}, {"k": -3}, {"ignore_ties": 1},
                                    {"sample_weight": [1, 2, 3]}])
def test_same_parameter_errors_as_sklearn(func, kwargs):
    y_true, y_score = [[1, 0, 2], [0, 1, 0]], [[0.1, 0.2, 0.3], [0.3, 0.2, 0.1]]
    with pytest.raises(ValueError) as theirs:
        getattr(sk, func)(y_true, y_score, **kwargs)
    with pytest.raises(ValueError) as ours:
        getattr(fastndcg, func)(y_true, y_score, **kwargs)
    same_with_name(str(ours.value), str(theirs.value))


@pytest.mark.parametrize("log_base", [0, -1, float("inf"), float("nan")])
def test_dcg_score_log_base_errors_like_sklearn(log_base):
    args = ([[1, 0, 2]], [[0.1, 0.2, 0.3]])
    with pytest.raises(ValueError) as theirs:
        sk.dcg_score(*args, log_base=log_base)
    with pytest.raises(ValueError) as ours:
        fastndcg.dcg_score(*args, log_base=log_base)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("log_base", [1, 1.0, 0.5, np.float64(0.999)])
def test_dcg_score_refuses_a_meaningless_log_base(log_base):
    """scikit-learn takes any log_base > 0; at 1 it warns (division by zero) and
    returns 0.0, below 1 every discount is negative. fastndcg refuses them as ndcg
    does, naming log_base, the value and the fix."""
    args = ([[1, 0, 2]], [[0.1, 0.2, 0.3]])
    with np.errstate(divide="ignore", invalid="ignore"):
        theirs = sk.dcg_score(*args, log_base=log_base)  # a number, not an error
    assert isinstance(theirs, float)
    with pytest.raises(ValueError) as ours:
        fastndcg.dcg_score(*args, log_base=log_base)
    message = str(ours.value)
    assert "log_base" in message and f"got {log_base!r}" in message, message
    assert "log_base=2" in message, message


def test_zero_weights_raise_like_sklearn():
    args = ([[1, 0, 2], [0, 1, 0]], [[0.1, 0.2, 0.3], [0.3, 0.2, 0.1]])
    with pytest.raises(ZeroDivisionError):
        sk.ndcg_score(*args, sample_weight=[0, 0])
    with pytest.raises(ZeroDivisionError, match="sample_weight"):  # also a ValueError
        fastndcg.ndcg_score(*args, sample_weight=[0, 0])
    with pytest.raises(ValueError, match="sample_weight"):
        fastndcg.ndcg_score(*args, sample_weight=[1, -1])


def test_different_shapes_is_a_clear_error():
    with pytest.raises(ValueError, match="same shape"):
        fastndcg.ndcg_score([[1, 2, 0]], [[0.1, 0.2]])
