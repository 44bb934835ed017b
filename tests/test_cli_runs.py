"""``fastndcg evaluate RUN1 RUN2 ... --qrels QRELS``: many runs in one command.

Real runs and qrels (``tests/data/real``), each run's row checked against two
independent answers: ``fastndcg.evaluate`` on that run alone, in this process,
and trec_eval's own stored output (``tests/data/real/trec_eval_out``, 4 printed
decimals) for the measures it holds. Every output format: the text table, JSON
(one object a run, a line each), per-query results as CSV, Parquet and a
directory of parts (``runid`` first). Globs are expanded by the program (sorted)
as the shell would; runids come from the run tag, the file name or NAME=PATH;
two runs with one runid, missing inputs, globs that match nothing, an output that
is an input and several logs without --qrels are one-line usage errors (exit 2);
a malformed line in one run stops the command with ``file:line`` (exit 1) and
writes nothing.
"""

from __future__ import annotations

import gzip
import importlib
import json
import re
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

import fastndcg
from fastndcg import cli
from fastndcg.io import read_trec_run
from test_cli import assert_one_line_error, main_inprocess, run_cli

REAL = Path(__file__).parent / "data" / "real"
RUNS = REAL / "runs"
OUT = REAL / "trec_eval_out"
CORE_QRELS = REAL / "qrels" / "qrels.core18.txt.gz"
CEDR_QRELS = REAL / "qrels" / "qrels.cedr-wt.txt.gz"
CORE = {"title": RUNS / "core18_title_rm3.run.gz", "desc": RUNS / "core18_desc_rm3.run.gz"}
CEDR = sorted(RUNS.glob("cedr-wt_*.run.gz"))  # run tag "run" in all four
MEASURES = ["ndcg_cut.10", "map", "P.5,10", "recip_rank"]
M_ARGS = [a for m in MEASURES for a in ("-m", m)]
# fastndcg's column -> trec_eval's measure name
TREC_NAMES = {"ndcg@10": "ndcg_cut_10", "ap": "map", "p@5": "P_5", "p@10": "P_10",
              "rr": "recip_rank"}
TREC_TOL = 5e-5 + 1e-12  # trec_eval prints 4 decimals


def alone(run: Path, qrels: Path, **options) -> fastndcg.Report:
    """The run evaluated by itself, in this process (the independent answer)."""
    return fastndcg.evaluate(str(run), qrels=str(qrels), preset="trec_eval",
                             measure=MEASURES, **options)


def stored(run: Path, suffix: str) -> dict:
    """trec_eval's stored output for the run: {measure: {qid or 'all': value}}."""
    path = OUT / f"{run.name.removesuffix('.run.gz')}.measures.{suffix}.txt.gz"
    out: dict = {}
    for line in gzip.decompress(path.read_bytes()).decode().splitlines():
        if line.strip():
            name, qid, value = line.split()
            out.setdefault(name, {})[qid] = float(value)
    return out


def table_rows(stdout: str) -> tuple[list[str], list[dict]]:
    """(header, one dict per run row) of the multi-run text table."""
    lines = stdout.splitlines()
    header = re.split(r"\s{2,}", lines[1].strip())
    rows = []
    for line in lines[2:]:
        cells = re.split(r"\s{2,}", line.strip())
        if len(cells) != len(header):
            break
        rows.append(dict(zip(header, cells)))
    return header, rows


def with_runid(table: pa.Table, runid: str) -> pa.Table:
    return table.add_column(0, "runid", pa.array([runid] * table.num_rows, pa.string()))


# --------------------------------------------------------------------------- outputs

@pytest.fixture(scope="module")
def core_alone() -> dict:
    return {name: alone(path, CORE_QRELS) for name, path in CORE.items()}


@pytest.fixture(scope="module")
def cedr_alone() -> dict:
    return {path.name: alone(path, CEDR_QRELS, complete=True) for path in CEDR}


def test_json_one_object_a_run_named_runs(core_alone):
    """A fresh process, NAME=PATH, --format json: a line per run, in the order given,
    equal to each run evaluated alone and to trec_eval's stored 'all' lines."""
    args = [f"{n}={p}" for n, p in CORE.items()]
    proc = run_cli(["evaluate", *args, "--qrels", CORE_QRELS, "--preset", "trec_eval",
                    *M_ARGS, "--format", "json"])
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [o["runid"] for o in lines] == list(CORE)
    for got in lines:
        run = CORE[got["runid"]]
        want = core_alone[got["runid"]]
        assert got["source"] == str(run)
        assert (got["n_queries"], got["n_rows"], got["n_missing"]) == \
            (want.n_queries, want.n_rows, want.n_missing) == (50, 50_000, 0)
        assert list(TREC_NAMES) == [k for k in got if k in TREC_NAMES]
        theirs = stored(run, "q")
        for col, trec_name in TREC_NAMES.items():
            assert got[col] == want.mean[col], (run.name, col)
            assert abs(got[col] - theirs[trec_name]["all"]) <= TREC_TOL, (run.name, col)
    # the two runs differ, so a run's row cannot stand in for the other's
    assert lines[0]["ndcg@10"] != lines[1]["ndcg@10"]


def test_table_glob_expanded_by_the_program_with_per_query_csv(cedr_alone, tmp_path, capsys):
    """A quoted glob (no shell to expand it), runids by file name, --complete: the
    table's rows are the sorted files, each equal to the run alone (4 decimals)
    and to trec_eval -c; the CSV holds every run's queries, runid first."""
    out = tmp_path / "per_query.csv"
    code, stdout, err = main_inprocess(capsys, "evaluate", str(RUNS / "cedr-wt_*.run.gz"),
                                       "--qrels", CEDR_QRELS, "--preset", "trec_eval",
                                       *M_ARGS, "--complete", "--runid", "file",
                                       "--per-query", out)
    assert (code, err) == (0, "")
    assert stdout.splitlines()[0] == f"4 runs  (qrels {CEDR_QRELS})"
    header, rows = table_rows(stdout)
    assert header[0] == "runid" and header[-1] == "source"
    assert [r["runid"] for r in rows] == [p.name for p in CEDR]
    assert [r["source"] for r in rows] == [str(p) for p in CEDR]
    for row in rows:
        want = cedr_alone[row["runid"]]
        theirs = stored(RUNS / row["runid"], "qc")
        for col, trec_name in TREC_NAMES.items():
            assert row[col] == f"{want.mean[col]:.4f}", (row["runid"], col)
            assert abs(float(row[col]) - theirs[trec_name]["all"]) <= TREC_TOL
        assert row["queries"] == f"{want.n_queries:,}" == f"{len(theirs['map']) - 1:,}"
        assert row["missing"] == f"{want.n_missing:,}" and want.n_missing > 0
    assert f"per-query results: {out}" in stdout
    got = pacsv.read_csv(out)
    assert got.column_names[:3] == ["runid", "query_id", "n_docs"]
    assert got["runid"].to_pylist() == [p.name for p in CEDR for _ in
                                        range(cedr_alone[p.name].n_queries)]
    for path in CEDR:
        mine = got.filter(pc.equal(got["runid"], path.name))
        want = cedr_alone[path.name].per_query
        theirs = stored(path, "qc")
        assert [str(q) for q in mine["query_id"].to_pylist()] == want["query_id"].to_pylist()
        for col, trec_name in TREC_NAMES.items():
            assert mine[col].to_pylist() == want[col].to_pylist(), (path.name, col)
            per_q = dict(zip(want["query_id"].to_pylist(), mine[col].to_pylist()))
            assert set(per_q) == set(theirs[trec_name]) - {"all"}
            worst = max(abs(v - theirs[trec_name][q]) for q, v in per_q.items())
            assert worst <= TREC_TOL, (path.name, col, worst)


def test_per_query_parquet_file_and_directory(core_alone, tmp_path, capsys):
    """--per-query to one Parquet file (the runs one after another) and to a directory
    (a part a run): the runs' tables evaluated alone, with runid in front."""
    runs = [str(p) for p in CORE.values()]
    names = [Path(p).name for p in runs]
    expected = pa.concat_tables([with_runid(core_alone[n].per_query, Path(p).name)
                                 for n, p in zip(CORE, runs)])
    target = tmp_path / "pq.parquet"
    code, _, err = main_inprocess(capsys, "evaluate", *runs, "--qrels", CORE_QRELS,
                                  "--preset", "trec_eval", *M_ARGS, "--runid", "file",
                                  "--per-query", target, "--format", "json")
    assert (code, err) == (0, "")
    got = pq.read_table(target)
    assert got.column_names == ["runid", "query_id", "n_docs", *TREC_NAMES]
    assert got.to_pydict() == expected.to_pydict()
    folder = tmp_path / "parts"
    code, _, err = main_inprocess(capsys, "evaluate", *runs, "--qrels", CORE_QRELS,
                                  "--preset", "trec_eval", *M_ARGS, "--runid", "file",
                                  "--per-query", folder, "--quiet")
    assert (code, err) == (0, "")
    parts = sorted(folder.iterdir())
    assert [p.name for p in parts] == ["part-000000.parquet", "part-000001.parquet"]
    for part, name in zip(parts, names):
        table = pq.read_table(part)
        assert set(table["runid"].to_pylist()) == {name}
    assert pa.concat_tables(pq.read_table(p) for p in parts).to_pydict() == expected.to_pydict()


def test_glob_equals_the_shell_expansion_and_one_run_is_unchanged(capsys, tmp_path):
    """The program's expansion of a quoted glob equals the list the shell would give;
    one input (a path, a glob of one file, NAME=PATH) prints today's output: no runid."""
    def json_out(*args):
        code, out, err = main_inprocess(capsys, "evaluate", *args, "--qrels", CEDR_QRELS,
                                        "--preset", "trec_eval", "-m", "ndcg_cut.10",
                                        "--runid", "file", "--format", "json")
        assert (code, err) == (0, ""), err
        return [{k: v for k, v in json.loads(line).items() if k != "seconds"}
                for line in out.splitlines()]

    assert json_out(str(RUNS / "cedr-wt_*.run.gz")) == json_out(*map(str, CEDR))
    one = json_out(str(CEDR[0]))
    assert len(one) == 1 and "runid" not in one[0] and "source" not in one[0]
    assert (json_out(str(RUNS / "cedr-wt_valid*.run.gz"))
            == json_out(str(RUNS / "cedr-wt_valid.wt11.run.gz")))
    assert json_out(f"x={CEDR[0]}") == one
    code, out, err = main_inprocess(capsys, "evaluate", str(CEDR[0]), "--qrels", CEDR_QRELS,
                                    "--preset", "trec_eval", "-m", "ndcg_cut.10")
    assert (code, err) == (0, "")
    assert out.splitlines()[0] == f"{CEDR[0]}  (qrels {CEDR_QRELS})"
    assert "runid" not in out


def test_runid_is_the_run_tag(tmp_path, capsys):
    """One tag in a file names the run; a file with two tags is named by its file name."""
    lines = gzip.decompress(CORE["title"].read_bytes()).decode().splitlines()
    first_q = lines[0].split()[0]
    mixed = tmp_path / "mixed.run"
    mixed.write_text("\n".join(line.rsplit(" ", 1)[0] + (" A" if line.startswith(first_q)
                                                            else " B") for line in lines) + "\n")
    code, out, err = main_inprocess(capsys, "evaluate", CORE["title"], mixed, "--qrels",
                                    CORE_QRELS, "--preset", "trec_eval", "-m", "ndcg_cut.10",
                                    "--format", "json")
    assert (code, err) == (0, "")
    got = [json.loads(line) for line in out.splitlines()]
    assert [o["runid"] for o in got] == ["PYSERINI", "mixed.run"]
    assert got[0]["ndcg@10"] == got[1]["ndcg@10"]  # the same lines: the tags change nothing


def test_qrels_are_read_once(monkeypatch, capsys):
    ev = importlib.import_module("fastndcg._evaluate")  # the module, not the function
    calls = []
    real = ev.load_qrels

    def counting(*args, **kwargs):
        calls.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(ev, "load_qrels", counting)
    code, out, err = main_inprocess(capsys, "evaluate", *map(str, CEDR), "--qrels", CEDR_QRELS,
                                    "--preset", "trec_eval", "-m", "ndcg_cut.10", "--runid",
                                    "file", "--format", "json")
    assert (code, err) == (0, "")
    assert len(out.splitlines()) == len(CEDR) == 4
    assert calls == [str(CEDR_QRELS)]


# --------------------------------------------------------------------------- errors

@pytest.fixture(scope="module")
def error_dir(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("runs-errors")
    (d / "a").mkdir()
    (d / "b").mkdir()
    for sub in ("a", "b"):
        shutil.copyfile(CEDR[0], d / sub / "same.run.gz")
    lines = gzip.decompress(CEDR[1].read_bytes()).decode().splitlines()
    (d / "bad.run").write_text("\n".join(lines[:40] + ["151 Q0 doc-without-rank"] + lines[40:])
                               + "\n")
    table = read_trec_run(str(CEDR[2]))
    pq.write_table(table, d / "run.parquet")
    (d / "nan.run").write_text("\n".join(lines[:40] + [lines[40].rsplit(" ", 2)[0] + " nan x"])
                               + "\n")
    return d


# (id, arguments, exit status, texts the message must contain); {d}: error_dir, {r}: RUNS
RUN_ERRORS = [
    ("same-tag", ["{r}/cedr-wt_test.wt12.run.gz", "{r}/cedr-wt_test.wt13.run.gz"], 2,
     ["'{r}/cedr-wt_test.wt12.run.gz'", "'{r}/cedr-wt_test.wt13.run.gz'", "'run'", "run tag",
      "--runid file", "NAME=PATH"]),
    ("same-file-name", ["{d}/a/same.run.gz", "{d}/b/same.run.gz", "--runid", "file"], 2,
     ["'{d}/a/same.run.gz'", "'{d}/b/same.run.gz'", "file name", "NAME=PATH"]),
    ("same-name-given", ["x={r}/cedr-wt_test.wt12.run.gz", "x={r}/cedr-wt_test.wt13.run.gz"], 2,
     ["'x'", "cedr-wt_test.wt13.run.gz", "NAME="]),
    ("empty-name", ["={r}/cedr-wt_test.wt12.run.gz", "{d}/run.parquet"], 2,
     ["'={r}/cedr-wt_test.wt12.run.gz'", "the name before '=' is empty", "NAME=PATH"]),
    ("missing-run", ["{r}/cedr-wt_test.wt12.run.gz", "{d}/nope.run"], 2,
     ["'{d}/nope.run'", "does not exist", "check the path"]),
    ("glob-no-match", ["{r}/cedr-wt_test.wt12.run.gz", "{d}/*.nomatch"], 2,
     ["'{d}/*.nomatch'", "no files match", "check the pattern"]),
    ("missing-qrels", ["{r}/cedr-wt_test.wt12.run.gz", "{d}/b/same.run.gz", "--runid", "file",
                       "--qrels", "{d}/nope.qrels"], 2, ["--qrels", "'{d}/nope.qrels'",
                                                         "does not exist"]),
    ("per-query-is-a-run", ["{r}/cedr-wt_test.wt12.run.gz", "{d}/run.parquet", "--per-query",
                            "{d}/run.parquet"], 2,
     ["--per-query", "run.parquet", "reads", "another path"]),
    ("per-query-holds-runs", ["{d}/a/same.run.gz", "{d}/run.parquet", "--per-query", "{d}"], 2,
     ["--per-query", "reads", "another path"]),
    ("named-glob", ["x={r}/cedr-*.run.gz", "{d}/run.parquet"], 2, ["'x={r}/cedr-*.run.gz'",
                                                                   "NAME=PATH"]),
    ("workers", ["{r}/cedr-wt_test.wt12.run.gz", "{d}/run.parquet", "--workers", "2"], 2,
     ["--workers", "2 runs", "one after another"]),
    ("nan-score", ["{r}/cedr-wt_test.wt12.run.gz", "{d}/nan.run", "--per-query",
                   "{d}/out.parquet"], 1,
     ["'{d}/nan.run'", "column 'score'", "NaN", "--nan-scores last"]),
    ("bad-line", ["{r}/cedr-wt_test.wt12.run.gz", "{d}/bad.run", "{d}/run.parquet",
                  "--per-query", "{d}/out.parquet"], 1,
     ["{d}/bad.run:41:", "6 whitespace-separated fields", "'151 Q0 doc-without-rank'"]),
]


@pytest.mark.parametrize("name, args, status, texts", RUN_ERRORS, ids=[c[0] for c in RUN_ERRORS])
def test_runs_errors(capsys, error_dir, name, args, status, texts):
    fill = {"d": error_dir, "r": RUNS}
    argv = [a.format(**fill) for a in args]
    if "--qrels" not in argv:
        argv += ["--qrels", str(CEDR_QRELS)]
    code, out, err = main_inprocess(capsys, "evaluate", *argv, "--preset", "trec_eval",
                                    "-m", "ndcg_cut.10")
    assert_one_line_error(err, must_contain=[t.format(**fill) for t in texts])
    assert code == status, (code, err)
    assert out == ""
    assert not (error_dir / "out.parquet").exists()  # a failed run writes nothing
    assert sorted(p.name for p in error_dir.iterdir()) == ["a", "b", "bad.run", "nan.run",
                                                           "run.parquet"]


def test_several_logs_without_qrels_is_a_usage_error(capsys, tmp_path):
    paths = []
    for i in range(2):
        paths.append(tmp_path / f"log{i}.parquet")
        pq.write_table(pa.table({"query_id": [i, i], "score": [0.5, 0.2], "label": [1, 0]}),
                       paths[-1])
    code, out, err = main_inprocess(capsys, "evaluate", *paths)
    assert_one_line_error(err, must_contain=["without --qrels", "one log", "2 inputs",
                                             "quote the glob"])
    assert (code, out) == (2, "")
    # quoted, the glob is one log of two files, as before
    code, out, err = main_inprocess(capsys, "evaluate", str(tmp_path / "log*.parquet"),
                                    "--format", "json")
    assert (code, err) == (0, "")
    assert json.loads(out)["n_queries"] == 2


def test_error_in_a_fresh_process_is_one_line(error_dir):
    """The same in a real process: no traceback, exit 2, stdout empty."""
    proc = run_cli(["evaluate", CEDR[0], CEDR[1], "--qrels", CEDR_QRELS, "--preset", "trec_eval",
                    "-m", "ndcg_cut.10"])
    assert_one_line_error(proc.stderr, must_contain=["both have runid 'run'", "--runid file"])
    assert (proc.returncode, proc.stdout) == (2, "")


def test_help_documents_several_runs(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["evaluate", "--help"])
    assert exc.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    for words in ("--runid {tag,file}", "NAME=PATH", "one object a run", "runid first",
                  "One input prints one row (or one JSON object), without runid"):
        assert words in text, words
