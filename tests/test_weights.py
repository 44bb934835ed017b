"""Query weights (``weight=`` / ``--weight-col``): traffic-weighted means.

The expected means are computed here with ``numpy.average`` from the unweighted
per-query table and the weights of the log, so the weighted path is checked
against an independent formula, on one machine, streamed, and on Dask.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pyarrow as pa
import pytest

import fastndcg
from fastndcg import cli
from fastndcg.synth import synthetic_log

from test_evaluate import shuffled


def weighted_log(n_queries=200, seed=1) -> pa.Table:
    table = synthetic_log(n_queries, seed=seed, mean_docs=4)
    q = table["query_id"].to_numpy()
    per_query = np.random.default_rng(seed).integers(0, 50, q.max() + 1).astype(np.float64)
    return table.append_column("clicks", pa.array(per_query[q]))


def expected_means(table: pa.Table, **kw) -> dict:
    plain = fastndcg.evaluate(table.drop_columns(["clicks"]), **kw).per_query
    by_query = dict(zip(table["query_id"].to_pylist(), table["clicks"].to_pylist()))
    w = np.array([by_query[q] for q in plain["query_id"].to_pylist()])
    out = {}
    for name in plain.column_names[2:]:
        v = plain[name].to_numpy()
        ok = ~np.isnan(v)
        out[name] = float(np.average(v[ok], weights=w[ok]))
    return out


@pytest.mark.parametrize("zero_idcg", ["zero", "nan"])
def test_weighted_mean_is_numpy_average(zero_idcg):
    table = weighted_log()
    report = fastndcg.evaluate(table, weight="clicks", zero_idcg=zero_idcg)
    want = expected_means(table, zero_idcg=zero_idcg)
    assert report.mean == pytest.approx(want, rel=1e-12)
    unweighted = fastndcg.evaluate(table, zero_idcg=zero_idcg).mean
    assert report.mean != pytest.approx(unweighted, rel=1e-6)  # the weights matter here
    per = report.per_query
    assert per.column_names[:3] == ["query_id", "n_docs", "clicks"]
    by_query = dict(zip(table["query_id"].to_pylist(), table["clicks"].to_pylist()))
    assert per["clicks"].to_pylist() == [by_query[q] for q in per["query_id"].to_pylist()]


def test_weights_streamed_scattered_and_on_dask(tmp_path, request):
    table = shuffled(weighted_log(150, seed=4), seed=2)  # scattered queries too
    want = expected_means(table)
    memory = fastndcg.evaluate(table, weight="clicks", batch_rows=37)
    assert memory.mean == pytest.approx(want, rel=1e-12)
    streamed = fastndcg.evaluate(table, weight="clicks", batch_rows=37,
                                 per_query=str(tmp_path / "w.parquet"))
    assert streamed.per_query.equals(memory.per_query)
    nothing = fastndcg.evaluate(table, weight="clicks", batch_rows=37, per_query=False)
    for r in (streamed, nothing):
        assert r.mean == pytest.approx(want, rel=1e-12)
    client = request.getfixturevalue("dask_client")  # the suite's cluster (tests/conftest.py)
    import fastndcg.dask as fdask
    import pyarrow.parquet as pq
    for i in range(3):
        n = table.num_rows // 3
        pq.write_table(table.slice(i * n, n if i < 2 else table.num_rows - 2 * n),
                       tmp_path / f"part-{i}.parquet")
    for per_query in (None, False):
        got = fdask.evaluate(str(tmp_path / "part-*.parquet"), client=client, weight="clicks",
                             partition_rows=40, per_query=per_query)
        assert got.mean == pytest.approx(want, rel=1e-12)
        if per_query is None:
            assert got.per_query.equals(memory.per_query)


def test_qrels_mode_weights():
    run = pa.table({"qid": ["a", "a", "b", "b", "c"], "doc_id": ["x", "y", "x", "z", "x"],
                    "score": [0.9, 0.1, 0.3, 0.8, 0.5], "w": [2.0, 2.0, 1.0, 1.0, 5.0]})
    qrels = pa.table({"qid": ["a", "a", "b"], "doc_id": ["y", "x", "x"], "label": [2, 0, 1]})
    report = fastndcg.evaluate(run, qrels=qrels, query="qid", weight="w", gain="linear",
                               ties="trec", k=[1, 2])
    per = report.per_query.to_pydict()
    assert per["qid"] == ["a", "b"] and per["w"] == [2.0, 1.0]  # "c" is unjudged: left out
    for name in ("ndcg@1", "ndcg@2"):
        assert report.mean[name] == pytest.approx(np.average(per[name], weights=per["w"]),
                                                  rel=1e-12)
    with pytest.raises(ValueError, match="no weight"):
        fastndcg.evaluate(run, qrels=qrels, query="qid", weight="w", complete=True)


@pytest.mark.parametrize("change,fragment", [
    (lambda w: w.__setitem__(1, w[1] + 1), "varies within query 0 (2.0 to 3.0)"),
    (lambda w: w.__setitem__(w == 2.0, -1.0), "-1.0 in query 0; weights must be finite"),
    (lambda w: w.__setitem__(slice(None), np.nan), "nan in query 0"),
    (lambda w: w.__setitem__(slice(None), np.inf), "inf in query 0"),
    (lambda w: w.__setitem__(slice(None), 0.0), "sum to zero"),
])
def test_bad_weights_are_clear_errors(change, fragment):
    table = synthetic_log(5, seed=0, mean_docs=3)
    q = table["query_id"].to_numpy()
    w = np.ones(len(q))
    w[q == 0] = 2.0
    change(w)
    bad = table.append_column("w", pa.array(w))
    with pytest.raises(ValueError, match=re.escape(fragment)):
        fastndcg.evaluate(bad, weight="w")


def test_weight_column_problems():
    table = weighted_log(5)
    with pytest.raises(ValueError, match="'traffic' \\(query weights\\) not found"):
        fastndcg.evaluate(table, weight="traffic")
    with pytest.raises(ValueError, match="also the score column"):
        fastndcg.evaluate(table, weight="score")
    with pytest.raises(TypeError, match=r"weight must be a string \(the name of a column of query weights\), got 3"):
        fastndcg.evaluate(table, weight=3)
    strings = table.append_column("tag", pa.array(["x"] * table.num_rows))
    with pytest.raises(TypeError, match="'tag'.*query weights must be numbers"):
        fastndcg.evaluate(strings, weight="tag")
    nulls = table.set_column(4, "clicks", pa.array([None] + table["clicks"].to_pylist()[1:],
                                                     pa.float64()))
    with pytest.raises(ValueError, match="'clicks' has 1 null"):
        fastndcg.evaluate(nulls, weight="clicks")


def test_command_line_weight_col(capsys, tmp_path):
    import pyarrow.parquet as pq
    table = weighted_log(50)
    pq.write_table(table, tmp_path / "log.parquet")
    code = cli.main(["evaluate", str(tmp_path / "log.parquet"), "--weight-col", "clicks",
                     "--format", "json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    got = json.loads(out.out)
    want = expected_means(table, k=[1, 3, 5, 10])
    assert {k: got[k] for k in want} == pytest.approx(want, rel=1e-12)
    code = cli.main(["evaluate", str(tmp_path / "log.parquet"), "--weight-col", "nope"])
    err = capsys.readouterr().err
    assert code == 1 and "'nope'" in err and "--weight-col" in err
