"""fastndcg inside ir_measures, against ir_measures itself (installed for real):
the provider's per-query values and aggregates equal ir_measures' own default
pipeline on every real run of ``tests/data/real``, measures it does not compute
fall through to ir_measures' providers, ``use(False)`` puts the pipeline back,
ir_measures' command line runs with ``--provider fastndcg``; and the run and
qrels shapes of ir_measures, PyTerrier and ranx are read by ``fastndcg.evaluate``
as the TREC files they came from."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ir_measures = pytest.importorskip("ir_measures")
from ir_measures import (AP, ERR, RBP, RR, SetAP, SetF, SetP, SetR, Bpref, IPrec,  # noqa: E402
                         Judged, NumQ, NumRel, NumRet, P, R, Rprec, Success, infAP, nDCG)

import fastndcg  # noqa: E402
import fastndcg.ir_measures as fim  # noqa: E402

REAL = Path(__file__).parent / "data" / "real"
QRELS_OF = {"core18_": "qrels.core18.txt.gz", "cedr-wt_": "qrels.cedr-wt.txt.gz",
            "rag24": "qrels.rag24.txt.gz"}
RUNS = sorted(p.name for p in (REAL / "runs").glob("*.run.gz"))

# a gains= table apart: in one call with plain nDCG, ir_measures' pytrec_eval
# provider may score the plain nDCG on the mapped judgments (it files plain nDCG
# under whichever of its invocations a set yields first)
GAINS = [nDCG(gains={0: 0, 1: 1, 2: 5}) @ 20, nDCG(gains={1: 3}) @ 10]
SUPPORTED = [nDCG, nDCG @ 10, nDCG @ 1000, AP, AP @ 100, AP(rel=2), RR, RR(rel=2), RR @ 10,
             RR(rel=2) @ 5, P @ 5, P(rel=2) @ 20, R @ 100, R @ 1000, Success @ 10,
             Success(rel=2) @ 1, Rprec, Rprec(rel=2), Judged @ 10, Judged @ 100, NumRet,
             NumRet(rel=1), NumRel, NumQ, Bpref, Bpref(rel=2), infAP, SetP, SetP(rel=2),
             SetR, SetF, SetF(beta=0.5), SetAP, SetP(relative=True)]
# gdeval's (ir_measures runs gdeval.pl through Perl; fastndcg needs no Perl)
GDEVAL = [ERR @ 5, ERR @ 20, nDCG(dcg="exp-log2") @ 10, nDCG(dcg="exp-log2") @ 20]
# pytrec_eval's judged_only (trec_eval -J) and its IPrec (trec_eval 9's rank of the
# relevant item), apart: with a judged_only measure in the call, ir_measures' pytrec_eval
# provider may file plain nDCG, NumRet and NumQ under the judged-only evaluation
JUDGED_ONLY = [P(judged_only=True) @ 10, nDCG(judged_only=True) @ 10, nDCG(judged_only=True),
               AP(judged_only=True), RR(judged_only=True), R(judged_only=True) @ 100,
               Success(judged_only=True) @ 5, Rprec(judged_only=True), SetP(judged_only=True),
               SetF(judged_only=True), P(rel=2, judged_only=True) @ 5,
               IPrec(judged_only=True) @ 0.3, IPrec @ 0.0, IPrec @ 0.2, IPrec @ 0.7,
               IPrec(rel=2) @ 0.5, IPrec @ 1.0]
# computed by ir_measures' own providers with fastndcg first
FALL_THROUGH = [RBP(rel=1), RBP(rel=2, p=0.5)]


def _qrels_path(run: str) -> Path:
    return REAL / "qrels" / next(q for p, q in QRELS_OF.items() if run.startswith(p))


def _per_query(results) -> dict:
    return {(str(m.measure), m.query_id): m.value for m in results}


@pytest.fixture(scope="module", params=RUNS)
def real(request):
    qrels = list(ir_measures.read_trec_qrels(str(_qrels_path(request.param))))
    run = list(ir_measures.read_trec_run(str(REAL / "runs" / request.param)))
    return qrels, run


def test_every_supported_measure_is_supported():
    unsupported = [m for m in SUPPORTED + GAINS + GDEVAL + JUDGED_ONLY
                   if not fim.provider.supports(m)]
    assert not unsupported
    assert not any(fim.provider.supports(m) for m in FALL_THROUGH)


def test_use_equals_ir_measures_default_pipeline(real):
    qrels, run = real
    measures = SUPPORTED
    want = _per_query(ir_measures.iter_calc(measures, qrels, run))
    want_agg = ir_measures.calc_aggregate(measures, qrels, run)
    with fim.used():
        assert ir_measures.DefaultPipeline.providers[0] is fim.provider
        got = _per_query(ir_measures.iter_calc(measures, qrels, run))
        got_agg = ir_measures.calc_aggregate(measures, qrels, run)
    assert ir_measures.DefaultPipeline.providers[0] is not fim.provider
    assert got.keys() == want.keys()
    bad = {k: (want[k], got[k]) for k in want if abs(want[k] - got[k]) > 1e-12}
    assert not bad, list(bad.items())[:5]
    for m in measures:
        assert got_agg[m] == pytest.approx(want_agg[m], abs=1e-12), m


@pytest.mark.skipif(shutil.which("perl") is None, reason="gdeval.pl needs Perl")
def test_gdeval_measures(real):
    """ERR@k and exponential nDCG@k as gdeval.pl prints them (5 decimals), ties
    by document id descending."""
    qrels, run = real
    want = _per_query(ir_measures.iter_calc(GDEVAL, qrels, run))
    with fim.used():
        got = _per_query(ir_measures.iter_calc(GDEVAL, qrels, run))
    # gdeval.pl keeps what follows the last '-' of a query id ("2024-127266" ->
    # "127266"): ir_measures reports the value under that id and 0 under the real
    # one; fastndcg reports it under the real id
    # (a query gdeval does not print, having no relevant judgment, is 0 under its id)
    renamed = {(m, q): (m, q.rsplit("-", 1)[-1]) for m, q in got}
    renamed = {k: v if v in want else k for k, v in renamed.items()}
    assert all(renamed[k] in want for k in got)
    bad = {k: (want[renamed[k]], got[k]) for k in got
           if abs(want[renamed[k]] - got[k]) > 1e-12}
    assert not bad, list(bad.items())[:5]


def test_unsupported_measures_fall_through(real):
    """Apart from the others: ir_measures' pytrec_eval provider files NumRet, NumQ
    and plain nDCG under whichever invocation a set yields first, judged_only's
    included."""
    qrels, run = real
    measures = FALL_THROUGH + [AP]
    want = _per_query(ir_measures.iter_calc(measures, qrels, run))
    with fim.used():
        got = _per_query(ir_measures.iter_calc(measures, qrels, run))
    assert got.keys() == want.keys()
    assert all(abs(want[k] - got[k]) <= 1e-12 for k in want)


def test_judged_only_and_iprec(real):
    """pytrec_eval's judged_only (the run cut to its documents judged >= 0; a query
    left with none scored on an empty ranking) and IPrec, per query and aggregated."""
    qrels, run = real
    want = _per_query(ir_measures.iter_calc(JUDGED_ONLY, qrels, run))
    want_agg = ir_measures.calc_aggregate(JUDGED_ONLY, qrels, run)
    with fim.used():
        got = _per_query(ir_measures.iter_calc(JUDGED_ONLY, qrels, run))
        got_agg = ir_measures.calc_aggregate(JUDGED_ONLY, qrels, run)
    assert got.keys() == want.keys()
    bad = {k: (want[k], got[k]) for k in want if not abs(want[k] - got[k]) <= 1e-12}
    assert not bad, list(bad.items())[:5]
    assert got_agg.keys() == want_agg.keys()
    assert all(abs(got_agg[m] - want_agg[m]) <= 1e-12 for m in want_agg)


@pytest.mark.parametrize("gains", GAINS, ids=str)
def test_gains_tables(real, gains):
    qrels, run = real
    want = _per_query(ir_measures.iter_calc([gains], qrels, run))
    with fim.used():
        got = _per_query(ir_measures.iter_calc([gains], qrels, run))
    assert got.keys() == want.keys()
    assert all(abs(want[k] - got[k]) <= 1e-12 for k in want)


def test_provider_directly_equals_pytrec_eval(real):
    """The provider alone, as ``ir_measures.providers.registry['fastndcg']``."""
    qrels, run = real
    measures = [nDCG @ 10, AP, P @ 10, R @ 1000, RR, NumRet, NumQ]
    provider = ir_measures.providers.registry["fastndcg"]
    want = _per_query(ir_measures.pytrec_eval.iter_calc(measures, qrels, run))
    got = _per_query(provider.iter_calc(measures, qrels, run))
    assert got.keys() == want.keys()
    assert all(abs(want[k] - got[k]) <= 1e-12 for k in want)
    # an evaluator scores several runs against the judgments it read once
    evaluator = provider.evaluator(measures, qrels)
    assert _per_query(evaluator.iter_calc(run)) == got
    assert _per_query(evaluator.iter_calc(run[::-1])) == got


def test_missing_queries_get_ir_measures_default():
    qrels = {"q1": {"d1": 1}, "q2": {"d2": 2, "d3": 0}}
    run = {"q1": {"d1": 0.5, "d9": 0.7}}
    measures = [nDCG @ 10, AP, NumRel, NumRet, Judged @ 5, RR @ 10]
    want = _per_query(ir_measures.iter_calc(measures, qrels, run))
    with fim.used():
        got = _per_query(ir_measures.iter_calc(measures, qrels, run))
    assert got == pytest.approx(want, abs=1e-12)
    assert got[("NumRel", "q2")] == 0  # ir_measures' DEFAULT, not the judged count


def test_ties_follow_the_provider_that_would_answer():
    """pytrec_eval ranks float32 scores with ties by document id descending;
    msmarco's RR@k and judged's Judged@k rank doubles, ties by id ascending."""
    qrels = {"q": {"a": 1, "c": 0}}
    run = {"q": {"a": 0.5 + 1e-9, "b": 0.5, "c": 0.5, "d": 0.9}}  # a ties b, c in float32
    measures = [RR, RR @ 10, Judged @ 2, P @ 2, AP]
    want = _per_query(ir_measures.iter_calc(measures, qrels, run))
    with fim.used():
        got = _per_query(ir_measures.iter_calc(measures, qrels, run))
    assert got == pytest.approx(want, abs=1e-12)
    assert got[("RR", "q")] != got[("RR@10", "q")]  # the two rules do differ here


def test_use_false_restores_the_pipeline():
    before = list(ir_measures.DefaultPipeline.providers)
    fim.use()
    fim.use()  # twice: still once in the pipeline
    assert ir_measures.DefaultPipeline.providers.count(fim.provider) == 1
    fim.use(False)
    assert ir_measures.DefaultPipeline.providers == before
    fim.use(False)  # no-op
    assert ir_measures.DefaultPipeline.providers == before


def test_importing_fastndcg_does_not_import_ir_measures():
    code = "import sys, fastndcg; print('ir_measures' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


def test_command_line_with_provider(tmp_path):
    run = REAL / "runs" / "core18_title_rm3.run.gz"
    qrels = _qrels_path(run.name)
    plain_run = tmp_path / "run.txt"
    plain_qrels = tmp_path / "qrels.txt"
    import gzip
    plain_run.write_bytes(gzip.decompress(run.read_bytes()))
    plain_qrels.write_bytes(gzip.decompress(qrels.read_bytes()))
    args = [str(plain_qrels), str(plain_run), "nDCG@10 AP P@5", "-q"]
    want = subprocess.run([sys.executable, "-m", "ir_measures", *args, "--provider",
                           "pytrec_eval"], capture_output=True, text=True, check=True)
    got = subprocess.run([sys.executable, "-m", "fastndcg.ir_measures", *args, "--provider",
                          "fastndcg"], capture_output=True, text=True, check=True)

    def rows(text):
        out = {}
        for line in text.splitlines():
            q, m, v = line.split("\t")
            out[(q, m)] = float(v)
        return out

    w, g = rows(want.stdout), rows(got.stdout)
    assert w.keys() == g.keys() and len(w) > 100
    assert all(abs(w[k] - g[k]) < 1e-4 for k in w)  # the command line prints 4 decimals


# --------------------------------------------------------------------------- input shapes

@pytest.fixture(scope="module")
def core18():
    run_path = REAL / "runs" / "core18_title_rm3.run.gz"
    qrels_path = _qrels_path(run_path.name)
    want = fastndcg.evaluate(run_path, qrels=qrels_path, preset="pytrec_eval",
                             measure="nDCG@10 AP P@10").per_query
    qrels = list(ir_measures.read_trec_qrels(str(qrels_path)))
    run = list(ir_measures.read_trec_run(str(run_path)))
    return run, qrels, want


def _same(got, want):
    """The same per-query values, query by query (a shape may hold queries in
    another order)."""
    got = got.per_query
    assert got.column_names == want.column_names
    for name in want.column_names[1:]:
        g = dict(zip(got.column("query_id").to_pylist(), got.column(name).to_pylist()))
        w = dict(zip(want.column("query_id").to_pylist(), want.column(name).to_pylist()))
        assert g.keys() == w.keys()
        assert all(abs(g[q] - w[q]) <= 1e-12 for q in w), name


def test_ir_measures_shapes(core18):
    import pandas as pd

    run, qrels, want = core18
    opts = dict(preset="pytrec_eval", measure="nDCG@10 AP P@10")
    _same(fastndcg.evaluate(iter(run), qrels=iter(qrels), **opts), want)  # namedtuples
    _same(fastndcg.evaluate(list(run), qrels=list(qrels), **opts), want)
    run_dd, qrels_dd = {}, {}
    for r in run:
        run_dd.setdefault(r.query_id, {})[r.doc_id] = r.score
    for q in qrels:
        qrels_dd.setdefault(q.query_id, {})[q.doc_id] = q.relevance
    _same(fastndcg.evaluate(run_dd, qrels=qrels_dd, **opts), want)  # dicts of dicts
    run_df, qrels_df = pd.DataFrame(run), pd.DataFrame(qrels)  # query_id/doc_id/relevance
    _same(fastndcg.evaluate(run_df, qrels=qrels_df, **opts), want)
    # PyTerrier's frames: qid/docno/score/rank (and the query text), qrels qid/docno/label
    pt_run = run_df.rename(columns={"query_id": "qid", "doc_id": "docno"}).assign(
        rank=lambda f: f.groupby("qid").cumcount(), query="some text")
    pt_qrels = qrels_df.rename(columns={"query_id": "qid", "doc_id": "docno",
                                        "relevance": "label"})
    _same(fastndcg.evaluate(pt_run, qrels=pt_qrels, **opts), want)


def test_ranx_shapes(core18):
    ranx = pytest.importorskip("ranx")
    run, qrels, want = core18
    run_dd, qrels_dd = {}, {}
    for r in run:
        run_dd.setdefault(r.query_id, {})[r.doc_id] = r.score
    for q in qrels:
        qrels_dd.setdefault(q.query_id, {})[q.doc_id] = q.relevance
    got = fastndcg.evaluate(ranx.Run(run_dd), qrels=ranx.Qrels(qrels_dd),
                            preset="pytrec_eval", measure="nDCG@10 AP P@10")
    _same(got, want)


def test_ambiguous_frame_names_the_options(core18):
    import pandas as pd

    run, qrels, _ = core18
    run_df = pd.DataFrame(run)
    both = run_df.assign(qid=run_df["query_id"])
    with pytest.raises(ValueError, match=r"'query_id' and 'qid'.*query='qid'.*drop 'qid'"):
        fastndcg.evaluate(both, qrels=pd.DataFrame(qrels), measure="AP")
    # choosing one reads it
    qrels_df = pd.DataFrame(qrels).rename(columns={"query_id": "qid"})
    got = fastndcg.evaluate(both.drop(columns="query_id"), qrels=qrels_df, query="qid",
                            measure="AP", preset="pytrec_eval")
    assert got.n_queries > 0


def test_bad_shapes_are_clear():
    with pytest.raises(TypeError, match="cannot read a list.*ir_measures' records"):
        fastndcg.evaluate([("q", "d", 1.0)], qrels={"q": {"d": 1}}, measure="AP")
    with pytest.raises(TypeError, match="query 'r' maps to a list"):
        fastndcg.evaluate({"q": {"d": 1.0}, "r": [1, 2]}, qrels={"q": {"d": 1}}, measure="AP")
    with pytest.raises(TypeError, match="cannot read a dict as a search log"):
        fastndcg.evaluate({"query_id": [1], "score": [0.5]}, qrels={"q": {"d": 1}})
    with pytest.raises(ValueError, match="score and a label"):
        fastndcg.evaluate({"q": {"d": 1.0}}, measure="AP")
    with pytest.raises(TypeError, match="must be a number"):
        fastndcg.evaluate({"q": {"d": "high"}}, qrels={"q": {"d": 1}}, measure="AP")


def test_compare_reads_the_shapes(core18):
    """compare's runs in the shapes above give what the same runs as tables give."""
    import pandas as pd

    run, qrels, _ = core18
    df = pd.DataFrame(run)
    other = df.assign(score=df["score"] * -1.0)
    dd = {}
    for r in other.itertuples():
        dd.setdefault(r.query_id, {})[r.doc_id] = r.score
    want = fastndcg.compare(None, {"a": pa_table(df), "b": pa_table(other)},
                            qrels=pd.DataFrame(qrels), k=10, n_resamples=500)
    got = fastndcg.compare(None, {"a": iter(run), "b": dd}, qrels=list(qrels), k=10,
                           n_resamples=500)
    assert str(got) == str(want)


def pa_table(df):
    import pyarrow as pa
    return pa.Table.from_pandas(df, preserve_index=False)


def test_pyterrier_experiment_prints_the_same_table():
    """pt.Experiment on real runs given as DataFrames (no index, no Java), with a
    baseline and a correction: the same table with and without use()."""
    pt = pytest.importorskip("pyterrier")
    import pandas as pd

    def frame(name):
        rows = list(ir_measures.read_trec_run(str(REAL / "runs" / name)))
        return pd.DataFrame(rows).rename(columns={"query_id": "qid", "doc_id": "docno"})

    names = ["core18_title_rm3.run.gz", "core18_desc_rm3.run.gz"]
    runs = [frame(n) for n in names]
    qrels = pd.DataFrame(list(ir_measures.read_trec_qrels(str(_qrels_path(names[0]))))).rename(
        columns={"query_id": "qid", "doc_id": "docno", "relevance": "label"})
    topics = pd.DataFrame({"qid": sorted(runs[0]["qid"].unique()), "query": "q"})
    systems = [pt.Transformer.from_df(r) for r in runs]
    measures = [nDCG @ 10, AP, RR @ 10, P @ 10, R @ 1000]

    def experiment():
        return pt.Experiment(systems, topics, qrels, measures, names=["title", "desc"],
                             baseline=0, correction="holm")

    want = experiment()
    with fim.used():
        got = experiment()
    assert got.to_string() == want.to_string()
    assert list(got.columns) == list(want.columns)
    pd.testing.assert_frame_equal(got, want, check_exact=False, rtol=1e-9, atol=1e-12)
