"""Conformance cases for the ops cases_core.py does not reach."""
import numpy as np
import tensorflow as tf

from conformance_cases import SPECIAL, case, f32, f64, i32, i64, program, rand


def _pool2x2_max(x):
    """MaxPool of an NHWC array with a 2x2 window, stride 2, VALID."""
    n, h, w, c = x.shape
    return x[:, :h // 2 * 2, :w // 2 * 2].reshape(n, h // 2, 2, w // 2, 2, c).max(axis=(2, 4))


def _max_pool_same(x, k, stride):
    """MaxPool of an NHWC array with a k x k window, SAME padding (padded
    positions never win)."""
    n, h, w, c = x.shape
    oh, ow = -(-h // stride), -(-w // stride)
    top = max((oh - 1) * stride + k - h, 0) // 2
    left = max((ow - 1) * stride + k - w, 0) // 2
    out = np.empty((n, oh, ow, c), x.dtype)
    for i in range(oh):
        for j in range(ow):
            r0, c0 = i * stride - top, j * stride - left
            win = x[:, max(r0, 0):r0 + k, max(c0, 0):c0 + k]
            out[:, i, j] = win.max(axis=(1, 2))
    return out


# --- Pooling (NHWC / NDHWC) ---
P = rand([2, 5, 6, 3])
case("AvgPool", ("value", P), ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID")
case("AvgPool", ("value", P), ksize=[1, 3, 3, 1], strides=[1, 2, 1, 1], padding="SAME")
case("AvgPool", ("value", P.astype(f64)), ksize=[1, 2, 3, 1], strides=[1, 1, 2, 1], padding="SAME")
case("AvgPool", ("value", P), ksize=[1, 7, 2, 1], strides=[1, 1, 1, 1], padding="VALID")
case("AvgPool", ("value", rand([5, 6])), ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID")
case("MaxPool", ("input", P), ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID")
case("MaxPool", ("input", P), ksize=[1, 3, 3, 1], strides=[1, 2, 2, 1], padding="SAME")
case("MaxPool", ("input", P.astype(f64)), ksize=[1, 1, 3, 1], strides=[1, 1, 2, 1], padding="SAME")
case("MaxPool", ("input", np.arange(40, dtype=i32).reshape(1, 5, 8, 1)), ksize=[1, 2, 2, 1],
     strides=[1, 2, 3, 1], padding="SAME")
case("MaxPool", ("input", rand([5, 6, 3])), ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID")
P3 = rand([1, 4, 4, 5, 2])
case("AvgPool3D", ("input", P3), ksize=[1, 2, 2, 2, 1], strides=[1, 2, 2, 2, 1], padding="VALID")
case("AvgPool3D", ("input", P3), ksize=[1, 3, 2, 3, 1], strides=[1, 1, 2, 2, 1], padding="SAME")
case("AvgPool3D", ("input", P), ksize=[1, 2, 2, 2, 1], strides=[1, 2, 2, 2, 1], padding="VALID")
case("MaxPool3D", ("input", P3), ksize=[1, 2, 2, 2, 1], strides=[1, 2, 2, 2, 1], padding="VALID")
case("MaxPool3D", ("input", P3), ksize=[1, 3, 2, 3, 1], strides=[1, 1, 2, 2, 1], padding="SAME")
case("MaxPool3D", ("input", P3[0]), ksize=[1, 2, 2, 2, 1], strides=[1, 2, 2, 2, 1], padding="VALID")
case("AvgPoolGrad", ("orig_input_shape", np.array([2, 5, 6, 3], i32)), ("grad", rand([2, 2, 3, 3])),
     ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID")
case("AvgPoolGrad", ("orig_input_shape", np.array([2, 5, 6, 3], i32)), ("grad", rand([2, 3, 6, 3])),
     ksize=[1, 3, 3, 1], strides=[1, 2, 1, 1], padding="SAME")
case("AvgPoolGrad", ("orig_input_shape", np.array([1, 4, 4, 2], i32)), ("grad", rand([1, 2, 2, 2], f64)),
     ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID")
case("AvgPoolGrad", ("orig_input_shape", np.array([5, 6, 3], i32)), ("grad", rand([2, 2, 3, 3])),
     ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID")
case("MaxPoolGrad", ("orig_input", P), ("orig_output", _pool2x2_max(P)),
     ("grad", rand([2, 2, 3, 3])), ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID")
MPX = rand([1, 4, 4, 2])
case("MaxPoolGrad", ("orig_input", MPX), ("orig_output", _pool2x2_max(MPX)),
     ("grad", rand([1, 2, 2, 2])), ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="SAME")
case("MaxPoolGrad", ("orig_input", MPX.astype(f64)), ("orig_output", _pool2x2_max(MPX).astype(f64)),
     ("grad", rand([1, 2, 2, 2], f64)), ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID")
case("MaxPoolGrad", ("orig_input", MPX), ("orig_output", _pool2x2_max(MPX)),
     ("grad", rand([1, 3, 2, 2])), ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID")
# 29 and 12 channels: the kernels' channel blocks of 16, 8 and 4 and the
# single channels after them; TIES holds small integers, so windows tie.
_CH = np.random.default_rng(29)  # its own stream: the cases below keep theirs
WIDE = _CH.uniform(-2, 2, [2, 5, 6, 29]).astype(f32)
TIES = np.floor(_CH.uniform(-2, 2, [2, 5, 6, 12])).astype(f32)
case("MaxPool", ("input", WIDE), ksize=[1, 3, 3, 1], strides=[1, 2, 2, 1], padding="SAME")
case("MaxPool", ("input", TIES), ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID")
case("AvgPool", ("value", WIDE), ksize=[1, 3, 3, 1], strides=[1, 2, 2, 1], padding="SAME")
case("MaxPoolGrad", ("orig_input", WIDE),
     ("orig_output", _max_pool_same(WIDE, 3, 2)),
     ("grad", _CH.uniform(-2, 2, [2, 3, 3, 29]).astype(f32)), ksize=[1, 3, 3, 1],
     strides=[1, 2, 2, 1], padding="SAME")
case("MaxPoolGrad", ("orig_input", TIES), ("orig_output", _pool2x2_max(TIES)),
     ("grad", _CH.uniform(-2, 2, [2, 2, 3, 12]).astype(f32)), ksize=[1, 2, 2, 1],
     strides=[1, 2, 2, 1], padding="VALID")
case("MaxPoolGrad", ("orig_input", TIES.astype(f64)),
     ("orig_output", _max_pool_same(TIES.astype(f64), 3, 1)),
     ("grad", _CH.uniform(-2, 2, [2, 5, 6, 12])), ksize=[1, 3, 3, 1], strides=[1, 1, 1, 1],
     padding="SAME")
case("MaxPoolGrad", ("orig_input", TIES.astype(np.float16)),
     ("orig_output", _pool2x2_max(TIES).astype(np.float16)),
     ("grad", _CH.uniform(-2, 2, [2, 2, 3, 12]).astype(np.float16)), ksize=[1, 2, 2, 1],
     strides=[1, 2, 2, 1], padding="VALID")

# --- Space, batch and depth ---
# SpaceToBatchND and BatchToSpaceND are left out: TensorFlow 2.21's shape function
# refuses a block_shape of unknown rank ("block_shape must have rank 1"), so
# they cannot be built on the generator's unknown-shape placeholders.
case("DepthToSpace", ("input", np.arange(32, dtype=f32).reshape(1, 2, 2, 8)), block_size=2)
case("DepthToSpace", ("input", np.arange(36, dtype=i32).reshape(1, 1, 2, 18)), block_size=3)
case("DepthToSpace", ("input", rand([2, 2, 1, 4])), block_size=2)
case("DepthToSpace", ("input", np.arange(24, dtype=f32).reshape(1, 2, 2, 6)), block_size=2)
case("SpaceToDepth", ("input", np.arange(32, dtype=f32).reshape(1, 4, 4, 2)), block_size=2)
case("SpaceToDepth", ("input", np.arange(36, dtype=i64).reshape(1, 3, 6, 2)), block_size=3)
case("SpaceToDepth", ("input", rand([2, 2, 2, 1])), block_size=2)
case("SpaceToDepth", ("input", np.arange(24, dtype=f32).reshape(1, 3, 4, 2)), block_size=2)

# --- Bias, broadcasting shapes, concat offsets ---
case("BiasAddGrad", ("out_backprop", rand([2, 3, 4])))
case("BiasAddGrad", ("out_backprop", rand([5, 3], f64)))
case("BiasAddGrad", ("out_backprop", np.arange(24, dtype=i32).reshape(2, 3, 4)))
case("BiasAddGrad", ("out_backprop", rand([2, 3, 4, 5])), data_format="NCHW")
case("BiasAddGrad", ("out_backprop", rand([4])))
case("BiasAddV1", ("value", rand([2, 3, 4])), ("bias", rand([4])))
case("BiasAddV1", ("value", rand([3, 2], f64)), ("bias", rand([2], f64)))
case("BiasAddV1", ("value", np.arange(6, dtype=i32).reshape(2, 3)), ("bias", np.array([1, 2, 3], i32)))
case("BiasAddV1", ("value", rand([2, 3])), ("bias", rand([2])))
case("BroadcastArgs", ("s0", np.array([2, 1, 3], i32)), ("s1", np.array([4, 1], i32)))
case("BroadcastArgs", ("s0", np.array([5], i64)), ("s1", np.array([], i64)))
case("BroadcastArgs", ("s0", np.array([2, 3], i32)), ("s1", np.array([4, 3], i32)))
case("BroadcastGradientArgs", ("s0", np.array([2, 1, 3], i32)), ("s1", np.array([4, 1], i32)))
case("BroadcastGradientArgs", ("s0", np.array([1, 1], i64)), ("s1", np.array([3, 1, 1], i64)))
case("BroadcastGradientArgs", ("s0", np.array([5, 4], i32)), ("s1", np.array([5, 4], i32)))
case("BroadcastGradientArgs", ("s0", np.array([2, 3], i32)), ("s1", np.array([4, 3], i32)))
case("ConcatOffset", ("concat_dim", np.array(1, i32)),
     ("shape", [np.array([2, 3, 4], i32), np.array([2, 5, 4], i32), np.array([2, 1, 4], i32)]))
case("ConcatOffset", ("concat_dim", np.array(-1, i32)),
     ("shape", [np.array([2, 3], i64), np.array([2, 7], i64)]))
case("ConcatOffset", ("concat_dim", np.array(0, i32)),
     ("shape", [np.array([2, 3], i32), np.array([2, 4], i32)]))
case("ConcatOffset", ("concat_dim", np.array(2, i32)),
     ("shape", [np.array([2, 3], i32), np.array([2, 3], i32)]))

# --- Convolutions (NHWC, small so summation order cannot matter) ---
CI, CF = rand([2, 5, 5, 2]), rand([3, 3, 2, 3])
case("Conv2D", ("input", CI), ("filter", CF), strides=[1, 1, 1, 1], padding="VALID")
case("Conv2D", ("input", CI), ("filter", CF), strides=[1, 2, 2, 1], padding="SAME")
case("Conv2D", ("input", CI), ("filter", CF), strides=[1, 1, 1, 1], padding="SAME",
     dilations=[1, 2, 2, 1])
case("Conv2D", ("input", CI.astype(f64)), ("filter", CF[:2].astype(f64)), strides=[1, 2, 1, 1],
     padding="VALID")
case("Conv2D", ("input", CI), ("filter", CF), strides=[1, 1, 1, 1], padding="EXPLICIT",
     explicit_paddings=[0, 0, 1, 0, 0, 2, 0, 0])
case("Conv2D", ("input", CI), ("filter", rand([3, 3, 4, 3])), strides=[1, 1, 1, 1], padding="VALID")
case("Conv2DBackpropInput", ("input_sizes", np.array([2, 5, 5, 2], i32)), ("filter", CF),
     ("out_backprop", rand([2, 3, 3, 3])), strides=[1, 1, 1, 1], padding="VALID")
case("Conv2DBackpropInput", ("input_sizes", np.array([2, 5, 5, 2], i32)), ("filter", CF),
     ("out_backprop", rand([2, 3, 3, 3])), strides=[1, 2, 2, 1], padding="SAME")
case("Conv2DBackpropInput", ("input_sizes", np.array([1, 6, 6, 2], i32)), ("filter", CF[:2, :2]),
     ("out_backprop", rand([1, 6, 6, 3])), strides=[1, 1, 1, 1], padding="SAME")
case("Conv2DBackpropInput", ("input_sizes", np.array([2, 5, 5, 2], i32)), ("filter", CF),
     ("out_backprop", rand([2, 4, 4, 3])), strides=[1, 1, 1, 1], padding="VALID")
case("Conv2DBackpropFilter", ("input", CI), ("filter_sizes", np.array([3, 3, 2, 3], i32)),
     ("out_backprop", rand([2, 3, 3, 3])), strides=[1, 1, 1, 1], padding="VALID")
case("Conv2DBackpropFilter", ("input", CI), ("filter_sizes", np.array([3, 3, 2, 3], i32)),
     ("out_backprop", rand([2, 3, 3, 3])), strides=[1, 2, 2, 1], padding="SAME")
case("Conv2DBackpropFilter", ("input", CI.astype(f64)), ("filter_sizes", np.array([2, 2, 2, 1], i32)),
     ("out_backprop", rand([2, 5, 5, 1], f64)), strides=[1, 1, 1, 1], padding="SAME")
case("Conv2DBackpropFilter", ("input", CI), ("filter_sizes", np.array([3, 3, 2, 3], i32)),
     ("out_backprop", rand([2, 2, 3, 3])), strides=[1, 1, 1, 1], padding="VALID")
C3I, C3F = rand([1, 4, 4, 4, 2]), rand([2, 2, 2, 2, 3])
case("Conv3D", ("input", C3I), ("filter", C3F), strides=[1, 1, 1, 1, 1], padding="VALID")
case("Conv3D", ("input", C3I), ("filter", C3F), strides=[1, 2, 2, 2, 1], padding="SAME")
case("Conv3D", ("input", C3I.astype(f64)), ("filter", C3F.astype(f64)), strides=[1, 1, 2, 1, 1],
     padding="SAME")
case("Conv3D", ("input", C3I), ("filter", rand([2, 2, 2, 3, 3])), strides=[1, 1, 1, 1, 1],
     padding="VALID")
DF = rand([3, 3, 2, 2])
case("DepthwiseConv2dNative", ("input", CI), ("filter", DF), strides=[1, 1, 1, 1], padding="VALID")
case("DepthwiseConv2dNative", ("input", CI), ("filter", DF), strides=[1, 2, 2, 1], padding="SAME")
case("DepthwiseConv2dNative", ("input", CI.astype(f64)), ("filter", DF.astype(f64)),
     strides=[1, 1, 1, 1], padding="SAME")
case("DepthwiseConv2dNative", ("input", CI), ("filter", rand([3, 3, 3, 1])), strides=[1, 1, 1, 1],
     padding="VALID")
case("DepthwiseConv2dNativeBackpropInput", ("input_sizes", np.array([2, 5, 5, 2], i32)),
     ("filter", DF), ("out_backprop", rand([2, 3, 3, 4])), strides=[1, 1, 1, 1], padding="VALID")
case("DepthwiseConv2dNativeBackpropInput", ("input_sizes", np.array([2, 5, 5, 2], i32)),
     ("filter", DF), ("out_backprop", rand([2, 3, 3, 4])), strides=[1, 2, 2, 1], padding="SAME")
case("DepthwiseConv2dNativeBackpropInput", ("input_sizes", np.array([1, 4, 4, 2], i32)),
     ("filter", DF[:2, :2, :, :1].astype(f64)), ("out_backprop", rand([1, 4, 4, 2], f64)),
     strides=[1, 1, 1, 1], padding="SAME")
case("DepthwiseConv2dNativeBackpropInput", ("input_sizes", np.array([2, 5, 5, 2], i32)),
     ("filter", DF), ("out_backprop", rand([2, 3, 3, 3])), strides=[1, 1, 1, 1], padding="VALID")
case("DepthwiseConv2dNativeBackpropFilter", ("input", CI), ("filter_sizes", np.array([3, 3, 2, 2], i32)),
     ("out_backprop", rand([2, 3, 3, 4])), strides=[1, 1, 1, 1], padding="VALID")
case("DepthwiseConv2dNativeBackpropFilter", ("input", CI), ("filter_sizes", np.array([3, 3, 2, 2], i32)),
     ("out_backprop", rand([2, 3, 3, 4])), strides=[1, 2, 2, 1], padding="SAME")
case("DepthwiseConv2dNativeBackpropFilter", ("input", CI.astype(f64)),
     ("filter_sizes", np.array([2, 2, 2, 1], i32)), ("out_backprop", rand([2, 5, 5, 2], f64)),
     strides=[1, 1, 1, 1], padding="SAME")
case("DepthwiseConv2dNativeBackpropFilter", ("input", CI), ("filter_sizes", np.array([3, 3, 2, 2], i32)),
     ("out_backprop", rand([2, 4, 3, 4])), strides=[1, 1, 1, 1], padding="VALID")

# --- Counting and stitching ---
case("DenseBincount", ("input", np.array([1, 1, 3, 0, 7], i32)), ("size", np.array(5, i32)),
     ("weights", np.zeros([0], f32)))
case("DenseBincount", ("input", np.array([[1, 2, 2], [0, 4, 4]], i64)), ("size", np.array(5, i64)),
     ("weights", np.array([[0.5, 1.0, 2.0], [3.0, 1.5, 1.0]], f32)))
case("DenseBincount", ("input", np.array([1, 1, 3, 0], i32)), ("size", np.array(4, i32)),
     ("weights", np.zeros([0], f32)), binary_output=True)
case("DenseBincount", ("input", np.array([1, 2, 3], i32)), ("size", np.array(-1, i32)),
     ("weights", np.zeros([0], f32)))
case("DynamicStitch", ("indices", [np.array([0, 2], i32), np.array([1, 3], i32)]),
     ("data", [np.array([[1, 2], [3, 4]], f32), np.array([[5, 6], [7, 8]], f32)]))
case("DynamicStitch", ("indices", [np.array([[0], [2]], i32), np.array([1, 2], i32)]),
     ("data", [np.array([[10], [20]], i64), np.array([30, 40], i64)]))
case("DynamicStitch", ("indices", [np.array([0, 1], i32)]), ("data", [np.array([b"a", b"b"], object)]))
case("DynamicStitch", ("indices", [np.array([0, 1], i32), np.array([2], i32)]),
     ("data", [np.array([1.0, 2.0], f32), np.array([3.0, 4.0], f32)]))

# --- Einsum ---
case("Einsum", ("inputs", [rand([2, 3]), rand([3, 4])]), equation="ij,jk->ik")
case("Einsum", ("inputs", [rand([2, 3, 4]), rand([2, 4, 5])]), equation="bij,bjk->bik")
case("Einsum", ("inputs", [rand([3, 3])]), equation="ii->i")
case("Einsum", ("inputs", [rand([2, 3, 4])]), equation="abc->cb")
case("Einsum", ("inputs", [rand([3], f64), rand([4], f64)]), equation="i,j->ij")
case("Einsum", ("inputs", [rand([2, 3, 4]), rand([4, 5])]), equation="...j,jk->...k")
case("Einsum", ("inputs", [rand([2, 3]), rand([4, 5])]), equation="ij,jk->ik")

# --- Activation gradients ---
G, F = rand([2, 5]), rand([2, 5], f32, -3, 3)
case("ReluGrad", ("gradients", G), ("features", F))
case("ReluGrad", ("gradients", G.astype(f64)), ("features", F.astype(f64)))
case("ReluGrad", ("gradients", G), ("features", np.array([0.0, -0.0, 1.0, -1.0, np.nan], f32)))
case("ReluGrad", ("gradients", G), ("features", F[:, :3]))
case("Relu6Grad", ("gradients", G), ("features", rand([2, 5], f32, -2, 8)))
case("Relu6Grad", ("gradients", G[0]), ("features", np.array([0.0, 6.0, 3.0, -1.0, 7.0], f32)))
case("Relu6Grad", ("gradients", G.astype(f64)), ("features", rand([2, 5], f64, -2, 8)))
case("LeakyReluGrad", ("gradients", G), ("features", F), alpha=0.2)
case("LeakyReluGrad", ("gradients", G.astype(f64)), ("features", F.astype(f64)), alpha=0.01)
case("LeakyReluGrad", ("gradients", G[0]), ("features", np.array([0.0, -0.0, 2.0, -2.0, 1.0], f32)),
     alpha=1.5)
case("EluGrad", ("gradients", G), ("outputs", rand([2, 5], f32, -0.99, 3)))
case("EluGrad", ("gradients", G.astype(f64)), ("outputs", rand([2, 5], f64, -0.99, 3)))
case("EluGrad", ("gradients", G), ("outputs", rand([5], f32, -0.99, 3)))
case("SeluGrad", ("gradients", G), ("outputs", rand([2, 5], f32, -1.7, 3)))
case("SeluGrad", ("gradients", G.astype(f64)), ("outputs", rand([2, 5], f64, -1.7, 3)))
case("SoftplusGrad", ("gradients", G), ("features", F))
case("SoftplusGrad", ("gradients", G.astype(f64)), ("features", F.astype(f64)))
case("SoftplusGrad", ("gradients", G[0]), ("features", np.array([-50.0, 50.0, 0.0, 20.0, -20.0], f32)))
case("SoftsignGrad", ("gradients", G), ("features", F))
case("SoftsignGrad", ("gradients", G.astype(f64)), ("features", F.astype(f64)))
Y, DY = rand([2, 5], f32, 0.1, 2), rand([2, 5])
for op in ("SigmoidGrad", "TanhGrad", "SqrtGrad", "RsqrtGrad", "ReciprocalGrad"):
    case(op, ("y", Y), ("dy", DY))
    case(op, ("y", Y.astype(f64)), ("dy", DY.astype(f64)))
    case(op, ("y", np.array([0.5, -0.5, 1.0], np.float16)), ("dy", np.array([1.0, 2.0, -1.0], np.float16)))
case("SqrtGrad", ("y", np.array([0.0, -0.0, np.inf], f32)), ("dy", np.array([1.0, 1.0, 1.0], f32)))
case("SigmoidGrad", ("y", Y), ("dy", DY[:, :2]))

# --- Identities ---
case("Identity", ("input", rand([2, 3])))
case("Identity", ("input", np.array([b"x", b"yz"], object)))
case("Identity", ("input", np.array(7, i64)))
case("IdentityN", ("input", [rand([2]), np.array([1, 2, 3], i32), np.array(b"s", object)]))
case("IdentityN", ("input", [np.zeros([0, 2], f64)]))
case("Snapshot", ("input", rand([2, 3])))
case("Snapshot", ("input", np.array([True, False])))
case("StopGradient", ("input", rand([3], f64)))
case("StopGradient", ("input", np.arange(4, dtype=i32)))
case("PreventGradient", ("input", rand([2, 2])), message="no gradient here")
case("PreventGradient", ("input", np.arange(3, dtype=i64)))
case("EnsureShape", ("input", rand([2, 3])), shape=[2, 3])
case("EnsureShape", ("input", rand([2, 3])), shape=[None, 3])
case("EnsureShape", ("input", np.arange(4, dtype=i32)), shape=None)
case("EnsureShape", ("input", rand([2, 3])), shape=[3, 2])
case("EnsureShape", ("input", rand([2, 3])), shape=[2, 3, 1])
case("Inv", ("x", rand([2, 5], f32, 0.2, 3)))
case("Inv", ("x", np.array([0.0, -0.0, np.inf, -2.0], f64)))
case("Inv", ("x", np.array([1, 2, -4, 0], np.float16)))

# --- LRN, LinSpace, band and diagonals ---
L = rand([1, 2, 2, 6], f32, 0, 2)
case("LRN", ("input", L))
case("LRN", ("input", L), depth_radius=2, bias=2.0, alpha=0.1, beta=0.75)
case("LRN", ("input", L), depth_radius=1, bias=0.5, alpha=1.0, beta=0.5)
case("LRN", ("input", L[0]))
case("LinSpace", ("start", np.array(1.0, f32)), ("stop", np.array(2.0, f32)), ("num", np.array(5, i32)))
case("LinSpace", ("start", np.array(-3.0, f64)), ("stop", np.array(4.0, f64)), ("num", np.array(7, i64)))
case("LinSpace", ("start", np.array(3.0, f32)), ("stop", np.array(7.0, f32)), ("num", np.array(1, i32)))
case("LinSpace", ("start", np.array(0.0, f32)), ("stop", np.array(1.0, f32)), ("num", np.array(0, i32)))
BP = np.arange(1, 25, dtype=f32).reshape(2, 3, 4)
case("MatrixBandPart", ("input", BP), ("num_lower", np.array(1, i64)), ("num_upper", np.array(0, i64)))
case("MatrixBandPart", ("input", BP), ("num_lower", np.array(-1, i64)), ("num_upper", np.array(1, i64)))
case("MatrixBandPart", ("input", np.arange(9, dtype=i32).reshape(3, 3)), ("num_lower", np.array(0, i32)),
     ("num_upper", np.array(-1, i32)))
case("MatrixBandPart", ("input", BP), ("num_lower", np.array(5, i64)), ("num_upper", np.array(0, i64)))
for align in ("RIGHT_LEFT", "LEFT_RIGHT"):
    case("MatrixDiagPartV3", ("input", BP), ("k", np.array([-1, 1], i32)),
         ("padding_value", np.array(0.0, f32)), align=align)
case("MatrixDiagPartV3", ("input", BP), ("k", np.array(1, i32)), ("padding_value", np.array(9.0, f32)))
case("MatrixDiagPartV3", ("input", np.arange(12, dtype=i64).reshape(4, 3)), ("k", np.array([-2, 0], i32)),
     ("padding_value", np.array(-1, i64)), align="LEFT_LEFT")
case("MatrixDiagPartV3", ("input", BP), ("k", np.array([1, -1], i32)), ("padding_value", np.array(0.0, f32)))
case("MatrixDiagV3", ("diagonal", np.array([[1, 2, 3], [4, 5, 6]], f32)), ("k", np.array(0, i32)),
     ("num_rows", np.array(-1, i32)), ("num_cols", np.array(-1, i32)), ("padding_value", np.array(0.0, f32)))
case("MatrixDiagV3", ("diagonal", np.array([[1, 2, 0], [3, 4, 5]], f32)), ("k", np.array([-1, 0], i32)),
     ("num_rows", np.array(3, i32)), ("num_cols", np.array(4, i32)), ("padding_value", np.array(7.0, f32)),
     align="LEFT_RIGHT")
case("MatrixDiagV3", ("diagonal", np.array([1, 2], i32)), ("k", np.array(1, i32)),
     ("num_rows", np.array(-1, i32)), ("num_cols", np.array(-1, i32)), ("padding_value", np.array(0, i32)))
case("MatrixDiagV3", ("diagonal", np.array([1.0, 2.0], f32)), ("k", np.array(0, i32)),
     ("num_rows", np.array(1, i32)), ("num_cols", np.array(1, i32)), ("padding_value", np.array(0.0, f32)))

# --- Batch normalization (NHWC) ---
BX = rand([2, 2, 3, 3])
BS, BO = rand([3], f32, 0.5, 1.5), rand([3])
BM, BV = rand([3], f32, -0.5, 0.5), rand([3], f32, 0.5, 2)
for op in ("FusedBatchNorm", "FusedBatchNormV3"):
    case(op, ("x", BX), ("scale", BS), ("offset", BO), ("mean", BM), ("variance", BV),
         is_training=False)  # reserve spaces unspecified (make_conformance.UNSPECIFIED)
    case(op, ("x", BX), ("scale", BS), ("offset", BO), ("mean", BM), ("variance", BV),
         epsilon=0.01, is_training=True)
    case(op, ("x", BX), ("scale", BS), ("offset", BO), ("mean", BM), ("variance", BV),
         exponential_avg_factor=0.3, is_training=True)
    case(op, ("x", BX), ("scale", BS[:2]), ("offset", BO), ("mean", BM), ("variance", BV),
         is_training=False)
case("FusedBatchNormV3", ("x", BX.astype(np.float16)), ("scale", BS), ("offset", BO), ("mean", BM),
     ("variance", BV), is_training=True)
case("FusedBatchNormV3", ("x", BX), ("scale", BS), ("offset", BO), ("mean", np.zeros([0], f32)),
     ("variance", np.zeros([0], f32)), is_training=True)
BDY = rand([2, 2, 3, 3])
BMEAN = BX.mean(axis=(0, 1, 2)).astype(f32)
BVAR = BX.var(axis=(0, 1, 2)).astype(f32)
for training in (True, False):
    case("FusedBatchNormGradV3", ("y_backprop", BDY), ("x", BX), ("scale", BS),
         ("reserve_space_1", BMEAN if training else BM),
         ("reserve_space_2", BVAR if training else BV),
         ("reserve_space_3", np.zeros([0], f32)), is_training=training)
case("FusedBatchNormGradV3", ("y_backprop", BDY), ("x", BX), ("scale", BS), ("reserve_space_1", BMEAN),
     ("reserve_space_2", BVAR), ("reserve_space_3", np.zeros([0], f32)), epsilon=0.1, is_training=True)
case("FusedBatchNormGradV3", ("y_backprop", BDY[:1]), ("x", BX), ("scale", BS), ("reserve_space_1", BMEAN),
     ("reserve_space_2", BVAR), ("reserve_space_3", np.zeros([0], f32)), is_training=True)

# --- Non-max suppression ---
NB = np.array([[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, -0.1, 1, 0.9], [0, 10, 1, 11],
               [0, 10.1, 1, 11.1], [0, 100, 1, 101]], f32)
NS = np.array([0.9, 0.75, 0.6, 0.95, 0.5, 0.3], f32)
case("NonMaxSuppressionV3", ("boxes", NB), ("scores", NS), ("max_output_size", np.array(3, i32)),
     ("iou_threshold", np.array(0.5, f32)), ("score_threshold", np.array(0.0, f32)))
case("NonMaxSuppressionV3", ("boxes", NB), ("scores", NS), ("max_output_size", np.array(6, i32)),
     ("iou_threshold", np.array(0.5, f32)), ("score_threshold", np.array(0.4, f32)))
case("NonMaxSuppressionV3", ("boxes", NB[:, [2, 3, 0, 1]]), ("scores", NS),
     ("max_output_size", np.array(10, i32)),
     ("iou_threshold", np.array(0.9, f32)), ("score_threshold", np.array(-np.inf, f32)))
case("NonMaxSuppressionV3", ("boxes", NB), ("scores", NS[:4]), ("max_output_size", np.array(3, i32)),
     ("iou_threshold", np.array(0.5, f32)), ("score_threshold", np.array(0.0, f32)))
case("NonMaxSuppressionV4", ("boxes", NB), ("scores", NS), ("max_output_size", np.array(5, i32)),
     ("iou_threshold", np.array(0.5, f32)), ("score_threshold", np.array(0.0, f32)),
     pad_to_max_output_size=True)
case("NonMaxSuppressionV4", ("boxes", NB), ("scores", NS), ("max_output_size", np.array(5, i32)),
     ("iou_threshold", np.array(0.5, f32)), ("score_threshold", np.array(0.0, f32)))
case("NonMaxSuppressionV4", ("boxes", NB), ("scores", NS), ("max_output_size", np.array(2, i32)),
     ("iou_threshold", np.array(1.5, f32)), ("score_threshold", np.array(0.0, f32)))
case("NonMaxSuppressionV5", ("boxes", NB), ("scores", NS), ("max_output_size", np.array(4, i32)),
     ("iou_threshold", np.array(0.5, f32)), ("score_threshold", np.array(0.0, f32)),
     ("soft_nms_sigma", np.array(0.0, f32)), pad_to_max_output_size=True)
case("NonMaxSuppressionV5", ("boxes", NB), ("scores", NS), ("max_output_size", np.array(6, i32)),
     ("iou_threshold", np.array(1.0, f32)), ("score_threshold", np.array(0.1, f32)),
     ("soft_nms_sigma", np.array(0.5, f32)))
case("NonMaxSuppressionV5", ("boxes", NB), ("scores", NS), ("max_output_size", np.array(-1, i32)),
     ("iou_threshold", np.array(0.5, f32)), ("score_threshold", np.array(0.0, f32)),
     ("soft_nms_sigma", np.array(0.0, f32)))

# --- Ragged ---
RV = np.arange(1, 8, dtype=f32)
RSPL = np.array([0, 2, 2, 5, 7], i64)
case("RaggedTensorToTensor", ("shape", np.array([-1, -1], i64)), ("values", RV),
     ("default_value", np.array(0.0, f32)), ("row_partition_tensors", [RSPL]),
     row_partition_types=["ROW_SPLITS"])
case("RaggedTensorToTensor", ("shape", np.array([3, 2], i64)), ("values", RV),
     ("default_value", np.array(-1.0, f32)), ("row_partition_tensors", [RSPL]),
     row_partition_types=["ROW_SPLITS"])
case("RaggedTensorToTensor", ("shape", np.array([-1, 3], i32)), ("values", np.arange(5, dtype=i32)),
     ("default_value", np.array(9, i32)),
     ("row_partition_tensors", [np.array(4, i32), np.array([0, 0, 2, 3, 3], i32)]),
     row_partition_types=["FIRST_DIM_SIZE", "VALUE_ROWIDS"])
case("RaggedTensorToTensor", ("shape", np.array([-1, -1, 2], i64)), ("values", rand([3, 2])),
     ("default_value", np.array(0.0, f32)), ("row_partition_tensors", [np.array([0, 1, 3], i64)]),
     row_partition_types=["ROW_SPLITS"])
case("RaggedTensorToTensor", ("shape", np.array([-1, -1], i64)), ("values", RV),
     ("default_value", np.array(0.0, f32)), ("row_partition_tensors", [np.array([0, 3, 2, 7], i64)]),
     row_partition_types=["ROW_SPLITS"])  # splits decrease
case("RaggedTensorToTensor", ("shape", np.array([-1], i64)), ("values", RV),
     ("default_value", np.array(0.0, f32)), ("row_partition_tensors", [RSPL]),
     row_partition_types=["ROW_SPLITS"])  # shape of the wrong rank
case("RaggedBincount", ("splits", np.array([0, 3, 5], i64)), ("values", np.array([1, 1, 3, 0, 2], i32)),
     ("size", np.array(4, i32)), ("weights", np.zeros([0], f32)))
case("RaggedBincount", ("splits", np.array([0, 3, 5], i64)), ("values", np.array([1, 1, 3, 0, 2], i64)),
     ("size", np.array(4, i64)), ("weights", np.array([0.5, 1.0, 2.0, 3.0, 4.0], f32)))
case("RaggedBincount", ("splits", np.array([0, 3, 5], i64)), ("values", np.array([1, 1, 3, 0, 2], i32)),
     ("size", np.array(4, i32)), ("weights", np.zeros([0], f32)), binary_output=True)
case("RaggedBincount", ("splits", np.array([0, 3, 5], i64)), ("values", np.array([1, 1, 3, 0, 2], i32)),
     ("size", np.array(-2, i32)), ("weights", np.zeros([0], f32)))

# --- Resizing ---
IMG = rand([1, 3, 4, 2], f32, 0, 4)
for ac, hp in ((False, False), (True, False), (False, True)):
    case("ResizeBilinear", ("images", IMG), ("size", np.array([5, 7], i32)), align_corners=ac,
         half_pixel_centers=hp)
    case("ResizeNearestNeighbor", ("images", IMG), ("size", np.array([5, 7], i32)), align_corners=ac,
         half_pixel_centers=hp)
case("ResizeBilinear", ("images", np.arange(24, dtype=i32).reshape(1, 4, 3, 2)),
     ("size", np.array([2, 2], i32)), half_pixel_centers=True)
case("ResizeBilinear", ("images", IMG), ("size", np.array([2, 3], i32)), align_corners=True,
     half_pixel_centers=True)
case("ResizeNearestNeighbor", ("images", np.arange(24, dtype=i64).reshape(1, 4, 3, 2)),
     ("size", np.array([2, 5], i32)))
case("ResizeNearestNeighbor", ("images", IMG[0]), ("size", np.array([2, 3], i32)))

# --- Select ---
case("Select", ("condition", np.array([True, False, True])), ("x", rand([3])), ("y", rand([3])))
case("Select", ("condition", np.array([True, False])), ("x", rand([2, 3])), ("y", rand([2, 3])))
case("Select", ("condition", np.array([[True, False], [False, True]])),
     ("x", np.arange(4, dtype=i32).reshape(2, 2)),
     ("y", -np.arange(4, dtype=i32).reshape(2, 2)))
case("Select", ("condition", np.array([True, False, True])), ("x", rand([2, 3])), ("y", rand([2, 3])))
case("SelectV2", ("condition", np.array([True, False, True])), ("t", rand([2, 3])), ("e", np.array(0.0, f32)))
case("SelectV2", ("condition", np.array([[True], [False]])), ("t", np.array([b"a", b"b"], object)),
     ("e", np.array([b"x", b"y"], object)))
case("SelectV2", ("condition", np.array(True)), ("t", rand([2], f64)), ("e", rand([2], f64)))
case("SelectV2", ("condition", np.array([True, False])), ("t", rand([3])), ("e", rand([3])))
case("ShapeN", ("input", [rand([2, 3]), np.zeros([4, 0, 1], f32), np.array(1.0, f32)]))
case("ShapeN", ("input", [np.zeros([3], i32)]))
case("ShapeN", ("input", [rand([1, 2, 3]), rand([5])]), out_type=tf.int64)

# --- Softmax cross entropy ---
SL = rand([3, 4])
SP = np.array([[0.1, 0.2, 0.3, 0.4], [1, 0, 0, 0], [0.25, 0.25, 0.25, 0.25]], f32)
case("SoftmaxCrossEntropyWithLogits", ("features", SL), ("labels", SP))
case("SoftmaxCrossEntropyWithLogits", ("features", SL.astype(f64)), ("labels", SP.astype(f64)))
case("SoftmaxCrossEntropyWithLogits", ("features", SL), ("labels", SP[:1]))
case("SoftmaxCrossEntropyWithLogits", ("features", SL), ("labels", SP[:, :3]))
case("SparseSoftmaxCrossEntropyWithLogits", ("features", SL), ("labels", np.array([3, 0, 1], i32)))
case("SparseSoftmaxCrossEntropyWithLogits", ("features", SL.astype(f64)),
     ("labels", np.array([0, 0, 2], i64)))
case("SparseSoftmaxCrossEntropyWithLogits", ("features", SL), ("labels", np.array([3, 4, 1], i32)))
case("SparseSoftmaxCrossEntropyWithLogits", ("features", SL), ("labels", np.array([3, 0], i32)))

# --- StridedSliceGrad ---
case("StridedSliceGrad", ("shape", np.array([2, 3, 4], i32)), ("begin", np.array([0, 2, 0], i32)),
     ("end", np.array([2, 0, 4], i32)), ("strides", np.array([1, -1, 2], i32)), ("dy", rand([2, 2, 2])))
case("StridedSliceGrad", ("shape", np.array([2, 3, 4], i64)), ("begin", np.array([1, 0], i64)),
     ("end", np.array([2, 0], i64)), ("strides", np.array([1, 1], i64)), ("dy", rand([3, 4], f64)),
     shrink_axis_mask=1, ellipsis_mask=2)
case("StridedSliceGrad", ("shape", np.array([4, 3], i32)), ("begin", np.array([1, 0], i32)),
     ("end", np.array([3, 0], i32)), ("strides", np.array([1, 1], i32)),
     ("dy", np.arange(6, dtype=i32).reshape(2, 3)), end_mask=2)
case("StridedSliceGrad", ("shape", np.array([4, 3], i32)), ("begin", np.array([0, 1], i32)),
     ("end", np.array([0, 3], i32)), ("strides", np.array([1, 1], i32)), ("dy", rand([2])),
     shrink_axis_mask=1, new_axis_mask=0, begin_mask=0)
case("StridedSliceGrad", ("shape", np.array([2, 3, 4], i32)), ("begin", np.array([0, 2, 0], i32)),
     ("end", np.array([2, 0, 4], i32)), ("strides", np.array([1, -1, 2], i32)), ("dy", rand([2, 3, 2])))

# --- Strings ---
S3 = np.array([b"Hello", b"", b"a b  c"], object)
case("StringJoin", ("inputs", [S3, np.array([b"X", b"Y", b"Z"], object)]), separator="-")
case("StringJoin", ("inputs", [np.array(b"pre", object), S3, np.array(b"post", object)]))
case("StringJoin", ("inputs", [np.array([[b"a"], [b"b"]], object)]), separator=",")
case("StringJoin", ("inputs", [S3, np.array([b"X", b"Y"], object)]))
case("StringLower", ("input", np.array([b"HeLLo", b"ABC def 123", b"\xc3\x84\xc3\x96"], object)))
case("StringLower", ("input", np.array([[b"\xc3\x84BC", b"X"]], object)), encoding="utf-8")
case("StringLower", ("input", np.array([b"Q"], object)), encoding="latin1")
NG = np.array([b"a", b"b", b"c", b"d", b"e"], object)
case("StringNGrams", ("data", NG), ("data_splits", np.array([0, 3, 5], i64)), separator=" ",
     ngram_widths=[1, 2], left_pad="", right_pad="", pad_width=0, preserve_short_sequences=False)
case("StringNGrams", ("data", NG), ("data_splits", np.array([0, 1, 5], i32)), separator="|",
     ngram_widths=[3], left_pad="<", right_pad=">", pad_width=-1, preserve_short_sequences=False)
case("StringNGrams", ("data", NG), ("data_splits", np.array([0, 2, 2, 5], i64)), separator="_",
     ngram_widths=[4], left_pad="L", right_pad="R", pad_width=1, preserve_short_sequences=True)
case("StringNGrams", ("data", NG), ("data_splits", np.array([0, 3, 9], i64)), separator=" ",
     ngram_widths=[2], left_pad="", right_pad="", pad_width=0, preserve_short_sequences=False)
SPL = np.array([b"a,b,,c", b"", b"x  y z ", b"one"], object)
case("StringSplitV2", ("input", SPL), ("sep", np.array(b",", object)))
case("StringSplitV2", ("input", SPL), ("sep", np.array(b"", object)))
case("StringSplitV2", ("input", SPL), ("sep", np.array(b",", object)), maxsplit=1)
case("StringSplitV2", ("input", SPL), ("sep", np.array(b"  ", object)))
RX = np.array([b"abc123", b"ABC", b"", b"a1b2", b"xyz"], object)
case("StaticRegexFullMatch", ("input", RX), pattern="[a-z]+[0-9]*")
case("StaticRegexFullMatch", ("input", RX.reshape(5, 1)), pattern="(?i)abc.*")
case("StaticRegexFullMatch", ("input", RX), pattern="")
case("RegexFullMatch", ("input", RX), ("pattern", np.array(b"[a-z0-9]+", object)))
case("RegexFullMatch", ("input", RX), ("pattern", np.array(b"a.*", object)))
case("RegexFullMatch", ("input", RX), ("pattern", np.array(b"(unclosed", object)))
case("StaticRegexReplace", ("input", RX), pattern="[0-9]", rewrite="#")
case("StaticRegexReplace", ("input", RX), pattern="[0-9]", rewrite="#", replace_global=False)
case("StaticRegexReplace", ("input", RX), pattern="([a-z])([0-9])", rewrite="\\2\\1")
case("StaticRegexReplace", ("input", RX), pattern="(x", rewrite="y")

# --- Unicode ---
U = np.array([b"h\xc3\xa9llo", b"", b"\xe2\x82\xac\xf0\x9f\x98\x80", b"a\xffb\xc3", b"\x01x"], object)
case("UnicodeDecode", ("input", U[[0, 1, 2]]), input_encoding="UTF-8")
case("UnicodeDecode", ("input", U), input_encoding="UTF-8", errors="replace", replacement_char=63,
     Tsplits=tf.int32)
case("UnicodeDecode", ("input", U), input_encoding="UTF-8", errors="ignore",
     replace_control_characters=True)
case("UnicodeDecode", ("input", U), input_encoding="UTF-8", errors="strict")
UV = np.array([104, 233, 8364, 128512, 0xD800, 0x110000, 65], i32)
case("UnicodeEncode", ("input_values", UV[[0, 1, 2, 3, 6]]), ("input_splits", np.array([0, 2, 2, 5], i64)),
     output_encoding="UTF-8")
case("UnicodeEncode", ("input_values", UV), ("input_splits", np.array([0, 4, 7], i64)),
     output_encoding="UTF-8", errors="replace", replacement_char=63)
case("UnicodeEncode", ("input_values", UV[[0, 1, 2, 3, 6]]), ("input_splits", np.array([0, 3, 5], i64)),
     output_encoding="UTF-16-BE")
case("UnicodeEncode", ("input_values", UV[[0, 1, 2, 3, 6]]), ("input_splits", np.array([0, 1, 5], i64)),
     output_encoding="UTF-32-BE", errors="ignore")
case("UnicodeEncode", ("input_values", UV), ("input_splits", np.array([0, 4, 7], i64)),
     output_encoding="UTF-8", errors="strict")

# --- Random numbers (TensorFlow's Philox streams) ---
for dt in (tf.float32, tf.float64, tf.float16):
    for op in ("RandomUniform", "RandomStandardNormal", "TruncatedNormal"):
        case(op, ("shape", np.array([3, 4], i32)), dtype=dt, seed=7, seed2=11)
for op in ("RandomUniform", "RandomStandardNormal", "TruncatedNormal"):
    case(op, ("shape", np.array([5], i64)), dtype=tf.float32, seed=1, seed2=0)
    case(op, ("shape", np.array([2, -1], i32)), dtype=tf.float32, seed=1, seed2=2)
case("RandomUniformInt", ("shape", np.array([3, 4], i32)), ("minval", np.array(-5, i32)),
     ("maxval", np.array(10, i32)), seed=3, seed2=5)
case("RandomUniformInt", ("shape", np.array([6], i64)), ("minval", np.array(0, i64)),
     ("maxval", np.array(1 << 40, i64)), seed=3, seed2=5)
case("RandomUniformInt", ("shape", np.array([4], i32)), ("minval", np.array(2, i32)),
     ("maxval", np.array(2, i32)), seed=3, seed2=5)
KEY, CTR = np.array([0x123456789], np.uint64), np.array([5, 77], np.uint64)
for op in ("StatelessRandomUniformV2", "StatelessRandomNormalV2", "StatelessTruncatedNormalV2"):
    case(op, ("shape", np.array([3, 4], i32)), ("key", KEY), ("counter", CTR), ("alg", np.array(1, i32)))
    case(op, ("shape", np.array([5], i64)), ("key", KEY), ("counter", CTR), ("alg", np.array(3, i32)),
         dtype=tf.float64)
    case(op, ("shape", np.array([2, 3], i32)), ("key", np.array([0], np.uint64)),
         ("counter", np.array([0, 0], np.uint64)), ("alg", np.array(1, i32)), dtype=tf.float16)
    case(op, ("shape", np.array([3], i32)), ("key", KEY), ("counter", CTR), ("alg", np.array(7, i32)))
case("StatelessRandomGetKeyCounter", ("seed", np.array([1, 2], i32)))
case("StatelessRandomGetKeyCounter", ("seed", np.array([-7, 1 << 40], i64)))
case("StatelessRandomGetKeyCounter", ("seed", np.array([0, 0], i64)))
case("StatelessRandomGetKeyCounter", ("seed", np.array([1, 2, 3], i32)))

# --- LSTMBlockCell (input 3, cell 2) ---
LX, LCS, LH = rand([2, 3]), rand([2, 2]), rand([2, 2])
LW, LB = rand([5, 8], f32, -1, 1), rand([8], f32, -1, 1)
LWC = [rand([2], f32, -1, 1) for _ in range(3)]
LSTM_IN = [("x", LX), ("cs_prev", LCS), ("h_prev", LH), ("w", LW), ("wci", LWC[0]), ("wcf", LWC[1]),
           ("wco", LWC[2]), ("b", LB)]
case("LSTMBlockCell", *LSTM_IN)
case("LSTMBlockCell", *LSTM_IN, forget_bias=0.5, cell_clip=0.2, use_peephole=True)
case("LSTMBlockCell", *LSTM_IN, cell_clip=-1.0)
case("LSTMBlockCell", *LSTM_IN[:3], ("w", LW[:4]), *LSTM_IN[4:])

# --- BlockLSTM, BlockLSTMV2 (4 steps, batch 2, input 3, cell 2) ---
_BL = np.random.default_rng(41)  # its own stream: the cases below keep theirs
BL_X = _BL.uniform(-2, 2, [4, 2, 3]).astype(f32)
BL_CS, BL_H = _BL.uniform(-1, 1, [2, 2]).astype(f32), _BL.uniform(-1, 1, [2, 2]).astype(f32)
BL_W, BL_B = _BL.uniform(-1, 1, [5, 8]).astype(f32), _BL.uniform(-1, 1, [8]).astype(f32)
BL_WC = [_BL.uniform(-1, 1, [2]).astype(f32) for _ in range(3)]


def _block_lstm_inputs(steps, w=BL_W):
    return [("seq_len_max", np.array(steps, i64)), ("x", BL_X), ("cs_prev", BL_CS),
            ("h_prev", BL_H), ("w", w), ("wci", BL_WC[0]), ("wcf", BL_WC[1]),
            ("wco", BL_WC[2]), ("b", BL_B)]


def _block_lstm_short(op, steps, **attrs):
    """Fewer steps than x has: TensorFlow zeroes cs and h after them and
    leaves the other outputs' memory as it was, so only cs and h are
    recorded."""
    def build():
        out = getattr(tf.raw_ops, op)(
            **{k: tf.constant(v) for k, v in _block_lstm_inputs(steps)}, **attrs)
        return [], [out.cs, out.h]
    return build


for _op in ("BlockLSTM", "BlockLSTMV2"):
    case(_op, *_block_lstm_inputs(4))
    program(_op, _block_lstm_short(_op, 2, cell_clip=0.2, use_peephole=True))
    program(_op, _block_lstm_short(_op, 0))
    case(_op, *_block_lstm_inputs(4, BL_W[:4]))  # w's rows are not input + cell
program("BlockLSTM", _block_lstm_short("BlockLSTM", 3, forget_bias=0.5, cell_clip=-1.0))
case("BlockLSTMV2", *_block_lstm_inputs(4), cell_clip=0.5)
# An odd batch and 32 gate columns: the recurrent product's vector blocks,
# its row pairs and its single last row.
_BL3 = [("seq_len_max", np.array(3, i64)), ("x", _BL.uniform(-2, 2, [3, 3, 4]).astype(f32)),
        ("cs_prev", _BL.uniform(-1, 1, [3, 8]).astype(f32)),
        ("h_prev", _BL.uniform(-1, 1, [3, 8]).astype(f32)),
        ("w", _BL.uniform(-0.5, 0.5, [12, 32]).astype(f32))] + [
            (n, _BL.uniform(-1, 1, [8]).astype(f32)) for n in ("wci", "wcf", "wco")] + [
            ("b", _BL.uniform(-1, 1, [32]).astype(f32))]
case("BlockLSTMV2", *_BL3)
case("BlockLSTM", *_BL3, use_peephole=True)
