"""Tables of text cells rendered as aligned text, GitHub-flavoured markdown or LaTeX.

The one renderer of every table fastndcg prints: a :class:`~fastndcg.report.Report`
(names and values), the :class:`~fastndcg.report.Runs` of several runs (a row a
run) and a :class:`~fastndcg.Comparison` (its systems and its tests). The
cells come formatted; :func:`render` only aligns and frames them.
"""

from __future__ import annotations

from typing import Sequence

__all__ = ["render", "FORMATS"]

FORMATS = ("text", "markdown", "latex")

_LATEX_SPECIAL = (("\\", r"\textbackslash{}"), ("&", r"\&"), ("%", r"\%"), ("$", r"\$"),
                  ("#", r"\#"), ("_", r"\_"), ("{", r"\{"), ("}", r"\}"), ("~", r"\~{}"),
                  ("^", r"\^{}"))


def render(head: Sequence[str] | None, body: Sequence[Sequence[str]], align: str,
           fmt: str = "text", title: str | None = None) -> str:
    """A table of cells (``head``, the column names, over the ``body`` rows) as text.

    ``align`` holds one letter a column, ``"l"`` (left) or ``"r"`` (right).

    * ``"text"``: the columns padded to their widest cell (the head's included) and
      joined by two spaces, each line's trailing spaces dropped; ``title`` on a line
      above; no head line when ``head`` is None.
    * ``"markdown"``: ``**title**``, then a pipe table aligned by ``align``.
    * ``"latex"``: ``% title``, then a booktabs ``tabular`` with the cells escaped.

    >>> print(render(["system", "mean"], [["a", "0.5000"], ["bm25", "0.25"]], "lr"))
    system    mean
    a       0.5000
    bm25      0.25
    >>> print(render(["system", "mean"], [["a", "0.5000"]], "lr", fmt="markdown", title="ndcg@10"))
    **ndcg@10**
    <BLANKLINE>
    | system | mean |
    |---|---:|
    | a | 0.5000 |
    """
    if fmt == "markdown":
        lines = [f"**{title}**", ""] if title else []
        lines.append("| " + " | ".join(head) + " |")
        lines.append("|" + "|".join("---:" if a == "r" else "---" for a in align) + "|")
        lines += ["| " + " | ".join(r) + " |" for r in body]
        return "\n".join(lines)
    if fmt == "latex":
        lines = [f"% {title}"] if title else []
        lines.append(r"\begin{tabular}{" + align + "}")
        lines.append(r"\toprule")
        lines.append(" & ".join(_latex_escape(h) for h in head) + r" \\")
        lines.append(r"\midrule")
        lines += [" & ".join(_latex_escape(x) for x in r) + r" \\" for r in body]
        lines.append(r"\bottomrule")
        lines.append(r"\end{tabular}")
        return "\n".join(lines)
    if fmt != "text":
        raise ValueError(f"fmt must be one of {', '.join(map(repr, FORMATS))}, got {fmt!r}")
    rows = ([list(head)] if head is not None else []) + [list(r) for r in body]
    widths = [max(len(r[i]) for r in rows) for i in range(len(align))]
    lines = [title] if title else []
    lines += ["  ".join(cell.rjust(w) if a == "r" else cell.ljust(w)
                        for cell, w, a in zip(r, widths, align)).rstrip() for r in rows]
    return "\n".join(lines)


def _latex_escape(s: str) -> str:
    for a, b in _LATEX_SPECIAL:
        s = s.replace(a, b)
    return s
