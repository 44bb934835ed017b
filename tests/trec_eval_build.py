"""Building the real trec_eval from the vendored source in ``tests/trec_eval``, shared by
the tests' ``trec_eval_bin`` fixture (``tests/conftest.py``) and the benchmarks'
``trec_eval_binary`` fixture (``benchmarks/conftest.py``).

:func:`build_trec_eval` copies the source into a folder (so the repository stays
clean) and runs ``make`` there; it raises :class:`NoCompiler` when ``make`` or a C
compiler is missing (or cannot be run) and :class:`BuildFailed` when the build runs
but does not give a binary.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

TREC_EVAL_SRC = Path(__file__).resolve().parent / "trec_eval"
BUILD_TIMEOUT_S = 300


class NoCompiler(RuntimeError):
    """No ``make`` or C compiler to build trec_eval with; the message says which."""


class BuildFailed(RuntimeError):
    """``make`` ran but gave no trec_eval binary; the message holds its output's tail."""


def build_trec_eval(folder: Path) -> Path:
    """Build trec_eval from a copy of ``tests/trec_eval`` in ``folder``; its path."""
    missing = [tool for tool in ("make",) if shutil.which(tool) is None]
    if shutil.which("gcc") is None and shutil.which("cc") is None:
        missing.append("cc/gcc")
    if missing:
        raise NoCompiler(f"no C compiler: {', '.join(missing)} not found on PATH")
    build = Path(folder) / "trec_eval"
    # copyfile, not copy2: the source may be read-only and make writes into the folder
    shutil.copytree(TREC_EVAL_SRC, build, copy_function=shutil.copyfile)
    cmd = ["make", "-s", "trec_eval"]
    if shutil.which("gcc") is None:  # the Makefile says CC = gcc
        cmd.append("CC=cc")
    try:
        proc = subprocess.run(cmd, cwd=build, capture_output=True, text=True,
                              timeout=BUILD_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise BuildFailed(f"building trec_eval timed out after {BUILD_TIMEOUT_S} s") from None
    except OSError as exc:
        raise NoCompiler(f"no C compiler: could not run make ({exc})") from None
    binary = build / "trec_eval"
    if proc.returncode != 0 or not binary.is_file():
        tail = (proc.stderr or proc.stdout).strip()[-2000:]
        raise BuildFailed(f"building trec_eval failed (rc={proc.returncode}): {tail}")
    return binary
