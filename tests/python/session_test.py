"""graphrun.Session from Python: TensorFlow's outputs, fetch structures, every
dtype in and out, zero-copy feeds and fetches, errors as exceptions, traces,
and concurrent run() calls."""

import collections
import json
import os
import subprocess
import sys
import threading
import unittest

import numpy as np

import graphrun
from graphrun import errors

EX = "examples"


def identity_graph(dtypes):
    """A GraphDef (text) with, for each dtype, Placeholder in_<t> -> Identity out_<t>."""
    nodes = []
    for t in dtypes:
        nodes.append('node { name: "in_%s" op: "Placeholder" attr { key: "dtype" value { type: %s } } }'
                     % (t, "DT_" + t.upper()))
        nodes.append('node { name: "out_%s" op: "Identity" input: "in_%s" '
                     'attr { key: "T" value { type: %s } } }' % (t, t, "DT_" + t.upper()))
    nodes.append('node { name: "c" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } } '
                 'attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 3 } } '
                 'float_val: 1 float_val: 2 float_val: 3 } } } }')
    nodes.append('node { name: "s" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } } '
                 'attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 7.5 } } } }')
    nodes.append('versions { producer: 1087 }')
    return "\n".join(nodes).encode()


DTYPES = ["half", "float", "double", "bfloat16", "int8", "int16", "int32", "int64", "uint8",
          "uint16", "uint32", "uint64", "bool", "complex64", "complex128", "string"]
NUMPY = {"half": np.float16, "float": np.float32, "double": np.float64, "int8": np.int8,
         "int16": np.int16, "int32": np.int32, "int64": np.int64, "uint8": np.uint8,
         "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64, "bool": np.bool_,
         "complex64": np.complex64, "complex128": np.complex128}


def aligned(shape, dtype, offset=0):
    """An array whose data starts `offset` bytes past a 64-byte boundary."""
    dtype = np.dtype(dtype)
    n = int(np.prod(shape)) * dtype.itemsize
    raw = np.zeros(n + 128, np.uint8)
    start = (-raw.ctypes.data) % 64 + offset
    return raw[start:start + n].view(dtype).reshape(shape)


class SessionTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.x = np.load(os.path.join(EX, "mlp_x.npy"))
        cls.expected = np.load(os.path.join(EX, "mlp_probs_expected.npy"))  # TensorFlow's
        cls.ids = graphrun.Session(identity_graph(DTYPES))

    def test_mlp_matches_tensorflow(self):
        with graphrun.Session(os.path.join(EX, "mlp.pbtxt")) as sess:
            probs = sess.run("probs:0", {"x:0": self.x})
        self.assertEqual(probs.dtype, np.float32)
        np.testing.assert_allclose(probs, self.expected, rtol=1e-5, atol=1e-6)

    def test_graph_from_bytes_and_from_object_with_serialize(self):
        with open(os.path.join(EX, "mlp.pbtxt"), "rb") as f:
            text = f.read()

        class GraphDefLike:
            def SerializeToString(self):  # noqa: N802
                return text

        for graph in (text, GraphDefLike()):
            sess = graphrun.Session(graph)
            np.testing.assert_allclose(sess.run("probs:0", {"x": self.x}), self.expected,
                                       rtol=1e-5, atol=1e-6)

    def test_fetch_structures(self):
        s = self.ids
        x = np.arange(3, dtype=np.float32)
        Pair = collections.namedtuple("Pair", "a b")
        out = s.run({"list": ["c:0", "out_float:0"], "tuple": ("s:0",), "pair": Pair("c:0", "s:0"),
                     "nested": [{"k": "out_float:0"}], "op": "out_float"}, {"in_float:0": x})
        self.assertEqual(sorted(out), ["list", "nested", "op", "pair", "tuple"])
        self.assertIsInstance(out["list"], list)
        self.assertIsInstance(out["tuple"], tuple)
        self.assertIsInstance(out["pair"], Pair)
        np.testing.assert_array_equal(out["list"][0], [1, 2, 3])
        np.testing.assert_array_equal(out["list"][1], x)
        np.testing.assert_array_equal(out["nested"][0]["k"], x)
        self.assertIsNone(out["op"])  # an op name runs the op and gives None
        self.assertIsInstance(out["pair"].b, np.float32)  # 0-d: a NumPy scalar
        self.assertEqual(out["pair"].b, 7.5)
        self.assertEqual(s.run("s:0"), 7.5)

    def test_every_dtype_in_and_out(self):
        rng = np.random.default_rng(1)
        for t in DTYPES:
            with self.subTest(dtype=t):
                if t == "string":
                    value = np.array([[b"a", b"\x00bc"], [b"", "\u00e9t\u00e9".encode()]], dtype=object)
                    got = self.ids.run("out_string:0", {"in_string:0": value})
                    self.assertEqual(got.dtype, object)
                    self.assertEqual(got.tolist(), value.tolist())
                    # str values travel as UTF-8, fixed-width bytes as their bytes
                    got = self.ids.run("out_string:0", {"in_string:0": ["\u00e9", "b"]})
                    self.assertEqual(got.tolist(), ["\u00e9".encode(), b"b"])
                    got = self.ids.run("out_string:0", {"in_string:0": np.array([b"xy", b"z"])})
                    self.assertEqual(got.tolist(), [b"xy", b"z"])
                    # Raw bytes keep their trailing NULs (a serialized proto may end in one).
                    got = self.ids.run("out_string:0", {"in_string:0": [b"ab\x00\x00", b"\x08\x00"]})
                    self.assertEqual(got.tolist(), [b"ab\x00\x00", b"\x08\x00"])
                    self.assertEqual(self.ids.run("out_string:0", {"in_string:0": b"s\x00"}), b"s\x00")
                    continue
                if t == "bfloat16":
                    # float32 in, rounded to nearest even (ties: 1+2^-8 -> 1,
                    # 1+3*2^-8 -> 1+2^-6); float32 out without ml_dtypes.
                    value = np.array([1.0, 1.00390625, 1.01171875, -2.0, 3.0e38], np.float32)
                    got = self.ids.run("out_bfloat16:0", {"in_bfloat16:0": value})
                    got = np.asarray(got).astype(np.float32)
                    np.testing.assert_array_equal(got[:4], [1.0, 1.0, 1.015625, -2.0])
                    bits = int(np.float32(3.0e38).view(np.uint32))  # round to nearest even by hand
                    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
                    self.assertEqual(got[4], np.uint32(rounded).view(np.float32))
                    continue
                dt = NUMPY[t]
                if t == "bool":
                    value = rng.integers(0, 2, (2, 3)).astype(dt)
                elif t.startswith("complex"):
                    value = (rng.standard_normal((2, 3)) + 1j * rng.standard_normal((2, 3))).astype(dt)
                elif t in ("half", "float", "double"):
                    value = rng.standard_normal((2, 3)).astype(dt)
                else:
                    info = np.iinfo(dt)
                    value = np.array([[info.min, 0, info.max], [1, 2, 3]], dt)
                got = self.ids.run("out_%s:0" % t, {"in_%s:0" % t: value})
                self.assertEqual(got.dtype, np.dtype(dt))
                self.assertEqual(got.shape, (2, 3))
                np.testing.assert_array_equal(got, value)
                # The same values from 64-byte-aligned memory travel without a copy.
                fed = aligned((2, 3), dt)
                fed[...] = value
                got = self.ids.run("out_%s:0" % t, {"in_%s:0" % t: fed})
                self.assertTrue(np.shares_memory(got, fed), t)
                np.testing.assert_array_equal(got, value)

    def test_feeds_convert_to_the_placeholder_dtype(self):
        got = self.ids.run("out_float:0", {"in_float:0": [[1, 2], [3, 4]]})
        self.assertEqual(got.dtype, np.float32)
        got = self.ids.run("out_half:0", {"in_half:0": np.array([0.5, 65504.0], np.float64)})
        self.assertEqual(got.dtype, np.float16)
        np.testing.assert_array_equal(got, [0.5, 65504.0])
        big_endian = np.array([1, 2, 300], dtype=">i4")
        np.testing.assert_array_equal(self.ids.run("out_int32:0", {"in_int32:0": big_endian}),
                                      [1, 2, 300])
        strided = np.arange(12, dtype=np.float64).reshape(3, 4)[:, ::2]
        np.testing.assert_array_equal(self.ids.run("out_double:0", {"in_double:0": strided}),
                                      strided)
        empty = np.zeros((0, 5), np.float32)
        self.assertEqual(self.ids.run("out_float:0", {"in_float:0": empty}).shape, (0, 5))

    def test_aligned_feed_is_not_copied(self):
        x = aligned((256, 64), np.float32)
        x[...] = np.arange(x.size, dtype=np.float32).reshape(x.shape)
        out = self.ids.run("out_float:0", {"in_float:0": x})
        # The Identity's output is the fed buffer: the array graphrun returns
        # is a view of the caller's memory, in both directions.
        self.assertTrue(np.shares_memory(out, x))
        x[0, 0] = -1.0
        self.assertEqual(out[0, 0], -1.0)
        del x
        self.assertEqual(out[0, 1], 1.0)  # the fetched array keeps the memory alive

    def test_a_fed_array_is_released_with_the_last_view(self):
        x = aligned((64,), np.float32)
        before = sys.getrefcount(x)
        out = self.ids.run("out_float:0", {"in_float:0": x})
        self.assertTrue(np.shares_memory(out, x))
        self.assertGreater(sys.getrefcount(x), before)  # the step's tensor holds it
        del out
        self.assertEqual(sys.getrefcount(x), before)
        self.ids.run("out_float:0", {"in_float:0": x})  # result dropped at once
        self.assertEqual(sys.getrefcount(x), before)

    def test_read_only_memory_is_copied(self):
        x = aligned((64,), np.float32)
        x[...] = 3.0
        x.flags.writeable = False
        out = self.ids.run("out_float:0", {"in_float:0": x})
        self.assertFalse(np.shares_memory(out, x))
        out[0] = 1.0  # the result is the caller's to write
        self.assertEqual(x[0], 3.0)

    def test_feeds_to_any_tensor_take_its_dtype(self):
        got = self.ids.run("out_float:0", {"out_float:0": [1.5, 2]})
        self.assertEqual(got.dtype, np.float32)
        np.testing.assert_array_equal(got, [1.5, 2.0])

    def test_defaultdict_fetches(self):
        d = collections.defaultdict(list, {"c": "c:0"})
        out = self.ids.run(d)
        self.assertIsInstance(out, collections.defaultdict)
        self.assertEqual(out.default_factory, list)
        np.testing.assert_array_equal(out["c"], [1, 2, 3])

    def test_non_utf8_error_messages_stay_op_errors(self):
        graph = (b'node { name: "s" op: "Placeholder" attr { key: "dtype" value { type: DT_STRING } } } '
                 b'node { name: "n" op: "StringToNumber" input: "s" '
                 b'attr { key: "out_type" value { type: DT_FLOAT } } }')
        with self.assertRaises(errors.InvalidArgumentError) as e:
            graphrun.Session(graph).run("n:0", {"s:0": [b"\xff1"]})
        self.assertIn("xff", str(e.exception))

    def test_close_while_another_thread_runs(self):
        sess = graphrun.Session(os.path.join(EX, "mlp.pbtxt"))
        outcomes = []
        started = threading.Event()

        def loop():
            try:
                for i in range(10000):
                    sess.run("probs:0", {"x:0": self.x})
                    if i == 0:
                        started.set()
                outcomes.append("finished")
            except errors.FailedPreconditionError as e:
                outcomes.append(str(e))
            except RuntimeError as e:  # closed between the Python check and the call
                outcomes.append(str(e))
            finally:
                started.set()

        t = threading.Thread(target=loop)
        t.start()
        started.wait()
        sess.close()
        t.join()
        self.assertEqual(len(outcomes), 1)
        self.assertTrue(outcomes[0] == "finished" or "closed" in outcomes[0], outcomes)
        with self.assertRaises(RuntimeError):
            sess.devices()

    def test_unaligned_feed_is_copied_with_the_same_values(self):
        x = aligned((100,), np.float32, offset=4)
        x[...] = np.arange(100)
        out = self.ids.run("out_float:0", {"in_float:0": x})
        self.assertFalse(np.shares_memory(out, x))
        np.testing.assert_array_equal(out, np.arange(100))

    def test_fetched_constants_are_copies(self):
        a = self.ids.run("c:0")
        a[0] = 100.0  # writing into a result never changes the graph
        b = self.ids.run("c:0")
        np.testing.assert_array_equal(b, [1, 2, 3])
        self.assertFalse(np.shares_memory(a, b))

    def test_errors_are_exceptions_with_the_cli_message(self):
        sess = graphrun.Session(os.path.join(EX, "mlp.pbtxt"))
        with self.assertRaises(errors.InvalidArgumentError) as e:
            sess.run("probs:0")  # x not fed
        self.assertIn("'x'", e.exception.message)
        self.assertEqual(e.exception.code, errors.INVALID_ARGUMENT)
        self.assertIsInstance(e.exception, errors.OpError)
        with self.assertRaises(errors.OpError) as e:
            sess.run("nope:0", {"x:0": self.x})
        self.assertIn("nope", str(e.exception))
        with self.assertRaises(errors.InvalidArgumentError) as e:
            sess.run("probs:0", {"x:0": np.zeros((2, 5), np.float32)})
        self.assertIn("[2,5]", str(e.exception))  # names the feed, its shape and the node's
        self.assertIn("Placeholder", str(e.exception))
        with self.assertRaises(errors.InvalidArgumentError) as e:
            sess.run("probs:0", {"x:0": np.array([["a"]], dtype=object)})
        self.assertIn("x", str(e.exception))
        with self.assertRaises(errors.NotFoundError) as e:
            graphrun.Session("/no/such/graph.pb")
        self.assertIn("/no/such/graph.pb", str(e.exception))
        with self.assertRaises(errors.InvalidArgumentError):
            graphrun.Session(b"\x08\x01garbage that is not a graph \xff")
        with self.assertRaises(TypeError) as e:
            graphrun.Session(os.path.join(EX, "mlp.pbtxt"), log_device_placment=True)
        self.assertIn("log_device_placement", str(e.exception))
        with self.assertRaises(TypeError):
            graphrun.Session(os.path.join(EX, "mlp.pbtxt"), cpu_devices="2")
        bad_op = b'node { name: "a" op: "NoSuchOp" }'
        with self.assertRaises(errors.OpError) as e:
            graphrun.Session(bad_op).run("a:0")
        self.assertIn("NoSuchOp", str(e.exception))
        sess.close()
        with self.assertRaises(RuntimeError):
            sess.run("probs:0", {"x:0": self.x})

    def test_run_metadata_has_step_stats_and_a_chrome_trace(self):
        sess = graphrun.Session(os.path.join(EX, "mlp.pbtxt"), optimize=False, cpu_devices=2)
        self.assertEqual(len(sess.devices()), 2)
        md = graphrun.RunMetadata()
        sess.run("probs:0", {"x:0": self.x}, options=graphrun.RunOptions(trace=True),
                 run_metadata=md)
        names = {n["name"] for _, n in md.nodes()}
        self.assertIn("dense1/MatMul", names)
        self.assertIn("probs", names)
        trace = json.loads(md.chrome_trace())
        self.assertTrue(any("dense1/MatMul" in json.dumps(e) for e in trace["traceEvents"]))
        self.assertGreater(len(md.SerializeToString()), 0)
        self.assertGreaterEqual(len(md.partition_graphs), 1)

    def test_threads_run_concurrently(self):
        sess = graphrun.Session(os.path.join(EX, "mlp.pbtxt"))
        # Each thread feeds its own batch; the answers are computed serially first.
        batches = [self.x * np.float32(1 + i) for i in range(4)]
        wanted = [sess.run("probs:0", {"x:0": b}) for b in batches]
        np.testing.assert_allclose(wanted[0], self.expected, rtol=1e-5, atol=1e-6)
        failures = []

        def worker(i):
            for _ in range(25):
                got = sess.run("probs:0", {"x:0": batches[i]})
                if not np.allclose(got, wanted[i], rtol=1e-6, atol=1e-7):
                    failures.append(i)

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(failures, [])

    def test_log_device_placement_says_where_and_why(self):
        # Printed by the runtime on the process's stdout, as TensorFlow does.
        code = ("import sys, numpy as np, graphrun\n"
                "s = graphrun.Session(sys.argv[1], log_device_placement=True, optimize=False)\n"
                "s.run('probs:0', {'x:0': np.load(sys.argv[2])})\n")
        out = subprocess.run([sys.executable, "-c", code, os.path.join(EX, "mlp.pbtxt"),
                              os.path.join(EX, "mlp_x.npy")], capture_output=True, text=True,
                             env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("dense1/MatMul: (MatMul): /job:localhost/replica:0/task:0/device:CPU:0 # ",
                      out.stdout)

    def test_options(self):
        names = graphrun.option_names()
        for n in ("cpu_devices", "log_device_placement", "optimize", "gpus", "local_workers",
                  "cluster_file", "wire_compression"):
            self.assertIn(n, names)
        sess = graphrun.Session(os.path.join(EX, "mlp.pbtxt"), optimize=False, gpus="none",
                                inter_op_threads=1, intra_op_threads=1)
        np.testing.assert_allclose(sess.run("probs:0", {"x:0": self.x}), self.expected,
                                   rtol=1e-5, atol=1e-6)

    def test_cluster_from_the_environment(self):
        # "TF_CONFIG" names the environment variable, which must be set.
        env = dict(os.environ)
        env.pop("TF_CONFIG", None)
        code = ("import sys, graphrun\n"
                "try:\n"
                "    graphrun.Session(sys.argv[1], cluster='TF_CONFIG')\n"
                "except ValueError as e:\n"
                "    print('ValueError:', e)\n")
        out = subprocess.run([sys.executable, "-c", code, os.path.join(EX, "mlp.pbtxt")],
                             capture_output=True, text=True,
                             env=dict(env, PYTHONPATH=os.pathsep.join(sys.path)))
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("ValueError: --cluster=TF_CONFIG: the TF_CONFIG environment variable is "
                      "not set", out.stdout)
        self.assertIn("in_process_worker", graphrun.option_names())


if __name__ == "__main__":
    unittest.main()
