"""Arrow column helpers shared by the evaluation modules: ids in one type per kind,
zero-copy string buffers, numeric columns as NumPy, run starts and id hashing."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from . import _core as C
from . import _kernels as K


def plain_ids(col, name: str = "ids") -> pa.Array:
    """Query or document ids as int64 (uint64 kept: ids above 2**63 - 1 fit only
    there) or large_string (one type per kind). ``name`` is for messages."""
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    if pa.types.is_dictionary(col.type):
        col = col.dictionary_decode()
    if pa.types.is_integer(col.type):
        if col.type == pa.uint64():
            return col
        return col if col.type == pa.int64() else col.cast(pa.int64())
    if col.type != pa.large_string():
        try:
            col = col.cast(pa.large_string())
        except pa.ArrowInvalid:
            raise ValueError(f"{name} hold bytes that are not UTF-8 text; ids must be integers "
                             f"or text: decode them (e.g. as hex) before evaluating") from None
    return col


def as_strings(col, name: str = "ids") -> pa.Array:
    col = plain_ids(col, name)
    return col if col.type == pa.large_string() else col.cast(pa.large_string())


def string_buffers(col, name: str = "ids") -> tuple[np.ndarray, np.ndarray]:
    """(bytes, int64 offsets) of a large_string array, zero copy."""
    col = as_strings(col, name)
    bufs = col.buffers()
    offsets = np.frombuffer(bufs[1], np.int64)[col.offset:col.offset + len(col) + 1]
    data = np.frombuffer(bufs[2], np.uint8) if bufs[2] is not None else np.zeros(1, np.uint8)
    if len(data) == 0:
        data = np.zeros(1, np.uint8)
    return data, offsets


def numbers(col, convert=None) -> np.ndarray:
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    if pa.types.is_dictionary(col.type):
        col = col.dictionary_decode()
    return C.numeric(col.to_numpy(zero_copy_only=False), "values", convert)


def concat_ids(parts: list[pa.Array]) -> list[pa.Array]:
    """Id arrays in one type (strings when integer and string ids meet)."""
    if len({p.type for p in parts}) > 1:
        return [as_strings(p) for p in parts]
    return parts


def run_starts(ids: pa.Array) -> np.ndarray:
    """Positions (> 0) where the query id differs from the row before."""
    n = len(ids)
    if n < 2:
        return np.zeros(0, np.int64)
    if pa.types.is_integer(ids.type):
        arr = ids.to_numpy()
        if arr.dtype.itemsize == 8:  # int64 / uint64: equality is bitwise
            return K.run_starts_int64(arr.view(np.int64))
        return np.flatnonzero(arr[1:] != arr[:-1]) + 1
    change = pc.not_equal(ids.slice(1), ids.slice(0, n - 1))
    # the positions in Arrow: no boolean array converted to NumPy
    return pc.indices_nonzero(change).to_numpy().astype(np.int64) + 1


def strictly_increasing(ids: pa.Array) -> bool:
    """Whether ``ids`` (int64 or large_string) are strictly increasing (byte order)."""
    if len(ids) < 2:
        return True
    if pa.types.is_integer(ids.type):
        arr = ids.to_numpy()
        return bool((arr[1:] > arr[:-1]).all())
    return bool(pc.all(pc.greater(ids.slice(1), ids.slice(0, len(ids) - 1))).as_py())


def id_hash(ids: pa.Array) -> np.ndarray:
    """A well-mixed uint64 hash of each id (int64 or large_string), the same in every
    process, for spreading ids over buckets."""
    out = np.empty(len(ids), np.uint64)
    if pa.types.is_integer(ids.type):
        K.hash_int64(ids.to_numpy().view(np.int64), out)
    else:
        data, offsets = string_buffers(ids)
        K.hash_strings(data, offsets, out)
    return out
