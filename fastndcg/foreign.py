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

Ids are integers or strings, one kind per input: a missing id (``None``, NaN)
and an input mixing integer and string ids (``1`` and ``"2"``) are refused by
name, as is a list mixing ScoredDoc and Qrel records, and a run given as the
judgments or the judgments as the run (a ranx ``Run`` as ``qrels=``, Qrel records
as the run). An empty dict, or one whose queries all map to empty dicts, holds
nothing to evaluate: refused by name (the ir_measures provider reads them as
ir_measures does).

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

import numbers

import numpy as np
import pyarrow as pa

from ._validate import shown

__all__ = ["table_of", "recognise", "ranked_by_ranx", "empty_queries", "ALIASES"]

# candidate column names of each role, fastndcg's default first
ALIASES = {"query": ("query_id", "qid"), "doc": ("doc_id", "docno"),
           "score": ("score",), "label": ("label", "relevance")}


def _value_role(roles: dict[str, str], name: str, describe: str = "a dict of dicts") -> str:
    values = [r for r in roles.values() if r in ("score", "label")]
    if len(values) != 1:
        raise ValueError(f"{name}: {describe} holds one value per document, but a search "
                         f"log needs a score and a label; pass the run as {name} and the "
                         f"judgments as qrels=")
    return values[0]


def _ids(values: list, what: str, name: str, describe: str, where=None) -> pa.Array:
    """Query or document ids as Arrow: integers stay integers, text stays text
    (anything else is read as its text). A missing id (None, NaN) and integers mixed
    with strings are refused: ir_measures refuses both, and ``1`` and ``"1"`` would
    be one id here but two there. ``where(i)``: where the i-th id sits, for messages."""
    if not values:
        return pa.array([], pa.string())
    try:
        arr = pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, OverflowError):
        arr = None
    if arr is not None and not arr.null_count:
        if pa.types.is_integer(arr.type):
            return arr if arr.type in (pa.int64(), pa.uint64()) else arr.cast(pa.int64())
        if pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type):
            return arr
    first = {}  # kind -> index of its first id
    for i, v in enumerate(values):
        if v is None or (isinstance(v, float) and v != v):
            at = f", {where(i)}" if where is not None else ""
            raise ValueError(f"{name}: {what} id {v!r} in {describe}{at}; every {what} needs "
                             f"an id (a string or an integer): drop it or give it one")
        kind = ("text" if isinstance(v, str) else "int"
                if isinstance(v, numbers.Integral) and not isinstance(v, bool) else None)
        if kind is not None:
            first.setdefault(kind, i)
            if len(first) == 2:
                a, b = values[first["int"]], values[first["text"]]
                if first["int"] > first["text"]:
                    a, b = b, a
                at = f", {where(i)}" if where is not None else ""
                raise TypeError(f"{name}: {describe} mixes integer and string {what} ids "
                                f"({shown(a)} and {shown(b)}{at}); make them one kind, e.g. "
                                f"str({'doc' if what == 'document' else what}_id) for every one")
    return pa.array([str(v) for v in values])


def _numbers(values: list, role: str, name: str, describe: str,
             where=None, type: pa.DataType = pa.float64()) -> pa.Array:
    """Scores or grades as Arrow doubles (``type``); a value that is not a number is
    refused by name (``where(i)``: where the i-th value sits)."""
    if any(isinstance(v, np.unsignedinteger) for v in values):
        # pyarrow reads a NumPy unsigned scalar as signed (2**64 - 1 as -1): as an int
        values = [int(v) if isinstance(v, np.unsignedinteger) else v for v in values]
    try:
        return pa.array(values, type=type)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, TypeError):
        pass
    for i, v in enumerate(values):
        if v is None:
            continue
        try:
            ok = not isinstance(v, (str, bytes, bool)) and isinstance(float(v), float)
        except (TypeError, ValueError, OverflowError):
            ok = False
        if not ok:
            at = f" ({where(i)})" if where is not None else ""
            raise TypeError(f"{name}: every {role} of {describe} must be a number; got "
                            f"{shown(v)}{at}; convert it, e.g. float({role})")
    raise TypeError(f"{name}: every {role} of {describe} must be a number within the range "
                    f"of a double; convert them, e.g. float({role})")


def _from_dicts(data: dict, roles: dict[str, str], name: str) -> pa.Table:
    describe = "the dict of dicts"
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
    ends = np.cumsum(sizes)

    def query_of(i: int) -> str:
        return f"query {qids[int(np.searchsorted(ends, i, side='right'))]!r}"

    query = _ids(qids, "query", name, describe)
    take = pa.array(np.repeat(np.arange(len(qids), dtype=np.int64), sizes))
    vals = _numbers(values, role, name, describe, query_of)
    return pa.table({by_role["query"]: query.take(take),
                     by_role["doc"]: _ids(docs, "document", name, describe, query_of),
                     by_role[role]: vals})


def empty_queries(source, name: str) -> list:
    """The ids of a dict of dicts' queries that map to no document (``{"q1": {}}``),
    as the table read from it names them: ir_measures' pytrec_eval and judged
    providers count them as judged queries (each measure's default, 0)."""
    if not isinstance(source, dict) or not any(isinstance(d, dict) and not d
                                               for d in source.values()):
        return []
    ids = _ids(list(source.keys()), "query", name, "the dict of dicts").to_pylist()
    return [q for q, d in zip(ids, source.values()) if isinstance(d, dict) and not d]


def _crossed(name: str, got: str, want: str, fix: str) -> ValueError:
    return ValueError(f"{name}: got {got} where {want} expected: the roles are crossed; "
                      f"{fix}")


def _from_tuples(first, rows, roles: dict[str, str], name: str) -> pa.Table:
    fields = first._fields
    kind = type(first)
    describe = f"the {kind.__name__} records"
    records = [first, *rows]
    stray = None if len(set(map(type, records))) == 1 else next(
        (i for i, r in enumerate(records) if type(r) is not kind
         and getattr(r, "_fields", None) != fields), None)
    if stray is not None:
        other = records[stray]
        raise ValueError(f"{name}: the records mix kinds: record {stray} is {shown(other)}, "
                         f"but the first is a {kind.__name__} ({', '.join(fields)}); a run "
                         f"holds ScoredDoc records only and qrels Qrel records only: pass "
                         f"them apart, the run as the run and the judgments as qrels")
    values_roles = [r for r in roles.values() if r in ("score", "label")]
    by_role = {r: n for n, r in roles.items()}
    if values_roles == ["score"] and by_role["score"] == "score" and "score" not in fields \
            and "relevance" in fields:
        raise _crossed(name, f"{describe} (judgments: {', '.join(fields)})", "a run is",
                       f"pass the {kind.__name__} records as the qrels and the run (e.g. "
                       f"ScoredDoc records) as the run")
    if values_roles == ["label"] and by_role["label"] == "label" and "score" in fields \
            and not {"label", "relevance"} & set(fields):
        raise _crossed(name, f"{describe} (a run: {', '.join(fields)})", "judgments are",
                       f"pass the {kind.__name__} records as the run and the judgments (e.g. "
                       f"Qrel records) as the qrels")
    columns = list(zip(*records))
    data = dict(zip(fields, columns))
    qids = data.get("query_id")

    def record(i: int) -> str:
        return f"record {i}" + (f", query {qids[i]!r}" if qids is not None else "")

    table = {}
    for field, values in data.items():
        if field in ("query_id", "doc_id"):
            query = field == "query_id"
            table[field] = _ids(list(values), "query" if query else "document", name,
                                describe, (lambda i: f"record {i}") if query else record)
        elif field in ("score", "relevance"):
            role = "score" if field == "score" else "relevance"
            try:
                table[field] = pa.array(values, type=pa.float64() if field == "score"
                                        else pa.int64())
            except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
                table[field] = _numbers(list(values), role, name, describe, record)
    if "query_id" not in table or "doc_id" not in table:
        raise TypeError(f"{name}: namedtuples need the fields query_id and doc_id (as "
                        f"ir_measures' ScoredDoc and Qrel have); got {', '.join(fields)}")
    return recognise(pa.table(table), roles, describe)


RANX_WALK_DOCS = 100_000  # ranx objects this large (queries x the first one's documents)
#                            are walked by a compiled kernel


def _from_ranx(source, roles: dict[str, str], name: str) -> pa.Table:
    """A ranx ``Run`` or ``Qrels``, each query's documents in the order the object
    holds them. Its ``to_dict`` walks its Numba typed dicts from Python, about 5 s a
    million documents; from :data:`RANX_WALK_DOCS` documents on, a kernel walks them
    (0.3 s a million), compiled once for each length of ranx's fixed-width document
    ids (1-3 s, then cached)."""
    is_run = _is_ranx(source, "Run")
    role = _value_role(roles, name, f"a ranx {'Run' if is_run else 'Qrels'}")
    if is_run and role == "label":
        raise _crossed(name, "a ranx Run (a run's scores)", "judgments are",
                       "pass the ranx Run as the run and the ranx Qrels as the qrels")
    if not is_run and role == "score":
        raise _crossed(name, "a ranx Qrels (judgments)", "a run is",
                       "pass the ranx Qrels as the qrels and the ranx Run as the run")
    by_role = {r: n for n, r in roles.items()}
    held = source.run if is_run else source.qrels
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
        if not source:
            role = "score" if "score" in roles.values() else "label"
            raise ValueError(f"{name}: the dict is empty (no query): nothing to evaluate; give "
                             f"at least one query, as {{query_id: {{doc_id: {role}}}}}")
        if not isinstance(next(iter(source.values())), dict):
            return None  # not a dict of dicts: the caller's message lists what can be read
        table = _from_dicts(source, roles, name)
        if table.num_rows == 0:
            role = _value_role(roles, name)
            raise ValueError(f"{name}: every query of the dict of dicts maps to an empty dict "
                             f"(no document): nothing to evaluate; give at least one "
                             f"document, as {{query_id: {{doc_id: {role}}}}}")
        return table, "the dict of dicts"
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
