"""``fastndcg trec_eval``: trec_eval's own command line (getopt's, not argparse's),
handed whole to :func:`fastndcg.treceval.main`, which prints trec_eval's output
byte for byte. The parser lists the subcommand for ``--help`` only."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # (argparse itself is not imported by trec_eval's command)
    import argparse

HELP = ("trec_eval's command line (trec_eval [-q] [-c] [-m MEASURE]... QRELS RUN), its output "
        "byte for byte; fastndcg trec_eval -h for more")


def add_parser(sub: argparse._SubParsersAction) -> None:
    """The subcommand's line in ``fastndcg --help`` (its arguments are its own)."""
    sub.add_parser("trec_eval", add_help=False, help=HELP)


def run(argv: list[str]) -> int:
    """``fastndcg trec_eval ARGV``: the exit status."""
    from ..treceval import main
    return main(argv)
