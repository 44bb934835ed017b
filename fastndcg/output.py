"""Output staging: the ``per_query`` target of an evaluation.

:class:`Output` owns the user's target (``per_query``): it checks it before
anything is read, stages parts next to it and moves them into place only when the
evaluation succeeded, so a failed run never leaves a partial or clobbered output.
:func:`read_per_query` reads a committed target back.
"""

from __future__ import annotations

import os
import shutil
import uuid
from typing import Any

import pyarrow as pa

from . import _validate as V
from ._validate import OutputIsInput
from .parts import Part

__all__ = ["Output", "OutputIsInput", "read_per_query", "FILE_EXTS"]

FILE_EXTS = (".parquet", ".pq", ".csv")  # the files a per-query target may be


class Output:
    """The ``per_query`` target: None (in memory), False (nothing), a file
    (``.parquet``/``.pq``/``.csv``) or a directory of Parquet parts.

    Checked and prepared before anything is read: a target that is (or holds) a
    file the evaluation reads is refused; a missing directory is created; an
    unwritable place is reported. Parts are staged in a hidden directory and
    moved into place by :meth:`commit`; :meth:`abort` removes them."""

    def __init__(self, per_query: Any, inputs: list[str], *, directory: bool = False) -> None:
        self.spec = per_query
        self.inputs = tuple(inputs)  # the files the evaluation reads
        self.kind = "memory" if per_query is None else "none" if per_query is False else "path"
        self.path: str | None = None
        self.is_dir = False
        self.staging: str | None = None
        if per_query is True:
            raise TypeError("per_query takes None (a table in memory), False (none), or a "
                            "path (a .parquet or .csv file, or a directory); got True")
        if self.kind != "path":
            return
        if not isinstance(per_query, (str, os.PathLike)):
            raise TypeError(f"per_query takes None, False or a path, got {per_query!r} "
                            f"({type(per_query).__name__})")
        raw = V.path_text(per_query, "per_query")
        path = os.path.abspath(os.path.expanduser(raw))
        ext = os.path.splitext(path)[1].lower()
        self.is_dir = (directory or os.path.isdir(path) or raw.endswith(("/", os.sep))
                       or ext == "")
        if not self.is_dir and ext not in FILE_EXTS:
            raise ValueError(f"per_query must name a .parquet or .csv file, or a directory (a "
                             f"name without extension), got {raw!r}")
        if self.is_dir and ext == ".csv":
            raise ValueError(f"per_query {raw!r}: a directory of per-query parts is written "
                             f"as Parquet; name a .csv file or a directory")
        self.path = path
        self.format = "csv" if ext == ".csv" and not self.is_dir else "parquet"
        # the one output guard: inputs (links followed), FIFOs and devices, writability
        V.output_path(raw, "per_query", inputs, exts=FILE_EXTS, directory=self.is_dir)
        self._prepare()

    def _prepare(self) -> None:
        parent = self.path if self.is_dir else os.path.dirname(self.path)
        token = uuid.uuid4().hex[:12]
        # the outermost directory this creates, removed again (if empty) by abort()
        self._created = None
        probe = parent
        while probe and not os.path.exists(probe):
            self._created = probe
            probe = os.path.dirname(probe)
        try:
            if self.is_dir:
                os.makedirs(self.path, exist_ok=True)
                stray = [f for f in os.listdir(self.path)
                         if not f.startswith((".", "_")) and not _is_part_name(f)]
                if stray:
                    raise ValueError(f"per_query directory {self.spec!r} already holds "
                                     f"{stray[0]!r} (and {len(stray) - 1} more files) that are "
                                     f"not per-query parts; name an empty or new directory")
                self.staging = os.path.join(self.path, f".fastndcg-staging-{token}")
            else:
                if os.path.isdir(self.path):
                    raise ValueError(f"per_query {self.spec!r} is a directory")
                os.makedirs(parent, exist_ok=True)
                self.staging = os.path.join(parent, f".{os.path.basename(self.path)}.fastndcg-{token}")
            os.makedirs(self.staging)
            probe = os.path.join(self.staging, "probe")
            with open(probe, "wb"):
                pass
            os.remove(probe)
        except OSError as err:
            raise ValueError(f"cannot write per-query results to {self.spec!r}: "
                             f"{err.strerror or err}; choose a writable path") from None

    def part_path(self, index: int) -> str | None:
        """Where part ``index`` is staged (None: keep in memory or nothing)."""
        if self.kind != "path":
            return None
        return os.path.join(self.staging, f"part-{index:06d}.parquet")

    def commit(self, parts: list[Part]) -> Any:
        """Move the parts into place; returns what ``Report.per_query`` is made from."""
        if self.kind == "memory":
            tables = [p.table() for p in parts]
            return pa.concat_tables(tables) if tables else None
        if self.kind == "none":
            return None
        try:
            if self.is_dir:
                for f in os.listdir(self.path):
                    if _is_part_name(f):
                        os.remove(os.path.join(self.path, f))
                for i, p in enumerate(parts):
                    os.replace(p.path, os.path.join(self.path, f"part-{i:06d}.parquet"))
            elif self.format == "parquet" and len(parts) == 1:
                os.replace(parts[0].path, self.path)
            else:
                _write_single(parts, self.path, self.format)
        finally:
            self._remove_staging()
        return self.path

    def abort(self) -> None:
        """Remove the staged parts; after a failed run also the directories this
        created, if nothing else was put there."""
        self._remove_staging()
        created = getattr(self, "_created", None)
        if created:
            d = self.path if self.is_dir else os.path.dirname(self.path)
            while True:  # from the innermost up to the first one this created, if empty
                try:
                    os.rmdir(d)
                except OSError:
                    return
                if d == created:
                    return
                d = os.path.dirname(d)

    def _remove_staging(self) -> None:
        for _ in range(5):  # a file created while removing: try again
            if not (self.staging and os.path.isdir(self.staging)):
                return
            shutil.rmtree(self.staging, ignore_errors=True)


def _is_part_name(name: str) -> bool:
    return name.startswith("part-") and name.endswith(".parquet")


def _write_single(parts: list[Part], path: str, fmt: str) -> None:
    """Parts streamed into one Parquet or CSV file (written beside, then renamed)."""
    tmp = path + ".fastndcg-tmp"
    schema = parts[0].schema
    if fmt == "csv":
        import pyarrow.csv as csv
        writer = csv.CSVWriter(tmp, schema)
    else:
        import pyarrow.parquet as pq
        writer = pq.ParquetWriter(tmp, schema, compression="snappy")
    try:
        for p in parts:
            for b in p.iter_results():
                if b.num_rows:
                    writer.write_batch(b.cast(schema) if b.schema != schema else b)
    finally:
        writer.close()
    os.replace(tmp, path)


def read_per_query(path: str, schema: pa.Schema | None) -> pa.Table:
    """A committed per-query target read back (a file, or a directory of parts in
    name order)."""
    if os.path.isdir(path):
        import pyarrow.parquet as pq
        files = sorted(f for f in os.listdir(path) if _is_part_name(f))
        tables = [pq.read_table(os.path.join(path, f)) for f in files]
        if not tables:
            return schema.empty_table() if schema is not None else pa.table({})
        return pa.concat_tables(tables)
    if path.lower().endswith(".csv"):
        import pyarrow.csv as csv
        types = {f.name: f.type for f in schema} if schema is not None else None
        return csv.read_csv(path, convert_options=csv.ConvertOptions(column_types=types))
    import pyarrow.parquet as pq
    return pq.read_table(path)
