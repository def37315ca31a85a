#!/usr/bin/env python3
"""Writes depthwise_conv_grad_test_data.h: TensorFlow's
DepthwiseConv2dNativeBackpropInput and DepthwiseConv2dNativeBackpropFilter
run through tf.raw_ops on small random NHWC inputs, the expected values of
depthwise_conv_grad_op_test.cc.

    /path/to/venv/bin/python kernels/cpu/make_depthwise_conv_grad_test_data.py

oneDNN on: TensorFlow's Eigen depthwise kernels refuse dilations and
unequal row and column strides, its oneDNN ones take them (on the cases
both take, the two agree to a unit of the float's last place). With
dilations, though, TensorFlow 2.21's oneDNN backprop ops return wrong
values (they disagree with direct sums and with TensorFlow's own gradient
of the dilated forward op), so the dilated cases come from tf.GradientTape
through the same convolution built from undilated pieces, as
tf.nn.depthwise_conv2d builds it: the input padded (tf.pad) as the op pads
it, tf.nn.depthwise_conv2d with the dilation rate (SpaceToBatchND around the
undilated op) and VALID padding, then every stride-th output row and column.
That construction is checked against the raw ops on every undilated case,
and its forward values against DepthwiseConv2dNative on every case.
"""
import os

os.environ["TF_ENABLE_ONEDNN_OPTS"] = "1"

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from cc_literals import floats  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

CASES = [  # name, input dims, filter dims, strides (rows, cols), dilation, padding, explicit
    ("Same1", [2, 5, 5, 3], [3, 3, 3, 2], (1, 1), 1, "SAME", []),
    ("Valid2", [2, 7, 6, 3], [3, 2, 3, 1], (2, 2), 1, "VALID", []),
    ("Same2", [1, 7, 6, 2], [3, 3, 2, 3], (2, 2), 1, "SAME", []),
    ("Dilated", [1, 8, 7, 2], [3, 3, 2, 2], (1, 1), 2, "SAME", []),
    ("DilatedStrided", [1, 9, 9, 2], [3, 3, 2, 2], (2, 2), 2, "SAME", []),
    ("Explicit", [2, 5, 6, 2], [2, 3, 2, 2], (2, 2), 1, "EXPLICIT", [0, 0, 1, 2, 0, 1, 0, 0]),
    ("UnequalStrides", [1, 7, 8, 4], [3, 3, 4, 1], (1, 2), 1, "VALID", []),
    ("Wide", [1, 4, 5, 20], [3, 3, 20, 1], (1, 1), 1, "SAME", []),
    ("FilterPastInput", [1, 2, 3, 2], [4, 4, 2, 2], (1, 1), 1, "SAME", []),
]


def ints(values):
    return ", ".join(str(int(v)) for v in np.asarray(values).ravel())


def block(values):
    return "{" + floats(values, "      ") + "\n     }"


def pads(size, k, stride, dilation, padding, explicit):
    """The padding before and after one spatial dim, as the op computes it."""
    eff = (k - 1) * dilation + 1
    if padding == "EXPLICIT":
        return explicit
    if padding == "VALID":
        return [0, 0]
    out = -(-size // stride)
    needed = max(0, (out - 1) * stride + eff - size)
    return [needed // 2, needed - needed // 2]


def composed(x, w, g, sr, sc, d, pad, exp):
    """The forward values and the two gradients of the convolution built
    from undilated pieces (see the module docstring)."""
    pr = pads(x.shape[1], w.shape[0], sr, d, pad, exp[2:4])
    pc = pads(x.shape[2], w.shape[1], sc, d, pad, exp[4:6])
    xt, wt = tf.constant(x), tf.constant(w)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([xt, wt])
        padded = tf.pad(xt, [[0, 0], pr, pc, [0, 0]])
        full = tf.nn.depthwise_conv2d(padded, wt, strides=[1, 1, 1, 1], padding="VALID",
                                      dilations=[d, d])
        y = full[:, ::sr, ::sc, :]
        loss = tf.reduce_sum(y * g)
    return y.numpy(), tape.gradient(loss, xt).numpy(), tape.gradient(loss, wt).numpy()


def cases(rng):
    out = ["struct DepthwiseGradCase {", "  const char* name;",
           "  std::vector<int64_t> input_dims, filter_dims;",
           "  int stride_rows, stride_cols, dilation;", "  const char* padding;",
           "  std::vector<int64_t> explicit_paddings;",
           "  std::vector<int64_t> grad_dims;  // out_backprop's",
           "  std::vector<float> input, filter, grad;",
           "  // TensorFlow's BackpropInput (of filter, grad) and BackpropFilter (of",
           "  // input, grad).",
           "  std::vector<float> input_backprop, filter_backprop;", "};", "",
           "const DepthwiseGradCase kDepthwiseGradCases[] = {"]
    for name, idims, fdims, (sr, sc), d, pad, exp in CASES:
        x = rng.uniform(-1, 1, idims).astype(np.float32)
        w = rng.uniform(-1, 1, fdims).astype(np.float32)
        attrs = dict(strides=[1, sr, sc, 1], padding=pad, explicit_paddings=exp,
                     dilations=[1, d, d, 1], data_format="NHWC")
        y = tf.raw_ops.DepthwiseConv2dNative(input=x, filter=w, **attrs)
        g = rng.uniform(-1, 1, y.shape).astype(np.float32)
        y2, dx2, dw2 = composed(x, w, g, sr, sc, d, pad, exp)
        assert np.allclose(y2, y.numpy(), rtol=1e-5, atol=1e-5), name
        if d == 1:
            dx = tf.raw_ops.DepthwiseConv2dNativeBackpropInput(input_sizes=idims, filter=w,
                                                               out_backprop=g, **attrs).numpy()
            dw = tf.raw_ops.DepthwiseConv2dNativeBackpropFilter(input=x, filter_sizes=fdims,
                                                                out_backprop=g, **attrs).numpy()
            assert np.allclose(dx2, dx, rtol=1e-5, atol=1e-5), name
            assert np.allclose(dw2, dw, rtol=1e-5, atol=1e-5), name
        else:
            dx, dw = dx2, dw2
        out.append(f'    {{"{name}", {{{ints(idims)}}}, {{{ints(fdims)}}}, {sr}, {sc}, {d}, '
                   f'"{pad}",')
        out.append(f"     {{{ints(exp)}}}, {{{ints(y.shape)}}},")
        for v in (x, w, g, dx, dw):
            out.append(f"     {block(v)},")
        out[-1] = out[-1][:-1] + "},"
    out += ["};", ""]
    return out


def main():
    rng = np.random.default_rng(17)
    out = [
        f"// Generated by make_depthwise_conv_grad_test_data.py with TensorFlow "
        f"{tf.__version__}:",
        "// TensorFlow's depthwise convolution gradients on the inputs below (tf.raw_ops,",
        "// oneDNN on; dilated cases: tf.GradientTape, see the script).",
        "#ifndef GRAPHRUN_KERNELS_CPU_DEPTHWISE_CONV_GRAD_TEST_DATA_H_",
        "#define GRAPHRUN_KERNELS_CPU_DEPTHWISE_CONV_GRAD_TEST_DATA_H_",
        "",
        "#include <cstdint>",
        "#include <vector>",
        "",
        "namespace graphrun {",
        "namespace depthwise_grad_test {",
        "",
    ]
    out += cases(rng)
    out += ["}  // namespace depthwise_grad_test", "}  // namespace graphrun", "",
            "#endif  // GRAPHRUN_KERNELS_CPU_DEPTHWISE_CONV_GRAD_TEST_DATA_H_", ""]
    with open(os.path.join(HERE, "depthwise_conv_grad_test_data.h"), "w") as f:
        f.write("\n".join(out))


if __name__ == "__main__":
    main()
