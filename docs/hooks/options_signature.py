"""A griffe extension: the functions that take fastndcg's evaluation options.

``fastndcg.evaluate`` and the other functions decorated with
``fastndcg.options.takes_options`` take the options as ``**options`` in their
source; the decorator gives them, at run time, a signature and a docstring that
list every option with its default and what it means (generated from
``fastndcg.options.OPTIONS``). griffe reads the source, so this extension puts
the run-time signature and docstring in place of the source's. It runs before
``plain_numpydoc``, which then rewrites that docstring as any other.
"""

from __future__ import annotations

import importlib
import inspect
import os
import sys
from typing import Any

import griffe

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _takes_options(func: griffe.Function) -> bool:
    return any("takes_options" in str(d.value) for d in func.decorators)


def _parameter(p: inspect.Parameter) -> griffe.Parameter:
    annotation = None if p.annotation is p.empty else str(p.annotation)
    default = None if p.default is p.empty else repr(p.default)
    return griffe.Parameter(p.name, annotation=annotation, default=default,
                            kind=griffe.ParameterKind(p.kind.description))


class TakesOptions(griffe.Extension):
    """The run-time signature and docstring of every function that takes the options."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if not obj.is_function or not _takes_options(obj):
            return
        if ROOT not in sys.path:  # the checkout's fastndcg, installed or not
            sys.path.insert(0, ROOT)
        runtime = getattr(importlib.import_module(obj.module.path), obj.name)
        obj.parameters = griffe.Parameters(
            *(_parameter(p) for p in inspect.signature(runtime).parameters.values()))
        if obj.docstring is not None and runtime.__doc__:
            obj.docstring.value = inspect.cleandoc(runtime.__doc__)
