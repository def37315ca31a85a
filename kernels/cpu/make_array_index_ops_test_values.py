#!/usr/bin/env python3
"""Prints TensorFlow's values for array_index_ops_test.cc's MatchesTensorFlow
tests (Unique, InvertPermutation, BroadcastArgs, Bucketize, LinSpace), run
through tf.raw_ops on the test's own inputs, as the test's C++ literals.

    /work/tfvenv/bin/python kernels/cpu/make_array_index_ops_test_values.py
    /work/tfvenv/bin/python kernels/cpu/make_array_index_ops_test_values.py --check

--check reads the literals array_index_ops_test.cc commits and compares them
with TensorFlow's (exit 1 on a mismatch). The error messages the test also
checks are not compared.
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


def main():
    c = Cases(os.path.join(HERE, "array_index_ops_test.cc"))

    y, idx = raw.Unique(x=np.array([0.0, -0.0, np.nan, np.nan, 1.0, 0.0, 1.0], np.float32))
    c.case("Unique float y", y, "Vec<float>({0.f, -0.f, NAN, NAN, 1.f, 0.f, 1.f})")
    c.case("Unique float idx", idx, "ExpectEqual((*out)[0], Vec<float>({0.f, NAN")
    y, idx = raw.Unique(x=np.array([5, 3, 5, -1, 3, 7], np.int32), out_idx=tf.int64)
    c.case("Unique int32 y", y, "Vec<int32_t>({5, 3, 5, -1, 3, 7})")
    c.case("Unique int32 idx", idx, "Vec<int32_t>({5, 3, -1, 7})")
    y, idx = raw.Unique(x=np.array([b"b", b"a", b"b", b""]))
    c.case("Unique string y", y, 'Vec<std::string>({"b", "a", "b", ""})')
    c.case("Unique string idx", idx, 'Vec<std::string>({"b", "a", ""})')
    y, idx = raw.Unique(x=np.array([2.0, -0.0, 0.0], np.float16))
    c.case("Unique half idx", idx, "half(0.f)})})")

    c.case("InvertPermutation", raw.InvertPermutation(x=np.array([3, 4, 0, 2, 1], np.int32)),
           "Vec<int32_t>({3, 4, 0, 2, 1})")

    c.case("BroadcastArgs int64",
           raw.BroadcastArgs(s0=np.array([2, 1, 3], np.int64), s1=np.array([4, 1, 1, 3], np.int64)),
           "Vec<int64_t>({4, 1, 1, 3})")
    c.case("BroadcastArgs zero dim",
           raw.BroadcastArgs(s0=np.array([0, 1], np.int32), s1=np.array([1, 5], np.int32)),
           "Vec<int32_t>({1, 5})")
    c.case("BroadcastArgs empty",
           raw.BroadcastArgs(s0=np.zeros([0], np.int32), s1=np.array([3], np.int32)),
           "Tensor(DT_INT32, TensorShape({0})), Vec<int32_t>({3})")

    c.case("Bucketize float",
           raw.Bucketize(input=np.array([-5, 0, 2.5, 10, 11, 100], np.float32).reshape(2, 3),
                         boundaries=[0.0, 10.0, 11.0]),
           "AttrFloats({0, 10, 11})", after="Mat<int32_t>(")
    c.case("Bucketize int64",
           raw.Bucketize(input=np.array([-5, 0, 3, 10, 11], np.int64), boundaries=[0.0, 2.5, 10.0]),
           "Vec<int64_t>({-5, 0, 3, 10, 11})")
    c.case("Bucketize double",
           raw.Bucketize(input=np.array([0.1, 0.2, 0.30000001], np.float64),
                         boundaries=[0.1, 0.2, 0.3]),
           "Vec<double>({0.1, 0.2, 0.30000001})")

    c.case("LinSpace float",
           raw.LinSpace(start=np.float32(0.1), stop=np.float32(1.7), num=np.int32(7)),
           "Tensor::Scalar<int32_t>(7)", after="Vec<float>(")
    c.case("LinSpace double",
           raw.LinSpace(start=np.float64(-1), stop=np.float64(2), num=np.int64(4)),
           "Tensor::Scalar<int64_t>(4)", after="Vec<double>(")
    c.case("LinSpace num 1",
           raw.LinSpace(start=np.float32(3), stop=np.float32(5), num=np.int32(1)),
           "Tensor::Scalar<int32_t>(1)", after="Vec<float>(")
    c.finish()


if __name__ == "__main__":
    main()
