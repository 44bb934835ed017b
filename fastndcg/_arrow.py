"""Arrow column helpers shared by the evaluation modules: ids in one type per kind,
zero-copy string buffers, numeric columns as NumPy, run starts and id hashing.

Arrow <-> NumPy goes through :func:`as_numpy`, :func:`from_numpy` and :func:`scalar`,
never through ``Array.to_numpy()``, ``pa.array(ndarray)`` or ``pa.scalar()``: pyarrow
imports pandas (~0.25 s) inside each of those, even for a zero-copy conversion, and
a TREC run scored from the command line has no use for pandas."""

from __future__ import annotations

import threading

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from . import _core as C
from . import _kernels as K


_NUMPY = {pa.int8(): np.int8, pa.int16(): np.int16, pa.int32(): np.int32,
          pa.int64(): np.int64, pa.uint8(): np.uint8, pa.uint16(): np.uint16,
          pa.uint32(): np.uint32, pa.uint64(): np.uint64, pa.float16(): np.float16,
          pa.float32(): np.float32, pa.float64(): np.float64}
_ARROW = {np.dtype(v): k for k, v in _NUMPY.items()}


def _bits(buf, offset: int, n: int) -> np.ndarray:
    """``n`` bits of an Arrow bitmap (least significant bit first) from bit
    ``offset``, as a writable bool array."""
    first = offset // 8
    raw = np.frombuffer(buf, np.uint8, (offset + n + 7) // 8 - first, first)
    return np.unpackbits(raw, bitorder="little")[offset % 8:offset % 8 + n].view(np.bool_)


def one_array(col) -> pa.Array:
    """An array, or a chunked array as one array: its only chunk as it is
    (``combine_chunks`` copies even one chunk)."""
    if not isinstance(col, pa.ChunkedArray):
        return col
    return col.chunk(0) if col.num_chunks == 1 else col.combine_chunks()


def as_numpy(arr, zero_copy_only: bool = False) -> np.ndarray:
    """An Arrow array (or chunked array) as NumPy, as ``arr.to_numpy(zero_copy_only=False)``
    gives it, without importing pandas (which pyarrow does inside ``to_numpy``).

    Integers and floats without nulls: a read-only view of the Arrow buffer (a
    chunked array of several chunks is combined first). With nulls: a writable
    float copy, NaN at the nulls (integers become float64, as with ``to_numpy``).
    Booleans: a writable bool copy (an object array with None at the nulls).
    Dictionaries are decoded. Other types (strings, timestamps, ...) go through
    ``to_numpy(zero_copy_only=False)``.

    ``zero_copy_only=True``: as ``Array.to_numpy()``'s default, anything but the
    read-only view (nulls, booleans, dictionaries, other types) is an
    ``ArrowInvalid``."""
    arr = one_array(arr)
    t, n = arr.type, len(arr)
    dtype = _NUMPY.get(t)
    if zero_copy_only and (dtype is None or arr.null_count):
        raise pa.ArrowInvalid(f"cannot view {'nulls of ' if dtype else ''}an Arrow {t} array "
                              f"as NumPy without a copy")
    if pa.types.is_dictionary(t):
        return as_numpy(arr.dictionary_decode())
    data = arr.buffers()[1] if dtype is not None and n else None
    if dtype is not None and n == 0:
        values = np.empty(0, dtype)
        values.flags.writeable = False
        return values
    if data is not None:
        values = np.frombuffer(data, dtype, n, arr.offset * np.dtype(dtype).itemsize)
        if not arr.null_count:
            # read-only even over a mutable buffer (an array pa.array shared with NumPy),
            # as to_numpy() gives it: Arrow data must not change under its array
            values.flags.writeable = False
            return values
        valid = _bits(arr.buffers()[0], arr.offset, n)
        out = values.astype(np.float64 if values.dtype.kind in "iu" else values.dtype)
        out[~valid] = np.nan
        return out
    if pa.types.is_boolean(t):
        values = _bits(arr.buffers()[1], arr.offset, n) if n else np.zeros(0, np.bool_)
        if not arr.null_count:
            return values
        out = values.astype(object)
        out[~_bits(arr.buffers()[0], arr.offset, n)] = None
        return out
    if pa.types.is_null(t):
        return np.full(n, None, object)
    return arr.to_numpy(zero_copy_only=False)


def from_numpy(values, type: pa.DataType | None = None) -> pa.Array:
    """``pa.array(values, type)`` for a 1-d NumPy array of integers, floats or
    booleans, without importing pandas (which pyarrow does inside ``pa.array``):
    numbers are shared with ``values`` as ``pa.array`` shares them (no copy of a
    contiguous array; NaN stays a value, not a null). Anything else goes to
    ``pa.array``."""
    if not isinstance(values, np.ndarray) or values.ndim != 1 or not values.dtype.isnative:
        return pa.array(values, type)
    if values.dtype == np.bool_:
        packed = np.packbits(values, bitorder="little")
        out = pa.Array.from_buffers(pa.bool_(), len(values), [None, pa.py_buffer(packed)])
    elif values.dtype in _ARROW:
        data = np.ascontiguousarray(values)
        out = pa.Array.from_buffers(_ARROW[data.dtype], len(data), [None, pa.py_buffer(data)])
    else:
        return pa.array(values, type)
    return out if type is None or out.type == type else out.cast(type)


def scalar(value, type: pa.DataType) -> pa.Scalar:
    """``pa.scalar(value, type)`` for a number, bool or text, without importing
    pandas (which pyarrow does inside ``pa.scalar``)."""
    if pa.types.is_string(type) or pa.types.is_large_string(type):
        data = str(value).encode("utf-8")
        offsets = np.array([0, len(data)], np.int64 if pa.types.is_large_string(type) else np.int32)
        return pa.Array.from_buffers(type, 1, [None, pa.py_buffer(offsets),
                                               pa.py_buffer(data)])[0]
    if type == pa.bool_() or type in _NUMPY:
        dtype = np.bool_ if type == pa.bool_() else _NUMPY[type]
        return from_numpy(np.array([value], dtype))[0]
    return pa.scalar(value, type)


def plain_ids(col, name: str = "ids", narrow: bool = False) -> pa.Array:
    """Query or document ids as int64 (uint64 kept: ids above 2**63 - 1 fit only
    there) or large_string (one type per kind). ``name`` is for messages.
    ``narrow``: string ids (32-bit offsets) kept as they are, for a step that reads
    them only through :func:`text_buffers` (the cast writes new offsets for every
    id: ~1 ns an id, mostly the first touch of new memory)."""
    col = one_array(col)
    if pa.types.is_dictionary(col.type):
        col = col.dictionary_decode()
    if pa.types.is_integer(col.type):
        if col.type == pa.uint64():
            return col
        return col if col.type == pa.int64() else col.cast(pa.int64())
    if narrow and col.type == pa.string():
        return col
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
    return text_buffers(as_strings(col, name))


def text_buffers(col) -> tuple[np.ndarray, np.ndarray]:
    """(bytes, offsets) of a string or large_string array, zero copy: the offsets
    int32 or int64 as the array has them (for the kernels compiled for both)."""
    bufs = col.buffers()
    width = np.int64 if col.type == pa.large_string() else np.int32
    offsets = np.frombuffer(bufs[1], width)[col.offset:col.offset + len(col) + 1]
    data = np.frombuffer(bufs[2], np.uint8) if bufs[2] is not None else np.zeros(1, np.uint8)
    if len(data) == 0:
        data = np.zeros(1, np.uint8)
    return data, offsets


def numbers(col, convert=None) -> np.ndarray:
    col = one_array(col)
    if pa.types.is_dictionary(col.type):
        col = col.dictionary_decode()
    return C.numeric(as_numpy(col), "values", convert)


def concat_ids(parts: list[pa.Array]) -> list[pa.Array]:
    """Id arrays in one type (strings when integer and string ids meet)."""
    if len({p.type for p in parts}) > 1:
        return [as_strings(p) for p in parts]
    return parts


def run_starts(ids: pa.Array) -> np.ndarray:
    """Positions (> 0) where the query id differs from the row before (``ids`` as
    :func:`plain_ids` gives them, ``narrow`` or not)."""
    n = len(ids)
    if n < 2:
        return np.zeros(0, np.int64)
    if pa.types.is_integer(ids.type):
        arr = as_numpy(ids)
        if arr.dtype.itemsize == 8:  # int64 / uint64: equality is bitwise
            return K.run_starts_int64(arr.view(np.int64))
        return np.flatnonzero(arr[1:] != arr[:-1]) + 1
    packed = _packed_short(ids)
    if packed is not None:  # equal integers exactly where the text is equal
        return K.run_starts_int64(packed)
    change = pc.not_equal(ids.slice(1), ids.slice(0, n - 1))
    # the positions in Arrow: no boolean array converted to NumPy
    return as_numpy(pc.indices_nonzero(change)).astype(np.int64) + 1


def all_distinct(ids: pa.Array) -> bool:
    """Whether no id of ``ids`` (int64, uint64 or large_string) is there twice. Short
    text ids are packed into integers and sorted (Arrow's hash of each text id
    cost ~0.3 microseconds an id on 200,000 ids).

    >>> all_distinct(pa.array(["a", "b", "ab"], pa.large_string())), all_distinct(pa.array([1, 1]))
    (True, False)
    """
    if len(ids) < 2:
        return True
    packed = None if pa.types.is_integer(ids.type) else _packed_short(ids)
    if packed is None:
        return pc.count_distinct(ids).as_py() == len(ids)
    order = np.sort(packed)
    return not (order[1:] == order[:-1]).any()


_PACKED = threading.local()


def _packed_short(ids: pa.Array) -> np.ndarray | None:
    """Text ids of up to 7 bytes each packed into one int64 each (their bytes and
    length: :func:`fastndcg._kernels.join.pack_short`), in a buffer this thread
    reuses (valid until its next call), or None when an id is longer. Packing and
    comparing integers costs about half of Arrow's comparison of the text. ``ids``:
    string or large_string."""
    data, offsets = text_buffers(ids)
    buf = getattr(_PACKED, "buf", None)
    if buf is None or len(buf) < len(ids):
        buf = _PACKED.buf = np.empty(max(len(ids), 1 << 16), np.int64)
    out = buf[:len(ids)]
    return out if K.pack_short(data, offsets, out) else None


def strictly_increasing(ids: pa.Array) -> bool:
    """Whether ``ids`` (int64 or large_string) are strictly increasing (byte order)."""
    if len(ids) < 2:
        return True
    if pa.types.is_integer(ids.type):
        arr = as_numpy(ids)
        return bool((arr[1:] > arr[:-1]).all())
    return bool(pc.all(pc.greater(ids.slice(1), ids.slice(0, len(ids) - 1))).as_py())


def id_hash(ids: pa.Array) -> np.ndarray:
    """A well-mixed uint64 hash of each id (int64 or large_string), the same in every
    process, for spreading ids over buckets."""
    out = np.empty(len(ids), np.uint64)
    if pa.types.is_integer(ids.type):
        K.hash_int64(as_numpy(ids).view(np.int64), out)
    else:
        data, offsets = string_buffers(ids)
        K.hash_strings(data, offsets, out)
    return out
