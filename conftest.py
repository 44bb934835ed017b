"""The two tiers of the suite.

``python -m pytest`` (the README's test command) runs the default tier: every
module's behaviour, in minutes. Tests marked ``heavy`` under ``tests/`` (a Spark
worker killed mid-run, compiling from empty caches in several processes, the warm-up's reach, simulations, the trec_eval matrix of every real
run) are skipped there and run with ``--heavy`` or ``FASTNDCG_HEAVY=1``
(``FASTNDCG_HEAVY=1 python -m pytest -m heavy``: that tier alone). ``.ci/run`` runs
both. Benchmarks keep their own rule (``benchmarks/conftest.py``).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent / "tests"


def pytest_addoption(parser):
    parser.addoption("--heavy", action="store_true", default=False,
                     help="also run the tests marked heavy (as FASTNDCG_HEAVY=1 does)")


def heavy_wanted(config) -> bool:
    """Whether this run includes the heavy tier (``--heavy`` or FASTNDCG_HEAVY=1)."""
    return bool(config.getoption("--heavy")) or \
        os.environ.get("FASTNDCG_HEAVY", "").strip().lower() not in ("", "0", "false", "no")


def pytest_collection_modifyitems(config, items):
    if heavy_wanted(config):
        return
    skip = pytest.mark.skip(reason="heavy tier: runs with --heavy or FASTNDCG_HEAVY=1")
    for item in items:
        if item.get_closest_marker("heavy") is not None and TESTS in Path(item.path).parents:
            item.add_marker(skip)
