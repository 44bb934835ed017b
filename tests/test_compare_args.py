"""Every argument of a comparison is checked before any work starts, on every engine.

``fastndcg.compare`` (one machine), ``fastndcg.dask.compare`` and
``fastndcg.spark.compare`` share one check of their arguments
(:func:`fastndcg._compare.arguments.settings`, which refuses keywords with
:func:`fastndcg._validate.keywords`). What is checked, on each engine:

* an unknown keyword (a typo such as ``n_resample=``) is a TypeError naming the
  keyword and the function, with the closest name it takes;
* an argument of another engine (``workers=`` given to ``fastndcg.compare`` or to
  ``fastndcg.spark.compare``, ``order=`` to ``fastndcg.dask.compare``) says which
  engine takes it;
* every kind of bad value (``batch_rows``, ``n_resamples``, ``confidence``,
  ``buckets``, ``seed``, ``method``, ``correction``, ``tests``, ``k``) is refused
  with a message naming the argument, the value and a fix, the same text on every
  engine.

Each engine's ways of starting work (reading the log on one machine, reaching or
starting a Dask cluster, getting a Spark session) are replaced by a failure, so a
refusal that comes late fails the test. No cluster or Spark session is started:
Java is not needed.
"""

from __future__ import annotations

import importlib
import inspect
import re

import numpy as np
import pyarrow as pa
import pytest

import fastndcg
from fastndcg._compare import arguments, run as frun, values as fvalues

SYSTEMS = ["score_a", "score_b"]
ENGINES = ("fastndcg.compare", "fastndcg.dask.compare", "fastndcg.spark.compare")


class Engine:
    def __init__(self, where: str, fn, source):
        self.where, self.fn, self.source = where, fn, source

    def __call__(self, **kwargs):
        return self.fn(self.source, SYSTEMS, **kwargs)


def _started(where: str):
    def fail(*args, **kwargs):
        raise AssertionError(f"{where} started work before its arguments were checked")
    return fail


def _engine(where: str, monkeypatch, tmp_path) -> Engine:
    """``where``'s compare, with every way it starts work replaced by a failure."""
    fail = _started(where)
    source = str(tmp_path / "never-read.parquet")  # reading it would fail too
    if where == "fastndcg.compare":
        monkeypatch.setattr(frun, "streamed", fail)      # the streamed pass over the log
        monkeypatch.setattr(frun, "check_log", fail)     # the query-by-query path: the log,
        monkeypatch.setattr(frun, "read_values", fail)   # the values
        monkeypatch.setattr(fvalues, "evaluate", fail)
        return Engine(where, fastndcg.compare, source)
    if where == "fastndcg.dask.compare":
        pytest.importorskip("distributed", reason="pip install 'fastndcg[dask]'")
        fdask = importlib.import_module("fastndcg.dask")
        monkeypatch.setattr(fdask, "_client", fail)   # the client given, current or new
        monkeypatch.setattr(fdask, "_warm", fail)
        monkeypatch.setattr(fdask, "_pieces_of", fail)
        return Engine(where, fdask.compare, source)
    pytest.importorskip("pyspark", reason="pip install 'fastndcg[spark]'")
    fspark = importlib.import_module("fastndcg.spark")
    monkeypatch.setattr(fspark, "_session", fail)     # the session given or active
    monkeypatch.setattr(fspark, "_read_paired", fail)
    monkeypatch.setattr(fspark, "_shuffle_paired", fail)
    return Engine(where, fspark.compare, source)


@pytest.fixture(params=ENGINES)
def engine(request, monkeypatch, tmp_path) -> Engine:
    return _engine(request.param, monkeypatch, tmp_path)


def esc(text: str) -> str:
    return re.escape(text)


# --------------------------------------------------------------------------- keywords

@pytest.mark.parametrize("typo, meant", [("n_resample", "n_resamples"),
                                         ("N_RESAMPLES", "n_resamples"),
                                         ("confidance", "confidence"),
                                         ("basline", "baseline"),
                                         ("zero_idgc", "zero_idcg"),
                                         ("batch_row", "batch_rows")])
def test_unknown_keyword_is_named_with_the_closest(engine, typo, meant):
    with pytest.raises(TypeError, match=f"^{esc(engine.where)}\\(\\) got an unknown keyword "
                                        f"argument {esc(repr(typo))}; did you mean "
                                        f"{esc(repr(meant))}\\?$"):
        engine(**{typo: 50})


def test_unknown_keyword_without_a_close_name(engine):
    with pytest.raises(TypeError, match=f"^{esc(engine.where)}\\(\\) got an unknown keyword "
                                        f"argument 'zz'; see help\\({esc(engine.where)}\\)"):
        engine(zz=1)


def test_where_is_not_a_keyword_of_compare(engine):
    """The engine is passed to the shared check positionally: ``where=`` from a
    caller is an unknown keyword like any other, not a clash."""
    with pytest.raises(TypeError, match=f"^{esc(engine.where)}\\(\\) got an unknown keyword "
                                        f"argument 'where'"):
        engine(where="fastndcg.compare")


ELSEWHERE = [("workers", 2, "fastndcg.dask.compare"),
             ("client", None, "fastndcg.dask.compare"),
             ("partition_rows", 1000, "fastndcg.dask.compare"),
             ("spark", None, "fastndcg.spark.compare"),
             ("order", "pos", "fastndcg.spark.compare"),
             ("partitions", 4, "fastndcg.spark.compare")]
MISPLACED = [(where, name, value, owner) for where in ENGINES
             for name, value, owner in ELSEWHERE if where != owner]


@pytest.mark.parametrize("where, name, value, owner", MISPLACED,
                         ids=[f"{w.split('.')[-2]}-{n}" for w, n, _, _ in MISPLACED])
def test_argument_of_another_engine_says_where_it_belongs(monkeypatch, tmp_path, where, name,
                                                          value, owner):
    engine = _engine(where, monkeypatch, tmp_path)
    with pytest.raises(TypeError, match=f"^{esc(where)}\\(\\) does not take {name}=: "
                                        f"it is an argument of {esc(owner)}\\(\\) \\(.+\\); "
                                        f"drop it here, or call {esc(owner)}\\(\\) to run "
                                        f"there$"):
        engine(**{name: value})


def test_typo_of_another_engines_argument(engine):
    if engine.where == "fastndcg.dask.compare":  # it takes workers=: the plain suggestion
        with pytest.raises(TypeError, match=r"unknown keyword argument 'worker'; did you mean "
                                            r"'workers'\?$"):
            engine(worker=2)
        return
    with pytest.raises(TypeError, match=f"^{esc(engine.where)}\\(\\) got an unknown keyword "
                                        f"argument 'worker'; did you mean 'workers'\\? "
                                        f"{esc(engine.where)}\\(\\) does not take it either: "
                                        f"it is an argument of fastndcg.dask.compare\\(\\)"):
        engine(worker=2)


@pytest.mark.parametrize("name, why", [("score", "systems= names the score columns"),
                                       ("per_query", "kept in Comparison.per_query"),
                                       ("weight", "weighted comparisons are not supported")])
def test_evaluation_option_compare_does_not_take_names_the_function(engine, name, why):
    with pytest.raises(TypeError, match=f"^{esc(engine.where)}\\(\\) does not take {name}=: "
                                        f".*{why}"):
        engine(**{name: "x"})


def test_the_keyword_check_knows_every_engines_signature():
    """Every keyword an engine's compare takes is one its check knows, and each
    engine-only argument is taken by its engine and by no other: the table that
    says where an argument belongs is the engines' real signatures."""
    pytest.importorskip("distributed")
    pytest.importorskip("pyspark")
    fns = {"fastndcg.compare": fastndcg.compare,
           "fastndcg.dask.compare": importlib.import_module("fastndcg.dask").compare,
           "fastndcg.spark.compare": importlib.import_module("fastndcg.spark").compare}
    assert set(arguments.ENGINES) == set(fns)
    for where, fn in fns.items():
        takes = {p.name for p in inspect.signature(fn).parameters.values()
                 if p.kind is p.KEYWORD_ONLY}
        arguments.check_keywords(where, takes)  # (raises on a name it does not know)
        for name, (owner, _) in arguments.ENGINE_ARGUMENTS.items():
            assert (name in takes) == (owner == where), (where, name)
        assert set(arguments.RUN_ARGUMENTS) <= takes, where
    # compare's keywords are those the shared check validates, and the engines' own
    checked = [p.name for p in inspect.signature(arguments.settings).parameters.values()
               if p.kind is p.KEYWORD_ONLY]
    own = [p.name for p in inspect.signature(fastndcg.compare).parameters.values()
           if p.kind is p.KEYWORD_ONLY]
    assert own == checked + list(arguments.RUN_ARGUMENTS)


# --------------------------------------------------------------------------- values

BAD_VALUES = [
    # (argument, value, error, the message: the argument, the value and a fix)
    ("batch_rows", 0, ValueError, r"^batch_rows must be >= 1, got 0; rows read at once; the "
                                  r"default 1048576"),
    ("batch_rows", -1, ValueError, r"^batch_rows must be >= 1, got -1; rows read at once"),
    ("batch_rows", "x", TypeError, r"^batch_rows must be an int >= 1, got 'x' \(str\)"),
    ("batch_rows", 2.5, TypeError, r"^batch_rows must be an int >= 1, got 2.5 \(float\)"),
    ("n_resamples", 0, ValueError, r"^n_resamples must be a whole number >= 1, got 0; the "
                                   r"default 10000 suits most comparisons"),
    ("n_resamples", "many", ValueError, r"^n_resamples must be a whole number >= 1, got "
                                        r"'many'; the default 10000"),
    ("confidence", 1.5, ValueError, r"^confidence must be a number between 0 and 1 "
                                    r"\(exclusive\), e\.g\. 0\.95; got 1\.5$"),
    ("buckets", 0, ValueError, r"^buckets must be a whole number from 2 to 1048576 \(hashed "
                               r"buckets .*default 1,000\), got 0$"),
    ("seed", "a", ValueError, r"^seed must be a whole number in \[0, 2\*\*64\), got 'a'; pass "
                              r"an int such as seed=0"),
    ("method", "x", ValueError, r"^method must be one of 'auto', 'queries', 'buckets'; got "
                                r"'x'$"),
    ("correction", "x", ValueError, r"^correction must be one of 'holm', 'bonferroni', 'bh', "
                                    r"'none'; got 'x'$"),
    ("tests", "x", ValueError, r"^tests must be one of 'randomization', 't', 'wilcoxon'; got "
                               r"'x'$"),
    ("k", 0, ValueError, r"^k must be >= 1, got 0; pass a positive cutoff such as k=10"),
]


@pytest.mark.parametrize("name, value, error, match", BAD_VALUES,
                         ids=[f"{n}={v!r}" for n, v, _, _ in BAD_VALUES])
def test_bad_value_is_refused_before_any_work(engine, name, value, error, match):
    with pytest.raises(error, match=match) as info:
        engine(**{name: value})
    text = str(info.value)
    assert "Arrow" not in text and "_Settings" not in text and "Options" not in text


@pytest.mark.parametrize("name, value, error, match", BAD_VALUES[:3] + BAD_VALUES[4:5],
                         ids=["batch_rows=0", "batch_rows=-1", "batch_rows='x'",
                              "n_resamples=0"])
def test_the_same_refusal_on_every_engine(monkeypatch, tmp_path, name, value, error, match):
    """One validator: the very same text on every engine (those installed)."""
    texts = set()
    for where in ENGINES:
        try:
            run = _engine(where, monkeypatch, tmp_path)
        except pytest.skip.Exception:
            continue
        with pytest.raises(error, match=match) as info:
            run(**{name: value})
        texts.add(str(info.value))
    assert len(texts) == 1, texts


# --------------------------------------------------------------------------- still accepted

def test_evaluation_options_and_batch_rows_are_still_taken():
    """The check refuses only what no engine takes: evaluation options, batch_rows
    among them, still reach the comparison (one machine, a tiny log)."""
    log = pa.table({"query_id": [1, 1, 1, 2, 2, 2, 3, 3, 3],
                    "score_a": [3.0, 2, 1, 3, 2, 1, 3, 2, 1],
                    "score_b": [1.0, 2, 3, 1, 2, 3, 3, 1, 2],
                    "label": [0, 1, 2, 0, 0, 1, 1, 0, 0]})
    want = fastndcg.compare(log, SYSTEMS, k=3, n_resamples=50, gain="linear")
    got = fastndcg.compare(log, SYSTEMS, k=3, n_resamples=50, gain="linear", batch_rows=2,
                           ties="average", zero_idcg="zero", query="query_id")
    assert got.tests.equals(want.tests) and got.systems.equals(want.systems)
    # NumPy's numbers are numbers (a float32 confidence was refused)
    again = fastndcg.compare(log, SYSTEMS, k=3, n_resamples=np.int64(50), gain="linear",
                             confidence=np.float32(0.95), seed=np.uint64(0))
    assert again.confidence == pytest.approx(0.95)
    assert again.systems.column("mean").equals(want.systems.column("mean"))
    assert again.tests.column("p_t").equals(want.tests.column("p_t"))
