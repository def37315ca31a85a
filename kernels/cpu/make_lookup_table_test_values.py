#!/usr/bin/env python3
"""Prints TensorFlow's values for lookup_table_ops_test.cc: HashTableV2 filled
by InitializeTableFromTextFileV2 (columns, line numbers with an offset,
vocab_size, "\\r\\n" line ends) and by InitializeTableV2, LookupTableFindV2,
LookupTableSizeV2, MutableHashTableV2's inserts, removals, per-key defaults,
export and import, and the status code and message of every error the test
expects, run through tf.raw_ops in a v1 Session on the test's own inputs and
files (written to a temporary folder), as the test's C++ literals.

    /work/tfvenv/bin/python kernels/cpu/make_lookup_table_test_values.py
    /work/tfvenv/bin/python kernels/cpu/make_lookup_table_test_values.py --check

Every input but the table handles is fed through a placeholder of unknown
shape, so the kernels (not graph-time shape inference) judge them, as in the
test. Each table gets its own shared_name: the test's tables all say "t",
but each of its RunOp calls has a resource manager of its own. The paths in
the file errors are the temporary folder's; --check puts them where the
test's absl::StrCat puts its own.

--check reads the values lookup_table_ops_test.cc commits (found values,
sizes, the output shape, the sorted export, which calls succeed, and each
ExpectError's status code and message) and compares them with TensorFlow's,
exactly (exit 1 on a mismatch). A message passes when the test's text is a
part of TensorFlow's, as ExpectError asks. Nothing in the test is left out:
it states no value of its own.
"""
import os
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ["TF_ENABLE_ONEDNN_OPTS"] = "0"

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from cc_expected import Cases  # noqa: E402
from make_text_test_values import error, shape, strings, succeeds, value  # noqa: E402

raw = tf.raw_ops
CRLF = b"alpha 10\r\nbeta 20\ngamma 30"


class Session:
    """A v1 graph and Session: run() adds an op, its inputs fed through
    placeholders of unknown shape, and runs it."""

    def __init__(self):
        self.graph = tf.Graph()
        self.session = tf.compat.v1.Session(graph=self.graph)
        self.tables = 0

    def table(self, key, value_dtype, mutable=False):
        """A new table's handle (a graph tensor)."""
        self.tables += 1
        op = raw.MutableHashTableV2 if mutable else raw.HashTableV2
        with self.graph.as_default():
            return op(key_dtype=key, value_dtype=value_dtype, shared_name="t%d" % self.tables,
                      use_node_name_sharing=False)

    def run(self, op, **inputs):
        feed, args = {}, {}
        with self.graph.as_default():
            for name, v in inputs.items():
                if isinstance(v, np.ndarray):
                    ph = tf.compat.v1.placeholder(tf.as_dtype(v.dtype) if v.dtype != object
                                                  else tf.string)
                    feed[ph], v = v, ph
                args[name] = v
            out = op(**args)
        return self.session.run(out, feed_dict=feed)


def s(*v):
    return np.array([x.encode() for x in v], dtype=object)


def i64(*v):
    return np.array(v, np.int64)


def f32(*v):
    return np.array(v, np.float32)


def main():
    c = Cases(os.path.join(HERE, "lookup_table_ops_test.cc"))
    with tempfile.TemporaryDirectory(prefix="lookup_table_test_") as folder:
        cases(c, folder)
    c.finish()


def cases(c, folder):
    """The test's cases, its files written to `folder`."""
    def write(name, text):
        path = os.path.join(folder, name)
        with open(path, "wb") as f:
            f.write(text)
        return path

    tf_ = Session()

    def from_file(t, path, key, val, delimiter="\t", vocab_size=-1, offset=0):
        return tf_.run(raw.InitializeTableFromTextFileV2, table_handle=t,
                       filename=np.array(path.encode(), dtype=object), key_index=key,
                       value_index=val, delimiter=delimiter, vocab_size=vocab_size, offset=offset)

    def find(t, keys, default):
        return tf_.run(raw.LookupTableFindV2, table_handle=t, keys=keys, default_value=default)

    def size(t):
        return tf_.run(raw.LookupTableSizeV2, table_handle=t)

    # TextFileColumnsLineNumbersAndVocabSize
    path = write("crlf.txt", CRLF)
    t = tf_.table(tf.string, tf.int64)
    succeeds(c, "text file columns 0 and 1", lambda: from_file(t, path, 0, 1, " "),
             'ASSERT_TRUE(FromFile(t, path, 0, 1, " ").ok());')
    c.case("text file columns find", find(t, s("alpha", "beta", "gamma", "delta"), np.int64(-1)),
           'Strings({"alpha", "beta", "gamma", "delta"})', after="std::vector<double>{")
    value(c, "text file columns size", size(t), "EXPECT_EQ(Size(t),", occurrence=0)
    back = tf_.table(tf.int64, tf.string)
    succeeds(c, "line numbers with offset 3", lambda: from_file(back, path, -1, -2, "\t", -1, 3),
             'ASSERT_TRUE(FromFile(back, path, -1, -2, "\\t", -1, 3).ok());')
    strings(c, "line numbers with offset 3 find", find(back, i64(2, 3, 4, 5, 6), np.array(b"?",
                                                                                         object)),
            "Int64s({2, 3, 4, 5, 6})", after="std::vector<std::string>{")
    two = tf_.table(tf.string, tf.int64)
    succeeds(c, "vocab_size 2", lambda: from_file(two, path, -2, -1, "\t", 2),
             'ASSERT_TRUE(FromFile(two, path, -2, -1, "\\t", 2).ok());')
    c.case("vocab_size 2 find", find(two, s("alpha 10", "beta 20", "gamma 30"), np.int64(-1)),
           'Strings({"alpha 10", "beta 20", "gamma 30"})', after="std::vector<double>{")
    succeeds(c, "second file initialization ignored", lambda: from_file(two, path, -2, -1),
             "EXPECT_TRUE(FromFile(two, path, -2, -1).ok());")
    value(c, "vocab_size 2 size", size(two), "EXPECT_EQ(Size(two),")

    # TextFileErrors
    path = write("crlf2.txt", CRLF)
    gap = write("emptyline.txt", b"a\n\nb\n")
    empty = write("empty.txt", b"")
    missing = write("x", b"") + ".missing"
    names = {"path": path, "gap": gap, "missing": missing}

    def table():
        return tf_.table(tf.string, tf.int64)

    error(c, "vocab_size 5 of 3 lines", lambda: from_file(table(), path, -2, -1, "\t", 5),
          'ExpectError(FromFile(table(), path, -2, -1, "\\t", 5),', names)
    error(c, "empty line", lambda: from_file(table(), gap, -2, -1),
          "ExpectError(FromFile(table(), gap, -2, -1),", names)
    error(c, "key column not an int64", lambda: from_file(table(), path, 1, 0, " "),
          'ExpectError(FromFile(table(), path, 1, 0, " "),', names)
    error(c, "too few columns", lambda: from_file(table(), path, 0, 2, " "),
          'ExpectError(FromFile(table(), path, 0, 2, " "),', names)
    error(c, "missing file", lambda: from_file(table(), missing, -2, -1),
          "ExpectError(FromFile(table(), missing, -2, -1),", names)
    error(c, "empty file", lambda: from_file(table(), empty, -2, -1),
          "ExpectError(FromFile(table(), empty, -2, -1),", names)
    error(c, "line number value into a float table",
          lambda: from_file(tf_.table(tf.string, tf.float32), path, -2, -1),
          "ExpectError(FromFile(NewTable(DT_STRING, DT_FLOAT), path, -2, -1),", names)
    error(c, "file into a mutable table",
          lambda: from_file(tf_.table(tf.int64, tf.float32, True), path, -1, -2),
          "ExpectError(FromFile(NewTable(DT_INT64, DT_FLOAT, true), path, -1, -2),", names)

    # HashTableFromTensors
    t = tf_.table(tf.string, tf.int64)

    def init(t, keys, values):
        return tf_.run(raw.InitializeTableV2, table_handle=t, keys=keys, values=values)

    error(c, "find before initialization", lambda: find(t, s("a"), np.int64(0)),
          'ExpectError(Find(t, Strings({"a"}), Tensor::Scalar<int64_t>(0)),')
    value(c, "size before initialization", size(t), "EXPECT_EQ(Size(t),", occurrence=1)
    error(c, "export before initialization",
          lambda: tf_.run(raw.LookupTableExportV2, table_handle=t, Tkeys=tf.string,
                          Tvalues=tf.int64),
          'ExpectError(RunOp("LookupTableExportV2",')
    error(c, "key with two values", lambda: init(t, s("a", "b", "a"), i64(1, 2, 3)),
          'ExpectError(RunOp("InitializeTableV2", {}, {t, Strings({"a", "b", "a"}),')
    succeeds(c, "repeated key with one value", lambda: init(t, s("a", "b", "a"), i64(1, 2, 1)),
             'ASSERT_TRUE(RunOp("InitializeTableV2", {}, {t, Strings({"a", "b", "a"}), '
             'Int64s({1, 2, 1})}).ok());')
    succeeds(c, "second initialization with as many entries",
             lambda: init(t, s("x", "y"), i64(7, 8)),
             'ASSERT_TRUE(RunOp("InitializeTableV2", {}, {t, Strings({"x", "y"}), '
             'Int64s({7, 8})}).ok());')
    c.case("find after initialization", find(t, s("a", "x"), np.int64(0)),
           'Find(t, Strings({"a", "x"}), Tensor::Scalar<int64_t>(0));',
           after="std::vector<double>{")
    error(c, "second initialization with another count", lambda: init(t, s("x"), i64(7)),
          'ExpectError(RunOp("InitializeTableV2", {}, {t, Strings({"x"}), Int64s({7})}),')
    found = find(t, s("b", "a", "q", "b").reshape(2, 2), np.int64(-5))
    shape(c, "find 2x2 shape", found, "EXPECT_EQ((*found)[0].shape(),")
    c.case("find 2x2", found, "Tensor::Scalar<int64_t>(-5));", after="std::vector<double>{")
    error(c, "default of the wrong shape", lambda: find(t, s("a", "b"), i64(0, 1, 2)),
          'ExpectError(Find(t, Strings({"a", "b"}), Int64s({0, 1, 2})),')
    error(c, "insert into a HashTable",
          lambda: tf_.run(raw.LookupTableInsertV2, table_handle=t, keys=s("a"), values=i64(1)),
          'ExpectError(RunOp("LookupTableInsertV2", {}, {t, Strings({"a"}), Int64s({1})}),')
    error(c, "matrix keys",
          lambda: init(tf_.table(tf.int64, tf.int64), i64(1).reshape(1, 1), i64(1)),
          "{NewTable(DT_INT64, DT_INT64),")

    # MutableTable
    t = tf_.table(tf.int64, tf.float32, mutable=True)
    value(c, "mutable size when new", size(t), "EXPECT_EQ(Size(t),", occurrence=2)
    succeeds(c, "mutable insert 2x2",
             lambda: tf_.run(raw.LookupTableInsertV2, table_handle=t,
                             keys=i64(1, 2, 3, 4).reshape(2, 2),
                             values=f32(.5, 1.5, 2.5, 3.5).reshape(2, 2)),
             "Tensor::FromVector<int64_t>({1, 2, 3, 4}, TensorShape({2, 2})),")
    succeeds(c, "mutable insert over a key",
             lambda: tf_.run(raw.LookupTableInsertV2, table_handle=t, keys=i64(2),
                             values=f32(-1)),
             "{t, Int64s({2}), Tensor::FromVector<float>({-1.f})}).ok());")
    succeeds(c, "mutable remove",
             lambda: tf_.run(raw.LookupTableRemoveV2, table_handle=t, keys=i64(3, 9)),
             'ASSERT_TRUE(RunOp("LookupTableRemoveV2", {}, {t, Int64s({3, 9})}).ok());')
    value(c, "mutable size after remove", size(t), "EXPECT_EQ(Size(t),", occurrence=3)
    c.case("mutable find with per-key defaults", find(t, i64(1, 2, 3, 4), f32(10, 20, 30, 40)),
           "Tensor::FromVector<float>({10, 20, 30, 40}));", after="std::vector<double>{", kind="d")
    keys, values = tf_.run(raw.LookupTableExportV2, table_handle=t, Tkeys=tf.int64,
                           Tvalues=tf.float32)
    c.case("mutable export, sorted", np.array(sorted(zip(keys.tolist(), values.tolist()))),
           "std::sort(entries.begin(), entries.end());",
           after="std::vector<std::pair<double, double>>{", kind="d")
    succeeds(c, "mutable import",
             lambda: tf_.run(raw.LookupTableImportV2, table_handle=t, keys=i64(7),
                             values=f32(7.25)),
             'ASSERT_TRUE(RunOp("LookupTableImportV2", {}, {t, Int64s({7}), '
             'Tensor::FromVector<float>({7.25f})})')
    value(c, "mutable size after import", size(t), "EXPECT_EQ(Size(t),", occurrence=4)
    c.case("mutable find after import", find(t, i64(7, 1), np.float32(0)),
           "found = Find(t, Int64s({7, 1}), Tensor::Scalar<float>(0));",
           after="std::vector<double>{", kind="d")
    error(c, "mutable insert, values short",
          lambda: tf_.run(raw.LookupTableInsertV2, table_handle=t, keys=i64(1, 2), values=f32(1)),
          'ExpectError(RunOp("LookupTableInsertV2", {}, {t, Int64s({1, 2}),')
    error(c, "initialize a mutable table", lambda: init(t, i64(1), f32(1)),
          'ExpectError(RunOp("InitializeTableV2", {}, {t, Int64s({1}),')


if __name__ == "__main__":
    main()
