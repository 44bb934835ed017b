"""One validator per kind of value, shared by every entry point (Python API,
command line, Dask, compare).

Each raises ``TypeError`` (wrong kind of value) or ``ValueError`` (right kind,
wrong value) with a message that names the parameter, shows the offending value
(shortened) and says what to write instead. The command line turns the names of
parameters into its flags, so the same check gives the same text everywhere.
"""

from __future__ import annotations

import difflib
import numbers
import os
import re
import stat
from typing import Iterable, Mapping

MAX_SHOWN = 60  # characters of an offending value shown in a message

MAX_CUTOFF = 10 ** 9  # the largest cutoff k anywhere (a name, k=, -k): more is "the whole list"
MAX_REL = 2 ** 53     # the largest relevance threshold (labels are exact in float64 up to it)

PLOT_EXTS = (".png", ".pdf", ".svg", ".jpg", ".jpeg")  # what matplotlib writes here

MAX_TREC_GRADE = (1 << 16) - 1  # the largest grade trec_eval's gain pairs may name


class TrecGains(tuple):
    """trec_eval's gains (``-m ndcg.1=0,2=3``): ``((grade, gain), ...)`` in the order
    given, as :func:`fastndcg.measures.parse` reads and checks them. A grade not
    listed keeps itself as its gain. As a gain argument it is the table of grades
    0..MAX_TREC_GRADE; ``str()`` is trec_eval's text of the pairs (``1=0,2=3``)."""

    def table(self) -> list:
        gains = [float(g) for g in range(MAX_TREC_GRADE + 1)]
        for grade, gain in self:
            gains[grade] = float(gain)
        return gains

    def __str__(self) -> str:
        return ",".join(f"{grade}={gain:g}" for grade, gain in self)

    def __repr__(self) -> str:
        return f"trec_eval's gains {self}"


def shown(value) -> str:
    """``repr(value)``, shortened to MAX_SHOWN characters: its start and its end
    (where a path keeps its file name). A multi-line repr (a NumPy array, a
    DataFrame) is put on one line: a message is one line."""
    text = re.sub(r"\n\s*", " ", repr(value))  # a str's repr escapes its own newlines
    if len(text) <= MAX_SHOWN:
        return text
    head = (MAX_SHOWN - 3) // 3
    return text[:head] + "..." + text[len(text) - (MAX_SHOWN - 3 - head):]


def text(value, name: str, *, what: str = "a name") -> str:
    """A non-empty string without NUL bytes (column names, addresses, ...)."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string ({what}), got {shown(value)} "
                        f"({type(value).__name__})")
    if not value.strip():
        raise ValueError(f"{name} is empty ({shown(value)}); give {what}, or leave the "
                         f"option out")
    if "\0" in value:
        raise ValueError(f"{name} contains a NUL byte: {shown(value)}; remove it")
    return value


def flag(value, name: str) -> bool:
    """True or False (NumPy's bools too); anything else, even truthy, is refused."""
    if isinstance(value, bool):
        return value
    if type(value).__module__ == "numpy" and type(value).__name__ in ("bool_", "bool"):
        return bool(value)
    raise TypeError(f"{name} must be True or False, got {shown(value)} "
                    f"({type(value).__name__})")


def level(value, name: str) -> float:
    """A confidence level: a real number strictly between 0 and 1 (NumPy's floats
    too; bools refused)."""
    numpy_bool = type(value).__module__ == "numpy" and type(value).__name__ in ("bool_", "bool")
    if (isinstance(value, bool) or numpy_bool or not isinstance(value, numbers.Real)
            or not 0 < value < 1):
        raise ValueError(f"{name} must be a number between 0 and 1 (exclusive), e.g. 0.95; "
                         f"got {shown(value)}")
    return float(value)


def count(value, name: str, *, lo: int = 1, hi: int | None = None, fix: str = "") -> int:
    """An int in [lo, hi] (bool refused); ``hi`` bounds work that grows with it."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int >= {lo}, got {shown(value)} "
                        f"({type(value).__name__})")
    value = int(value)
    if value < lo:
        raise ValueError(f"{name} must be >= {lo}, got {value}" + (f"; {fix}" if fix else ""))
    if hi is not None and value > hi:
        raise ValueError(f"{name} must be <= {hi:,}, got {value:,}: the work grows with it"
                         + (f"; {fix}" if fix else ""))
    return value


def path_text(value, name: str) -> str:
    """A path given as str or os.PathLike: not empty, no NUL byte; returned as str."""
    if not isinstance(value, (str, os.PathLike)):
        raise TypeError(f"{name} must be a path (str or os.PathLike), got {shown(value)} "
                        f"({type(value).__name__})")
    raw = os.fspath(value)
    if isinstance(raw, bytes):
        raise TypeError(f"{name} must be a text path, got bytes {shown(raw)}; decode it")
    if not raw.strip():
        raise ValueError(f"{name} is an empty path ({shown(raw)}); name a file or directory")
    if "\0" in raw:
        raise ValueError(f"{name} contains a NUL byte: {shown(raw)}; remove it")
    return raw


def input_path(value, name: str) -> str:
    """A path to read (see :func:`path_text`): when it exists, a regular file or a
    directory. A FIFO, device or socket is refused before it is opened: it would
    block or read endlessly, and a log is read more than once."""
    raw = path_text(value, name)
    try:
        mode = os.stat(raw).st_mode
    except OSError:
        return raw  # a glob, or missing: the reader says which
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        kind = ("a FIFO" if stat.S_ISFIFO(mode) else "a device" if stat.S_ISCHR(mode)
                or stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode) else "not a file")
        raise ValueError(f"{name} {shown(raw)} is {kind}, not a file or directory; write the "
                         f"data to a file and name that")
    return raw


def _real(path: str) -> str:
    return os.path.realpath(os.path.abspath(os.path.expanduser(path)))


class OutputIsInput(ValueError):
    """An output path is, holds or sits inside a file the command reads."""


def output_path(value, name: str, inputs: Iterable = (), *, exts: tuple = (),
                directory: bool = False) -> str:
    """An output path, checked before anything is written: a path (see
    :func:`path_text`) whose extension is one of ``exts`` (when given, for a file);
    never an input, inside an input directory, or a directory holding an input,
    links resolved (a link to the log is the log); not a FIFO, device or socket;
    its parent writable. Returns the absolute path (links in it kept)."""
    raw = path_text(value, name)
    path = os.path.abspath(os.path.expanduser(raw))
    if not directory and os.path.isdir(path):
        raise ValueError(f"{name} {shown(raw)} is a directory; name a file")
    if exts and not directory:
        ext = os.path.splitext(path)[1].lower()
        if ext not in exts:
            listed = ", ".join(exts)
            raise ValueError(f"{name} must name a {listed} file, got {shown(raw)}; the "
                             f"extension says which format is written")
    target = _real(path)
    for item in inputs:
        if item is None or not isinstance(item, (str, os.PathLike)):
            continue
        src = os.fspath(item)
        if isinstance(src, bytes) or "\0" in src or not src.strip():
            continue
        real = _real(src)
        inside = os.path.isdir(real) and target.startswith(real.rstrip(os.sep) + os.sep)
        holds = os.path.isdir(target) and real.startswith(target.rstrip(os.sep) + os.sep)
        if real == target or inside or (directory and holds):
            how = "is" if real == target else "is inside" if inside else "holds"
            raise OutputIsInput(f"{name} {shown(raw)} {how} {shown(src)}, which this "
                                f"command reads (links followed); writing there would "
                                f"destroy the input. Choose another path")
    try:
        mode = os.stat(target).st_mode
    except OSError:
        mode = None
    if mode is not None and not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        raise ValueError(f"{name} {shown(raw)} is not a regular file or directory (a FIFO, "
                         f"device or socket); name a file")
    if mode is not None and stat.S_ISDIR(mode) and not directory:
        raise ValueError(f"{name} {shown(raw)} is a directory; name a file")
    parent = target if (directory and mode is not None) else os.path.dirname(target)
    probe = parent
    while probe and not os.path.exists(probe):
        probe = os.path.dirname(probe)
    try:  # a real probe: permissions alone miss read-only mounts and /proc
        import tempfile

        tempfile.TemporaryFile(dir=probe or ".").close()
    except OSError as err:
        raise ValueError(f"{name} {shown(raw)}: cannot write in {shown(probe)} "
                         f"({err.strerror or err}); choose a writable place") from None
    return path


def keywords(given: Iterable[str], known: Iterable[str], where: str,
             elsewhere: Mapping[str, str] | None = None) -> None:
    """The keyword arguments a ``**kwargs`` of ``where`` (a function's public name,
    e.g. ``"fastndcg.compare"``) caught are all ones it takes (``known``), as Python
    checks a signature, with a fix: a name ``elsewhere`` lists (name -> why it is
    not taken here, e.g. where it belongs) is refused with that reason; any other
    name with the closest one it takes. ``TypeError``, as Python's own refusal."""
    known = list(known)
    elsewhere = dict(elsewhere or {})
    for name in given:
        if name in known:
            continue
        if name in elsewhere:
            raise TypeError(f"{where}() does not take {name}=: {elsewhere[name]}")
        candidates = known + [n for n in elsewhere if n not in known]
        close = ([k for k in candidates if k.lower() == str(name).lower()]
                 or difflib.get_close_matches(str(name), candidates, n=1, cutoff=0.75))
        if not close:
            fix = f"; see help({where}) for the arguments it takes"
        elif close[0] in known:
            fix = f"; did you mean {close[0]!r}?"
        else:
            fix = f"; did you mean {close[0]!r}? {where}() does not take it either: " \
                  f"{elsewhere[close[0]]}"
        raise TypeError(f"{where}() got an unknown keyword argument {shown(name)}{fix}")
