"""Hunting for bad or odd input: every kind below must end in a clear error.

Through the Python API: a ``ValueError`` / ``TypeError`` / ``FileNotFoundError``
whose message names the parameter, column, query or file (each case lists the
words it must contain) and says what to do, never a silent number and never a raw
Arrow / zlib / KeyError / IndexError / AttributeError message. Through the command
line: a non-zero exit status, exactly one line on stderr starting with
``fastndcg: error:``, nothing on stdout, no traceback, never a hang.

``ndcg_score`` / ``dcg_score`` keep scikit-learn's own messages, so only the
exception type and the words scikit-learn uses are checked there.

Inputs keep float64 scores with int64 labels (arrays) and the synthetic log's
types (int64 ids, float32 scores, int8 labels) so that no new Numba
specialisations are compiled. CLI cases run as subprocesses, four at a time.
"""

from __future__ import annotations

import datetime
import gzip
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import fastndcg
from fastndcg.synth import synthetic_log

TIMEOUT = 60

S = np.array([0.5, 0.25, 1.0, 0.0])
L = np.array([1, 0, 2, 1], dtype=np.int64)
O = np.array([0, 2, 4], dtype=np.int64)

RAW = re.compile(r"ArrowInvalid|ArrowTypeError|ArrowNotImplemented|pyarrow\.lib|zlib|"
                 r"Error -3|KeyError|IndexError|AttributeError|Traceback|object has no "
                 r"attribute|list index out of range|numba|Numba")
# a message "says what to do": it names the fix, the expectation or the valid values
HINT = re.compile(r"\b(use|pass|give|fill|drop|must|expected|expects|takes|take|check|sort|"
                  r"convert|name|one of|should|need|needs|remove|rename|cast|choose|try|set|"
                  r"install|provide|either|only|is not|are not|not a|not an|instead|e\.g\.|"
                  r"missing|no such|cannot|can't|does not|unsupported|keep|see|nothing to evaluate)\b|\?", re.I)


# --------------------------------------------------------------------------- files

RUN = "q1 Q0 d1 1 0.9 t\nq1 Q0 d2 2 0.5 t\nq2 Q0 d1 1 0.7 t\nq2 Q0 d3 2 0.1 t\n"
QRELS = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n"


@pytest.fixture(scope="module")
def f(tmp_path_factory) -> dict:
    d = tmp_path_factory.mktemp("bad_input")
    p = {"dir": d}
    log = synthetic_log(20, seed=1, mean_docs=5)
    p["table"] = log
    pq.write_table(log, d / "log.parquet")
    p["log"] = d / "log.parquet"

    def w(name, data, mode="w"):
        path = d / name
        if isinstance(data, bytes):
            path.write_bytes(data)
        else:
            path.write_text(data)
        p[name] = path
        return path

    w("run.txt", RUN)
    w("qrels.txt", QRELS)
    w("zero.parquet", b"")
    w("text.parquet", "query_id,score,label\n1,0.5,1\n")
    full = (d / "log.parquet").read_bytes()
    w("trunc.parquet", full[: len(full) // 2])
    w("magic_only.parquet", b"PAR1")
    (d / "emptydir").mkdir()
    (d / "txtdir").mkdir()
    (d / "txtdir" / "notes.txt").write_text("hello\n")
    (d / "mixed").mkdir()
    pq.write_table(log.slice(0, 40), d / "mixed" / "part-0.parquet")
    pq.write_table(log.slice(40).set_column(2, "score", pa.array(
        [str(v) for v in log.column("score").to_pylist()[40:]])), d / "mixed" / "part-1.parquet")
    (d / "mixed2").mkdir()
    pq.write_table(log.slice(0, 40), d / "mixed2" / "part-0.parquet")
    pq.write_table(log.slice(40).drop(["label"]), d / "mixed2" / "part-1.parquet")
    n = log.num_rows
    pq.write_table(log.drop(["label"]), d / "nolabel.parquet")
    pq.write_table(log.drop(["query_id"]), d / "noquery.parquet")
    pq.write_table(log.set_column(3, "label", pa.array(["x"] * n)), d / "strlabel.parquet")
    pq.write_table(log.set_column(2, "score", pa.array(["x"] * n)), d / "strscore.parquet")
    pq.write_table(log.set_column(3, "label", pa.nulls(n, pa.int8())), d / "nulllabel.parquet")
    pq.write_table(log.slice(0, 0), d / "empty.parquet")
    # TREC text
    w("few.txt", "q1 Q0 d1 1 0.9 t\nq1 Q0 d2\n")
    w("nonnum.txt", "q1 Q0 d1 1 0.9 t\nq1 Q0 d2 2 high t\n")
    w("emptyrun.txt", "")
    w("blank.txt", "\n\n   \n\n")
    w("garbage.txt", bytes(range(256)) * 4)
    w("nanscore.txt", "q1 Q0 d1 1 nan t\nq1 Q0 d2 2 0.5 t\n")
    w("dup_run.txt", "q1 Q0 d1 1 0.9 t\nq1 Q0 d1 2 0.5 t\n")
    w("dup_qrels.txt", "q1 0 d1 1\nq1 0 d1 2\n")
    w("frac_qrels.txt", "q1 0 d1 1.5\nq1 0 d2 0\n")
    w("str_qrels.txt", "q1 0 d1 high\nq1 0 d2 0\n")
    w("few_qrels.txt", "q1 0 d1\n")
    w("nan_qrels.txt", "q1 0 d1 nan\nq1 0 d2 1\n")
    w("inf_qrels.txt", "q1 0 d1 inf\nq1 0 d2 1\n")
    w("big_qrels.txt", "q1 0 d1 99999999999999999999999\nq1 0 d2 1\n")
    w("nojudged_qrels.txt", "zz 0 d1 1\n")
    w("notgz.txt.gz", RUN)
    w("trunc.txt.gz", gzip.compress(RUN.encode() * 50)[:40])
    w("emptyqrels.txt", "")
    w("latin.txt", "q1 Q0 d\xe9 1 0.9 t\nq1 Q0 d2 2 0.5 t\n".encode("latin-1"))
    w("neg_qrels.txt", "q1 0 d1 -1\nq1 0 d2 2\n")
    w("big_qrels.txt", "q1 0 d1 99999999999999999999999\n")
    w("notgz.txt.gz", RUN)  # plain text named .gz
    return p


# --------------------------------------------------------------------------- API cases

def ev(src, **kw):
    return lambda f: fastndcg.evaluate(f[src] if isinstance(src, str) and src in f else src, **kw)


def nd(**kw):
    base = dict(scores=S, labels=L, offsets=O)
    base.update(kw)
    return lambda f: fastndcg.ndcg(base.pop("scores"), base.pop("labels"), base.pop("offsets"),
                                   **base)


def evt(table_fn, **kw):
    return lambda f: fastndcg.evaluate(table_fn(f["table"]), **kw)


def qr(run, qrels, **kw):
    return lambda f: fastndcg.evaluate(f[run], qrels=f[qrels], **kw)


n_log = 0  # filled lazily where a table is rebuilt


def setcol(name, arr_fn):
    def fn(t):
        i = t.column_names.index(name)
        return t.set_column(i, name, arr_fn(t.num_rows))
    return fn


API = [
    # ---- k
    ("k-str", nd(k="10"), ["k"]),
    ("k-list-with-str", nd(k=[1, "a"]), ["k[1]"]),
    ("k-nan", nd(k=float("nan")), ["k"]),
    ("k-complex", nd(k=1j), ["k"]),
    ("k-float-list", nd(k=[1.0, 3.0]), ["k[0]"]),
    ("k-neg-in-array", nd(k=np.array([3, -1])), ["k[1]"]),
    # ---- gain
    ("gain-int", nd(gain=5), ["gain"]),
    ("gain-upper", nd(gain="EXP2"), ["gain"]),
    ("gain-empty-table", nd(gain=[]), ["gain"]),
    ("gain-nan-table", nd(gain=[0.0, float("nan"), 3.0]), ["gain"]),
    ("gain-inf-table", nd(gain=[0.0, float("inf"), 3.0]), ["gain"]),
    ("gain-2d-table", nd(gain=[[0, 1], [3, 7]]), ["gain"]),
    ("gain-table-too-short", nd(gain=[0, 1]), ["gain"]),
    ("gain-table-fractional-label", nd(labels=np.array([0.5, 0, 1, 0]), gain=[0, 1, 3]), ["label"]),
    ("gain-table-neg-entry", nd(gain=[0, -1, 3]), ["gain"]),
    # ---- other options
    ("ties-int", nd(ties=1), ["ties"]),
    ("ties-empty", nd(ties=""), ["ties"]),
    ("ties-list", nd(ties=["average"]), ["ties"]),
    ("log-base-1", nd(log_base=1), ["log_base"]),
    ("log-base-0", nd(log_base=0), ["log_base"]),
    ("log-base-neg", nd(log_base=-2), ["log_base"]),
    ("log-base-nan", nd(log_base=float("nan")), ["log_base"]),
    ("log-base-inf", nd(log_base=float("inf")), ["log_base"]),
    ("log-base-str", nd(log_base="2"), ["log_base"]),
    ("log-base-bool", nd(log_base=True), ["log_base"]),
    ("log-base-below-1", nd(log_base=0.5), ["log_base"]),
    ("zero-idcg-int", nd(zero_idcg=0), ["zero_idcg"]),
    ("zero-idcg-upper", nd(zero_idcg="ZERO"), ["zero_idcg"]),
    ("zero-idcg-error-raises", nd(labels=np.array([1, 0, 0, 0]), zero_idcg="error"), ["query"]),
    ("nan-scores-bool", nd(nan_scores=False), ["nan_scores"]),
    ("nan-scores-default", nd(scores=np.array([0.5, np.nan, 1.0, 0.0])), ["nan"]),
    ("neg-labels-int", nd(negative_labels=0), ["negative_labels"]),
    ("neg-labels-default", nd(labels=np.array([1, -1, 2, 1])), ["negative"]),
    ("score-precision-float16", nd(score_precision="float16"), ["score_precision"]),
    ("score-precision-int", nd(score_precision=32), ["score_precision"]),
    ("preset-unknown", nd(preset="trec"), ["preset"]),
    ("preset-int", nd(preset=1), ["preset"]),
    ("preset-trec-on-ndcg", nd(preset="trec_eval"), ["trec"]),
    ("preset-upper", nd(preset="SKLEARN"), ["preset"]),
    # ---- scores / labels arrays
    ("scores-0d", nd(scores=np.array(1.0), offsets=None, labels=np.array([1])), ["scores"]),
    ("scores-2d", nd(scores=S.reshape(2, 2)), ["scores"]),
    ("scores-object-mixed", nd(scores=np.array([1, "a", 2.0, 3], dtype=object)), ["scores"]),
    ("scores-complex", nd(scores=S.astype(complex)), ["scores"]),
    ("scores-datetime", nd(scores=np.array(["2020-01-01"] * 4, dtype="datetime64[D]")), ["scores"]),
    ("scores-timedelta", nd(scores=np.arange(4).astype("timedelta64[s]")), ["scores"]),
    ("scores-strings", nd(scores=np.array(["a", "b", "c", "d"])), ["scores"]),
    ("scores-numeric-strings", nd(scores=["0.5", "0.2", "1", "0"]), ["scores"]),
    ("scores-None", nd(scores=None), ["scores"]),
    ("scores-str", nd(scores="abcd"), ["scores"]),
    ("scores-dict", nd(scores={0: 0.5, 1: 0.2, 2: 1.0, 3: 0.0}), ["scores"]),
    ("scores-set", nd(scores={0.5, 0.2, 1.0, 0.0}), ["scores"]),
    ("scores-generator", nd(scores=(x for x in S)), ["scores"]),
    ("scores-arrow-strings", nd(scores=pa.array(["a", "b", "c", "d"])), ["scores"]),
    ("scores-arrow-nulls", nd(scores=pa.array([0.5, None, 1.0, 0.0])), ["scores", "null"]),
    ("scores-arrow-list", nd(scores=pa.array([[0.5], [0.2], [1.0], [0.0]])), ["scores"]),
    ("scores-pandas-object-none", nd(scores=pd.Series([0.5, None, "x", 0.0])), ["scores"]),
    ("scores-pandas-nullable-na", nd(scores=pd.array([0.5, None, 1.0, 0.0], dtype="Float64")), ["scores"]),
    ("scores-pandas-dataframe", nd(scores=pd.DataFrame({"a": S, "b": S})), ["scores"]),
    ("scores-bytes", nd(scores=b"\x00\x01\x02\x03"), ["scores"]),
    ("labels-strings", nd(labels=np.array(["1", "0", "2", "1"])), ["labels"]),
    ("labels-complex", nd(labels=L.astype(complex)), ["labels"]),
    ("labels-datetime", nd(labels=np.array(["2020-01-01"] * 4, dtype="datetime64[D]")), ["labels"]),
    ("labels-None", nd(labels=None), ["labels"]),
    ("labels-object-mixed", nd(labels=np.array([1, "a", 2, 1], dtype=object)), ["labels"]),
    ("labels-nan-pandas", nd(labels=pd.Series([1.0, np.nan, 2.0, 1.0])), ["label"]),
    ("labels-exp2-overflow", nd(labels=np.array([2000, 0, 1, 0])), ["label"]),
    ("labels-arrow-nulls", nd(labels=pa.array([1, None, 2, 1])), ["labels", "null"]),
    ("labels-longer", nd(labels=np.array([1, 0, 2, 1, 0]), offsets=None), ["length"]),
    ("labels-empty-scores-not", nd(labels=np.array([], dtype=np.int64), offsets=None), ["length"]),
    # ---- offsets
    ("offsets-str", nd(offsets="0,2,4"), ["offsets"]),
    ("offsets-object-mixed", nd(offsets=np.array([0, "2", 4], dtype=object)), ["offsets"]),
    ("offsets-arrow-null", nd(offsets=pa.array([0, None, 4])), ["offsets"]),
    ("offsets-dict", nd(offsets={0: 0, 1: 2, 2: 4}), ["offsets"]),
    ("offsets-beyond-then-back", nd(offsets=[0, 2 ** 40, 4]), ["offsets"]),
    ("offsets-complex", nd(offsets=np.array([0, 2, 4], dtype=complex)), ["offsets"]),
    ("offsets-datetime", nd(offsets=np.array([0, 2, 4], dtype="datetime64[s]")), ["offsets"]),
    ("offsets-uint64-huge", nd(offsets=np.array([0, 2 ** 64 - 1, 4], dtype=np.uint64)), ["offsets"]),
    ("offsets-2d-column", nd(offsets=np.array([[0], [2], [4]])), ["offsets"]),
    ("offsets-single-zero", nd(offsets=[0]), ["offsets"]),
    # ---- query ids
    ("qids-str-scalar", nd(offsets=None, query_ids="aabb"), ["query_ids"]),
    ("qids-int-scalar", nd(offsets=None, query_ids=5), ["query_ids"]),
    ("qids-complex", nd(offsets=None, query_ids=np.array([1, 1, 2, 2], dtype=complex)), ["query_ids"]),
    ("qids-object-mixed", nd(offsets=None, query_ids=np.array(["a", 1, "a", 1], dtype=object)), ["query_ids"]),
    ("qids-too-short-bytes", nd(offsets=None, query_ids=[b"a", b"a", b"b"]), ["query_ids"]),
    ("qids-datetime-wrong-length", nd(offsets=None, query_ids=[datetime.date(2020, 1, 1)] * 3),
     ["query_ids"]),
    ("qids-pandas-na", nd(offsets=None, query_ids=pd.Series(["a", pd.NA, "b", "b"])), ["query_ids"]),
    ("qids-with-offsets", nd(query_ids=["a", "a", "b", "b"]), ["offsets", "query_ids"]),
    # ---- idcg / dcg
    ("idcg-strings", lambda f: fastndcg.idcg(np.array(["1", "0"]), [0, 2]), ["labels"]),
    ("idcg-k0", lambda f: fastndcg.idcg(L, O, k=0), ["k"]),
    ("idcg-gain-bad", lambda f: fastndcg.idcg(L, O, gain="log"), ["gain"]),
    ("dcg-log-base-1", lambda f: fastndcg.dcg(S, L, O, log_base=1), ["log_base"]),
    ("dcg-preset-bad", lambda f: fastndcg.dcg(S, L, O, preset="nope"), ["preset"]),
    # ---- evaluate: sources
    ("ev-source-None", ev(None), ["search log"]),
    ("ev-source-int", ev(123), ["search log"]),
    ("ev-source-list-of-ints", ev([1, 2]), ["search log"]),
    ("ev-source-missing-file", lambda f: fastndcg.evaluate(f["dir"] / "nope.parquet"), ["nope.parquet"]),
    ("ev-source-dir-no-parquet", lambda f: fastndcg.evaluate(f["dir"] / "txtdir"), ["txtdir"]),
    ("ev-source-zero-byte", ev("zero.parquet"), ["zero.parquet"]),
    ("ev-source-text-as-parquet", ev("text.parquet"), ["text.parquet"]),
    ("ev-source-truncated", ev("trunc.parquet"), ["trunc.parquet"]),
    ("ev-source-magic-only", ev("magic_only.parquet"), ["magic_only.parquet"]),
    ("ev-source-glob-nothing", lambda f: fastndcg.evaluate(str(f["dir"] / "zz*.parquet")), ["zz*"]),
    ("ev-source-schemas-differ-type", lambda f: fastndcg.evaluate(f["dir"] / "mixed"), ["score"]),
    ("ev-source-schemas-differ-missing", lambda f: fastndcg.evaluate(f["dir"] / "mixed2"), ["label"]),
    ("ev-source-empty-table", ev("empty.parquet"), ["empty"]),
    ("ev-source-numpy-array", lambda f: fastndcg.evaluate(np.zeros((3, 3))), ["search log"]),
    ("ev-source-dict", lambda f: fastndcg.evaluate({"query_id": [1], "score": [0.5], "label": [1]}), ["search log"]),
    # ---- evaluate: tables
    ("ev-missing-label", ev("nolabel_path"), ["label"]),
    ("ev-missing-query", ev("noquery_path"), ["query_id"]),
    ("ev-label-strings", ev("strlabel_path"), ["label"]),
    ("ev-score-strings", ev("strscore_path"), ["score"]),
    ("ev-label-all-null", ev("nulllabel_path"), ["label"]),
    ("ev-score-list-col", evt(setcol("score", lambda n: pa.array([[0.5]] * n))), ["score"]),
    ("ev-label-struct-col", evt(setcol("label", lambda n: pa.array([{"a": 1}] * n))), ["label"]),
    ("ev-query-list-col", evt(setcol("query_id", lambda n: pa.array([[1]] * n))), ["query_id"]),
    ("ev-query-struct-col", evt(setcol("query_id", lambda n: pa.array([{"q": i // 3} for i in range(n)]))), ["query_id"]),
    ("ev-query-all-null", evt(setcol("query_id", lambda n: pa.nulls(n, pa.int64()))), ["query_id"]),
    ("ev-score-all-null", evt(setcol("score", lambda n: pa.nulls(n, pa.float32()))), ["score"]),
    ("ev-score-bool-col-null", evt(setcol("score", lambda n: pa.array([None] * n, pa.float64()))), ["score"]),
    ("ev-dup-column", evt(lambda t: t.append_column("score", pa.array([1.0] * t.num_rows, pa.float32()))), ["score"]),
    ("ev-zero-rows", evt(lambda t: t.slice(0, 0)), ["empty"]),
    ("ev-unicode-missing-col", ev("log", query="クエリ"), ["クエリ"]),
    ("ev-query-is-score", ev("log", query="score"), ["score"]),
    ("ev-score-is-label", ev("log", score="label"), ["label"]),
    ("ev-query-col-int", ev("log", query=1), ["query"]),
    ("ev-score-col-None", ev("log", score=None), ["score"]),
    ("ev-label-col-list", ev("log", label=["label"]), ["label"]),
    ("ev-doc-col-bytes", ev("log", doc=b"doc_id", ties="trec"), ["doc"]),
    ("ev-trec-ties-no-doc", evt(lambda t: t.drop(["doc_id"]), ties="trec"), ["doc_id"]),
    ("ev-label-nan", evt(setcol("label", lambda n: pa.array([float("nan")] * n))), ["label"]),
    ("ev-pandas-missing-col", lambda f: fastndcg.evaluate(f["table"].to_pandas().drop(columns=["score"])), ["score"]),
    # ---- evaluate: options
    ("ev-k-str", ev("log", k="5"), ["k"]),
    ("ev-k-zero", ev("log", k=0), ["k"]),
    ("ev-gain-bad", ev("log", gain="log2"), ["gain"]),
    ("ev-ties-bad", ev("log", ties="random"), ["ties"]),
    ("ev-log-base-bad", ev("log", log_base=1.0), ["log_base"]),
    ("ev-zero-idcg-bad", ev("log", zero_idcg="none"), ["zero_idcg"]),
    ("ev-nan-scores-bad", ev("log", nan_scores="first"), ["nan_scores"]),
    ("ev-neg-labels-bad", ev("log", negative_labels="abs"), ["negative_labels"]),
    ("ev-score-precision-bad", ev("log", score_precision="half"), ["score_precision"]),
    ("ev-preset-bad", ev("log", preset="galago"), ["preset"]),
    ("ev-preset-ltr-with-qrels", qr("run.txt", "qrels.txt", preset="lightgbm"), ["lightgbm"]),
    ("ev-measure-cut0", ev("log", measure="ndcg_cut.0"), ["ndcg_cut.0"]),
    ("ev-measure-unknown", ev("log", measure="mapp"), ["mapp"]),
    ("ev-measure-at0", ev("log", measure="nDCG@0"), ["nDCG@0"]),
    ("ev-measure-atx", ev("log", measure="nDCG@x"), ["nDCG@x"]),
    ("ev-measure-int", ev("log", measure=5), ["measure"]),
    ("ev-measure-empty-list", ev("log", measure=[]), ["measure"]),
    ("ev-measure-empty-str", ev("log", measure=""), ["measure"]),
    ("ev-measure-and-k", ev("log", measure="nDCG@5", k=[1, 3]), ["measure"]),
    ("ev-measure-unbalanced", ev("log", measure="nDCG(dcg='log2'@10"), ["nDCG"]),
    ("ev-measure-bad-param", ev("log", measure="nDCG(judged_only=True)@10"), ["judged_only"]),
    ("ev-weight-missing", ev("log", weight="clicks"), ["clicks"]),
    ("ev-weight-not-constant", ev("log", weight="score"), ["score"]),
    ("ev-weight-int", ev("log", weight=5), ["weight"]),
    ("ev-weight-negative", evt(lambda t: t.append_column("w", pa.array([-1.0] * t.num_rows)), weight="w"), ["w"]),
    ("ev-weight-all-zero", evt(lambda t: t.append_column("w", pa.array([0.0] * t.num_rows)), weight="w"), ["w"]),
    ("ev-weight-nan", evt(lambda t: t.append_column("w", pa.array([float("nan")] * t.num_rows)), weight="w"), ["w"]),
    ("ev-weight-strings", evt(lambda t: t.append_column("w", pa.array(["1"] * t.num_rows)), weight="w"), ["w"]),
    ("ev-explain-bogus", ev("log", explain="bogus"), ["explain"]),
    ("ev-explain-list-bogus", ev("log", explain=["dcg", "x"]), ["explain"]),
    ("ev-explain-int", ev("log", explain=5), ["explain"]),
    ("ev-explain-judged-no-qrels", ev("log", explain=["n_judged"]), ["n_judged"]),
    ("ev-per-query-int", ev("log", per_query=5), ["per_query"]),
    ("ev-per-query-true", ev("log", per_query=True), ["per_query"]),
    ("ev-per-query-is-source", lambda f: fastndcg.evaluate(f["log"], per_query=f["log"]), ["per_query"]),
    ("ev-per-query-unwritable", ev("log", per_query="/proc/nope/out.parquet"), ["/proc/nope"]),
    ("ev-per-query-dir-of-source", lambda f: fastndcg.evaluate(f["log"], per_query=f["dir"]), ["per_query"]),
    ("ev-batch-rows-0", ev("log", batch_rows=0), ["batch_rows"]),
    ("ev-batch-rows-neg", ev("log", batch_rows=-1), ["batch_rows"]),
    ("ev-batch-rows-str", ev("log", batch_rows="10"), ["batch_rows"]),
    ("ev-batch-rows-float", ev("log", batch_rows=2.5), ["batch_rows"]),
    ("ev-batch-rows-bool", ev("log", batch_rows=True), ["batch_rows"]),
    ("ev-complete-str", qr("run.txt", "qrels.txt", complete="yes"), ["complete"]),
    ("ev-complete-no-qrels", ev("log", complete=True), ["qrels"]),
    # ---- evaluate: qrels / TREC
    ("qrels-missing-file", lambda f: fastndcg.evaluate(f["run.txt"], qrels=f["dir"] / "nope.qrels"), ["nope.qrels"]),
    ("qrels-empty-file", qr("run.txt", "emptyqrels.txt"), ["emptyqrels.txt"]),
    ("qrels-is-dir", lambda f: fastndcg.evaluate(f["run.txt"], qrels=f["dir"] / "txtdir"), ["txtdir"]),
    ("qrels-given-run", qr("run.txt", "run.txt"), ["run.txt"]),
    ("run-given-qrels", qr("qrels.txt", "qrels.txt"), ["qrels.txt"]),
    ("qrels-table-no-label", lambda f: fastndcg.evaluate(f["run.txt"], qrels=pa.table({"query_id": ["q1"], "doc_id": ["d1"]})), ["label"]),
    ("qrels-frac-gain-table", qr("run.txt", "frac_qrels.txt", gain=[0, 1, 3]), ["label"]),
    ("qrels-str-grade", qr("run.txt", "str_qrels.txt"), ["str_qrels.txt"]),
    ("qrels-too-few-fields", qr("run.txt", "few_qrels.txt"), ["few_qrels.txt"]),
    ("qrels-nan-grade", qr("run.txt", "nan_qrels.txt"), ["nan_qrels.txt"]),
    ("qrels-inf-grade", qr("run.txt", "inf_qrels.txt"), ["inf_qrels.txt"]),
    ("qrels-dup", qr("run.txt", "dup_qrels.txt"), ["d1"]),
    ("qrels-none-judged", qr("run.txt", "nojudged_qrels.txt"), ["judg"]),
    ("run-too-few-fields", qr("few.txt", "qrels.txt"), ["few.txt"]),
    ("run-non-numeric-score", qr("nonnum.txt", "qrels.txt"), ["nonnum.txt"]),
    ("run-empty", qr("emptyrun.txt", "qrels.txt"), ["emptyrun.txt"]),
    ("run-blank-lines", qr("blank.txt", "qrels.txt"), ["blank.txt"]),
    ("run-binary-garbage", qr("garbage.txt", "qrels.txt"), ["garbage.txt"]),
    ("run-nan-score", qr("nanscore.txt", "qrels.txt"), ["nan"]),
    ("run-dup-doc", qr("dup_run.txt", "qrels.txt"), ["d1"]),
    ("run-truncated-gzip", qr("trunc.txt.gz", "qrels.txt"), ["trunc.txt.gz"]),
    ("run-missing-file", lambda f: fastndcg.evaluate(f["dir"] / "nope.run", qrels=f["qrels.txt"]), ["nope.run"]),
    # ---- dask
    ("dask-source-missing", lambda f: __import__("fastndcg.dask").dask.evaluate(f["dir"] / "nope.parquet", workers=1), ["nope.parquet"]),
    # ---- more evaluate / ndcg kinds
    ("ev-k-duplicate", ev("log", k=[5, 5]), ["k", "twice"]),
    ("ev-label-bool-col", evt(setcol("label", lambda n: pa.array([True] * n))), ["label"]),
    ("ev-label-frac-gain-table", evt(setcol("label", lambda n: pa.array([0.5] * n)), gain=[0, 1, 3]), ["label"]),
    ("ev-per-query-json", ev("log", per_query="out.json"), ["per_query"]),
    ("ev-measure-bad-cutoff-list", ev("log", measure="ndcg_cut.5,x"), ["ndcg_cut.5,x"]),
    ("ev-weight-list-col", evt(lambda t: t.append_column("w", pa.array([[1.0]] * t.num_rows)), weight="w"), ["w"]),
    ("ev-weight-is-query", ev("log", weight="query_id"), ["query_id"]),
    ("ev-weight-is-label", ev("log", weight="label"), ["label"]),
    ("ev-weight-inf", evt(lambda t: t.append_column("w", pa.array([float("inf")] * t.num_rows)), weight="w"), ["w"]),
    ("run-latin1-bytes", qr("latin.txt", "qrels.txt"), ["latin.txt"]),
    ("qrels-negative-grade-default", qr("run.txt", "neg_qrels.txt"), ["negative_labels"]),
    ("qrels-dataframe-wrong-cols", lambda f: fastndcg.evaluate(f["run.txt"], qrels=pd.DataFrame({"a": [1]})), ["query_id"]),
    ("k-empty-tuple", nd(k=()), ["k"]),
    ("labels-bytes-dtype", nd(labels=np.array([b"1", b"0", b"2", b"1"])), ["labels"]),
    ("gain-dict", nd(gain={0: 0, 1: 1, 2: 3}), ["gain"]),
    ("gain-numpy-2d", nd(gain=np.array([[0, 1, 3]])), ["gain"]),
    ("gain-set", nd(gain={0, 1, 3}), ["gain"]),
    ("qids-nested-tuples", nd(offsets=None, query_ids=[(1, 2), (1, 2), (3, 4), (3, 4)]), ["query_ids"]),
    ("labels-float16-exp2-overflow", nd(labels=np.array([60000, 0, 1, 0], np.float16)), ["label"]),
    ("scores-object-with-none", nd(scores=np.array([0.5, None, 1.0, 0.0], dtype=object)), ["scores"]),
    ("labels-categorical-strings", nd(labels=pd.Categorical(["a", "b", "a", "b"])), ["labels"]),
    ("preset-list", nd(preset=["sklearn"]), ["preset"]),
    ("ties-trec-over-preset", nd(preset="sklearn", ties="trec"), ["trec"]),
    # ---- found by this module, fixed at the root
    ("k-2d-array", nd(k=np.array([[1, 2]])), ["k", "1-D"]),
    ("k-dict", nd(k={1: 2}), ["k", "ordered"]),
    ("k-set", nd(k={1, 3}), ["k", "ordered"]),
    ("gain-table-of-strings", nd(gain=["0", "1", "3"]), ["gain", "numbers"]),
    ("explain-without-per-query", ev("table", explain=True, per_query=False), ["explain", "per_query"]),
    ("progress-not-bool", ev("table", progress="no"), ["progress"]),
    ("scores-ragged", nd(scores=[[0.5], [0.2, 1.0], [0.0], [0.1]]), ["scores"]),
    ("qids-ragged", nd(offsets=None, query_ids=[[1], [1, 2], [3], [4]]), ["query_ids"]),
    ("qids-structs", nd(offsets=None, query_ids=[{"a": 1}, {"a": 1}, {"a": 2}, {"a": 2}]),
     ["query_ids", "struct"]),
    ("qids-arrow-lists", nd(offsets=None, query_ids=pa.array([[1], [1], [2], [2]])),
     ["query_ids", "list"]),
    ("pandas-mixed-object-score", lambda f: fastndcg.evaluate(pd.DataFrame(
        {"query_id": [1, 1], "score": ["x", 1.0], "label": [1, 0]})), ["score", "one type"]),
    ("qrels-huge-grade", qr("run.txt", "big_qrels.txt"), ["label"]),
    ("qrels-int", lambda f: fastndcg.evaluate(f["run.txt"], qrels=5), ["qrels"]),
    ("qrels-list", lambda f: fastndcg.evaluate(f["run.txt"], qrels=[1, 2]), ["qrels"]),
    ("run-not-gzip", qr("notgz.txt.gz", "qrels.txt"), ["notgz.txt.gz", "gz"]),
    ("empty-directory-says-what", ev("emptydir_path"), ["emptydir", "parquet"]),
]

SKLEARN = [
    ("ndcg-score-1d", lambda: fastndcg.ndcg_score([1, 0, 2], [0.1, 0.2, 0.3]), ValueError),
    ("ndcg-score-k-str", lambda: fastndcg.ndcg_score([[1, 0, 2]], [[0.1, 0.2, 0.3]], k="3"), (ValueError, TypeError)),
    ("ndcg-score-single-item", lambda: fastndcg.ndcg_score([[1]], [[0.1]]), ValueError),
    ("ndcg-score-negative-y-true", lambda: fastndcg.ndcg_score([[1, -1, 2]], [[0.1, 0.2, 0.3]]), ValueError),
    ("ndcg-score-nan-y-score", lambda: fastndcg.ndcg_score([[1, 0, 2]], [[0.1, np.nan, 0.3]]), ValueError),
    ("ndcg-score-shape-mismatch", lambda: fastndcg.ndcg_score([[1, 0, 2]], [[0.1, 0.2]]), ValueError),
    ("ndcg-score-strings", lambda: fastndcg.ndcg_score([["a", "b"]], [[0.1, 0.2]]), ValueError),
    ("dcg-score-log-base-0", lambda: fastndcg.dcg_score([[1, 0, 2]], [[0.1, 0.2, 0.3]], log_base=0), ValueError),
    ("dcg-score-3d", lambda: fastndcg.dcg_score(np.zeros((2, 2, 2)), np.zeros((2, 2, 2))), ValueError),
    ("ndcg-score-weight-len", lambda: fastndcg.ndcg_score([[1, 0, 2], [0, 1, 0]], [[0.1, 0.2, 0.3], [0.3, 0.2, 0.1]], sample_weight=[1]), ValueError),
    ("ndcg-score-k0", lambda: fastndcg.ndcg_score([[1, 0, 2]], [[0.1, 0.2, 0.3]], k=0), ValueError),
    ("ndcg-score-ignore-ties-str", lambda: fastndcg.ndcg_score([[1, 0, 2]], [[0.1, 0.2, 0.3]], ignore_ties="yes"), ValueError),
    ("ndcg-score-complex", lambda: fastndcg.ndcg_score([[1, 0, 2]], [[0.1j, 0.2, 0.3]]), ValueError),
    ("ndcg-score-inf", lambda: fastndcg.ndcg_score([[1, 0, 2]], [[np.inf, 0.2, 0.3]]), ValueError),
    ("ndcg-score-zero-rows", lambda: fastndcg.ndcg_score(np.zeros((0, 3)), np.zeros((0, 3))), ValueError),
]


def _resolve_names(f):
    # a few sources are paths under the data folder by name
    f.setdefault("emptydir_path", f["dir"] / "emptydir")
    for stem in ("nolabel", "noquery", "strlabel", "strscore", "nulllabel"):
        f.setdefault(f"{stem}_path", f["dir"] / f"{stem}.parquet")
    f.setdefault("empty.parquet", f["dir"] / "empty.parquet")
    return f


def check_message(message: str, words) -> None:
    assert not RAW.search(message), f"raw error leaked: {message!r}"
    for word in words:
        assert word.lower() in message.lower(), f"{word!r} not named in {message!r}"
    assert HINT.search(message), f"no hint of what to do in {message!r}"


@pytest.mark.parametrize("case, call, words", API, ids=[c[0] for c in API])
def test_api(f, case, call, words):
    f = _resolve_names(f)
    with pytest.raises((ValueError, TypeError, FileNotFoundError)) as err:
        result = call(f)
        pytest.fail(f"no error: returned {result!r}")
    check_message(str(err.value), words)


@pytest.mark.parametrize("case, call, exc", SKLEARN, ids=[c[0] for c in SKLEARN])
def test_sklearn_dropins(case, call, exc):
    with pytest.raises(exc) as err:
        call()
    assert not RAW.search(str(err.value)), str(err.value)


# --------------------------------------------------------------------------- CLI cases

EV = ["evaluate"]
CLI = [
    ("cli-no-command", [], []),
    ("cli-unknown-command", ["score"], ["score"]),
    ("cli-evaluate-no-source", EV, ["source"]),
    ("cli-unknown-flag", EV + ["{log}", "--bogus"], ["--bogus"]),
    ("cli-k-zero", EV + ["{log}", "-k", "0"], ["-k"]),
    ("cli-k-letters", EV + ["{log}", "-k", "a"], ["-k"]),
    ("cli-k-empty", EV + ["{log}", "-k", ""], ["-k"]),
    ("cli-k-trailing-comma", EV + ["{log}", "-k", "5,"], ["-k"]),
    ("cli-k-float", EV + ["{log}", "-k", "2.5"], ["-k"]),
    ("cli-k-no-value", EV + ["{log}", "-k"], ["-k"]),
    ("cli-k-and-m", EV + ["{log}", "-k", "5", "-m", "ndcg_cut.5"], ["-k"]),
    ("cli-m-unknown", EV + ["{log}", "-m", "mapp"], ["mapp"]),
    ("cli-m-cut0", EV + ["{log}", "-m", "ndcg_cut.0"], ["ndcg_cut.0"]),
    ("cli-m-no-value", EV + ["{log}", "-m"], ["-m"]),
    ("cli-preset-unknown", EV + ["{log}", "--preset", "galago"], ["--preset"]),
    ("cli-preset-lightgbm-qrels", EV + ["{run.txt}", "--qrels", "{qrels.txt}", "--preset", "lightgbm"], ["lightgbm"]),
    ("cli-gain-bad", EV + ["{log}", "--gain", "a,b"], ["--gain"]),
    ("cli-gain-empty", EV + ["{log}", "--gain", ""], ["--gain"]),
    ("cli-gain-negative-table", EV + ["{log}", "--gain", "0,-1"], ["gain"]),
    ("cli-ties-bogus", EV + ["{log}", "--ties", "random"], ["--ties"]),
    ("cli-ties-trec-no-doc", EV + ["{log}", "--ties", "trec", "--doc-col", "nope"], ["nope"]),
    ("cli-zero-idcg-bogus", EV + ["{log}", "--zero-idcg", "none"], ["--zero-idcg"]),
    ("cli-log-base-letters", EV + ["{log}", "--log-base", "e"], ["--log-base"]),
    ("cli-log-base-1", EV + ["{log}", "--log-base", "1"], ["log"]),
    ("cli-log-base-negative", EV + ["{log}", "--log-base=-2"], ["log"]),
    ("cli-log-base-nan", EV + ["{log}", "--log-base", "nan"], ["log"]),
    ("cli-nan-scores-bogus", EV + ["{log}", "--nan-scores", "first"], ["--nan-scores"]),
    ("cli-negative-labels-bogus", EV + ["{log}", "--negative-labels", "abs"], ["--negative-labels"]),
    ("cli-score-precision-bogus", EV + ["{log}", "--score-precision", "half"], ["--score-precision"]),
    ("cli-format-xml", EV + ["{log}", "--format", "xml"], ["--format"]),
    ("cli-query-col-missing", EV + ["{log}", "--query-col", "qid"], ["qid"]),
    ("cli-score-col-missing", EV + ["{log}", "--score-col", "prediction"], ["prediction"]),
    ("cli-label-col-is-score", EV + ["{log}", "--label-col", "score", "--gain", "0,1,3"], ["label"]),
    ("cli-weight-col-missing", EV + ["{log}", "--weight-col", "clicks"], ["clicks"]),
    ("cli-weight-col-not-constant", EV + ["{log}", "--weight-col", "score"], ["score"]),
    ("cli-explain-bogus", EV + ["{log}", "--explain", "bogus", "--per-query", "{dir}/e.parquet"], ["explain"]),
    ("cli-complete-without-qrels", EV + ["{log}", "--complete"], ["--qrels"]),
    ("cli-per-query-is-input", EV + ["{log}", "--per-query", "{log}"], ["per"]),
    ("cli-per-query-bad-ext", EV + ["{log}", "--per-query", "{dir}/out.txt"], ["--per-query"]),
    ("cli-per-query-and-no", EV + ["{log}", "--per-query", "{dir}/o.parquet", "--no-per-query"], ["--no-per-query"]),
    ("cli-per-query-unwritable", EV + ["{log}", "--per-query", "/proc/nope/out.parquet"], ["/proc/nope"]),
    ("cli-per-query-qrels-input", EV + ["{run.txt}", "--qrels", "{qrels.txt}", "--per-query", "{qrels.txt}"], ["qrels.txt"]),
    ("cli-workers-0", EV + ["{log}", "--workers", "0"], ["0"]),
    ("cli-workers-letters", EV + ["{log}", "--workers", "two"], ["two"]),
    ("cli-scheduler-and-workers", EV + ["{log}", "--scheduler", "tcp://127.0.0.1:9", "--workers", "2"], ["--scheduler"]),
    ("cli-scheduler-unreachable", EV + ["{log}", "--scheduler", "tcp://127.0.0.1:9"], ["127.0.0.1:9"]),
    ("cli-scheduler-garbage", EV + ["{log}", "--scheduler", "not an address"], ["not an address"]),
    ("cli-scheduler-per-query-csv", EV + ["{log}", "--workers", "1", "--per-query", "{dir}/o.csv"], ["--per-query"]),
    ("cli-source-missing", EV + ["{dir}/nope.parquet"], ["nope.parquet"]),
    ("cli-source-txt-dir", EV + ["{dir}/txtdir"], ["txtdir"]),
    ("cli-source-zero-byte", EV + ["{dir}/zero.parquet"], ["zero.parquet"]),
    ("cli-source-text-parquet", EV + ["{dir}/text.parquet"], ["text.parquet"]),
    ("cli-source-truncated", EV + ["{dir}/trunc.parquet"], ["trunc.parquet"]),
    ("cli-source-magic-only", EV + ["{dir}/magic_only.parquet"], ["magic_only.parquet"]),
    ("cli-source-glob-nothing", EV + ["{dir}/zz*.parquet"], ["zz*"]),
    ("cli-source-schemas-differ", EV + ["{dir}/mixed"], ["score"]),
    ("cli-source-schemas-missing-col", EV + ["{dir}/mixed2"], ["label"]),
    ("cli-source-empty-parquet", EV + ["{dir}/empty.parquet"], ["empty"]),
    ("cli-source-no-label", EV + ["{dir}/nolabel.parquet"], ["label"]),
    ("cli-source-string-label", EV + ["{dir}/strlabel.parquet"], ["label"]),
    ("cli-source-null-label", EV + ["{dir}/nulllabel.parquet"], ["label"]),
    ("cli-qrels-missing", EV + ["{run.txt}", "--qrels", "{dir}/nope.qrels"], ["nope.qrels"]),
    ("cli-qrels-is-dir", EV + ["{run.txt}", "--qrels", "{dir}/txtdir"], ["txtdir"]),
    ("cli-qrels-empty", EV + ["{run.txt}", "--qrels", "{emptyqrels.txt}"], ["emptyqrels.txt"]),
    ("cli-qrels-given-run", EV + ["{run.txt}", "--qrels", "{run.txt}"], ["run.txt"]),
    ("cli-run-given-qrels", EV + ["{qrels.txt}", "--qrels", "{qrels.txt}"], ["qrels.txt"]),
    ("cli-qrels-str-grade", EV + ["{run.txt}", "--qrels", "{str_qrels.txt}"], ["str_qrels.txt"]),
    ("cli-qrels-nan-grade", EV + ["{run.txt}", "--qrels", "{nan_qrels.txt}"], ["nan_qrels.txt"]),
    ("cli-qrels-dup", EV + ["{run.txt}", "--qrels", "{dup_qrels.txt}"], ["d1"]),
    ("cli-run-few-fields", EV + ["{few.txt}", "--qrels", "{qrels.txt}"], ["few.txt"]),
    ("cli-run-nonnum", EV + ["{nonnum.txt}", "--qrels", "{qrels.txt}"], ["nonnum.txt"]),
    ("cli-run-empty", EV + ["{emptyrun.txt}", "--qrels", "{qrels.txt}"], ["emptyrun.txt"]),
    ("cli-run-blank", EV + ["{blank.txt}", "--qrels", "{qrels.txt}"], ["blank.txt"]),
    ("cli-run-garbage", EV + ["{garbage.txt}", "--qrels", "{qrels.txt}"], ["garbage.txt"]),
    ("cli-run-nan-score", EV + ["{nanscore.txt}", "--qrels", "{qrels.txt}"], ["nan"]),
    ("cli-run-dup-doc", EV + ["{dup_run.txt}", "--qrels", "{qrels.txt}"], ["d1"]),
    ("cli-run-truncated-gzip", EV + ["{trunc.txt.gz}", "--qrels", "{qrels.txt}"], ["trunc.txt.gz"]),
    ("cli-qrels-none-judged", EV + ["{run.txt}", "--qrels", "{nojudged_qrels.txt}"], ["judg"]),
    ("cli-synth-queries-0", ["synth", "--queries", "0", "--out", "{dir}/s.parquet"], ["--queries"]),
    ("cli-synth-no-out", ["synth", "--queries", "5"], ["--out"]),
    ("cli-synth-out-dir", ["synth", "--queries", "5", "--out", "{dir}/emptydir"], ["emptydir"]),
    ("cli-synth-out-unwritable", ["synth", "--queries", "5", "--out", "/proc/nope/s.parquet"], ["/proc/nope"]),
    ("cli-synth-seed-negative", ["synth", "--queries", "5", "--out", "{dir}/s.parquet", "--seed=-1"], ["--seed"]),
    ("cli-synth-mean-docs-0", ["synth", "--queries", "5", "--out", "{dir}/s.parquet", "--mean-docs", "0"], ["--mean-docs"]),
    ("cli-demo-queries-0", ["demo", "--queries", "0"], ["--queries"]),
    ("cli-demo-sample-letters", ["demo", "--sample", "x"], ["--sample"]),
    ("cli-k-duplicate", EV + ["{log}", "-k", "5,5"], ["twice"]),
    ("cli-per-query-json", EV + ["{log}", "--per-query", "{dir}/o.json"], ["--per-query"]),
    ("cli-m-bad-cutoff-list", EV + ["{log}", "-m", "ndcg_cut.5,x"], ["ndcg_cut.5,x"]),
    ("cli-weight-col-is-query", EV + ["{log}", "--weight-col", "query_id"], ["query_id"]),
    ("cli-run-latin1", EV + ["{latin.txt}", "--qrels", "{qrels.txt}"], ["latin.txt"]),
    ("cli-qrels-negative-grade", EV + ["{run.txt}", "--qrels", "{neg_qrels.txt}"], ["negative"]),
    ("cli-explain-without-per-query", EV + ["{log}", "--explain"], ["--explain", "--per-query"]),
    ("cli-run-not-gzip", EV + ["{notgz.txt.gz}", "--qrels", "{qrels.txt}"], ["notgz.txt.gz"]),
    ("cli-demo-keep-directory", ["demo", "--queries", "5", "--keep", "{dir}"], ["--keep"]),
    ("cli-empty-directory", EV + ["{dir}/emptydir"], ["emptydir", "parquet"]),
]


def _fill(arg: str, f: dict) -> str:
    def sub(m):
        key = m.group(1)
        return str(f["dir"]) if key == "dir" else str(f["log"] if key == "log" else f[key])
    return re.sub(r"\{([^}]+)\}", sub, arg)


@pytest.fixture(scope="module")
def cli_runs(f) -> dict:
    def one(case):
        name, args, _ = case
        cmd = [sys.executable, "-m", "fastndcg", *[_fill(a, f) for a in args]]
        try:
            return name, subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT,
                                        cwd=f["dir"], errors="replace")
        except subprocess.TimeoutExpired:
            return name, None

    with ThreadPoolExecutor(4) as pool:
        return dict(pool.map(one, CLI))


@pytest.mark.parametrize("case, args, words", CLI, ids=[c[0] for c in CLI])
def test_cli(cli_runs, f, case, args, words):
    proc = cli_runs[case]
    assert proc is not None, f"hung for {TIMEOUT} s"
    err = proc.stderr
    assert proc.returncode != 0, f"exit 0; stdout {proc.stdout!r}"
    assert "Traceback" not in err, err
    assert proc.stdout == "", f"stdout not empty: {proc.stdout!r}"
    assert err.startswith("fastndcg: error: "), err
    assert err.endswith("\n") and err.count("\n") == 1, f"not one line: {err!r}"
    check_message(err, [_fill(w, f) for w in words])
