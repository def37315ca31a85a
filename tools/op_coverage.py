#!/usr/bin/env python3
"""The op coverage table of the README: graphrun's registered ops (from
`graphrun inspect --ops`) against the TensorFlow op names tf2onnx converts
and against the op types of the graphs under tests/ (GraphDefs, SavedModels
and MetaGraphs, function bodies included).

Run with TensorFlow and tf2onnx installed (never in CI), from the repository
root, after `./bazelw build //tools:graphrun`:
    python tools/op_coverage.py [--list]
"""
import glob
import os
import subprocess
import sys

from tensorflow.core.framework import graph_pb2
from tensorflow.core.protobuf import meta_graph_pb2, saved_model_pb2
from tensorflow.python.framework import op_def_registry
from google.protobuf import text_format

# Ops graph/import.cc refuses naming the node to cut at: graphrun runs the
# model, not its input pipeline.
PIPELINE = {"FIFOQueueV2", "IteratorGetNext", "IteratorV2", "QueueDequeueManyV2",
            "QueueDequeueUpToV2", "QueueDequeueV2"}

def registered():
    out = subprocess.run(["bazel-bin/tools/graphrun", "inspect", "--ops"], check=True,
                         capture_output=True, text=True).stdout
    return {line.split()[0] for line in out.splitlines() if line and not line[0].isdigit()}


def tf2onnx_ops():
    from tf2onnx import handler
    import tf2onnx.onnx_opset  # noqa: F401 (registers the handlers)
    import tf2onnx.custom_opsets  # noqa: F401
    ops = set()
    for opsets in handler.tf_op.get_opsets().values():
        for opset in opsets:
            ops.update(opset)
    return ops


def graph_ops(graph_def):
    ops = {n.op for n in graph_def.node}
    for f in graph_def.library.function:
        ops.update(n.op for n in f.node_def)
    return ops


def fixture_ops():
    ops, graphs = set(), 0
    for path in sorted(glob.glob("tests/**/*.pb", recursive=True) +
                       glob.glob("tests/**/*.pbtxt", recursive=True)):
        if "/conformance/" in path:
            continue
        data = open(path, "rb").read()
        found = None
        for kind in (saved_model_pb2.SavedModel, meta_graph_pb2.MetaGraphDef, graph_pb2.GraphDef):
            msg = kind()
            try:
                if path.endswith(".pbtxt"):
                    text_format.Parse(data.decode(), msg)
                else:
                    msg.ParseFromString(data)
            except Exception:  # not this kind (or not a graph at all)
                continue
            if kind is saved_model_pb2.SavedModel and msg.meta_graphs:
                found = set().union(*(graph_ops(m.graph_def) for m in msg.meta_graphs))
            elif kind is meta_graph_pb2.MetaGraphDef and msg.graph_def.node:
                found = graph_ops(msg.graph_def)
            elif kind is graph_pb2.GraphDef and msg.node:
                found = graph_ops(msg)
            if found:
                break
        if found:
            ops |= found
            graphs += 1
    return ops, graphs


def main(argv):
    have = registered()
    onnx = tf2onnx_ops()
    core = {op for op in onnx if op_def_registry.get(op) is not None}
    missing_core = sorted(core - have - PIPELINE)
    fixtures, graphs = fixture_ops()
    rows = [
        ("graphrun registers", len(have), ""),
        ("tf2onnx converts (TensorFlow op names)", len(onnx), ""),
        ("  of which graphrun registers", len(onnx & have), ""),
        ("  not TensorFlow ops (tf2onnx's own names, TF Text)", len(onnx - core), ""),
        ("  input pipeline, refused naming the node to cut", len(core & PIPELINE - have), ""),
        ("  TensorFlow ops still missing", len(missing_core), " ".join(missing_core)),
        (f"op types in the {graphs} test graphs", len(fixtures), ""),
        ("  of which graphrun registers", len(fixtures & have), ""),
        ("  not registered", len(fixtures - have), " ".join(sorted(fixtures - have))),
    ]
    for name, count, note in rows:
        print(f"{name:55s} {count:5d}  {note}".rstrip())
    if "--list" in argv:
        print("not TensorFlow ops:", " ".join(sorted(onnx - core)))
    return 1 if missing_core or fixtures - have else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
