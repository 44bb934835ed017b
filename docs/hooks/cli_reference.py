"""The command-line reference, generated from fastndcg's argument parser.

``render()`` walks the parser of ``fastndcg.cli`` (every subcommand, every
argument: its flags, value, choices, default and help text) and writes Markdown.
As a MkDocs hook (``hooks:`` in mkdocs.yml) it replaces the line
``<!-- cli-reference -->`` of a page with that Markdown when the site is built, so
the page cannot drift from the parser. Each argument gets an anchor
``<subcommand>-<flag>`` (``evaluate-per-query``, ``compare-inputs``). The parser's
texts are plain text, written so that Markdown shows them as they are (``[-c]``
is not a link); ``trec_eval``, which reads its own arguments, shows its own help.
"""

from __future__ import annotations

import argparse
import html
import os
import re
import sys
import textwrap

MARKER = "<!-- cli-reference -->"


def parser() -> argparse.ArgumentParser:
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if root not in sys.path:  # the checkout's fastndcg, installed or not
        sys.path.insert(0, root)
    from fastndcg.cli import build_parser
    return build_parser()


def subcommands(root: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """Subcommand name -> its parser, in the order they were added."""
    for action in root._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def documented(root: argparse.ArgumentParser):
    """(subcommand, action) for every argument the page documents (help excepted)."""
    for name, sub in subcommands(root).items():
        for action in sub._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            yield name, action


def anchor(command: str, action: argparse.Action) -> str:
    flag = max(action.option_strings, key=len) if action.option_strings else action.dest
    return f"{command}-{flag.lstrip('-')}"


# Characters Markdown would read in the parser's plain text: ``[-q] [-c]`` is a
# reference link to ``-c`` (mkdocs-autorefs fails the strict build on it), ``*`` and
# ``_`` emphasis, a backquote a code span. A backslash makes each one a literal.
_MARKDOWN = re.compile(r"([\\`*_\[\]])")


def _text(text: str) -> str:
    """Plain text as Markdown that shows it as it is."""
    return _MARKDOWN.sub(r"\\\1", html.escape(" ".join(str(text).split()), quote=False))


def _cell(text: str) -> str:
    return _text(text).replace("|", "&#124;")


def _code(text: str) -> str:
    return "<code>" + _cell(text) + "</code>"


def _value(action: argparse.Action) -> str:
    if action.nargs == 0:
        return "(a flag)"
    metavar = action.metavar or (action.dest.upper() if action.option_strings else action.dest)
    if action.choices is not None and not isinstance(action, argparse._SubParsersAction):
        values = ", ".join(_code(c) for c in action.choices)
        return f"one of {values}"
    text = _code(metavar)
    if action.nargs == "?":
        text += f" (optional; {_code(action.const)} when the flag is given alone)"
    elif action.nargs in ("+", "*"):
        text += " (one or more)" if action.nargs == "+" else " (any number)"
    if isinstance(action, argparse._AppendAction):
        text += " (repeatable)"
    return text


def _default(action: argparse.Action) -> str:
    value = action.default
    if action.required:
        return "required"
    if value is None or value is False or value is argparse.SUPPRESS or action.nargs == 0:
        return ""
    if isinstance(value, (list, tuple)):
        value = ",".join(str(v) for v in value)
    if not isinstance(value, (str, int, float)):
        return ""
    return _code(value)


def _help(sub: argparse.ArgumentParser, action: argparse.Action) -> str:
    formatter = sub._get_formatter()
    return formatter._expand_help(action) if action.help else ""


def own_help(name: str) -> str | None:
    """The help text of a subcommand that reads its own arguments, not argparse's
    (``trec_eval``: trec_eval's getopt command line), or None."""
    if name != "trec_eval":
        return None
    from fastndcg.treceval import HELP
    lines = []
    for line in HELP.rstrip().split("\n"):
        if line.startswith("usage:"):  # wrapped between arguments, as argparse does
            words = re.findall(r"\[(?:[^\[\]]|\[[^\]]*\])*\](?:\.\.\.)?|\S+", line)
            indent = " " * (len("usage: fastndcg trec_eval") + 1)
            row = " ".join(words[:3])
            for word in words[3:]:
                if len(row) + 1 + len(word) > 88:
                    lines.append(row)
                    row = indent + word
                else:
                    row += " " + word
            lines.append(row)
        else:
            lines += textwrap.wrap(line, 88, subsequent_indent="  ", break_on_hyphens=False) or [""]
    return "\n".join(lines)


def render(root: argparse.ArgumentParser | None = None) -> str:
    root = root or parser()
    prog = root.prog
    out = [root.description or "", "",
           f"Installed as `{prog}`; `python -m {prog}` is the same program. Every "
           "subcommand answers `--help`. Errors are one line on stderr "
           f"(`{prog}: error: ...`) and exit status 2 for a usage error, 1 for bad data "
           "(see [Errors](errors.md)).", ""]
    subs = subcommands(root)
    out += ["| subcommand | what it does |", "|---|---|"]
    for name, sub in subs.items():
        choice = next(a for a in root._actions if isinstance(a, argparse._SubParsersAction))
        helps = {a.dest: a.help for a in choice._choices_actions}
        out.append(f"| [`{prog} {name}`](#{prog}-{name}) | {_cell(helps.get(name, ''))} |")
    out.append("")
    for name, sub in subs.items():
        out += [f"## `{prog} {name}` {{#{prog}-{name}}}", ""]
        if sub.description:
            out += [_text(sub.description), ""]
        own = own_help(name)
        usage = own if own is not None else sub.format_usage().strip()
        out += ["```text", usage, "```", ""]
        if sub.epilog:
            out += [_text(sub.epilog), ""]
        actions = [a for n, a in documented(root) if n == name]
        if not actions:
            continue
        out += ["| argument | value | default | meaning |", "|---|---|---|---|"]
        for action in actions:
            flags = ", ".join(_code(f) for f in action.option_strings) or _code(action.metavar or action.dest)
            out.append(f'| <a id="{anchor(name, action)}"></a>{flags} | {_value(action)} | '
                       f"{_default(action)} | {_cell(_help(sub, action))} |")
        out.append("")
    return "\n".join(out)


def on_page_markdown(markdown: str, page, config, files) -> str:  # MkDocs hook
    if MARKER in markdown:
        markdown = markdown.replace(MARKER, render())
    return markdown
