#!/usr/bin/env python3
"""Prints TensorFlow's values for einsum_op_test.cc's Cases(): Einsum (the
equations of Keras' EinsumDense and MultiHeadAttention and the general
forms) run through tf.raw_ops in float64 on the test's inputs
(FirstTestInput for the first operand, SecondTestInput for the second, of
kernels/testing/kernel_test_util.cc), as the test's C++ literals.

    /work/tfvenv/bin/python kernels/cpu/make_einsum_op_test_values.py
    /work/tfvenv/bin/python kernels/cpu/make_einsum_op_test_values.py --check

The equations, operand counts and shapes are read from the test's case table
({"equation", inputs, {a dims}, {b dims}, {out dims}, {expected}}). Every
value is a multiple of 1/16, so float32 gives the same numbers. --check
compares the committed expected lists with TensorFlow's, exactly, and each
case's output shape (exit 1 on a mismatch).
"""
import os
import re
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ["TF_ENABLE_ONEDNN_OPTS"] = "0"

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from cc_expected import Cases  # noqa: E402
from make_conv_nd_ops_test_values import first_test_input, second_test_input  # noqa: E402

CASE = re.compile(r'\{"([^"]*)", ([12]), \{([\d, ]*)\}, \{([\d, ]*)\}, \{([\d, ]*)\},')


def dims(text):
    return tuple(int(d) for d in text.split(",") if d.strip())


def main():
    c = Cases(os.path.join(HERE, "einsum_op_test.cc"))
    table = CASE.findall(c.test.text)
    assert len(table) > 30, len(table)
    for equation, num_inputs, a, b, out in table:
        inputs = [first_test_input(dims(a)).astype(np.float64)]
        if num_inputs == "2":
            inputs.append(second_test_input(dims(b)).astype(np.float64))
        y = tf.raw_ops.Einsum(inputs=inputs, equation=equation)
        anchor = '{"%s", %s, {%s}, {%s}, {%s},' % (equation, num_inputs, a, b, out)
        c.expect("%s output shape" % equation, list(y.shape), list(dims(out)))
        c.case(equation, y, anchor)
    c.finish()


if __name__ == "__main__":
    main()
