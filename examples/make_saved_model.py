#!/usr/bin/env python3
"""Writes the example SavedModel and TensorFlow's output for it.

A Keras 3 MLP (4 features -> 8 ReLU -> 3 softmax, seeded weights) exported
with `model.export` as users export models:
  mlp_saved_model/                  the SavedModel (serving_default: x -> output_0)
  mlp_saved_model_expected.npy      TensorFlow's output_0 for mlp_x.npy,
                                    through tf.saved_model.load
which `graphrun run examples/mlp_saved_model --feed x=examples/mlp_x.npy`
is checked against (tests/cli_test.sh). Needs TensorFlow (Keras 3) and
NumPy; CI does not: the files are committed.

    python3 examples/make_saved_model.py
"""
import os
import shutil

import keras
import numpy as np
import tensorflow as tf

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    keras.utils.set_random_seed(7)
    inputs = keras.Input(shape=(4,), name="x")
    hidden = keras.layers.Dense(8, activation="relu", name="hidden")(inputs)
    probs = keras.layers.Dense(3, activation="softmax", name="probs")(hidden)
    model = keras.Model(inputs, probs)
    path = os.path.join(HERE, "mlp_saved_model")
    shutil.rmtree(path, ignore_errors=True)
    model.export(path, verbose=False)
    x = np.load(os.path.join(HERE, "mlp_x.npy"))
    sig = tf.saved_model.load(path).signatures["serving_default"]
    out = sig(x=tf.constant(x))
    assert list(out.keys()) == ["output_0"], list(out.keys())
    want = out["output_0"].numpy()
    np.save(os.path.join(HERE, "mlp_saved_model_expected.npy"), want)
    print(f"TensorFlow {tf.__version__}: output_0 =\n{want}")


if __name__ == "__main__":
    main()
