"""Shared pytest fixtures."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

TREC_EVAL_SRC = Path(__file__).parent / "trec_eval"


@pytest.fixture(scope="session")
def trec_eval_bin(tmp_path_factory) -> Path:
    """Path of the real trec_eval 10 binary, built from the vendored source in
    ``tests/trec_eval`` (a copy in a temporary folder, so the repository stays clean).
    Skips when there is no C compiler or ``make``, or the build fails."""
    missing = [tool for tool in ("make",) if shutil.which(tool) is None]
    if shutil.which("gcc") is None and shutil.which("cc") is None:
        missing.append("cc/gcc")
    if missing:
        pytest.skip(f"no C compiler: {', '.join(missing)} not found on PATH")
    build = tmp_path_factory.mktemp("trec_eval_build") / "trec_eval"
    # copyfile, not copy2: the source may be read-only and make writes into the folder
    shutil.copytree(TREC_EVAL_SRC, build, copy_function=shutil.copyfile)
    cmd = ["make", "-s", "trec_eval"]
    if shutil.which("gcc") is None:  # the Makefile says CC = gcc
        cmd.append("CC=cc")
    try:
        proc = subprocess.run(cmd, cwd=build, capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        pytest.skip("no C compiler: building trec_eval timed out after 300 s")
    except OSError as exc:
        pytest.skip(f"no C compiler: could not run make ({exc})")
    binary = build / "trec_eval"
    if proc.returncode != 0 or not binary.is_file():
        tail = (proc.stderr or proc.stdout).strip()[-2000:]
        pytest.skip(f"no C compiler: building trec_eval failed (rc={proc.returncode}): {tail}")
    return binary
