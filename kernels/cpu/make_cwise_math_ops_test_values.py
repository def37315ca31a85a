#!/usr/bin/env python3
"""Prints TensorFlow's values for the cases of cwise_math_ops_test.cc that
cite TensorFlow: the transcendental unary ops (Sin ... Expm1, Asin, Acos,
Log1p) in float64 and their infinities and NaN, Erf in float16 and
bfloat16, Atan2, the zero-safe products and quotients (broadcast, and on
NaN and Inf), TruncateDiv / TruncateMod (broadcast, INT_MIN, floating) and
ClipByValue, run through tf.raw_ops on the test's inputs, as the test's C++
literals.

    /work/tfvenv/bin/python kernels/cpu/make_cwise_math_ops_test_values.py
    /work/tfvenv/bin/python kernels/cpu/make_cwise_math_ops_test_values.py --check

The GELU composites (Python's math module) and the rounding cases (exact
arithmetic) are not TensorFlow's and are not covered. --check reads the
literals cwise_math_ops_test.cc commits and compares them with TensorFlow's,
exactly (exit 1 on a mismatch).
"""
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ["TF_ENABLE_ONEDNN_OPTS"] = "0"

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from cc_expected import Cases  # noqa: E402

raw = tf.raw_ops

UNARY = ["Sin", "Cos", "Tan", "Atan", "Sinh", "Cosh", "Erf", "Erfc", "Expm1"]
INF, NAN = np.inf, np.nan


def op(name, *args):
    """tf.raw_ops.<name> on positional inputs."""
    fn = getattr(raw, name)
    names = {1: ["x"], 2: ["x", "y"]}[len(args)]
    return fn(**dict(zip(names, args)))


def main():
    c = Cases(os.path.join(HERE, "cwise_math_ops_test.cc"))
    f64 = lambda v: np.array(v, np.float64)  # noqa: E731
    x = f64([-3.0, -1.5, -0.5, 0.0, 0.25, 0.5, 1.0, 2.5])
    for name in UNARY:
        c.case(name + " float64", op(name, x), "TrigonometricHyperbolicAndErrorFunctions",
               after='{"%s", {' % name)
    u = f64([-1.0, -0.5, 0.0, 0.3, 1.0, 1.5])
    for name in ["Asin", "Acos"]:
        c.case(name + " float64", op(name, u), "const std::vector<UnaryCase> inverse =",
               after='{"%s", {' % name)
    c.case("Log1p float64", op("Log1p", f64([-1.0, -0.5, 0.0, 1e-10, 0.5, 3.0, -2.0])),
           "const std::vector<UnaryCase> log1p =", after='{"Log1p", {')
    c.case("Expm1 special", op("Expm1", f64([-INF, INF, NAN])),
           'RunOk("Expm1", {MakeTensor<double>({-kInf, kInf, kNaN})})', after=", {")
    c.case("Erf special float", op("Erf", np.array([-INF, INF, NAN], np.float32)),
           'RunOk("Erf", {MakeTensor<float>({-kInf, kInf, kNaN})})', after=", {")
    c.case("Erfc special", op("Erfc", f64([-INF, INF])),
           'RunOk("Erfc", {MakeTensor<double>({-kInf, kInf})})', after=", {")
    c.case("Sin special", op("Sin", f64([INF, NAN])),
           'RunOk("Sin", {MakeTensor<double>({kInf, kNaN})})', after=", {")

    e = [-2.0, -0.5, 0.0, 0.25, 1.0, 3.0]
    c.case("Erf half", tf.cast(op("Erf", tf.constant(e, tf.float16)), tf.float64),
           'RunOk("Erf", {MakeTensor<half>(x)})', kind="d")
    c.case("Erf bfloat16", tf.cast(op("Erf", tf.constant(e, tf.bfloat16)), tf.float64),
           'RunOk("Erf", {MakeTensor<bfloat16>(x)})', kind="d")

    c.case("Atan2 float64",
           raw.Atan2(y=f64([1.0, -1.0, 0.0, 0.0, -0.0, 3.0, -2.0]),
                     x=f64([0.0, 0.0, -1.0, 1.0, -1.0, 4.0, -2.0])),
           "TEST(BinaryMathTest, Atan2CoversEveryQuadrant)", after="want = {")

    zx = f64([0.0, 1.0, 2.0, 0.0, -3.0, 0.5]).reshape(2, 3)
    zy = f64([0.0, 2.0, 0.5])
    for name in ["Xlogy", "Xdivy", "Xlog1py", "DivNoNan", "MulNoNan"]:
        c.case(name + " broadcast", op(name, zx, zy),
               "TEST(BinaryMathTest, ZeroSafeProductsAndQuotientsBroadcast)",
               after='{"%s", {' % name)
    special = [("Xlogy", [0, 0, 0, 0, 1, NAN], [0, NAN, -1, INF, 0, 0]),
               ("Xlog1py", [0, 0, 0, 1, 2, NAN], [-1, NAN, -2, -1, -2, 0]),
               ("Xdivy", [0, 0, 0, 1, -1, NAN], [0, NAN, INF, 0, 0, 0]),
               ("DivNoNan", [1, 0, NAN, INF, -1, -3], [0, 0, 0, 0, INF, NAN]),
               ("MulNoNan", [INF, NAN, 2, INF, -INF, 0], [0, 0, 3, NAN, 2, -1])]
    for name, a, b in special:
        c.case(name + " on NaN and Inf", op(name, f64(a), f64(b)),
               'run("%s",' % name, after="Tiled({")
    c.expect("DivNoNan [1, NaN] / scalar zero", op("DivNoNan", f64([1, NAN] * 20), f64(0)),
             [0] * 40)
    c.expect("Xdivy zero over [0, NaN]", op("Xdivy", f64(0), f64([0, NAN] * 20)), [0] * 40)

    i32 = lambda v: np.array(v, np.int32)  # noqa: E731
    i64 = lambda v: np.array(v, np.int64)  # noqa: E731
    c.case("TruncateMod int32 broadcast",
           op("TruncateMod", i32([-7, 8, 9, 10, -11, 12]).reshape(2, 3), i32([3, -5, 4])),
           "MakeTensor<int32_t>({3, -5, 4})})", after=", {")
    c.case("TruncateDiv int64 scalar",
           op("TruncateDiv", i64([-7, 8, 9, 10, -11, 12]).reshape(2, 3), i64(-4)),
           "Tensor::Scalar<int64_t>(-4)})", after=", {")
    c.expect("TruncateDiv INT32_MIN / -1", op("TruncateDiv", i32([-2**31]), i32([-1])),
             [-2**31])
    c.expect("TruncateMod INT32_MIN % -1", op("TruncateMod", i32([-2**31]), i32([-1])), [0])
    c.expect("TruncateMod INT64_MIN % -1", op("TruncateMod", i64([-2**63, 5]), i64(-1)), [0, 0])
    fx = [-7.5, 7.5, 1.0, -1.0, 0.0, -7.5, INF]
    fy = [2.0, 2.0, 0.0, 0.0, 0.0, -2.0, 2.0]
    for name in ["TruncateDiv", "TruncateMod"]:
        for t, cc in [(np.float64, "double"), (np.float32, "float")]:
            c.case("%s %s" % (name, cc), op(name, np.array(fx, t), np.array(fy, t)),
                   'RunOk("%s", {MakeTensor<%s>(x), MakeTensor<%s>(y)})' % (name, cc, cc),
                   after=", {")
    c.case("TruncateDiv float -0.5 / 2", op("TruncateDiv", np.float32([-0.5]), np.float32([2])),
           'RunOk("TruncateDiv", {MakeTensor<float>({-0.5}), MakeTensor<float>({2})})',
           after=", {")

    t = np.array([1, 5, -3, 0, 2, 9], np.float32).reshape(2, 3)
    clip = lambda a, lo, hi: raw.ClipByValue(t=a, clip_value_min=lo, clip_value_max=hi)  # noqa
    c.case("ClipByValue scalar bounds", clip(t, np.float32(0), np.float32(4)),
           "Tensor::Scalar<float>(4)}),", after="{", occurrence=0)
    c.case("ClipByValue tensor min",
           clip(t, np.array([0, 0, -1, 1, 3, 3], np.float32).reshape(2, 3), np.float32(4)),
           "MakeTensor<float>({0, 0, -1, 1, 3, 3}, TensorShape({2, 3})),", after="}), {")
    c.case("ClipByValue tensor max",
           clip(t, np.float32(-1), np.array([0, 0, 2, 1, 3, 10], np.float32).reshape(2, 3)),
           "MakeTensor<float>({0, 0, 2, 1, 3, 10},", after="}), {")
    c.case("ClipByValue double tensors",
           clip(f64([-5, 1.5, 3, 4]), f64([-1, -2, 0, 5]), f64([1, 2, 0, 6])),
           'RunOk("ClipByValue", {MakeTensor<double>({-5, 1.5, 3, 4}), lo, hi}),', after="{")
    c.case("ClipByValue int64", clip(i64([-5, 0, 5, 10]), i64(-1), i64(6)),
           "Tensor::Scalar<int64_t>(6)}),", after="{")
    c.case("ClipByValue int32 scalar", [clip(np.int32(7), np.int32(0), np.int32(3))],
           "Tensor::Scalar<int32_t>(3)}),", after="{")
    nan_t = np.array([5, -5, 1, NAN], np.float32)
    c.case("ClipByValue crossed bounds", clip(nan_t, np.float32(3), np.float32(1)),
           "Tensor::Scalar<float>(1)}),", after="{")
    c.case("ClipByValue NaN in t", clip(nan_t, np.float32(0), np.float32(2)),
           "A NaN in t stays", after="Tensor::Scalar<float>(2)}), {")
    c.case("ClipByValue NaN bound",
           clip(np.array([5, -5, 1], np.float32), np.array([NAN, 0, 0], np.float32),
                np.float32(2)),
           "MakeTensor<float>({kNaN, 0, 0}),", after="}), {")
    c.finish()


if __name__ == "__main__":
    main()
