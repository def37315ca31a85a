#!/usr/bin/env python3
"""Prints TensorFlow's values for array_matrix_ops_test.cc's MatchesTensorFlow
tests (MatrixBandPart, MatrixDiag, MatrixDiagV3 in every alignment,
MatrixDiagPartV3), run through tf.raw_ops on the test's own inputs, as the
test's C++ literals.

    /work/tfvenv/bin/python kernels/cpu/make_array_matrix_ops_test_values.py
    /work/tfvenv/bin/python kernels/cpu/make_array_matrix_ops_test_values.py --check

--check reads the literals array_matrix_ops_test.cc commits and compares them
with TensorFlow's (exit 1 on a mismatch).
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
ALIGNS = ["RIGHT_LEFT", "LEFT_RIGHT", "LEFT_LEFT", "RIGHT_RIGHT"]


def one_to(n, shape):
    """The test's OneTo: 1, 2, ..., n as float."""
    return np.arange(1, n + 1, dtype=np.float32).reshape(shape)


def main():
    c = Cases(os.path.join(HERE, "array_matrix_ops_test.cc"))

    m = one_to(20, (4, 5))
    for i, (lo, hi, t) in enumerate([(1, 2, np.int64), (-1, 0, np.int64), (0, -1, np.int32)]):
        c.case("MatrixBandPart(%d, %d)" % (lo, hi),
               raw.MatrixBandPart(input=m, num_lower=t(lo), num_upper=t(hi)),
               "TEST(MatrixBandPartTest, MatchesTensorFlow)", after="Mat<float>(", skip=i)

    c.case("MatrixDiag int32",
           raw.MatrixDiag(diagonal=np.array([[1, 2, 3], [4, 5, 6]], np.int32)),
           "TEST(MatrixDiagTest, MatchesTensorFlow)", after="Mat<int32_t>(", skip=1)
    diags = np.array([[1, 2, 0], [3, 4, 5], [6, 7, 0]], np.float32)
    for align in ALIGNS:
        c.case("MatrixDiagV3 " + align,
               raw.MatrixDiagV3(diagonal=diags, k=np.array([-1, 1], np.int32), num_rows=-1,
                                num_cols=-1, padding_value=np.float32(9), align=align),
               "TEST(MatrixDiagTest, MatchesTensorFlow)", after='{"%s",' % align)
    c.case("MatrixDiagV3 rows given",
           raw.MatrixDiagV3(diagonal=np.array([1, 2], np.float32), k=1, num_rows=3,
                            num_cols=-1, padding_value=np.float32(0)),
           "Tensor::Scalar<int32_t>(3), Tensor::Scalar<int32_t>(-1), Tensor::Scalar<float>(0)}",
           after="Mat<float>(")
    c.case("MatrixDiagV3 cols given",
           raw.MatrixDiagV3(diagonal=np.array([1, 2], np.float32), k=-1, num_rows=-1,
                            num_cols=4, padding_value=np.float32(-1)),
           "Tensor::Scalar<int32_t>(4), Tensor::Scalar<float>(-1)}", after="Mat<float>(")

    m = one_to(12, (3, 4))
    for align in ALIGNS:
        c.case("MatrixDiagPartV3 " + align,
               raw.MatrixDiagPartV3(input=m, k=np.array([-2, 1], np.int32),
                                    padding_value=np.float32(0), align=align),
               "TEST(MatrixDiagPartTest, MatchesTensorFlow)", after='{"%s",' % align)
    batch = one_to(24, (2, 3, 4)).ravel()
    batch[12:] = (np.arange(12, 24) - 11) * 10.0
    batch = batch.reshape(2, 3, 4)
    c.case("MatrixDiagPartV3 batch k=2",
           raw.MatrixDiagPartV3(input=batch, k=2, padding_value=np.float32(0)),
           "{batch, Tensor::Scalar<int32_t>(2), Tensor::Scalar<float>(0)}", after="Mat<float>(")
    c.case("MatrixDiagPartV3 main",
           raw.MatrixDiagPartV3(input=m, k=0, padding_value=np.float32(0)),
           "{m, Tensor::Scalar<int32_t>(0), Tensor::Scalar<float>(0)}", after="Vec<float>(")
    c.finish()


if __name__ == "__main__":
    main()
