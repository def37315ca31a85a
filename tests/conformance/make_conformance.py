"""Records TensorFlow's answers for graphrun's per-op conformance suite.

Run with TensorFlow installed (never in CI):
    python tests/conformance/make_conformance.py [OP ...]

For every op of cases_*.py it builds small single-op graphs (one per case) whose
inputs are placeholders of unknown shape, runs each in a TensorFlow session,
and writes tests/conformance/<Op>.pb: a GraphDef holding, for case i, the
placeholders `c<i>/<arg>`, the op `c<i>/op`, the fed values as Consts
`c<i>/feed_<arg>`, and TensorFlow's outputs as Consts `c<i>/want<k>` or, when
TensorFlow refused the inputs, a string Const `c<i>/error` ("CODE: message").
MANIFEST lists `<Op> <cases>`; //tests:conformance_test runs every case.

A case with the attr `pre=(op, arg, attrs)` feeds its inputs to a first op
`c<i>/pre` (of type `op`, with `attrs`) and that op's output to the op's input
`arg`: how a variant input (RaggedTensorFromVariant's) is made. Variant
outputs are not recorded (an op whose outputs are all variants is only run).

A program case (conformance_cases.program) holds a small graph of its own
around the op: string Consts `c<i>/prog_run<j>` name the targets of run j
and `c<i>/prog_fetch` the tensors fetched after the runs, recorded as
`want<k>` in that order; all runs go in one session, so state (variables,
tables, lists) carries from one to the next. File paths in string Consts
are written as tokens (PATH_TOKENS): "@TMP@" a scratch directory, "@DIR@"
tests/conformance. Where TensorFlow has no CPU kernel for the op, build()
returns a third list, tensors of an equivalent graph of TensorFlow's whose
values are recorded instead. The GraphDef's function library goes with
every case (functional control flow). The files come out byte for byte the
same on every run, except for the names TensorFlow gives the functions of
control-flow and call cases: it numbers them per process.
"""
import os
import sys

import tensorflow as tf

tf.compat.v1.disable_eager_execution()
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

# Each module adds its cases to CASES, in this order (inputs are drawn from
# one seeded generator: a module's additions leave earlier modules' alone).
import cases_core  # noqa: E402,F401
import cases_more  # noqa: E402,F401
import cases_new  # noqa: E402,F401
import cases_image2  # noqa: E402,F401
import cases_strings2  # noqa: E402,F401
import cases_random2  # noqa: E402,F401
import cases_sets_ctc  # noqa: E402,F401
import cases_ragged2  # noqa: E402,F401
import cases_state  # noqa: E402,F401
import cases_optim  # noqa: E402,F401
import cases_containers  # noqa: E402,F401
import cases_control  # noqa: E402,F401
import cases_files  # noqa: E402,F401
import cases_data_flow  # noqa: E402,F401
from conformance_cases import CASES  # noqa: E402

CODES = {1: "CANCELLED", 2: "UNKNOWN", 3: "INVALID_ARGUMENT", 4: "DEADLINE_EXCEEDED",
         5: "NOT_FOUND", 6: "ALREADY_EXISTS", 7: "PERMISSION_DENIED", 10: "ABORTED",
         14: "UNAVAILABLE", 15: "DATA_LOSS",
         8: "RESOURCE_EXHAUSTED", 9: "FAILED_PRECONDITION", 11: "OUT_OF_RANGE",
         12: "UNIMPLEMENTED", 13: "INTERNAL"}


# Outputs whose values TensorFlow leaves unspecified (not compared): the
# inference-mode reserve spaces of the fused batch norms.
UNSPECIFIED = {
    "FusedBatchNorm": lambda a: () if a.get("is_training", True) else (3, 4),
    "FusedBatchNormV2": lambda a: () if a.get("is_training", True) else (3, 4),
    "FusedBatchNormV3": lambda a: () if a.get("is_training", True) else (3, 4, 5),
}


def error_line(message):
    """The line of a session error that says what is wrong."""
    lines = [l for l in message.splitlines() if l.strip()]
    for i, l in enumerate(lines[:-1]):
        if l.startswith("Node: "):
            return lines[i + 1].strip()
    return next((l for l in lines if not l.startswith("Graph execution error")), "").strip()


def tf_dtype(value):
    return tf.string if value.dtype == object else tf.as_dtype(value.dtype)


def record(op, cases):
    g = tf.Graph()
    with g.as_default(), tf.compat.v1.Session() as sess:
        for i, (inputs, attrs) in enumerate(cases):
            if callable(inputs):
                record_program(g, sess, i, inputs)
                continue
            with tf.name_scope(f"c{i}"):
                kwargs, feeds = dict(attrs), {}
                pre = kwargs.pop("pre", None)
                args = dict(pre[2]) if pre else kwargs  # what the inputs feed
                for arg, value in inputs:
                    if isinstance(value, list):
                        phs = []
                        for k, v in enumerate(value):
                            ph = tf.compat.v1.placeholder(tf_dtype(v), shape=None, name=f"{arg}_{k}")
                            feeds[ph] = v
                            tf.constant(v, dtype=tf_dtype(v), name=f"feed_{arg}_{k}")
                            phs.append(ph)
                        args[arg] = phs
                    else:
                        ph = tf.compat.v1.placeholder(tf_dtype(value), shape=None, name=arg)
                        feeds[ph] = value
                        tf.constant(value, dtype=tf_dtype(value), name=f"feed_{arg}")
                        args[arg] = ph
                if pre:
                    kwargs[pre[1]] = getattr(tf.raw_ops, pre[0])(name="pre", **args)
                getattr(tf.raw_ops, op)(name="op", **kwargs)
                node = g.get_operation_by_name(f"c{i}/op")
                fetch = [t for t in node.outputs if t.dtype != tf.variant]
                try:
                    if node.outputs and not fetch:
                        sess.run(node, feed_dict=feeds)
                    outs = sess.run(fetch, feed_dict=feeds)
                    skip = UNSPECIFIED.get(op, lambda a: ())(attrs)
                    for t, v in zip(fetch, outs):
                        if t.value_index not in skip:
                            tf.constant(v, dtype=t.dtype, name=f"want{t.value_index}")
                except tf.errors.OpError as e:
                    tf.constant(f"{CODES[e.error_code]}: {error_line(e.message)}", name="error")
    path = os.path.join(HERE, f"{op}.pb")
    graph_def = g.as_graph_def()
    tokenize_paths(graph_def)
    with open(path + ".tmp", "wb") as f:
        f.write(graph_def.SerializeToString(deterministic=True))
    os.replace(path + ".tmp", path)


# Directories that string Consts name as tokens, so that the test can put
# them where it runs: cases_files' scratch directory and this directory.
PATH_TOKENS = {cases_files.TMP: "@TMP@", HERE: "@DIR@"}


def tokenize_paths(graph_def):
    for node in graph_def.node:
        if node.op != "Const" or node.attr["dtype"].type != tf.string.as_datatype_enum:
            continue
        values = node.attr["value"].tensor.string_val
        for k, v in enumerate(values):
            for path, token in PATH_TOKENS.items():
                v = v.replace(path.encode(), token.encode())
            values[k] = v


def record_program(g, sess, i, build):
    with tf.name_scope(f"c{i}"):
        built = build()
        runs, fetch = built[:2]
        reference = built[2] if len(built) > 2 else fetch
        for j, targets in enumerate(runs):
            names = [(t.op if isinstance(t, tf.Tensor) else t).name for t in targets]
            tf.constant(names, dtype=tf.string, name=f"prog_run{j}")
        tf.constant([t.name for t in fetch], dtype=tf.string, name="prog_fetch")
        try:
            for targets in runs:
                sess.run(targets)
            for k, (t, v) in enumerate(zip(fetch, sess.run(reference))):
                tf.constant(v, dtype=t.dtype, name=f"want{k}")
        except tf.errors.OpError as e:
            tf.constant(f"{CODES[e.error_code]}: {error_line(e.message)}", name="error")


# Ops whose cases another script records (TensorFlow has no CPU kernel for
# them): their MANIFEST lines are kept as they are.
RECORDED_ELSEWHERE = {"CudnnRNN", "CudnnRNNV2", "CudnnRNNV3"}  # make_cudnn_rnn_cases.py


def main(ops):
    for op in ops or sorted(CASES):
        record(op, CASES[op])
    manifest = os.path.join(HERE, "MANIFEST")
    counts = {op: len(c) for op, c in CASES.items()}
    with open(manifest) as f:
        for line in f:
            fields = line.split()
            if len(fields) == 2 and fields[0] in RECORDED_ELSEWHERE:
                counts[fields[0]] = int(fields[1])
    with open(manifest + ".tmp", "w") as f:
        f.write("# <Op> <cases>: tests/conformance/<Op>.pb, written by make_conformance.py\n")
        for op in sorted(counts):
            f.write(f"{op} {counts[op]}\n")
    os.replace(manifest + ".tmp", manifest)


if __name__ == "__main__":
    main(sys.argv[1:])
