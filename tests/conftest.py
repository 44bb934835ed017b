"""Shared pytest fixtures, and the hypothesis profiles.

Profiles (``HYPOTHESIS_PROFILE=NAME`` or ``--hypothesis-profile NAME``; ``dev`` when
neither is given) size every property test: a test asks for
``strategies.examples(scale)``, ``scale`` times the profile's ``max_examples``:

* ``dev`` -- 25 examples at scale 1: the default tier, ``python -m pytest``;
* ``ci`` -- 100 at scale 1: ``.ci/run`` runs the property tests again with it;
* ``long`` -- 1,000 at scale 1, and the long fuzzer's targets: a deep run by hand.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

from trec_eval_build import BuildFailed, NoCompiler, build_trec_eval

PROFILES = {"dev": 25, "ci": 100, "long": 1000}  # name -> max_examples at scale 1
for _name, _examples in PROFILES.items():
    settings.register_profile(_name, max_examples=_examples)
# --hypothesis-profile, read by hypothesis's pytest plugin after this, wins over this
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))


@pytest.hookimpl(tryfirst=True)  # before the root conftest.py skips the heavy tier
def pytest_collection_modifyitems(config, items):
    """A test that needs the real trec_eval (``trec_eval_bin``, built with ``make``) is
    in the heavy tier: the default tier checks against trec_eval's stored outputs."""
    for item in items:
        if "trec_eval_bin" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.heavy)


@pytest.fixture(scope="session")
def trec_eval_bin(tmp_path_factory) -> Path:
    """Path of the real trec_eval 10 binary, built from the vendored source in
    ``tests/trec_eval`` (a copy in a temporary folder, so the repository stays clean;
    ``tests/trec_eval_build.py``). Skips when there is no C compiler or ``make``, or
    the build fails."""
    try:
        return build_trec_eval(tmp_path_factory.mktemp("trec_eval_build"))
    except NoCompiler as err:
        pytest.skip(str(err))
    except BuildFailed as err:
        pytest.skip(f"no C compiler: {err}")


@pytest.fixture(scope="session", autouse=True)
def _compiled_kernels():
    """Every kernel variant in the compile cache before the first test, compiled by
    as many processes as there are cores (at most 2) when the cache is cold, as
    ``fastndcg warmup --jobs`` does in a cluster image: Numba compiles on one core,
    so a cold suite would otherwise compile every variant one after the other as
    tests reach them. With a warm cache this loads them (about a second). Tests of
    compiling itself use caches of their own."""
    import fastndcg
    from fastndcg._cache import cache_enabled
    if not cache_enabled():  # FASTNDCG_CACHE=0: nothing to warm
        return
    fastndcg.warmup(jobs=max(1, min(2, os.cpu_count() or 1)))


@pytest.fixture(scope="session")
def dask_client():
    """One real ``distributed.LocalCluster`` of two worker processes (one thread
    each) for the whole session, shared by every module that checks an answer on
    Dask: the tasks are pickled and run in other processes, as on a real cluster.
    Tests that kill workers or need another shape start clusters of their own."""
    distributed = pytest.importorskip("distributed", reason="pip install 'fastndcg[dask]'")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None)
    client = distributed.Client(cluster)
    try:
        client.wait_for_workers(2, timeout=60)
        yield client
    finally:
        client.close()
        cluster.close()


@pytest.fixture(scope="session")
def spark():
    """One local Spark session for the whole session (a JVM starts once):
    ``local[2, 3]`` (two cores, three attempts a task), Arrow batches of 7 rows so
    queries straddle them, 3 shuffle partitions. Skips where Java or pyspark is
    missing."""
    import shutil
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("Spark needs a Java runtime, and none is installed")
    pytest.importorskip("pyspark", reason="pip install 'fastndcg[spark]'")
    import sys

    from pyspark.sql import SparkSession
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    session = (SparkSession.builder.master("local[2, 3]")  # 3 attempts a task
               .appName("fastndcg-tests")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", "3")
               .config("spark.sql.execution.arrow.maxRecordsPerBatch", "7")  # queries straddle
               .config("spark.driver.memory", "1g")
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
