"""ERR@k against gdeval itself: the ``gdeval.pl`` that ir_measures ships (and runs for
its ``ERR@k``), run by Perl on the real runs of ``tests/data/real`` whose topics are
numbers (gdeval reads no others) and whose grades are at most 4 (gdeval refuses
higher ones): the Core 2018 runs (grades 0-2) and the TREC Web track runs of CEDR
(grades -2 to 4). gdeval prints 5 decimals for the topics with a relevant judgment;
fastndcg's ERR@k, with gdeval's order (score descending, then document id
descending: ``ties="trec"``) and grades below 0 read as 0, must equal every line.

No expected number is written here: every one comes from gdeval.
"""

from __future__ import annotations

import gzip
import shutil
import subprocess
from pathlib import Path

import pytest

import fastndcg

ir_measures = pytest.importorskip("ir_measures")
GDEVAL = Path(ir_measures.__file__).parent / "bin" / "gdeval.pl"
REAL = Path(__file__).parent / "data" / "real"
RUNS = {"core18_title_rm3": "qrels.core18.txt.gz", "core18_desc_rm3": "qrels.core18.txt.gz",
        "cedr-wt_test.wt12": "qrels.cedr-wt.txt.gz", "cedr-wt_valid.wt11": "qrels.cedr-wt.txt.gz"}
TOL = 5e-6 + 1e-12  # gdeval prints 5 decimals

pytestmark = pytest.mark.skipif(shutil.which("perl") is None or not GDEVAL.is_file(),
                                reason="needs perl and ir_measures' gdeval.pl")


@pytest.fixture(scope="module")
def plain(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("gdeval")
    for name in [*RUNS, *set(RUNS.values())]:
        src = REAL / ("runs" if name in RUNS else "qrels") / (
            f"{name}.run.gz" if name in RUNS else name)
        with gzip.open(src, "rb") as fin, open(out / src.name[:-3], "wb") as fout:
            shutil.copyfileobj(fin, fout)
    return out


def _gdeval(qrels: Path, run: Path, k: int) -> dict[str, float]:
    proc = subprocess.run(["perl", str(GDEVAL), str(qrels), str(run), str(k)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == f"runid,topic,ndcg@{k},err@{k}"
    out = {}
    for line in lines[1:]:
        _, topic, _, err = line.split(",")
        if topic != "amean":
            out[topic] = float(err)
    return out


@pytest.mark.parametrize("k", [5, 20])
@pytest.mark.parametrize("run", sorted(RUNS))
def test_err_equals_gdeval(plain, run, k):
    qrels = plain / RUNS[run][:-3]
    run_path = plain / f"{run}.run"
    want = _gdeval(qrels, run_path, k)
    assert len(want) >= 40
    report = fastndcg.evaluate(run_path, qrels=qrels, measure=f"ERR@{k}", ties="trec",
                               gain="linear", negative_labels="zero", complete=True)
    got = dict(zip(report.per_query.column("query_id").cast("string").to_pylist(),
                   report.per_query.column(f"err@{k}").to_pylist()))
    bad = [f"{q}: fastndcg {got.get(q)!r} vs gdeval {v}" for q, v in want.items()
           if q not in got or not abs(got[q] - v) <= TOL]
    assert not bad, f"{len(bad)} of {len(want)} differ: {bad[:10]}"
    # the topics gdeval leaves out have no relevant judgment: ERR 0
    assert all(v == 0.0 for q, v in got.items() if q not in want)
