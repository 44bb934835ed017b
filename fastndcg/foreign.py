"""Runs and judgments in the shapes other tools hold them, read as Arrow tables.

The first step of a source (:mod:`fastndcg.io` reads files and Arrow objects):
what ir_measures, PyTerrier and ranx users already have in memory.

* **dicts of dicts** ``{query_id: {doc_id: value}}``: a run's scores, or
  judgments' labels (pytrec_eval's and ir_measures' shape);
* **ir_measures' namedtuples**: any iterable of ``ScoredDoc(query_id, doc_id,
  score)`` or ``Qrel(query_id, doc_id, relevance, iteration)`` (or any
  namedtuples with those field names);
* **ranx's** ``Run`` and ``Qrels``;
* **DataFrames with other tools' column names**: ir_measures' ``query_id``,
  ``doc_id``, ``score``, ``relevance``; PyTerrier's ``qid``, ``docno``,
  ``score`` (its ``rank`` and ``query`` columns are not read) and ``label``.

Column names are recognised only where the caller left a column option at its
default (``query="query_id"``, ``doc="doc_id"``, ``label="label"``), and only in
these in-memory shapes: a Parquet file is read by the names given. A frame that
holds two candidates for one role (``query_id`` and ``qid``, or ``label`` and
``relevance``) is refused with a message naming the option that chooses
(``query="qid"``), or the column to drop.

>>> t = table_of({"q1": {"d1": 2.0, "d2": 1.0}}, {"query_id": "query",
...               "doc_id": "doc", "score": "score"}, "run")[0]
>>> t.column_names, t.num_rows
(['query_id', 'doc_id', 'score'], 2)
"""

from __future__ import annotations

import itertools

import numpy as np
import pyarrow as pa

__all__ = ["table_of", "recognise", "ranked_by_ranx", "ALIASES"]

# candidate column names of each role, fastndcg's default first
ALIASES = {"query": ("query_id", "qid"), "doc": ("doc_id", "docno"),
           "score": ("score",), "label": ("label", "relevance")}


def _value_role(roles: dict[str, str], name: str) -> str:
    values = [r for r in roles.values() if r in ("score", "label")]
    if len(values) != 1:
        raise ValueError(f"{name}: a dict of dicts holds one value per document, but a search "
                         f"log needs a score and a label; pass the run as {name} and the "
                         f"judgments as qrels=")
    return values[0]


def _ids(values: list) -> pa.Array:
    """Query or document ids as Arrow: integers stay integers, anything else is text."""
    arr = pa.array(values)
    if pa.types.is_integer(arr.type):
        return arr.cast(pa.int64())
    if pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type):
        return arr
    return pa.array([str(v) for v in values])


def _from_dicts(data: dict, roles: dict[str, str], name: str) -> pa.Table:
    role = _value_role(roles, name)
    by_role = {r: n for n, r in roles.items()}
    qids, docs, values, sizes = [], [], [], []
    for qid, docs_of in data.items():
        if not isinstance(docs_of, dict):
            raise TypeError(f"{name}: a dict of dicts maps each query id to a dict of "
                            f"{{doc_id: {role}}}; query {qid!r} maps to a "
                            f"{type(docs_of).__name__}")
        qids.append(qid)
        sizes.append(len(docs_of))
        docs.extend(docs_of.keys())
        values.extend(docs_of.values())
    query = _ids(qids)
    take = pa.array(np.repeat(np.arange(len(qids), dtype=np.int64), sizes))
    try:
        vals = pa.array(values, type=pa.float64())
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        raise TypeError(f"{name}: every {role} of a dict of dicts must be a number; got "
                        f"{next(v for v in values if not isinstance(v, (int, float)))!r}"
                        ) from None
    return pa.table({by_role["query"]: query.take(take), by_role["doc"]: _ids(docs),
                     by_role[role]: vals})


def _from_tuples(first, rows, roles: dict[str, str], name: str) -> pa.Table:
    fields = first._fields
    columns = list(zip(*itertools.chain([first], rows)))
    data = dict(zip(fields, columns))
    table = {}
    for field, values in data.items():
        if field in ("query_id", "doc_id"):
            table[field] = _ids(list(values))
        elif field in ("score", "relevance"):
            try:
                table[field] = pa.array(values, type=pa.float64() if field == "score"
                                        else pa.int64())
            except (pa.ArrowInvalid, pa.ArrowTypeError):
                table[field] = pa.array(values, type=pa.float64())
    if "query_id" not in table or "doc_id" not in table:
        raise TypeError(f"{name}: namedtuples need the fields query_id and doc_id (as "
                        f"ir_measures' ScoredDoc and Qrel have); got {', '.join(fields)}")
    return recognise(pa.table(table), roles, f"the {type(first).__name__} records")


RANX_WALK_DOCS = 100_000  # ranx objects this large (queries x the first one's documents)
#                            are walked by a compiled kernel


def _from_ranx(source, roles: dict[str, str], name: str) -> pa.Table:
    """A ranx ``Run`` or ``Qrels``, each query's documents in the order the object
    holds them. Its ``to_dict`` walks its Numba typed dicts from Python, about 5 s a
    million documents; from :data:`RANX_WALK_DOCS` documents on, a kernel walks them
    (0.3 s a million), compiled once for each length of ranx's fixed-width document
    ids (1-3 s, then cached)."""
    role = _value_role(roles, name)
    by_role = {r: n for n, r in roles.items()}
    held = source.run if _is_ranx(source, "Run") else source.qrels
    first = next(iter(held.values()), None)  # (each query's dict crosses from Numba:
    if first is None or len(held) * len(first) < RANX_WALK_DOCS:  # estimate from one)
        return _from_dicts(source.to_dict(), roles, name)
    from . import _kernels as K

    try:
        sizes, values, q_data, q_off, d_data, d_off, ok = K.nested_columns(held)
    except Exception:  # a ranx whose objects hold something else: its own walk
        ok = False
    if not ok:  # (or an id that is no UTF-8: Python's own error then)
        return _from_dicts(source.to_dict(), roles, name)
    queries = _utf8(q_data, q_off)
    take = pa.array(np.repeat(np.arange(len(sizes), dtype=np.int64), sizes))
    return pa.table({by_role["query"]: queries.take(take), by_role["doc"]: _utf8(d_data, d_off),
                     by_role[role]: pa.array(values)})


def _utf8(data: np.ndarray, offsets: np.ndarray) -> pa.Array:
    """Arrow strings from valid UTF-8 ``data`` and int64 ``offsets``."""
    arr = pa.LargeStringArray.from_buffers(len(offsets) - 1, pa.py_buffer(offsets),
                                           pa.py_buffer(data))
    return arr.cast(pa.string()) if len(data) < 1 << 31 else arr


def _is_ranx(source, name: str) -> bool:
    kind = type(source)
    return kind.__module__.split(".")[0] == "ranx" and kind.__name__ == name


def ranked_by_ranx(source) -> bool:
    """Whether ``source`` is a ranx ``Run``: :func:`table_of` gives each query's rows
    in the order the Run holds them, which is ranx's ranking (the order its
    ``evaluate`` reads), so ``ties="ranx"`` must not sort them again."""
    return _is_ranx(source, "Run")


def table_of(source, roles: dict[str, str], name: str) -> tuple[pa.Table, str] | None:
    """``source`` as an Arrow table with the columns ``roles`` names (name -> role),
    and how messages describe it; None when it is none of the shapes above."""
    kind = type(source)
    module = kind.__module__.split(".")[0]
    if _is_ranx(source, "Run") or _is_ranx(source, "Qrels"):
        return _from_ranx(source, roles, name), f"the ranx {kind.__name__}"
    if isinstance(source, dict):
        if not source or not isinstance(next(iter(source.values())), dict):
            return None  # not a dict of dicts: the caller's message lists what can be read
        return _from_dicts(source, roles, name), "the dict of dicts"
    if isinstance(source, (str, bytes, pa.Table, pa.RecordBatch)) or module in ("pandas",
                                                                                 "polars"):
        return None
    if isinstance(source, (list, tuple)) or (hasattr(source, "__next__")
                                             and hasattr(source, "__iter__")):
        rows = iter(source)
        first = next(rows, None)
        if first is None:
            raise ValueError(f"{name}: the iterable of records is empty; give at least one "
                             f"record")
        if not hasattr(first, "_fields"):
            return None  # not records: the caller's message lists what can be read
        return _from_tuples(first, rows, roles, name), f"the {type(first).__name__} records"
    return None


def recognise(table: pa.Table, roles: dict[str, str], describe: str) -> pa.Table:
    """``table`` with other tools' column names renamed to the names ``roles`` asks
    for, where the caller left that option at its default and the name is absent.
    Raises when two candidates for one role are present."""
    names = table.column_names
    rename = {}
    for want, role in roles.items():
        candidates = ALIASES.get(role, ())
        if not candidates or want != candidates[0]:
            continue  # a name the caller chose: read as given
        present = [c for c in candidates if c in names]
        if len(present) > 1:
            other = present[1]
            raise ValueError(f"{describe} has columns {' and '.join(map(repr, present))}, "
                             f"either of which could be the {role} column; pass "
                             f"{role}={other!r} to read {other!r}, or drop {other!r} "
                             f"to read {want!r}")
        if present and present[0] != want:
            rename[present[0]] = want
    if not rename:
        return table
    return table.rename_columns([rename.get(n, n) for n in names])
