"""A property-based hunt over every public parameter and every command-line option.

For each public function and each subcommand, hypothesis replaces one or two of a
valid call's parameters with hostile values (empty, blank, NaN, +-inf, 0,
negatives, huge, wrong types, unicode, NUL, paths that are links to an input, the
input itself, a directory, a FIFO, ``/dev/null``, a file in a read-only directory,
a path that does not exist) and asserts that the call either

* returns the right answer, checked against ``fastndcg.reference`` (scikit-learn
  for the scikit-learn drop-ins), or
* raises ``ValueError`` / ``TypeError`` / ``FileNotFoundError`` whose message names
  the parameter it replaced (on the command line: exit status != 0, exactly one
  ``fastndcg: error:`` line naming the option, nothing on stdout);

and, every time, that no input file changed and that the call did not hang.
``test_every_parameter_is_fuzzed`` lists the parameters from the signatures and the
options from the argument parser and fails when one has no hostile values here.

Each target draws ``examples(0.12)`` (the hypothesis profile's share: 3 under
``dev``, 12 under ``ci``), the engines half of it; under the ``long`` profile the
heavy test ``test_fuzz_long`` runs every target again with 200 fresh random draws.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import inspect
import io
import json
import math
import os
import re
import signal
import stat
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

import fastndcg
from fastndcg import cli, reference

from strategies import examples, profile

EXAMPLES = examples(0.12)  # per target (dev 3, ci 12, long 120)
ENGINE_EXAMPLES = examples(0.06)  # Dask and Spark calls cost more (dev 2, ci 6, long 60)
HANG_S = 90  # one call longer than this is a hang
ERRORS = (ValueError, TypeError, FileNotFoundError)

# --------------------------------------------------------------------------- data

S = np.array([0.5, 0.25, 1.0, 0.0, 0.5, 0.5])
L = np.array([1, 0, 2, 1, 0, 3], dtype=np.int64)
O = np.array([0, 2, 6], dtype=np.int64)


def _table() -> pa.Table:
    rng = np.random.default_rng(7)
    q = np.repeat(np.arange(12, dtype=np.int64), 4)
    n = len(q)
    return pa.table({"query_id": q, "doc_id": np.arange(n, dtype=np.int64),
                     "score": rng.integers(0, 4, n).astype(np.float32),  # tie-heavy
                     "s2": rng.integers(0, 4, n).astype(np.float32),
                     "label": rng.integers(0, 4, n).astype(np.int8),
                     "seg": np.where(q % 2 == 0, "even", "odd"),
                     "w": np.repeat(rng.integers(1, 4, 12), 4).astype(np.float64)})


TABLE = _table()


def _label_sets() -> tuple[pa.Table, pa.Table]:
    """Two label sets of TABLE's documents: the first judges rows 0-39, the second
    rows 6-47 with every third grade moved; rows 6-39 are judged by both."""
    rows = TABLE.select(["query_id", "doc_id", "label"])
    b = rows.slice(6)
    moved = np.where(np.arange(b.num_rows) % 3 == 0, (b["label"].to_numpy() + 1) % 4,
                     b["label"].to_numpy()).astype(np.int8)
    return rows.slice(0, 40), b.set_column(2, "label", pa.array(moved))


SET_A, SET_B = _label_sets()


class Files:
    """The fuzz's folder: inputs (never to change) and the hostile paths."""

    def __init__(self, root: Path):
        self.root = root
        self.log = root / "log.parquet"
        pq.write_table(TABLE, self.log)
        self.run = root / "run.txt"
        self.run.write_text("".join(f"q{q} Q0 d{d} {i} {s} t\n" for i, (q, d, s) in enumerate(
            zip(TABLE["query_id"].to_pylist(), TABLE["doc_id"].to_pylist(),
                TABLE["score"].to_pylist()))))
        self.qrels = root / "qrels.txt"
        self.qrels.write_text("".join(f"q{q} 0 d{d} {r}\n" for q, d, r in zip(
            TABLE["query_id"].to_pylist(), TABLE["doc_id"].to_pylist(),
            TABLE["label"].to_pylist())))
        self.qrels_b = root / "qrels_b.txt"  # a second label set, sharing most documents
        self.qrels_b.write_text("".join(f"q{q} 0 d{d} {r}\n" for q, d, r in zip(
            SET_B["query_id"].to_pylist(), SET_B["doc_id"].to_pylist(),
            SET_B["label"].to_pylist())))
        (root / "link.parquet").symlink_to(self.log)
        (root / "adir").mkdir()
        (root / "adir" / "notes.txt").write_text("not a log\n")
        ro = root / "readonly"
        ro.mkdir()
        ro.chmod(stat.S_IRUSR | stat.S_IXUSR)
        os.mkfifo(root / "fifo")
        self.inputs = [self.log, self.run, self.qrels, self.qrels_b, root / "adir" / "notes.txt"]
        self.fresh = 0

    def path(self, kind: str) -> str:
        """A hostile path of a kind; 'new*' names a fresh, unused output path."""
        r = self.root
        if kind.startswith("new"):
            self.fresh += 1
            ext = kind[3:]
            return str(r / "out" / f"{self.fresh}{ext}")
        return str({"link": r / "link.parquet", "input": self.log, "run": self.run,
                    "qrels": self.qrels, "dir": r / "adir", "missing": r / "nope" / "x.parquet",
                    "readonly": r / "readonly" / "x.parquet", "fifo": r / "fifo",
                    "devnull": "/dev/null", "notes": r / "adir" / "notes.txt"}[kind])

    def digests(self) -> dict:
        return {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in self.inputs}


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("fuzz")
    f = Files(root)
    (root / "out").mkdir()
    MADE.clear()
    MADE["files"] = f
    here = os.getcwd()
    os.chdir(root / "out")  # relative output paths land in the fuzz's folder
    try:
        yield f
    finally:
        os.chdir(here)
    (root / "readonly").chmod(stat.S_IRWXU)


# --------------------------------------------------------------------------- values

class P:
    """A path drawn by kind, made real inside the test (the folder is a fixture)."""

    def __init__(self, kind: str, as_path: bool = False):
        self.kind, self.as_path = kind, as_path

    def __repr__(self):
        return f"P({self.kind!r}{', Path' if self.as_path else ''})"


PATH_KINDS = ["link", "input", "run", "qrels", "dir", "missing", "readonly", "fifo", "devnull",
              "notes", "new.parquet", "new.csv", "new.png", "new.json", "new"]

SPECIAL = [
    "", " ", "\t\n", "a\0b", "\u00e9\u4e2d\u0301", "nan", "inf", "-1", "0", "1e308", "None",
    "True", "exp2", "all", "../", "\u0661",  # an Arabic-Indic digit one
    float("nan"), float("inf"), -float("inf"), 0, -1, 0.0, -0.0, 1.5, 1e-320, 1e308,
    10 ** 30, -(10 ** 30), 2 ** 63, 2 ** 64, 2 ** 53 + 1, True, False, None, 1j, b"", b"x",
    [], (), {}, set(), [None], [float("nan")], ["a", 1], [[1]], {"a": 1},
    np.float32("nan"), np.int64(-1), np.uint64(2 ** 64 - 1), np.bool_(True), np.array([]),
    np.array([[1, 2]]), np.array(["x"]), pa.array([1, None]), pa.scalar(3),
]

HOSTILE = st.one_of(
    st.sampled_from(SPECIAL),
    st.builds(P, st.sampled_from(PATH_KINDS), st.booleans()),
    st.text(max_size=6),
    st.integers(),
    st.floats(),
    st.lists(st.integers(-3, 5), max_size=3),
)

CLI_SPECIAL = ["", " ", "nan", "inf", "-inf", "0", "-1", "1e308", "99999999999999999999",
               "2.5", "1,1", "1,", ",", "a,b", "\u00e9", "\u0661", "\uff11", "1_0", "0x10",
               "-", "--", "None", "true", "all", "exp2", "../", "tcp://", "x" * 300]
CLI_HOSTILE = st.one_of(st.sampled_from(CLI_SPECIAL),
                        st.builds(P, st.sampled_from(PATH_KINDS)),
                        st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\0"),
                                max_size=6),
                        st.integers().map(str))


def real(value, files: Files):
    if isinstance(value, P):
        text = files.path(value.kind)
        return Path(text) if value.as_path else text
    return value


# --------------------------------------------------------------------------- checks

class Hang(BaseException):
    """Not an Exception: nothing under test may catch it."""


@contextlib.contextmanager
def no_hang(what):
    def fire(*_):
        raise Hang(f"{what} ran past {HANG_S} s")
    old = signal.signal(signal.SIGALRM, fire)
    signal.alarm(HANG_S)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


RAW = ("ArrowInvalid", "ArrowTypeError", "pyarrow.lib", "zlib", "Traceback", "object has no "
       "attribute", "list index out of range", "numba", "Numba", "embedded null byte",
       "invalid literal for int()", "could not convert string to float")


def check_refusal(err: BaseException, names, call, values=()) -> None:
    message = str(err)
    assert isinstance(err, ERRORS), f"{call}: raised {type(err).__name__}: {message}"
    assert message.strip(), f"{call}: {type(err).__name__} with no message"
    own = re.sub(r"<pyarrow\.lib\.[^>]*>", "", message)
    for v in values:  # the user's own value, shown, is not a leak
        own = own.replace(repr(v), "").replace(str(v), "")
    for raw in RAW:
        assert raw not in own, f"{call}: raw error text {raw!r} in {message!r}"
    assert any(n in message for n in names), (
        f"{call}: the message names none of {sorted(names)}: {message!r}")


def close(a, b) -> bool:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=1e-9, atol=1e-12, equal_nan=True))


def given_kw(kw: dict, *names) -> dict:
    return {n: kw[n] for n in names if n in kw and kw[n] is not None}


def table_queries(table: pa.Table, score: str = "score"):
    order = np.argsort(table["query_id"].to_numpy(), kind="stable")
    t = table.take(order)
    q = t["query_id"].to_numpy()
    offsets = np.flatnonzero(np.r_[True, q[1:] != q[:-1], True])
    return t[score].to_numpy().astype(float), t["label"].to_numpy().astype(int), offsets


def expected_means(kw: dict, score: str = "score") -> dict:
    """The mean NDCG@k of TABLE by the reference, for evaluate-style options."""
    s, r, o = table_queries(TABLE, score)
    ks = kw.get("k", (1, 3, 5, 10))
    ks = list(ks) if isinstance(ks, (list, tuple, np.ndarray)) else [ks]
    opts = given_kw(kw, "gain", "ties", "log_base", "zero_idcg", "nan_scores", "negative_labels")
    out = {}
    for k in ks:
        values = reference.ndcg(s, r, o, k=None if k is None else int(k), **opts)
        out["ndcg" if k is None else f"ndcg@{int(k)}"] = float(np.mean(values))
    return out


# --------------------------------------------------------------------------- targets

@dataclass
class Target:
    call: Callable
    base: dict
    verify: Callable  # (result, kwargs, files) -> None; raise on a wrong answer
    names: dict = field(default_factory=dict)  # parameter -> other words naming it
    hopeless: Callable = lambda kw: False  # kwargs certainly valid and too slow to run


def _verify_array(fn):
    def check(result, kw, files):
        if kw.get("preset") is not None or kw.get("score_precision") is not None:
            raise AssertionError(f"accepted preset/score_precision {kw}")
        args = {k: v for k, v in kw.items() if v is not None and k not in ("preset", "score_precision")}
        expect = getattr(reference, fn)(**args)
        assert close(result, expect), f"{fn}({kw}) = {result}, reference {expect}"
    return check


def _verify_measure(result, kw, files):
    assert kw["measure"] == "nDCG@3 P@2", f"accepted measure={kw['measure']!r}"
    assert kw.get("preset") is None and kw.get("score_precision") is None, kw
    base = given_kw(kw, "scores", "labels", "offsets", "query_ids")
    # "nDCG@3" is ir_measures' nDCG: linear gain (a gain= given must agree, or is refused)
    nd = reference.ndcg(**base, k=3, **{"gain": "linear", **given_kw(
        kw, "gain", "ties", "log_base", "zero_idcg", "nan_scores", "negative_labels")})
    rel = kw.get("rel")
    p = reference.measure("p", **base, k=2, rel=1 if rel is None else rel,
                          **given_kw(kw, "ties", "nan_scores"))
    assert close(result["ndcg@3"], nd) and close(result["p@2"], p), (result, nd, p)


def _verify_sklearn(fn):
    def check(result, kw, files):
        import sklearn.metrics as skm
        expect = getattr(skm, fn)(**kw)
        assert close(result, expect), f"{fn}({kw}) = {result}, scikit-learn {expect}"
    return check


def _source_ok(kw, files) -> None:
    src = kw.get("source")
    if isinstance(src, (str, Path)):
        assert Path(src).resolve() == files.log.resolve(), f"accepted source {src!r}"
    else:
        assert src is TABLE, f"accepted source {src!r}"


def _is_log(value, files) -> bool:
    """The log itself, by path or as the table: judgments of every row, same answer."""
    if isinstance(value, (str, Path)):
        return Path(value).resolve() == files.log.resolve()
    return value is TABLE


def _verify_evaluate(report, kw, files):
    _source_ok(kw, files)
    for bad in ("measure", "weight", "preset", "score_precision"):
        assert kw.get(bad) is None, f"accepted {bad}={kw[bad]!r}"
    for judged in ("qrels", "human_qrels"):  # only the log's own labels are valid here
        assert kw.get(judged) is None or _is_log(kw[judged], files), \
            f"accepted {judged}={kw[judged]!r}"
    if kw.get("human_qrels") is not None:
        assert kw.get("qrels") is not None, "accepted human_qrels without qrels"
    else:  # the prediction-powered options need human judgments
        for opt, default in (("confidence", 0.95), ("ppi", "tuned")):
            assert kw.get(opt, default) == default, \
                f"accepted {opt}={kw[opt]!r} without human_qrels"
    for col in ("query", "doc", "score", "label"):
        assert kw.get(col, col if col != "query" else "query_id") in (col, "query_id", "doc_id"), kw
    expect = expected_means(kw)
    assert set(report.mean) == set(expect), (report.mean, expect)
    for name, value in expect.items():
        assert close(report.mean[name], value), (name, report.mean[name], value)
    per_query = kw.get("per_query")
    if isinstance(per_query, (str, Path)):
        assert Path(per_query).exists(), per_query
        assert str(Path(per_query).resolve()).startswith(str(files.root)), per_query


def _verify_runs(result, kw, files):
    """evaluate_runs of the one run ("a", the log) as evaluate evaluates it; no valid
    value of runs or runid is drawn."""
    assert kw["runs"] == [("a", TABLE)], f"accepted runs={kw['runs']!r}"
    assert kw.get("runid", "tag") in ("tag", "file"), f"accepted runid={kw['runid']!r}"
    assert kw.get("human_qrels") is None, f"accepted human_qrels={kw['human_qrels']!r}"
    assert list(result.reports) == ["a"], result.reports
    rest = {k: v for k, v in kw.items() if k not in ("runs", "runid")}
    report = result.reports["a"]
    _verify_evaluate(report, dict(rest, source=TABLE), files)


def _verify_compare(comp, kw, files):
    _source_ok(kw, files)
    assert list(kw["systems"]) == ["score", "s2"], kw["systems"]
    for bad in ("qrels", "segment", "human_qrels"):
        assert kw.get(bad) is None, f"accepted {bad}={kw[bad]!r}"
    opts = {n: kw[n] for n in ("gain", "ties", "log_base", "zero_idcg", "nan_scores",
                               "negative_labels", "k") if n in kw}
    for row in comp.to_dict()["systems"]:
        expect = expected_means(opts, row["system"])[row["measure"]]
        assert close(row["mean"], expect), (row, expect)
    c = kw.get("confidence", 0.95)
    assert 0 < c < 1, f"accepted confidence={c!r}"
    assert kw.get("ppi", "tuned") == "tuned", f"accepted ppi={kw['ppi']!r} without human_qrels"


def _verify_dask(report, kw, files):
    _verify_evaluate(report, {k: v for k, v in kw.items()
                              if k not in ("client", "workers", "partition_rows", "spark",
                                           "order", "partitions")}, files)


def _verify_written(kind):
    def check(result, kw, files):
        if kw["path"] is None:  # plot() without a path returns the figure
            assert kind == "plot" and hasattr(result, "savefig"), result
            return
        path = Path(kw["path"])  # (as root, a read-only folder is writable)
        assert path.is_file() and path.resolve() not in {p.resolve() for p in files.inputs}, path
        if kind == "write" and path.suffix == ".parquet":
            assert pq.read_table(path).num_rows == 12
    return check


def shared_grades(a: pa.Table, b: pa.Table) -> tuple[np.ndarray, np.ndarray]:
    """The grades of the (query, document) pairs both label sets judge, lined up."""
    grade_b = {(q, d): g for q, d, g in zip(*(b[c].to_pylist() for c in ("query_id", "doc_id",
                                                                          "label")))}
    pairs = [(g, grade_b[(q, d)]) for q, d, g in zip(*(a[c].to_pylist() for c in (
        "query_id", "doc_id", "label"))) if (q, d) in grade_b]
    return np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])


def check_agreement(result, a: pa.Table, b: pa.Table, names: tuple) -> None:
    """The label part of an Agreement of a and b, checked against scikit-learn."""
    import sklearn.metrics as skm
    ga, gb = shared_grades(a, b)
    assert tuple(result.names) == tuple(names), (result.names, names)
    assert (result.n_both, result.n_only_a, result.n_only_b) == (
        len(ga), a.num_rows - len(ga), b.num_rows - len(ga)), result
    values = np.unique(np.concatenate([ga, gb]))
    assert close(result.values, values), (result.values, values)
    assert np.array_equal(result.confusion, skm.confusion_matrix(ga, gb, labels=values))
    for stat, weights in (("kappa", None), ("kappa_linear", "linear"),
                          ("kappa_quadratic", "quadratic")):
        expect = skm.cohen_kappa_score(ga, gb, weights=weights)
        assert close(result.overall[stat], expect), (stat, result.overall[stat], expect)


def _verify_agreement(result, kw, files):
    assert kw["a"] is SET_A and kw["b"] is SET_B, f"accepted a={kw['a']!r}, b={kw['b']!r}"
    for bad in ("qrels", "human_qrels", "runs"):  # no valid value of these is drawn
        assert kw.get(bad) is None, f"accepted {bad}={kw[bad]!r}"
    for opt, default in (("confidence", 0.95), ("ppi", "tuned")):  # only with human_qrels
        assert kw.get(opt, default) == default, f"accepted {opt}={kw[opt]!r} without human_qrels"
    for opt in ("measure", "k"):  # score runs: refused without them
        assert kw.get(opt) in (None, (1, 3, 5, 10)), f"accepted {opt}={kw[opt]!r} without runs"
    for col in ("query", "doc", "label"):
        assert kw.get(col, col) in (col, "query_id", "doc_id"), kw
    check_agreement(result, SET_A, SET_B, tuple(kw.get("names") or ("a", "b")))


def _scorings(kw, names):
    """The two scorings a call was given, as the float arrays the statistic reads; a
    value that is not two equally long 1-D sequences of numbers was accepted wrongly."""
    out = []
    for name in names:
        value = kw[name]
        assert isinstance(value, (list, tuple, np.ndarray, pa.Array)), \
            f"accepted {name}={value!r}"
        arr = np.asarray(value.to_numpy(zero_copy_only=False) if isinstance(value, pa.Array)
                         else value)
        assert arr.ndim == 1 and arr.dtype.kind in "biuf", f"accepted {name}={value!r}"
        out.append(arr.astype(np.float64))
    assert len(out[0]) == len(out[1]), f"accepted lengths {len(out[0])} and {len(out[1])}"
    return out


def _verify_correlation(fn):
    """kendall_tau_b and spearman_rho against SciPy, tau_AP against the paper's
    definition (``test_agreement.tau_ap_by_definition``); NaN where they are."""
    def check(result, kw, files):
        import warnings

        from scipy import stats

        from test_agreement import tau_ap_by_definition
        names = ("reference", "other") if fn == "tau_ap" else ("x", "y")
        x, y = _scorings(kw, names)
        if fn == "tau_ap":
            expect = (math.nan if len(x) < 2 or np.isnan(x).any() or np.isnan(y).any()
                      else tau_ap_by_definition(list(x), list(y)))
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                f = stats.kendalltau if fn == "kendall_tau_b" else stats.spearmanr
                expect = f(x, y).statistic if len(x) >= 2 else math.nan
        assert close(result, expect), f"{fn}({kw}) = {result}, expected {expect}"
    return check


def _verify_grades(result, kw, files):
    """grade_agreement against scikit-learn's kappas and krippendorff's alphas
    (``test_agreement.oracle``)."""
    from test_agreement import oracle
    ga, gb = _scorings(kw, ("a", "b"))
    assert len(ga) and np.isfinite(ga).all() and np.isfinite(gb).all(), f"accepted {kw}"
    expect = oracle(ga, gb)
    for name, value in expect.items():
        assert close(result[name], value), (name, result[name], value)


def _refuse_all(result, kw, files):
    raise AssertionError(f"accepted {kw}")


def _warmup_valid(kw) -> bool:
    jobs = kw.get("jobs", 1)
    return (type(kw.get("portable", False)) is bool and type(kw.get("progress", False)) is bool
            and type(jobs) is int and 1 <= jobs <= 64 and kw.get("stream") is None)


MADE: dict = {}  # the report and comparison written or drawn, made once from the log file


def _report():
    if "report" not in MADE:
        MADE["report"] = fastndcg.evaluate(MADE["files"].log, k=3)
    return MADE["report"]


def _comparison():
    if "comparison" not in MADE:
        MADE["comparison"] = fastndcg.compare(MADE["files"].log, ["score", "s2"], k=3,
                                              n_resamples=50)
    return MADE["comparison"]


def _plot(path=None, **kw):
    pytest.importorskip("matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    return _comparison().plot(path, **kw)


ARRAYS = dict(scores=S, labels=L, offsets=O)
TARGETS: dict[str, Target] = {
    "ndcg": Target(fastndcg.ndcg, dict(ARRAYS, k=3), _verify_array("ndcg")),
    "dcg": Target(fastndcg.dcg, dict(ARRAYS, k=3), _verify_array("dcg")),
    "idcg": Target(fastndcg.idcg, dict(labels=L, offsets=O, k=3), _verify_array("idcg")),
    "measure": Target(fastndcg.measure, dict(ARRAYS, measure="nDCG@3 P@2"), _verify_measure),
    "ndcg_score": Target(fastndcg.ndcg_score, dict(y_true=[[1, 0, 2, 3]], y_score=[[0.5, 0.5, 0.1, 0.2]]),
                         _verify_sklearn("ndcg_score")),
    "dcg_score": Target(fastndcg.dcg_score, dict(y_true=[[1, 0, 2, 3]], y_score=[[0.5, 0.5, 0.1, 0.2]]),
                        _verify_sklearn("dcg_score")),
    "evaluate": Target(fastndcg.evaluate, dict(source=TABLE, k=3), _verify_evaluate),
    "evaluate_runs": Target(fastndcg.evaluate_runs, dict(runs=[("a", TABLE)], k=3),
                            _verify_runs),
    "compare": Target(fastndcg.compare, dict(source=TABLE, systems=["score", "s2"], k=3,
                                             n_resamples=50), _verify_compare),
    "agreement": Target(fastndcg.agreement, dict(a=SET_A, b=SET_B), _verify_agreement),
    "warmup": Target(fastndcg.warmup, {}, _refuse_all, hopeless=_warmup_valid),
    "grade_agreement": Target(fastndcg.grade_agreement, dict(a=[2, 1, 0, 0, 1, 2],
                                                             b=[2, 0, 0, 1, 1, 2]),
                              _verify_grades),
    "kendall_tau_b": Target(fastndcg.kendall_tau_b, dict(x=[0.1, 0.2, 0.3, 0.4],
                                                         y=[0.1, 0.3, 0.2, 0.4]),
                            _verify_correlation("kendall_tau_b")),
    "spearman_rho": Target(fastndcg.spearman_rho, dict(x=[0.1, 0.2, 0.3, 0.4],
                                                       y=[0.1, 0.3, 0.2, 0.4]),
                           _verify_correlation("spearman_rho")),
    "tau_ap": Target(fastndcg.tau_ap, dict(reference=[0.9, 0.8, 0.7, 0.6, 0.5],
                                           other=[0.5, 0.9, 0.8, 0.7, 0.6]),
                     _verify_correlation("tau_ap")),
    "Report.write": Target(lambda **kw: _report().write(**kw), {"path": P("new.parquet")},
                           _verify_written("write")),
    "Comparison.plot": Target(_plot, {"path": P("new.png")}, _verify_written("plot")),
    "dask.evaluate": Target(None, {"source": TABLE, "k": 3}, _verify_dask),
    "spark.evaluate": Target(None, {"source": P("input"), "k": 3}, _verify_dask),
}
ENGINES = ("dask.evaluate", "spark.evaluate")  # need a cluster: fuzzed by their own tests

# compare forwards these keyword arguments (``**options``) to evaluate
COMPARE_OPTIONS = ["query", "doc", "score", "label", "gain", "ties", "log_base", "zero_idcg",
                   "nan_scores", "negative_labels", "complete", "score_precision", "preset",
                   "measure", "rel", "weight", "batch_rows", "human_qrels", "ppi",
                   "bogus_option"]


def params_of(name: str) -> list[str]:
    fn = _function(name)
    out = []
    for p in inspect.signature(fn).parameters.values():
        if p.name == "self":
            continue
        out.extend(COMPARE_OPTIONS if p.kind is p.VAR_KEYWORD else [p.name])
    return out


def _dask():
    import fastndcg.dask as fd
    return fd


def _spark():
    import fastndcg.spark as fs
    return fs


def _function(name: str):
    return {"Report.write": fastndcg.Report.write, "Comparison.plot": fastndcg.Comparison.plot,
            "dask.evaluate": _dask().evaluate,
            "spark.evaluate": _spark().evaluate}.get(name) or TARGETS[name].call


# --------------------------------------------------------------------------- the API fuzz

def call_api(name: str, replaced: dict, files: Files, dask_client=None, spark=None) -> None:
    target = TARGETS[name]
    kw = {k: real(v, files) for k, v in {**target.base, **replaced}.items()}
    if name == "spark.evaluate":
        kw.setdefault("spark", spark)
    if name == "dask.evaluate":
        kw.setdefault("client", dask_client)
        if "workers" in replaced and "client" not in replaced:
            kw.pop("client")  # workers alone is a new local cluster; with a client it's refused
            assume(not (isinstance(kw["workers"], int) and 0 < kw["workers"] < 5))
    assume(not target.hopeless(kw))
    before = files.digests()
    call = f"{name}({', '.join(f'{k}={v!r}' for k, v in replaced.items())})"
    fn = _function(name) if name in ENGINES else target.call
    names = set(replaced) | {shown for real_v in (kw[k] for k in replaced)
                             if isinstance(real_v, (str, Path)) and len(str(real_v)) > 2
                             for shown in (str(real_v), repr(str(real_v))[1:-1])}
    if name == "compare" and "bogus_option" in replaced:
        names.add("bogus_option")
    with no_hang(call):
        try:
            result = fn(**kw)
        except BaseException as err:  # noqa: B036 - every escape is judged
            if isinstance(err, (KeyboardInterrupt, Hang)):
                raise
            check_refusal(err, names, call, [kw[k] for k in replaced if k in kw])
        else:
            target.verify(result, kw, files)
    assert files.digests() == before, f"{call} changed an input file"


def _draw_params(data, name: str) -> dict:
    params = params_of(name)
    chosen = data.draw(st.lists(st.sampled_from(params), min_size=1, max_size=2, unique=True),
                       label="parameters")
    return {p: data.draw(HOSTILE, label=p) for p in chosen}


API_NAMES = [n for n in TARGETS if n not in ENGINES]


def _api_fuzz(name, files, data):
    call_api(name, _draw_params(data, name), files)


@pytest.mark.parametrize("name", API_NAMES)
@settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_api_fuzz(name, files, data):
    _api_fuzz(name, files, data)


@settings(max_examples=ENGINE_EXAMPLES, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_dask_fuzz(files, dask_client, data):
    call_api("dask.evaluate", _draw_params(data, "dask.evaluate"), files, dask_client)


@settings(max_examples=ENGINE_EXAMPLES, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_spark_fuzz(files, spark, data):
    call_api("spark.evaluate", _draw_params(data, "spark.evaluate"), files, spark=spark)


# --------------------------------------------------------------------------- the CLI fuzz

CLI_BASE = {
    "evaluate": ["{log}", "-k", "3", "--format", "json", "--quiet"],
    "compare": ["{log}", "--systems", "score,s2", "-k", "3", "--resamples", "50", "--format",
                "json", "--quiet"],
    "agreement": ["{qrels}", "{qrels_b}", "--format", "json"],
    "demo": ["--queries", "20", "--sample", "5", "--quiet"],
    "synth": ["--queries", "5", "--out", "{new.parquet}", "--quiet"],
    "warmup": ["--quiet", "--jobs", "1"],
}


def cli_options(command: str) -> dict:
    """option (or positional dest) -> the argparse action, from the parser itself."""
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    out = {}
    for action in sub.choices[command]._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        out[action.option_strings[-1] if action.option_strings else action.dest] = action
    return out


def _argv(command: str, replaced: dict, files: Files) -> list[str]:
    inputs = {"{log}": files.log, "{qrels}": files.qrels, "{qrels_b}": files.qrels_b}
    base = [files.path(a[1:-1]) if a.startswith("{new") else str(inputs.get(a, a))
            for a in CLI_BASE[command]]
    actions = cli_options(command)
    argv = list(base)
    for opt, value in replaced.items():
        action = actions[opt]
        if not action.option_strings:  # the positional inputs: replace the first
            argv = [value] + argv[1:] if command in ("evaluate", "compare", "agreement") else argv
            continue
        if opt in argv and action.nargs != 0:  # replace a base value
            argv[argv.index(opt) + 1] = value
        elif action.nargs == 0:
            argv.append(opt)
        else:
            argv += [opt, value] if not value.startswith("-") else [f"{opt}={value}"]
    return [command] + argv


def _cli_ok(command: str, argv: list, out: str, files: Files) -> None:
    """An exit 0: the answer must be right."""
    args = cli.build_parser().parse_args(argv)
    if command == "evaluate":
        assert Path(args.source[0]).resolve() == files.log.resolve(), f"accepted {args.source}"
        if args.qrels:  # the log's own labels as judgments: every row judged, same answer
            assert Path(args.qrels).resolve() == files.log.resolve(), f"accepted {args.qrels}"
        for bad in ("measure", "weight_col", "preset", "score_precision", "scheduler",
                    "workers"):
            assert not getattr(args, bad), f"accepted --{bad} {getattr(args, bad)!r}"
        kw = {"k": args.k}
        kw.update(given_kw(vars(args), "gain", "ties", "log_base", "zero_idcg", "nan_scores",
                           "negative_labels"))
        if args.format == "json":
            got = json.loads(out)
            for name, value in expected_means(kw).items():
                assert close(got[name], value), (argv, name, got[name], value)
    elif command == "compare":
        assert args.inputs == [str(files.log)] and args.systems == "score,s2", argv
        got = json.loads(out) if args.format == "json" else None
        if got is not None:
            for row in got["systems"]:
                assert close(row["mean"], expected_means({"k": args.k}, row["system"])[row["measure"]])
        assert 0 < args.confidence < 1, argv
    elif command == "agreement":
        assert args.sets == [str(files.qrels), str(files.qrels_b)], f"accepted {args.sets}"
        assert args.runs is None, f"accepted --runs {args.runs}"  # never two valid runs drawn
        # agreement has no flags for human_qrels, ppi, confidence (options.AGREEMENT_REFUSES)
        assert not any(hasattr(args, n) for n in ("human_qrels", "ppi", "confidence")), argv
        assert not args.measure, f"accepted --measure {args.measure!r}"
        if args.per_query:
            assert str(Path(args.per_query).resolve()).startswith(str(files.root)), argv
        if args.format == "json":
            got = json.loads(out)
            result = argparse.Namespace(names=got["names"], n_both=got["n_both"],
                                        n_only_a=got["n_only_a"], n_only_b=got["n_only_b"],
                                        values=got["values"],
                                        confusion=np.array(got["confusion"]),
                                        overall={s: got[s] for s in ("kappa", "kappa_linear",
                                                                     "kappa_quadratic")})
            check_agreement(result, TABLE, SET_B, ("qrels.txt", "qrels_b.txt"))
    elif command == "synth":
        table = pq.read_table(args.out)
        assert len(set(table["query_id"].to_pylist())) == args.queries, argv
        assert str(Path(args.out).resolve()).startswith(str(files.root)), argv


def _cli_names(opt: str, action, value: str) -> set:
    names = {opt}
    if action.dest:
        names.add(action.dest)
    if os.sep in value and len(value) > 2:  # a file named by its path
        names.add(value)
    if not action.option_strings:
        names |= {value, "input", "source", "log"} if value.strip() and len(value) > 2 else {"input", "source", "log"}
    return names


def _main(argv: list, files: Files) -> tuple[int, str, str]:
    """(status, stdout, stderr) of ``fastndcg ARGV`` run in this process, checked to
    leave every input file as it was and to print no traceback."""
    before = files.digests()
    out, err = io.StringIO(), io.StringIO()
    with no_hang(argv), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = cli.main(argv)
    out, err = out.getvalue(), err.getvalue()
    assert files.digests() == before, f"{argv} changed an input file"
    assert "Traceback" not in err, err
    return rc, out, err


def call_cli(command: str, replaced: dict, files: Files) -> None:
    replaced = {o: (files.path(v.kind) if isinstance(v, P) else v) for o, v in replaced.items()}
    argv = _argv(command, replaced, files)
    for opt in ("--queries", "--mean-docs", "--sample"):  # valid, but big work is not a hunt
        v = replaced.get(opt, "").strip().replace("_", "")
        assume(not (v.isdecimal() and int(v) > 5000))
    if command == "warmup":  # a real warm-up compiles everything: only refusals are drawn
        assume(any(o not in ("--quiet",) for o in replaced))
        jobs = replaced.get("--jobs", "1")
        assume(not (jobs.strip().isdigit() and "--portable" not in replaced))
    rc, out, err = _main(argv, files)
    if rc == 0:
        _cli_ok(command, argv, out, files)
        return
    assert out == "", f"{argv}: exit {rc} with stdout {out!r}"
    assert err.startswith("fastndcg: error: ") and err.count("\n") == 1, f"{argv}: {err!r}"
    actions = cli_options(command)
    names = set().union(*(_cli_names(o, actions[o], v) for o, v in replaced.items()))
    assert any(n in err for n in names), f"{argv}: names none of {sorted(names)}: {err!r}"


def _draw_cli(data, command: str) -> dict:
    actions = cli_options(command)
    chosen = data.draw(st.lists(st.sampled_from(sorted(actions)), min_size=1, max_size=2,
                                unique=True), label="options")
    return {o: ("" if actions[o].nargs == 0 else data.draw(CLI_HOSTILE, label=o)) for o in chosen}


@pytest.mark.parametrize("command", list(CLI_BASE))
@settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_cli_fuzz(command, files, data):
    call_cli(command, _draw_cli(data, command), files)


# --------------------------------------------------------------------------- coverage

def test_every_parameter_is_fuzzed():
    """Every parameter of every public function and every option of every subcommand
    is drawn by the fuzz: a new one fails here until it is."""
    public = set(fastndcg.__all__) - {"Report", "Comparison", "WarmupReport", "LabelSets",
                                      "Agreement", "RunidClash", "OptionError", "reference",
                                      "__version__"}
    assert public <= set(TARGETS), f"public functions not fuzzed: {public - set(TARGETS)}"
    for name in TARGETS:
        params = params_of(name)
        assert params, name
        # every parameter is a draw of _draw_params; a keyword-only parameter the
        # call cannot take would raise TypeError naming it, which the fuzz checks
        sig = inspect.signature(_function(name))
        named = {p for p in sig.parameters if p != "self"}
        assert named - {"options"} <= set(params), (name, named - set(params))
    compare_sig = set(inspect.signature(fastndcg.compare).parameters)
    evaluate_sig = set(inspect.signature(fastndcg.evaluate).parameters)
    forwarded = evaluate_sig - compare_sig - {"source", "explain", "per_query", "progress"}
    assert forwarded <= set(COMPARE_OPTIONS), forwarded - set(COMPARE_OPTIONS)
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    # trec_eval's own command line is fuzzed by test_trec_eval_command_fuzz
    assert set(sub.choices) == set(CLI_BASE) | {"trec_eval"}, \
        set(sub.choices) ^ (set(CLI_BASE) | {"trec_eval"})
    assert {o for o in TREC_EVAL_FLAGS} >= {f"-{c}" for c in "hvqmclnDJNMRTZo"}


# trec_eval's options (getopt "hvqmcl:nD:JN:M:R:T:oZ:"): those that take a value
TREC_EVAL_FLAGS = {"-h": False, "-v": False, "-q": False, "-m": True, "-c": False, "-l": True,
                   "-n": False, "-D": True, "-J": False, "-N": True, "-M": True, "-R": True,
                   "-T": True, "-o": False, "-Z": True}


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_trec_eval_command_fuzz(files, data):
    """``fastndcg trec_eval`` with hostile options on real-looking inputs: it prints
    trec_eval's output, or one line on stderr and a non-zero status; never a
    traceback, never output beside an error, never a changed input."""
    chosen = data.draw(st.lists(st.sampled_from(sorted(TREC_EVAL_FLAGS)), min_size=1,
                                max_size=3, unique=True), label="options")
    argv = ["trec_eval"]
    for flag in chosen:
        argv.append(flag)
        if TREC_EVAL_FLAGS[flag]:
            value = data.draw(CLI_HOSTILE, label=flag)
            argv.append(files.path(value.kind) if isinstance(value, P) else value)
    argv += [files.path("qrels"), files.path("run")]
    rc, out, err = _main(argv, files)
    if rc != 0:
        assert out == "", f"{argv}: exit {rc} with stdout {out!r}"
        assert err.startswith("fastndcg trec_eval: error: ") and err.count("\n") == 1, \
            f"{argv}: {err!r}"


@pytest.mark.heavy
@pytest.mark.skipif(profile() != "long",
                    reason="runs under the long hypothesis profile (HYPOTHESIS_PROFILE=long)")
@pytest.mark.parametrize("name", API_NAMES + [f"cli:{c}" for c in CLI_BASE])
def test_fuzz_long(name, files):
    @settings(max_examples=examples(0.2), deadline=None, suppress_health_check=list(HealthCheck))
    @given(data=st.data())
    def run(data):
        if name.startswith("cli:"):
            call_cli(name[4:], _draw_cli(data, name[4:]), files)
        else:
            _api_fuzz(name, files, data)
    run()
