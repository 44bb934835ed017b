"""One validator per kind of value, shared by every entry point (Python API,
command line, Dask, compare).

Each raises ``TypeError`` (wrong kind of value) or ``ValueError`` (right kind,
wrong value) with a message that names the parameter, shows the offending value
(shortened) and says what to write instead. A refused option value is an
:class:`OptionError` (:class:`OptionTypeError`, :class:`OptionValueError`), whose
message marks the options it names (:func:`spelled`) and renders them as the
caller spells them: the same check gives the same text everywhere, ``ties`` in
Python and ``--ties`` on the command line.
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


# --------------------------------------------------------------------------- refusals
#
# A refusal of an option's value is an OptionError: the option, the value, and a
# message whose mentions of options are marked (:func:`spelled`), so that it renders
# in the caller's spelling: ``ties`` / ``k=10`` in Python, ``--ties`` / ``-k 10`` on
# the command line. Nothing rewrites a message after the fact.

_MARK = re.compile("\ue000([^\ue001]*)\ue001([^\ue001]*)\ue001([^\ue001]*)\ue001([^\ue002]*)\ue002")


_NO_VALUE = object()
_NO_TEXT = "\ue003"  # no text of the value of its own on the command line


def spelled(name: str, value=_NO_VALUE, cli: str | None = None, *, ref: bool = False) -> str:
    """An option ``name`` named in a message, as the caller spells it: the name
    (Python ``ties``, the command line ``--ties``); with ``value``, the option given
    that value (``k=10`` / ``-k 10``; ``cli``: the command line's text of the value
    where it differs, as ``-k all`` for ``k=None``); with ``ref``, a mention of the
    option as something to give (``qrels=...`` / ``--qrels``).

    >>> str(OptionError("k", 0, f"{spelled('k')} must be >= 1; e.g. {spelled('k', 10)}"))
    'k must be >= 1; e.g. k=10'
    """
    kind = "=" if value is not _NO_VALUE else ("r" if ref else "")
    return (f"\ue000{name}\ue001{kind}\ue001{'' if value is _NO_VALUE else value}\ue001"
            f"{_NO_TEXT if cli is None else cli}\ue002")


def _python(name: str, kind: str, value: str, cli: str) -> str:
    return f"{name}={value}" if kind == "=" else f"{name}=..." if kind == "r" else name


class OptionError(Exception):
    """A value an option does not take: ``option`` (its Python name), ``value`` (as
    given) and the message, which names options as the caller spells them
    (:meth:`render`). Raised as :class:`OptionTypeError` (a ``TypeError``: the wrong
    kind of value) or :class:`OptionValueError` (a ``ValueError``: the right kind,
    a wrong value)."""

    def __init__(self, option: str, value, message: str) -> None:
        super().__init__(_MARK.sub(lambda m: _python(*m.groups()), message))  # repr, args
        self.option, self.value, self.template = option, value, message

    def __reduce__(self):  # shipped between processes (Dask, Spark) whole
        return type(self), (self.option, self.value, self.template)

    def render(self, flag_of=None) -> str:
        """The message with each option spelled by ``flag_of(name)`` (a flag such
        as ``--ties``; the value after it as the shell gives it), or in Python's
        spelling without ``flag_of``. A message that does not name its own option
        is prefixed with the flag (``--gain: the gain table ...``)."""
        if flag_of is None:
            return _MARK.sub(lambda m: _python(*m.groups()), self.template)

        def cli(m):
            name, kind, value, text = m.groups()
            flag = flag_of(name)
            if flag is None:
                return _python(name, kind, value, text)
            if kind != "=":
                return flag
            shell = value if text == _NO_TEXT else text  # "" for a switch: the flag alone
            return f"{flag} {shell}" if shell else flag
        text = _MARK.sub(cli, self.template)
        named = any(m.group(1) == self.option for m in _MARK.finditer(self.template))
        return text if named or not flag_of(self.option) else f"{flag_of(self.option)}: {text}"

    def __str__(self) -> str:
        return self.render()


class OptionTypeError(OptionError, TypeError):
    """An option given the wrong kind of value."""


class OptionValueError(OptionError, ValueError):
    """An option given a value of the right kind that it does not take."""


def refuse(kind: type, option: str, value, message: str) -> OptionError:
    """The :class:`OptionError` of ``kind`` (TypeError or ValueError) for ``value``
    of ``option``: raise it."""
    return (OptionTypeError if issubclass(kind, TypeError) else OptionValueError)(
        option, value, message)


def as_refusal(err: Exception, option: str, value) -> Exception:
    """``err`` raised by the validator of ``option`` as an :class:`OptionError` of
    the same kind (its message kept as it is), so that the caller's spelling
    names the option; an OptionError, or another kind of error, as it is."""
    if isinstance(err, OptionError) or not isinstance(err, (TypeError, ValueError)):
        return err
    return refuse(TypeError if isinstance(err, TypeError) else ValueError, option, value,
                  str(err))


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
        raise refuse(TypeError, name, value, f"{spelled(name)} must be a string ({what}), got "
                     f"{shown(value)} ({type(value).__name__})")
    if not value.strip():
        raise refuse(ValueError, name, value, f"{spelled(name)} is empty ({shown(value)}); give "
                     f"{what}, or leave the option out")
    if "\0" in value:
        raise refuse(ValueError, name, value,
                     f"{spelled(name)} contains a NUL byte: {shown(value)}; remove it")
    return value


def flag(value, name: str) -> bool:
    """True or False (NumPy's bools too); anything else, even truthy, is refused."""
    if isinstance(value, bool):
        return value
    if type(value).__module__ == "numpy" and type(value).__name__ in ("bool_", "bool"):
        return bool(value)
    raise refuse(TypeError, name, value, f"{spelled(name)} must be True or False, got "
                 f"{shown(value)} ({type(value).__name__})")


def level(value, name: str) -> float:
    """A confidence level: a real number strictly between 0 and 1 (NumPy's floats
    too; bools refused)."""
    numpy_bool = type(value).__module__ == "numpy" and type(value).__name__ in ("bool_", "bool")
    if (isinstance(value, bool) or numpy_bool or not isinstance(value, numbers.Real)
            or not 0 < value < 1):
        raise refuse(ValueError, name, value, f"{spelled(name)} must be a number between 0 and 1 "
                     f"(exclusive), e.g. 0.95; got {shown(value)}")
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


def _one_edit(a: str, b: str) -> bool:
    """Whether ``a`` becomes ``b`` by one letter added, dropped, changed, or two
    neighbours swapped (``kk`` -> ``k``, ``tie`` -> ``ties``, ``tise`` -> ``ties``)."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1
                                  and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]])
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    return any(long_[:i] + long_[i + 1:] == short for i in range(len(long_)))


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
                 or [k for k in candidates if _one_edit(str(name).lower(), k.lower())]
                 or difflib.get_close_matches(str(name), candidates, n=1, cutoff=0.75))
        if not close:
            fix = f"; see help({where}) for the arguments it takes"
        elif close[0] in known:
            fix = f"; did you mean {close[0]!r}?"
        else:
            fix = f"; did you mean {close[0]!r}? {where}() does not take it either: " \
                  f"{elsewhere[close[0]]}"
        raise TypeError(f"{where}() got an unknown keyword argument {shown(name)}{fix}")
