"""A griffe extension: fastndcg's docstrings, read as numpydoc.

fastndcg writes its docstrings in a plain variant of the numpydoc layout:

* an item is ``name : what it is`` (the description on the same line, no type;
  ``name : type -- description`` where a type is given), continued on indented
  lines;
* a paragraph that follows the items without a heading of its own (``Everything
  else: as evaluate``) still belongs to the section in numpydoc's grammar;
* the examples heading is ``Example``, and cross-references are reST roles
  (``:func:`evaluate```).

This extension rewrites each docstring, before griffe parses it, into the layout
griffe's numpydoc parser expects, so that the API reference shows parameters with
their descriptions (types from the signatures) and the source keeps its style.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_ITEM_SECTIONS = {"parameters", "other parameters", "attributes"}
_ITEM = re.compile(r"^(?P<names>\*{0,2}[A-Za-z_][\w]*(?:\s*,\s*\*{0,2}[A-Za-z_][\w]*)*)\s+:\s*(?P<rest>.*)$")
_ROLE = re.compile(r":(?:func|class|mod|meth|attr|data|exc|obj):`~?([^`]+)`")
_FLAGS = re.compile(r"\s*#\s*doctest:.*$")
_RENAMES = {"example": "Examples", "examples": "Examples"}


def _is_heading(lines: list[str], i: int) -> bool:
    return (i + 1 < len(lines) and lines[i].strip() != "" and not lines[i].startswith(" ")
            and re.fullmatch(r"-{3,}", lines[i + 1].strip() or "x") is not None)


def _item_section(body: list[str]) -> list[str]:
    """Items of a Parameters/Attributes section; trailing paragraphs become Notes."""
    out: list[str] = []
    notes: list[str] = []
    in_notes = False
    for line in body:
        if in_notes:
            notes.append(line)
            continue
        if line.strip() == "":
            out.append("")
            continue
        if line.startswith(" "):
            out.append("    " + line.strip())
            continue
        match = _ITEM.match(line)
        if not match:  # a paragraph of its own: not an item
            in_notes = True
            notes.append(line)
            continue
        names, rest = match["names"], match["rest"].strip()
        if " -- " in rest:
            kind, text = rest.split(" -- ", 1)
            out.append(f"{names} : {kind.strip()}")
            out.append("    " + text.strip())
        else:
            out.append(names)
            if rest:
                out.append("    " + rest)
    if notes:
        while out and out[-1] == "":
            out.pop()
        out += ["", "Notes", "-----"] + notes
    return out


def _returns_section(body: list[str]) -> list[str]:
    """A Returns section written as prose: one item without a name or a type."""
    text = [line.strip() for line in body]
    while text and text[-1] == "":
        text.pop()
    if text and _ITEM.match(body[0] if body else ""):
        return body
    return [":"] + ["    " + line if line else "" for line in text]


def _fence_doctests(lines: list[str]) -> list[str]:
    """Doctest lines outside an Examples section, as a fenced Python block (griffe
    reads ``>>>`` lines as code only in an Examples section)."""
    out: list[str] = []
    inside = False
    for line in lines:
        doctest = line.lstrip().startswith((">>>", "..."))
        if doctest and not inside:
            out.append("```pycon")
            inside = True
        elif inside and not doctest:
            out.append("```")
            inside = False
        out.append(_FLAGS.sub("", line.lstrip()) if doctest else line)
    if inside:
        out.append("```")
    return out


def rewrite(text: str) -> str:
    """The docstring ``text`` in the layout griffe's numpydoc parser reads."""
    text = _ROLE.sub(lambda m: f"`{m[1]}`", text)
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        if not _is_heading(lines, i):
            j = i
            while j < len(lines) and not _is_heading(lines, j):
                j += 1
            out += _fence_doctests(lines[i:j])
            i = j
            continue
        title = lines[i].strip()
        key = title.lower()
        j = i + 2
        while j < len(lines) and not _is_heading(lines, j):
            j += 1
        body = lines[i + 2:j]
        title = _RENAMES.get(key, title)
        out += [title, "-" * len(title)]
        if key in _ITEM_SECTIONS:
            out += _item_section(body)
        elif key == "returns":
            out += _returns_section(body)
        elif title == "Examples":
            out += body
        else:
            out += _fence_doctests(body)
        i = j
    return "\n".join(out)


class PlainNumpyDoc(griffe.Extension):
    """Rewrites every docstring of the loaded objects (see the module docstring)."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = rewrite(obj.docstring.value)

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        for obj in _walk(pkg):
            if obj.is_class:
                _describe_members(obj)


def _walk(obj: griffe.Object):
    yield obj
    for member in obj.members.values():
        if not member.is_alias and member.parent is obj:
            yield from _walk(member)


def _describe_members(cls: griffe.Class) -> None:
    """Give each attribute of a class the description its docstring's Attributes
    section gives it, so the reference shows it where the attribute is listed
    (the section's own table is not shown: ``show_docstring_attributes: false``)."""
    if cls.docstring is None:
        return
    for section in cls.docstring.parsed:
        if section.kind is not griffe.DocstringSectionKind.attributes:
            continue
        for item in section.value:
            for name in (n.strip() for n in item.name.split(",")):
                member = cls.members.get(name)
                if member is None or member.is_alias or member.docstring is not None:
                    continue
                member.docstring = griffe.Docstring(item.description, parent=member,
                                                    parser=cls.docstring.parser,
                                                    parser_options=cls.docstring.parser_options)
