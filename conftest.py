"""The two tiers of the suite.

``python -m pytest`` (the README's test command) runs the default tier: every
module's behaviour, in minutes. The heavy tier is the tests marked ``heavy`` under
``tests/`` (real process clusters, killed workers, compiling from empty caches in
several processes, the warm-up's reach, simulations, the trec_eval build, the long
fuzzer) and the benchmarks at quick size (``benchmarks/``). ``--heavy`` or
``FASTNDCG_HEAVY=1`` runs both tiers; alone, the heavy tier is
``FASTNDCG_HEAVY=1 python -m pytest -m heavy`` (the tests) and
``python -m pytest benchmarks`` (the benchmarks, which run whenever they are named).
``.ci/run`` runs both tiers. Benchmarks keep their own rule for the ones marked heavy
(``benchmarks/conftest.py``: full sizes only).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent
TESTS = ROOT / "tests"
BENCHMARKS = ROOT / "benchmarks"


def pytest_addoption(parser):
    parser.addoption("--heavy", action="store_true", default=False,
                     help="also run the heavy tier: the tests marked heavy and the "
                          "benchmarks at quick size (as FASTNDCG_HEAVY=1 does)")


def heavy_wanted(config) -> bool:
    """Whether this run includes the heavy tier (``--heavy`` or FASTNDCG_HEAVY=1)."""
    return bool(config.getoption("--heavy")) or \
        os.environ.get("FASTNDCG_HEAVY", "").strip().lower() not in ("", "0", "false", "no")


def pytest_collection_modifyitems(config, items):
    if heavy_wanted(config):
        return
    if config.args_source == pytest.Config.ArgsSource.TESTPATHS:
        # the run names no paths (pyproject.toml's testpaths): the benchmarks belong to
        # the heavy tier; named on the command line, they always run
        benchmarks = [item for item in items if BENCHMARKS in Path(item.path).parents]
        if benchmarks:
            config.hook.pytest_deselected(items=benchmarks)
            items[:] = [item for item in items if BENCHMARKS not in Path(item.path).parents]
    skip = pytest.mark.skip(reason="heavy tier: runs with --heavy or FASTNDCG_HEAVY=1")
    for item in items:
        if item.get_closest_marker("heavy") is not None and TESTS in Path(item.path).parents:
            item.add_marker(skip)
