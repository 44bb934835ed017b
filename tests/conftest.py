"""Shared pytest fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest

from trec_eval_build import BuildFailed, NoCompiler, build_trec_eval


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
