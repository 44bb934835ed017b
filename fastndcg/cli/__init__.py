"""The ``fastndcg`` command line: ``evaluate``, ``compare``, ``agreement``,
``trec_eval``, ``demo``, ``warmup`` and ``synth``.

Bad input is one line on stderr (``fastndcg: error: ...``) and exit status 2 for a
usage error, 1 for bad data; never a traceback. Progress bars go to stderr only
when it is a terminal, and never with ``--quiet``.

One module a job: :mod:`~fastndcg.cli.parser` (the arguments; the evaluation
options' are generated from :mod:`fastndcg.options`),
:mod:`~fastndcg.cli.handlers` (``evaluate``, ``compare``, ``agreement``, ``synth``,
``warmup``),
:mod:`~fastndcg.cli.engines` (Dask and Spark), :mod:`~fastndcg.cli.demo` and
:mod:`~fastndcg.cli.trec_eval` (trec_eval's own command line). :func:`main` is
the entry point (the ``fastndcg`` command, ``python -m fastndcg``).
"""

from __future__ import annotations

import sys
import warnings
from typing import Sequence

from . import trec_eval

__all__ = ["main", "build_parser"]


def build_parser():
    """The ``fastndcg`` argument parser (:func:`fastndcg.cli.parser.build_parser`,
    imported when asked for: ``fastndcg trec_eval`` has a parser of its own).

    >>> build_parser().prog
    'fastndcg'
    """
    from .parser import build_parser as build

    return build()


def _handlers() -> dict:
    """subcommand -> its handler: parsed arguments in, exit status out."""
    from . import demo, handlers

    return {"evaluate": handlers.run_evaluate, "compare": handlers.run_compare,
            "agreement": handlers.run_agreement,
            "demo": demo.run, "synth": handlers.run_synth, "warmup": handlers.run_warmup}


def _one_line(show):
    """``warnings.showwarning`` that prints fastndcg's own warnings (a grade read as a
    preset's tool reads it, kernels compiled with the package that cannot serve this
    process) as one line on stderr, ``fastndcg: warning: ...``, and hands any other
    to ``show``."""
    from .._cache import PackageCacheWarning
    from ..presets import GradeWarning

    def one_line(message, category, filename, lineno, file=None, line=None):
        if issubclass(category, (GradeWarning, PackageCacheWarning)):
            from .parser import PROG  # (argparse: not imported by trec_eval's command)

            print(f"{PROG}: warning: {' '.join(str(message).split())}", file=sys.stderr)
        else:
            show(message, category, filename, lineno, file, line)
    return one_line


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``fastndcg`` command (``python -m fastndcg``): the exit
    status.

    Example
    -------
    >>> from fastndcg.cli import main
    >>> main(["evaluate", "missing.parquet"])                    # doctest: +SKIP
    fastndcg: error: input 'missing.parquet' does not exist; check the path
    2
    """
    import pyarrow as pa

    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["trec_eval"]:  # trec_eval's own command line, not argparse's
        with warnings.catch_warnings():
            warnings.showwarning = _one_line(warnings.showwarning)
            return trec_eval.run(argv[1:])
    from .._validate import OptionError
    from .parser import PROG, UsageError, as_flags, refuse_empty

    parser, command = build_parser(), None
    try:
        args = parser.parse_args(argv)
        command = args.command
        refuse_empty(args, parser)
        with warnings.catch_warnings():
            warnings.showwarning = _one_line(warnings.showwarning)
            return _handlers()[args.command](args)
    except (UsageError, OptionError) as err:
        usage = err if isinstance(err, UsageError) else UsageError.of(err)
        print(f"{PROG}: error: {usage.render(parser, command)}", file=sys.stderr)
        return 2
    except (ValueError, TypeError, OSError, pa.ArrowException) as err:
        message = " ".join(str(err).split()) or type(err).__name__
        print(f"{PROG}: error: {as_flags(message, parser, command)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
