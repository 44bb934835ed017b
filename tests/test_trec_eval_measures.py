"""fastndcg's IR measures against the real trec_eval 10 (10.0-rc3) on real TREC data.

The oracle is trec_eval itself, built from the vendored, unmodified C source in
``tests/trec_eval/`` by the ``trec_eval_bin`` fixture (``tests/conftest.py``; the tests
that need it are skipped without a C compiler). Its answers on the real runs are also
stored, gzipped, in ``tests/data/real/trec_eval_out/NAME.measures.*.txt.gz`` (see
``MEASURES.md`` there), so the parity is checked without a compiler too, and with one
the stored files are checked to be exactly what the binary prints.

For every run of ``tests/data/real/runs/`` with its qrels, trec_eval is run as
``trec_eval -q [VARIANT] -m map -m map_cut.5,10,100 ... QRELS RUN`` (see ``MEASURES``)
in four variants: plain, ``-c``, ``-l 2`` and ``-c -l 2``; fastndcg evaluates the same
files with ``preset="trec_eval"``, the same measure names, ``complete=True`` for ``-c``
and ``rel=2`` for ``-l 2``. Every per-query value and every ``all`` line must agree to
trec_eval's 4 printed decimals, and the scored queries must be the same.

trec_eval 10.0-rc3 without ``-c`` stops ("result qid '1' not found in qrels") when a
judged query is missing from the run; those combinations (the cedr runs) are skipped.

Also: trec_eval's own test outputs (``tests/data/trec_eval/out.test.aq``, ``.aqc``,
``-m all_trec``), every line of a measure fastndcg computes.

No expected number is hard-coded: every reference value comes from trec_eval.
"""

from __future__ import annotations

import gzip
import shutil
import subprocess
from pathlib import Path

import pytest

import fastndcg
from fastndcg.measures import REGISTRY, parse
from trec_output import parse_trec_eval

HERE = Path(__file__).parent
REAL = HERE / "data" / "real"
RUNS_DIR = REAL / "runs"
QRELS_DIR = REAL / "qrels"
STORED_DIR = REAL / "trec_eval_out"
TE_DATA = HERE / "data" / "trec_eval"

MEASURES = ["map", "map_cut.5,10,100", "recip_rank", "P.5,10,20", "recall.10,100,1000",
            "success.1,5,10", "Rprec", "num_ret", "num_rel", "num_rel_ret", "ndcg_cut.10",
            "bpref", "set_P", "set_recall", "set_relative_P", "set_map", "num_nonrel_judged_ret",
            "gm_map", "gm_bpref", "iprec_at_recall", "11pt_avg", "Rprec_mult", "utility",
            "relative_P.5,10,100", "set_F", "unj", "binG", "rbp_resid", "infAP", "rbp", "G",
            "ndcg_rel", "Rndcg", "num_q"]
TREC_ARGS = [arg for m in MEASURES for arg in ("-m", m)]
# trec_eval's output names for MEASURES, and nothing else
EXPECTED_NAMES = {"map", "map_cut_5", "map_cut_10", "map_cut_100", "recip_rank", "P_5", "P_10",
                  "P_20", "recall_10", "recall_100", "recall_1000", "success_1", "success_5",
                  "success_10", "Rprec", "num_ret", "num_rel", "num_rel_ret", "ndcg_cut_10",
                  "bpref", "set_P", "set_recall", "set_relative_P", "set_map",
                  "num_nonrel_judged_ret", "gm_map", "gm_bpref", "11pt_avg", "utility", "set_F",
                  "relative_P_5", "relative_P_10", "relative_P_100", "unj_5", "unj_10", "unj_20",
                  "binG", "rbp_resid", "infAP", "rbp", "G", "ndcg_rel", "Rndcg", "num_q",
                  *(f"iprec_at_recall_{x / 10:3.2f}" for x in range(11)),
                  *(f"Rprec_mult_{x / 10:3.2f}" for x in range(2, 21, 2))}
# printed only on the `all` line (trec_eval's geometric means)
ALL_ONLY = {"gm_map", "gm_bpref", "num_q"}

# variant: (trec_eval options, fastndcg options, stored file suffix)
VARIANTS = {
    "plain": ([], {}, "q"),
    "c": (["-c"], {"complete": True}, "qc"),
    "l2": (["-l", "2"], {"rel": 2}, "ql2"),
    "c_l2": (["-c", "-l", "2"], {"complete": True, "rel": 2}, "qcl2"),
}

# which qrels goes with which run (tests/data/real/README.md)
QRELS_OF = {"core18_": "qrels.core18.txt.gz", "cedr-wt_": "qrels.cedr-wt.txt.gz",
            "rag24": "qrels.rag24.txt.gz"}

TOL = 5e-5 + 1e-12  # trec_eval prints 4 decimals


def _run_name(path: Path) -> str:
    return path.name[:-len(".run.gz")]


def _qrels_for(run: str) -> Path:
    matches = [q for prefix, q in QRELS_OF.items() if run.startswith(prefix)]
    assert len(matches) == 1, f"no qrels known for run {run!r}; extend QRELS_OF"
    return QRELS_DIR / matches[0]


RUN_NAMES = sorted(_run_name(p) for p in RUNS_DIR.glob("*.run.gz"))
CASES = [(run, variant) for run in RUN_NAMES for variant in VARIANTS]
CASE_IDS = [f"{run}-{variant}" for run, variant in CASES]


def _stored_path(run: str, variant: str) -> Path:
    return STORED_DIR / f"{run}.measures.{VARIANTS[variant][2]}.txt.gz"


# --------------------------------------------------------------------------- trec_eval's side

def _spec(trec_name: str) -> str:
    """The trec_eval ``-m`` name of one output line (``map_cut_5`` -> ``map_cut_5``, which
    fastndcg reads; ``iprec_at_recall_0.10`` -> ``iprec_at_recall.0.10``); KeyError when
    fastndcg has no such measure."""
    stem, _, suffix = trec_name.rpartition("_")
    for spec in (trec_name, f"{stem}.{suffix}"):
        try:
            if len(parse(spec).columns) == 1:
                return spec
        except ValueError:
            pass
    raise KeyError(trec_name)


def _column(trec_name: str, rel: int) -> str:
    """fastndcg's column of one trec_eval output line."""
    return parse(_spec(trec_name), rel).columns[0]


def _parse_text(text: str, tmp_path: Path) -> dict[str, dict[str, float]]:
    path = tmp_path / "trec_eval.out"
    path.write_text(text)
    return {m: {q: float(v) for q, v in per.items()} for m, per in parse_trec_eval(path).items()}


@pytest.fixture(scope="session")
def plain_inputs(tmp_path_factory) -> dict[str, Path]:
    """Uncompressed copies of the runs and qrels (trec_eval does not read gzip)."""
    out = tmp_path_factory.mktemp("trec_inputs")
    paths = {}
    for src in [*RUNS_DIR.glob("*.run.gz"), *QRELS_DIR.glob("*.txt.gz")]:
        dst = out / src.name[:-len(".gz")]
        with gzip.open(src, "rb") as fin, open(dst, "wb") as fout:
            shutil.copyfileobj(fin, fout)
        paths[src.name] = dst
    return paths


def _trec_eval(binary: Path, args: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run([str(binary), *args], capture_output=True, text=True, timeout=300)


def _run_trec_eval(binary, plain_inputs, run: str, variant: str) -> str:
    """trec_eval's output text; skips where trec_eval 10 refuses a run without -c."""
    proc = _trec_eval(binary, ["-q", *VARIANTS[variant][0], *TREC_ARGS,
                               str(plain_inputs[_qrels_for(run).name]),
                               str(plain_inputs[f"{run}.run.gz"])])
    if proc.returncode != 0 and "not found in qrels" in proc.stderr and "-c" not in VARIANTS[variant][0]:
        pytest.skip(f"trec_eval 10.0-rc3 without -c: {proc.stderr.strip()!r} (a judged query "
                    f"is missing from the run; 10.x stops where 9.x skipped it)")
    assert proc.returncode == 0, f"trec_eval failed (rc={proc.returncode}): {proc.stderr}"
    return proc.stdout


# --------------------------------------------------------------------------- fastndcg's side

_REPORTS: dict = {}


def _report(run: str, variant: str):
    """fastndcg's report of a run (cached: the binary and the stored tests share it)."""
    key = (run, variant)
    if key not in _REPORTS:
        _REPORTS[key] = fastndcg.evaluate(RUNS_DIR / f"{run}.run.gz", qrels=_qrels_for(run),
                                          preset="trec_eval", measure=MEASURES,
                                          **VARIANTS[variant][1])
    return _REPORTS[key]


def _judged_positive(qrels: Path) -> int:
    """Judgments with a label > 0 (what trec_eval -c prints as num_rel `all`)."""
    with gzip.open(qrels, "rt") as f:
        return sum(1 for line in f if line.strip() and int(line.split()[3]) > 0)


def _compare(report, expected: dict[str, dict[str, float]], rel: int, where: str,
             num_rel_all_quirk: int | None = None) -> int:
    """Every line of ``expected`` (trec_eval's ``{measure: {qid | "all": value}}``)
    against fastndcg's report; returns the number of values compared."""
    table = report.per_query
    ids = [str(q) for q in table.column("query_id").to_pylist()]
    assert len(set(ids)) == len(ids), f"{where}: a query scored twice"
    trec_ids = {q for values in expected.values() for q in values if q != "all"}
    assert set(ids) == trec_ids, (
        f"{where}: queries differ: only fastndcg {sorted(set(ids) - trec_ids)[:20]}, "
        f"only trec_eval {sorted(trec_ids - set(ids))[:20]}")
    assert report.n_queries == len(trec_ids), where
    row_of = {q: i for i, q in enumerate(ids)}
    failures, checked = [], 0
    for name, values in sorted(expected.items()):
        column = _column(name, rel)
        assert column in table.column_names, f"{where}: no column {column!r} for {name}"
        got = table.column(column).to_pylist()
        printed = set() if name in ALL_ONLY else trec_ids
        assert set(values) - {"all"} == printed, f"{where}: {name} is not printed for every query"
        for qid, want in values.items():
            if qid == "all":
                continue
            checked += 1
            if not abs(got[row_of[qid]] - want) <= TOL:
                failures.append(f"{name} query {qid}: fastndcg {got[row_of[qid]]!r} "
                                f"vs trec_eval {want}")
        if "all" in values:
            checked += 1
            if name == "num_rel" and num_rel_all_quirk is not None:
                # trec_eval -c prints as num_rel `all` the judgments with a label > 0 over
                # the whole qrels, ignoring -l (m_num_rel.c, te_calc_avg_num_rel)
                summary = float(num_rel_all_quirk)
            else:  # the sums and geometric means as trec_eval averages them
                summary = report.mean[column]
            if not abs(summary - values["all"]) <= TOL:
                failures.append(f"{name} all: fastndcg {summary!r} vs trec_eval {values['all']}")
    assert not failures, f"{where}: {len(failures)} of {checked} values differ:\n" + \
        "\n".join(failures[:40])
    return checked


def _check_case(run: str, variant: str, expected: dict, where: str) -> None:
    assert set(expected) == EXPECTED_NAMES, f"{where}: trec_eval printed {sorted(expected)}"
    options = VARIANTS[variant][1]
    quirk = (_judged_positive(_qrels_for(run)) if options.get("complete") and "rel" in options
             else None)
    checked = _compare(_report(run, variant), expected, options.get("rel", 1), where, quirk)
    assert checked == sum(len(v) for v in expected.values())


# --------------------------------------------------------------------------- the tests

def test_cases_found():
    assert len(RUN_NAMES) >= 7, RUN_NAMES
    for run in RUN_NAMES:
        assert _qrels_for(run).is_file(), run


def test_build_reproduces_trec_eval_test_output(trec_eval_bin, tmp_path):
    """The binary built here prints trec_eval's own stored test output, byte for byte."""
    proc = _trec_eval(trec_eval_bin, ["-m", "all_trec", "-q", str(TE_DATA / "qrels.test"),
                                      str(TE_DATA / "results.test")])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == (TE_DATA / "out.test.aq").read_text()
    proc = _trec_eval(trec_eval_bin, ["-m", "all_trec", "-q", "-c", str(TE_DATA / "qrels.test"),
                                      str(TE_DATA / "results.trunc")])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == (TE_DATA / "out.test.aqc").read_text()


@pytest.mark.parametrize("run,variant", CASES, ids=CASE_IDS)
def test_vs_trec_eval_binary(trec_eval_bin, plain_inputs, tmp_path, run, variant):
    """fastndcg against the freshly built trec_eval; the stored output is what it prints."""
    text = _run_trec_eval(trec_eval_bin, plain_inputs, run, variant)
    stored = _stored_path(run, variant)
    assert stored.is_file(), f"{stored.name} missing: store trec_eval's output there (gzip -n)"
    with gzip.open(stored, "rt") as f:
        assert f.read() == text, f"{stored.name} is not what trec_eval prints now"
    _check_case(run, variant, _parse_text(text, tmp_path), f"{run} [{variant}]")


@pytest.mark.parametrize("run,variant", CASES, ids=CASE_IDS)
def test_vs_stored_trec_eval_output(tmp_path, run, variant):
    """The same against trec_eval's stored output (no C compiler needed)."""
    stored = _stored_path(run, variant)
    if not stored.is_file():
        assert run.startswith("cedr-wt_") and "-c" not in VARIANTS[variant][0], stored.name
        pytest.skip("trec_eval 10.0-rc3 without -c stops on this run (\"result qid '1' not "
                    "found in qrels\": a judged query is missing from the run)")
    with gzip.open(stored, "rt") as f:
        text = f.read()
    _check_case(run, variant, _parse_text(text, tmp_path), f"{stored.name}")


# --------------------------------------------------------------------------- trec_eval's test files

def _all_trec_lines(path: Path) -> dict[str, dict[str, float]]:
    """The lines of ``out.test.a*`` for the measures fastndcg computes."""
    out = {}
    for name, per in parse_trec_eval(path).items():
        try:
            _spec(name)
        except KeyError:
            continue
        out[name] = {q: float(v) for q, v in per.items()}
    return out


@pytest.mark.parametrize("out,run,complete", [("out.test.aq", "results.test", False),
                                              ("out.test.aqc", "results.trunc", True)])
def test_trec_eval_test_files(out, run, complete):
    """trec_eval's own ``-m all_trec -q`` outputs: every line of a measure fastndcg has
    (all of trec_eval's default cutoffs)."""
    expected = _all_trec_lines(TE_DATA / out)
    assert {"map", "map_cut_1000", "recip_rank", "P_5", "P_1000", "recall_1000", "success_10",
            "Rprec", "num_ret", "num_rel", "num_rel_ret", "ndcg", "ndcg_cut_10"} <= set(expected)
    report = fastndcg.evaluate(TE_DATA / run, qrels=TE_DATA / "qrels.test", preset="trec_eval",
                               measure=[_spec(n) for n in sorted(expected)], complete=complete)
    checked = _compare(report, expected, 1, out)
    assert checked == sum(len(v) for v in expected.values())


def _kind_of(trec_name: str) -> str:
    parsed = parse(_spec(trec_name))
    return "ndcg" if parsed.ndcg else parsed.others[0].kind


def test_every_trec_eval_measure_of_the_registry_is_compared():
    """Every row of the registry with a trec_eval name is compared with trec_eval's own
    output above: on the real runs (``MEASURES``) or in trec_eval's ``-m all_trec``
    test outputs (every measure trec_eval has)."""
    compared = {_kind_of(name) for name in EXPECTED_NAMES}
    for out in ("out.test.aq", "out.test.aqc"):
        compared |= {_kind_of(name) for name in _all_trec_lines(TE_DATA / out)}
    wanted = {k.name for k in REGISTRY.values() if k.trec or k.trec_cut}
    assert not wanted - compared, f"rows never compared with trec_eval: {wanted - compared}"
