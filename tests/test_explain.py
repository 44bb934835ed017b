"""Explaining columns (``explain=``): dcg@K, idcg@K, n_relevant, n_judged, judged@K.

dcg/idcg are checked against ``fastndcg.dcg`` / ``fastndcg.idcg`` on the same
queries, the counts and judged fractions against plain-Python computations
written here from their definitions (trec_eval's order: score descending, then
document id descending; "average" ties: the tie group's mean).
"""

from __future__ import annotations

import json
import math
from collections import defaultdict

import numpy as np
import pyarrow as pa
import pytest

import fastndcg
from fastndcg import cli
from fastndcg.synth import synthetic_log

from test_evaluate import shuffled


def test_list_mode_columns_match_dcg_and_idcg():
    table = synthetic_log(120, seed=2, mean_docs=5)
    k = [1, 3, None]
    report = fastndcg.evaluate(table, k=k, explain=True)
    per = report.per_query
    assert per.column_names == ["query_id", "n_docs", "ndcg@1", "ndcg@3", "ndcg",
                                "dcg@1", "dcg@3", "dcg", "idcg@1", "idcg@3", "idcg",
                                "n_relevant"]
    scores, labels = table["score"].to_numpy(), table["label"].to_numpy()
    ids = table["query_id"].to_numpy()
    dcg = fastndcg.dcg(scores, labels, query_ids=ids, k=k)
    idcg = fastndcg.idcg(labels, query_ids=ids, k=k)
    for i, c in enumerate(["@1", "@3", ""]):
        np.testing.assert_array_equal(per[f"dcg{c}"].to_numpy(), dcg[:, i])
        np.testing.assert_array_equal(per[f"idcg{c}"].to_numpy(), idcg[:, i])
    counts = defaultdict(int)
    for q, lab in zip(ids.tolist(), labels.tolist()):
        counts[q] += lab > 0
    assert per["n_relevant"].to_pylist() == [counts[q] for q in per["query_id"].to_pylist()]


def trec_rank(rows):
    return sorted(rows, key=lambda r: (-r[2], tuple(-b for b in r[1].encode())))


def judged_fraction(rows, judged, k, ties):
    """The fraction of the top min(k, n) that is judged, from the definition."""
    n = len(rows)
    top = n if k is None else min(k, n)
    if not top:
        return 0.0
    if ties == "trec":
        ranked = trec_rank(rows)
        return sum((r[0], r[1]) in judged for r in ranked[:top]) / top
    # average: walk tie groups by score, each rank in a group counts the group's mean
    by_score = defaultdict(list)
    for r in rows:
        by_score[r[2]].append((r[0], r[1]) in judged)
    total, rank = 0.0, 0
    for s in sorted(by_score, reverse=True):
        group = by_score[s]
        inside = max(0, min(top - rank, len(group)))
        total += inside * sum(group) / len(group)
        rank += len(group)
    return total / top


@pytest.mark.parametrize("ties", ["trec", "average"])
def test_qrels_mode_counts_and_judged_fraction(ties):
    rng = np.random.default_rng(8)
    rows, judgments = [], {}
    for q in range(30):
        for d in rng.choice(60, size=int(rng.integers(1, 20)), replace=False):
            rows.append((f"q{q}", f"d{d}", float(rng.choice([0.1, 0.2, 0.2, 0.5]))))
        for d in rng.choice(60, size=int(rng.integers(0, 12)), replace=False):
            judgments[(f"q{q}", f"d{d}")] = int(rng.integers(0, 3))
    run = pa.table({"query_id": [r[0] for r in rows], "doc_id": [r[1] for r in rows],
                    "score": [r[2] for r in rows]})
    qrels = pa.table({"query_id": [k[0] for k in judgments], "doc_id": [k[1] for k in judgments],
                      "label": list(judgments.values())})
    k = [1, 5, None]
    report = fastndcg.evaluate(run, qrels=qrels, k=k, gain="linear", ties=ties,
                               explain=["n_relevant", "n_judged", "judged"])
    per = report.per_query.to_pydict()
    by_query = defaultdict(list)
    for r in rows:
        by_query[r[0]].append(r)
    for i, q in enumerate(per["query_id"]):
        mine = {key: lab for key, lab in judgments.items() if key[0] == q}
        assert per["n_judged"][i] == len(mine)
        assert per["n_relevant"][i] == sum(lab > 0 for lab in mine.values())
        for c, name in zip(k, ["judged@1", "judged@5", "judged"]):
            want = judged_fraction(by_query[q], judgments, c, ties)
            assert per[name][i] == pytest.approx(want, rel=1e-12, abs=1e-15), (q, name)


def test_explain_survives_scattered_rows_streaming_and_complete(tmp_path):
    table = shuffled(synthetic_log(80, seed=3, mean_docs=4), seed=1)
    memory = fastndcg.evaluate(table, explain=True, batch_rows=29)
    sorted_log = fastndcg.evaluate(synthetic_log(80, seed=3, mean_docs=4), explain=True)
    by_id = {q: i for i, q in enumerate(sorted_log.per_query["query_id"].to_pylist())}
    take = pa.array([by_id[q] for q in memory.per_query["query_id"].to_pylist()])
    for name in memory.per_query.column_names[1:]:
        if name != "n_docs":  # the same queries, scored whole, whatever the row order...
            if name.startswith(("ndcg", "dcg")):
                continue  # ...except what depends on the order of tied rows (stable parts)
        assert memory.per_query[name].to_pylist() == sorted_log.per_query[name].take(take).to_pylist(), name
    streamed = fastndcg.evaluate(table, explain=True, batch_rows=29,
                                 per_query=str(tmp_path / "e.parquet"))
    assert streamed.per_query.equals(memory.per_query)
    run = pa.table({"qid": ["a", "a"], "doc_id": ["x", "y"], "score": [1.0, 0.5]})
    qrels = pa.table({"qid": ["a", "b", "b"], "doc_id": ["y", "p", "q"], "label": [1, 2, 0]})
    rep = fastndcg.evaluate(run, qrels=qrels, query="qid", complete=True, k=[2], explain=True,
                            gain="linear")
    got = rep.per_query.to_pydict()
    assert got["qid"] == ["a", "b"]
    assert got["n_judged"] == [1, 2] and got["n_relevant"] == [1, 1]
    assert got["judged@2"] == [0.5, 0.0] and got["dcg@2"][1] == 0.0
    assert got["idcg@2"] == [1.0, 2.0]


def test_explain_errors():
    table = synthetic_log(3)
    with pytest.raises(ValueError, match="needs qrels"):
        fastndcg.evaluate(table, explain=["judged"])
    with pytest.raises(ValueError, match="unknown column kind 'ndcg'"):
        fastndcg.evaluate(table, explain=["ndcg"])
    with pytest.raises(TypeError, match="explain takes True, False or a list"):
        fastndcg.evaluate(table, explain=3)


def test_command_line_explain(capsys, tmp_path):
    import pyarrow.parquet as pq
    table = synthetic_log(20, seed=1)
    pq.write_table(table, tmp_path / "log.parquet")
    out = tmp_path / "per_query.parquet"
    code = cli.main(["evaluate", str(tmp_path / "log.parquet"), "-k", "3", "--explain",
                     "dcg,n_relevant", "--per-query", str(out), "--format", "json"])
    assert code == 0, capsys.readouterr().err
    got = pq.read_table(out)
    want = fastndcg.evaluate(table, k=[3], explain=["dcg", "n_relevant"]).per_query
    assert got.column_names == ["query_id", "n_docs", "ndcg@3", "dcg@3", "n_relevant"]
    assert got.equals(want)
    code = cli.main(["evaluate", str(tmp_path / "log.parquet"), "--explain", "judged"])
    err = capsys.readouterr().err
    assert code == 2 and "needs --qrels" in err
