#!/usr/bin/env python3
"""Writes grad_ops_test_data.h: TensorFlow's gradient kernels (the
activation grads, BiasAddGrad, BroadcastGradientArgs, UnsortedSegmentSum,
MaxPoolGrad, AvgPoolGrad, Conv2DBackpropFilter) run through tf.raw_ops on
small random inputs, the expected values of activation_grad_ops_test.cc and
nn_grad_ops_test.cc.

    /path/to/venv/bin/python kernels/cpu/make_grad_ops_test_data.py

Inputs are multiples of 1/32 in [-3, 3] (exact in half and bfloat16) with
zeros, and for Relu6Grad the boundary 6, so the grads' cases (x < 0, x == 0,
x at the clip) all occur; the MaxPoolGrad inputs are small integers, so
windows hold ties.
"""
import os
import subprocess
import sys

# TensorFlow's own CPU kernels, not their oneDNN replacements: with oneDNN
# AvgPoolGrad rounds differently (a last-bit difference in about one element
# in ten); TensorFlow's Eigen kernels are the semantics the kernels here
# follow, operation for operation. Except for Conv2DBackpropFilter, whose
# Eigen kernel refuses dilations: its cases come from a second run of this
# script with oneDNN on (--conv-cases).
CONV_CASES_ONLY = sys.argv[1:] == ["--conv-cases"]
os.environ["TF_ENABLE_ONEDNN_OPTS"] = "1" if CONV_CASES_ONLY else "0"

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from cc_literals import floats

HERE = os.path.dirname(os.path.abspath(__file__))
DTYPES = [("DT_FLOAT", tf.float32), ("DT_DOUBLE", tf.float64), ("DT_HALF", tf.float16),
          ("DT_BFLOAT16", tf.bfloat16)]


def doubles(values, indent="    "):
    """The values as double literals (exact for float32 inputs and float64
    results) on lines of at most 100 columns."""
    lines, line = [], indent
    for v in np.asarray(values, np.float64).ravel():
        item = repr(float(v)) + ","
        if line != indent and len(line) + 1 + len(item) > 100:
            lines.append(line)
            line = indent
        line += item if line == indent else " " + item
    lines.append(line)
    return "\n" + "\n".join(lines)


def block(text):
    """A braced initializer of `text` (a floats() or doubles() body), its
    closing brace on a line of its own so no line passes 100 columns."""
    return "{" + text + "\n     }"


def ints(values):
    return ", ".join(str(int(v)) for v in np.asarray(values).ravel())


def quarters(rng, shape, lo=-3.0, hi=3.0):
    return (np.round(rng.uniform(lo, hi, shape) * 32) / 32).astype(np.float32)


def activation_cases(rng):
    n = 24
    x = quarters(rng, (n,))
    x[:4] = [0.0, -0.0, 6.0, -1.0]
    x[4] = 6.5
    g = quarters(rng, (n,))
    elu = tf.nn.elu(x).numpy()
    selu = tf.nn.selu(x).numpy()
    sig = tf.sigmoid(x).numpy()
    tanh = tf.tanh(x).numpy()
    # name, op, first input, second input, kwargs(a, b, dtype), alpha
    specs = [
        ("ReluGrad", g, x, lambda a, b: tf.raw_ops.ReluGrad(gradients=a, features=b)),
        ("Relu6Grad", g, x, lambda a, b: tf.raw_ops.Relu6Grad(gradients=a, features=b)),
        ("EluGrad", g, elu, lambda a, b: tf.raw_ops.EluGrad(gradients=a, outputs=b)),
        ("SeluGrad", g, selu, lambda a, b: tf.raw_ops.SeluGrad(gradients=a, outputs=b)),
        ("LeakyReluGrad", g, x,
         lambda a, b: tf.raw_ops.LeakyReluGrad(gradients=a, features=b, alpha=0.3)),
        ("SigmoidGrad", sig, g, lambda a, b: tf.raw_ops.SigmoidGrad(y=a, dy=b)),
        ("TanhGrad", tanh, g, lambda a, b: tf.raw_ops.TanhGrad(y=a, dy=b)),
        ("SoftplusGrad", g, x, lambda a, b: tf.raw_ops.SoftplusGrad(gradients=a, features=b)),
        ("SoftsignGrad", g, x, lambda a, b: tf.raw_ops.SoftsignGrad(gradients=a, features=b)),
    ]
    out = ["struct ActivationCase {", "  const char* op;", "  DataType dtype;",
           "  std::vector<double> a, b;  // the op's two inputs, as fed (cast to dtype)",
           "  std::vector<double> want;", "};", "", "const ActivationCase kActivationCases[] = {"]
    for op, a, b, run in specs:
        for enum, dt in DTYPES:
            # Inputs first rounded to dtype, so both sides start from the same values.
            ta, tb = tf.cast(tf.constant(a), dt), tf.cast(tf.constant(b), dt)
            want = tf.cast(run(ta, tb), tf.float64).numpy()
            out.append(f'    {{"{op}", {enum},')
            out.append(f"     {block(doubles(tf.cast(ta, tf.float64).numpy(), '      '))},")
            out.append(f"     {block(doubles(tf.cast(tb, tf.float64).numpy(), '      '))},")
            out.append(f"     {block(doubles(want, '      '))}}},")
    out += ["};", ""]
    return out


# Channels-last with few channels and many rows (the kernel sums such rows
# several at a time into independent lanes), row counts that leave a
# remainder.
FEW_CHANNEL_BIASES = [("NHWC", [3, 7, 9, 8], "DT_FLOAT"), ("NHWC", [50, 3], "DT_FLOAT"),
                      ("NHWC", [4, 9, 11, 8], "DT_HALF")]


def bias_add_grad_cases(rng):
    few_channel_rng = np.random.default_rng(31)
    out = ["struct BiasAddGradCase {", "  const char* data_format;", "  DataType dtype;",
           "  std::vector<int64_t> dims;",
           "  std::vector<float> input, want;  // exact in dtype", "};", "",
           "const BiasAddGradCase kBiasAddGradCases[] = {"]
    for fmt, dims, dtype in [("NHWC", [2, 3, 4, 5], "DT_FLOAT"), ("NCHW", [2, 5, 3, 4], "DT_FLOAT"),
                             ("NHWC", [6, 5], "DT_FLOAT"), ("NCHW", [6, 5], "DT_FLOAT"),
                             ("NCHW", [2, 3, 4, 2, 2], "DT_FLOAT"),
                             ("NHWC", [2, 3, 4, 5], "DT_HALF"),
                             ("NCHW", [2, 5, 3, 4], "DT_BFLOAT16")] + FEW_CHANNEL_BIASES:
        dt = dict(DTYPES)[dtype]
        # The few-channel cases draw from a generator of their own, so the
        # cases before them keep their values.
        gen = few_channel_rng if (fmt, dims, dtype) in FEW_CHANNEL_BIASES else rng
        x = tf.cast(gen.uniform(-1, 1, dims).astype(np.float32), dt)
        want = tf.raw_ops.BiasAddGrad(out_backprop=x, data_format=fmt)
        out.append(f'    {{"{fmt}", {dtype}, {{{ints(dims)}}},')
        out.append(f'     {block(floats(tf.cast(x, tf.float32).numpy(), "      "))},')
        out.append(f'     {block(floats(tf.cast(want, tf.float32).numpy(), "      "))}}},')
    out += ["};", ""]
    return out


def bcast_cases():
    pairs = [([1, 2], [1, 2]), ([2, 3, 5], [1]), ([], []), ([1], [1]), ([2, 1, 3], [4, 1]),
             ([0, 3], [1, 3]), ([1, 1], [3, 1]), ([5], [5, 1]), ([], [2, 3]), ([4, 1, 1], [1, 1]),
             ([2, 3, 4], [2, 3, 4]), ([3, 1, 5], [1, 4, 5])]
    out = ["struct BroadcastCase {", "  std::vector<int64_t> s0, s1, r0, r1;", "};", "",
           "const BroadcastCase kBroadcastCases[] = {"]
    for a, b in pairs:
        r0, r1 = tf.raw_ops.BroadcastGradientArgs(s0=tf.constant(a, tf.int32),
                                                  s1=tf.constant(b, tf.int32))
        out.append(f"    {{{{{ints(a)}}}, {{{ints(b)}}}, {{{ints(r0.numpy())}}}, "
                   f"{{{ints(r1.numpy())}}}}},")
    out += ["};", ""]
    return out


def segment_sum_cases(rng):
    out = ["struct SegmentSumCase {", "  std::vector<int64_t> data_dims, ids_dims;",
           "  std::vector<float> data;", "  std::vector<int64_t> ids;", "  int64_t num_segments;",
           "  std::vector<float> want;", "};", "", "const SegmentSumCase kSegmentSumCases[] = {"]
    for dd, ids, k in [([6, 3], [0, 3, -1, 0, 3, 1], 5), ([2, 3, 2], [[1, 1, -1], [0, 1, 2]], 3),
                       ([5], [2, 2, 2, 0, -4], 3)]:
        ids = np.array(ids, np.int32)
        data = rng.uniform(-1, 1, dd).astype(np.float32)
        want = tf.raw_ops.UnsortedSegmentSum(data=data, segment_ids=ids, num_segments=k).numpy()
        out.append(f"    {{{{{ints(dd)}}}, {{{ints(ids.shape)}}}, {block(floats(data, '      '))},")
        out.append(f"     {{{ints(ids)}}}, {k}, {block(floats(want, '      '))}}},")
    out += ["};", ""]
    return out


POOLS = [  # name, input dims, ksize, strides, padding, explicit paddings
    ("Same3s2", [2, 5, 5, 3], 3, 2, "SAME", []),
    ("Valid3s2", [2, 5, 5, 3], 3, 2, "VALID", []),
    ("Same2s1", [1, 4, 5, 2], 2, 1, "SAME", []),
    ("Same4s1", [1, 5, 4, 2], 4, 1, "SAME", []),
    ("Valid2s2Rect", [2, 6, 4, 1], 2, 2, "VALID", []),
    ("Explicit3s2", [1, 5, 5, 2], 3, 2, "EXPLICIT", [0, 0, 1, 2, 2, 1, 0, 0]),
]

# Windows that tile the image (stride == size), with enough channels for the
# kernel's 8- and 4-wide blocks: SAME's clipped last windows, VALID's
# uncovered remainder, a 3x3 tiling, and double. MaxPoolGrad only, drawn
# from a generator of their own so the cases above keep their values.
TILED_POOLS = [  # name, input dims, ksize, strides, padding, explicit paddings, dtype
    ("Same2s2Deep", [2, 5, 7, 12], 2, 2, "SAME", [], "DT_FLOAT"),
    ("Valid2s2Deep", [1, 5, 7, 9], 2, 2, "VALID", [], "DT_FLOAT"),
    ("Valid3s3Deep", [2, 7, 6, 8], 3, 3, "VALID", [], "DT_FLOAT"),
    ("Same3s3Deep", [1, 7, 8, 13], 3, 3, "SAME", [], "DT_FLOAT"),
    ("Same2s2DeepDouble", [1, 5, 5, 12], 2, 2, "SAME", [], "DT_DOUBLE"),
]


def pool_cases(rng):
    out = ["struct PoolCase {", "  const char* name;", "  DataType dtype;",
           "  std::vector<int64_t> dims, grad_dims;", "  int ksize, stride;",
           "  const char* padding;", "  std::vector<int64_t> explicit_paddings;",
           "  std::vector<float> input, grad, want;  // exact in dtype", "};", ""]
    sixteen_bit = [(name + suffix, dims, k, s, pad, exp, dtype)
                   for name, dims, k, s, pad, exp in POOLS if name in ("Same3s2", "Valid2s2Rect")
                   for suffix, dtype in (("Half", "DT_HALF"), ("Bfloat16", "DT_BFLOAT16"))]
    tiled_rng = np.random.default_rng(29)
    for op in ["MaxPoolGrad", "AvgPoolGrad"]:
        out.append(f"const PoolCase k{op}Cases[] = {{")
        tiled = TILED_POOLS if op == "MaxPoolGrad" else []
        for name, dims, k, s, pad, exp, dtype in ([p + ("DT_FLOAT",) for p in POOLS] +
                                                  sixteen_bit + tiled):
            if op == "AvgPoolGrad" and pad == "EXPLICIT":
                continue
            dt = dict(DTYPES)[dtype]
            rng_case = tiled_rng if (name, dims, k, s, pad, exp, dtype) in TILED_POOLS else rng
            x = tf.cast(rng_case.integers(0, 3, dims).astype(np.float32), dt)  # ties in most windows
            ksize, strides = [1, k, k, 1], [1, s, s, 1]
            if op == "MaxPoolGrad":
                y = tf.raw_ops.MaxPool(input=x, ksize=ksize, strides=strides, padding=pad,
                                       explicit_paddings=exp)
                g = tf.cast(rng_case.uniform(-1, 1, y.shape).astype(np.float32), dt)
                want = tf.raw_ops.MaxPoolGrad(orig_input=x, orig_output=y, grad=g, ksize=ksize,
                                              strides=strides, padding=pad,
                                              explicit_paddings=exp)
            else:
                y = tf.raw_ops.AvgPool(value=x, ksize=ksize, strides=strides, padding=pad)
                g = tf.cast(rng.uniform(-1, 1, y.shape).astype(np.float32), dt)
                want = tf.raw_ops.AvgPoolGrad(orig_input_shape=dims, grad=g, ksize=ksize,
                                              strides=strides, padding=pad)
            out.append(f'    {{"{name}", {dtype}, {{{ints(dims)}}}, {{{ints(y.shape)}}}, {k}, {s},')
            out.append(f'     "{pad}", {{{ints(exp)}}},')
            for v in (x, g, want):
                out.append(f"     {block(floats(tf.cast(v, tf.float32).numpy(), '      '))},")
            out[-1] = out[-1][:-1] + "},"
        out += ["};", ""]
    return out


CONVS = [  # name, input dims, filter dims, strides, dilations, padding, explicit paddings
    ("Same1", [2, 6, 5, 3], [3, 3, 3, 4], 1, 1, "SAME", []),
    ("Valid2", [2, 7, 6, 3], [3, 2, 3, 2], 2, 1, "VALID", []),
    ("Same2", [1, 7, 6, 2], [3, 3, 2, 3], 2, 1, "SAME", []),
    ("Dilated", [1, 8, 7, 2], [3, 3, 2, 2], 1, 2, "SAME", []),
    ("Explicit", [2, 5, 6, 2], [2, 3, 2, 3], 2, 1, "EXPLICIT", [0, 0, 1, 2, 0, 1, 0, 0]),
    ("OneByOne", [3, 4, 4, 5], [1, 1, 5, 6], 1, 1, "VALID", []),
    ("OnGemm", [2, 10, 10, 8], [3, 3, 8, 16], 1, 1, "SAME", []),  # past 64^3 multiply-adds
]


def conv_cases(rng):
    out = ["struct ConvCase {", "  const char* name;",
           "  std::vector<int64_t> input_dims, filter_dims;", "  int stride, dilation;",
           "  const char* padding;", "  std::vector<int64_t> explicit_paddings;",
           "  std::vector<int64_t> grad_dims;", "  std::vector<float> input, grad, want;", "};", "",
           "const ConvCase kConvCases[] = {"]
    for name, idims, fdims, s, d, pad, exp in CONVS:
        x = rng.uniform(-1, 1, idims).astype(np.float32)
        w = np.zeros(fdims, np.float32)
        y = tf.raw_ops.Conv2D(input=x, filter=w, strides=[1, s, s, 1], padding=pad,
                              explicit_paddings=exp, dilations=[1, d, d, 1])
        g = rng.uniform(-1, 1, y.shape).astype(np.float32)
        want = tf.raw_ops.Conv2DBackpropFilter(input=x, filter_sizes=fdims, out_backprop=g,
                                               strides=[1, s, s, 1], padding=pad,
                                               explicit_paddings=exp, dilations=[1, d, d, 1])
        out.append(f'    {{"{name}", {{{ints(idims)}}}, {{{ints(fdims)}}}, {s}, {d}, "{pad}",')
        out.append(f"     {{{ints(exp)}}}, {{{ints(y.shape)}}},")
        out.append(f"     {block(floats(x, '      '))},")
        out.append(f"     {block(floats(g, '      '))},")
        out.append(f"     {block(floats(want.numpy(), '      '))}}},")
    out += ["};", ""]
    return out


def main():
    if CONV_CASES_ONLY:
        print("\n".join(conv_cases(np.random.default_rng(13))))
        return
    conv = subprocess.run([sys.executable, os.path.abspath(__file__), "--conv-cases"],
                          check=True, capture_output=True, text=True).stdout
    rng = np.random.default_rng(11)
    out = [
        f"// Generated by make_grad_ops_test_data.py with TensorFlow {tf.__version__}:",
        "// TensorFlow's gradient kernels on the inputs below (tf.raw_ops, oneDNN off).",
        "#ifndef GRAPHRUN_KERNELS_CPU_GRAD_OPS_TEST_DATA_H_",
        "#define GRAPHRUN_KERNELS_CPU_GRAD_OPS_TEST_DATA_H_",
        "",
        "#include <cstdint>",
        "#include <vector>",
        "",
        '#include "graph/types.h"',
        "",
        "namespace graphrun {",
        "namespace grad_ops_test {",
        "",
    ]
    out += activation_cases(rng)
    out += bias_add_grad_cases(rng)
    out += bcast_cases()
    out += segment_sum_cases(rng)
    out += pool_cases(rng)
    out += conv.rstrip("\n").split("\n") + [""]
    out += ["}  // namespace grad_ops_test", "}  // namespace graphrun", "",
            "#endif  // GRAPHRUN_KERNELS_CPU_GRAD_OPS_TEST_DATA_H_", ""]
    with open(os.path.join(HERE, "grad_ops_test_data.h"), "w") as f:
        f.write("\n".join(out))


if __name__ == "__main__":
    main()
