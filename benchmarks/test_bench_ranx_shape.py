"""ranx's own benchmark shape, side by side in one process (pytest-benchmark).

The shape of ranx's efficiency test (``dev/efficiency_test.ipynb`` of AmenRa/ranx):
queries of 100 retrieved documents with uniform random scores, each query judging
1-9 of them with grades 1-5. Group ``ranx-shape`` (NDCG@10, the join included,
ranx's semantics: linear gain), one benchmark per system:

* ``ranx typed lists`` -- ``ranx.evaluate`` on the typed lists its ``Qrels`` and
  ``Run`` convert to (``to_typed_list``; the conversion, which also sorts each
  query, is not timed), as ranx's paper times it;
* ``ranx Run/Qrels`` -- ``ranx.evaluate(qrels, run, ...)`` on ``Qrels``/``Run``
  built beforehand (its API; the conversion is timed);
* ``fastndcg`` on Arrow tables of the run and the qrels, int64 and string ids,
  with the default semantics (``gain="linear"``) and each preset that reads this
  shape (``ranx``, ``trec_eval``, ``pytrec_eval``).

Group ``whole-lists``: the whole-list measures on the joined CSR arrays of the same
shape (``fastndcg.ndcg(k=None)`` float32 and float64, ``fastndcg.measure`` for AP
and R-precision), against the bandwidth probe over the same two arrays.

Before anything is timed, every system's per-query NDCG@10 is checked against
ranx's, to 1e-12 (the scores are distinct, so ranx's arbitrary order of ties
never arises). Times are medians of the rounds (``MEDIAN_GROUPS`` in
``scripts/bench_report.py``). Sizes: 2,000 queries by default (200,000 rows),
200,000 queries (20M rows, the figure the docs give) with
``FASTNDCG_BENCH_FULL=1``; building ranx's objects takes about a minute there.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from benchmarks import _data
from benchmarks import _peers as P

QUICK = _data.is_quick()
N_QUERIES = 2_000 if QUICK else 200_000
DOCS = 100
ROUNDS = 3 if QUICK else 5


class Shape:
    """The run and qrels of ranx's shape as Arrow tables (int64 and string ids), as
    ranx's objects, and as joined CSR arrays."""

    def __init__(self, n_q: int, seed: int = 42) -> None:
        rng = np.random.default_rng(seed)
        self.n_queries, self.n_rows = n_q, n_q * DOCS
        q = np.repeat(np.arange(n_q), DOCS)
        d = np.tile(np.arange(DOCS), n_q)
        self.scores = rng.uniform(0, 1, n_q * DOCS)
        n_rel = rng.integers(1, 10, n_q)
        qq = np.repeat(np.arange(n_q), n_rel)
        dd = np.concatenate([rng.choice(DOCS, k, replace=False) for k in n_rel])
        gg = rng.integers(1, 6, len(qq)).astype(np.int32)
        self.tables = {
            "int": (pa.table({"query_id": q, "doc_id": d, "score": self.scores}),
                    pa.table({"query_id": qq, "doc_id": dd, "label": gg})),
            "string": (pa.table({"query_id": _text("q", q), "doc_id": _text("d", d),
                                 "score": self.scores}),
                       pa.table({"query_id": _text("q", qq), "doc_id": _text("d", dd),
                                 "label": gg})),
        }
        labels = np.zeros(n_q * DOCS, np.int32)
        labels[qq * DOCS + dd] = gg
        self.labels = labels
        self.offsets = np.arange(0, n_q * DOCS + 1, DOCS, dtype=np.int64)
        self.judged = (qq, dd, gg)

    def ranx(self):
        """(Qrels, Run) of ranx, built from dicts as its users build them."""
        import ranx

        qq, dd, gg = self.judged
        qrels: dict = {}
        for a, b, g in zip(qq.tolist(), dd.tolist(), gg.tolist()):
            qrels.setdefault(f"q{a}", {})[f"d{b}"] = g
        run = {}
        docs = [f"d{j}" for j in range(DOCS)]
        s = self.scores.reshape(-1, DOCS).tolist()
        for i in range(self.n_queries):
            run[f"q{i}"] = dict(zip(docs, s[i]))
        return ranx.Qrels.from_dict(qrels), ranx.Run.from_dict(run)


def _text(prefix: str, values: np.ndarray) -> pa.Array:
    import pyarrow.compute as pc
    return pc.binary_join_element_wise(prefix, pa.array(values).cast(pa.string()), "")


@pytest.fixture(scope="module")
def shape() -> Shape:
    return Shape(N_QUERIES)


@pytest.fixture(scope="module")
def ranx_objects(shape):
    P.require("ranx")
    with P._NumbaThreads():
        qrels, run = shape.ranx()
        got = __import__("ranx").evaluate(qrels, run, "ndcg@10", return_mean=False,
                                          make_comparable=False)
    return qrels, run, _by_query(run, got)


def _by_query(run, values) -> np.ndarray:
    """ranx's per-query values (in its Run's order of query ids) for queries 0, 1, ..."""
    out = np.empty(len(values))
    out[[int(q[1:]) for q in run.keys()]] = np.asarray(values, np.float64)
    return out


def _fastndcg_values(shape, ids: str, **options) -> np.ndarray:
    import fastndcg
    run, qrels = shape.tables[ids]
    report = fastndcg.evaluate(run, qrels=qrels, measure="ndcg@10", per_query=None,
                               **options)
    t = report.per_query
    ids_ = t.column("query_id").to_pylist()
    out = np.empty(len(ids_))
    out[[int(q[1:]) if isinstance(q, str) else q for q in ids_]] = t.column("ndcg@10").to_numpy()
    return out


def _timed(benchmark, call, system: str, role: str, n_rows: int, n_queries: int, **info):
    call()  # compiled and loaded before timing
    benchmark.pedantic(call, rounds=ROUNDS, iterations=1)
    _data.describe(benchmark, system, role=role, case=f"{n_queries:.0e}", **info)
    _data.record_rows_per_s(benchmark, n_rows, n_queries)


# --------------------------------------------------------------------------- ranx's shape

FASTNDCG = [("int", {"gain": "linear"}, "fastndcg int64 ids"),
            ("string", {"gain": "linear"}, "fastndcg string ids"),
            ("int", {"preset": "ranx"}, "fastndcg int64 ids, preset ranx"),
            ("string", {"preset": "ranx"}, "fastndcg string ids, preset ranx"),
            ("int", {"preset": "trec_eval"}, "fastndcg int64 ids, preset trec_eval"),
            ("int", {"preset": "pytrec_eval"}, "fastndcg int64 ids, preset pytrec_eval")]


@pytest.mark.benchmark(group="ranx-shape")
@pytest.mark.parametrize("ids,options,system", FASTNDCG, ids=[f[2] for f in FASTNDCG])
def test_fastndcg(benchmark, shape, ranx_objects, ids, options, system):
    import fastndcg
    want = ranx_objects[2]
    P.assert_same(want[:, None], _fastndcg_values(shape, ids, **options)[:, None],
                  what=f"{system} vs ranx")
    run, qrels = shape.tables[ids]
    _timed(benchmark, lambda: fastndcg.evaluate(run, qrels=qrels, measure="ndcg@10",
                                                per_query=False, **options),
           system, "fastndcg", shape.n_rows, shape.n_queries, ids=ids, **options)


@pytest.mark.benchmark(group="ranx-shape")
@pytest.mark.parametrize("api", ["typed lists", "Run/Qrels"])
def test_ranx(benchmark, shape, ranx_objects, api):
    import ranx
    qrels, run, want = ranx_objects
    if api == "typed lists":
        tq, tr = qrels.to_typed_list(), run.to_typed_list()

        def call():
            with P._NumbaThreads():
                return ranx.evaluate(tq, tr, "ndcg@10")
        from ranx.metrics import ndcg  # what ranx.evaluate calls, per query
        got = _by_query(run, ndcg(tq, tr, 10))
    else:
        def call():
            with P._NumbaThreads():
                return ranx.evaluate(qrels, run, "ndcg@10", make_comparable=False)
        got = want
    P.assert_same(want[:, None], np.asarray(got, np.float64)[:, None], what=f"ranx {api}")
    _timed(benchmark, call, f"ranx {api}", "peer", shape.n_rows, shape.n_queries,
           note="its paper's timing (conversion untimed)" if api == "typed lists" else "")


# --------------------------------------------------------------------------- whole lists

@pytest.mark.benchmark(group="whole-lists")
@pytest.mark.parametrize("what", ["ndcg float32", "ndcg float64", "AP", "R-precision"])
def test_whole_list_measures(benchmark, shape, what):
    import fastndcg
    from fastndcg import reference
    s, l, off = shape.scores, shape.labels, shape.offsets
    if what.startswith("ndcg"):
        s = s.astype(np.float32 if what.endswith("32") else np.float64)

        def call():
            return fastndcg.ndcg(s, l, off, k=None, gain="linear")
        want = [reference.ndcg_query(s[a:b].tolist(), l[a:b].tolist(), None, gain="linear")
                for a, b in zip(off[:50], off[1:51])]
        np.testing.assert_allclose(call()[:50], want, rtol=1e-12, atol=1e-15)
    else:
        name = {"AP": "AP", "R-precision": "Rprec"}[what]

        def call():
            return fastndcg.measure(s, l, off, measure=[name])
    _timed(benchmark, call, f"fastndcg {what}", "fastndcg", shape.n_rows, shape.n_queries,
           k="whole list")


@pytest.mark.benchmark(group="whole-lists")
def test_whole_list_probe(benchmark, shape):
    probe = P.bandwidth_probe(shape.scores, shape.labels)
    _timed(benchmark, probe.call, "probe", "bound", shape.n_rows, shape.n_queries)
