"""Fresh processes for the start-up benchmarks and ``scripts/bench_scale.py``.

Children import the same ``fastndcg`` as the process that starts them
(:func:`child_env` puts its folder first on ``PYTHONPATH``), and share its
compile cache (``FASTNDCG_CACHE_DIR`` and friends are inherited).

* :func:`cli_command` -- the installed ``fastndcg`` script beside this
  interpreter (what a user runs), else ``python -m fastndcg``;
* :func:`run_timed` -- run a command, (wall seconds, stdout), an error on failure;
* :func:`run_json` -- run a command whose last stdout line is JSON, (wall, object);
* :func:`run_peak_rss` -- the same with the command's peak resident memory;
* :func:`check_json` -- the command line's ``--format json`` output checked;
* :func:`trec_eval_build` -- ``tests/trec_eval_build.py``, which builds the real
  trec_eval from the vendored source (the tests' ``trec_eval_bin`` uses it too);
* :func:`trec_eval_means` -- the ``all`` lines of trec_eval's output, run by run.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import fastndcg

PACKAGE_ROOT = str(Path(fastndcg.__file__).resolve().parent.parent)
REPO = Path(__file__).resolve().parent.parent  # this checkout (benchmarks/, tests/)


def child_env(**extra: str) -> dict:
    """This process' environment, with fastndcg's folder first on ``PYTHONPATH``."""
    env = dict(os.environ)
    path = env.get("PYTHONPATH", "")
    env["PYTHONPATH"] = PACKAGE_ROOT + (os.pathsep + path if path else "")
    env.update(extra)
    return env


def cli_command() -> tuple[list[str], str]:
    """The installed ``fastndcg`` script beside this interpreter, else ``python -m``."""
    folder = os.path.dirname(sys.executable)
    for name in ("fastndcg", "fastndcg.exe"):
        path = os.path.join(folder, name)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return [path], "fastndcg"
    return [sys.executable, "-m", "fastndcg"], "python -m fastndcg"


def python_command(code: str) -> list[str]:
    """``python -c code`` with this interpreter."""
    return [sys.executable, "-c", code]


def run_timed(cmd: list[str], env: dict | None = None) -> tuple[float, str]:
    """Run ``cmd``; (wall seconds, process start included, stdout). Fails loudly."""
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True,
                          env=child_env() if env is None else env)
    wall = time.perf_counter() - t0
    if proc.returncode:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return wall, proc.stdout


def last_json(stdout: str) -> dict:
    """The JSON object on the last non-empty line of ``stdout``."""
    return json.loads(stdout.strip().splitlines()[-1])


def run_json(cmd: list[str], env: dict | None = None) -> tuple[float, dict]:
    """Run ``cmd`` (its last stdout line is JSON); (wall seconds, that object)."""
    wall, out = run_timed(cmd, env)
    return wall, last_json(out)


# Runs the command as its own child and reports that child's peak RSS. A child forked
# straight from a large process would not do: Linux folds the RSS of the memory image
# that exec replaces (a copy of, or with vfork this very, process) into the child's
# ru_maxrss. This small interpreter (-I -S: no site imports, ~10 MB) is the one that
# forks, so what it reports is the command's own peak.
RSS_PROBE = (
    "import resource, subprocess, sys\n"
    "rc = subprocess.call(sys.argv[1:])\n"
    "sys.stderr.write('\\nmaxrss=%d\\n' % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    "sys.exit(rc)\n")


def run_peak_rss(cmd: list[str], env: dict | None = None) -> tuple[int | None, float, str]:
    """Run ``cmd``; (its peak resident memory in bytes or None, wall seconds, stdout)."""
    if importlib.util.find_spec("resource") is None:  # not POSIX
        wall, out = run_timed(cmd, env)
        return None, wall, out
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-I", "-S", "-c", RSS_PROBE, *cmd],
                          capture_output=True, text=True,
                          env=child_env() if env is None else env)
    wall = time.perf_counter() - t0
    if proc.returncode:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    marker = proc.stderr.rstrip().rsplit("\n", 1)[-1]
    assert marker.startswith("maxrss="), proc.stderr
    scale = 1 if sys.platform == "darwin" else 1024  # macOS: bytes; Linux: KiB
    return int(marker.split("=")[1]) * scale, wall, proc.stdout


def check_json(stdout: str, n_rows: int, mean: dict | None = None, tol: float = 1e-12) -> dict:
    """The command line's ``--format json`` object: ``n_rows`` rows and, if given,
    the means to ``tol``."""
    out = last_json(stdout)
    assert out["n_rows"] == n_rows, (out["n_rows"], n_rows)
    if mean is not None:
        for name, value in mean.items():
            assert abs(out[name] - value) <= tol, (name, out[name], value)
    return out


def trec_eval_build():
    """The module ``tests/trec_eval_build.py`` (``build_trec_eval``, ``NoCompiler``,
    ``BuildFailed``), imported from its file: ``tests/`` is not a package. The one
    already imported by the tests is reused, so both see the same classes."""
    module = sys.modules.get("trec_eval_build")
    if module is None:
        spec = importlib.util.spec_from_file_location(
            "trec_eval_build", REPO / "tests" / "trec_eval_build.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules["trec_eval_build"] = module
        spec.loader.exec_module(module)
    return module


def trec_eval_means(stdout: str) -> list[dict]:
    """trec_eval's ``measure  all  value`` lines as one dict a run, in the order
    printed (a run's block ends where a measure comes again): ``ndcg_cut_10`` ->
    ``ndcg@10``, other names as printed."""
    runs: list[dict] = []
    for line in stdout.splitlines():
        fields = line.split()
        if len(fields) != 3 or fields[1] != "all":
            continue
        name = fields[0]
        if name.startswith("ndcg_cut_"):
            name = "ndcg@" + name.rsplit("_", 1)[1]
        if not runs or name in runs[-1]:
            runs.append({})
        runs[-1][name] = float(fields[2])
    return runs
