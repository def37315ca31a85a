#!/usr/bin/env python3
"""Prints TensorFlow's values for text_ops_test.cc: StringSplitV2 (whitespace
and explicit separators, maxsplit), StaticRegexReplace (global and first
match), StringLower, RaggedTensorToTensor (ROW_SPLITS and
FIRST_DIM_SIZE + VALUE_ROWIDS, cut to a shape) and DenseBincount (counts,
weights, binary_output), run through tf.raw_ops in eager mode on the test's
own inputs, as the test's C++ literals (strings with C escapes).

    /work/tfvenv/bin/python kernels/cpu/make_text_test_values.py
    /work/tfvenv/bin/python kernels/cpu/make_text_test_values.py --check

--check reads the values text_ops_test.cc commits (the expected lists, the
output shapes, the single element it checks, and the status code and
message of its one ExpectError) and compares them with TensorFlow's,
exactly (exit 1 on a mismatch). A message passes when the test's text is a
part of TensorFlow's, as ExpectError asks. Nothing in the test is left out:
it states no value of its own.

The helpers for C++ string literals, single values and ExpectError calls
are shared with make_lookup_table_test_values.py and
make_ragged_text_test_values.py.
"""
import os
import re
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ["TF_ENABLE_ONEDNN_OPTS"] = "0"

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from cc_expected import Cases  # noqa: E402

raw = tf.raw_ops

# C++ tokens: a string literal, `std::string(`, a (qualified) name, a number,
# or any other single character.
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|std::string\(|[A-Za-z_][\w:]*'
                    r'|[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?[fFuUlL]*|\S')
_SIMPLE = {"n": 10, "t": 9, "r": 13, "a": 7, "b": 8, "f": 12, "v": 11,
           "\\": 92, '"': 34, "'": 39, "?": 63}
_HEX = "0123456789abcdefABCDEF"


def unescape(body):
    """The bytes of a C++ string literal's body (between the quotes)."""
    out, i = bytearray(), 0
    while i < len(body):
        ch = body[i]
        if ch != "\\":
            out += ch.encode()
            i += 1
            continue
        ch = body[i + 1]
        if ch == "x":
            j = i + 2
            while j < len(body) and body[j] in _HEX:
                j += 1
            out.append(int(body[i + 2:j], 16) & 0xFF)
            i = j
        elif ch in "01234567":
            j = i + 1
            while j < len(body) and j < i + 4 and body[j] in "01234567":
                j += 1
            out.append(int(body[i + 1:j], 8) & 0xFF)
            i = j
        else:
            out.append(_SIMPLE[ch])
            i += 2
    return bytes(out)


def escape(data):
    """`data` as the body of a C++ string literal: printable ASCII as is, the
    rest as \\x escapes; a hex digit right after one starts a new literal."""
    out, after_hex = [], False
    for byte in data:
        ch = chr(byte)
        if after_hex and ch in _HEX:
            out.append('" "')
        after_hex = False
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif 32 <= byte < 127:
            out.append(ch)
        else:
            out.append("\\x%02x" % byte)
            after_hex = True
    return "".join(out)


def cc_string(data):
    """`data` as a C++ string expression, std::string(..., n) when it holds
    a NUL."""
    if b"\0" in data:
        return 'std::string("%s", %d)' % (escape(data), len(data))
    return '"%s"' % escape(data)


def _at(c, anchor, occurrence=None):
    """Where `anchor` ends in the test's text (unique unless `occurrence`)."""
    starts = [m.start() for m in re.finditer(re.escape(anchor), c.test.text)]
    if not starts or (occurrence is None and len(starts) > 1):
        raise LookupError("anchor %r found %d times in %s" % (anchor, len(starts), c.name))
    return starts[occurrence or 0] + len(anchor)


def _tokens(c, pos):
    for m in _TOKEN.finditer(c.test.text, pos):
        yield m.group()


def committed_strings(c, anchor, after="{", skip=0, occurrence=None):
    """The strings of the brace list after `anchor` (as TestFile.values finds
    it): adjacent literals joined, std::string(literal, n) cut to n bytes."""
    pos = _at(c, anchor, occurrence)
    for _ in range(skip + 1):
        pos = c.test.text.index(after, pos) + len(after)
    brace = pos - 1 if after.endswith("{") else c.test.text.index("{", pos)
    items, item, ctor = [], None, False
    for t in _tokens(c, brace + 1):
        if t.startswith('"'):
            item = (item or b"") + unescape(t[1:-1])
        elif t == "std::string(":
            ctor = True
        elif ctor and t[0].isdigit():
            n = int(t.rstrip("uUlL"))
            if n > len(item) + 1:
                raise ValueError("std::string(..., %d) past its literal in %s" % (n, c.name))
            item = (item + b"\0")[:n]
        elif t == ")":
            ctor = False
        elif t in ",}" and not ctor:
            if item is not None:
                items.append(item)
            item = None
            if t == "}":
                return items
    raise ValueError("unterminated brace list after %r in %s" % (anchor, c.name))


def committed_string(c, anchor, occurrence=None):
    """The string literal(s) right after `anchor`, joined."""
    item = b""
    for t in _tokens(c, _at(c, anchor, occurrence)):
        if not t.startswith('"'):
            return item
        item += unescape(t[1:-1])
    return item


def committed_token(c, anchor, occurrence=None):
    """The first token after `anchor`: a number as a float, else the text."""
    t = next(_tokens(c, _at(c, anchor, occurrence)))
    try:
        return float(t.rstrip("fFuUlL"))
    except ValueError:
        return t


def strings(c, label, actual, anchor, after="{", skip=0, occurrence=None):
    """A list of strings (bytes): printed as C++ literals, or compared with
    the test's list (each side through escape(), which is one-to-one)."""
    actual = [bytes(a) for a in np.asarray(actual, dtype=object).ravel()]
    if not c.check:
        print("%s:\n  {%s}" % (label, ", ".join(cc_string(a) for a in actual)))
        return
    committed = committed_strings(c, anchor, after, skip, occurrence)
    c.expect(label, np.array([escape(a) for a in actual], dtype=str).reshape(len(actual)),
             [escape(b) for b in committed], kind="s")


def string(c, label, actual, anchor, occurrence=None):
    """One string: as strings(), the literal right after `anchor`."""
    if not c.check:
        print("%s:\n  %s" % (label, cc_string(actual)))
        return
    c.expect(label, np.array([escape(actual)]),
             [escape(committed_string(c, anchor, occurrence))], kind="s")


def value(c, label, actual, anchor, occurrence=None, kind=None):
    """One number (or name) the test states right after `anchor`."""
    c.expect(label, np.array([actual]), [committed_token(c, anchor, occurrence)], kind=kind)


def shape(c, label, tensor, anchor, occurrence=None):
    """An output's shape, against the TensorShape({...}) after `anchor`."""
    c.case(label, np.array(list(tensor.shape), np.int64), anchor,
           after="TensorShape({", occurrence=occurrence)


_CODES = {getattr(tf.errors, n): "k" + "".join(w.capitalize() for w in n.split("_"))
          for n in dir(tf.errors) if n.isupper() and isinstance(getattr(tf.errors, n), int)}


def status_of(thunk):
    """(absl status code name, message) of running `thunk`: kOk and "" when
    it succeeds; TensorFlow's decorations (a Session's "Graph execution
    error" preamble, function and node names, the op) taken off the
    message."""
    try:
        thunk()
    except tf.errors.OpError as e:
        message = re.sub(r"(?s)^Graph execution error:.*?\nNode: '[^']*'\n", "", e.message)
        message = re.sub(r"\{\{function_node [^}]*\}\}\s*", "", message)
        message = re.split(r"\s*\[Op:|\s*\[\[\{\{node ", message)[0].strip()
        return _CODES[e.error_code], message
    return "kOk", ""


def committed_error(c, anchor, names, occurrence=None):
    """The status code and message of the ExpectError(...) the first
    absl::StatusCode:: after `anchor` belongs to: its literals joined, each
    name (a variable of the test) replaced by names[name]."""
    pos = c.test.text.index("absl::StatusCode::", _at(c, anchor, occurrence))
    tokens = _tokens(c, pos)
    code = next(tokens).split("::")[-1]
    if next(tokens) != ",":
        raise ValueError("no message after %s in %s" % (code, c.name))
    expression, depth = [], 0
    for t in tokens:
        depth += (t == "(") - (t == ")")
        if depth < 0:
            break
        expression.append(t)
    message = b""
    for i, t in enumerate(expression):
        if t.startswith('"'):
            message += unescape(t[1:-1])
        elif t[0].isalpha() and expression[i + 1:i + 2] != ["("]:
            message += names[t].encode()  # a variable of the test
    if depth < 0:
        return code, message.decode()
    raise ValueError("unterminated ExpectError after %r in %s" % (anchor, c.name))


def error(c, label, thunk, anchor, names=None, occurrence=None):
    """An ExpectError: TensorFlow's status for `thunk` against the test's code
    and message; the message passes when the test's text is part of
    TensorFlow's."""
    code, message = status_of(thunk)
    if not c.check:
        print("%s:\n  absl::StatusCode::%s, %s" % (label, code, cc_string(message.encode())))
        return
    want_code, want = committed_error(c, anchor, names or {}, occurrence)
    c.expect(label, np.array([code, want if want and want in message else message]),
             [want_code, want], kind="s")


def succeeds(c, label, thunk, anchor, occurrence=None):
    """An ASSERT/EXPECT_TRUE(....ok()): TensorFlow runs `thunk` without an
    error (`anchor`, the call's text, must be in the test)."""
    code, message = status_of(thunk)
    if c.check:
        _at(c, anchor, occurrence)
    c.expect(label, np.array(["ok" if code == "kOk" else "%s: %s" % (code, message)]),
             ["ok"], kind="s")


def main():
    c = Cases(os.path.join(HERE, "text_ops_test.cc"))

    def split(data, sep, maxsplit):
        return raw.StringSplitV2(input=np.array(data, dtype=object), sep=sep, maxsplit=maxsplit)

    out = split(["  a b  c d ", "x ", "", "   "], "", 2)
    c.case("StringSplitV2 whitespace maxsplit 2 indices", out.indices,
           'split({" a b c d ", "x ", "", " "}, "", 2);', after="std::vector<double>{")
    strings(c, "StringSplitV2 whitespace maxsplit 2 values", out.values,
            'split({" a b c d ", "x ", "", " "}, "", 2);', after="std::vector<std::string>{")
    c.case("StringSplitV2 whitespace maxsplit 2 shape", out.shape,
           'split({" a b c d ", "x ", "", " "}, "", 2);', after="std::vector<double>{", skip=1)

    out = split(["a ", "a\tb\nc"], "", 1)
    strings(c, "StringSplitV2 whitespace maxsplit 1 values", out.values,
            'split({"a ", "a\\tb\\nc"}, "", 1);', after="std::vector<std::string>{")
    c.case("StringSplitV2 whitespace maxsplit 1 shape", out.shape,
           'split({"a ", "a\\tb\\nc"}, "", 1);', after="std::vector<double>{")

    sep = 'split({"<><>4<>5<><>6<>", "", "1<>2<>3"}, "<>", -1);'
    out = split(["<><>4<>5<><>6<>", "", "1<>2<>3"], "<>", -1)
    strings(c, "StringSplitV2 '<>' values", out.values, sep, after="std::vector<std::string>{")
    shape(c, "StringSplitV2 '<>' indices shape", out.indices, sep)
    value(c, "StringSplitV2 '<>' row of value 7", out.indices.numpy().ravel()[2 * 7],
          "out[0].flat<int64_t>()[2 * 7],")
    c.case("StringSplitV2 '<>' shape", out.shape, sep, after="std::vector<double>{")

    out = split(["a,b,c", "abc"], ",", 1)
    comma = 'split({"a,b,c", "abc"}, ",", 1);'
    strings(c, "StringSplitV2 ',' maxsplit 1 values", out.values, comma,
            after="std::vector<std::string>{")
    c.case("StringSplitV2 ',' maxsplit 1 indices", out.indices, comma,
           after="std::vector<double>{")

    words = np.array(["aaa bab", "xyz"], dtype=object)
    strings(c, "StaticRegexReplace global",
            raw.StaticRegexReplace(input=words, pattern="a(b)?", rewrite="[\\1]",
                                   replace_global=True),
            "StringsOf((*global)[0]),", after="std::vector<std::string>{")
    strings(c, "StaticRegexReplace first",
            raw.StaticRegexReplace(input=words, pattern="a(b)?", rewrite="[\\1]",
                                   replace_global=False),
            "StringsOf((*first)[0]),", after="std::vector<std::string>{")
    lower = raw.StringLower(input=np.array([[b"HeLLo WORLD", b"CAF\xc3\x89 123"]], dtype=object),
                            encoding="")
    shape(c, "StringLower shape", lower, "EXPECT_EQ((*lower)[0].shape(),")
    strings(c, "StringLower", lower, "StringsOf((*lower)[0]),", after="std::vector<std::string>{")

    splits = raw.RaggedTensorToTensor(
        shape=np.array([-1, 3], np.int64), values=np.arange(1, 7, dtype=np.float32),
        default_value=np.float32(-1), row_partition_tensors=[np.array([0, 4, 4, 6], np.int64)],
        row_partition_types=["ROW_SPLITS"])
    shape(c, "RaggedTensorToTensor ROW_SPLITS shape", splits, "EXPECT_EQ((*splits)[0].shape(),")
    c.case("RaggedTensorToTensor ROW_SPLITS", splits, "ToDoubles<float>((*splits)[0]),",
           after="std::vector<double>{", kind="d")
    rowids = raw.RaggedTensorToTensor(
        shape=np.int64(-1), values=np.arange(1, 7, dtype=np.int32).reshape(3, 2),
        default_value=np.array([7, 8], np.int32),
        row_partition_tensors=[np.int64(4), np.array([0, 0, 2], np.int64)],
        row_partition_types=["FIRST_DIM_SIZE", "VALUE_ROWIDS"])
    shape(c, "RaggedTensorToTensor VALUE_ROWIDS shape", rowids, "EXPECT_EQ((*rowids)[0].shape(),")
    c.case("RaggedTensorToTensor VALUE_ROWIDS", rowids, "ToDoubles<int32_t>((*rowids)[0]),",
           after="std::vector<double>{")
    cut = raw.RaggedTensorToTensor(
        shape=np.array([2, 5], np.int32), values=np.array(["a", "b", "c", "d"], dtype=object),
        default_value="", row_partition_tensors=[np.array([0, 1, 3, 4], np.int32)],
        row_partition_types=["ROW_SPLITS"])
    shape(c, "RaggedTensorToTensor strings cut shape", cut, "EXPECT_EQ((*cut)[0].shape(),")
    strings(c, "RaggedTensorToTensor strings cut", cut, "StringsOf((*cut)[0]),",
            after="std::vector<std::string>{")

    c.case("DenseBincount int32",
           raw.DenseBincount(input=np.array([1, 1, 3, 7, 0], np.int32), size=np.int32(5),
                             weights=np.array([], np.int64), binary_output=False),
           "ToDoubles<int64_t>((*counts)[0]),", after="std::vector<double>{")
    x = np.array([[1, 1, 3], [2, 0, 2]], np.int64)
    weighted = raw.DenseBincount(input=x, size=np.int64(4),
                                 weights=np.array([[.5, .25, 1], [2, 3, 4]], np.float32),
                                 binary_output=False)
    shape(c, "DenseBincount weighted shape", weighted, "EXPECT_EQ((*weighted)[0].shape(),")
    c.case("DenseBincount weighted", weighted, "ToDoubles<float>((*weighted)[0]),",
           after="std::vector<double>{", kind="d")
    c.case("DenseBincount binary_output",
           raw.DenseBincount(input=x, size=np.int64(4), weights=np.array([], np.float32),
                             binary_output=True),
           "ToDoubles<float>((*binary)[0]),", after="std::vector<double>{", kind="d")
    error(c, "DenseBincount negative input",
          lambda: raw.DenseBincount(input=np.array([1, -1], np.int32), size=np.int32(5),
                                    weights=np.array([], np.int64), binary_output=False),
          "Tensor::FromVector<int32_t>({1, -1}), Tensor::Scalar<int32_t>(5),")
    c.finish()


if __name__ == "__main__":
    main()
