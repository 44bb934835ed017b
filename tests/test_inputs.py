"""Input handling: dtypes, read-only / strided / big-endian arrays, pyarrow and pandas
columns, Python lists, callers' arrays left untouched, result dtypes and shapes.

Every (score dtype, label dtype, array flags) combination that reaches the kernels is a
Numba specialisation compiled on first use (about 20 s each), so the inputs here are
chosen to reuse few of them: float64 scores with int64 labels wherever the dtype is not
the point, and one pairing of the other dtypes (below) instead of a cross product."""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pytest

import fastndcg
from fastndcg import reference

TIES = ["average", "stable", "optimistic", "pessimistic"]
K = [1, 3, 10, 50]
RTOL = ATOL = 1e-12


def close(actual, expected):
    actual = np.asarray(actual)
    assert actual.dtype == np.float64
    expected = np.asarray(expected, dtype=float).reshape(actual.shape)
    np.testing.assert_allclose(actual, expected, rtol=RTOL, atol=ATOL, equal_nan=True)


def same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype == np.float64 and a.shape == b.shape
    assert np.array_equal(a, b, equal_nan=True), (a, b)


def ref_ndcg(scores, labels, offsets=None, query_ids=None, **kw):
    """The oracle on plain Python floats (offsets / ids as Python lists)."""
    as_list = lambda x: None if x is None else np.asarray(x).tolist()
    return reference.ndcg([float(v) for v in np.asarray(scores).tolist()],
                          [float(v) for v in np.asarray(labels).tolist()],
                          as_list(offsets), query_ids=as_list(query_ids), **kw)


def base_batch(seed=0):
    """A small tie-heavy float64 / int64 batch: empty, single-item and longer queries."""
    rng = np.random.default_rng(seed)
    sizes = [0, 1, 2, 5, 17, 40, 3, 9]
    offsets = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    n = int(offsets[-1])
    scores = rng.integers(-3, 3, n).astype(np.float64) / 2
    scores[rng.integers(0, n, 3)] = [math.inf, -math.inf, -0.0]
    labels = rng.integers(0, 5, n).astype(np.int64)
    return scores, labels, offsets


# --------------------------------------------------------------------------- dtypes

# Each score dtype and each label dtype appears at least once, in a pairing instead of
# a cross product. fastndcg converts every dtype exactly to two score types
# (float32/float64) and two label types (int32/float64) before the kernels, so all
# of these share four compiled specialisations (test_four_specialisations_at_most).
# The conversion itself is part of what is tested.
DTYPE_PAIRS = [
    (np.float64, np.int64),
    (np.float32, np.int8),
    (np.float16, np.int8),
    (np.float32, np.bool_),
    (np.int32, np.uint8),
    (np.int8, np.int16),
    (np.int16, np.int32),
    (np.uint8, np.uint16),
    (np.uint16, np.uint8),
    (np.bool_, np.int32),
    (np.int64, np.int64),
    (np.uint32, np.int64),
    (np.uint64, np.float32),
    (np.uint64, np.float16),
    (np.float64, np.float64),
    (np.float64, np.uint32),
    (np.float64, np.uint64),
]


def typed_scores(dtype, rng, n):
    """Tie-heavy scores of ``dtype`` plus its extreme values, all exact in float64 (so
    the oracle sees the same order and the same ties)."""
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.integers(0, 2, n).astype(bool)
    values = rng.integers(0, 6, n) - (3 if dt.kind == "i" else 0)
    if dt.kind == "f":
        extremes = {2: [65504.0, -65504.0, 0.5, -0.0], 4: [3e38, -3e38, 1e-30, -0.0],
                    8: [1e300, -math.inf, math.inf, -0.0]}[dt.itemsize]
    elif dt.kind == "i":
        extremes = ([np.iinfo(dt).min, np.iinfo(dt).max] if dt.itemsize <= 4
                    else [-2 ** 63, 2 ** 63 - 1024, 2 ** 62, -2 ** 62])
    else:  # a signed reinterpretation of these would wrap around to negative numbers
        extremes = ([np.iinfo(dt).max, np.iinfo(dt).max - 1] if dt.itemsize <= 4
                    else [2 ** 64 - 2048, 2 ** 63])
    out = values.astype(dt)
    out[rng.choice(n, len(extremes), replace=False)] = np.array(extremes).astype(dt)
    return out


def typed_labels(dtype, rng, offsets):
    dt = np.dtype(dtype)
    n = int(offsets[-1])
    if dt.kind == "b":
        return rng.integers(0, 2, n).astype(bool)
    labels = rng.integers(0, 5, n).astype(np.float64)
    labels[offsets[5]:offsets[6]] = rng.integers(0, 41, offsets[6] - offsets[5])  # > 31
    if dt.kind == "f":
        labels[rng.choice(n, 6, replace=False)] = [0.5, 1.5, 2.25, 0.5, 3.5, 1.25]
    return labels.astype(dt)


@pytest.mark.parametrize("score_dtype,label_dtype", DTYPE_PAIRS,
                         ids=[f"{np.dtype(s).name}-{np.dtype(r).name}" for s, r in DTYPE_PAIRS])
def test_dtypes_match_reference(score_dtype, label_dtype):
    rng = np.random.default_rng(7)
    _, _, offsets = base_batch()
    scores = typed_scores(score_dtype, rng, int(offsets[-1]))
    labels = typed_labels(label_dtype, rng, offsets)
    assert scores.dtype == score_dtype and labels.dtype == label_dtype
    s64 = scores.astype(np.float64)
    assert np.array_equal(s64.astype(score_dtype), scores)  # exact in float64
    for ties in TIES:
        for gain in ["exp2", "linear"]:
            got = fastndcg.ndcg(scores, labels, offsets, k=K, ties=ties, gain=gain)
            close(got, ref_ndcg(s64, labels, offsets, k=K, ties=ties, gain=gain))
            got_dcg = fastndcg.dcg(scores, labels, offsets, k=K, ties=ties, gain=gain)
            close(got_dcg, reference.dcg(s64.tolist(), labels.astype(float).tolist(),
                                         offsets.tolist(), k=K, ties=ties, gain=gain))
            if labels.dtype.kind != "f":  # and bit-identical to float64 / int64 inputs
                same(got, fastndcg.ndcg(s64, labels.astype(np.int64), offsets, k=K,
                                        ties=ties, gain=gain))


# --------------------------------------------------------------------------- array flags

def readonly(*arrays):
    out = []
    for a in arrays:
        a = np.array(a)
        a.flags.writeable = False
        out.append(a)
    return out


def test_integer_scores_beyond_float64_keep_their_order():
    """Integers above 2**53 that float64 would merge (2**60 and 2**60 + 1) stay
    distinct: the kernels see their ranks, never a rounded value."""
    big = 2 ** 60
    scores = np.array([big, big + 1, big + 1, big - 1, 5, big + 2], dtype=np.int64)
    labels = np.array([1, 0, 3, 2, 1, 0])
    offsets = np.array([0, 6])
    assert float(big) == float(big + 1)  # what a float64 conversion would lose
    ranks = scipy_stats().rankdata(scores, method="dense").astype(np.float64)
    for ties in TIES:
        close(fastndcg.ndcg(scores, labels, offsets, k=[1, 3, None], ties=ties),
              ref_ndcg(ranks, labels, offsets, k=[1, 3, None], ties=ties))
    unsigned = scores.astype(np.uint64) + np.uint64(2 ** 63)
    close(fastndcg.ndcg(unsigned, labels, offsets, k=[1, 3, None]),
          ref_ndcg(ranks, labels, offsets, k=[1, 3, None]))


def test_nan_last_with_minus_infinity():
    """NaN ranks below -inf (all NaN tied) also when -inf is present."""
    scores = np.array([-np.inf, np.nan, 1.0, np.nan, -np.inf, 0.5])
    labels = np.array([2, 3, 0, 1, 1, 2])
    offsets = np.array([0, 6])
    stand_in = np.array([-1.0, -2.0, 1.0, -2.0, -1.0, 0.5])  # the same order and ties
    for ties in TIES:
        close(fastndcg.ndcg(scores, labels, offsets, k=[1, 2, 4, None], ties=ties,
                            nan_scores="last"),
              ref_ndcg(stand_in, labels, offsets, k=[1, 2, 4, None], ties=ties))
        close(fastndcg.ndcg(scores.astype(np.float32), labels, offsets, k=[2, None],
                            ties=ties, nan_scores="last"),
              ref_ndcg(stand_in, labels, offsets, k=[2, None], ties=ties))


def test_labels_beyond_int32_have_the_same_gains():
    labels = np.array([0, 2 ** 40, 3, 2 ** 33, 1], dtype=np.int64)
    scores = np.array([0.1, 0.2, 0.9, 0.4, 0.4])
    offsets = np.array([0, 5])
    close(fastndcg.ndcg(scores, labels, offsets, k=[2, None], gain="linear"),
          ref_ndcg(scores, labels.astype(np.float64), offsets, k=[2, None], gain="linear"))
    close(fastndcg.ndcg(scores, labels.astype(np.uint64), offsets, k=[2, None], gain="linear"),
          ref_ndcg(scores, labels.astype(np.float64), offsets, k=[2, None], gain="linear"))


def test_four_specialisations_at_most():
    """Every dtype pair, read-only, strided, big-endian and Arrow input reach the
    main kernel as one of four types: read-only C-contiguous float32/float64 scores
    with int32/float64 labels."""
    from fastndcg._kernels import ndcg, scan

    rng = np.random.default_rng(3)
    _, _, offsets = base_batch()
    n = int(offsets[-1])
    for s_type, l_type in DTYPE_PAIRS:
        s, l = typed_scores(s_type, rng, n), typed_labels(l_type, rng, offsets)
        fastndcg.ndcg(s, l, offsets, k=K)
        ro_s, ro_l = s.copy(), l.copy()
        ro_s.flags.writeable = ro_l.flags.writeable = False
        fastndcg.ndcg(ro_s, ro_l, offsets, k=K)
        fastndcg.ndcg(np.repeat(s, 2)[::2], np.repeat(l, 2)[::2], offsets, k=K)
        fastndcg.ndcg(s.astype(s.dtype.newbyteorder(">")), l, offsets, k=K)
        fastndcg.ndcg(pa.array(s), pa.array(l), offsets, k=K)
    allowed_scores = {"float32", "float64"}
    allowed_labels = {"int32", "float64"}
    for dispatcher in (ndcg.dcg_chunk, scan.scan_chunk):
        sigs = dispatcher.signatures
        assert 1 <= len(sigs) <= 4, sigs
        for sig in sigs:
            # dcg_chunk(q0, q1, lists, ...): the scores and labels of its Lists bundle
            scores_t, labels_t = sig[2].types[1:3] if dispatcher is ndcg.dcg_chunk else sig[:2]
            assert scores_t.layout == labels_t.layout == "C" and not scores_t.mutable, sig
            assert not labels_t.mutable, sig
            assert str(scores_t.dtype) in allowed_scores, sig
            assert str(labels_t.dtype) in allowed_labels, sig


def scipy_stats():
    return pytest.importorskip("scipy.stats")


def test_readonly_arrays():
    s, r, o = readonly(*base_batch())
    for ties in TIES:
        close(fastndcg.ndcg(s, r, o, k=K, ties=ties), ref_ndcg(s, r, o, k=K, ties=ties))
        close(fastndcg.dcg(s, r, o, k=None, ties=ties),
              reference.dcg(s.tolist(), r.tolist(), o.tolist(), k=None, ties=ties))


def test_readonly_arrays_with_replacements():
    # NaN scores ranked last and negative labels clipped need new arrays: never a write
    s, r, o = base_batch()
    s[[3, 10]] = np.nan
    r[[4, 11]] = -2
    s, r = readonly(s, r)
    kw = dict(k=K, nan_scores="last", negative_labels="zero")
    close(fastndcg.ndcg(s, r, o, **kw), ref_ndcg(s, r, o, **kw))
    ids = np.arange(len(s)) % 3  # forces regrouping
    close(fastndcg.ndcg(s, r, query_ids=ids, **kw), ref_ndcg(s, r, query_ids=ids, **kw))


def test_strided_arrays():
    s, r, o = base_batch()
    # every other element of a larger buffer; the elements in between are poison that
    # would show up (NaN score error, negative label error) if a stride were ignored
    s_buf = np.full(2 * len(s), np.nan)
    s_buf[::2] = s
    r_buf = np.full(2 * len(r), -7, np.int64)
    r_buf[1::2] = r
    o_buf = np.full(2 * len(o), 10 ** 6, np.int64)
    o_buf[::2] = o
    ss, rs, os_ = s_buf[::2], r_buf[1::2], o_buf[::2]
    assert not ss.flags.c_contiguous and not rs.flags.c_contiguous
    for ties in TIES:
        expected = ref_ndcg(s, r, o, k=K, ties=ties)
        close(fastndcg.ndcg(ss, rs, os_, k=K, ties=ties), expected)
        same(fastndcg.ndcg(ss, rs, os_, k=K, ties=ties), fastndcg.ndcg(s, r, o, k=K, ties=ties))
    # negative strides: a reversed batch is the reversed queries, each reversed
    rev = fastndcg.ndcg(ss[::-1], rs[::-1], (o[-1] - o)[::-1], k=K, ties="average")
    expected = ref_ndcg(s[::-1], r[::-1], (o[-1] - o)[::-1], k=K, ties="average")
    close(rev, expected)


def test_big_endian_arrays():
    s, r, o = base_batch()
    sb, rb, ob = s.astype(">f8"), r.astype(">i8"), o.astype(">i8")
    assert not sb.dtype.isnative
    for ties in TIES:
        same(fastndcg.ndcg(sb, rb, ob, k=K, ties=ties), fastndcg.ndcg(s, r, o, k=K, ties=ties))
    same(fastndcg.idcg(rb, ob, k=K), fastndcg.idcg(r, o, k=K))
    # int32 scores with uint8 labels, as in test_dtypes_match_reference
    si = (s * 2).clip(-100, 100).astype(np.int32)
    ru = r.astype(np.uint8)
    same(fastndcg.ndcg(si.astype(">i4"), ru, o, k=K), fastndcg.ndcg(si, ru, o, k=K))


def test_big_endian_query_ids():
    s, r, o = base_batch()
    ids = np.repeat(np.arange(len(o) - 1) * 5, np.diff(o))
    expected = fastndcg.ndcg(s, r, query_ids=ids, k=K)
    close(expected, ref_ndcg(s, r, query_ids=ids, k=K))
    same(fastndcg.ndcg(s, r, query_ids=ids.astype(">i8"), k=K), expected)


# --------------------------------------------------------------------------- pyarrow

def chunked(values, n_chunks=3):
    values = np.asarray(values)
    return pa.chunked_array([pa.array(c) for c in np.array_split(values, n_chunks)])


def test_pyarrow_arrays():
    s, r, o = base_batch()
    expected = ref_ndcg(s, r, o, k=K)
    close(fastndcg.ndcg(pa.array(s), pa.array(r), pa.array(o), k=K), expected)
    close(fastndcg.dcg(pa.array(s), pa.array(r), pa.array(o), k=None),
          reference.dcg(s.tolist(), r.tolist(), o.tolist(), k=None))


def test_pyarrow_chunked_arrays():
    s, r, o = base_batch()
    expected = ref_ndcg(s, r, o, k=K)
    cs, cr, co = chunked(s), chunked(r), chunked(o)
    assert cs.num_chunks == cr.num_chunks == co.num_chunks == 3
    close(fastndcg.ndcg(cs, cr, pa.array(o), k=K), expected)
    close(fastndcg.ndcg(s, r, co, k=K), expected)


@pytest.mark.parametrize("kind", ["array", "chunked"])
@pytest.mark.parametrize("id_type", ["str", "int"])
def test_pyarrow_query_ids(kind, id_type):
    s, r, o = base_batch()
    rng = np.random.default_rng(3)
    ids = rng.integers(0, 6, len(s))  # scattered: rows of one id are not adjacent
    ids = ids.astype(str) if id_type == "str" else ids
    col = pa.array(ids) if kind == "array" else chunked(ids, 4)
    expected = ref_ndcg(s, r, query_ids=ids, k=K, ties="stable")
    close(fastndcg.ndcg(s, r, query_ids=col, k=K, ties="stable"), expected)
    close(fastndcg.ndcg(chunked(s), chunked(r), query_ids=col, k=K, ties="stable"), expected)


# --------------------------------------------------------------------------- pandas

def test_pandas_series():
    pd = pytest.importorskip("pandas")
    s, r, o = base_batch()
    expected = ref_ndcg(s, r, o, k=K)
    close(fastndcg.ndcg(pd.Series(s), pd.Series(r), pd.Series(o), k=K), expected)
    # a Series with a non-default index is used by position
    close(fastndcg.ndcg(pd.Series(s, index=np.arange(len(s))[::-1] * 3),
                        pd.Series(r, index=np.arange(len(r)) + 100),
                        pd.Series(o), k=K), expected)
    frame = pd.DataFrame({"q": np.repeat([f"q{i}" for i in range(len(o) - 1)], np.diff(o)),
                          "s": s, "r": r}).sample(frac=1.0, random_state=0)
    close(fastndcg.ndcg(frame["s"], frame["r"], query_ids=frame["q"], k=K),
          ref_ndcg(frame["s"].to_numpy(), frame["r"].to_numpy(),
                   query_ids=frame["q"].to_numpy(), k=K))


# --------------------------------------------------------------------------- callers' arrays

def test_callers_arrays_are_not_modified():
    s, r, o = base_batch()
    s[[2, 9, 30]] = np.nan
    r[[3, 12, 40]] = [-1, -3, -1]
    ids = np.random.default_rng(5).integers(0, 5, len(s))  # scattered: forces regrouping
    s0, r0, o0, ids0 = s.copy(), r.copy(), o.copy(), ids.copy()
    kw = dict(nan_scores="last", negative_labels="zero")
    out = [
        fastndcg.ndcg(s, r, o, k=K, **kw),
        fastndcg.ndcg(s, r, query_ids=ids, k=K, **kw),
        fastndcg.dcg(s, r, query_ids=ids, k=None, ties="stable", **kw),
        fastndcg.idcg(r, query_ids=ids, k=K, negative_labels="zero"),
        fastndcg.ndcg(s, r, o, k=K, gain=[0.0, 1.0, 3.0, 7.0, 15.0], **kw),
    ]
    assert np.array_equal(s, s0, equal_nan=True)
    assert np.array_equal(np.signbit(s), np.signbit(s0))  # -0.0 stays -0.0
    assert np.array_equal(r, r0) and np.array_equal(o, o0) and np.array_equal(ids, ids0)
    assert s.dtype == np.float64 and r.dtype == np.int64
    close(out[0], ref_ndcg(s, r, o, k=K, **kw))
    close(out[1], ref_ndcg(s, r, query_ids=ids, k=K, **kw))


# --------------------------------------------------------------------------- lists, queries

def test_plain_python_lists():
    # the README example: query 0 = (0.9, 2), (0.3, 0), (0.3, 1); query 1 = (0.8, 1), (0.1, 0)
    scores, labels, offsets = [0.9, 0.3, 0.3, 0.8, 0.1], [2, 0, 1, 1, 0], [0, 3, 5]
    got = fastndcg.ndcg(scores, labels, offsets, k=[1, 3])
    close(got, reference.ndcg(scores, labels, offsets, k=[1, 3]))
    same(got, fastndcg.ndcg(np.array(scores), np.array(labels), np.array(offsets), k=[1, 3]))
    # query 1 is ranked ideally; query 0 has its best item first, so NDCG@1 = 1
    assert got[:, 0].tolist() == [1.0, 1.0] and got[1, 1] == 1.0 and got[0, 1] < 1.0
    close(fastndcg.ndcg(scores, labels, query_ids=["a", "a", "a", "b", "b"], k=[1, 3]), got)


def test_integer_list_scores():
    scores, labels = [3, 1, 2, 2, 0], [1, 0, 2, 0, 1]
    close(fastndcg.ndcg(scores, labels, [0, 2, 5], k=2),
          reference.ndcg(scores, labels, [0, 2, 5], k=2))


def test_no_offsets_no_query_ids_is_one_query():
    s, r, o = base_batch()
    whole = fastndcg.ndcg(s, r, k=K)
    assert whole.shape == (1, len(K))
    same(whole, fastndcg.ndcg(s, r, np.array([0, len(s)]), k=K))
    same(whole, fastndcg.ndcg(s, r, query_ids=np.zeros(len(s), np.int64), k=K))
    close(whole, ref_ndcg(s, r, k=K))
    same(fastndcg.idcg(r, k=5), fastndcg.idcg(r, [0, len(r)], k=5))
    assert fastndcg.dcg(s, r, k=None).shape == (1,)


def test_no_rows_no_offsets_is_one_empty_query():
    s, r = np.zeros(0), np.zeros(0, np.int64)
    # one query without items: IDCG = 0, so the zero_idcg policy decides
    assert fastndcg.ndcg(s, r).tolist() == [0.0]
    assert fastndcg.ndcg(s, r, zero_idcg="one").tolist() == [1.0]
    assert reference.ndcg([], []) == [0.0]


# --------------------------------------------------------------------------- results

def test_result_dtype_and_shape():
    s, r, o = base_batch()
    n_q = len(o) - 1
    for k in (5, None, np.int64(5), np.uint8(3)):
        for out in (fastndcg.ndcg(s, r, o, k=k), fastndcg.dcg(s, r, o, k=k),
                    fastndcg.idcg(r, o, k=k)):
            assert out.dtype == np.float64 and out.shape == (n_q,)
            assert out.flags.c_contiguous
    for k in ([5], (3,), [10, 1, 10], np.array([2, 4])):
        for out in (fastndcg.ndcg(s, r, o, k=k), fastndcg.dcg(s, r, o, k=k),
                    fastndcg.idcg(r, o, k=k)):
            assert out.dtype == np.float64 and out.shape == (n_q, len(k))


def test_columns_in_the_users_order():
    s, r, o = base_batch()
    for name, call in [("ndcg", lambda k: fastndcg.ndcg(s, r, o, k=k)),
                       ("dcg", lambda k: fastndcg.dcg(s, r, o, k=k)),
                       ("idcg", lambda k: fastndcg.idcg(r, o, k=k))]:
        multi = call([10, 1, 10])
        same(multi[:, 0], call(10))
        same(multi[:, 1], call(1))
        same(multi[:, 2], call(10))
        assert not np.array_equal(multi[:, 0], multi[:, 1]), name  # the columns differ
        rev = call([50, 3, 1])
        same(rev, call([1, 3, 50])[:, ::-1])


def test_empty_batch():
    s, r = np.zeros(0), np.zeros(0, np.int64)
    for offsets in ([0], np.array([0], np.int64), pa.array([0], pa.int64())):
        for k, shape in ((10, (0,)), (None, (0,)), ([1, 5, 10], (0, 3))):
            for out in (fastndcg.ndcg(s, r, offsets, k=k), fastndcg.dcg(s, r, offsets, k=k),
                        fastndcg.idcg(r, offsets, k=k)):
                assert out.dtype == np.float64 and out.shape == shape
    out = fastndcg.ndcg(s, r, query_ids=np.zeros(0, np.int64), k=[1, 2])
    assert out.dtype == np.float64 and out.shape == (0, 2)


def test_empty_queries_inside_a_batch():
    s, r = np.array([1.0, 0.5]), np.array([1, 0], np.int64)
    # queries 0, 2 and 3 have no rows: IDCG 0 -> zero_idcg; query 1 is ranked ideally
    out = fastndcg.ndcg(s, r, [0, 0, 2, 2, 2], k=[1, 5], zero_idcg="nan")
    assert out.shape == (4, 2)
    assert np.isnan(out[[0, 2, 3]]).all() and out[1].tolist() == [1.0, 1.0]
