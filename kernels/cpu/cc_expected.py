"""Expected values written inline in a C++ test, for the make_*.py scripts
that recompute them with TensorFlow.

A script lists its cases; for each, TensorFlow's values and where the test
writes them: an anchor (a piece of the test's code, compared with all runs of
whitespace read as one space) and the brace list that follows it. Run plain,
a script prints TensorFlow's values as C++ literals; with --check it reads
the test's literals and compares, printing every mismatch (case, position,
committed value, TensorFlow's) and exiting 1 if there is one.
"""
import math
import os
import re
import sys

import numpy as np

_TOKEN = re.compile(
    r'"(?:[^"\\]|\\.)*"|\btrue\b|\bfalse\b|-?\b(?:NAN|INFINITY|kNaN|kInf)\b'
    r'|[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?')


def _value(token):
    if token.startswith('"'):
        return token[1:-1]
    if token in ("true", "false"):
        return token == "true"
    if token.lstrip("-") in ("NAN", "kNaN"):
        return math.nan
    if token.lstrip("-") in ("INFINITY", "kInf"):
        return -math.inf if token.startswith("-") else math.inf
    return float(token)


def literal(values, kind):
    """values as a C++ brace list: kind f (float), d (double), i, b or s."""
    items = []
    for v in np.asarray(values).ravel():
        if kind == "i":
            items.append("%d" % int(v))
        elif kind == "b":
            items.append("true" if v else "false")
        elif kind == "s":
            items.append('"%s"' % (v.decode() if isinstance(v, bytes) else v))
        elif math.isnan(float(v)):
            items.append("NAN")
        elif math.isinf(float(v)):
            items.append("INFINITY" if v > 0 else "-INFINITY")
        elif kind == "f":
            text = "%.9g" % np.float32(v)
            items.append(text + ("f" if "." in text or "e" in text else ""))
        else:
            items.append(repr(float(v)))
    return "{" + ", ".join(items) + "}"


class TestFile:
    """A C++ test's text, whitespace runs folded to one space."""

    def __init__(self, path):
        with open(path) as f:
            self.text = re.sub(r"\s+", " ", f.read())
        self.path = path

    def values(self, anchor, after="{", skip=0, occurrence=None):
        """The literals of the brace list that the (skip+1)-th `after` past
        `anchor` opens (when it ends with "{") or is followed by; `anchor`
        must be unique unless its occurrence (from 0) is given."""
        starts = [m.start() for m in re.finditer(re.escape(anchor), self.text)]
        if not starts or (occurrence is None and len(starts) > 1):
            raise LookupError("anchor %r found %d times in %s" %
                              (anchor, len(starts), self.path))
        pos = starts[occurrence or 0] + len(anchor)
        for _ in range(skip + 1):
            pos = self.text.index(after, pos) + len(after)
        brace = pos - 1 if after.endswith("{") else self.text.index("{", pos)
        depth, end = 0, brace
        while True:
            c = self.text[end]
            depth += (c == "{") - (c == "}")
            end += 1
            if depth == 0:
                break
        return [_value(t) for t in _TOKEN.findall(self.text[brace:end])]


def _same(committed, actual, rtol, atol):
    if isinstance(actual, (str, bytes, bool, np.bool_)):
        if isinstance(actual, bytes):
            actual = actual.decode()
        return committed == actual
    if not isinstance(committed, float):
        return False
    a = float(actual)
    if math.isnan(a) or math.isnan(committed):
        return math.isnan(a) and math.isnan(committed)
    if math.isinf(a) or math.isinf(committed):
        return a == committed
    return abs(committed - a) <= atol + rtol * abs(a)


class Cases:
    """Collects a script's cases; prints them or checks them."""

    def __init__(self, test_path, argv=None):
        argv = sys.argv[1:] if argv is None else argv
        self.check = "--check" in argv
        self.test = TestFile(test_path)
        self.name = os.path.basename(test_path)
        self.checked = self.failures = 0

    def expect(self, label, actual, committed, kind=None, rtol=0.0, atol=0.0):
        """As case(), with the committed values given (for values the test
        states in a comment or an expression rather than a brace list)."""
        self.case(label, actual, None, kind=kind, rtol=rtol, atol=atol,
                  committed=committed)

    def case(self, label, actual, anchor, after="{", skip=0, occurrence=None,
             kind=None, rtol=0.0, atol=0.0, committed=None):
        """One expected list: TensorFlow's `actual` against the test's list.

        Equal within |committed - actual| <= atol + rtol * |actual| (exact
        by default; values within the tolerance but unequal are reported);
        float32 results are compared with the committed literals rounded to
        float32."""
        actual = np.asarray(actual)
        if kind is None:
            kind = {"f": "f" if actual.dtype == np.float32 or
                    actual.dtype == np.float16 else "d",
                    "i": "i", "u": "i", "b": "b"}.get(actual.dtype.kind, "s")
        if not self.check:
            print("%s:\n  %s" % (label, literal(actual, kind)))
            return
        if committed is None:
            committed = self.test.values(anchor, after, skip, occurrence)
        committed = [float(c) if isinstance(c, (int, np.integer)) and
                     not isinstance(c, bool) else c for c in committed]
        flat = actual.ravel().tolist()
        self.checked += 1
        if actual.dtype == np.float32:
            committed = [float(np.float32(c)) if isinstance(c, float) else c
                         for c in committed]
        if len(committed) != len(flat):
            self.failures += 1
            print("MISMATCH %s: %s has %d values, TensorFlow %d\n  committed %s\n"
                  "  TensorFlow %s" % (label, self.name, len(committed), len(flat),
                                       committed, literal(actual, kind)))
            return
        bad = [i for i, (c, a) in enumerate(zip(committed, flat))
               if not _same(c, a, rtol, atol)]
        near = [i for i, (c, a) in enumerate(zip(committed, flat))
                if i not in bad and not _same(c, a, 0.0, 0.0)]
        if bad:
            self.failures += 1
            print("MISMATCH %s:" % label)
            for i in bad:
                print("  [%d] committed %r, TensorFlow %r" % (i, committed[i], flat[i]))
        elif near:
            worst = max(abs(committed[i] - flat[i]) for i in near)
            print("ok %s: %d of %d values within the tolerance (rtol %g, atol %g), "
                  "not equal; largest difference %.3g" %
                  (label, len(near), len(flat), rtol, atol, worst))
        else:
            print("ok %s" % label)

    def finish(self):
        if self.check:
            print("%s: %d lists checked, %d mismatched" %
                  (self.name, self.checked, self.failures))
            sys.exit(1 if self.failures else 0)
