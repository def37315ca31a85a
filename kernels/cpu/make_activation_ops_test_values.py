#!/usr/bin/env python3
"""Prints TensorFlow's values for activation_ops_test.cc's TensorFlow cases:
ActivationTest.MatchTensorFlow (Softplus, Softsign, Selu, LeakyRelu with
alpha 0.1, tf.raw_ops in float64 on the test's nine inputs) and the values
ActivationTest.InfinitiesNanAndDefaults states for -inf, inf and NaN in
float32 (and LeakyRelu's default alpha), as the test's C++ literals.

    /work/tfvenv/bin/python kernels/cpu/make_activation_ops_test_values.py
    /work/tfvenv/bin/python kernels/cpu/make_activation_ops_test_values.py --check

--check reads the values activation_ops_test.cc commits and compares them
with TensorFlow's (exit 1 on a mismatch): the float64 lists exactly (the test
allows 1e-15), the special values as the test's comment gives them.
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

X = np.array([-20.0, -3.0, -1.0, -0.0001, 0.0, 0.5, 2.0, 15.0, 40.0])


def main():
    c = Cases(os.path.join(HERE, "activation_ops_test.cc"))
    ops = {
        "Softplus": lambda x: raw.Softplus(features=x),
        "Softsign": lambda x: raw.Softsign(features=x),
        "Selu": lambda x: raw.Selu(features=x),
        "LeakyRelu": lambda x: raw.LeakyRelu(features=x, alpha=0.1),
    }
    for op, run in ops.items():
        c.case(op + " float64", run(X), "TEST(ActivationTest, MatchTensorFlow)",
               after='{"%s", {' % op)

    special = np.array([-np.inf, np.inf, np.nan], np.float32)
    scale, alpha = 1.0507009873554804934193349852946, 1.6732632423543772848170429916717
    c.expect("Softplus [-inf, inf, nan]", raw.Softplus(features=special), [0, np.inf, np.nan])
    c.expect("Softsign [-inf, inf, nan]", raw.Softsign(features=special), [np.nan] * 3)
    c.expect("Selu [-inf, inf, nan]", raw.Selu(features=special),
             [-scale * alpha, np.inf, np.nan], rtol=1e-6)
    c.expect("LeakyRelu default alpha [-inf, inf, nan]", raw.LeakyRelu(features=special),
             [-np.inf, np.inf, np.nan])
    c.case("LeakyRelu default alpha (0.2)",
           raw.LeakyRelu(features=np.array([-1, 2], np.float32)),
           "Tensor::FromVector<float>({-1, 2})", after="std::vector<double>{")
    c.case("LeakyRelu alpha 2",
           raw.LeakyRelu(features=np.array([-1, 0, 2], np.float32), alpha=2.0),
           "Tensor::FromVector<float>({-1, 0, 2})", after="std::vector<double>{")
    c.finish()


if __name__ == "__main__":
    main()
