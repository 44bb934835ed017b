"""Edge cases of the inputs other tools hold (dicts of dicts, ir_measures'
namedtuples, ranx objects) and of the ir_measures provider, each against
ir_measures' own default pipeline (``fastndcg.ir_measures.use(False)``): where
ir_measures answers, fastndcg gives its values; where it refuses (or the user's
roles are crossed), fastndcg refuses with a message that names the argument, the
offending id or record, and a fix."""

from __future__ import annotations

import math
import shutil

import pytest

ir_measures = pytest.importorskip("ir_measures")
from ir_measures import (AP, ERR, RR, Bpref, Judged, NumRel, P, Qrel, R,  # noqa: E402
                         ScoredDoc, nDCG)

import fastndcg  # noqa: E402
import fastndcg.ir_measures as fim  # noqa: E402

# measures of each provider fastndcg copies that take any query id: pytrec_eval's,
# judged's and msmarco's (gdeval's need numeric ids and Perl)
MEASURES = [nDCG @ 10, AP, P @ 5, RR, R @ 10, Bpref, NumRel, Judged @ 10, RR @ 10]
INTERNAL = ("Arrow", "_Fastndcg", "KeyError", "could not convert", "Could not convert")

QRELS = {"1": {"d1": 1, "d2": 2, "d3": 0}, "2": {"d1": 1, "d4": 0}}
RUN = {"1": {"d1": 0.5, "d2": 0.2, "d3": 0.9}, "2": {"d1": 1.0, "d5": 0.3}}


@pytest.fixture(autouse=True)
def _ir_measures_own_pipeline():
    """Every test starts (and ends) with ir_measures' own pipeline."""
    fim.use(False)
    yield
    fim.use(False)


def _per_query(results) -> dict:
    return {(str(m.measure), m.query_id): m.value for m in results}


def _ours(measures, qrels, run):
    """ir_measures' answers with fastndcg first in its pipeline."""
    with fim.used():
        assert ir_measures.DefaultPipeline.providers[0] is fim.provider
        return (_per_query(ir_measures.iter_calc(measures, qrels, run)),
                ir_measures.calc_aggregate(measures, qrels, run))


def _clean(err) -> str:
    text = str(err.value)
    assert not any(word in text for word in INTERNAL), text
    return text


def test_use_takes_a_bool_only():
    """use('off') used to turn the provider on (a truthy string)."""
    before = list(ir_measures.DefaultPipeline.providers)
    for bad in ("off", "False", 0, 1, None, [False]):
        with pytest.raises(TypeError, match=r"use\(False\)") as err:
            fim.use(bad)
        assert repr(bad) in str(err.value)
        assert ir_measures.DefaultPipeline.providers == before  # left as it was
    fim.use()
    assert ir_measures.DefaultPipeline.providers[0] is fim.provider
    fim.use(False)
    assert ir_measures.DefaultPipeline.providers == before
    fim.use(True)
    assert ir_measures.DefaultPipeline.providers[0] is fim.provider
    fim.use(False)
    assert ir_measures.DefaultPipeline.providers == before


@pytest.mark.parametrize("side", ["run", "qrels"])
def test_integer_ids_against_string_ids(side):
    """ir_measures' pytrec_eval provider refuses integer ids (its msmarco and judged
    providers then match nothing, its gdeval matches them as text): fastndcg used
    to answer with each query counted twice (once scored, once as a missing 0).
    It now refuses, naming both kinds and the fix."""
    run = {int(q): d for q, d in RUN.items()} if side == "run" else RUN
    qrels = {int(q): d for q, d in QRELS.items()} if side == "qrels" else QRELS
    with pytest.raises(TypeError):  # ir_measures itself
        ir_measures.calc_aggregate([nDCG @ 10], qrels, run)
    for measures in ([nDCG @ 10], [RR @ 10], MEASURES):
        with pytest.raises(TypeError, match=r"query ids.*integers.*strings.*str\(") as err:
            _ours(measures, qrels, run)
        _clean(err)
    # with the provider called directly too
    with pytest.raises(TypeError, match=r"query ids"):
        fim.provider.calc_aggregate([nDCG @ 10], qrels, run)
    # document ids the same
    run = {"1": {1: 0.5, 2: 0.9}}
    qrels = {"1": {"1": 1, "2": 0}}
    if side == "qrels":
        run, qrels = {"1": {"1": 0.5, "2": 0.9}}, {"1": {1: 1, 2: 0}}
    with pytest.raises(TypeError):
        ir_measures.calc_aggregate([nDCG @ 10], qrels, run)
    with pytest.raises(TypeError, match=r"document ids.*integers.*strings") as err:
        _ours([nDCG @ 10, RR @ 10], qrels, run)
    _clean(err)


def test_one_input_mixing_integer_and_string_ids():
    """A raw Arrow error used to escape ('Could not convert ...')."""
    run = {1: {"d1": 0.5}, "2": {"d1": 0.7}}
    with pytest.raises(TypeError, match=r"^source: .*query ids.*1.*'2'.*one kind") as err:
        fastndcg.evaluate(run, qrels=QRELS, measure="AP")
    _clean(err)
    with pytest.raises(TypeError, match=r"^qrels: .*document ids.*'d1'.*7.*one kind") as err:
        fastndcg.evaluate(RUN, qrels={"1": {"d1": 1, 7: 0}}, measure="AP")
    _clean(err)
    with pytest.raises(TypeError, match=r"^run: .*query ids") as err:
        _ours([AP], QRELS, [ScoredDoc("1", "d1", 0.5), ScoredDoc(2, "d1", 0.5)])
    _clean(err)


def test_empty_judgment_dict_scores_zero():
    """{"q1": {}} used to be dropped; ir_measures scores it with each measure's
    DEFAULT (0) wherever a pytrec_eval or judged measure is in the call (their
    providers take the dict's keys as the judged queries), and not at all with only
    msmarco's RR@k (it takes the queries of the judgments)."""
    qrels = {"q1": {}, "q2": {"d1": 1, "d2": 0}}
    run = {"q1": {"d1": 0.5, "d2": 0.3}, "q2": {"d1": 0.2, "d2": 0.9}}
    for measures in (MEASURES, [nDCG @ 10], [AP, RR @ 10], [Judged @ 10], [RR @ 10]):
        want = _per_query(ir_measures.iter_calc(measures, qrels, run))
        want_agg = ir_measures.calc_aggregate(measures, qrels, run)
        got, got_agg = _ours(measures, qrels, run)
        assert got == pytest.approx(want, abs=1e-12), measures
        assert got_agg == pytest.approx(want_agg, abs=1e-12), measures
    assert ("RR@10", "q1") not in got  # RR@k alone: msmarco's rule
    got, _ = _ours([nDCG @ 10, RR @ 10], qrels, run)
    assert got[("nDCG@10", "q1")] == 0 and got[("RR@10", "q1")] == 0
    if shutil.which("perl"):  # gdeval's measures (numeric query ids): as msmarco's
        qrels = {"1": {}, "2": {"d1": 1, "d2": 0}}
        run = {"1": {"d1": 0.5}, "2": {"d1": 0.2, "d2": 0.9}}
        for measures in ([ERR @ 10], [ERR @ 10, RR @ 10], [ERR @ 10, nDCG @ 10]):
            want = _per_query(ir_measures.iter_calc(measures, qrels, run))
            got, _ = _ours(measures, qrels, run)
            assert got == pytest.approx(want, abs=1e-12), measures
        assert ("ERR@10", "1") in got
    # judgments of empty queries only: every measure 0 for each
    want = _per_query(ir_measures.iter_calc([nDCG @ 10, AP], {"q1": {}}, run))
    assert _ours([nDCG @ 10, AP], {"q1": {}}, run)[0] == want == {
        ("nDCG@10", "q1"): 0.0, ("AP", "q1"): 0.0}


@pytest.mark.parametrize("where", ["run query", "qrels query", "run doc", "qrels doc",
                                   "record"])
def test_none_ids_are_refused(where):
    """{None: {...}} used to become a query named 'None'; ir_measures refuses it."""
    run, qrels = dict(RUN), dict(QRELS)
    if where == "run query":
        run[None] = {"d1": 0.5}
    elif where == "qrels query":
        qrels[None] = {"d1": 1}
    elif where == "run doc":
        run["2"] = {None: 0.5}
    elif where == "qrels doc":
        qrels["2"] = {"d1": 1, None: 2}
    else:
        run = [ScoredDoc("1", "d1", 0.5), ScoredDoc(None, "d2", 0.4)]
    with pytest.raises(TypeError):
        ir_measures.calc_aggregate([nDCG @ 10], qrels, run)
    arg = "qrels" if where.startswith("qrels") else "source"
    what = "document id" if where.endswith("doc") else "query id"
    with pytest.raises(ValueError, match=rf"^{arg}: .*{what} None") as err:
        fastndcg.evaluate(run, qrels=qrels, measure="nDCG@10")
    text = _clean(err)
    if where.endswith("doc"):
        assert "query '2'" in text
    with pytest.raises(ValueError, match=rf"{what} None") as err:
        _ours([nDCG @ 10], qrels, run)
    _clean(err)


def test_a_lone_none_query_is_not_named_none():
    """{None: {...}} alone used to be scored as a query named 'None'."""
    with pytest.raises(TypeError):  # ir_measures itself
        ir_measures.calc_aggregate([AP], {None: {"d1": 1}}, {None: {"d1": 0.5}})
    with pytest.raises(ValueError, match=r"^source: query id None .*drop it or give it one"):
        fastndcg.evaluate({None: {"d1": 0.5}}, qrels={"q": {"d1": 1}}, measure="AP")
    with pytest.raises(ValueError, match=r"^qrels: query id None"):
        fastndcg.evaluate({"q": {"d1": 0.5}}, qrels={None: {"d1": 1}}, measure="AP")
    with pytest.raises(ValueError, match=r"query id None"):
        _ours([AP], {None: {"d1": 1}}, {None: {"d1": 0.5}})


@pytest.mark.parametrize("side", ["run", "qrels"])
def test_lists_mixing_scored_docs_and_qrels(side):
    """A grade used to be read as a score (and a score as a grade)."""
    run = [ScoredDoc(q, d, s) for q, docs in RUN.items() for d, s in docs.items()]
    qrels = [Qrel(q, d, r) for q, docs in QRELS.items() for d, r in docs.items()]
    if side == "run":
        stray = Qrel("2", "d7", 3)
        run = run[:2] + [stray] + run[2:]
        index, arg, kind = 2, "source", "ScoredDoc"
    else:
        stray = ScoredDoc("1", "d9", 0.5)
        qrels = qrels[:3] + [stray] + qrels[3:]
        index, arg, kind = 3, "qrels", "Qrel"
    with pytest.raises(AttributeError):  # ir_measures itself
        ir_measures.calc_aggregate([nDCG @ 10], qrels, run)
    pattern = rf"record {index} is {type(stray).__name__}\(.*first.*{kind}"
    with pytest.raises(ValueError, match=rf"^{arg}: .*{pattern}") as err:
        fastndcg.evaluate(run, qrels=qrels, measure="nDCG@10")
    _clean(err)
    with pytest.raises(ValueError, match=pattern) as err:
        _ours([nDCG @ 10], qrels, run)
    _clean(err)


def test_roles_crossed():
    """A ranx Run given as qrels, or a ranx Qrels as the run, used to be read without
    a word (scores as grades); ir_measures' Qrel records as the run (and ScoredDocs as
    qrels), refused before, now say the roles are crossed rather than suggesting
    score= / label=."""
    ranx = pytest.importorskip("ranx")
    run, qrels = ranx.Run(RUN), ranx.Qrels(QRELS)
    with pytest.raises(ValueError, match=r"^qrels: .*ranx Run.*crossed") as err:
        fastndcg.evaluate(qrels, qrels=run, measure="nDCG@10")
    _clean(err)
    with pytest.raises(ValueError, match=r"^qrels: .*ranx Run.*crossed") as err:
        fastndcg.evaluate(RUN, qrels=run, measure="nDCG@10")
    _clean(err)
    with pytest.raises(ValueError, match=r"^source: .*ranx Qrels.*crossed"):
        fastndcg.evaluate(qrels, qrels=QRELS, measure="nDCG@10")
    with pytest.raises(ValueError, match=r"ranx Qrels.*crossed"):
        fastndcg.compare(None, {"a": qrels, "b": RUN}, qrels=QRELS, measure="nDCG@10",
                         n_resamples=100)
    with pytest.raises(ValueError, match=r"ranx Run.*crossed"):
        fim.provider.calc_aggregate([nDCG @ 10], run, qrels)
    # the right way round still reads
    assert fastndcg.evaluate(run, qrels=qrels, measure="nDCG@10").n_queries == 2
    # ir_measures' records, crossed
    scored = [ScoredDoc(q, d, s) for q, docs in RUN.items() for d, s in docs.items()]
    judged = [Qrel(q, d, r) for q, docs in QRELS.items() for d, r in docs.items()]
    with pytest.raises(ValueError):  # ir_measures itself
        ir_measures.calc_aggregate([nDCG @ 10], scored, judged)
    with pytest.raises(ValueError, match=r"^qrels: .*ScoredDoc records.*crossed"):
        fastndcg.evaluate(judged, qrels=scored, measure="nDCG@10")
    with pytest.raises(ValueError, match=r"^source: .*Qrel records.*crossed") as err:
        fastndcg.evaluate(judged, qrels=QRELS, measure="nDCG@10")
    _clean(err)
    with pytest.raises(ValueError, match=r"^qrels: .*ScoredDoc records.*crossed") as err:
        fastndcg.evaluate(RUN, qrels=scored, measure="nDCG@10")
    _clean(err)
    with pytest.raises(ValueError, match=r"crossed"):
        _ours([nDCG @ 10], QRELS, judged)


def test_empty_inputs_as_ir_measures():
    """Empty dicts (and lists) used to be refused as 'cannot read a dict'. In
    ir_measures an empty run scores every judged query 0, and empty judgments give
    no per-query value and NaN aggregates; fastndcg.evaluate, which has nothing to
    evaluate then, says so."""
    cases = [({}, {}), (QRELS, {}), ({}, RUN), (QRELS, []), ([], RUN), ([], []),
             ({"q1": {}}, {})]
    for qrels, run in cases:
        for measures in ([nDCG @ 10, AP], [RR @ 10], MEASURES):
            want = _per_query(ir_measures.iter_calc(measures, qrels, run))
            want_agg = ir_measures.calc_aggregate(measures, qrels, run)
            got, got_agg = _ours(measures, qrels, run)
            assert got == want, (qrels, run, measures)
            assert got_agg.keys() == want_agg.keys()
            for m in want_agg:
                assert (math.isnan(got_agg[m]) and math.isnan(want_agg[m])
                        or got_agg[m] == pytest.approx(want_agg[m], abs=1e-12)), (qrels, run, m)
    assert _ours([AP], QRELS, {})[1] == {AP: 0.0}
    assert math.isnan(_ours([AP], {}, RUN)[1][AP])
    with pytest.raises(ValueError, match=r"^source: .*empty.*\{query_id: \{doc_id: score") as err:
        fastndcg.evaluate({}, qrels=QRELS, measure="AP")
    _clean(err)
    with pytest.raises(ValueError, match=r"^qrels: .*empty.*\{query_id: \{doc_id: label") as err:
        fastndcg.evaluate(RUN, qrels={}, measure="AP")
    _clean(err)


def test_provider_messages_name_the_users_objects():
    """Errors from the evaluation under the provider named 'the Arrow table' (the
    provider's own copy of the user's judgments)."""
    qrels = [Qrel("1", "d1", 1), Qrel("1", "d1", 2)]
    with pytest.raises(ValueError, match=r"qrels judge document 'd1' of query '1' more than "
                                         r"once") as err:
        fim.provider.calc_aggregate([nDCG @ 10], qrels, RUN)
    _clean(err)


@pytest.mark.parametrize("gains", [{0: 0, 1: 1, 2: float("nan")}, {0: 0, 2: float("inf")},
                                   {0: 0, "x": 2}])
def test_a_gain_table_that_is_not_numbers_is_refused_when_asked(gains):
    """ir_measures' pipeline refuses such a table (pytrec_eval: "Expected relevance to
    be integer"); the provider says which grade and gain, before anything is read."""
    import ir_measures
    from ir_measures import nDCG
    import fastndcg.ir_measures as fim
    measure = nDCG(gains=gains) @ 10
    with pytest.raises(ValueError, match="gains maps grade .* must be a finite number"):
        fim.provider.supports(measure)
    qrels, run = {"q1": {"d1": 2, "d2": 0}}, {"q1": {"d1": 0.5, "d2": 0.9}}
    with pytest.raises(ValueError, match="must be a finite number"):
        fim.provider.calc_aggregate([measure], qrels, run)
    fim.use(False)
    with pytest.raises(Exception):
        ir_measures.calc_aggregate([measure], qrels, run)
