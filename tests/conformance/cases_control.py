"""Conformance cases for the ops left over once the families have theirs:
graph plumbing (Const, Placeholder, NoOp, Assert, ControlTrigger), TF1
control flow (Switch/Merge/Enter/Exit/NextIteration/LoopCond and their Ref
forms), functional control flow and calls (If, While, Case, their Stateless
forms, PartitionedCall), the fused ops TensorFlow's graph optimizer writes
(_FusedMatMul, _FusedConv2D, _FusedDepthwiseConv2dNative), and a few
stand-alone ops (SpaceToBatchND, BatchToSpaceND, FusedBatchNormV2 and the
v1/v2 batch-norm gradients, StatelessRandomGetAlg, ShardedFilename ...).
Inputs come from this module's own generator."""
import numpy as np
import tensorflow as tf
from tensorflow.core.framework import attr_value_pb2
from tensorflow.python.ops import control_flow_util

from conformance_cases import case, f32, f64, i32, i64, program
from cases_state import opaque, ref_var

raw = tf.raw_ops
R = np.random.RandomState(1234)


def rnd(shape, dtype=f32, lo=-2.0, hi=2.0):
    return R.uniform(lo, hi, size=shape).astype(dtype)


def direct(op, inputs, hidden=("input",), **attrs):
    """A program case running `op` once on constant inputs, those named in
    `hidden` of unknown static shape (TensorFlow's shape function would
    refuse the rest of a bad case while the graph is built)."""
    def build():
        args = {a: opaque(v) if a in hidden else tf.constant(v) for a, v in inputs}
        out = getattr(raw, op)(name="op", **args, **attrs)
        return [], [out] if isinstance(out, tf.Tensor) else list(out)
    program(op, build)


# --- SpaceToBatchND / BatchToSpaceND ---
for dtype in (f32, i32):
    x = np.arange(2 * 4 * 6 * 3).reshape(2, 4, 6, 3).astype(dtype)
    direct("SpaceToBatchND", [("input", x), ("block_shape", np.array([2, 3], i32)),
                              ("paddings", np.array([[0, 0], [0, 0]], i32))])
direct("SpaceToBatchND", [("input", rnd([1, 3, 5, 2])), ("block_shape", np.array([2, 2], i64)),
                          ("paddings", np.array([[1, 0], [2, 1]], i64))])
direct("SpaceToBatchND", [("input", rnd([2, 5, 1])), ("block_shape", np.array([3], i32)),
                          ("paddings", np.array([[0, 1]], i32))])
direct("SpaceToBatchND", [("input", rnd([1, 5, 5, 1])), ("block_shape", np.array([2, 2], i32)),
                          ("paddings", np.array([[0, 0], [0, 0]], i32))])  # not divisible
for dtype in (f32, f64):
    direct("BatchToSpaceND", [("input", rnd([6, 2, 2, 3], dtype)),
                              ("block_shape", np.array([2, 3], i32)),
                              ("crops", np.array([[0, 0], [0, 0]], i32))])
direct("BatchToSpaceND", [("input", np.arange(4 * 3 * 3).reshape(4, 3, 3, 1).astype(i64)),
                          ("block_shape", np.array([2, 2], i64)),
                          ("crops", np.array([[1, 0], [0, 2]], i64))])
direct("BatchToSpaceND", [("input", rnd([3, 2, 2])), ("block_shape", np.array([3], i32)),
                          ("crops", np.array([[1, 1]], i32))])
direct("BatchToSpaceND", [("input", rnd([5, 2, 2, 1])), ("block_shape", np.array([2, 2], i32)),
                          ("crops", np.array([[0, 0], [0, 0]], i32))])  # batch not divisible
direct("BatchToSpaceND", [("input", rnd([4, 2, 2, 1])), ("block_shape", np.array([2, 2], i32)),
                          ("crops", np.array([[3, 2], [0, 0]], i32))])  # crops too large

# --- FusedBatchNormV2 and the v1/v2 gradients (NHWC, float32) ---
BX = rnd([2, 3, 2, 4])
BS, BO = rnd([4], f32, 0.5, 1.5), rnd([4])
BM, BV = rnd([4], f32, -0.5, 0.5), rnd([4], f32, 0.5, 2)
for training in (True, False):
    case("FusedBatchNormV2", ("x", BX), ("scale", BS), ("offset", BO), ("mean", BM),
         ("variance", BV), is_training=training)
case("FusedBatchNormV2", ("x", BX.astype(np.float16)), ("scale", BS), ("offset", BO), ("mean", BM),
     ("variance", BV), epsilon=0.01, is_training=True)
case("FusedBatchNormV2", ("x", BX), ("scale", BS[:3]), ("offset", BO), ("mean", BM),
     ("variance", BV), is_training=True)
BDY = rnd([2, 3, 2, 4])
BMEAN = BX.mean(axis=(0, 1, 2)).astype(f32)
BVAR = BX.var(axis=(0, 1, 2)).astype(f32)
for op in ("FusedBatchNormGrad", "FusedBatchNormGradV2"):
    for training in (True, False):
        case(op, ("y_backprop", BDY), ("x", BX), ("scale", BS),
             ("reserve_space_1", BMEAN if training else BM),
             ("reserve_space_2", BVAR if training else BV), is_training=training)
    case(op, ("y_backprop", BDY[:1]), ("x", BX), ("scale", BS), ("reserve_space_1", BMEAN),
         ("reserve_space_2", BVAR), is_training=True)
case("FusedBatchNormGradV2", ("y_backprop", BDY.astype(np.float16)), ("x", BX.astype(np.float16)),
     ("scale", BS), ("reserve_space_1", BMEAN), ("reserve_space_2", BVAR), epsilon=0.01,
     is_training=True)

# --- Stateless RNG plumbing ---
program("StatelessRandomGetAlg", lambda: ([], [raw.StatelessRandomGetAlg(name="alg")]))
for seed in (np.array([1, 2], i32), np.array([-7, 1 << 40], i64)):
    case("StatelessRandomGetKeyCounterAlg", ("seed", seed))
case("StatelessRandomGetKeyCounterAlg", ("seed", np.array([1, 2, 3], i32)))

# --- Checkpoint file names (string arithmetic only) ---
for shard, num in ((0, 1), (3, 10), (12, 100000)):
    case("ShardedFilename", ("basename", np.array(b"/tmp/model.ckpt", object)),
         ("shard", np.array(shard, i32)), ("num_shards", np.array(num, i32)))
case("ShardedFilespec", ("basename", np.array(b"dir/model", object)),
     ("num_shards", np.array(7, i32)))
case("ShardedFilespec", ("basename", np.array(b"", object)), ("num_shards", np.array(1, i32)))

# --- Graph plumbing ---
CONSTS = [np.array(3.5, f32), np.arange(6, dtype=f64).reshape(2, 3), np.array([], i32),
          np.array([[1, -2]], i64), np.array([b"a", b"", b"xyz"], object),
          np.array([True, False]), np.array([1.5, -0.25], np.float16),
          np.array([1 + 2j, -3j], np.complex64), np.array([7, 255], np.uint8)]
for k, value in enumerate(CONSTS):
    program("Const", lambda value=value: ([], [tf.constant(value, name="value")]))

# Placeholder: unfed, it fails naming itself. (PlaceholderV2 is refused by
# TensorFlow in GraphDefs of version 23 and later, so it has no case.)
program("Placeholder", lambda: ([], [tf.compat.v1.placeholder(tf.float32, shape=None, name="ph")]))
program("Placeholder", lambda: ([], [tf.compat.v1.placeholder(tf.int64, shape=[2], name="ph")]))


for value in (rnd([2, 3]), np.array([b"q"], object)):
    case("PlaceholderWithDefault", ("input", value), shape=tf.TensorShape(None))
case("PlaceholderWithDefault", ("input", rnd([2, 3])), shape=[2, 3])
case("PlaceholderWithDefault", ("input", rnd([2, 3])), shape=[3, 2])


def noop():
    v, init = ref_var(np.zeros([2], f32))
    with tf.control_dependencies([init]):
        step = raw.NoOp(name="step")
    return [[step]], [raw.Identity(input=v, name="read")]


program("NoOp", noop)


def control_trigger():
    v, init = ref_var(np.ones([2], f32))
    with tf.control_dependencies([init]):
        trig = raw.ControlTrigger(name="trigger")
    return [[trig]], [raw.Identity(input=v, name="read")]


program("ControlTrigger", control_trigger)

for holds in (True, False):
    def assert_(holds=holds):
        x = opaque(np.array([1.0, 2.0], f32))
        cond = raw.Less(x=x, y=tf.constant(1.5 if not holds else 3.0))
        check = raw.Assert(condition=raw.All(input=cond, axis=tf.constant(0)),
                           data=[tf.constant("x too large"), x], name="check")
        with tf.control_dependencies([check]):
            out = raw.Identity(input=x, name="out")
        return [], [out]
    program("Assert", assert_)


# --- TF1 control flow (Switch, Merge, Enter, Exit, NextIteration, LoopCond) ---
class _ControlFlowV1:
    def __enter__(self):
        self.saved = control_flow_util.ENABLE_CONTROL_FLOW_V2
        control_flow_util.ENABLE_CONTROL_FLOW_V2 = False

    def __exit__(self, *exc):
        control_flow_util.ENABLE_CONTROL_FLOW_V2 = self.saved


class _ControlFlowV2(_ControlFlowV1):
    def __enter__(self):
        self.saved = control_flow_util.ENABLE_CONTROL_FLOW_V2
        control_flow_util.ENABLE_CONTROL_FLOW_V2 = True


def while_v1(n, start):
    def build():
        with _ControlFlowV1():
            i0 = opaque(np.array(0, i32))
            x0 = opaque(start)
            i, x = tf.compat.v1.while_loop(
                lambda i, x: i < n,
                lambda i, x: (i + 1, x * 2.0 + tf.cast(i, x.dtype)), [i0, x0], name="loop")
        return [], [tf.identity(i, name="i"), tf.identity(x, name="x")]
    return build


def cond_v1(pred):
    def build():
        with _ControlFlowV1():
            x = opaque(np.array([1.0, -2.0], f32))
            y = tf.compat.v1.cond(opaque(np.array(pred)), lambda: x * 3.0, lambda: x - 1.0,
                                  name="cond")
        return [], [tf.identity(y, name="y")]
    return build


for op in ("Enter", "Exit", "NextIteration", "LoopCond", "Merge", "Switch"):
    program(op, while_v1(5, np.array([1.0, 0.5], f32)))
    program(op, while_v1(0, np.array(3.0, f64)))
for op in ("Switch", "Merge"):
    program(op, cond_v1(True))
    program(op, cond_v1(False))


def ref_switch_merge(pred):
    def build():
        v, init = ref_var(np.array([4.0, 5.0], f32))
        out_false, out_true = raw.RefSwitch(data=v, pred=opaque(np.array(pred)), name="switch")
        merged = raw.RefMerge(inputs=[out_false, out_true], name="merge")
        return [[init]], [raw.Identity(input=merged.output, name="value"),
                          raw.Identity(input=merged.value_index, name="index")]
    return build


for op in ("RefSwitch", "RefMerge"):
    program(op, ref_switch_merge(True))
    program(op, ref_switch_merge(False))


def ref_loop():
    """A TF1 loop that reads a ref variable through RefEnter, carrying the
    ref round through RefNextIteration and out through RefExit."""
    v, init = ref_var(np.array([1.0, 2.0], f32))
    g = tf.compat.v1.get_default_graph()
    frame = g.get_name_scope() + "/frame"
    enter = raw.RefEnter(data=v, frame_name=frame, is_constant=False, parallel_iterations=1,
                         name="enter")
    i_enter = raw.Enter(data=tf.constant(0), frame_name=frame, is_constant=False,
                        parallel_iterations=1, name="i_enter")
    merge = raw.RefMerge(inputs=[enter, enter], name="merge")
    i_merge = raw.Merge(inputs=[i_enter, i_enter], name="i_merge")
    def invariant(value, name):
        return raw.Enter(data=tf.constant(value), frame_name=frame, is_constant=True,
                         parallel_iterations=1, name=name)

    cond = raw.LoopCond(input=raw.Less(x=i_merge.output, y=invariant(3, "limit")), name="cond")
    v_false, v_true = raw.RefSwitch(data=merge.output, pred=cond, name="switch")
    i_false, i_true = raw.Switch(data=i_merge.output, pred=cond, name="i_switch")
    nxt = raw.RefNextIteration(data=v_true, name="next")
    i_nxt = raw.NextIteration(data=raw.Add(x=i_true, y=invariant(1, "one")), name="i_next")
    merge.output.op._update_input(1, nxt)
    i_merge.output.op._update_input(1, i_nxt)
    out = raw.RefExit(data=v_false, name="exit")
    i_out = raw.Exit(data=i_false, name="i_exit")
    return [[init]], [raw.Identity(input=out, name="value"), raw.Identity(input=i_out, name="i")]


for op in ("RefEnter", "RefExit", "RefNextIteration"):
    program(op, ref_loop)


# --- Functional control flow and calls ---
def if_v2(pred):
    def build():
        with _ControlFlowV2():
            x = opaque(np.array([1.0, -2.0, 4.0], f32))
            p = opaque(np.array(pred))
            y = tf.cond(p, lambda: x * 3.0, lambda: x - 1.0, name="cond")
        return [], [tf.identity(y, name="y")]
    return build


for pred in (True, False):
    program("StatelessIf", if_v2(pred))


def stateful_if(pred):
    def build():
        with _ControlFlowV2():
            h = raw.VarHandleOp(dtype=tf.float32, shape=[2],
                                shared_name=tf.compat.v1.get_default_graph().get_name_scope() + "/h",
                                name="h")
            init = raw.AssignVariableOp(resource=h, value=tf.constant([1.0, 2.0]))
            p = opaque(np.array(pred))

            def bump():
                raw.AssignAddVariableOp(resource=h, value=tf.constant([10.0, 10.0]))
                return tf.constant(1)

            y = tf.cond(p, bump, lambda: tf.constant(0), name="cond")
        read = raw.ReadVariableOp(resource=h, dtype=tf.float32, name="read")
        return [[init], [y]], [read]
    return build


for pred in (True, False):
    program("If", stateful_if(pred))


def while_v2(n, stateful):
    def build():
        with _ControlFlowV2():
            x0 = opaque(np.array([1.0, 0.5], f32))
            if stateful:
                h = raw.VarHandleOp(dtype=tf.int32, shape=[],
                                    shared_name=tf.compat.v1.get_default_graph().get_name_scope()
                                    + "/n", name="n")
                init = raw.AssignVariableOp(resource=h, value=tf.constant(0))

                def body(i, x):
                    raw.AssignAddVariableOp(resource=h, value=tf.constant(1))
                    return i + 1, x * 1.5
            else:
                def body(i, x):
                    return i + 1, x * 1.5
            i, x = tf.while_loop(lambda i, x: i < n, body, [tf.constant(0), x0], name="loop")
        fetch = [tf.identity(i, name="i"), tf.identity(x, name="x")]
        if stateful:
            with tf.control_dependencies(fetch):
                count = raw.ReadVariableOp(resource=h, dtype=tf.int32, name="count")
            return [[init]], fetch + [count]
        return [], fetch
    return build


for n in (4, 0):
    program("StatelessWhile", while_v2(n, False))
    program("While", while_v2(n, True))


def case_v2(index, stateful):
    def build():
        with _ControlFlowV2():
            x = opaque(np.array([2.0, 3.0], f32))
            i = opaque(np.array(index, i32))
            branches = [lambda: x + 1.0, lambda: x * x, lambda: -x]
            if stateful:
                h = raw.VarHandleOp(dtype=tf.float32, shape=[],
                                    shared_name=tf.compat.v1.get_default_graph().get_name_scope()
                                    + "/c", name="c")
                init = raw.AssignVariableOp(resource=h, value=tf.constant(0.0))

                def counted():
                    raw.AssignAddVariableOp(resource=h, value=tf.constant(1.0))
                    return x * 10.0
                branches[1] = counted
            y = tf.switch_case(i, branches, name="case")
        out = [tf.identity(y, name="y")]
        if stateful:
            with tf.control_dependencies(out):
                read = raw.ReadVariableOp(resource=h, dtype=tf.float32, name="read")
            return [[init]], out + [read]
        return [], out
    return build


for index in (0, 1, 2, 7, -1):
    program("StatelessCase", case_v2(index, False))
for index in (1, 2):
    program("Case", case_v2(index, True))


def call(stateful):
    def build():
        @tf.function(autograph=False)
        def f(a, b):
            return tf.matmul(a, b) + 1.0, tf.reduce_sum(a)

        a = opaque(rnd([2, 3]))
        b = opaque(rnd([3, 2]))
        if stateful:
            h = raw.VarHandleOp(dtype=tf.float32, shape=[],
                                shared_name=tf.compat.v1.get_default_graph().get_name_scope()
                                + "/s", name="s")
            init = raw.AssignVariableOp(resource=h, value=tf.constant(5.0))

            @tf.function(autograph=False)
            def g(a):
                raw.AssignAddVariableOp(resource=h, value=tf.reduce_sum(a))
                return a * 2.0

            y = g(a)
            with tf.control_dependencies([y]):
                read = raw.ReadVariableOp(resource=h, dtype=tf.float32, name="read")
            return [[init]], [tf.identity(y, name="y"), read]
        y, s = f(a, b)
        return [], [tf.identity(y, name="y"), tf.identity(s, name="s")]
    return build


program("PartitionedCall", call(False))
program("StatefulPartitionedCall", call(True))


# --- The fused ops of TensorFlow's graph optimizer ---
def _attr(**kw):
    out = {}
    for k, v in kw.items():
        if isinstance(v, bool):
            out[k] = attr_value_pb2.AttrValue(b=v)
        elif isinstance(v, int):
            out[k] = attr_value_pb2.AttrValue(i=v)
        elif isinstance(v, float):
            out[k] = attr_value_pb2.AttrValue(f=v)
        elif isinstance(v, str):
            out[k] = attr_value_pb2.AttrValue(s=v.encode())
        elif isinstance(v, tf.DType):
            out[k] = attr_value_pb2.AttrValue(type=v.as_datatype_enum)
        elif v and isinstance(v[0], tf.DType):
            out[k] = attr_value_pb2.AttrValue(list=attr_value_pb2.AttrValue.ListValue(
                type=[t.as_datatype_enum for t in v]))
        elif v and isinstance(v[0], str):
            out[k] = attr_value_pb2.AttrValue(list=attr_value_pb2.AttrValue.ListValue(
                s=[s.encode() for s in v]))
        else:
            out[k] = attr_value_pb2.AttrValue(list=attr_value_pb2.AttrValue.ListValue(i=v))
    return out


def fused(op, inputs, **attrs):
    def build():
        g = tf.compat.v1.get_default_graph()
        ts = [tf.constant(v) for v in inputs]
        node = g._create_op_internal(op, ts, [tf.float32], attrs=_attr(T=tf.float32, **attrs),
                                     name="fused")
        return [], [node.outputs[0]]
    return build


MA, MB, MBIAS = rnd([3, 4]), rnd([4, 5]), rnd([5])
for fused_ops in (["BiasAdd"], ["BiasAdd", "Relu"], ["BiasAdd", "Relu6"], ["BiasAdd", "Elu"],
                  ["BiasAdd", "LeakyRelu"], ["BiasAdd", "Tanh"], ["BiasAdd", "Sigmoid"]):
    program("_FusedMatMul", fused("_FusedMatMul", [MA, MB, MBIAS], num_args=1, fused_ops=fused_ops,
                                  transpose_a=False, transpose_b=False, leakyrelu_alpha=0.3))
program("_FusedMatMul", fused("_FusedMatMul", [MA.T.copy(), MB, MBIAS], num_args=1,
                              fused_ops=["BiasAdd", "Relu"], transpose_a=True, transpose_b=False))
CX, CW, CB = rnd([1, 5, 6, 3]), rnd([3, 3, 3, 4]), rnd([4])
for fused_ops, padding in ((["BiasAdd"], "SAME"), (["BiasAdd", "Relu"], "VALID"),
                           (["BiasAdd", "Relu6"], "SAME"), (["BiasAdd", "Elu"], "VALID"),
                           (["BiasAdd", "LeakyRelu"], "SAME")):
    # TensorFlow's current form: the args' types as a list, no host args.
    program("_FusedConv2D", fused("_FusedConv2D", [CX, CW, CB], num_args=1, fused_ops=fused_ops,
                                  TArgs=[tf.float32], num_host_args=0,
                                  strides=[1, 1, 2, 1], padding=padding, data_format="NHWC",
                                  dilations=[1, 1, 1, 1], leakyrelu_alpha=0.2))
# TensorFlow's CPU build has no kernel for _FusedDepthwiseConv2dNative (its
# optimizer fuses depthwise convolutions only for oneDNN), so its expected
# values are TensorFlow's unfused DepthwiseConv2dNative, BiasAdd and
# activation on the same inputs.
DW, DB = rnd([3, 3, 3, 2]), rnd([6])
ACTIVATIONS = {"Relu": tf.nn.relu, "Relu6": tf.nn.relu6, "Elu": tf.nn.elu}


def fused_depthwise(fused_ops, strides, padding):
    def build():
        g = tf.compat.v1.get_default_graph()
        ts = [tf.constant(v) for v in (CX, DW, DB)]
        node = g._create_op_internal(
            "_FusedDepthwiseConv2dNative", ts, [tf.float32],
            attrs=_attr(T=tf.float32, num_args=1, fused_ops=fused_ops, strides=strides,
                        padding=padding, data_format="NHWC", dilations=[1, 1, 1, 1]),
            name="fused")
        ref = raw.BiasAdd(value=raw.DepthwiseConv2dNative(input=ts[0], filter=ts[1],
                                                          strides=strides, padding=padding),
                          bias=ts[2])
        for act in fused_ops[1:]:
            ref = ACTIVATIONS[act](ref)
        return [], [node.outputs[0]], [ref]
    return build


for fused_ops, strides, padding in ((["BiasAdd"], [1, 1, 1, 1], "SAME"),
                                    (["BiasAdd", "Relu"], [1, 2, 2, 1], "VALID"),
                                    (["BiasAdd", "Relu6"], [1, 2, 2, 1], "SAME"),
                                    (["BiasAdd", "Elu"], [1, 1, 1, 1], "VALID")):
    program("_FusedDepthwiseConv2dNative", fused_depthwise(fused_ops, strides, padding))
