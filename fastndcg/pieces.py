"""A Parquet log cut into pieces that workers read and score themselves, and the
stitching of the queries that straddle pieces: shared by the Dask and Spark paths.

A piece is some row groups of one file (or a slice of a table, or a partition of
a Dask DataFrame). Each is scored by :func:`score_piece` with the one partition
scorer in edges mode: its first and last run of rows may continue in the
neighbouring pieces, so they come back unscored, and :func:`stitch` joins the
edges of consecutive pieces into whole queries and scores them with the same
scorer, in slot order (piece ``i``'s part is slot ``2 i + 1``, the queries
stitched before it slot ``2 i``), so per-query results come out in log order.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

from . import io
from .chunks import regroup
from .partition import Options, PartitionResult, Scorer, score_sets, sorted_before
from .qrels import Qrels
from .output import Output
from .parts import Part, PartWriter
from .totals import Totals

PARTITION_ROWS = 16 << 20  # rows per piece when a Parquet file is cut by row groups


@dataclass
class Piece:
    """One partition: row groups of a Parquet file, a table slice, or a DataFrame partition."""
    kind: str                     # "parquet" | "table" | "frame"
    path: str | None = None
    row_groups: list | None = None
    filesystem: Any = None        # pyarrow filesystem for "parquet"
    data: Any = None              # table slice, or a future of a pandas partition
    row0: int = 0                 # number of its first row in the whole log (messages)

    def meta(self) -> "Piece":
        """The piece without its data (passed to tasks separately, so Dask resolves
        a future there)."""
        return Piece(self.kind, self.path, self.row_groups, self.filesystem, None, self.row0)


@dataclass
class Context:
    """What every task needs besides its piece (small, pickled once per task)."""
    opts: Options
    columns: list
    schema: pa.Schema             # of the source columns
    result_schema: pa.Schema
    batch_rows: int
    keep: bool                    # keep per-query results (memory or files)
    staging: str | None           # where parts are written (None: returned in memory)


def list_parquet(source: str, roles: dict, partition_rows: int, min_pieces: int = 1
                 ) -> tuple[list, pa.Schema, str, list]:
    """Files of a path, directory or glob (local or fsspec URL) cut into pieces of
    at most ``partition_rows`` rows (at row-group boundaries), and into at least
    ``min_pieces`` where the row groups allow."""
    import pyarrow.parquet as pq
    from pyarrow.fs import FileSelector, FileSystem, FileType, FSSpecHandler, PyFileSystem

    if "://" in source and not source.startswith("file://"):
        import fsspec
        fs_, root = fsspec.core.url_to_fs(source)
        fs = PyFileSystem(FSSpecHandler(fs_))
    else:
        local = source[len("file://"):] if source.startswith("file://") else source
        fs, root = FileSystem.from_uri(os.path.abspath(os.path.expanduser(local)))
    inputs: list[str] = []
    if any(ch in root for ch in "*?["):
        import fnmatch
        base = root
        while any(ch in base for ch in "*?["):
            base = os.path.dirname(base)
        infos = fs.get_file_info(FileSelector(base, recursive=True, allow_not_found=True))
        paths = sorted(i.path for i in infos if i.type == FileType.File
                       and fnmatch.fnmatch(i.path, root) and not hidden(i.path, base))
        if not paths:
            raise FileNotFoundError(f"source: no files match {source!r}; check the pattern")
        describe = f"{source!r} ({len(paths)} files)"
    else:
        info = fs.get_file_info(root)
        if info.type == FileType.NotFound:
            raise FileNotFoundError(f"source {source!r} does not exist; check the path")
        if info.type == FileType.Directory:
            infos = fs.get_file_info(FileSelector(root, recursive=True))
            paths = sorted(i.path for i in infos if i.type == FileType.File
                           and not hidden(i.path, root))
            if not paths:
                raise FileNotFoundError(f"directory {source!r} holds no data files (names "
                                        f"starting with '.' or '_' are skipped); put the "
                                        f"Parquet files there or name another directory")
            describe = f"directory {source!r} ({len(paths)} files)"
            inputs.append(root)
        else:
            paths = [root]
            describe = repr(source)
    from pyarrow.fs import LocalFileSystem
    if isinstance(fs, LocalFileSystem):
        inputs += paths
    cols = list(roles)

    def footer(path):
        try:
            with fs.open_input_file(path) as f:
                if f.read(4) != b"PAR1":
                    raise ValueError(f"{path!r} is not a Parquet file (no PAR1 magic bytes)")
                f.seek(0)
                meta = pq.ParquetFile(f).metadata
                return meta, meta.schema.to_arrow_schema()
        except (pa.ArrowException, OSError) as err:
            raise ValueError(f"cannot read {path!r} as Parquet: {io.short_error(err)}; is the "
                             f"file complete and not corrupt? Write it again") from None

    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(8) as pool:
        footers = list(pool.map(footer, paths))
    # a piece ends before a row group that would cross partition_rows, or whose
    # middle lies in another of the min_pieces equal shares of the log than the
    # middle of the piece's first group (so pieces come out about equal)
    share = sum(meta.num_rows for meta, _ in footers) / max(1, min_pieces)
    schemas = []
    pieces = []
    row0 = 0
    for path, (meta, schema) in zip(paths, footers):
        io.check_columns(schema, roles, repr(path) if len(paths) > 1 else describe)
        schemas.append(pa.schema([schema.field(c).with_nullable(True) for c in cols]))
        groups, rows, bucket = [], 0, -1
        for g in range(meta.num_row_groups):
            n = meta.row_group(g).num_rows
            mid = int((row0 + rows + n / 2) // share) if share else 0
            if groups and (rows + n > partition_rows or mid != bucket):
                pieces.append(Piece("parquet", path, groups, fs, row0=row0))
                groups, row0, rows = [], row0 + rows, 0
            if not groups:
                bucket = mid
            groups.append(g)
            rows += n
        if groups or not pieces or pieces[-1].path != path:
            pieces.append(Piece("parquet", path, groups, fs, row0=row0))
        row0 += rows
    return pieces, io.common_schema(schemas, paths), describe, inputs


def hidden(path: str, root: str) -> bool:
    rel = os.path.relpath(path, root) if path != root else os.path.basename(path)
    return any(part.startswith((".", "_")) for part in rel.split(os.sep))


def piece_batches(piece: Piece, data, ctx: Context, columns: list | None = None):
    cols = ctx.columns if columns is None else columns
    if piece.kind == "parquet":
        schema = pa.schema([ctx.schema.field(c) for c in cols])
        if piece.row_groups == []:
            return iter(())
        return io.read_parquet_file(piece.path, cols, schema, ctx.batch_rows,
                                    row_groups=piece.row_groups, filesystem=piece.filesystem)
    table = data
    if piece.kind == "frame":
        table = pa.Table.from_pandas(table, preserve_index=False)
    table = table.select(cols)
    return iter(table.to_batches(max_chunksize=ctx.batch_rows))


def describe(piece: Piece) -> str:
    return repr(piece.path) if piece.kind == "parquet" else "a partition"



def score_piece(piece: Piece, data, ctx: Context, qrels: Qrels | None, slot: int
                ) -> tuple[PartitionResult, Part]:
    """Score a piece's whole queries, its edge runs returned unscored; its per-query
    part written to the staging directory as ``slot`` (or kept in memory)."""
    return score_piece_sets(piece, data, [ctx], [qrels], slot)[0]


def score_piece_sets(piece: Piece, data, ctxs: list, qrels: list, slot: int,
                     on_scored=None) -> list:
    """:func:`score_piece` under several label sets, the piece read and ranked once
    (:func:`~fastndcg.partition.score_sets`): set ``j`` scored with ``qrels[j]``,
    its part written as ``ctxs[j]`` says. One ``(PartitionResult, Part)`` a set.
    ``on_scored``: as :func:`~fastndcg.partition.score_sets` takes it (the edges,
    returned unscored, are not seen)."""
    writers = [PartWriter(c.result_schema, None if c.staging is None else
                          os.path.join(c.staging, f"part-{slot:06d}.parquet"), keep=c.keep)
               for c in ctxs]
    try:
        results = score_sets(piece_batches(piece, data, ctxs[0]),
                             [Scorer(c.opts, q) for c, q in zip(ctxs, qrels)], writers,
                             edges=True, row0=piece.row0, on_scored=on_scored)
    except BaseException:
        for w in writers:
            w.abort()
        raise
    return [(r, w.close()) for r, w in zip(results, writers)]


class Edges:
    """Stitches the edge runs of consecutive pieces into whole queries."""

    def __init__(self, query: str) -> None:
        self.query = query
        self.open: list[pa.Table] = []
        self.open_id = None
        self.done: dict[int, list[pa.Table]] = {}  # slot -> whole queries, in order

    def _close(self, slot: int) -> None:
        if self.open:
            self.done.setdefault(slot, []).append(pa.concat_tables(self.open))
        self.open, self.open_id = [], None

    def add(self, index: int, head: pa.Table | None, tail: pa.Table | None) -> bool:
        """Piece ``index``'s edges; returns whether its head continues the open query."""
        if head is None:
            return False
        head_id = first_id(head, self.query)
        joined = bool(self.open) and head_id == self.open_id
        if not joined:
            self._close(2 * index)
        self.open.append(head)
        self.open_id = head_id
        if tail is not None:
            self._close(2 * index)
            self.open, self.open_id = [tail], first_id(tail, self.query)
        return joined

    def finish(self, n_pieces: int) -> dict[int, list[pa.Table]]:
        self._close(2 * n_pieces)
        return self.done


def first_id(table: pa.Table, query: str):
    from ._arrow import plain_ids
    return plain_ids(table.column(query).slice(0, 1))[0].as_py()


@dataclass
class Stitched:
    """The pieces' results put together (see :func:`stitch`)."""
    parts: dict                   # slot -> Part
    slot_totals: dict             # slot -> Totals
    seen: np.ndarray | None       # qrels mode: judged queries present
    unjudged: list
    n_rows: int
    ordered: bool                 # run ids increasing across the whole log
    joined: list                  # per piece: its head continues the previous piece
    n_missing: int
    edges: Edges = field(repr=False, default=None)

    def totals(self, names: list[str], weighted: bool) -> Totals:
        total = Totals.empty(names, weighted=weighted)
        for s in sorted(self.slot_totals):
            total = total.merge(self.slot_totals[s])
        return total


def in_order(results: list) -> bool:
    """Whether the run ids increase across the pieces' ``(PartitionResult, ...)`` in
    log order (each piece's own, and from one piece's last to the next one's first),
    so no query can be scattered."""
    last = None
    for res, _ in results:
        if res.first_id is None:
            continue
        if not res.sorted or (last is not None and not sorted_before(last, res.first_id, True)):
            return False
        last = res.last_id
    return True


def stitch(results: list, opts: Options, judged: Qrels | None, output: Output,
           schema_out: pa.Schema) -> Stitched:
    """Join the edges of consecutive pieces into whole queries, score them here, and
    gather every piece's totals, parts and counts (``results``: ``(PartitionResult,
    Part)`` per piece, in log order)."""
    scorer = Scorer(opts, judged)
    edges = Edges(opts.query)
    joined = [edges.add(i, res.head, res.tail) for i, (res, _) in enumerate(results)]
    parts: dict[int, Part] = {}
    slot_totals: dict[int, Totals] = {}
    seen = None if judged is None else np.zeros(judged.n_queries, bool)
    unjudged = []
    keep = output.kind != "none"
    for slot, tables in edges.finish(len(results)).items():
        writer = PartWriter(schema_out, output.part_path(slot), keep=keep)
        total = Totals.empty(opts.names, weighted=opts.weight is not None)
        for t in tables:
            s = scorer.score_chunk(regroup(t, opts.query))
            total = total.merge(writer.add(s))
            if s.unjudged is not None:
                unjudged.append(s.unjudged)
            if s.judged is not None:
                seen[s.judged] = True
        parts[slot], slot_totals[slot] = writer.close(), total
    n_rows = 0
    for i, (res, part) in enumerate(results):
        parts[2 * i + 1], slot_totals[2 * i + 1] = part, res.totals
        n_rows += res.n_rows
        if res.unjudged is not None:
            unjudged.append(res.unjudged)
        if seen is not None and res.seen is not None:
            seen |= res.seen
    ordered = in_order(results)
    n_missing = 0
    if judged is not None:
        missing = scorer.missing(seen)
        n_missing = 0 if missing is None else len(missing.ids)
        if missing is not None and opts.complete:
            slot = 2 * len(results) + 1
            writer = PartWriter(schema_out, output.part_path(slot), keep=keep)
            slot_totals[slot] = writer.add(missing)
            parts[slot] = writer.close()
    return Stitched(parts, slot_totals, seen, unjudged, n_rows, ordered, joined, n_missing, edges)
