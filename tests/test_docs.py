"""The documentation site (docs/, mkdocs.yml) and the README.

* the site builds with ``mkdocs build --strict`` into a temporary folder (broken
  links, anchors and cross-references, docstrings griffe cannot read and pages
  left out of the navigation fail it), and a broken cross-reference does fail
  the build as the test runs it;
* every fenced Python example of the guide and of the README runs, page by page
  in one namespace, in a folder holding the small files the examples name
  (``logs.parquet``, ``run.txt``, ``qrels.txt``, ...); an example preceded by
  ``<!-- docs-test: skip (reason) -->`` is skipped, and says why;
* every public name (``fastndcg.__all__``, ``fastndcg.dask.__all__``,
  ``fastndcg.spark.__all__``, the public methods of the result classes) has an
  entry in the built API reference;
* every command-line option has a help text and an entry on the built
  command-line page;
* the measures page's tables, written from the registry by a hook, have every
  measure, its names and definition, and the tie rules it refuses;
* no page speaks of how the project is run (issues, tickets, sessions).
"""

from __future__ import annotations

import argparse
import gzip
import inspect
import os
import re
import shutil
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import fastndcg

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
SKIP = re.compile(r"<!--\s*docs-test:\s*skip\s*\((?P<reason>[^)]+)\)\s*-->\s*$")
FENCE = re.compile(r"^```(?P<lang>[\w-]*)")


# --------------------------------------------------------------------------- the built site

def build_strict(config: Path, out: Path) -> subprocess.CompletedProcess:
    """``mkdocs build --strict`` of ``config`` into ``out`` (never into the repository).

    Not ``-q``: mkdocs counts the warnings that fail a strict build on its logger,
    and ``-q`` raises that logger to ERROR, so a quiet strict build drops every
    warning (a broken cross-reference, link or anchor) and succeeds."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
               NO_MKDOCS_2_WARNING="1")
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config),
                           "-d", str(out)],
                          cwd=config.parent, env=env, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site built once with --strict into a temporary folder."""
    out = tmp_path_factory.mktemp("site")
    done = build_strict(ROOT / "mkdocs.yml", out)
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stdout}\n{done.stderr}"
    assert "WARNING" not in done.stderr, done.stderr
    return out


def test_the_strict_build_fails_on_a_broken_cross_reference(tmp_path):
    """The way the site is built above does fail on a warning: ``[-q] [-c]`` in text
    is a reference link to ``-c`` for mkdocs-autorefs, which finds no such target."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text("# Page\n\ntrec_eval [-q] [-c] QRELS RUN\n")
    (tmp_path / "mkdocs.yml").write_text("site_name: t\nplugins:\n  - autorefs\n")
    done = build_strict(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert done.returncode != 0, done.stderr
    assert "-c" in done.stderr and "WARNING" in done.stderr, done.stderr


def anchors(site: Path, page: str) -> set[str]:
    html = (site / page / "index.html").read_text(encoding="utf-8")
    return set(re.findall(r'\bid="([^"]+)"', html))


def test_site_builds_strict(site):
    for page in ("index.html", "getting-started/index.html", "guide/cli/index.html",
                 "reference/index.html", "performance/index.html", "changelog/index.html"):
        assert (site / page).is_file(), page
    # the benchmark plots are part of the site
    assert (site / "benchmarks" / "shapes.png").is_file()


# --------------------------------------------------------------------------- examples

def pages() -> list[Path]:
    found = [p for p in sorted(DOCS.rglob("*.md")) if "benchmarks" not in p.relative_to(DOCS).parts]
    return found + [ROOT / "README.md"]


def python_blocks(path: Path) -> list[tuple[int, str, str | None]]:
    """(line, code, skip reason or None) of each fenced ```python block."""
    lines = path.read_text(encoding="utf-8").split("\n")
    blocks, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        start, lang = i, m["lang"]
        j = i + 1
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        if lang == "python":
            prev = next((lines[p] for p in range(start - 1, -1, -1) if lines[p].strip()), "")
            skip = SKIP.match(prev.strip())
            blocks.append((start + 1, "\n".join(lines[start + 1:j]), skip["reason"] if skip else None))
        i = j + 1
    return blocks


def test_python_blocks_are_found():
    """The extractor sees the guide's examples (a typo in a fence would hide them)."""
    counted = {p.name: len(python_blocks(p)) for p in pages()}
    assert sum(counted.values()) >= 20, counted
    for name in ("arrays.md", "search-logs.md", "trec.md", "measures.md", "compare.md",
                 "presets.md", "errors.md", "README.md"):
        assert counted[name] >= 1, name
    for path in pages():  # a skip marker that is not right above a python block is a mistake
        text = path.read_text(encoding="utf-8")
        marks = len(re.findall(r"docs-test:\s*skip", text))
        assert marks == sum(1 for _, _, why in python_blocks(path) if why), path


def write_example_files(where: Path) -> Path:
    """The files the examples read, written to ``where``: a small log with three
    rankers and a segment, the same log as a directory of parts, three TREC runs
    (one also gzipped) and their qrels, and a link to ``tests/data/real``."""
    rng = np.random.default_rng(7)
    n_q, per = 120, 12
    query = np.repeat(np.arange(n_q, dtype=np.int64), per)
    label = rng.integers(0, 4, n_q * per).astype(np.int8)
    noisy = [np.round(label + rng.normal(0, s, n_q * per), 1).astype(np.float32) for s in (1.5, 1.0, 2.0)]
    log = pa.table({"query_id": query, "doc_id": np.tile(np.arange(per, dtype=np.int64), n_q),
                    "score": noisy[0], "label": label, "score_a": noisy[0], "score_b": noisy[1],
                    "score_c": noisy[2],
                    "market": np.repeat(np.array(["de", "fr", "us"])[np.arange(n_q) % 3], per)})
    pq.write_table(log, where / "logs.parquet", row_group_size=500)
    (where / "logs").mkdir()
    half = (n_q // 2) * per
    pq.write_table(log.slice(0, half), where / "logs" / "part-0000.parquet")
    pq.write_table(log.slice(half), where / "logs" / "part-0001.parquet")

    qrels, runs = [], {"run.txt": [], "bm25.run": [], "dense.run": []}
    for q in range(40):
        grades = rng.integers(0, 3, 30)
        qrels += [f"{q} 0 d{d} {g}" for d, g in enumerate(grades) if d % 4 != 3]
        for name, noise in (("run.txt", 1.0), ("bm25.run", 1.5), ("dense.run", 0.8)):
            score = np.round(grades + rng.normal(0, noise, 30), 2)
            tag = {"run.txt": "run", "bm25.run": "bm25", "dense.run": "dense"}[name]
            order = np.argsort(-score, kind="stable")
            runs[name] += [f"{q} Q0 d{d} {r + 1} {score[d]} {tag}" for r, d in enumerate(order[:20])]
    (where / "qrels.txt").write_text("\n".join(qrels) + "\n")
    for name, lines in runs.items():
        (where / name).write_text("\n".join(lines) + "\n")
    with gzip.open(where / "run.txt.gz", "wt") as f:
        f.write("\n".join(runs["run.txt"]) + "\n")
    # the real TREC runs and qrels, where the worked examples name them (from the root)
    (where / "tests" / "data").mkdir(parents=True)
    (where / "tests" / "data" / "real").symlink_to(ROOT / "tests" / "data" / "real")
    return where


@pytest.fixture(scope="module")
def example_files(tmp_path_factory) -> Path:
    return write_example_files(tmp_path_factory.mktemp("example-files"))


@pytest.mark.parametrize("path", [p for p in pages() if any(why is None for _, _, why in python_blocks(p))],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_examples_run(path, example_files, tmp_path, monkeypatch):
    runnable = [(line, code) for line, code, why in python_blocks(path) if why is None]
    for item in example_files.iterdir():
        if item.is_dir():
            shutil.copytree(item, tmp_path / item.name, symlinks=True)
        else:
            shutil.copy(item, tmp_path / item.name)
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "__docs__"}
    for line, code in runnable:
        try:
            exec(compile(code, f"{path.relative_to(ROOT)}:{line}", "exec"), namespace)
        except Exception as err:  # say which example failed
            raise AssertionError(f"the example at {path.relative_to(ROOT)}:{line} failed: "
                                 f"{type(err).__name__}: {err}") from err


# --------------------------------------------------------------------------- API reference

def canonical(module: types.ModuleType, name: str) -> str:
    """The anchor mkdocstrings gives the object ``module.name``: its defining path."""
    obj = getattr(module, name)
    if isinstance(obj, types.ModuleType):
        return obj.__name__
    if getattr(obj, "__qualname__", None) and getattr(obj, "__module__", None) and \
            (inspect.isclass(obj) or inspect.isfunction(obj)):
        return f"{obj.__module__}.{obj.__qualname__}"
    return f"{module.__name__}.{name}"


def public_names() -> list[str]:
    import fastndcg.dask
    import fastndcg.spark
    from fastndcg._evaluate import Runs, evaluate_runs

    names = []
    for module in (fastndcg, fastndcg.dask, fastndcg.spark):
        names += [canonical(module, n) for n in module.__all__]
    names.append(f"{evaluate_runs.__module__}.{evaluate_runs.__qualname__}")
    for cls in (fastndcg.Report, fastndcg.Comparison, fastndcg.WarmupReport, Runs):
        path = f"{cls.__module__}.{cls.__qualname__}"
        names.append(path)
        members = set(getattr(cls, "__annotations__", {}))
        for klass in cls.__mro__[:-1]:
            members |= {n for n, v in vars(klass).items()
                        if callable(v) or isinstance(v, (property, staticmethod, classmethod))}
        names += [f"{path}.{m}" for m in sorted(members) if not m.startswith("_")]
    return names


def test_every_public_name_is_in_the_api_reference(site):
    documented = set()
    for page in ("reference", "reference/results", "reference/dask", "reference/spark",
                 "reference/oracle"):
        documented |= anchors(site, page)
    names = public_names()
    assert len(names) > 40  # the walk found the names
    missing = [n for n in names if n not in documented]
    assert not missing, f"public names without an entry in the API reference: {missing}"


def test_the_oracle_is_documented_function_by_function(site):
    from fastndcg import reference
    documented = anchors(site, "reference/oracle")
    public = [n for n, v in vars(reference).items() if inspect.isfunction(v) and not n.startswith("_")
              and v.__module__ == reference.__name__]
    assert len(public) > 15
    assert not [n for n in public if f"fastndcg.reference.{n}" not in documented]


# --------------------------------------------------------------------------- command line

def test_every_command_line_option_is_documented(site):
    from fastndcg.cli import build_parser

    html = (site / "guide" / "cli" / "index.html").read_text(encoding="utf-8")
    ids = anchors(site, "guide/cli")
    root = build_parser()
    subs = next(a for a in root._actions if isinstance(a, argparse._SubParsersAction)).choices
    assert {"evaluate", "compare", "demo", "warmup", "synth"} <= set(subs)
    undocumented, no_help = [], []
    for command, parser in subs.items():
        assert f"fastndcg-{command}" in ids, f"no section for fastndcg {command}"
        for action in parser._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            flag = max(action.option_strings, key=len) if action.option_strings else action.dest
            where = f"{command} {flag}"
            if not action.help or action.help == argparse.SUPPRESS or not action.help.strip():
                no_help.append(where)
            if f"{command}-{flag.lstrip('-')}" not in ids or \
                    (action.option_strings and f"<code>{flag}</code>" not in html):
                undocumented.append(where)
    assert not no_help, f"command-line options without a help text: {no_help}"
    assert not undocumented, f"command-line options missing from the command-line page: {undocumented}"


def test_the_command_line_page_shows_each_help_text(site):
    """The generated page carries the parser's words, not a stale copy."""
    from fastndcg.cli import build_parser

    text = re.sub(r"<[^>]+>", "", (site / "guide" / "cli" / "index.html").read_text(encoding="utf-8"))
    text = " ".join(text.replace("&#124;", "|").replace("&gt;", ">").replace("&lt;", "<")
                    .replace("&amp;", "&").replace("&quot;", '"').replace("&#39;", "'").split())
    root = build_parser()
    subs = next(a for a in root._actions if isinstance(a, argparse._SubParsersAction)).choices
    for command, parser in subs.items():
        for action in parser._actions:
            if action.help and not isinstance(action, argparse._HelpAction):
                words = " ".join((action.help % {"default": action.default}).split())
                assert words in text, f"{command} {action.option_strings}: {words!r}"


# --------------------------------------------------------------------------- measures page

def measures_page() -> str:
    """The measures page as the site shows it: its tables written by the hook."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("measure_table",
                                                  DOCS / "hooks" / "measure_table.py")
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    text = (DOCS / "guide" / "measures.md").read_text(encoding="utf-8")
    assert all(marker in text for marker in hook.MARKERS)
    return hook.on_page_markdown(text, None, None, None)


def test_the_ties_section_lists_the_registry_s_refusals():
    """The refusals table of the measures page's Ties section says, for each measure,
    the tie rules it refuses, as the registry's ``average`` and ``bounds`` flags do
    (and ndcg_rel's average with negative labels kept, ``average_negative``)."""
    from fastndcg.measures import REGISTRY

    text = measures_page()
    section = text.split("\n### Ties\n", 1)[1].split("\n### ", 1)[0]
    table = section.split("| measure | refuses | why |", 1)[1].split("\n\n", 1)[0]
    documented, negative = {}, set()
    for row in table.strip().split("\n")[1:]:
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        names = re.findall(r"`([^`]+)`", re.sub(r"\([^)]*\)", "", cells[0]))
        refused = set(re.findall(r"`(average|optimistic|pessimistic)`",
                                 re.sub(r"\(use [^)]*\)", "", cells[1])))
        assert cells[2], row  # and why
        if "negative_labels" in cells[0]:
            negative |= {n for n in names if n in REGISTRY}
            assert refused == {"average"}, row
            continue
        for name in names:
            assert name in REGISTRY and name not in documented, (name, row)
            documented[name] = refused
    expected = {k.name: ({"average"} if not k.average else set())
                | ({"optimistic", "pessimistic"} if not k.bounds else set())
                for k in REGISTRY.values() if not (k.average and k.bounds)}
    assert documented == expected
    assert negative == {k.name for k in REGISTRY.values() if not k.average_negative}


def test_the_measures_table_has_every_registry_row():
    """The measure table of the page is written from the registry: a line per row,
    each with its column name, its names in the tools and its definition."""
    from fastndcg.measures import REGISTRY

    text = measures_page()
    table = text.split("| measure | definition (one query) |", 1)[1].split("\n\n", 1)[0]
    rows = table.strip().split("\n")[2:]  # after the rest of the header and its rule
    assert len(rows) == len(REGISTRY)
    for kind, row in zip(REGISTRY.values(), rows):
        first = row.strip("|").split(" | ")[0]
        assert f"`{kind.name}" in first, (kind.name, row)
        for name in (kind.trec, kind.trec_cut, kind.irm, kind.ranx):
            assert name is None or f"`{name}" in first, (name, row)
        assert " ".join(kind.doc.split()) in row, kind.name


def test_the_built_measures_page_shows_the_tables(site):
    html = (site / "guide" / "measures" / "index.html").read_text(encoding="utf-8")
    assert "measure-table" not in html and "tie-refusals" not in html
    assert "<code>bpref_ranx</code>" in html and "<code>iprec_at_recall</code>" in html


# --------------------------------------------------------------------------- words

INTERNAL = re.compile(r"\b(issues?|tickets?|sessions?|DESIGN\.md)\b", re.IGNORECASE)


@pytest.mark.parametrize("path", [p for p in sorted(DOCS.rglob("*.md"))] + [ROOT / "README.md"],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_no_words_of_the_project_s_process(path):
    text = path.read_text(encoding="utf-8")
    found = [m.group(0) for m in INTERNAL.finditer(text)
             if not text[max(0, m.start() - 6):m.start()].lower().endswith("spark ")]
    assert not found, f"{path.relative_to(ROOT)} speaks of {found}"


def test_readme_is_a_front_page():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.split("\n")) <= 200
    # the quick start that .ci/run follows is kept word for word
    assert 'pip install -e ".[test]" && python -m pytest' in text
    assert "pip install . && fastndcg demo" in text
    targets = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text)
    local = [t for t in targets if "://" not in t]
    assert len(local) >= 10
    assert not [t for t in local if not (ROOT / t).exists()], "README links to missing files"
