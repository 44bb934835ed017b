"""The ``fastndcg`` command run inside the test process.

:func:`run` calls :func:`fastndcg.cli.main` as the console script does, with stdin,
stdout and stderr in memory, and answers what :func:`subprocess.run` with
``capture_output=True, text=True`` answers for a real process: a
:class:`subprocess.CompletedProcess` with the exit status (``SystemExit`` as the
interpreter turns it into one; an exception that escapes ``main`` as its traceback
on stderr and status 1), stdout and stderr. It saves the start of an interpreter
(about a second) a case, so the command line's error matrices run in-process
(:func:`run_many`); a few real-process cases in ``tests/test_cli.py`` keep the
command itself covered (exit codes, one stderr line).
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import subprocess
import sys
import traceback
import warnings
from concurrent.futures import ThreadPoolExecutor
from typing import Iterator, Mapping, Sequence


def run(args: Sequence[object], *, input: str | bytes | None = None, cwd=None,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None) -> subprocess.CompletedProcess:
    """``fastndcg ARGS`` in this process.

    ``input`` is stdin (empty when ``None``, as ``< /dev/null``); ``cwd`` the working
    directory and ``env`` variables set, both for the call only (``env`` adds to the
    environment rather than replacing it). A call still running after ``timeout``
    seconds is stopped with :class:`subprocess.TimeoutExpired`, as ``subprocess.run``
    does (on the main thread of a POSIX process).

    >>> out = run(["demo", "--help"])
    >>> out.returncode, out.stdout.startswith("usage: fastndcg demo"), out.stderr
    (0, True, '')
    """
    from fastndcg import cli

    argv = [str(a) for a in args]
    stdin = _stream(input.encode() if isinstance(input, str) else (input or b""))
    stdout, stderr = _stream(), _stream(errors="backslashreplace")  # as Python's own
    with _process_state(stdin, stdout, stderr, cwd, env), _deadline(argv, timeout):
        try:
            code = cli.main(argv)
        except SystemExit as exit_:
            code = _exit_status(exit_.code)
        except Exception:  # what the interpreter would print before exiting 1
            traceback.print_exc()
            code = 1
    return subprocess.CompletedProcess(["fastndcg", *argv], code, _text(stdout), _text(stderr))


class _Hung(BaseException):
    """Raised in a call that outlives its timeout (no ``except Exception`` stops it)."""


@contextlib.contextmanager
def _deadline(argv: list, timeout: float | None) -> Iterator[None]:
    if timeout is None or not hasattr(signal, "setitimer"):
        yield
        return

    def hung(signum, frame):
        raise _Hung

    previous = signal.signal(signal.SIGALRM, hung)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        yield
    except _Hung:
        raise subprocess.TimeoutExpired(["fastndcg", *argv], timeout) from None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def run_many(cases: Mapping[str, Sequence[object]], *, cwd=None,
             timeout: float | None = None) -> dict[str, subprocess.CompletedProcess | None]:
    """Each case's arguments run as :func:`run` runs them, but the cases that reach for
    a Dask scheduler (``--scheduler``: an unreachable one is only known after its
    connection timeout, 10 s), which run meanwhile in real processes of their own.
    A case that outlives ``timeout`` seconds answers None."""
    def process(args):
        try:
            return subprocess.run([sys.executable, "-m", "fastndcg", *map(str, args)],
                                  cwd=cwd, capture_output=True, text=True, timeout=timeout,
                                  errors="replace")
        except subprocess.TimeoutExpired:
            return None

    def here(args):
        try:
            return run(args, cwd=cwd, timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    waits = {name for name, args in cases.items() if "--scheduler" in map(str, args)}
    with ThreadPoolExecutor(2) as pool:
        waiting = {name: pool.submit(process, cases[name]) for name in waits}
        done = {name: here(args) for name, args in cases.items() if name not in waits}
        done |= {name: future.result() for name, future in waiting.items()}
    return {name: done[name] for name in cases}


def _stream(data: bytes = b"", errors: str = "strict") -> io.TextIOWrapper:
    """A text stream over bytes, with the ``buffer`` a real standard stream has."""
    return io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors=errors, newline="\n",
                            write_through=True)


def _text(stream: io.TextIOWrapper) -> str:
    stream.flush()
    return stream.buffer.getvalue().decode("utf-8", errors="replace")


def _exit_status(code) -> int:
    """The status ``sys.exit(code)`` gives a process (a message is printed, status 1)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


@contextlib.contextmanager
def _process_state(stdin, stdout, stderr, cwd, env) -> Iterator[None]:
    """The standard streams, the working directory, the environment and the warning
    filters of a fresh interpreter, put back afterwards."""
    saved_streams = sys.stdin, sys.stdout, sys.stderr
    saved_cwd = os.getcwd()
    saved_env = {name: os.environ.get(name) for name in (env or {})}
    with warnings.catch_warnings():
        # a fresh interpreter's filters (DeprecationWarning and the like hidden), each
        # warning printed once to stderr instead of being recorded by pytest
        warnings.resetwarnings()
        warnings.simplefilter("default")
        for category in (DeprecationWarning, PendingDeprecationWarning, ImportWarning,
                         ResourceWarning):
            warnings.simplefilter("ignore", category)
        warnings.showwarning = _print_warning
        try:
            sys.stdin, sys.stdout, sys.stderr = stdin, stdout, stderr
            os.environ.update(env or {})
            if cwd is not None:
                os.chdir(cwd)
            yield
        finally:
            sys.stdin, sys.stdout, sys.stderr = saved_streams
            os.chdir(saved_cwd)
            for name, value in saved_env.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value


def _print_warning(message, category, filename, lineno, file=None, line=None) -> None:
    sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))
