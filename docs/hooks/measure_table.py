"""The tables of the measures page, generated from fastndcg's measure registry.

``fastndcg.measures.REGISTRY`` has one row per measure: its names in each tool, its
definition, its parameters and the tie rules it offers. As a MkDocs hook (``hooks:``
in mkdocs.yml) this module replaces two lines of a page when the site is built:

* ``<!-- measure-table -->`` with the table of every measure (:func:`measure_table`);
* ``<!-- tie-refusals -->`` with the table of the tie rules each measure refuses and
  why (:func:`tie_refusals`).

So a measure added to the registry is documented with it, and the page cannot drift
from the rows.
"""

from __future__ import annotations

import os
import sys

MARKERS = ("<!-- measure-table -->", "<!-- tie-refusals -->")
RULES = ("trec", "stable", "optimistic", "pessimistic")


def registry() -> dict:
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if root not in sys.path:  # the checkout's fastndcg, installed or not
        sys.path.insert(0, root)
    from fastndcg.measures import REGISTRY
    return REGISTRY


def _code(names) -> str:
    return ", ".join(f"`{n}`" for n in names)


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "&#124;")


def _by_cutoff(name: str, cutoff: str) -> list:
    return {"none": [name], "optional": [name, f"{name}@k"], "required": [f"{name}@k"]}[cutoff]


def _with_params(name: str, kind) -> str:
    return f"{name}(" + ",".join(f"{p.name}=…" for p in kind.params) + ")"


def columns(kind) -> list:
    """fastndcg's column names of a measure (k: a cutoff, x: a parameter's value)."""
    if kind.each:
        return [f"{kind.name}({kind.params[0].name}=x)"]
    out = _by_cutoff(kind.name, kind.cutoff)
    return out + ([_with_params(kind.name, kind)] if kind.params else [])


def tool_names(kind) -> str:
    """Its names in trec_eval, ir_measures and ranx, as written in a measure name."""
    parts = []
    trec = []
    if kind.trec:
        trec.append(kind.trec)
        in_name = [p.name for p in kind.params if p.in_trec_name]
        if in_name == ["p"]:
            trec.append(f"{kind.trec}.p=x")
        elif in_name:
            trec.append(f"{kind.trec}." + ",".join(in_name))
        if kind.trec_gains:
            trec.append(f"{kind.trec}.1=0,2=3")
    if kind.trec_cut:
        trec.append(f"{kind.trec_cut}.x" if kind.each else f"{kind.trec_cut}.k")
    if trec:
        parts.append(f"trec_eval {_code(trec)}")
    if kind.irm:
        irm = ([f"{kind.irm}@x"] if kind.each else _by_cutoff(kind.irm, kind.cutoff)
               + ([_with_params(kind.irm, kind)] if kind.params else []))
        parts.append(f"ir_measures {_code(irm)}")
    if kind.ranx:
        parts.append(f"ranx {_code([kind.ranx + ('' if kind.cutoff == 'none' else '@k')])}")
    return "; ".join(parts)


def _number(value) -> str:
    return repr(float(value))


def parameters(kind) -> str:
    """What its parameters are and their defaults, in a sentence (or "")."""
    said = []
    for p in kind.params:
        if kind.each:
            default = f"trec_eval's name alone measures {', '.join(map(_number, p.default))}"
        else:
            default = f"default {_number(p.default)}"
        where = "" if p.in_trec_name or not kind.trec else ", trec_eval's `-N`"
        said.append(f"`{p.name}`: {p.doc} ({default}{where})")
    return ("Parameters: " if len(said) > 1 else "Parameter ") + "; ".join(said) + "." \
        if said else ""


def measure_table(rows: dict | None = None) -> str:
    """The table of every measure: its names, definition and edge cases."""
    rows = registry() if rows is None else rows
    out = ["| measure | definition (one query) | no relevant document (R = 0) | "
           "fewer than k retrieved |", "|---|---|---|---|"]
    for kind in rows.values():
        names = tool_names(kind)
        measure = _code(columns(kind)) + (f" ({names})" if names else "")
        if kind.judgments:
            measure += ", qrels only"
        definition = kind.doc + (f". {parameters(kind)}" if kind.params else "")
        out.append(f"| {_cell(measure)} | {_cell(definition)} | {_cell(kind.no_relevant)} | "
                   f"{_cell(kind.short_list)} |")
    return "\n".join(out)


def _alternatives(rules: list) -> str:
    return " or ".join(f"`{r}`" for r in rules) if len(rules) < 3 else \
        ", ".join(f"`{r}`" for r in rules[:-1]) + f" or `{rules[-1]}`"


def _own_name(kind) -> str:
    other = next((n for n in (kind.trec, kind.trec_cut, kind.irm) if n and n != kind.name), None)
    return f"`{kind.name}`" + (f" (`{other}`)" if other else "")


def tie_refusals(rows: dict | None = None) -> str:
    """The table of the tie rules each measure refuses (measures that share a reason
    share a line)."""
    rows = registry() if rows is None else rows
    lines: dict = {}
    for kind in rows.values():
        refused = ([] if kind.average else ["average"]) + (
            [] if kind.bounds else ["optimistic", "pessimistic"])
        if refused:
            use = _alternatives([r for r in RULES if r not in refused])
            key = (f"{_code(refused)} (use {use})", kind.refusal)
            lines.setdefault(key, []).append(_own_name(kind))
        if kind.average and not kind.average_negative:
            use = _alternatives(list(RULES))
            key = (f'`average` (use `negative_labels="zero"`, or {use})', kind.refusal)
            lines.setdefault(key, []).append(f'{_own_name(kind)} with `negative_labels="keep"`')
    out = ["| measure | refuses | why |", "|---|---|---|"]
    for (refuses, why), names in lines.items():
        out.append(f"| {', '.join(names)} | {refuses} | {_cell(why)} |")
    return "\n".join(out)


def on_page_markdown(markdown: str, page, config, files) -> str:  # MkDocs hook
    for marker, render in zip(MARKERS, (measure_table, tie_refusals)):
        if marker in markdown:
            markdown = markdown.replace(marker, render())
    return markdown
