"""Sources -> record batches: Parquet files, directories and globs, Arrow tables,
datasets and readers, pandas and polars DataFrames, and TREC run/qrels text files.

Only the needed columns are read. Every problem with a source (a missing file or
column, a column of the wrong type, a corrupt file, a malformed TREC line) is a
``ValueError``/``TypeError``/``FileNotFoundError`` naming the source, the column
or line, and the fix. Grouping rows into queries is :mod:`fastndcg.evaluate`'s job.

Files of a directory or glob are read in sorted path order (so ``part-0000``,
``part-0001``, ... keep a query that straddles two files whole); names starting
with ``.`` or ``_`` (``_SUCCESS``, ``.crc``) are skipped, as Spark and Hive do.

>>> import pyarrow as pa
>>> src = open_source(pa.table({"q": [1, 1], "s": [0.5, 0.2], "x": ["a", "b"]}), {"q": "query", "s": "score"})
>>> [b.column_names for b in src.batches()]
[['q', 's']]
"""

from __future__ import annotations

import glob
import os
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from . import _validate as V
from . import foreign
from ._arrow import as_numpy, from_numpy, one_array, scalar


def _is_dataset(source) -> bool:
    # pyarrow.dataset imports pandas (~0.2 s): never import it just to ask; a caller
    # holding a Dataset has imported it already
    ds = sys.modules.get("pyarrow.dataset")
    return ds is not None and isinstance(source, ds.Dataset)

__all__ = ["Source", "open_source", "read_trec_run", "read_trec_qrels", "is_parquet_file",
           "input_paths", "read_parquet_file"]

_ARROW_ERRORS = (pa.ArrowException, OSError)
_HIDDEN = (".", "_")


@dataclass
class Source:
    """A re-readable (or one-shot) stream of record batches holding ``columns``."""
    describe: str
    columns: list[str]
    num_rows: int | None
    _open: Callable[[list[str]], Iterator[pa.RecordBatch]]
    rereadable: bool = True
    schema: pa.Schema | None = None  # of ``columns``, when known before reading
    paths: list[str] = field(default_factory=list)  # the files read, if any
    # the parameter an object in memory was passed as (source, qrels, ...); None: a path
    argument: str | None = None
    _used: bool = field(default=False, repr=False)

    @property
    def named(self) -> str:
        """How messages name it for its user: a file by its name, an object in memory
        (``describe``: "the Arrow table") with the argument it was passed as."""
        if self.argument is None or f"as {self.argument}=" in self.describe:
            return self.describe
        return f"{self.describe} given as {self.argument}="

    def batches(self, prefetch: bool = False, columns: list[str] | None = None
                ) -> Iterator[pa.RecordBatch]:
        """The batches, with exactly ``columns`` (default: all the source's columns)
        in that order; errors name the source.

        ``prefetch``: decode the next batch in a background thread while the caller
        works on this one (one batch ahead, so memory grows by one batch)."""
        if self._used and not self.rereadable:
            raise ValueError(f"{self.describe} can be read only once")
        self._used = True
        cols = list(self.columns if columns is None else columns)
        it = _prefetched(self._open(cols)) if prefetch else self._open(cols)
        while True:
            try:
                batch = next(it)
            except StopIteration:
                return
            except _ARROW_ERRORS as err:
                raise ValueError(f"cannot read {self.describe}: {short_error(err)}; is the file "
                                 f"complete and not corrupt? Write it again") from None
            if batch.num_rows:
                yield batch


def _prefetched(it: Iterator) -> Iterator:
    """``it``, with the next item produced by a worker thread while this one is used."""
    from concurrent.futures import ThreadPoolExecutor

    done = object()

    def step():
        try:
            return next(it)
        except StopIteration:
            return done

    with ThreadPoolExecutor(1, thread_name_prefix="fastndcg-read") as pool:
        future = pool.submit(step)
        while True:
            item = future.result()
            if item is done:
                return
            future = pool.submit(step)
            yield item


def short_error(err: Exception) -> str:
    return str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__


# --------------------------------------------------------------------------- column checks

_KINDS = {
    "query": ("query ids", "integers or strings"),
    "doc": ("document ids", "integers or strings"),
    "score": ("scores", "numbers"),
    "label": ("labels", "numbers"),
    "weight": ("query weights", "numbers"),
    "system": ("a system's scores", "numbers"),
    "segment": ("segment values", "integers, strings or booleans"),
    "order": ("the input order", "numbers or strings"),
}
_OPTIONS = {"query": "query= / --query-col", "doc": "doc= / --doc-col",
            "score": "score= / --score-col", "label": "label= / --label-col",
            "weight": "weight= / --weight-col", "system": "systems= / --systems",
            "segment": "segment= / --segment", "order": "order="}


def _type_ok(role: str, t: pa.DataType) -> bool:
    if pa.types.is_dictionary(t):
        t = t.value_type
    if role in ("score", "label", "weight", "system"):
        return pa.types.is_integer(t) or pa.types.is_floating(t)
    if role == "segment" and pa.types.is_boolean(t):
        return True
    if role == "order" and pa.types.is_floating(t):
        return True
    return (pa.types.is_integer(t) or pa.types.is_string(t) or pa.types.is_large_string(t)
            or pa.types.is_binary(t) or pa.types.is_large_binary(t)
            or str(t) in ("string_view", "binary_view"))


def check_columns(schema: pa.Schema, roles: dict[str, str], describe: str) -> None:
    """Every wanted column exists and has a usable type, or a clear error."""
    names = schema.names
    for name, role in roles.items():
        if names.count(name) > 1:
            raise ValueError(f"column {name!r} ({_KINDS[role][0]}) appears {names.count(name)} "
                             f"times in {describe}; rename or drop the copies so that one "
                             f"column has that name")
        if name not in names:
            raise ValueError(f"column {name!r} ({_KINDS[role][0]}) not found in {describe}; it has "
                             f"columns {', '.join(map(repr, names)) or '(none)'}. Name the right one "
                             f"with {_OPTIONS[role]}")
        t = schema.field(name).type
        if not _type_ok(role, t):
            raise TypeError(f"column {name!r} of {describe} has type {t}, but {_KINDS[role][0]} "
                            f"must be {_KINDS[role][1]}; cast it, or name another column with "
                            f"{_OPTIONS[role]}")


# --------------------------------------------------------------------------- opening sources

def is_parquet_file(path: str) -> bool:
    """True when the file starts with Parquet's magic bytes."""
    with open(path, "rb") as f:
        return f.read(4) == b"PAR1"


def _parquet_paths(source: str, name: str = "source") -> tuple[list[str], str]:
    if any(ch in source for ch in "*?[") and not os.path.exists(source):
        paths = sorted(p for p in glob.glob(source, recursive=True)
                       if os.path.isfile(p) and not os.path.basename(p).startswith(_HIDDEN))
        if not paths:
            raise FileNotFoundError(f"{name}: no files match {source!r}; check the pattern")
        return paths, f"{source!r} ({len(paths)} files)"
    if os.path.isdir(source):
        paths = []
        for root, dirs, files in os.walk(source):
            dirs[:] = [d for d in dirs if not d.startswith(_HIDDEN)]
            paths += [os.path.join(root, f) for f in files if not f.startswith(_HIDDEN)]
        paths.sort()
        if not paths:
            raise FileNotFoundError(f"{name}: directory {source!r} holds no data files (names starting "
                                    f"with '.' or '_' are skipped); put the Parquet files there "
                                    f"or name another directory")
        return paths, f"directory {source!r} ({len(paths)} files)"
    if not os.path.exists(source):  # (open_source checked the text: empty, NUL)
        raise FileNotFoundError(f"{name} {source!r} does not exist; check the path")
    return [source], repr(source)


def input_paths(source) -> list[str]:
    """The files and directories a path source would read (nothing is opened), so an
    output can be checked against them before anything is read; [] for in-memory
    sources."""
    if isinstance(source, os.PathLike):
        source = os.fspath(source)
    if _is_dataset(source):
        return list(getattr(source, "files", None) or [])
    if not isinstance(source, str):
        return []
    if any(ch in source for ch in "*?[") and not os.path.exists(source):
        return sorted(p for p in glob.glob(source, recursive=True) if os.path.isfile(p))
    return [source]


def utf8_path(path: str) -> str:
    """``path``, if Arrow can open it: its readers take UTF-8 file names only."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"the file name {path!r} is not valid UTF-8, and pyarrow opens UTF-8 "
                         f"names only; rename the file (e.g. with convmv)") from None
    return path


def _parquet_source(source: str, roles: dict[str, str], batch_rows: int,
                    name: str = "source") -> Source:
    paths, describe = _parquet_paths(source, name)
    paths = [utf8_path(p) for p in paths]
    cols = list(roles)
    total = 0
    schemas = []
    for p in paths:
        if not is_parquet_file(p):
            with open(p, "rb") as f:
                head = f.read(16)
            what = f"it starts with {head!r}" if head else "it is empty, 0 bytes"
            raise ValueError(f"{p!r} is not a Parquet file (no PAR1 magic bytes; {what}); "
                             f"evaluate reads Parquet logs, or a TREC run text file together "
                             f"with qrels")
        try:
            import pyarrow.parquet as pq  # here: a TREC run or a table never needs it

            meta = pq.ParquetFile(p).metadata
            schema = meta.schema.to_arrow_schema()
        except _ARROW_ERRORS as err:
            raise ValueError(f"cannot read {p!r} as Parquet: {short_error(err)}; is the file complete "
                             f"and not corrupt? Write it again") from None
        check_columns(schema, roles, repr(p) if len(paths) > 1 else describe)
        schemas.append(pa.schema([schema.field(c).with_nullable(True) for c in cols]))
        total += meta.num_rows
    target = common_schema(schemas, paths)

    def open_(columns):
        # one file after another, one row group's worth of batches at a time: memory
        # stays at a batch or two whatever the size of the log
        want = pa.schema([target.field(c) for c in columns])
        for p in paths:
            yield from read_parquet_file(p, columns, want, batch_rows)

    return Source(describe, cols, total, open_, schema=target, paths=paths)


def read_parquet_file(path: str, columns: list[str], schema: pa.Schema, batch_rows: int,
                      row_groups: list[int] | None = None, filesystem=None
                      ) -> Iterator[pa.RecordBatch]:
    """Batches of ``columns`` of one Parquet file (optionally some row groups only),
    conformed to ``schema``; a damaged file is an error naming it."""
    import pyarrow.parquet as pq

    try:
        handle = filesystem.open_input_file(path) if filesystem is not None else path
        # one row group at a time, without pre-buffering: reading a whole file through
        # one pre-buffered iterator keeps every row group's buffers until the end
        # (resident memory grew with the file: 0.45 GiB more per 150M rows)
        with pq.ParquetFile(handle, pre_buffer=False) as f:
            groups = range(f.num_row_groups) if row_groups is None else row_groups
            for g in groups:
                for batch in f.iter_batches(batch_size=batch_rows, columns=columns,
                                            row_groups=[g], use_threads=True):
                    yield batch if batch.schema.equals(schema) else _conform(batch, schema)
    except _ARROW_ERRORS as err:
        raise ValueError(f"cannot read {path!r}: {short_error(err)}; is the file complete and not "
                         f"corrupt? Write it again") from None


def common_schema(schemas: list[pa.Schema], paths: list[str]) -> pa.Schema:
    """One schema for all files (int32 + int64 -> int64, float32 + float64 -> float64),
    so a query straddling two files can be put together; else a clear error."""
    if all(s.equals(schemas[0]) for s in schemas):
        return schemas[0]
    try:
        return pa.unify_schemas(schemas, promote_options="permissive")
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        for name in schemas[0].names:
            for s, p in zip(schemas, paths):
                if s.field(name).type != schemas[0].field(name).type:
                    raise ValueError(
                        f"column {name!r} is {schemas[0].field(name).type} in {paths[0]!r} but "
                        f"{s.field(name).type} in {p!r}; write the files with one type for it "
                        f"(or cast it)") from None
        raise


def _conform(batch: pa.RecordBatch, schema: pa.Schema) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays(
        [batch.column(i).cast(f.type) for i, f in enumerate(schema)], schema=schema)


def _dataset_source(dataset: "pyarrow.dataset.Dataset", roles: dict[str, str], describe: str,
                    batch_rows: int, num_rows: int | None = None) -> Source:
    check_columns(dataset.schema, roles, describe)
    cols = list(roles)

    def open_(columns):
        return iter(dataset.to_batches(columns=columns, batch_size=batch_rows,
                                       batch_readahead=4, fragment_readahead=2,
                                       use_threads=True))

    files = list(getattr(dataset, "files", None) or [])
    return Source(describe, cols, num_rows, open_, schema=dataset.schema, paths=files)


def _table_source(table: pa.Table, roles: dict[str, str], describe: str,
                  batch_rows: int) -> Source:
    check_columns(table.schema, roles, describe)
    cols = list(roles)
    table = table.select(cols)
    return Source(describe, cols, table.num_rows,
                  lambda columns: _even_batches(table.select(columns), batch_rows),
                  schema=table.schema)


def _even_batches(table: pa.Table, batch_rows: int) -> Iterator[pa.RecordBatch]:
    """The rows of ``table`` in batches of ``batch_rows`` (the last one shorter),
    wherever its chunks begin: the batches, and so the order in which means are
    summed, do not depend on how the table was cut into chunks (a TREC file read in
    one piece a thread, a table built chunk by chunk). A batch that spans two chunks
    is put together: a copy of its own rows only."""
    if table.num_rows == 0:
        yield from table.to_batches(max_chunksize=batch_rows)
        return
    for start in range(0, table.num_rows, batch_rows):
        part = table.slice(start, batch_rows)
        batches = part.to_batches()
        if len(batches) != 1:
            batches = part.combine_chunks().to_batches()
        yield batches[0]


def _reader_source(reader: pa.RecordBatchReader, roles: dict[str, str],
                   batch_rows: int, describe: str = "the RecordBatchReader") -> Source:
    check_columns(reader.schema, roles, describe)
    cols = list(roles)

    def open_(columns):
        for batch in reader:
            batch = batch.select(columns)
            for start in range(0, batch.num_rows, batch_rows):
                yield batch.slice(start, batch_rows)

    return Source(describe, cols, None, open_, rereadable=False, schema=reader.schema)


def _frame_table(source, argument: str = "source") -> tuple[pa.Table, str] | None:
    module = type(source).__module__.split(".")[0]
    if module == "pandas" and type(source).__name__ == "DataFrame":
        try:
            return pa.Table.from_pandas(source, preserve_index=False), "the pandas DataFrame"
        except (pa.ArrowTypeError, pa.ArrowInvalid) as err:
            import re
            found = re.search(r"for column (\S+) with type (\S+)", str(err))
            name = found.group(1).strip("'\"") if found else None
            if name is not None and name in source.columns:
                kinds = sorted({type(v).__name__ for v in source[name].tolist()})
                where = f"column {name!r} (dtype {source[name].dtype}, holding {', '.join(kinds)})"
                fix = f"df[{name!r}].astype(float)"
            else:
                where, fix = "a column", "df[column].astype(float)"
            raise TypeError(f"{argument}: the pandas DataFrame's {where} mixes kinds of values (e.g. text "
                            f"and numbers) and cannot be read; make it one type, e.g. "
                            f"{fix}") from None
    if module == "polars" and type(source).__name__ in ("DataFrame", "LazyFrame"):
        frame = source.collect() if type(source).__name__ == "LazyFrame" else source
        return frame.to_arrow(), "the polars DataFrame"
    return None


@dataclass(frozen=True)
class Given:
    """A source passed on under another argument than the one its user gave it as:
    messages name ``argument`` (``human_qrels`` for a human sample that compare
    evaluates as judgments) and, for an object in memory, call it ``describe``
    ("the run") when given, so that they speak of what the user passed."""
    source: Any
    argument: str
    describe: str | None = None


def open_source(source, roles: dict[str, str], *, batch_rows: int = 1 << 20,
                trec: Callable[[str], pa.Table] | None = None, name: str = "source") -> Source:
    """A :class:`Source` reading columns ``roles`` (name -> "query"/"doc"/"score"/"label").

    ``trec``: a reader for non-Parquet files (qrels mode reads TREC runs with it);
    without it a file must be Parquet. ``name``: the parameter messages name (a
    :class:`Given` source names its own)."""
    describe = None
    if isinstance(source, Given):
        source, name, describe = source.source, source.argument, source.describe
    if isinstance(source, (str, os.PathLike)):
        source = V.input_path(source, name)
        if trec is not None and os.path.isfile(source) and not is_parquet_file(source):
            src = _table_source(trec(source), roles, repr(source), batch_rows)
            src.paths = [source]
            return src
        return _parquet_source(source, roles, batch_rows, name)
    src = _memory_source(source, roles, batch_rows, name)
    if src is not None:
        if describe is not None:
            src.describe = describe
        else:
            src.argument = name
        return src
    what = kind_of(source)
    got = "" if what.startswith("an iterator") else f"; got {V.shown(source)}"
    raise TypeError(f"{name}: cannot read {what} as a search log; pass a Parquet "
                    f"file, directory or glob, a pyarrow Table / Dataset / RecordBatchReader, "
                    f"a pandas or polars DataFrame, a dict of dicts, ir_measures' records or "
                    f"a ranx Run / Qrels{got}")


def kind_of(obj) -> str:
    """What messages call the kind of a user's object: "a list", "a generator"; a
    class of its own (itertools.tee's ``_tee``, ...) by what it is."""
    kind = type(obj)
    if not kind.__name__.startswith("_"):
        return f"a {kind.__name__}"
    name = f"{kind.__module__}.{kind.__name__.lstrip('_')}"
    if hasattr(obj, "__next__"):
        return f"an iterator ({name})"
    return f"an object of class {name}"


def _memory_source(source, roles: dict[str, str], batch_rows: int, name: str) -> Source | None:
    """An object in memory as a Source, or None when it is none that can be read.
    Other arguments than ``source`` are named in its description (messages about
    the qrels say "the Arrow table given as qrels=")."""
    def named(describe: str) -> str:
        return describe if name == "source" else f"{describe} given as {name}="

    if isinstance(source, pa.RecordBatch):
        source = pa.Table.from_batches([source])
    if isinstance(source, pa.Table):
        return _table_source(source, roles, named("the Arrow table"), batch_rows)
    if _is_dataset(source):
        return _dataset_source(source, roles, named("the Arrow dataset"), batch_rows)
    if isinstance(source, pa.RecordBatchReader):
        return _reader_source(source, roles, batch_rows, named("the RecordBatchReader"))
    frame = _frame_table(source, name)
    if frame is not None:
        return _table_source(foreign.recognise(frame[0], roles, named(frame[1])), roles,
                             named(frame[1]), batch_rows)
    shaped = foreign.table_of(source, roles, name)
    if shaped is not None:
        return _table_source(shaped[0], roles, named(shaped[1]), batch_rows)
    return None


# --------------------------------------------------------------------------- TREC text files

_RUN_FIELDS = ("qid", "Q0", "docno", "rank", "score", "tag")
_QREL_FIELDS = ("qid", "iter", "docno", "rel")
_NUMBER = r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$|^[+-]?(inf|infinity|nan)$"


def _fast_read(path: str, fields: tuple, take: dict[int, tuple[str, pa.DataType]],
               delimiter: str) -> pa.Table:
    """The common case, by pyarrow's multi-threaded CSV reader: one tab or one space
    between fields, the same number of fields on every line. Anything else (runs of
    spaces, trailing fields, a bad number) is an Arrow error, and the caller falls
    back to :func:`_slow_read`. The columns come back as one chunk each (the CSV
    reader's blocks are small), so a run is scored in batches of many queries."""
    import pyarrow.csv as csv

    names = [f"f{i}" for i in range(len(fields))]
    table = csv.read_csv(
        path,
        read_options=csv.ReadOptions(column_names=names, block_size=1 << 24),
        parse_options=csv.ParseOptions(delimiter=delimiter, quote_char=False,
                                       double_quote=False, escape_char=False),
        convert_options=csv.ConvertOptions(
            include_columns=[names[i] for i in take],
            column_types={names[i]: t for i, (_, t) in take.items()},
            strings_can_be_null=False, quoted_strings_can_be_null=False, null_values=[]))
    cols = []
    for i, (_, t) in take.items():
        col = table[names[i]]
        if delimiter != " " and pa.types.is_large_string(t):
            col = pc.utf8_trim_whitespace(col)
        cols.append(col)
    return pa.table(cols, names=[n for n, _ in take.values()]).combine_chunks()


def _lines(path: str) -> pa.Array:
    try:
        with pa.input_stream(path, compression="detect") as f:
            data = f.read()
    except _ARROW_ERRORS as err:
        raise ValueError(compressed_error(path, err)) from None
    try:
        # one large_binary value over the file's bytes (not pa.array([data]): pyarrow
        # imports pandas in pa.array)
        ends = pa.py_buffer(np.array([0, len(data)], np.int64))
        text = pa.Array.from_buffers(pa.large_binary(), 1, [None, ends, pa.py_buffer(data)]
                                     ).cast(pa.large_string())
    except pa.ArrowInvalid:
        raw = bytes(data)
        try:
            raw.decode("utf-8")
            where = ""
        except UnicodeDecodeError as err:
            line = raw.count(b"\n", 0, err.start) + 1
            where = f" (byte 0x{raw[err.start]:02x} at line {line}, offset {err.start})"
        raise ValueError(f"{path!r} is not UTF-8 text{where}; is it a TREC file? If it is, "
                         f"save it as UTF-8 (e.g. iconv -f ITS-ENCODING -t utf-8)") from None
    # a byte-order mark (asked of Arrow: text[0].as_py() would copy the whole file)
    if pc.starts_with(text, "\ufeff")[0].as_py():
        text = pc.utf8_slice_codeunits(text, 1)
    # \n, \r\n and a lone \r all end a line (old Mac files, mixed line ends)
    return pc.split_pattern_regex(text, "\r\n|\r|\n")[0].values


def compressed_error(path: str, err: Exception | None = None) -> str:
    kind = os.path.splitext(path)[1].lower().lstrip(".")
    if kind not in ("gz", "bz2", "zst", "lz4", "br"):
        return f"cannot read {path!r}: {short_error(err) if err else 'unreadable'}; check the file"
    return (f"cannot read {path!r}: it is not a complete {kind} file (damaged, truncated, or "
            f"not {kind}-compressed although named so); compress it again, or rename it to "
            f"match what it holds")


_TWO_53 = scalar(2.0 ** 53, pa.float64())


def _slow_read(path: str, fields: tuple, take: dict[int, tuple[str, pa.DataType]],
               strict: bool = False) -> pa.Table:
    """Any whitespace, trailing fields (unless ``strict``), exact line numbers in errors."""
    lines = pc.utf8_trim_whitespace(_lines(path))
    length = pc.utf8_length(lines)
    keep = pc.not_equal(length, scalar(0, length.type))
    line_no = pc.filter(from_numpy(np.arange(1, len(lines) + 1, dtype=np.int64)), keep)
    lines = pc.filter(lines, keep)
    parts = pc.split_pattern_regex(lines, r"[ \t\r\f\v]+")
    n_parts = pc.list_value_length(parts)
    short = pc.less(n_parts, scalar(len(fields), n_parts.type))
    if pc.any(short).as_py():
        i = pc.index(short, True).as_py()
        hint = " (is this a qrels file given as the run?)" if len(fields) == 6 else ""
        raise ValueError(f"{path}:{line_no[i].as_py()}: expected {len(fields)} whitespace-separated "
                         f"fields ({' '.join(fields)}), got {lines[i].as_py()!r}{hint}; fix or "
                         f"remove the line")
    if strict:
        # trailing fields are tolerated, but a run's line (qid Q0 docno rank score tag)
        # read as qrels would make ranks into grades: refuse it
        second = pc.utf8_upper(pc.list_element(parts, scalar(1, pa.int64())))
        run_like = pc.and_(pc.greater(n_parts, scalar(len(fields), n_parts.type)),
                           pc.equal(second, scalar("Q0", second.type)))
        if pc.any(run_like).as_py():
            i = pc.index(run_like, True).as_py()
            raise ValueError(f"{path}:{line_no[i].as_py()}: {lines[i].as_py()!r} is a TREC run "
                             f"line (qid Q0 docno rank score tag), not qrels (qid iter docno "
                             f"rel): give this file as the run and the judgments as qrels")
    cols = []
    for i, (name, t) in take.items():
        col = pc.list_element(parts, scalar(i, pa.int64()))
        if not pa.types.is_large_string(t):
            bad = pc.invert(pc.match_substring_regex(col, _NUMBER, ignore_case=True))
            if pc.any(bad).as_py():
                j = pc.index(bad, True).as_py()
                raise ValueError(f"{path}:{line_no[j].as_py()}: field {fields[i]} must be a number, "
                                 f"got {col[j].as_py()!r}; fix or remove the line")
            as_float = col.cast(pa.float64())
            if pa.types.is_integer(t) and not (
                    pc.all(pc.is_finite(as_float)).as_py()
                    and pc.all(pc.less(pc.abs(as_float), _TWO_53)).as_py()
                    and pc.all(pc.equal(pc.floor(as_float), as_float)).as_py()):
                t = pa.float64()  # fractional grades are allowed; inf/nan are checked later
            col = as_float.cast(t)
        cols.append(col)
    return pa.table(cols, names=[n for n, _ in take.values()])


def _read_trec(path: str, fields: tuple, take: dict[int, tuple[str, pa.DataType]],
               strict: bool = False, careful: bool = False) -> pa.Table:
    """A TREC file by :func:`_fast_read`, or by :func:`_slow_read` when that fails (or
    with ``careful``): both give the same table."""
    utf8_path(path)
    if not os.path.exists(path):
        V.path_text(path, "the path")  # a NUL byte is named as such
        raise FileNotFoundError(f"{path!r} does not exist; check the path")
    if os.path.isdir(path):
        raise ValueError(f"{path!r} is a directory; a TREC file is one text file")
    try:
        with pa.input_stream(path, compression="detect") as f:
            head = f.read(4096)
    except _ARROW_ERRORS as err:
        raise ValueError(compressed_error(path, err)) from None
    first = head.split(b"\n", 1)[0]
    delimiter = "\t" if b"\t" in first else " "
    if not careful:
        table = _compiled_read(path, fields, take)
        if table is not None:
            return table
        try:
            return _fast_read(path, fields, take, delimiter)
        except _ARROW_ERRORS:
            pass
    return _slow_read(path, fields, take, strict)


def _compiled_read(path: str, fields: tuple, take: dict[int, tuple[str, pa.DataType]]
                   ) -> pa.Table | None:
    """The usual file by the compiled reader (:func:`fastndcg.trectext.read_text`,
    rules "io"), or None when it is not one: the ids as strings, a run's score as a
    double, a qrels grade as a whole number (whole grades only: the same values
    whether the grades are read as numbers or, for C's atol, as text)."""
    from .trectext import read_text

    try:
        with pa.input_stream(path, compression="detect") as f:
            data = f.read()
    except _ARROW_ERRORS as err:
        raise ValueError(compressed_error(path, err)) from None
    if data.startswith(b"\xef\xbb\xbf"):  # a byte-order mark, as _lines drops it
        data = data[3:]
    names = [take[i][0] for i in sorted(take)]
    text = read_text(data, "run" if fields == _RUN_FIELDS else "qrels", "io", tag=5 in take,
                     names=names)
    return None if text is None else text.table


def run_columns(query: str = "query_id", doc: str = "doc_id", score: str = "score") -> dict:
    """The fields of a TREC run line that are read: position -> (column, type)."""
    return {0: (query, pa.large_string()), 2: (doc, pa.large_string()), 4: (score, pa.float64())}


def qrels_columns(query: str = "query_id", doc: str = "doc_id", label: str = "label") -> dict:
    """The fields of a TREC qrels line that are read: position -> (column, type)."""
    return {0: (query, pa.large_string()), 2: (doc, pa.large_string()), 3: (label, pa.int64())}


def read_trec_run(path: str | os.PathLike, *, query: str = "query_id", doc: str = "doc_id",
                  score: str = "score", tag: str | None = None) -> pa.Table:
    """A TREC run file (``qid Q0 docno rank score tag``, .gz/.bz2/.zst too) as a table
    of query (string), doc (string), score (float64), and with ``tag`` (a column
    name) the run tag (string). ``rank`` is ignored, as by trec_eval; fields after
    ``tag`` are ignored. Separators: any spaces or tabs.

    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "run.txt")
    >>> _ = open(p, "w").write("q1 Q0 d1 1 2.5 tag\\nq1 Q0 d2 2 1.5 tag extra\\n")
    >>> read_trec_run(p).to_pydict()
    {'query_id': ['q1', 'q1'], 'doc_id': ['d1', 'd2'], 'score': [2.5, 1.5]}
    """
    take = run_columns(query, doc, score)
    if tag is not None:
        take[5] = (tag, pa.large_string())
    return _read_trec(os.fspath(path), _RUN_FIELDS, take)


def read_trec_qrels(path: str | os.PathLike, *, query: str = "query_id", doc: str = "doc_id",
                    label: str = "label", preset: str | None = None) -> pa.Table:
    """A TREC qrels file (``qid iter docno rel``) as a table of query (string), doc
    (string), label (int64; float64 when a grade is fractional). With ``preset``, a
    grade that is not a whole number is read as that preset's tool reads it
    (:func:`fastndcg.presets.read_grades`), the messages naming the file and line:
    ``preset="trec_eval"`` reads C's atol of the field as written ('2.7' and '27e-1'
    -> 2, '-0.5' -> 0).

    >>> import tempfile, os, warnings
    >>> p = os.path.join(tempfile.mkdtemp(), "qrels.txt")
    >>> _ = open(p, "w").write("q1 0 d1 2.7\\nq1 0 d2 -0.5\\n")
    >>> read_trec_qrels(p).column("label").to_pylist()
    [2.7, -0.5]
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     read_trec_qrels(p, preset="trec_eval").column("label").to_pylist()
    [2, 0]
    """
    from .presets import grades_of, read_grades

    path = os.fspath(path)
    take = qrels_columns(query, doc, label)
    grades = grades_of(preset)
    if grades.text in ("atol", "int"):  # the grade's text read as the tool reads it
        take[3] = (label, pa.large_string())
        table = _read_trec(path, _QREL_FIELDS, take, strict=True)
        if not pa.types.is_integer(table.column(2).type):  # (whole grades are read already)
            read = _atol_grades if grades.text == "atol" else _int_grades
            table = table.set_column(2, label, read(table.column(2), path, preset))
        if grades.bounds:
            read_grades(as_numpy(one_array(table.column(2))), preset,
                        lambda i: f"{path}:{_line_of(path, i)}")
        return table
    table = _read_trec(path, _QREL_FIELDS, take, strict=True)
    if grades.rule == "as given" or pa.types.is_integer(table.column(2).type):
        return table
    labels = table.column(2).to_numpy()
    read = read_grades(labels, preset, lambda i: f"{path}:{_line_of(path, i)}")
    return table if read is labels else table.set_column(2, label, pa.array(read))


def _line_of(path: str, row: int) -> int:
    """The line number of the ``row``-th (from 0) line of a TREC file that is not blank:
    the line that row of its table was read from."""
    lines = pc.utf8_trim_whitespace(_lines(path))
    return int(np.flatnonzero(pc.not_equal(pc.utf8_length(lines), 0).to_numpy(
        zero_copy_only=False))[row]) + 1


WHOLE = r"^[+-]?[0-9]+$"  # a grade written as a whole number
_LONG_MIN, _LONG_MAX = -(1 << 63), (1 << 63) - 1


def c_atol(token: str) -> int:
    """C's atol of a field: its leading whole number (0 without one), held at the
    64-bit bounds as glibc holds it: '2.7' -> 2, '-0.5' -> 0, '1e3' -> 1.

    >>> [c_atol(t) for t in ("2.7", "-0.5", "-1.7", "1e3", "+3", "abc")]
    [2, 0, -1, 1, 3, 0]
    """
    sign = token[:1] if token[:1] in ("+", "-") else ""
    rest = token[len(sign):]
    n = len(rest) - len(rest.lstrip("0123456789"))
    if n == 0:
        return 0
    return max(_LONG_MIN, min(_LONG_MAX, int(sign + rest[:n])))


def whole_grades(grades: pa.Array) -> pa.Array:
    """Grades written as whole numbers ([+-]digits) as int64, held at the 64-bit
    bounds as atol holds them."""
    try:
        return pc.replace_substring_regex(grades, r"^\+", "").cast(pa.int64())
    except pa.ArrowInvalid:  # past 64 bits
        return pa.array([c_atol(g) for g in grades.to_pylist()], pa.int64())


def _int_grades(texts, path: str, preset: str) -> pa.Array:
    """A qrels file's grades (text) as Python's int() reads them (ranx's and
    ir_measures' readers): as int64, a grade that is not a whole number, or is one
    past 64 bits, refused naming its line."""
    from .presets import grades_of

    grades = grades_of(preset)
    texts = texts.combine_chunks() if isinstance(texts, pa.ChunkedArray) else texts
    plain = pc.and_(pc.match_substring_regex(texts, WHOLE),
                    pc.less_equal(pc.utf8_length(texts), 18))  # (fits in 64 bits)
    values = whole_grades(pc.if_else(plain, texts, "0")).to_numpy().copy()
    lo, hi = grades.bounds or (_LONG_MIN, _LONG_MAX)
    for i in np.flatnonzero(~plain.to_numpy(zero_copy_only=False)):  # the few others
        text = texts[int(i)].as_py()
        try:
            value = int(text)
        except ValueError:
            raise ValueError(grades.bad_text(text, f"{path}:{_line_of(path, int(i))}",
                                             preset)) from None
        if not lo <= value <= hi:
            raise ValueError(grades.out_of_bounds(value, f"{path}:{_line_of(path, int(i))}",
                                                  preset))
        values[i] = value
    return pa.array(values, pa.int64())


def _atol_grades(texts, path: str, preset: str) -> pa.Array:
    """A qrels file's grades (text) as trec_eval reads them, C's atol of each, whatever
    the text (0 where it starts with no digit): one
    :class:`~fastndcg.presets.GradeWarning` naming the first that is not a whole
    number."""
    from .presets import grades_of, warn_grade

    texts = texts.combine_chunks() if isinstance(texts, pa.ChunkedArray) else texts
    whole = pc.match_substring_regex(texts, WHOLE)
    if not len(texts) or pc.all(whole).as_py():  # (an empty file: said by the caller)
        return whole_grades(texts)
    lead = pc.extract_regex(texts, r"^(?P<n>[+-]?[0-9]*)").field("n")
    lead = pc.if_else(pc.match_substring_regex(lead, "[0-9]"), lead, "0")
    values = whole_grades(lead)
    i = pc.index(whole, False).as_py()
    count = len(texts) - pc.sum(whole).as_py()
    warn_grade(grades_of(preset).warning(texts[i].as_py(), values[i].as_py(),
                                         f"{path}:{_line_of(path, i)}", count, preset))
    return values
