"""Parity with trec_eval: its own test fixtures and pytrec_eval on generated runs.

1. tests/data/trec_eval/ (see README.md there) holds unmodified copies of
   usnistgov/trec_eval's test fixtures: a run, its qrels and trec_eval's printed
   ``-m all_trec -q`` output (``out.test.aq``; with ``-c`` on a truncated run,
   ``out.test.aqc``). fastndcg in qrels mode with ``gain="linear", ties="trec"``
   must reproduce every ``ndcg`` and ``ndcg_cut_K`` line, per query and ``all``, to
   the 4 printed decimals; also when the same files are written with other
   separators, compressed, or with the queries interleaved.
2. Generated runs with heavily tied scores and graded qrels (judged documents not
   retrieved, retrieved documents not judged, queries on one side only), evaluated
   by pytrec_eval (trec_eval's code) and by fastndcg, must agree per query to 1e-12,
   and fastndcg must agree with its own pure-Python oracle
   (:func:`fastndcg.reference.ndcg_query`).

No expected number is hard-coded: every reference value comes from trec_eval's files,
pytrec_eval or the oracle.
"""

from __future__ import annotations

import gzip
import math
import random
import tempfile
from collections import defaultdict
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fastndcg
from trec_output import parse_trec_eval
from fastndcg import reference

from strategies import examples

DATA = Path(__file__).parent / "data" / "trec_eval"
QRELS = DATA / "qrels.test"
RUN = DATA / "results.test"
RUN_TRUNC = DATA / "results.trunc"
OUT_AQ = DATA / "out.test.aq"
OUT_AQC = DATA / "out.test.aqc"
TREC = dict(gain="linear", ties="trec")
TOL = 1e-12


# --------------------------------------------------------------------------- trec_eval's output

def _parse_trec_output(path: Path) -> dict[str, dict[str, float]]:
    """``{measure: {qid or "all": value}}`` of the ndcg and ndcg_cut_K lines."""
    return {m: {q: float(v) for q, v in per.items()} for m, per in parse_trec_eval(path).items()
            if m == "ndcg" or m.startswith("ndcg_cut_")}


def _cutoffs(expected: dict) -> list[int]:
    return sorted(int(m[len("ndcg_cut_"):]) for m in expected if m.startswith("ndcg_cut_"))


def _column(measure: str) -> str:
    return "ndcg" if measure == "ndcg" else f"ndcg@{measure[len('ndcg_cut_'):]}"


def _run_lines(path: Path) -> dict[str, int]:
    """Rows of each query in a TREC run file."""
    counts: dict[str, int] = defaultdict(int)
    for line in path.read_text().splitlines():
        if line.strip():
            counts[line.split()[0]] += 1
    return dict(counts)


def _evaluate_like_trec_eval(run: Path, qrels: Path, expected: dict, complete: bool):
    """fastndcg reports for every ndcg_cut_K of ``expected`` and, when printed, ``ndcg``."""
    extra = dict(complete=True) if complete else {}
    reports = [fastndcg.evaluate(run, qrels=qrels, k=_cutoffs(expected), **TREC, **extra)]
    if "ndcg" in expected:
        reports.append(fastndcg.evaluate(run, qrels=qrels, k=None, **TREC, **extra))
    return reports


def _per_query(report) -> dict[str, dict]:
    table = report.per_query
    assert table.column_names[:2] == ["query_id", "n_docs"]
    rows = table.to_pylist()
    ids = [r["query_id"] for r in rows]
    assert all(isinstance(q, str) for q in ids), ids
    assert len(set(ids)) == len(ids), f"a query scored twice: {ids}"
    return {r["query_id"]: r for r in rows}


def _check_against_output(reports, expected: dict, run_counts: dict[str, int],
                          where: str = "") -> None:
    checked = 0
    for measure, values in expected.items():
        column = _column(measure)
        report = next(r for r in reports if column in r.per_query.column_names)
        per_query = _per_query(report)
        queries = {q for q in values if q != "all"}
        assert set(per_query) == queries, f"{where}{measure}: queries {sorted(per_query)} " \
                                          f"vs trec_eval's {sorted(queries)}"
        for qid in queries:
            got = per_query[qid][column]
            assert round(got, 4) == values[qid], \
                f"{where}{measure} query {qid}: fastndcg {got!r} vs trec_eval {values[qid]}"
            assert per_query[qid]["n_docs"] == run_counts.get(qid, 0), f"{where}n_docs of {qid}"
            checked += 1
        got = report.mean[column]
        assert round(got, 4) == values["all"], \
            f"{where}{measure} all: fastndcg {got!r} vs trec_eval {values['all']}"
        assert report.n_queries == len(queries)
        checked += 1
    assert checked == sum(len(v) for v in expected.values())


@pytest.fixture(scope="module")
def expected_aq():
    expected = _parse_trec_output(OUT_AQ)
    assert "ndcg" in expected and len(_cutoffs(expected)) >= 5
    return expected


@pytest.fixture(scope="module")
def expected_aqc():
    expected = _parse_trec_output(OUT_AQC)
    assert "ndcg" in expected and len(_cutoffs(expected)) >= 5
    return expected


def test_fixture_output_parsed(expected_aq, expected_aqc):
    # every ndcg/ndcg_cut line of the files is collected (and nothing else)
    for path, expected in ((OUT_AQ, expected_aq), (OUT_AQC, expected_aqc)):
        lines = [ln.split()[0] for ln in path.read_text().splitlines() if ln.strip()]
        n = sum(1 for m in lines if m == "ndcg" or m.startswith("ndcg_cut_"))
        assert n == sum(len(v) for v in expected.values()) > 0
        assert all(set(v) == {"301", "302", "303", "all"} for v in expected.values())


def test_trec_eval_out_test_aq(expected_aq):
    reports = _evaluate_like_trec_eval(RUN, QRELS, expected_aq, complete=False)
    _check_against_output(reports, expected_aq, _run_lines(RUN))
    for report in reports:
        assert report.n_missing == 0 and report.n_unjudged == 0
        assert report.n_rows == sum(_run_lines(RUN).values())


def test_trec_eval_out_test_aqc_complete(expected_aqc):
    """-c: query 302 is judged but absent from results.trunc and counts as 0."""
    counts = _run_lines(RUN_TRUNC)
    assert "302" not in counts
    reports = _evaluate_like_trec_eval(RUN_TRUNC, QRELS, expected_aqc, complete=True)
    _check_against_output(reports, expected_aqc, counts)
    for report in reports:
        assert report.n_missing == 1 and report.n_unjudged == 0
        assert report.n_rows == sum(counts.values())
        row = _per_query(report)["302"]
        assert row["n_docs"] == 0
        assert all(v == 0.0 for c, v in row.items() if c.startswith("ndcg"))


def test_trec_eval_trunc_without_complete(expected_aqc):
    """Without -c the missing query is left out (and counted), the others unchanged."""
    counts = _run_lines(RUN_TRUNC)
    for report in _evaluate_like_trec_eval(RUN_TRUNC, QRELS, expected_aqc, complete=False):
        per_query = _per_query(report)
        assert set(per_query) == {"301", "303"}
        assert report.n_missing == 1 and report.n_unjudged == 0
        assert report.n_queries == 2
        for column in report.per_query.column_names[2:]:
            measure = "ndcg" if column == "ndcg" else f"ndcg_cut_{column[len('ndcg@'):]}"
            values = [per_query[q][column] for q in ("301", "303")]
            for qid, got in zip(("301", "303"), values):
                assert round(got, 4) == expected_aqc[measure][qid], f"{measure} {qid}"
                assert per_query[qid]["n_docs"] == counts[qid]
            assert report.mean[column] == pytest.approx(sum(values) / 2, abs=TOL)
            # trec_eval's -c mean is the same sum over 3 queries
            assert abs(report.mean[column] * 2 / 3 - expected_aqc[measure]["all"]) <= 0.5e-4 + 1e-9


# --------------------------------------------------------------------------- file variants

def _data_lines(path: Path) -> list[str]:
    return [ln for ln in path.read_text().splitlines() if ln.strip()]


def _write(path: Path, lines: list[str], compress: bool = False, newline: str = "\n") -> Path:
    text = "".join(ln + newline for ln in lines)
    if compress:
        with gzip.open(path, "wt", newline="") as f:
            f.write(text)
    else:
        path.write_bytes(text.encode())
    return path


def _single_spaces(lines: list[str]) -> list[str]:
    return [" ".join(ln.split()) for ln in lines]


def _interleave(lines: list[str]) -> list[str]:
    """Round-robin over the queries: no two adjacent rows share a query (while they can)."""
    groups: dict[str, list[str]] = defaultdict(list)
    for ln in lines:
        groups[ln.split()[0]].append(ln)
    out, queues = [], [list(g) for g in groups.values()]
    while any(queues):
        for q in queues:
            if q:
                out.append(q.pop(0))
    return out


def _shuffled(lines: list[str], seed: int = 0) -> list[str]:
    lines = list(lines)
    random.Random(seed).shuffle(lines)
    return lines


def _tabs(lines: list[str]) -> list[str]:
    return ["\t".join(ln.split()) for ln in lines]


def _variant_files(tmp_path: Path, name: str, run_src: Path):
    run, qrels = _data_lines(run_src), _data_lines(QRELS)
    d = tmp_path / name
    d.mkdir()
    if name == "single_space":
        return _write(d / "run.txt", _single_spaces(run)), _write(d / "qrels.txt", _single_spaces(qrels))
    if name == "gzip":
        return (_write(d / "run.txt.gz", run, compress=True),
                _write(d / "qrels.txt.gz", qrels, compress=True))
    if name == "gzip_single_space_interleaved":
        return (_write(d / "run.txt.gz", _interleave(_single_spaces(run)), compress=True),
                _write(d / "qrels.txt.gz", _shuffled(_single_spaces(qrels), 1), compress=True))
    if name == "interleaved":
        return _write(d / "run.txt", _interleave(run)), QRELS
    if name == "shuffled":
        return _write(d / "run.txt", _shuffled(run)), _write(d / "qrels.txt", _shuffled(qrels, 1))
    if name == "tabs":
        return _write(d / "run.txt", _tabs(run)), _write(d / "qrels.txt", _tabs(qrels))
    if name == "mixed_whitespace":  # separators vary line by line; leading/trailing blanks
        seps = ["\t", " ", "  \t ", "\t\t", "   "]
        def mixed(lines):
            return [(" " if i % 3 == 0 else "") + seps[i % len(seps)].join(ln.split())
                    + ("\t " if i % 4 == 1 else "") for i, ln in enumerate(lines)]
        return _write(d / "run.txt", mixed(run)), _write(d / "qrels.txt", mixed(qrels))
    if name == "crlf_blank_lines":
        run = run[:3] + [""] + run[3:] + ["", "   "]
        qrels = [""] + qrels[:5] + ["\t"] + qrels[5:]
        return (_write(d / "run.txt", run, newline="\r\n"),
                _write(d / "qrels.txt", qrels, newline="\r\n"))
    raise AssertionError(name)


VARIANTS = ["single_space", "gzip", "gzip_single_space_interleaved", "interleaved", "shuffled",
            "tabs", "mixed_whitespace", "crlf_blank_lines"]


@pytest.mark.parametrize("variant", VARIANTS)
def test_trec_eval_out_test_aq_variants(tmp_path, expected_aq, variant):
    run, qrels = _variant_files(tmp_path, variant, RUN)
    reports = _evaluate_like_trec_eval(run, qrels, expected_aq, complete=False)
    _check_against_output(reports, expected_aq, _run_lines(RUN), where=f"{variant}: ")
    for report in reports:
        assert report.n_missing == 0 and report.n_unjudged == 0


@pytest.mark.parametrize("variant", VARIANTS)
def test_trec_eval_out_test_aqc_variants(tmp_path, expected_aqc, variant):
    run, qrels = _variant_files(tmp_path, variant, RUN_TRUNC)
    reports = _evaluate_like_trec_eval(run, qrels, expected_aqc, complete=True)
    _check_against_output(reports, expected_aqc, _run_lines(RUN_TRUNC), where=f"{variant}: ")
    for report in reports:
        assert report.n_missing == 1


def test_interleaved_variant_really_interleaves():
    ids = [ln.split()[0] for ln in _interleave(_data_lines(RUN))]
    assert sum(a == b for a, b in zip(ids, ids[1:])) == 0
    # results.trunc itself already interleaves its two queries
    ids = [ln.split()[0] for ln in _data_lines(RUN_TRUNC)]
    assert sum(a != b for a, b in zip(ids, ids[1:])) > 10


# --------------------------------------------------------------------------- generated runs

CUTOFFS = [1, 3, 5, 10]
# ids that order differently as strings and as numbers ('d9' > 'd10' as strings),
# upper vs lower case, leading zeros, digits only, punctuation
# (longer than 8 bytes too: fastndcg compares an 8-byte prefix first)
DOC_POOL = ["d1", "d2", "d9", "d10", "d11", "d100", "D5", "d05", "9", "10", "100", "07", "7",
            "a-1", "a_1", "zz", "Z", "doc.3", "x10", "x9", "document9", "document10",
            "document", "documents"]
QUERY_POOL = ["q1", "q2", "q10", "7", "07", "301", "Q1", "a"]
SCORE_SETS = [(0.1, 0.2, 0.3), (1.0, 2.0), (-0.5, 0.0, 0.5, 2.5), (0.25,), (-0.0, 0.0, 1e-05)]


def _generate(rng: random.Random):
    """(run, qrels) dicts {qid: {docno: score or label}} with many ties."""
    qids = rng.sample(QUERY_POOL, rng.randint(5, len(QUERY_POOL)))
    run, qrels = {}, {}
    for i, q in enumerate(qids):
        side = i % 5  # 0..2: both sides; 3: run only (unjudged); 4: qrels only (missing)
        docs = rng.sample(DOC_POOL, rng.randint(1, len(DOC_POOL)))
        if side != 4:
            retrieved = docs[:rng.randint(1, len(docs))]
            if rng.random() < 0.5:
                levels = rng.choice(SCORE_SETS)
                run[q] = {d: rng.choice(levels) for d in retrieved}
            else:
                run[q] = {d: round(rng.gauss(0, 1), 1) for d in retrieved}
        if side != 3:
            # judge some retrieved docs, some not retrieved, leave some retrieved unjudged
            judged = [d for d in docs if rng.random() < 0.7] or docs[:1]
            qrels[q] = {d: rng.choice((0, 0, 1, 2, 3)) for d in judged}
        if i < 2:  # make sure: a tie between ids whose string and numeric order differ
            a, b = ("d9", "d10") if i == 0 else ("9", "10")
            run[q][a] = run[q][b] = rng.choice(rng.choice(SCORE_SETS))
            qrels[q][a], qrels[q][b] = rng.sample((0, 1, 2, 3), 2)
    return run, qrels


def _write_run(path: Path, run: dict, rng: random.Random, interleave: bool) -> None:
    rows = []
    for q, docs in run.items():
        for d, s in docs.items():
            # rank is arbitrary (trec_eval ignores it); repr(score) round-trips the float
            rows.append(f"{q} Q0 {d} {rng.randint(0, 999)} {s!r} tag")
    if interleave:
        rng.shuffle(rows)
    path.write_text("\n".join(rows) + "\n")


def _write_qrels(path: Path, qrels: dict, rng: random.Random) -> None:
    rows = [f"{q}\t0\t{d}\t{r}" for q, docs in qrels.items() for d, r in docs.items()]
    rng.shuffle(rows)
    path.write_text("\n".join(rows) + "\n")


def _pytrec(run: dict, qrels: dict, cutoffs=CUTOFFS) -> dict[str, dict[str, float]]:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    measures = {"ndcg_cut." + ",".join(map(str, cutoffs)), "ndcg"}
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, measures)
    return evaluator.evaluate(run)


def _oracle(run: dict, qrels: dict, q: str, k) -> float:
    docs = list(run[q])
    return reference.ndcg_query([run[q][d] for d in docs], [qrels[q].get(d, 0) for d in docs],
                                k, gain="linear", ties="trec", doc_ids=docs,
                                ideal_labels=list(qrels[q].values()))


def _fastndcg_both(run_path: Path, qrels_path: Path, complete: bool = False, cutoffs=CUTOFFS):
    extra = dict(complete=True) if complete else {}
    cut = fastndcg.evaluate(run_path, qrels=qrels_path, k=cutoffs, **TREC, **extra)
    whole = fastndcg.evaluate(run_path, qrels=qrels_path, k=None, **TREC, **extra)
    merged = _per_query(cut)
    for q, row in _per_query(whole).items():
        assert q in merged and merged[q]["n_docs"] == row["n_docs"]
        merged[q]["ndcg"] = row["ndcg"]
    assert set(merged) == set(_per_query(whole))
    return cut, whole, merged


def _check_generated(run: dict, qrels: dict, directory: Path, rng: random.Random,
                     cutoffs=CUTOFFS) -> None:
    run_path, qrels_path = directory / "run.txt", directory / "qrels.txt"
    _write_run(run_path, run, rng, interleave=rng.random() < 0.5)
    _write_qrels(qrels_path, qrels, rng)
    expected = _pytrec(run, qrels, cutoffs)
    both = set(run) & set(qrels)
    assert set(expected) == both  # pytrec_eval: queries of the run with judgments
    if not both:  # pytrec_eval answers nothing; fastndcg says the ids do not meet
        with pytest.raises(ValueError, match="has a judgment in the qrels"):
            _fastndcg_both(run_path, qrels_path, cutoffs=cutoffs)
        return

    cut, whole, got = _fastndcg_both(run_path, qrels_path, cutoffs=cutoffs)
    assert set(got) == set(expected), f"queries {sorted(got)} vs pytrec_eval {sorted(expected)}"
    for report in (cut, whole):
        assert report.n_unjudged == len(set(run) - set(qrels))
        assert report.n_missing == len(set(qrels) - set(run))
        assert report.n_rows == sum(len(v) for v in run.values())
    for q in both:
        assert got[q]["n_docs"] == len(run[q])
        for k in list(cutoffs) + [None]:
            column, measure = ("ndcg", "ndcg") if k is None else (f"ndcg@{k}", f"ndcg_cut_{k}")
            mine, theirs, oracle = got[q][column], expected[q][measure], _oracle(run, qrels, q, k)
            where = f"query {q!r} {column}: run {run[q]} qrels {qrels[q]}"
            assert abs(mine - theirs) <= TOL, f"{where}: fastndcg {mine!r} vs pytrec_eval {theirs!r}"
            assert abs(mine - oracle) <= TOL, f"{where}: fastndcg {mine!r} vs oracle {oracle!r}"
    for report in (cut, whole):
        for column in report.per_query.column_names[2:]:
            vals = [got[q][column] for q in both]
            if vals:
                assert report.mean[column] == pytest.approx(sum(vals) / len(vals), abs=TOL)

    # complete=True: judged queries missing from the run score 0 (trec_eval -c)
    _, _, got_c = _fastndcg_both(run_path, qrels_path, complete=True, cutoffs=cutoffs)
    assert set(got_c) == set(qrels)
    for q in qrels:
        row = got_c[q]
        for column in ["ndcg"] + [f"ndcg@{k}" for k in cutoffs]:
            want = got[q][column] if q in run else 0.0
            assert row[column] == pytest.approx(want, abs=TOL), f"complete: {q!r} {column}"
        assert row["n_docs"] == len(run.get(q, {}))


@pytest.mark.parametrize("seed", range(6))
def test_pytrec_eval_parity_seeds(tmp_path, seed):
    pytest.importorskip("pytrec_eval")
    rng = random.Random(seed)
    run, qrels = _generate(rng)
    assert set(run) - set(qrels) and set(qrels) - set(run)  # both kinds of one-sided query
    _check_generated(run, qrels, tmp_path, rng)


def test_generated_data_has_trec_tie_cases():
    """The generated runs do exercise what ties='trec' is about: tied groups with
    different labels, and tied ids whose string order differs from their numeric order."""
    tie_with_labels = string_vs_number = False
    for seed in range(6):
        run, qrels = _generate(random.Random(seed))
        for q, docs in run.items():
            by_score = defaultdict(set)
            for d, s in docs.items():
                by_score[s].add(d)
            for group in by_score.values():
                if len({qrels.get(q, {}).get(d, 0) for d in group}) > 1:
                    tie_with_labels = True
                if {"d9", "d10"} <= group or {"9", "10"} <= group or {"x9", "x10"} <= group:
                    string_vs_number = True
    assert tie_with_labels and string_vs_number


def test_pytrec_eval_string_vs_number_doc_ids(tmp_path):
    """Tied 'd9'/'d10' and '9'/'10' with different labels: string order decides."""
    pytest.importorskip("pytrec_eval")
    run = {"q1": {"d10": 0.5, "d9": 0.5, "d2": 0.1, "d100": 0.5},
           "q2": {"10": 1.0, "9": 1.0, "100": 1.0, "07": 1.0, "7": 1.0},
           "q3": {"x": 0.3}}
    qrels = {"q1": {"d9": 1, "d10": 3, "d2": 2, "d1": 1},
             "q2": {"10": 2, "9": 0, "100": 1, "7": 3, "07": 1},
             "q4": {"x": 1}}
    _check_generated(run, qrels, tmp_path, random.Random(0))
    # the tie order matters here: ranking tied ids by number (zero-padded ids sort
    # as their numbers) would give other values than trec_eval's string order
    got = _pytrec(run, qrels)
    q1 = run["q1"]
    numeric = reference.ndcg_query(list(q1.values()), [qrels["q1"].get(d, 0) for d in q1], 1,
                                   gain="linear", ties="trec",
                                   doc_ids=[d[1:].zfill(3) for d in q1],
                                   ideal_labels=list(qrels["q1"].values()))
    assert not math.isclose(got["q1"]["ndcg_cut_1"], numeric)
    assert got["q1"]["ndcg_cut_1"] == pytest.approx(1 / 3, abs=TOL)  # d9 (label 1) first


def test_pytrec_eval_parity_long_tied_lists(tmp_path):
    """Longer lists (past the short-list and small-cut paths, string sorts past one
    insertion run) with a handful of score values: large tie groups at every cut."""
    pytest.importorskip("pytrec_eval")
    rng = random.Random(42)
    run, qrels = {}, {}
    for q, n, levels in (("long1", 40, (0.1, 0.2, 0.3)), ("long2", 300, (1.0, 2.0)),
                         ("long3", 1200, (0.1, 0.2, 0.3, 0.4)), ("long4", 700, (0.5,))):
        ids = [rng.choice(("d", "doc", "document-", "D", "")) + str(i) for i in range(n)]
        rng.shuffle(ids)
        run[q] = {d: rng.choice(levels) for d in ids}
        judged = rng.sample(ids, n // 2) + [f"unretrieved{i}" for i in range(n // 10)]
        qrels[q] = {d: rng.choice((0, 0, 0, 1, 2, 3)) for d in judged}
    run["unjudged"] = {"d1": 0.1}
    qrels["missing"] = {"d1": 1}
    _check_generated(run, qrels, tmp_path, rng, cutoffs=[1, 3, 5, 10, 20, 64, 65, 100, 500, 1000])


@st.composite
def _small_runs(draw):
    n_queries = draw(st.integers(1, 4))
    qids = draw(st.lists(st.sampled_from(QUERY_POOL), min_size=n_queries, max_size=n_queries,
                         unique=True))
    levels = draw(st.sampled_from(SCORE_SETS + [(0.0, 0.1, 0.2, 0.3, 0.4, 0.5)]))
    run, qrels = {}, {}
    for q in qids:
        docs = draw(st.lists(st.sampled_from(DOC_POOL), min_size=1, max_size=12, unique=True))
        side = draw(st.sampled_from(["both", "both", "both", "run", "qrels"]))
        if side != "qrels":
            retrieved = docs[:draw(st.integers(1, len(docs)))]
            run[q] = {d: draw(st.sampled_from(levels)) for d in retrieved}
        if side != "run":
            judged = draw(st.lists(st.sampled_from(docs), min_size=1, unique=True))
            qrels[q] = {d: draw(st.integers(0, 3)) for d in judged}
    if not run:  # a run file needs a line
        q = qids[0]
        run[q] = {DOC_POOL[0]: levels[0]}
    if not qrels:
        qrels[qids[0]] = {DOC_POOL[0]: 1}
    seed = draw(st.integers(0, 2**16))
    return run, qrels, seed


@settings(max_examples=examples(0.2), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_small_runs())
def test_pytrec_eval_parity_hypothesis(data):
    pytest.importorskip("pytrec_eval")
    run, qrels, seed = data
    with tempfile.TemporaryDirectory() as d:
        _check_generated(run, qrels, Path(d), random.Random(seed))
