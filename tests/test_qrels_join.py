"""The qrels join and trec_eval's tie order, by kind of document id.

Integer document ids are joined and ordered as numbers (``fastndcg._kernels.join``),
string ids from Arrow's bytes; both must give exactly what the string rule gives
(trec_eval compares docnos as strings: "9" > "10", "-" before the digits). Checked
here against Python's own string order, against the string path on the same ids
written as text, and against ``fastndcg.reference``, on random and tie-heavy data
(hypothesis); plus duplicates as errors, mixed id types, and the TREC text readers'
fast path against the careful one on the real files in tests/data/real.
"""

from __future__ import annotations

import contextlib
import gzip
from collections import defaultdict
from pathlib import Path
from unittest import mock

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fastndcg
from fastndcg import io, partition, qrels, reference
from fastndcg.chunks import Chunk
from fastndcg.qrels import _per_query, kernel_ids

from strategies import examples

SETTINGS = settings(max_examples=examples(0.6), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
REAL = Path(__file__).parent / "data" / "real"
INT64_MIN, INT64_MAX = -(2 ** 63), 2 ** 63 - 1

# ids whose decimal strings order differently from their values: prefixes of one
# another (1, 10, 100), digit counts, signs, and 19-digit neighbours (2m, 2m + 1)
SPECIAL = [0, 1, 9, 10, 11, 19, 100, 190, 1000, 2, 20, 200, 99, 999, -1, -10, -9, -100,
           -19, 5, 50, 500000000000000000, 5000000000000000000, INT64_MAX, INT64_MAX - 1,
           INT64_MIN, INT64_MIN + 1, 1000000000000000000, 999999999999999999,
           1234567890123456788, 1234567890123456789, 123456789012345678, -922337203685477580]

int_ids = st.one_of(
    st.sampled_from(SPECIAL),
    st.integers(INT64_MIN, INT64_MAX),
    st.integers(-1000, 1000),
    st.builds(lambda m, e: m * 10 ** e, st.integers(1, 99), st.integers(0, 17)).filter(
        lambda x: x <= INT64_MAX),
    st.integers(10 ** 18, 10 ** 18 + 300),  # 19 digits, close together: key ties
)


def _order(ids: list, offsets: list[int], in_kernel: bool = False) -> list[int]:
    """fastndcg's trec order (rows of each query by id descending as strings); keys
    sorted by NumPy, or (``in_kernel``) by the kernels' own sort."""
    arr = pa.array(ids, pa.int64() if isinstance(ids[0], int) else pa.large_string())
    chunk = Chunk(pa.array(range(len(offsets) - 1)), np.asarray(offsets, np.int64),
                  pa.table({"doc": arr}))
    with mock.patch.object(qrels, "_sorted_keys", lambda *a: (qrels._NO_KEYS, qrels._NO_SKIPS)) \
            if in_kernel else contextlib.nullcontext():
        _, order, dup = _per_query(chunk, kernel_ids(arr, arr.type != pa.int64()),
                                   order=np.ones(len(offsets) - 1, bool))
    assert dup is None
    return order.tolist()


def _expected(ids: list, offsets: list[int]) -> list[int]:
    out = []
    for lo, hi in zip(offsets[:-1], offsets[1:]):
        out += sorted(range(lo, hi), key=lambda i: str(ids[i]).encode(), reverse=True)
    return out


@st.composite
def grouped(draw, ids, max_groups=4, max_size=40):
    groups = draw(st.lists(st.lists(ids, unique=True, max_size=max_size), min_size=1,
                           max_size=max_groups))
    offsets = [0]
    for g in groups:
        offsets.append(offsets[-1] + len(g))
    flat = [x for g in groups for x in g]
    return (flat, offsets) if flat else ([0], [0, 1])


@SETTINGS
@given(grouped(int_ids), st.booleans())
def test_int_trec_order_is_decimal_string_order(case, in_kernel):
    ids, offsets = case
    assert _order(ids, offsets, in_kernel) == _expected(ids, offsets)


@SETTINGS
@given(grouped(int_ids))
def test_int_order_equals_string_order_of_the_same_ids(case):
    ids, offsets = case
    assert _order(ids, offsets) == _order([str(x) for x in ids], offsets)


text_ids = st.one_of(
    st.text(alphabet="ab01-_.#é", max_size=12),
    st.builds(lambda p, s: p + s, st.sampled_from(["", "clueweb09-en0000-", "doc", "x" * 20]),
              st.text(alphabet="0123456789", max_size=6)),
)


@SETTINGS
@given(grouped(text_ids, max_size=80), st.booleans())
def test_string_trec_order_is_byte_order(case, in_kernel):
    ids, offsets = case
    assert _order(ids, offsets, in_kernel) == _expected(ids, offsets)


@pytest.mark.parametrize("make", [
    # long shared prefixes beyond the 8 key bytes, with one outlier that keeps the
    # group's common prefix short: runs of equal keys, sorted exactly
    lambda i: ("z" if i == 0 else "a" * 12 + f"{i:05d}"),
    lambda i: f"{i % 7}" + "-shared-part-" + f"{i:06d}",
    lambda i: 10 ** 18 + i,  # 19 digits: position bits eat the key's low bits
    lambda i: (i * 7919) % 1000 * 10 ** (i % 15),  # prefixes of one another
    lambda i: -i if i % 2 else i,
])
def test_long_group_order(make):
    ids = list(dict.fromkeys(make(i) for i in range(3000)))
    offsets = [0, 1000, len(ids)]
    assert _order(ids, offsets) == _expected(ids, offsets)
    assert _order(ids, offsets, in_kernel=True) == _expected(ids, offsets)


@pytest.mark.parametrize("make", [lambda i: f"{i % 7}-shared-part-{i:06d}", lambda i: i * 37 % 5000])
def test_long_group_among_short_ones(make):
    # too ragged to pad into one sorted 2-D array: each query sorted in the kernel
    ids = [make(i) for i in range(1500)] + [make(i) for i in range(3000)]
    offsets = [0, 1500] + list(range(1501, 4501))
    assert _order(ids, offsets) == _expected(ids, offsets)
    # ...and the same ids in equal groups, sorted by NumPy
    even = list(range(0, 4501, 500))
    assert _order(ids, even) == _expected(ids, even)


@pytest.mark.parametrize("low_bits, n_low", [(4, 17), (6, 30), (8, 30)])
def test_sort_keys_past_the_spread_rounds(low_bits, n_low):
    # powers of two spread so widely that each round of the spread sort peels off
    # only a few, with a cluster of small keys below them: the cluster is still
    # over 16 keys after the 8 rounds and goes to the heapsort (checked under
    # NUMBA_DISABLE_JIT for these cases)
    from fastndcg._kernels.join import _sort_keys

    keys = np.array([1 << i for i in range(low_bits, 64)] + list(range(n_low)), np.uint64)
    a = np.random.default_rng(low_bits).permutation(keys)
    n = len(a)
    buckets = 1 << int(np.ceil(np.log2(n)))
    _sort_keys(a, n, np.empty(n, np.uint64), np.empty(2 * buckets + 1, np.int64),
               np.empty(3 * (n // 16 + 1), np.int64))
    assert a.tolist() == sorted(keys.tolist())


def test_empty_and_single_groups():
    assert _order([5, 7, 6], [0, 0, 1, 1, 3, 3]) == [0, 1, 2]


# --------------------------------------------------------------------------- joins

@st.composite
def run_and_qrels(draw, doc_ids):
    """A run (tied scores, unjudged docs) and its qrels (judged docs not retrieved,
    run queries without judgments, a judged query absent from the run)."""
    n_q = draw(st.integers(1, 6))
    rows, judgments = [], {}
    for q in range(n_q):
        docs = draw(st.lists(doc_ids, unique=True, max_size=12))
        rows += [(q, d, draw(st.sampled_from([0.0, 0.5, 1.0, 2.0]))) for d in docs]
        if draw(st.integers(0, 4)) == 0:
            continue  # no judgments for this run query
        extra = draw(st.lists(doc_ids, unique=True, max_size=4))
        for d in dict.fromkeys(docs + extra):
            if d not in docs or draw(st.booleans()):
                judgments[(q, d)] = draw(st.integers(0, 3))
    judgments[(n_q + 1, draw(doc_ids))] = 2  # judged, not in the run
    if not rows:
        rows.append((0, draw(doc_ids), 1.0))
    if not any(q in {j for j, _ in judgments} for q, _, _ in rows):
        q, d, _ = rows[0]
        judgments[(q, d)] = 1  # at least one run query judged (else a clear error)
    return rows, judgments


def _tables(rows, judgments, run_doc_type, qrels_doc_type):
    def docs(values, t):
        # "string32": Arrow's string (32-bit offsets), as Parquet reads text; the
        # run's short ids are packed from it without widening
        text = t in ("string", "string32")
        return pa.array([str(v) for v in values] if text else values,
                        pa.string() if t == "string32" else
                        pa.large_string() if text else pa.int64())
    run = pa.table({"query_id": pa.array([r[0] for r in rows], pa.int64()),
                    "doc_id": docs([r[1] for r in rows], run_doc_type),
                    "score": pa.array([r[2] for r in rows])})
    qrels = pa.table({"query_id": pa.array([q for q, _ in judgments], pa.int64()),
                      "doc_id": docs([d for _, d in judgments], qrels_doc_type),
                      "label": pa.array(list(judgments.values()), pa.int64())})
    return run, qrels


def _oracle(rows, judgments, ties, k, complete):
    judged = defaultdict(list)
    for (q, _), rel in judgments.items():
        judged[q].append(rel)
    by_q = defaultdict(list)
    for q, d, s in rows:
        by_q[q].append((d, s))
    out = {}
    for q, items in by_q.items():
        if q in judged:
            docs = [str(d) for d, _ in items]
            labels = [judgments.get((q, d), 0) for d, _ in items]
            out[q] = [reference.ndcg_query([s for _, s in items], labels, c, ties=ties,
                                           doc_ids=docs, ideal_labels=judged[q]) for c in k]
    if complete:
        for q in judged:
            if q not in by_q:
                out[q] = [0.0 for _ in k]
    return out


K = [1, 3, 10, None]


def _values(report) -> dict:
    per = report.per_query
    names = [n for n in per.column_names if n.startswith("ndcg@") or n == "ndcg"]
    return {q: [per[n][i].as_py() for n in names]
            for i, q in enumerate(per["query_id"].to_pylist())}


@SETTINGS
@given(run_and_qrels(int_ids), st.sampled_from(["trec", "average", "stable", "optimistic"]),
       st.booleans(), st.integers(1, 5))
def test_numeric_join_equals_string_join_and_reference(case, ties, complete, batch_rows):
    rows, judgments = case
    reports = {}
    for kinds in [("int", "int"), ("string", "string"), ("int", "string"), ("string", "int"),
                  ("string32", "string"), ("string32", "string32"), ("string32", "int")]:
        run, qrels = _tables(rows, judgments, *kinds)
        reports[kinds] = fastndcg.evaluate(run, qrels=qrels, ties=ties, k=K, complete=complete,
                                           batch_rows=batch_rows, explain=True)
    first = reports[("int", "int")]
    for kinds, report in reports.items():
        # bit-identical, explaining columns (judged@K, ...) included: same labels, same order
        assert report.per_query.equals(first.per_query), kinds
        assert (report.n_unjudged, report.n_missing) == (first.n_unjudged, first.n_missing)
    want = _oracle(rows, judgments, ties, K, complete)
    got = _values(first)
    assert set(got) == set(want)
    for q, values in got.items():
        np.testing.assert_allclose(values, want[q], rtol=1e-12, atol=1e-15)


@SETTINGS
@given(run_and_qrels(text_ids.filter(bool)), st.sampled_from(["trec", "average"]))
def test_string_join_equals_reference(case, ties):
    rows, judgments = case
    run, qrels = _tables(rows, judgments, "string", "string")
    report = fastndcg.evaluate(run, qrels=qrels, ties=ties, k=K)
    want = _oracle(rows, judgments, ties, K, False)
    got = _values(report)
    assert set(got) == set(want)
    for q, values in got.items():
        np.testing.assert_allclose(values, want[q], rtol=1e-12, atol=1e-15)


def test_judged_rows_match_the_pairs_in_the_qrels():
    run = pa.table({"query_id": [1, 1, 1, 2, 2, 3], "doc_id": [10, 9, 100, 9, 7, 10],
                    "score": [1.0, 1.0, 1.0, 0.5, 0.5, 0.1]})
    qrels = pa.table({"query_id": [1, 1, 2, 4], "doc_id": [9, 100, 10, 10],
                      "label": pa.array([0, 2, 1, 3], pa.int64())})
    report = fastndcg.evaluate(run, qrels=qrels, ties="trec", k=[1, 3], explain=["judged"])
    # query 1 in trec order: "9" (judged), "100" (judged), "10" (not); query 2: none
    assert report.per_query["judged@1"].to_pylist() == [1.0, 0.0]
    assert report.per_query["judged@3"].to_pylist() == [pytest.approx(2 / 3), 0.0]
    assert report.n_unjudged == 1


def test_uint64_and_mixed_query_ids():
    big = 2 ** 63 + 5
    run = pa.table({"query_id": pa.array([big, big, 1], pa.uint64()), "doc_id": [1, 2, 3],
                    "score": [1.0, 0.5, 0.2]})
    qrels = pa.table({"query_id": pa.array([big, 1], pa.uint64()), "doc_id": [2, 3],
                      "label": pa.array([1, 1], pa.int64())})
    report = fastndcg.evaluate(run, qrels=qrels, k=[1])
    assert report.per_query["ndcg@1"].to_pylist() == [0.0, 1.0]
    as_text = qrels.set_column(0, "query_id", pa.array([str(big), "1"]))
    assert fastndcg.evaluate(run, qrels=as_text, k=[1]).per_query["ndcg@1"].to_pylist() == \
        [0.0, 1.0]


def test_uint64_doc_ids_ordered_as_strings():
    docs = [2 ** 64 - 1, 2 ** 63, 9, 10]
    run = pa.table({"query_id": [1] * 4, "doc_id": pa.array(docs, pa.uint64()),
                    "score": [1.0] * 4})
    qrels = pa.table({"query_id": [1, 1], "doc_id": pa.array([2 ** 63, 9], pa.uint64()),
                      "label": pa.array([3, 1], pa.int64())})
    report = fastndcg.evaluate(run, qrels=qrels, ties="trec", k=[1, 2], gain="linear")
    # "9223372036854775808" > "9" > "18446744073709551615" > "10"
    assert report.per_query["ndcg@1"].to_pylist() == [1.0]
    assert report.per_query["ndcg@2"].to_pylist() == [1.0]


@pytest.mark.parametrize("doc_type", ["int", "string"])
def test_duplicates_are_errors(doc_type):
    def docs(values):
        return pa.array([str(v) for v in values]) if doc_type == "string" else pa.array(values)
    run = pa.table({"query_id": [1, 1, 2, 2, 2], "doc_id": docs([4, 5, 6, 7, 6]),
                    "score": [1.0, 0.5, 0.3, 0.2, 0.1]})
    qrels = pa.table({"query_id": [1, 2], "doc_id": docs([4, 6]),
                      "label": pa.array([1, 1], pa.int64())})
    for ties in ("trec", "average"):
        with pytest.raises(ValueError, match=r"the run lists document '6' more than once for "
                                             r"query 2; keep one row per"):
            fastndcg.evaluate(run, qrels=qrels, ties=ties)
    bad_qrels = pa.table({"query_id": [1, 2, 1, 1], "doc_id": docs([4, 6, 5, 4]),
                          "label": pa.array([1, 1, 0, 2], pa.int64())})
    with pytest.raises(ValueError, match=r"judge document '4' of query 1 more than once "
                                         r"\(1 query has such duplicates\)"):
        fastndcg.evaluate(run.slice(0, 2), qrels=bad_qrels)
    log = run.append_column("label", pa.array([1, 0, 1, 0, 1], pa.int64()))
    with pytest.raises(ValueError, match=r"the log lists document '6' more than once for "
                                         r"query 2"):
        fastndcg.evaluate(log, ties="trec")


def test_qrels_not_grouped_by_query():
    run = pa.table({"query_id": [1, 1, 2, 2], "doc_id": [5, 6, 5, 6], "score": [1.0, 0.5] * 2})
    qrels = pa.table({"query_id": [2, 1, 2, 1], "doc_id": [5, 6, 6, 5],
                      "label": pa.array([1, 2, 3, 0], pa.int64())})
    report = fastndcg.evaluate(run, qrels=qrels, k=[2], gain="linear")
    want = [reference.ndcg_query([1.0, 0.5], [0, 2], 2, gain="linear"),
            reference.ndcg_query([1.0, 0.5], [1, 3], 2, gain="linear")]
    np.testing.assert_allclose(report.per_query["ndcg@2"].to_numpy(), want, rtol=1e-12)


# --------------------------------------------------------------------------- tied queries only
# trec_eval's order is computed only for the queries whose scores tie (two equal,
# -0.0 equal to 0.0, or a NaN): the others rank the same in any order.

def test_tie_check_finds_every_tie():
    off = np.array([0, 2, 4, 7, 9, 10, 10, 1010], np.int64)
    scores = np.concatenate(([1.0, 1.0], [0.0, -0.0], [3.0, np.nan, 2.0], [5.0, 6.0], [1.0],
                             np.arange(1000.0)))
    scores[-1] = scores[7 + 3]  # the long query's only tie: its first and last rows
    want = [True, True, True, False, False, False, True]
    for dtype in (np.float64, np.float32):
        assert fastndcg._core.tied_queries(off, scores.astype(dtype)).tolist() == want
    distinct = np.arange(1000.0)
    assert fastndcg._core.tied_queries(np.array([0, 500, 1000]), distinct) is None
    for first, last in [(0, 999), (0, 1), (998, 999), (3, 999)]:
        s = distinct.copy()
        s[last] = s[first]
        assert fastndcg._core.tied_queries(np.array([0, 1000]), s).tolist() == [True]
    # a NaN alone ties (its rank is then decided by the NaN policy's order)
    assert fastndcg._core.tied_queries(np.array([0, 1]), np.array([np.nan])).tolist() == [True]
    # scores in order (one pass over neighbours), or in order up to a row
    for scores, tied in [([3.0, 2.0, 1.0], False), ([1.0, 2.0, 3.0], False),
                         ([3.0, 2.0, 2.0, 1.0], True), ([1.0, 0.0, -0.0, -1.0], True),
                         ([-1.0, -0.0, 0.0], True), ([3.0, 2.0, 1.0, np.nan], True),
                         ([3.0, 2.0, 1.0, 3.0], True), ([3.0, 2.0, 1.0, 1.5], False),
                         ([1.0, 1.0], True), ([-np.inf, np.inf, -np.inf], True),
                         ([np.inf, 5.0, -np.inf], False)]:
        for dtype in (np.float64, np.float32):
            got = fastndcg._core.tied_queries(np.array([0, len(scores)]),
                                              np.array(scores, dtype))
            assert (got is not None) == tied, (scores, dtype)
    descending = np.arange(1000.0)[::-1].copy()
    descending[-1] = descending[0]
    assert fastndcg._core.tied_queries(np.array([0, 1000]), descending).tolist() == [True]
    # lists whose hash table is capped (more than 2**16 / 8 rows) or sized by the list
    rng = np.random.default_rng(7)
    for n in (9_000, 40_000, 200_000):
        s = rng.permutation(n).astype(np.float64)
        assert fastndcg._core.tied_queries(np.array([0, 5, n]), s) is None
        i, j = 5 + rng.choice(n - 5, 2, replace=False)
        s[i] = s[j]
        got = fastndcg._core.tied_queries(np.array([0, 5, n]), s)
        assert got is not None and got.tolist() == [False, True], n


@pytest.mark.parametrize("doc_type", ["int", "string"])
@pytest.mark.parametrize("labelled", [False, True])
def test_only_tie_between_first_and_last_rows_is_broken_by_doc_id(doc_type, labelled):
    """A query of distinct scores except its first and last rows: trec_eval puts the
    last row first (its document id is larger), which input order would not."""
    n = 300
    scores = list(np.linspace(1.0, 0.0, n))
    scores[-1] = scores[0]
    docs = [1000 + i for i in range(n)]  # descending ids: the last row comes first
    labels = [0] * n
    labels[-1] = 3
    ids = [str(d) for d in docs] if doc_type == "string" else docs
    table = pa.table({"query_id": [7] * n, "doc_id": ids, "score": scores})
    want = [reference.ndcg_query(scores, labels, c, ties="trec", doc_ids=[str(d) for d in docs])
            for c in (1, 3)]
    assert want[0] == 1.0
    for check_from in (0, partition._TIE_CHECK_ROWS):  # the check, and a small chunk whole
        with mock.patch.object(partition, "_TIE_CHECK_ROWS", check_from):
            if labelled:
                report = fastndcg.evaluate(table.append_column("label", pa.array(labels)),
                                           ties="trec", k=[1, 3])
            else:
                qrels = pa.table({"query_id": [7], "doc_id": ids[-1:], "label": pa.array([3])})
                report = fastndcg.evaluate(table, qrels=qrels, ties="trec", k=[1, 3])
        assert [report.per_query[f"ndcg@{c}"][0].as_py() for c in (1, 3)] == want


MEASURES = ["ndcg_cut_1", "ndcg_cut_5", "ndcg", "map", "recip_rank", "P_3", "recall_5",
            "judged@5", "rbp", "bpref", "Rprec"]


@st.composite
def mixed_ties(draw, doc_ids):
    """A run whose queries draw their scores from a tiny set (ties, -0.0 beside 0.0)
    or from distinct values, and its qrels."""
    rows, judgments = [], {}
    for q in range(draw(st.integers(1, 6))):
        docs = draw(st.lists(doc_ids, unique=True, min_size=1, max_size=14))
        if draw(st.booleans()):
            scores = draw(st.lists(st.sampled_from([0.0, -0.0, 0.5, 1.0]), min_size=len(docs),
                                   max_size=len(docs)))
        else:
            scores = draw(st.lists(st.floats(-5, 5, allow_subnormal=False), unique=True,
                                   min_size=len(docs), max_size=len(docs)))
            if draw(st.booleans()):
                scores.sort(reverse=draw(st.booleans()))  # in order, as runs usually are
            if len(docs) > 1 and draw(st.booleans()):
                a, b = draw(st.sampled_from([(0, len(docs) - 1), (0, 1), (len(docs) - 2,
                                                                           len(docs) - 1)]))
                scores[b] = scores[a]  # a single tie, at the ends of the list
        rows += [(q, d, s) for d, s in zip(docs, scores)]
        for d in docs:
            if draw(st.booleans()):
                judgments[(q, d)] = draw(st.integers(0, 3))
    if not judgments:
        judgments[rows[0][:2]] = 1
    return rows, judgments


def _all_queries_ordered(offsets, scores):
    return np.ones(len(offsets) - 1, bool)


@SETTINGS
@given(mixed_ties(int_ids), st.sampled_from(["int", "string"]), st.booleans(),
       st.integers(1, 5))
def test_tied_queries_only_equal_every_query_ordered_and_reference(case, doc_type, labelled,
                                                                   batch_rows):
    """Bit-identical to putting every query in trec order (the order of queries
    without ties does not matter), and equal to the reference."""
    rows, judgments = case
    run, qrels = _tables(rows, judgments, doc_type, doc_type)
    if labelled:
        run = run.append_column("label", pa.array([judgments.get((q, d), 0) for q, d, _ in rows],
                                                  pa.int64()))
        qrels = None
    measures = MEASURES[:3] if labelled else MEASURES

    def evaluate():
        return fastndcg.evaluate(run, qrels=qrels, ties="trec", measure=measures,
                                 batch_rows=batch_rows, explain=True).per_query

    with mock.patch.object(partition, "_TIE_CHECK_ROWS", 0):  # every chunk checked
        got = evaluate()
        with mock.patch.object(fastndcg._core, "tied_queries", _all_queries_ordered):
            every = evaluate()
    assert got.equals(every) and evaluate().equals(every)  # and small chunks ordered whole
    # trec_eval's ndcg (linear gains); the ideal list is the query's judgments (in
    # list mode: its labels)
    by_q = defaultdict(list)
    for q, d, s in rows:
        by_q[q].append((str(d), s, judgments.get((q, d), 0)))
    ideal = defaultdict(list)
    for (q, _), g in judgments.items():
        ideal[q].append(g)
    want = {q: [reference.ndcg_query([s for _, s, _ in it], [g for _, _, g in it], c,
                                     gain="linear", ties="trec", doc_ids=[d for d, _, _ in it],
                                     ideal_labels=None if labelled else ideal[q])
                for c in (1, 5, None)]
            for q, it in by_q.items() if labelled or q in ideal}
    values = {q: [got[n][i].as_py() for n in ("ndcg@1", "ndcg@5", "ndcg")]
              for i, q in enumerate(got["query_id"].to_pylist())}
    assert set(values) == set(want)
    for q, v in values.items():
        np.testing.assert_allclose(v, want[q], rtol=1e-12, atol=1e-15)


# --------------------------------------------------------------------------- TREC readers

REAL_FILES = sorted((REAL / "runs").glob("*.gz")) + sorted((REAL / "qrels").glob("*.gz"))


def _read_both(path: Path, text: bytes | None = None, tmp_path: Path | None = None):
    """(fast table or None when the fast path refuses the file, careful table)."""
    if text is not None:
        path = tmp_path / path.name.replace(".gz", "")
        path.write_bytes(text)
    is_run = "run" in path.name
    fields, take = ((io._RUN_FIELDS, io.run_columns()) if is_run
                    else (io._QREL_FIELDS, io.qrels_columns()))
    careful = io._read_trec(str(path), fields, take, strict=not is_run, careful=True)
    first = path.open("rb").readline() if not path.name.endswith(".gz") else \
        gzip.open(path).readline()
    try:
        fast = io._fast_read(str(path), fields, take, "\t" if b"\t" in first else " ")
    except pa.ArrowException:
        fast = None
    read = io.read_trec_run if is_run else io.read_trec_qrels
    assert read(path).equals(careful), path  # whichever path the reader takes
    return fast, careful


@pytest.mark.parametrize("path", REAL_FILES, ids=lambda p: p.name)
def test_fast_reader_equals_careful_reader_on_real_files(path, tmp_path):
    fast, careful = _read_both(path)
    # covid-round5's qrels have two spaces before the docno: the careful reader's job
    assert (fast is None) == (path.name == "qrels.covid-round5.txt.gz"), path
    if fast is not None:
        assert fast.equals(careful)
        assert all(c.num_chunks == 1 for c in fast.columns)
    # the same lines with tabs, with CRLF line ends, and behind a byte-order mark
    text = gzip.open(path).read()
    lines = text.split(b"\n")[:3000]
    variants = {"tabs": b"\n".join(b"\t".join(l.split()) for l in lines),
                "crlf": b"\r\n".join(lines), "bom": b"\xef\xbb\xbf" + b"\n".join(lines)}
    for name, variant in variants.items():
        fast, careful = _read_both(path, variant, tmp_path)
        if fast is not None:
            assert fast.equals(careful), name


@pytest.mark.parametrize("prefix", ["", "a-document-id-longer-than-8-bytes-"])
@pytest.mark.parametrize("ties", ["average", "trec"])
def test_narrow_text_ids_equal_wide(prefix, ties):
    """Query and document ids as Arrow's string (32-bit offsets), sliced (a non-zero
    array offset), score as the same ids in large_string, short (packed) or long, in
    qrels mode and with the scattered queries' check; a document listed twice is
    refused the same way."""
    rng = np.random.default_rng(5)
    n = 3_000
    q = np.sort(rng.integers(0, 300, n))[::-1]  # not increasing: repeated ids are looked for
    d = rng.integers(0, 40, n)
    keep = np.unique(np.stack([q, d]), axis=1, return_index=True)[1]
    q, d = q[np.sort(keep)], d[np.sort(keep)]
    s = rng.integers(0, 5, len(q)).astype(np.float64)
    judged = rng.random(len(q)) < 0.3
    labels = rng.integers(0, 3, judged.sum())

    def table(qq, dd, values, name, t):
        return pa.table({"query_id": pa.array([f"q{v}" for v in qq], t),
                         "doc_id": pa.array([f"{prefix}{v}" for v in dd], t), name: values})

    reports = []
    for t in (pa.large_string(), pa.string()):
        pad = table([0], [0], [0.0], "score", t)
        run = pa.concat_tables([pad, table(q, d, s, "score", t)]).combine_chunks().slice(1)
        qrels = table(q[judged], d[judged], labels, "label", t)
        reports.append(fastndcg.evaluate(run, qrels=qrels, ties=ties, k=[1, 3, 10],
                                         batch_rows=97))
        twice = pa.concat_tables([run.slice(0, 2), run.slice(1, 1), run.slice(2)])
        with pytest.raises(ValueError, match="more than once"):
            fastndcg.evaluate(twice, qrels=qrels, ties=ties)
    assert reports[0].per_query.column("ndcg@10").to_pylist() == \
        reports[1].per_query.column("ndcg@10").to_pylist()
    assert reports[0].per_query.column("query_id").to_pylist() == \
        reports[1].per_query.column("query_id").to_pylist()
    assert reports[0].per_query.num_rows > 100
