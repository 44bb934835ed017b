"""Hunting for bad or odd input: every kind below must end in a clear error.

Every refusal must (1) name the parameter, column, query or file it is about and
(2) either show the offending value or state the fix for that case. Each case says
both explicitly: ``names``, the words the message must all contain (case
ignored), and ``VALUE_OR_FIX[case]``, fragments of which at least one must appear
exactly: the offending value as the message shows it (``'10'``, ``'EXP2'``,
``got -2``, a file's path, a line of it) or a fix specific to that case
(``--qrels``, ``nan_scores='last'``, ``--per-query OUT``). The fragments come from
the input of the case, not from today's wording; every case must have one.
On the command line a message may name the flag (``--log-base``) or the Python
parameter (``log_base``).

Through the Python API the error is a ``ValueError`` / ``TypeError`` /
``FileNotFoundError``, never a silent number and never a raw Arrow / zlib /
KeyError / IndexError / AttributeError message. Through the command line: a
non-zero exit status, exactly one line on stderr starting with ``fastndcg:
error:``, nothing on stdout, no traceback, never a hang.

``ndcg_score`` / ``dcg_score`` keep scikit-learn's own messages, so only the
exception type and the words scikit-learn uses are checked there.

Inputs keep float64 scores with int64 labels (arrays) and the synthetic log's
types (int64 ids, float32 scores, int8 labels) so that no new Numba
specialisations are compiled. CLI cases run in this process (``tests/inprocess.py``).
"""

from __future__ import annotations

import datetime
import gzip
import re
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import fastndcg
from fastndcg.synth import synthetic_log

import inprocess

TIMEOUT = 60

S = np.array([0.5, 0.25, 1.0, 0.0])
L = np.array([1, 0, 2, 1], dtype=np.int64)
O = np.array([0, 2, 4], dtype=np.int64)

RAW = re.compile(r"ArrowInvalid|ArrowTypeError|ArrowNotImplemented|pyarrow\.lib|zlib|"
                 r"Error -3|KeyError|IndexError|AttributeError|Traceback|object has no "
                 r"attribute|list index out of range|numba|Numba")


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
    # ---- dcg_score: scikit-learn takes any finite log_base > 0 (0.0 with a warning at 1)
    ("dcg-score-log-base-1", lambda f: fastndcg.dcg_score([[1, 0, 2]], [[0.1, 0.2, 0.3]], log_base=1), ["log_base"]),
    ("dcg-score-log-base-below-1", lambda f: fastndcg.dcg_score([[1, 0, 2]], [[0.1, 0.2, 0.3]], log_base=0.5), ["log_base"]),
    ("dcg-score-log-base-inf", lambda f: fastndcg.dcg_score([[1, 0, 2]], [[0.1, 0.2, 0.3]], log_base=float("inf")), ["log_base"]),
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


def check_message(message: str, names, value_or_fix) -> None:
    """No raw error text; every name in ``names`` (case ignored); at least one
    fragment of ``value_or_fix`` exactly (the offending value or the fix)."""
    assert not RAW.search(message), f"raw error leaked: {message!r}"
    assert names, "the case names no parameter, column, query or file"
    for word in names:
        assert word.lower() in message.lower(), f"{word!r} not named in {message!r}"
    assert value_or_fix, "the case lists no value-or-fix fragment"
    assert any(frag in message for frag in value_or_fix), (
        f"shows neither the offending value nor the fix (one of {value_or_fix!r}): {message!r}")


@pytest.mark.parametrize("case, call, names", API, ids=[c[0] for c in API])
def test_api(f, case, call, names):
    f = _resolve_names(f)
    with pytest.raises((ValueError, TypeError, FileNotFoundError)) as err:
        result = call(f)
        pytest.fail(f"no error: returned {result!r}")
    check_message(str(err.value), names, [_fill(v, f) for v in VALUE_OR_FIX[case]])


@pytest.mark.parametrize("case, call, exc", SKLEARN, ids=[c[0] for c in SKLEARN])
def test_sklearn_dropins(case, call, exc):
    with pytest.raises(exc) as err:
        call()
    assert not RAW.search(str(err.value)), str(err.value)


# --------------------------------------------------------------------------- CLI cases

EV = ["evaluate"]
CLI = [
    ("cli-no-command", [], ["{evaluate,compare,agreement,trec_eval,demo,warmup,synth}"]),
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
    ("cli-compare-log-base-1", ["compare", "{log}", "--systems", "score,label", "--log-base", "1"], ["log"]),
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


# --------------------------------------------------------------------------- value or fix

# For every case, fragments of which at least one must appear in the message, exactly
# (case matters): the offending value as the message shows it, or the fix for that
# case. They are derived from the input of the case ({dir} is the data folder), not
# from the wording of today's message: a message that shows neither fails.
VALUE_OR_FIX = {
    # ---- k
    "k-str": ["'10'"],
    "k-list-with-str": ["'a'"],
    "k-nan": ["got nan"],
    "k-complex": ["1j"],
    "k-float-list": ["1.0"],
    "k-neg-in-array": ["-1"],
    # ---- gain
    "gain-int": ["got 5"],
    "gain-upper": ["'EXP2'"],
    "gain-empty-table": ["shape (0,)"],
    "gain-nan-table": ["[0.0, nan, 3.0]"],
    "gain-inf-table": ["[0.0, inf, 3.0]"],
    "gain-2d-table": ["shape (2, 2)"],
    "gain-table-too-short": ["label 2", "gain='exp2'"],
    "gain-table-fractional-label": ["label 0.5"],
    "gain-table-neg-entry": ["gain[1] = -1"],
    # ---- other options
    "ties-int": ["got 1"],
    "ties-empty": ["got ''"],
    "ties-list": ["['average']"],
    "log-base-1": ["got 1", "log_base=2"],
    "log-base-0": ["got 0"],
    "log-base-neg": ["got -2"],
    "log-base-nan": ["got nan"],
    "log-base-inf": ["got inf"],
    "log-base-str": ["'2'"],
    "log-base-bool": ["got True"],
    "log-base-below-1": ["got 0.5"],
    "zero-idcg-int": ["got 0"],
    "zero-idcg-upper": ["'ZERO'"],
    "zero-idcg-error-raises": ["zero_idcg='zero'"],
    "nan-scores-bool": ["got False"],
    "nan-scores-default": ["nan_scores='last'"],
    "neg-labels-int": ["got 0"],
    "neg-labels-default": ["label -1", "negative_labels='zero'"],
    "score-precision-float16": ["'float16'"],
    "score-precision-int": ["got 32"],
    "preset-unknown": ["'trec'"],
    "preset-int": ["got 1"],
    "preset-trec-on-ndcg": ["ties="],
    "preset-upper": ["'SKLEARN'"],
    # ---- scores / labels arrays
    "scores-0d": ["array(1.)"],
    "scores-2d": ["shape (2, 2)"],
    "scores-object-mixed": ["'a' at row 1"],
    "scores-complex": ["(0.5+0j)"],
    "scores-datetime": ["2020, 1, 1"],
    "scores-timedelta": ["timedelta(0)"],
    "scores-strings": ["'a' at row 0"],
    "scores-numeric-strings": ["'0.5'"],
    "scores-None": ["None (NoneType)"],
    "scores-str": ["'abcd'"],
    "scores-dict": ["{0: 0.5, 1: 0.2, 2: 1.0, 3: 0.0}"],
    "scores-set": ["0.2"],
    "scores-generator": ["<generator object"],
    "scores-arrow-strings": ["'a' at row 0"],
    "scores-arrow-nulls": ["row 1"],
    "scores-arrow-list": ["[0.5]"],
    "scores-pandas-object-none": ["None at row 1"],
    "scores-pandas-nullable-na": ["nan_scores='last'"],
    "scores-pandas-dataframe": ["shape (4, 2)"],
    "scores-bytes": [r"b'\x00\x01\x02\x03'"],
    "labels-strings": ["'1' at row 0"],
    "labels-complex": ["(1+0j)"],
    "labels-datetime": ["2020, 1, 1"],
    "labels-None": ["None (NoneType)"],
    "labels-object-mixed": ["'a' at row 1"],
    "labels-nan-pandas": ["label nan"],
    "labels-exp2-overflow": ["label 2000", "gain='linear'"],
    "labels-arrow-nulls": ["row 1"],
    "labels-longer": ["4 and 5"],
    "labels-empty-scores-not": ["4 and 0"],
    # ---- offsets
    "offsets-str": ["'0,2,4'"],
    "offsets-object-mixed": ["numpy.asarray(offsets, dtype=numpy.int64)"],
    "offsets-arrow-null": ["[0, None, 4]"],
    "offsets-dict": ["{0: 0, 1: 2, 2: 4}"],
    "offsets-beyond-then-back": ["1099511627776"],
    "offsets-complex": ["dtype complex128"],
    "offsets-datetime": ["dtype datetime64[s]"],
    "offsets-uint64-huge": ["18446744073709551615"],
    "offsets-2d-column": ["shape (3, 1)"],
    "offsets-single-zero": ["offsets[-1] = 0"],
    # ---- query ids
    "qids-str-scalar": ["'aabb'"],
    "qids-int-scalar": ["got 5"],
    "qids-complex": ["complex128"],
    "qids-object-mixed": ["['a', 1, 'a', 1]"],
    "qids-too-short-bytes": ["3 ids for 4 rows"],
    "qids-datetime-wrong-length": ["date32"],
    "qids-pandas-na": ["row 1"],
    "qids-with-offsets": ["not both"],
    # ---- idcg / dcg
    "idcg-strings": ["'1' at row 0"],
    "idcg-k0": ["got 0"],
    "idcg-gain-bad": ["'log'"],
    "dcg-log-base-1": ["got 1"],
    "dcg-preset-bad": ["'nope'"],
    "dcg-score-log-base-1": ["got 1", "log_base=2"],
    "dcg-score-log-base-below-1": ["got 0.5"],
    "dcg-score-log-base-inf": ["Got inf"],
    # ---- evaluate: sources
    "ev-source-None": ["got None"],
    "ev-source-int": ["got 123"],
    "ev-source-list-of-ints": ["got [1, 2]"],
    "ev-source-missing-file": ["{dir}/nope.parquet"],
    "ev-source-dir-no-parquet": ["notes.txt"],
    "ev-source-zero-byte": ["0 bytes"],
    "ev-source-text-as-parquet": ["query_id,score"],
    "ev-source-truncated": ["Write it again"],
    "ev-source-magic-only": ["4 bytes"],
    "ev-source-glob-nothing": ["{dir}/zz*.parquet"],
    "ev-source-schemas-differ-type": ["type string"],
    "ev-source-schemas-differ-missing": ["label="],
    "ev-source-empty-table": ["no rows"],
    "ev-source-numpy-array": ["array([[0., 0., 0.]"],
    "ev-source-dict": ["{'query_id': [1]"],
    # ---- evaluate: tables
    "ev-missing-label": ["label="],
    "ev-missing-query": ["query="],
    "ev-label-strings": ["type string"],
    "ev-score-strings": ["type string"],
    "ev-label-all-null": ["null value", "fill_null"],
    "ev-score-list-col": ["list<item: double>"],
    "ev-label-struct-col": ["struct<a: int64>"],
    "ev-query-list-col": ["list<item: int64>"],
    "ev-query-struct-col": ["struct<q: int64>"],
    "ev-query-all-null": ["null query id"],
    "ev-score-all-null": ["null value", "fill_null"],
    "ev-score-bool-col-null": ["null value", "fill_null"],
    "ev-dup-column": ["2 times"],
    "ev-zero-rows": ["no rows"],
    "ev-unicode-missing-col": ["query="],
    "ev-query-is-score": ["query='score'"],
    "ev-score-is-label": ["score='label'"],
    "ev-query-col-int": ["got 1"],
    "ev-score-col-None": ["got None"],
    "ev-label-col-list": ["['label']"],
    "ev-doc-col-bytes": ["b'doc_id'"],
    "ev-trec-ties-no-doc": ["doc="],
    "ev-label-nan": ["label nan"],
    "ev-pandas-missing-col": ["score="],
    # ---- evaluate: options
    "ev-k-str": ["'5'"],
    "ev-k-zero": ["got 0"],
    "ev-gain-bad": ["'log2'"],
    "ev-ties-bad": ["'random'"],
    "ev-log-base-bad": ["got 1.0"],
    "ev-zero-idcg-bad": ["'none'"],
    "ev-nan-scores-bad": ["'first'"],
    "ev-neg-labels-bad": ["'abs'"],
    "ev-score-precision-bad": ["'half'"],
    "ev-preset-bad": ["'galago'"],
    "ev-preset-ltr-with-qrels": ["drop qrels="],
    "ev-measure-cut0": ["cutoff 0"],
    "ev-measure-unknown": ["'map'"],
    "ev-measure-at0": ["cutoff 0"],
    "ev-measure-atx": ["cutoff 'x'"],
    "ev-measure-int": ["got 5"],
    "ev-measure-empty-list": ["[] names no measure"],
    "ev-measure-empty-str": ["'' names no measure"],
    "ev-measure-and-k": ["k=[1, 3]"],
    "ev-measure-unbalanced": ["close it with ')'"],
    "ev-measure-bad-param": ["drop it"],
    "ev-weight-missing": ["weight="],
    "ev-weight-not-constant": ["weight='score'"],
    "ev-weight-int": ["got 5"],
    "ev-weight-negative": ["-1.0"],
    "ev-weight-all-zero": ["sum to zero"],
    "ev-weight-nan": ["has nan"],
    "ev-weight-strings": ["type string"],
    "ev-explain-bogus": ["'bogus'"],
    "ev-explain-list-bogus": ["'x'"],
    "ev-explain-int": ["got 5"],
    "ev-explain-judged-no-qrels": ["qrels="],
    "ev-per-query-int": ["got 5"],
    "ev-per-query-true": ["got True"],
    "ev-per-query-is-source": ["Choose another path"],
    "ev-per-query-unwritable": ["'/proc/nope/out.parquet'"],
    "ev-per-query-dir-of-source": ["Choose another path"],
    "ev-batch-rows-0": ["got 0"],
    "ev-batch-rows-neg": ["got -1"],
    "ev-batch-rows-str": ["got '10'"],
    "ev-batch-rows-float": ["got 2.5"],
    "ev-batch-rows-bool": ["got True"],
    "ev-complete-str": ["'yes'"],
    "ev-complete-no-qrels": ["qrels="],
    # ---- evaluate: qrels / TREC
    "qrels-missing-file": ["{dir}/nope.qrels"],
    "qrels-empty-file": ["0 rows"],
    "qrels-is-dir": ["notes.txt"],
    "qrels-given-run": ["'q1 Q0 d1 1 0.9 t'"],
    "run-given-qrels": ["'q1 0 d1 1'"],
    "qrels-table-no-label": ["label="],
    "qrels-frac-gain-table": ["label 1.5"],
    "qrels-str-grade": ["'high'"],
    "qrels-too-few-fields": ["'q1 0 d1'"],
    "qrels-nan-grade": ["label nan"],
    "qrels-inf-grade": ["label inf"],
    "qrels-dup": ["keep one judgment per"],
    "qrels-none-judged": ["'q1'"],
    "run-too-few-fields": ["'q1 Q0 d2'"],
    "run-non-numeric-score": ["'high'"],
    "run-empty": ["no rows"],
    "run-blank-lines": ["no rows"],
    "run-binary-garbage": ["0x80"],
    "run-nan-score": ["nan_scores='last'"],
    "run-dup-doc": ["keep one row per"],
    "run-truncated-gzip": ["compress it again"],
    "run-missing-file": ["{dir}/nope.run"],
    # ---- dask
    "dask-source-missing": ["{dir}/nope.parquet"],
    # ---- more evaluate / ndcg kinds
    "ev-k-duplicate": ["[5, 5]"],
    "ev-label-bool-col": ["type bool"],
    "ev-label-frac-gain-table": ["label 0.5"],
    "ev-per-query-json": ["'out.json'"],
    "ev-measure-bad-cutoff-list": ["cutoff 'x'"],
    "ev-weight-list-col": ["list<item: double>"],
    "ev-weight-is-query": ["weight='query_id'"],
    "ev-weight-is-label": ["weight='label'"],
    "ev-weight-inf": ["has inf"],
    "run-latin1-bytes": ["0xe9"],
    "qrels-negative-grade-default": ["label -1", "negative_labels='zero'"],
    "qrels-dataframe-wrong-cols": ["query="],
    "k-empty-tuple": ["k=[10]"],
    "labels-bytes-dtype": ["b'1'"],
    "gain-dict": ["{0: 0, 1: 1, 2: 3}"],
    "gain-numpy-2d": ["shape (1, 3)"],
    "gain-set": ["{0, 1, 3}"],
    "qids-nested-tuples": ["[(1, 2), (1, 2)"],
    "labels-float16-exp2-overflow": ["label 60000"],
    "scores-object-with-none": ["None at row 1"],
    "labels-categorical-strings": ["'a' at row 0"],
    "preset-list": ["['sklearn']"],
    "ties-trec-over-preset": ["use 'average'"],
    # ---- found by this module, fixed at the root
    "k-2d-array": ["shape (1, 2)"],
    "k-dict": ["{1: 2}"],
    "k-set": ["{1, 3}"],
    "gain-table-of-strings": ["['0', '1', '3']"],
    "explain-without-per-query": ["per_query=None"],
    "progress-not-bool": ["'no'"],
    "scores-ragged": ["[[0.5], [0.2, 1.0]"],
    "qids-ragged": ["[[1], [1, 2]"],
    "qids-structs": ["struct<a: int64>"],
    "qids-arrow-lists": ["list<item: int64>"],
    "pandas-mixed-object-score": ["df['score'].astype(float)"],
    "qrels-huge-grade": ["1e+23"],
    "qrels-int": ["got 5"],
    "qrels-list": ["got [1, 2]"],
    "run-not-gzip": ["compress it again"],
    "empty-directory-says-what": ["put the Parquet files there"],
    # ---- command line
    "cli-no-command": ["are required"],
    "cli-unknown-command": ["choose from 'trec_eval', 'evaluate'"],
    "cli-evaluate-no-source": ["are required"],
    "cli-unknown-flag": ["unrecognized arguments: --bogus"],
    "cli-k-zero": ["'0'"],
    "cli-k-letters": ["'a'"],
    "cli-k-empty": ["got ''"],
    "cli-k-trailing-comma": ["'5,'"],
    "cli-k-float": ["'2.5'"],
    "cli-k-no-value": ["expected one argument"],
    "cli-k-and-m": ["not both"],
    "cli-m-unknown": ["'map'"],
    "cli-m-cut0": ["cutoff 0"],
    "cli-m-no-value": ["expected one argument"],
    "cli-preset-unknown": ["'galago'"],
    "cli-preset-lightgbm-qrels": ["drop qrels=", "drop --qrels"],
    "cli-gain-bad": ["'a,b'"],
    "cli-gain-empty": ["got ''"],
    "cli-gain-negative-table": ["gain[1] = -1"],
    "cli-ties-bogus": ["'random'"],
    "cli-ties-trec-no-doc": ["--doc-col"],
    "cli-zero-idcg-bogus": ["'none'"],
    "cli-log-base-letters": ["'e'"],
    "cli-log-base-1": ["got 1.0"],
    "cli-log-base-negative": ["got -2.0"],
    "cli-log-base-nan": ["got nan"],
    "cli-compare-log-base-1": ["got 1.0"],
    "cli-nan-scores-bogus": ["'first'"],
    "cli-negative-labels-bogus": ["'abs'"],
    "cli-score-precision-bogus": ["'half'"],
    "cli-format-xml": ["'xml'"],
    "cli-query-col-missing": ["--query-col"],
    "cli-score-col-missing": ["--score-col"],
    "cli-label-col-is-score": ["'score'"],
    "cli-weight-col-missing": ["--weight-col"],
    "cli-weight-col-not-constant": ["'score'"],
    "cli-explain-bogus": ["'bogus'"],
    "cli-complete-without-qrels": ["--qrels"],
    "cli-per-query-is-input": ["Choose another path"],
    "cli-per-query-bad-ext": ["{dir}/out.txt"],
    "cli-per-query-and-no": ["give one"],
    "cli-per-query-unwritable": ["'/proc/nope/out.parquet'"],
    "cli-per-query-qrels-input": ["got '{dir}/qrels.txt'"],
    "cli-workers-0": ["got '0'"],
    "cli-workers-letters": ["got 'two'"],
    "cli-scheduler-and-workers": ["give one"],
    "cli-scheduler-unreachable": ["'tcp://127.0.0.1:9'"],
    "cli-scheduler-garbage": ["'not an address'"],
    "cli-scheduler-per-query-csv": ["{dir}/o.csv"],
    "cli-source-missing": ["{dir}/nope.parquet"],
    "cli-source-txt-dir": ["notes.txt"],
    "cli-source-zero-byte": ["0 bytes"],
    "cli-source-text-parquet": ["query_id,score"],
    "cli-source-truncated": ["Write it again"],
    "cli-source-magic-only": ["4 bytes"],
    "cli-source-glob-nothing": ["{dir}/zz*.parquet"],
    "cli-source-schemas-differ": ["type string"],
    "cli-source-schemas-missing-col": ["--label-col"],
    "cli-source-empty-parquet": ["no rows"],
    "cli-source-no-label": ["--label-col"],
    "cli-source-string-label": ["type string"],
    "cli-source-null-label": ["null value", "fill_null"],
    "cli-qrels-missing": ["{dir}/nope.qrels"],
    "cli-qrels-is-dir": ["notes.txt"],
    "cli-qrels-empty": ["0 rows"],
    "cli-qrels-given-run": ["'q1 Q0 d1 1 0.9 t'"],
    "cli-run-given-qrels": ["'q1 0 d1 1'"],
    "cli-qrels-str-grade": ["'high'"],
    "cli-qrels-nan-grade": ["label nan"],
    "cli-qrels-dup": ["keep one judgment per"],
    "cli-run-few-fields": ["'q1 Q0 d2'"],
    "cli-run-nonnum": ["'high'"],
    "cli-run-empty": ["no rows"],
    "cli-run-blank": ["no rows"],
    "cli-run-garbage": ["0x80"],
    "cli-run-nan-score": ["nan_scores='last'", "--nan-scores last"],
    "cli-run-dup-doc": ["keep one row per"],
    "cli-run-truncated-gzip": ["compress it again"],
    "cli-qrels-none-judged": ["'q1'"],
    "cli-synth-queries-0": ["got '0'"],
    "cli-synth-no-out": ["are required"],
    "cli-synth-out-dir": ["name a file"],
    "cli-synth-out-unwritable": ["'/proc/nope/s.parquet'"],
    "cli-synth-seed-negative": ["'-1'"],
    "cli-synth-mean-docs-0": ["got '0'"],
    "cli-demo-queries-0": ["got '0'"],
    "cli-demo-sample-letters": ["got 'x'"],
    "cli-k-duplicate": ["[5, 5]"],
    "cli-per-query-json": ["{dir}/o.json"],
    "cli-m-bad-cutoff-list": ["cutoff 'x'"],
    "cli-weight-col-is-query": ["'query_id'"],
    "cli-run-latin1": ["0xe9"],
    "cli-qrels-negative-grade": ["label -1"],
    "cli-explain-without-per-query": ["--per-query OUT"],
    "cli-run-not-gzip": ["compress it again"],
    "cli-demo-keep-directory": ["name a file"],
    "cli-empty-directory": ["put the Parquet files there"],
}


def test_every_case_has_value_or_fix():
    cases = [c[0] for c in API] + [c[0] for c in CLI]
    assert len(cases) == len(set(cases)), "case ids repeat"
    missing = [c for c in cases if not VALUE_OR_FIX.get(c)]
    assert not missing, f"cases without a value-or-fix fragment: {missing}"
    stale = sorted(set(VALUE_OR_FIX) - set(cases))
    assert not stale, f"fragments for cases that do not exist: {stale}"
    empty = [c for c, frags in VALUE_OR_FIX.items() if not all(frags)]
    assert not empty, f"empty fragments: {empty}"
    unnamed = [c[0] for c in API + CLI if not c[2]]
    assert not unnamed, f"cases that name nothing: {unnamed}"


def _fill(arg: str, f: dict) -> str:
    def sub(m):  # {dir}, {log} and the data files by name; other braces stay as written
        key = m.group(1)
        return str(f["dir"] if key == "dir" else f["log"] if key == "log" else f.get(key, m.group(0)))
    return re.sub(r"\{([^}]+)\}", sub, arg)


@pytest.fixture(scope="module")
def cli_runs(f) -> dict:
    """Every case through ``fastndcg.cli.main`` in this process (``inprocess.run_many``;
    tests/test_cli.py runs a few error cases as real processes); None: it hung."""
    return inprocess.run_many({name: [_fill(a, f) for a in args] for name, args, _ in CLI},
                              cwd=f["dir"], timeout=TIMEOUT)


@pytest.mark.parametrize("case, args, names", CLI, ids=[c[0] for c in CLI])
def test_cli(cli_runs, f, case, args, names):
    proc = cli_runs[case]
    assert proc is not None, f"hung for {TIMEOUT} s"
    err = proc.stderr
    assert proc.returncode != 0, f"exit 0; stdout {proc.stdout!r}"
    assert "Traceback" not in err, err
    assert proc.stdout == "", f"stdout not empty: {proc.stdout!r}"
    assert err.startswith("fastndcg: error: "), err
    assert err.endswith("\n") and err.count("\n") == 1, f"not one line: {err!r}"
    check_message(err, [_fill(w, f) for w in names], [_fill(v, f) for v in VALUE_OR_FIX[case]])
