"""Every entry point x every option x every invalid value, generated from the options
specification (:data:`fastndcg.options.OPTIONS`).

The invalid values of an option come from what the specification declares of it:
its kind of value (its validator), its choices and the ranges of
:mod:`fastndcg._validate`, so that a new option of a known kind is tried here
without a line written for it, and a new kind fails
``test_every_kind_of_option_has_invalid_values`` until it has some. For every
entry point that takes evaluation options (the Python functions, the Dask and
Spark ones, the command line's subcommands), the suite asserts, for every option
the entry point takes and every invalid value of it:

* the call raises ``TypeError`` or ``ValueError`` (the command line: exit status 2,
  one ``fastndcg: error:`` line, nothing on stdout), before any work;
* the message names the option as the caller spells it (``ties`` in Python,
  ``--ties`` on the command line), and never an internal name;

for every option it refuses, that any value of it is refused naming it; for every
option, that a keyword one letter away is refused naming the keyword and
suggesting the option; and on the command line, that every option given twice is
refused.
"""

from __future__ import annotations

import inspect
import math
import re

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import fastndcg
from fastndcg import cli
from fastndcg import options as O
from fastndcg import _validate as V

# --------------------------------------------------------------------------- invalid values

# by the option's validator: values no option of that kind takes, in Python
_BY_KIND = {
    O._choice: lambda o: [5, 1.5, b"x", "no-such-value", "", (o.choices[0],),
                          o.choices[0].upper() + "X"],
    O._preset: lambda o: [5, "no-such-tool", "", ["trec_eval"]],
    O._score_precision: lambda o: [64, "float16", "", ("float32",)],
    O._column: lambda o: [5, "", " ", "a\0b", [o.default], None],
    O._weight_column: lambda o: [5, "", "a\0b", ["w"]],
    O._flag: lambda o: ["yes", 2, 1.0, "True"],
    O._cutoffs: lambda o: [0, -1, V.MAX_CUTOFF + 1, 1.5, "ten", [], [3, 0], math.nan,
                           [3, "x"]],
    O._gain: lambda o: ["exp3", "", 5, [], [0.0, math.nan], [0.0, math.inf], {"a": 1}],
    O._log_base: lambda o: [1, 1.0, 0, -2.0, math.nan, math.inf, "e", [2.0]],
    O._rel: lambda o: [-1, 1.5, "1", V.MAX_REL + 1, math.nan, [1]],
    O._measures: lambda o: ["no_such_measure", "", 5, ["ndcg@0"], [5], "ndcg@-1"],
    O._explain: lambda o: ["nope", 5, ["dcg", "nope"], 1.5],
    O._confidence: lambda o: [0, 1, 0.0, 1.0, 1.5, -0.1, math.nan, "0.9", [0.9]],
    O._ppi: lambda o: [-0.1, 1.1, "fixed", math.nan, [0.5]],
    O._qrels: lambda o: [{}, {"": "x.txt"}, {"a": 5}, {"a": None}, {5: "x.txt"}],
    O._as_read: lambda o: [{"p": "a.txt", "q": "b.txt"}],
}

# by the option's validator: the text of values the command line refuses
_TEXT_BY_KIND = {
    O._choice: lambda o: ["no-such-value", "", o.choices[0].upper() + "X"],
    O._preset: lambda o: ["no-such-tool", ""],
    O._score_precision: lambda o: ["float16", ""],
    O._column: lambda o: ["", " "],
    O._weight_column: lambda o: ["", " "],
    O._flag: lambda o: [],  # a switch: no value to get wrong (given twice: below)
    O._cutoffs: lambda o: ["0", "-1", str(V.MAX_CUTOFF + 1), "1.5", "ten", "", "3,0", "nan"],
    O._gain: lambda o: ["exp3", "", "0,nan", "0,inf", "a,b"],
    O._log_base: lambda o: ["1", "0", "-2", "nan", "inf", "e", ""],
    O._rel: lambda o: ["-1", "1.5", "x", str(V.MAX_REL + 1), ""],
    O._measures: lambda o: ["no_such_measure", "ndcg@0", "ndcg@-1"],
    O._explain: lambda o: ["nope", "dcg,nope"],
    O._confidence: lambda o: ["0", "1", "1.5", "-0.1", "nan", "x"],
    O._ppi: lambda o: ["-0.1", "1.1", "fixed", "nan"],
    O._qrels: lambda o: [],  # paths: the readers' refusals are tested with the files
    O._as_read: lambda o: [],
}


def invalid_values(name: str) -> list:
    return _BY_KIND[O.OPTIONS[name].check](O.OPTIONS[name])


def invalid_texts(name: str) -> list:
    return _TEXT_BY_KIND[O.OPTIONS[name].check](O.OPTIONS[name])


def test_every_kind_of_option_has_invalid_values():
    for name, o in O.OPTIONS.items():
        assert o.check in _BY_KIND and o.check in _TEXT_BY_KIND, \
            f"option {name!r}: its kind of value ({o.check.__name__}) has no invalid values here"
        assert invalid_values(name), name


# --------------------------------------------------------------------------- entry points

def _table() -> pa.Table:
    q = np.repeat(np.arange(4, dtype=np.int64), 3)
    return pa.table({"query_id": q, "doc_id": np.arange(12, dtype=np.int64),
                     "score": np.linspace(1.0, 0.0, 12), "s2": np.linspace(0.0, 1.0, 12),
                     "label": np.array([1, 0, 2] * 4, np.int64),
                     "w": np.ones(12)})


TABLE = _table()
SET_B = TABLE.select(["query_id", "doc_id"]).append_column(
    "label", pa.array([1, 1, 2, 0, 0, 2, 1, 0, 2, 1, 0, 0], pa.int64()))
QRELS = TABLE.select(["query_id", "doc_id", "label"])
# scores, labels, offsets of the arrays functions
ARRAYS = (np.array([0.9, 0.3, 0.3, 0.8, 0.1]), np.array([2, 0, 1, 1, 0]), np.array([0, 3, 5]))


def _dask():
    import fastndcg.dask as fd
    return fd


def _spark():
    import fastndcg.spark as fs
    return fs


# name -> (call with the option keywords, the options it refuses: name -> why, or
# None where the signature says). Each call's valid arguments are the smallest the
# entry point reads; every refusal here comes before any data is read.
def _compare_refuses() -> dict:
    """The options compare does not pass on and does not take itself."""
    own = inspect.signature(fastndcg.compare).parameters
    return {n: o.compared for n, o in O.OPTIONS.items()
            if o.compared is not True and n not in own}


ENTRY_POINTS = {
    "fastndcg.evaluate": (lambda **kw: fastndcg.evaluate(TABLE, **kw), None),
    "fastndcg.evaluate_runs": (lambda **kw: fastndcg.evaluate_runs([("a", TABLE)], **kw), None),
    "fastndcg.agreement": (lambda **kw: fastndcg.agreement(QRELS, SET_B, **kw), None),
    "fastndcg.compare": (lambda **kw: fastndcg.compare(TABLE, ["score", "s2"], **kw),
                         _compare_refuses()),
    "fastndcg.dask.evaluate": (lambda **kw: _dask().evaluate(TABLE, **kw), None),
    "fastndcg.spark.evaluate": (lambda **kw: _spark().evaluate(TABLE, spark=None, **kw), None),
    "fastndcg.ndcg": (lambda **kw: fastndcg.ndcg(*ARRAYS, **kw), None),
    "fastndcg.dcg": (lambda **kw: fastndcg.dcg(*ARRAYS, **kw), None),
    "fastndcg.idcg": (lambda **kw: fastndcg.idcg(*ARRAYS[1:], **kw), None),
    "fastndcg.measure": (lambda **kw: fastndcg.measure(*ARRAYS, **kw), None),
}


def _function(where: str):
    return {"fastndcg.evaluate": fastndcg.evaluate,
            "fastndcg.evaluate_runs": fastndcg.evaluate_runs,
            "fastndcg.agreement": fastndcg.agreement, "fastndcg.compare": fastndcg.compare,
            "fastndcg.dask.evaluate": _dask().evaluate,
            "fastndcg.spark.evaluate": _spark().evaluate,
            "fastndcg.ndcg": fastndcg.ndcg, "fastndcg.dcg": fastndcg.dcg,
            "fastndcg.idcg": fastndcg.idcg, "fastndcg.measure": fastndcg.measure}[where]


def taken_and_refused(where: str) -> tuple[list, list]:
    """(options the entry point takes, options it refuses), from its signature (or,
    for compare, which forwards ``**options``, from each option's ``compared``)."""
    refuses = ENTRY_POINTS[where][1]
    if refuses is None:
        params = inspect.signature(_function(where)).parameters
        taken = [n for n in O.OPTIONS if n in params]
        return taken, [n for n in O.OPTIONS if n not in params]
    return [n for n in O.OPTIONS if n not in refuses], list(refuses)


CASES = [(where, name, i) for where in ENTRY_POINTS
         for name in taken_and_refused(where)[0] for i in range(len(invalid_values(name)))]
REFUSED = [(where, name) for where in ENTRY_POINTS for name in taken_and_refused(where)[1]]

# names of the package's insides that a message must never show
INTERNAL = re.compile(r"fastndcg\._|_kernels|\bcheck_options\b|\bbound\(|\bOPTIONS\b|"
                      r"Traceback|object at 0x")


def _message_names(message: str, spelled: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(spelled)}(?![\w])", message) is not None


def _refused(call, where: str, kw: dict) -> BaseException:
    try:
        call(**kw)
    except (TypeError, ValueError) as err:
        return err
    raise AssertionError(f"{where}({', '.join(f'{k}={v!r}' for k, v in kw.items())}) "
                         f"was accepted")


@pytest.mark.parametrize("where,name,i", CASES)
def test_every_invalid_value_is_refused_naming_the_option(where, name, i):
    value = invalid_values(name)[i]
    err = _refused(ENTRY_POINTS[where][0], where, {name: value})
    message = str(err)
    # one structured error: the option and the value it refused, as given
    assert isinstance(err, fastndcg.OptionError), (where, name, value, type(err), message)
    assert err.option == name and err.value is value, (where, name, err.option, err.value)
    assert _message_names(message, name), f"{where}({name}={value!r}): {message!r}"
    assert not INTERNAL.search(message), f"{where}({name}={value!r}): {message!r}"


@pytest.mark.parametrize("where,name", REFUSED)
def test_every_refused_option_is_refused_whatever_its_value(where, name):
    for value in (O.OPTIONS[name].default, invalid_values(name)[0]):
        err = _refused(ENTRY_POINTS[where][0], where, {name: value})
        assert isinstance(err, TypeError), (where, name, err)
        assert _message_names(str(err), name), (where, name, str(err))


def _typo(name: str) -> str:
    return name + name[-1]  # ties -> tiess, k -> kk


@pytest.mark.parametrize("where", list(ENTRY_POINTS))
def test_a_keyword_one_letter_off_suggests_the_option(where):
    taken = taken_and_refused(where)[0]
    params = set(inspect.signature(_function(where)).parameters)
    for name in taken:
        typo = _typo(name)
        if typo in params or typo in O.OPTIONS:
            continue
        err = _refused(ENTRY_POINTS[where][0], where, {typo: O.OPTIONS[name].default})
        assert isinstance(err, TypeError), (where, typo, err)
        message = str(err)
        assert repr(typo) in message and f"did you mean {name!r}" in message, \
            f"{where}({typo}=...): {message!r}"


# --------------------------------------------------------------------------- the command line

@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    d = tmp_path_factory.mktemp("every_option")
    log = d / "log.parquet"
    pq.write_table(TABLE, log)
    qa, qb = d / "a.txt", d / "b.txt"
    for path, table in ((qa, QRELS), (qb, SET_B)):
        path.write_text("".join(f"{q} 0 {doc} {g}\n" for q, doc, g in zip(
            *(table[c].to_pylist() for c in ("query_id", "doc_id", "label")))))
    return {"evaluate": [str(log), "--quiet"],
            "compare": [str(log), "--systems", "score,s2", "--quiet"],
            "agreement": [str(qa), str(qb)]}


def _subcommand(command: str):
    import argparse
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices[command]


def cli_options(command: str) -> list:
    """The options whose flags the subcommand has: (option name, its flag)."""
    dests = {a.dest for a in _subcommand(command)._actions}
    return [(n, o.flags[-1]) for n, o in O.OPTIONS.items() if o.flags and o.dest in dests]


COMMANDS = ("evaluate", "compare", "agreement")
CLI_CASES = [(c, name, flag, text) for c in COMMANDS for name, flag in cli_options(c)
             for text in invalid_texts(name)]


def _run(argv) -> tuple[int, str, str]:
    import contextlib
    import io
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = cli.main(argv)
    return rc, out.getvalue(), err.getvalue()


def _assert_usage_error(argv, rc, out, err, flag):
    assert rc == 2, f"{argv}: exit {rc}, stderr {err!r}"
    assert out == "", f"{argv}: stdout {out!r}"
    assert err.startswith("fastndcg: error: ") and err.count("\n") == 1, f"{argv}: {err!r}"
    assert _message_names(err, flag), f"{argv}: does not name {flag}: {err!r}"
    assert not INTERNAL.search(err), f"{argv}: {err!r}"
    # the Python spelling of an option (``ties=``) never shows on the command line (a
    # measure's parameter, as in ``AP(rel=2)``, is a measure's name)
    names = "|".join(sorted(O.OPTIONS, key=len, reverse=True))
    python = re.findall(rf"(?<![\w(,/-])({names})=", err)
    assert not python, f"{argv}: Python's spelling {python} in {err!r}"


@pytest.mark.parametrize("command,name,flag,text", CLI_CASES)
def test_every_invalid_text_is_refused_naming_the_flag(inputs, command, name, flag, text):
    argv = [command, *inputs[command], f"{flag}={text}" if text.startswith("-") or not text
            else flag, *([] if text.startswith("-") or not text else [text])]
    _assert_usage_error(argv, *_run(argv), flag)


@pytest.mark.parametrize("command", COMMANDS)
def test_every_flag_given_twice_is_refused(inputs, command):
    import argparse
    for action in _subcommand(command)._actions:
        if not action.option_strings or isinstance(action, (argparse._HelpAction,
                                                            argparse._AppendAction)):
            continue  # a repeatable flag (--qrels NAME=PATH, -m) takes every value given
        flag = action.option_strings[-1]
        if action.nargs == 0:
            twice = [flag, flag]
        else:
            value = action.choices[0] if action.choices else _a_value(action)
            if value is None:
                continue
            twice = [flag, str(value), flag, str(value)]
        argv = [command, *inputs[command], *twice]
        rc, out, err = _run(argv)
        assert rc == 2 and "twice" in err and _message_names(err, flag), \
            f"{argv}: exit {rc}, {err!r}"


def _a_value(action) -> str | None:
    """A valid value of a flag, for giving it twice: from the option it sets, else
    from the flag's default."""
    option = next((o for o in O.OPTIONS.values() if o.flags and o.dest == action.dest), None)
    if option is not None and option.default not in (None, False):
        d = option.default
        return ",".join(map(str, d)) if isinstance(d, (list, tuple)) else str(d)
    if action.default not in (None, False, True) and not isinstance(action.default, list):
        return str(action.default)
    return None
