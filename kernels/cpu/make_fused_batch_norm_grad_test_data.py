#!/usr/bin/env python3
"""Writes fused_batch_norm_grad_test_data.h: TensorFlow's FusedBatchNormGrad,
FusedBatchNormGradV2 and FusedBatchNormGradV3 run through tf.raw_ops on
small random inputs, the expected values of fused_batch_norm_grad_op_test.cc.

    /path/to/venv/bin/python kernels/cpu/make_fused_batch_norm_grad_test_data.py

TensorFlow's own CPU kernels (oneDNN off). With is_training=true the saved
statistics are those TensorFlow's FusedBatchNormV3 returns for x (the batch
mean and the biased variance); with is_training=false they are arbitrary
population statistics. TensorFlow's CPU kernel takes is_training=false only
in NHWC / NDHWC (its Python gradient transposes channels-first tensors
around it): those cases come from the same op on the transposed tensors,
x_backprop transposed back. half and bfloat16 inputs are multiples of 1/32
(exact in both).
"""
import os

os.environ["TF_ENABLE_ONEDNN_OPTS"] = "0"

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from cc_literals import floats  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DTYPES = {"DT_FLOAT": tf.float32, "DT_HALF": tf.float16, "DT_BFLOAT16": tf.bfloat16}

CASES = [  # name, op, dtype, data_format, is_training, epsilon, dims
    ("V3NhwcTraining", "FusedBatchNormGradV3", "DT_FLOAT", "NHWC", True, 1e-3, [2, 3, 4, 5]),
    ("V3NchwTraining", "FusedBatchNormGradV3", "DT_FLOAT", "NCHW", True, 1e-3, [2, 5, 3, 4]),
    ("V3NhwcInference", "FusedBatchNormGradV3", "DT_FLOAT", "NHWC", False, 1e-3, [2, 3, 4, 5]),
    ("V3NchwInference", "FusedBatchNormGradV3", "DT_FLOAT", "NCHW", False, 1e-3, [2, 5, 3, 4]),
    ("V3NdhwcTraining", "FusedBatchNormGradV3", "DT_FLOAT", "NDHWC", True, 1e-4, [2, 2, 3, 2, 4]),
    ("V3NcdhwTraining", "FusedBatchNormGradV3", "DT_FLOAT", "NCDHW", True, 1e-4, [2, 4, 2, 3, 2]),
    ("V3NcdhwInference", "FusedBatchNormGradV3", "DT_FLOAT", "NCDHW", False, 1e-4,
     [1, 3, 2, 3, 2]),
    ("V3OnePerChannel", "FusedBatchNormGradV3", "DT_FLOAT", "NHWC", True, 1e-3, [1, 1, 1, 3]),
    ("V1NhwcTraining", "FusedBatchNormGrad", "DT_FLOAT", "NHWC", True, 1e-4, [3, 2, 2, 4]),
    ("V1NchwInference", "FusedBatchNormGrad", "DT_FLOAT", "NCHW", False, 1e-4, [3, 4, 2, 2]),
    ("V2NchwTraining", "FusedBatchNormGradV2", "DT_FLOAT", "NCHW", True, 1e-3, [2, 3, 3, 3]),
    ("V2NhwcInference", "FusedBatchNormGradV2", "DT_FLOAT", "NHWC", False, 1e-3, [2, 3, 3, 3]),
    ("V3HalfTraining", "FusedBatchNormGradV3", "DT_HALF", "NHWC", True, 1e-3, [2, 3, 2, 4]),
    ("V3HalfInference", "FusedBatchNormGradV3", "DT_HALF", "NHWC", False, 1e-3, [2, 3, 2, 4]),
    ("V3Bfloat16Training", "FusedBatchNormGradV3", "DT_BFLOAT16", "NCHW", True, 1e-3,
     [2, 4, 3, 2]),
]


def ints(values):
    return ", ".join(str(int(v)) for v in np.asarray(values).ravel())


def block(values):
    return "{" + floats(values, "      ") + "\n     }"


def channels_first(fmt):
    return fmt in ("NCHW", "NCDHW")


def to_last(a, fmt):
    """A channels-first array with its channels moved last."""
    return np.moveaxis(a, 1, -1) if channels_first(fmt) else a


def to_first(a, fmt):
    return np.moveaxis(a, -1, 1) if channels_first(fmt) else a


def run_grad(op, dt, fmt, is_training, eps, dy, x, scale, r1, r2):
    """TensorFlow's op on (dy, x) in `fmt`: x_backprop, scale_backprop,
    offset_backprop as float32 arrays."""
    last_fmt = {"NCHW": "NHWC", "NCDHW": "NDHWC"}.get(fmt, fmt)
    if not is_training and channels_first(fmt):
        # TensorFlow's CPU kernel: NHWC only for inference.
        outs = run_grad(op, dt, last_fmt, False, eps, to_last(dy, fmt), to_last(x, fmt), scale,
                        r1, r2)
        return [to_first(outs[0], fmt)] + outs[1:]
    args = dict(y_backprop=tf.cast(dy, dt), x=tf.cast(x, dt), scale=scale, reserve_space_1=r1,
                reserve_space_2=r2, epsilon=eps, data_format=fmt, is_training=is_training)
    if op == "FusedBatchNormGradV3":
        args["reserve_space_3"] = np.zeros([0], np.float32)
    outs = getattr(tf.raw_ops, op)(**args)
    return [tf.cast(o, tf.float32).numpy() for o in outs[:3]]


def cases(rng):
    out = ["struct BatchNormGradCase {", "  const char* name;", "  const char* op;",
           "  DataType dtype;", "  const char* data_format;", "  bool is_training;",
           "  float epsilon;", "  std::vector<int64_t> dims;",
           "  // Inputs (exact in dtype), then TensorFlow's outputs 0 to 2.",
           "  std::vector<float> y_backprop, x, scale, reserve_space_1, reserve_space_2;",
           "  std::vector<float> x_backprop, scale_backprop, offset_backprop;", "};", "",
           "const BatchNormGradCase kBatchNormGradCases[] = {"]
    for name, op, dtype, fmt, is_training, eps, dims in CASES:
        dt = DTYPES[dtype]
        channels = dims[1] if channels_first(fmt) else dims[-1]
        if dtype == "DT_FLOAT":
            x = rng.uniform(-2, 2, dims).astype(np.float32)
            dy = rng.uniform(-1, 1, dims).astype(np.float32)
        else:
            x = (np.round(rng.uniform(-2, 2, dims) * 32) / 32).astype(np.float32)
            dy = (np.round(rng.uniform(-1, 1, dims) * 32) / 32).astype(np.float32)
        scale = rng.uniform(0.5, 1.5, channels).astype(np.float32)
        if is_training:
            fwd = tf.raw_ops.FusedBatchNormV3(
                x=tf.cast(x, dt), scale=scale, offset=np.zeros(channels, np.float32),
                mean=np.zeros(0, np.float32), variance=np.zeros(0, np.float32), epsilon=eps,
                data_format=fmt, is_training=True)
            r1, r2 = fwd[3].numpy(), fwd[4].numpy()
        else:
            r1 = rng.uniform(-0.5, 0.5, channels).astype(np.float32)
            r2 = rng.uniform(0.25, 2, channels).astype(np.float32)
        dx, dscale, doffset = run_grad(op, dt, fmt, is_training, eps, dy, x, scale, r1, r2)
        out.append(f'    {{"{name}", "{op}", {dtype}, "{fmt}", {str(is_training).lower()}, '
                   f'{eps!r}f, {{{ints(dims)}}},')
        for v in (dy, x, scale, r1, r2, dx, dscale, doffset):
            out.append(f"     {block(v)},")
        out[-1] = out[-1][:-1] + "},"
    out += ["};", ""]
    return out


def main():
    rng = np.random.default_rng(29)
    out = [
        f"// Generated by make_fused_batch_norm_grad_test_data.py with TensorFlow "
        f"{tf.__version__}:",
        "// TensorFlow's batch norm gradients on the inputs below (tf.raw_ops, oneDNN off).",
        "#ifndef GRAPHRUN_KERNELS_CPU_FUSED_BATCH_NORM_GRAD_TEST_DATA_H_",
        "#define GRAPHRUN_KERNELS_CPU_FUSED_BATCH_NORM_GRAD_TEST_DATA_H_",
        "",
        "#include <cstdint>",
        "#include <vector>",
        "",
        '#include "graph/types.h"',
        "",
        "namespace graphrun {",
        "namespace batch_norm_grad_test {",
        "",
    ]
    out += cases(rng)
    out += ["}  // namespace batch_norm_grad_test", "}  // namespace graphrun", "",
            "#endif  // GRAPHRUN_KERNELS_CPU_FUSED_BATCH_NORM_GRAD_TEST_DATA_H_", ""]
    with open(os.path.join(HERE, "fused_batch_norm_grad_test_data.h"), "w") as f:
        f.write("\n".join(out))


if __name__ == "__main__":
    main()
