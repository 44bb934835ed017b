"""Every bad input raises a ValueError / TypeError whose message names the parameter,
the offending value or query, and how to fix it.

The inputs are kept to float64 scores with int64 or float64 labels, so the few checks
that reach the compiled value scan do not compile new specialisations."""

from __future__ import annotations

import math
import re

import numpy as np
import pyarrow as pa
import pytest

import fastndcg

# two queries of two rows: query 0 = rows 0:2, query 1 = rows 2:4
S = np.array([0.5, 0.25, 1.0, 0.0])
L = np.array([1, 0, 2, 1], dtype=np.int64)
O = np.array([0, 2, 4], dtype=np.int64)
IDS = ["a", "a", "b", "b"]


def esc(text: str) -> str:
    return re.escape(text)


# --------------------------------------------------------------------------- lengths, offsets

def test_lengths_differ():
    with pytest.raises(ValueError, match=esc("scores and labels must have the same length, "
                                             "got 4 and 3")):
        fastndcg.ndcg(S, L[:3], [0, 3])


def test_lengths_differ_dcg():
    with pytest.raises(ValueError, match="same length, got 3 and 4"):
        fastndcg.dcg(S[:3], L, [0, 4])


def test_offsets_decrease_names_the_index():
    with pytest.raises(ValueError, match=esc("offsets must be non-decreasing, but offsets[2] = 1 "
                                             "< offsets[1] = 3 (query 1)")):
        fastndcg.ndcg(S, L, [0, 3, 1, 4])


def test_offsets_negative_entry_names_the_index():
    with pytest.raises(ValueError, match=esc("offsets[1] = -1 < offsets[0] = 0")):
        fastndcg.ndcg(S, L, [0, -1, 4])


def test_offsets_do_not_start_at_zero():
    with pytest.raises(ValueError, match=esc("offsets must start at 0, got offsets[0] = 1")):
        fastndcg.ndcg(S, L, [1, 2, 4])


def test_offsets_do_not_end_at_len_scores():
    with pytest.raises(ValueError, match=esc("offsets must end at len(scores) = 4, got "
                                             "offsets[-1] = 3")):
        fastndcg.ndcg(S, L, [0, 2, 3])
    with pytest.raises(ValueError, match=esc("offsets must end at len(scores) = 4, got "
                                             "offsets[-1] = 5")):
        fastndcg.ndcg(S, L, [0, 2, 5])


@pytest.mark.parametrize("offsets", [np.array([0.0, 2.0, 4.0]), np.array([0, 2.5, 4]),
                                     np.array([False, True])])
def test_offsets_must_be_integers(offsets):
    with pytest.raises(TypeError, match=r"offsets must hold integer row positions, got dtype (float64|bool); convert them"):
        fastndcg.ndcg(S, L, offsets)


@pytest.mark.parametrize("offsets", [[[0, 2], [2, 4]], np.zeros((0,), np.int64)])
def test_offsets_must_be_1d_and_non_empty(offsets):
    shape = np.asarray(offsets).shape
    with pytest.raises(ValueError, match=esc(f"offsets must be a 1-D array of n_queries + 1 row "
                                             f"positions starting at 0, got shape {shape}")):
        fastndcg.ndcg(S, L, offsets)


def test_offsets_single_value_is_shown():
    with pytest.raises(ValueError, match=esc("offsets must be a 1-D array of n_queries + 1 row "
                                             "positions starting at 0, got 4 (int), a single "
                                             "value; e.g. [0, 2, 4]")):
        fastndcg.ndcg(S, L, 4)


def test_offsets_and_query_ids_together():
    with pytest.raises(ValueError, match=esc("pass offsets or query_ids, not both")):
        fastndcg.ndcg(S, L, O, query_ids=IDS)
    with pytest.raises(ValueError, match=esc("pass offsets or query_ids, not both")):
        fastndcg.idcg(L, O, query_ids=IDS)


# --------------------------------------------------------------------------- query ids

@pytest.mark.parametrize("ids", [["a", "a", "b"], ["a"] * 5, []])
def test_query_ids_wrong_length(ids):
    with pytest.raises(ValueError, match=esc(f"query_ids must have one id per row: got "
                                             f"{len(ids)} ids for 4 rows")):
        fastndcg.ndcg(S, L, query_ids=ids)


@pytest.mark.parametrize("ids", [
    pa.array(["a", None, "b", "b"]),
    pa.chunked_array([["a", None], ["b", None]]),
    np.array(["a", None, "b", "b"], dtype=object),
    ["a", None, "b", "b"],
])
def test_query_ids_with_nulls(ids):
    n_null = sum(v is None for v in (ids.to_pylist() if hasattr(ids, "to_pylist") else ids))
    with pytest.raises(ValueError, match=esc(f"query_ids has {n_null} missing id(s) (null, "
                                             f"None or NA; first at row 1); every row needs "
                                             f"a query")):
        fastndcg.ndcg(S, L, query_ids=ids)


def test_query_ids_2d():
    with pytest.raises(TypeError, match="query_ids must be a 1-D array of ids"):
        fastndcg.ndcg(S, L, query_ids=[["a", "a"], ["b", "b"]])


# --------------------------------------------------------------------------- k

@pytest.mark.parametrize("k,got", [(0, "0"), (-1, "-1"), (np.int64(0), "0")])
def test_k_below_one(k, got):
    with pytest.raises(ValueError, match=esc(f"k must be >= 1, got {got}; pass a positive "
                                             f"cutoff such as k=10, or k=None")):
        fastndcg.ndcg(S, L, O, k=k)


def test_k_list_with_zero_names_the_position():
    with pytest.raises(ValueError, match=esc("k[1] must be >= 1, got 0")):
        fastndcg.ndcg(S, L, O, k=[3, 0])
    with pytest.raises(ValueError, match=esc("k[2] must be >= 1, got -5")):
        fastndcg.idcg(L, O, k=[3, 1, -5])


@pytest.mark.parametrize("k,shown", [(2.5, "2.5 (float)"), (True, "True (bool)")])
def test_k_not_an_int(k, shown):
    with pytest.raises(TypeError, match=r"k must be an int.*got " + esc(shown)):
        fastndcg.ndcg(S, L, O, k=k)


def test_k_list_with_non_int_names_the_position():
    with pytest.raises(TypeError, match=esc("k[1] must be an int >= 1, got 2.5 (float); a "
                                            "list of cutoffs holds ints (and None")):
        fastndcg.ndcg(S, L, O, k=[1, 2.5])
    with pytest.raises(TypeError, match=esc("k[0] must be an int >= 1, got '3' (str)")):
        fastndcg.ndcg(S, L, O, k=["3"])


def test_k_list_may_hold_none_for_the_whole_list():
    """trec_eval's -m ndcg -m ndcg_cut.3 in one pass: None in a list is the whole list."""
    both = fastndcg.ndcg(S, L, O, k=[None, 3])
    np.testing.assert_array_equal(both[:, 0], fastndcg.ndcg(S, L, O, k=None))
    np.testing.assert_array_equal(both[:, 1], fastndcg.ndcg(S, L, O, k=3))


def test_k_string():
    with pytest.raises(TypeError, match=esc("k must be an int, None or a sequence of ints, "
                                            "got '10' (str)")):
        fastndcg.ndcg(S, L, O, k="10")


def test_k_empty_list():
    with pytest.raises(ValueError, match=esc("k is an empty sequence; pass at least one cutoff, "
                                             "e.g. k=[10]")):
        fastndcg.ndcg(S, L, O, k=[])
    with pytest.raises(ValueError, match="k is an empty sequence"):
        fastndcg.dcg(S, L, O, k=np.array([], np.int64))


# --------------------------------------------------------------------------- option names

@pytest.mark.parametrize("func", ["ndcg", "dcg", "idcg"])
def test_unknown_gain_name(func):
    args = (L, O) if func == "idcg" else (S, L, O)
    with pytest.raises(ValueError, match=r"gain must be 'exp2', 'linear' or a 1-D table.*"
                                         r"got 'exp'"):
        getattr(fastndcg, func)(*args, gain="exp")


@pytest.mark.parametrize("name,value,valid", [
    ("ties", "random", "'average', 'stable', 'optimistic', 'pessimistic'"),
    ("zero_idcg", "inf", "'zero', 'one', 'nan', 'error'"),
    ("zero_idcg", 0, "'zero', 'one', 'nan', 'error'"),
    ("nan_scores", "first", "'error', 'last'"),
    ("negative_labels", "clip", "'error', 'zero', 'keep'"),
])
def test_unknown_option_name(name, value, valid):
    with pytest.raises(ValueError, match=esc(f"{name} must be one of {valid}; got {value!r}")):
        fastndcg.ndcg(S, L, O, **{name: value})


def test_none_means_the_default():
    """Semantic options left None take the preset's value, else the documented default."""
    plain = fastndcg.ndcg(S, L, O, k=[1, 3])
    spelled = fastndcg.ndcg(S, L, O, k=[1, 3], gain="exp2", ties="average", log_base=2.0,
                            zero_idcg="zero", nan_scores="error", negative_labels="error",
                            score_precision="float64")
    nones = fastndcg.ndcg(S, L, O, k=[1, 3], gain=None, ties=None, log_base=None,
                          zero_idcg=None, nan_scores=None, negative_labels=None,
                          score_precision=None, preset=None)
    np.testing.assert_array_equal(plain, spelled)
    np.testing.assert_array_equal(plain, nones)


@pytest.mark.parametrize("name,value", [("nan_scores", "first"), ("ties", "Average"),
                                        ("negative_labels", "drop")])
def test_unknown_option_name_dcg(name, value):
    with pytest.raises(ValueError, match=esc(f"{name} must be one of") + ".*" + esc(repr(value))):
        fastndcg.dcg(S, L, O, **{name: value})


def test_unknown_negative_labels_idcg():
    with pytest.raises(ValueError, match=esc("negative_labels must be one of 'error', 'zero', "
                                             "'keep'; got 'abs'")):
        fastndcg.idcg(L, O, negative_labels="abs")


@pytest.mark.parametrize("func", ["ndcg", "dcg"])
def test_ties_trec_explains_it_needs_document_ids(func):
    with pytest.raises(ValueError, match=r"ties='trec'.*document id.*qrels mode.*'stable'"):
        getattr(fastndcg, func)(S, L, O, ties="trec")


# --------------------------------------------------------------------------- label values

@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
@pytest.mark.parametrize("policy", ["error", "zero", "keep"])
def test_non_finite_labels_always_raise(bad, policy):
    labels = np.array([1.0, 0.0, 2.0, bad])
    with pytest.raises(ValueError, match=r"labels must be finite, but query 1 \(rows 2:4\) has "
                                         r"label .*" + esc(repr(bad)) + r".*drop or fix those rows"):
        fastndcg.ndcg(S, labels, O, negative_labels=policy)


def test_non_finite_labels_idcg():
    with pytest.raises(ValueError, match=r"labels must be finite, but query 0 \(rows 0:2\)"):
        fastndcg.idcg(np.array([math.nan, 1.0, 2.0, 0.0]), O)


def test_nan_scores_by_default():
    scores = np.array([0.5, 0.25, math.nan, 0.0])
    with pytest.raises(ValueError, match=esc("scores contain NaN (first in query 1 (rows 2:4)); "
                                             "pass nan_scores='last' to rank NaN below every "
                                             "score")):
        fastndcg.ndcg(scores, L, O)
    with pytest.raises(ValueError, match=esc("nan_scores='last'")):
        fastndcg.dcg(scores, L, O)


def test_negative_labels_by_default():
    labels = np.array([1, 0, 2, -1], dtype=np.int64)
    pattern = (r"labels must not be negative, but query 1 \(rows 2:4\) has label .*-1.*"
               r"negative_labels='zero'.*'keep'")
    with pytest.raises(ValueError, match=pattern):
        fastndcg.ndcg(S, labels, O)
    with pytest.raises(ValueError, match=pattern):
        fastndcg.dcg(S, labels, O)
    with pytest.raises(ValueError, match=pattern):
        fastndcg.idcg(labels, O)


TABLE = [0.0, 1.0, 3.0]  # valid labels 0, 1, 2


@pytest.mark.parametrize("labels,policy,shown", [
    (np.array([1.0, 0.0, 1.5, 0.0]), "error", "1.5"),       # fractional
    (np.array([1, 0, 3, 0], dtype=np.int64), "error", "3"),  # == len(table)
    (np.array([1, 0, 7, 0], dtype=np.int64), "error", "7"),  # > len(table)
    (np.array([1, 0, -1, 0], dtype=np.int64), "keep", "-1"),  # negative kept
])
def test_gain_table_bad_labels(labels, policy, shown):
    pattern = (r"with a gain table of length 3 labels must be integers 0\.\.2, but query 1 "
               r"\(rows 2:4\) has label .*" + esc(shown) + r".*extend the table or use "
               r"gain='exp2'/'linear'")
    with pytest.raises(ValueError, match=pattern):
        fastndcg.ndcg(S, labels, O, gain=TABLE, negative_labels=policy)
    if policy == "error":
        with pytest.raises(ValueError, match=pattern):
            fastndcg.idcg(labels, O, gain=TABLE)


@pytest.mark.parametrize("labels", [np.array([0, 0, 1024, 1], dtype=np.int64),
                                    np.array([0.0, 0.0, 1023.5, 1.0])])
def test_exp2_label_overflow(labels):
    pattern = (r"label .*" + esc(repr(float(labels[2])) if labels.dtype.kind == "f"
                                 else str(labels[2]))
               + r".* in query 1 \(rows 2:4\) overflows gain='exp2'.*use gain='linear'")
    with pytest.raises(ValueError, match=pattern):
        fastndcg.ndcg(S, labels, O)
    with pytest.raises(ValueError, match=pattern):
        fastndcg.idcg(labels, O)


def test_exp2_label_1023_is_allowed():
    # 2**1023 - 1 is finite: the limit is exclusive of 1023 (sanity check of the boundary)
    assert fastndcg.idcg(np.array([1023], np.int64), k=1)[0] == 2.0 ** 1023 - 1


# --------------------------------------------------------------------------- array types

@pytest.mark.parametrize("role", ["scores", "labels"])
@pytest.mark.parametrize("bad,error,pattern", [
    (["a", "b", "c", "d"], TypeError, r"{role} must hold numbers, got dtype <U1: 'a' at row 0 "
                                      r"is not a number; convert it, "
                                      r"e\.g\. numpy\.asarray\({role}, dtype=float\)"),
    (np.array([1.0, None, 2.0, 3.0], dtype=object), TypeError,
     r"{role} must hold numbers, got dtype object \(missing values\?\)"),
    (np.array([1 + 1j, 2, 3, 4]), TypeError, r"{role} must hold numbers, got dtype complex128"),
    (np.array(["2020-01-01"] * 4, dtype="datetime64[D]"), TypeError,
     r"{role} must hold numbers, got dtype datetime64\[D\]"),
    (np.ones((2, 2)), ValueError, r"{role} must be 1-D \(one value per row\), got shape "
                                  r"\(2, 2\); .*fastndcg\.ndcg_score.*{role}\.ravel\(\)"),
    ("abcd", TypeError, r"{role} must be an array of numbers, got 'abcd' \(str\)"),
    (None, TypeError, r"{role} must be an array of numbers, got None \(NoneType\)"),
    (pa.array([1.0, None, 2.0, 3.0]), ValueError, r"{role} has 1 null value\(s\) \(first at row "
                                                  r"1\); fill or drop them before scoring"),
])
def test_bad_scores_and_labels(role, bad, error, pattern):
    args = {"scores": S, "labels": L.astype(np.float64)}
    args[role] = bad
    with pytest.raises(error, match=pattern.format(role=role)):
        fastndcg.ndcg(args["scores"], args["labels"], O)


def test_bad_labels_idcg():
    with pytest.raises(TypeError, match="labels must hold numbers, got dtype complex128"):
        fastndcg.idcg(np.array([1 + 0j, 0, 1, 2]), O)


# --------------------------------------------------------------------------- log_base

@pytest.mark.parametrize("base", [1, 1.0, 0.5, 0, -2.0, math.nan, math.inf])
def test_log_base_out_of_range(base):
    with pytest.raises(ValueError, match=esc(f"log_base must be a finite number > 1, got "
                                             f"{base!r}; the usual choice is log_base=2")):
        fastndcg.ndcg(S, L, O, log_base=base)
    with pytest.raises(ValueError, match="log_base must be a finite number > 1"):
        fastndcg.idcg(L, O, log_base=base)


@pytest.mark.parametrize("base,shown", [("2", "'2' (str)"), (True, "True (bool)"),
                                        ([2], "[2] (list)")])
def test_log_base_wrong_type(base, shown):
    with pytest.raises(TypeError, match=esc(f"log_base must be a real number > 1, got {shown}")):
        fastndcg.dcg(S, L, O, log_base=base)


# --------------------------------------------------------------------------- zero_idcg="error"

def test_zero_idcg_error_names_the_query():
    labels = np.array([1, 0, 0, 0], dtype=np.int64)  # query 1 has no relevant item
    with pytest.raises(ValueError, match=esc("IDCG@10 is 0 for query 1 (rows 2:4): no item has a "
                                             "non-zero gain; pass zero_idcg='zero'")):
        fastndcg.ndcg(S, labels, O, zero_idcg="error")
    with pytest.raises(ValueError, match=esc("IDCG is 0 for query 1 (rows 2:4)")):
        fastndcg.ndcg(S, labels, O, zero_idcg="error", k=None)
    with pytest.raises(ValueError, match=esc("IDCG@1 is 0 for query 1 (rows 2:4)")):
        fastndcg.ndcg(S, labels, O, zero_idcg="error", k=[1, 3])


def test_zero_idcg_error_on_empty_query():
    with pytest.raises(ValueError, match=esc("IDCG@10 is 0 for query 1 (rows 2:2)")):
        fastndcg.ndcg(S[:2], L[:2], [0, 2, 2], zero_idcg="error")


def test_zero_idcg_error_with_a_table():
    # label 1 has gain 0 in this table, so query 0 (labels 1, 0) has IDCG 0
    with pytest.raises(ValueError, match=esc("IDCG@10 is 0 for query 0 (rows 0:2)")):
        fastndcg.ndcg(S, L, O, gain=[0.0, 0.0, 5.0], zero_idcg="error")


# --------------------------------------------------------------------------- gain tables

@pytest.mark.parametrize("table,shape", [([[0, 1], [2, 3]], (2, 2)), ([], (0,)),
                                         (np.zeros((1, 0)), (1, 0))])
def test_gain_table_shape(table, shape):
    with pytest.raises(ValueError, match=esc(f"a gain table must be a non-empty 1-D sequence "
                                             f"(gain[label], e.g. [0, 1, 3, 7]), got shape "
                                             f"{shape}")):
        fastndcg.ndcg(S, L, O, gain=table)


@pytest.mark.parametrize("table", [[0.0, math.nan, 3.0], [0.0, 1.0, math.inf]])
def test_gain_table_not_finite(table):
    with pytest.raises(ValueError, match=esc(f"the gain table must hold finite numbers, got "
                                             f"{table}")):
        fastndcg.ndcg(S, L, O, gain=table)
    with pytest.raises(ValueError, match="the gain table must hold finite numbers"):
        fastndcg.idcg(L, O, gain=table)


def test_gain_table_not_numbers():
    with pytest.raises(TypeError, match=esc("gain must be 'exp2', 'linear' or a 1-D table of "
                                            "numbers, got ['a', 'b']")):
        fastndcg.ndcg(S, L, O, gain=["a", "b"])


# --------------------------------------------------------------------------- queries named by id

def _bad_cases():
    """(kwargs making row 2 -- the first row of query 'b' in IDS -- bad, error pattern)."""
    nan_label = np.array([1.0, 0.0, math.nan, 1.0])
    return {
        "nan label": (dict(labels=nan_label), r"labels must be finite, but {q} has label"),
        "inf label": (dict(labels=np.array([1.0, 0.0, math.inf, 1.0])),
                      r"labels must be finite, but {q} has label"),
        "nan score": (dict(scores=np.array([0.5, 0.25, math.nan, 0.0])),
                      r"scores contain NaN \(first in {q}\)"),
        "negative label": (dict(labels=np.array([1, 0, -2, 1], np.int64)),
                           r"labels must not be negative, but {q} has label"),
        "table label": (dict(labels=np.array([1, 0, 5, 1], np.int64), gain=TABLE),
                        r"labels must be integers 0\.\.2, but {q} has label"),
        "exp2 overflow": (dict(labels=np.array([1, 0, 2000, 1], np.int64)),
                          r"label .*2000.* in {q} overflows gain='exp2'"),
        # rows 2 and 3 (contiguous ids) or rows 0 and 2 (scattered ids) are all 0
        "zero idcg": (dict(labels=np.array([0, 1, 0, 0], np.int64), zero_idcg="error"),
                      r"IDCG@10 is 0 for {q}: no item has a non-zero gain"),
    }


@pytest.mark.parametrize("case", list(_bad_cases()))
@pytest.mark.parametrize("ids,name", [
    (["a", "a", "b", "b"], r"query 'b' \(query index 1\)"),
    # scattered: row 2 belongs to 'b', which appears first, so it is query index 0
    (["b", "a", "b", "a"], r"query 'b' \(query index 0\)"),
    ([10, 10, 20, 20], r"query 20 \(query index 1\)"),
    (pa.chunked_array([["a", "a"], ["b", "b"]]), r"query 'b' \(query index 1\)"),
])
def test_error_names_query_by_id(case, ids, name):
    kwargs, pattern = _bad_cases()[case]
    scores = kwargs.pop("scores", S)
    labels = kwargs.pop("labels", L)
    with pytest.raises(ValueError, match=pattern.format(q=name)):
        fastndcg.ndcg(scores, labels, query_ids=ids, **kwargs)


@pytest.mark.parametrize("case", list(_bad_cases()))
def test_error_names_query_by_rows(case):
    kwargs, pattern = _bad_cases()[case]
    scores = kwargs.pop("scores", S)
    labels = kwargs.pop("labels", L)
    with pytest.raises(ValueError, match=pattern.format(q=r"query 1 \(rows 2:4\)")):
        fastndcg.ndcg(scores, labels, O, **kwargs)


def test_idcg_error_names_query_by_id():
    with pytest.raises(ValueError, match=r"labels must not be negative, but query 'y' "
                                         r"\(query index 1\)"):
        fastndcg.idcg(np.array([1, 0, 3, -1], np.int64), query_ids=["x", "x", "y", "y"])


# --------------------------------------------------------------------------- no spurious errors

def test_negative_fractional_labels_clipped_for_a_table():
    # negative_labels='zero' turns -0.5 into 0, a valid index of the table, so this is
    # not an error: the oracle gives query 0 (labels 0, 1 after clipping, scores 1 < 2)
    # the ideal order -> NDCG 1.0
    labels = np.array([-0.5, 1.0])
    kw = dict(gain=TABLE, negative_labels="zero")
    assert fastndcg.reference.ndcg([1.0, 2.0], labels.tolist(), **kw) == [1.0]
    np.testing.assert_array_equal(fastndcg.ndcg(np.array([1.0, 2.0]), labels, **kw), [1.0])


def test_exp2_gains_that_overflow_when_summed_are_an_error_not_nan():
    # each 2**1023 - 1 is finite, but three of them sum past the largest float64
    with pytest.raises(ValueError, match=r"IDCG overflows for query 0.*gain='linear'"):
        fastndcg.ndcg([1.0, 2.0, 3.0], [1023, 1023, 1023])
    with pytest.raises(ValueError, match=r"IDCG overflows"):
        fastndcg.idcg([1023, 1023, 1023])


@pytest.mark.parametrize("gain", [2, 2.5, b"exp2"])
def test_gain_that_is_neither_a_name_nor_a_table(gain):
    with pytest.raises(TypeError, match=r"gain must be 'exp2', 'linear' or a 1-D table.*got "
                                        + re.escape(repr(gain))):
        fastndcg.ndcg(S, L, O, gain=gain)
