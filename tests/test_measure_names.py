"""Measure names that do not read: each is refused with a ``ValueError`` (a
``TypeError`` for what is not text) that quotes the name (cut to 60 characters)
and says what is wrong there and what to write; any text at all either reads or is
refused that way, quickly; and every column name reads back as its measure.

The valid names and their meanings are checked in ``tests/test_measures.py``.
"""

from __future__ import annotations

import ast
import re
import signal
import time
from contextlib import contextmanager

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastndcg.measures import (MAX_CUTOFF, MAX_GAIN_TABLE, MAX_REL, REGISTRY, Measure,
                               column_name, parse)

from strategies import examples


def shown(text: str) -> str:
    """How a message quotes a measure name: repr of it, cut to 60 characters."""
    return repr(text if len(text) <= 60 else text[:59] + "\u2026")


@contextmanager
def time_limit(seconds: float):
    """Fail (with TimeoutError, not a ValueError) when the block runs past ``seconds``."""
    def expire(signum, frame):
        raise TimeoutError(f"parse ran past {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


# --------------------------------------------------------------------------- hostile names

LONG_GAINS = "nDCG(gains={" + ",".join(f"{i}: 1" for i in range(MAX_GAIN_TABLE + 10)) + "})@3"

# (case, measure argument, the name the message must quote (None: the argument itself),
#  exception type, fragments the message must hold: what is wrong there and the fix)
HOSTILE = [
    # parameters given twice
    ("dcg-twice", "nDCG(dcg='log2',dcg='exp-log2')@3", None, ValueError,
     ["parameter 'dcg' is given twice", "characters 6 and 17", "give dcg once"]),
    ("rel-twice", "AP(rel=2, rel=3)", None, ValueError,
     ["parameter 'rel' is given twice", "give rel once"]),
    ("cutoff-twice", "nDCG(cutoff=3)@5", None, ValueError,
     ["the cutoff is given twice (cutoff=3 and @5)", "give it once: nDCG@5"]),
    ("params-twice", "nDCG(dcg='log2')(cutoff=3)", None, ValueError,
     ["parameters are given twice", "nDCG(...)@k"]),
    ("gain-label-twice", "nDCG(gains={0: 1, 0: 2})@3", None, ValueError,
     ["label 0 is given twice in gains", "give each label once"]),
    ("gains-with-exp-dcg", "nDCG(dcg='exp-log2', gains={0: 0, 1: 1})@3", None, ValueError,
     ["gains and dcg='exp-log2' do not go together", "drop dcg"]),
    # malformed values: the parameter and the value are named, never int()/float()'s text
    ("rel-letter", "RR(rel=x)", None, ValueError,
     ["rel 'x' is not a whole number (at character 8)", "e.g. RR(rel=2)"]),
    ("rel-fraction", "AP(rel=1.5)", None, ValueError,
     ["rel '1.5' is not a whole number", "AP(rel=2)"]),
    ("rel-quoted", "AP(rel='2')", None, ValueError,
     ["rel '2' is quoted", "AP(rel=2)"]),
    ("rel-huge", "RR(rel=99999999999999999999)", None, ValueError,
     [f"rel 99999999999999999999 must be <= {MAX_REL}", "a threshold from 0 to"]),
    ("rel-thousands-of-digits", "RR(rel=" + "9" * 5000 + ")", None, ValueError,
     [f"must be <= {MAX_REL}", "\u2026"]),
    ("rel-arabic-digit", "RR(rel=\u0662)", None, ValueError,
     ["expected rel (a whole number) at character 8, found '\u0662'"]),
    ("cutoff-exponent", "P@1e3", None, ValueError,
     ["cutoff '1e3' is not a whole number (at character 3)", "e.g. P@10"]),
    ("cutoff-negative", "P@-5", None, ValueError, ["cutoff -5 must be >= 1"]),
    ("cutoff-fraction", "nDCG@2.5", None, ValueError, ["cutoff '2.5' is not a whole number"]),
    ("cutoff-zero", "P@0", None, ValueError, ["cutoff 0 must be >= 1", "P@10"]),
    ("cutoff-zero-trec", "ndcg_cut.0", None, ValueError, ["cutoff 0 must be >= 1"]),
    ("cutoff-huge", f"P@{MAX_CUTOFF + 1}", None, ValueError,
     [f"cutoff {MAX_CUTOFF + 1} must be <= {MAX_CUTOFF}", f"from 1 to {MAX_CUTOFF}"]),
    ("cutoff-huge-trec", "P.5,99999999999999999999999", None, ValueError,
     [f"cutoff 99999999999999999999999 must be <= {MAX_CUTOFF}", "P.5,10"]),
    ("cutoff-param-letter", "nDCG(cutoff=x)", None, ValueError,
     ["cutoff 'x' is not a whole number", "nDCG(cutoff=10)"]),
    ("cutoff-arabic-digit", "P@\u0665", None, ValueError,
     ["expected cutoff (a whole number) at character 3, found '\u0665'"]),
    ("gain-letter", "nDCG(gains={0:a})@3", None, ValueError,
     ["the gain of label 0, 'a', is not a number (at character 15)",
      "gains={0: 0, 1: 1, 2: 3}"]),
    ("gain-python-expression", "nDCG(gains={0: 1, 10**9: 2})", None, ValueError,
     ["expected ':' after label 10 in gains at character 21, found '*'"]),
    ("gain-infinite", "nDCG(gains={0: 1e400})", None, ValueError,
     ["the gain of label 0, 1e400, is not finite", "finite numbers"]),
    ("gain-negative", "nDCG(gains={0: 1, 1: -1})", None, ValueError,
     ["the gain of label 1, -1, is negative", "use 0 for labels"]),
    ("gain-label-negative", "nDCG(gains={-1: 1})", None, ValueError,
     ["label '-1' in gains is not a whole number >= 0"]),
    ("gain-label-bool", "nDCG(gains={True: 1})", None, ValueError,
     ["label 'True' in gains is not a whole number >= 0"]),
    ("gains-list", "nDCG(gains=[1, 2])@5", None, ValueError,
     ["gains must map labels to their gains in braces", "found '['"]),
    ("gains-empty", "nDCG(gains={})", None, ValueError,
     ["gains={} names no label", "gains={0: 0, 1: 1, 2: 3}"]),
    ("dcg-unquoted", "nDCG(dcg=log2)", None, ValueError,
     ["dcg must be a quoted string, found 'log2'", "dcg='log2' or dcg='exp-log2'"]),
    ("dcg-unknown", "nDCG(dcg='exp')@5", None, ValueError,
     ["dcg='exp' is not one of 'log2', 'exp-log2'"]),
    ("param-no-name", "nDCG(=1)", None, ValueError,
     ["expected a parameter name (cutoff, dcg, gains) at character 6, found '='"]),
    ("param-no-equals", "nDCG(cutoff 5)", None, ValueError,
     ["expected '=' after cutoff at character 13, found '5'"]),
    ("param-no-comma", "AP(cutoff=5 rel=2)", None, ValueError,
     ["expected ',' or ')' after cutoff at character 13, found 'r'"]),
    # gain tables are bounded: labels (and so entries)
    ("gain-label-huge", "nDCG(gains={0:0,1000000000:1})@3", None, ValueError,
     ["gains names label 1000000000", f"labels up to {MAX_GAIN_TABLE - 1}",
      f"at most {MAX_GAIN_TABLE} labels", "gain=[...]"]),
    ("gain-table-too-long", LONG_GAINS, None, ValueError,
     [f"gains names label {MAX_GAIN_TABLE}", f"labels up to {MAX_GAIN_TABLE - 1}", "\u2026"]),
    ("gain-label-thousands-of-digits", "nDCG(gains={" + "7" * 5000 + ": 1})", None, ValueError,
     ["gains names label 777", f"labels up to {MAX_GAIN_TABLE - 1}"]),
    # cutoffs missing or empty
    ("at-nothing", "P@", None, ValueError,
     ["expected cutoff (a whole number) at character 3, found the end", "P@10"]),
    ("dot-nothing", "P.", None, ValueError, ["no cutoff after P.", "write P.5,10"]),
    ("trec-cut-nothing", "ndcg_cut.", None, ValueError, ["no cutoff after ndcg_cut."]),
    ("empty-cutoff-in-list", "P.5,,10", None, ValueError,
     ["expected cutoff (a whole number) at character 5, found ','"]),
    ("trailing-comma", "P.5,", None, ValueError,
     ["expected cutoff (a whole number) at character 5, found the end"]),
    ("underscore-several", "P_5,10", None, ValueError,
     ["P_N names one cutoff", "P.5,10"]),
    ("needs-cutoff", "R", None, ValueError, ["R needs a cutoff", "R@10"]),
    ("takes-no-cutoff", "Rprec@5", None, ValueError, ["Rprec takes no cutoff", "write Rprec"]),
    ("trec-takes-none", "map.5", None, ValueError,
     ["trec_eval's map takes no parameters", "map_cut.10"]),
    ("trec-rr-takes-none", "recip_rank.5", None, ValueError,
     ["trec_eval's recip_rank takes no parameters", "RR@10"]),
    ("params-after-cutoff", "P@5(rel=2)", None, ValueError,
     ["parameters before the cutoff", "P(rel=2)@10"]),
    ("dot-cutoff-irm", "nDCG.5", None, ValueError,
     ["expected '(', '@' or the end at character 5, found '.'", "nDCG@10"]),
    # unknown names and parameters, as before
    ("unknown", "mapp", None, ValueError,
     ["'mapp' is not a measure fastndcg knows", "did you mean 'map'"]),
    ("unknown-case", "NDCG@10", None, ValueError,
     ["'NDCG' is not a measure fastndcg knows", "'nDCG'"]),
    ("unknown-param", "nDCG(judged_only=True)@5", None, ValueError,
     ["parameter 'judged_only' is not supported for nDCG (only cutoff, dcg, gains)"]),
    ("rel-on-ndcg", "nDCG(rel=2)", None, ValueError,
     ["parameter 'rel' is not supported for nDCG"]),
    ("dcg-on-ap", "AP(dcg='log2')", None, ValueError,
     ["parameter 'dcg' is not supported for AP (only cutoff, rel)"]),
    ("unknown-long", "x" * 500, None, ValueError,
     ["is not a measure fastndcg knows", "known: AP"]),
    # brackets and quotes
    ("unclosed-paren", "nDCG(dcg='log2'@10", None, ValueError,
     ["'(' at character 5 is never closed", "close it with ')'"]),
    ("crossed-brackets", "nDCG(gains={0: 1)@5", None, ValueError,
     ["'{' at character 12 is closed by ')' at character 17", "close it with '}'"]),
    ("stray-closer", "map )", ")", ValueError, ["')' at character 1 closes nothing"]),
    ("stray-opener", "P@5 (", "(", ValueError, ["'(' at character 1 is never closed"]),
    ("unclosed-quote", "nDCG(dcg='log2)", None, ValueError,
     ["the quote \"'\" at character 10 is never closed"]),
    ("quoted-name", "'map'", None, ValueError,
     ["expected a measure name (letters and '_') at character 1, found \"'\""]),
    ("number-name", "P.5 10", "10", ValueError,
     ["expected a measure name (letters and '_') at character 1, found '1'"]),
    # NUL bytes, empty and blank names
    ("nul-inside", "nD\x00CG@10", None, ValueError, ["'nD' is not a measure fastndcg knows"]),
    ("nul-after", "nDCG@10\x00", None, ValueError, ["found '\\x00'"]),
    ("empty", "", None, ValueError, ["measure is empty", "name at least one"]),
    ("blank", " \t\n ", None, ValueError, ["measure is empty", "name at least one"]),
    ("empty-list", [], "[]", ValueError, ["measure is empty"]),
    ("blank-list", ["", "  "], "['', '  ']", ValueError, ["measure is empty"]),
    # not text
    ("none-in-list", ["P@5", None], "measure[1]", TypeError,
     ["measure[1] is None (NoneType), not a str", "e.g. 'P@10'"]),
    ("number-in-list", ("map", 3), "measure[1]", TypeError,
     ["measure[1] is 3 (int), not a str"]),
    ("number", 5, "got 5", TypeError, ["measure takes a measure name or a list of them"]),
    ("none", None, "got None", TypeError, ["measure takes a measure name"]),
    ("bytes", b"map", "got b'map'", TypeError, ["decode the bytes first"]),
]


@pytest.mark.parametrize("case, measure, named, exc, fragments", HOSTILE,
                         ids=[c[0] for c in HOSTILE])
def test_hostile_name_is_refused_saying_where_and_how(case, measure, named, exc, fragments):
    with time_limit(5):
        with pytest.raises(exc) as info:
            parse(measure)
    message = str(info.value)
    assert type(info.value) is exc
    if named is None:
        named = shown(measure)
    elif isinstance(measure, str):
        named = shown(named)
    assert named in message, message
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in {message!r}"
    assert "\n" not in message
    assert not re.search(r"invalid literal|could not convert|Exceeds the limit|"
                         r"MemoryError|Traceback", message), message


def test_messages_cut_long_names_to_60_characters():
    name = "P@" + "9" * 200
    with pytest.raises(ValueError) as info:
        parse(name)
    quoted = re.match(r"cannot read measure ('[^']*')", str(info.value)).group(1)
    assert ast.literal_eval(quoted) == name[:59] + "\u2026"


def test_a_maximal_gain_table_reads_in_bounded_time():
    name = "nDCG(gains={" + ",".join(f"{i}:1" for i in range(MAX_GAIN_TABLE)) + "})@3"
    start = time.perf_counter()
    gain = parse(name).gain
    assert gain == [1.0] * MAX_GAIN_TABLE
    assert time.perf_counter() - start < 5


# --------------------------------------------------------------------------- any text

PIECES = ["nDCG", "ndcg", "ndcg_cut", "map", "map_cut", "AP", "ap", "P", "p", "RR", "rr",
          "recip_rank", "R", "recall", "Rprec", "NumRet", "num_rel", "Judged", "Success",
          "success", "(", ")", "{", "}", "[", "]", "@", ".", ",", ":", "=", "'", '"', "_",
          " ", "\t", "\x00", "\u00e9", "\u0665", "\u2026", "rel", "dcg", "gains", "cutoff",
          "'log2'", "'exp-log2'", "0", "1", "10", "007", "65535", "65536", "1000000000",
          "1000000001", "1e3", "-1", "2.5", "99999999999999999999"]
ANY_TEXT = st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=4)),
                    max_size=30).map("".join)
ONE_NAME = ANY_TEXT.map(lambda s: "".join(ch for ch in s if not ch.isspace()))
REPR = r"('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")"


def _at_boundary(text: str, name: str, whole: bool) -> bool:
    """Whether ``name`` stands in ``text`` as a whitespace-separated piece (its start
    only, when the message cut it)."""
    for i in [m.start() for m in re.finditer(re.escape(name), text)]:
        if i > 0 and not text[i - 1].isspace():
            continue
        end = i + len(name)
        if not whole or end == len(text) or text[end].isspace():
            return True
    return False


def _quoted_names(message: str) -> list[str]:
    """The measure names a parse error quotes."""
    for pattern in (rf"cannot read measure {REPR}: ", rf"measure is empty: {REPR} names",
                    rf"measures {REPR} and {REPR} use different gains"):
        m = re.match(pattern, message)
        if m:
            return [ast.literal_eval(g) for g in m.groups()]
    raise AssertionError(f"the message quotes no measure: {message!r}")


def _check_refusal(text: str, err: Exception) -> None:
    assert type(err) is ValueError, repr(err)
    message = str(err)
    assert "\n" not in message
    for name in _quoted_names(message):
        assert len(name) <= 60
        if message.startswith("measure is empty"):
            assert repr(name) == shown(text) and not text.strip()
        elif len(name) == 60 and name.endswith("\u2026"):
            assert _at_boundary(text, name[:-1], whole=False), (text, message)
        else:
            assert _at_boundary(text, name, whole=True), (text, message)


@settings(max_examples=examples(4), deadline=None)
@given(ANY_TEXT)
def test_any_text_reads_or_is_refused_naming_the_measure(text):
    with time_limit(5):
        try:
            parsed = parse(text)
        except Exception as err:  # noqa: BLE001 -- the type is what is checked
            _check_refusal(text, err)
            return
    assert parsed.columns


@settings(max_examples=examples(4), deadline=None)
@given(ONE_NAME)
def test_one_name_is_quoted_whole(text):
    with time_limit(5):
        try:
            parse(text)
        except Exception as err:  # noqa: BLE001
            assert type(err) is ValueError, repr(err)
            assert shown(text) in str(err), (text, str(err))


@settings(max_examples=examples(2), deadline=None)
@given(st.lists(st.one_of(ONE_NAME, st.none(), st.integers(), st.floats(), st.binary(max_size=3)),
                max_size=4))
def test_a_list_with_anything_in_it(items):
    first_bad = next((i for i, m in enumerate(items) if not isinstance(m, str)), None)
    with time_limit(5):
        try:
            parse(items)
        except TypeError as err:
            assert first_bad is not None
            assert f"measure[{first_bad}] is " in str(err)
            return
        except ValueError as err:
            assert first_bad is None, str(err)
            return
    assert first_bad is None


# --------------------------------------------------------------------------- round trip

def _cutoffs(kind) -> list:
    return {"none": [None], "optional": [None, 1, 10, MAX_CUTOFF],
            "required": [1, 10, MAX_CUTOFF]}[kind.cutoff]


def _rels(kind) -> list:
    return [0, 1, 2, MAX_REL] if kind.binary else [1]


def _params(kind) -> list:
    """Parameter values to name: the first default and another (one-value kinds), or
    none and non-defaults (the others)."""
    if not kind.params:
        return [None]
    if kind.each:
        return [(kind.defaults[0],), (0.35,)]
    return [None, tuple(v / 2 if key == "p" else v + 0.5  # p: a persistence below 1
                        for key, v in zip(kind.param_names, kind.defaults))]


def _check_round_trip(name: str, kind, cutoff, rel, params=None) -> None:
    col = column_name(name, cutoff, rel, params)
    parsed = parse(col)
    assert parsed.columns == [col]
    if name == "ndcg":
        assert (parsed.ndcg, parsed.gain, parsed.others) == ([cutoff], "linear", [])
    else:
        assert parsed.ndcg == []
        assert parsed.others == [Measure(name, cutoff, None if rel == 1 else rel, params)]
    # ir_measures' name of the same measure reads the same, where it has one
    if kind.irm:
        named = [f"{k}={v!r}" for k, v in zip(kind.param_names, params or ())]
        graded = kind.irm == "RBP"  # ir_measures' RBP without rel is graded: rel is named
        named += [f"rel={rel}"] if kind.binary and (rel != 1 or graded) else []
        irm = kind.irm + (f"({','.join(named)})" if named else "") + (
            "" if cutoff is None else f"@{cutoff}")
        again = parse(irm)
        assert (again.columns, again.ndcg, again.gain) == (
            parsed.columns, parsed.ndcg, parsed.gain), irm
        if not graded:
            assert again.others == parsed.others, irm
    # and trec_eval's, where it has one (no thresholds in trec_eval's names)
    if rel == 1 and cutoff is not None and kind.trec_cut:
        assert parse(f"{kind.trec_cut}.{cutoff}").columns == [col]
    if rel == 1 and params is not None and kind.each:
        assert parse(f"{kind.trec_cut}.{params[0]!r}").columns == [col]


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_column_name_reads_back_as_its_measure(name):
    kind = REGISTRY[name]
    for cutoff in _cutoffs(kind):
        for rel in _rels(kind):
            for params in _params(kind):
                _check_round_trip(name, kind, cutoff, rel, params)


@settings(max_examples=examples(2), deadline=None)
@given(st.sampled_from(sorted(REGISTRY)), st.integers(1, MAX_CUTOFF), st.integers(0, MAX_REL))
def test_column_names_read_back_at_any_cutoff_and_threshold(name, cutoff, rel):
    kind = REGISTRY[name]
    _check_round_trip(name, kind, None if kind.cutoff == "none" else cutoff,
                      rel if kind.binary else 1, _params(kind)[-1])
