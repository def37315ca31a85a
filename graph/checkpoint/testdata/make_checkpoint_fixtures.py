#!/usr/bin/env python3
"""Writes or dumps TensorFlow V2 checkpoints for graph/checkpoint's tests.

Write the fixture (a tf.compat.v1.train.Saver checkpoint plus one .npy per
variable holding the values TensorFlow read back with sess.run):

  python make_checkpoint_fixtures.py write [OUT_DIR]   # default: this directory

Dump any checkpoint with TensorFlow's own reader (to check one graphrun wrote):

  python make_checkpoint_fixtures.py dump PREFIX

The dump prints one line per key: name, dtype, shape and the values.
"""
import os
import sys

import numpy as np


def _variables(tf):
  """The fixture's variables: several dtypes and shapes, a scalar, strings."""
  v1 = tf.compat.v1
  specs = [
      ("dense/kernel", np.array([[1.5, -2.25, 3.0], [0.1, 1e-30, -7.0]], np.float32)),
      ("dense/bias", np.array([0.5, -0.5, 65504.0, 6.1e-5], np.float16)),
      ("f64_scalar", np.float64(3.141592653589793)),
      ("bf16", np.array([1.0, -2.5, 3.0e38], np.float32)),  # cast to bfloat16 below
      ("i8", np.array([-128, 0, 127], np.int8)),
      ("i16", np.array([[-32768], [32767]], np.int16)),
      ("i32", np.arange(-3, 9, dtype=np.int32).reshape(2, 2, 3)),
      ("i64", np.array([-(2**62), 2**40 + 7], np.int64)),
      ("u8", np.array([0, 200, 255], np.uint8)),
      ("flags", np.array([True, False, True, True], np.bool_)),
      ("words", np.array([b"hello", b"", b"\xff\x00binary", b"x" * 200], object)),
      ("global_step", np.int64(42)),
  ]
  out = []
  for name, value in specs:
    if name == "bf16":
      init = tf.cast(tf.constant(value), tf.bfloat16)
    else:
      init = tf.constant(value)
    out.append(v1.Variable(init, name=name))
  return out


def write(out_dir):
  import tensorflow as tf
  v1 = tf.compat.v1
  v1.disable_eager_execution()
  graph = tf.Graph()
  with graph.as_default():
    variables = _variables(tf)
    saver = v1.train.Saver()
    with v1.Session() as sess:
      sess.run(v1.global_variables_initializer())
      prefix = saver.save(sess, os.path.join(out_dir, "tf_model.ckpt"), write_meta_graph=False,
                          write_state=False)
      for var in variables:
        value = sess.run(var)
        name = var.op.name.replace("/", "_")
        if var.dtype.base_dtype == tf.bfloat16:
          value = np.asarray(value, np.float32)
        if var.dtype.base_dtype == tf.string:
          value = np.asarray(value, dtype="S")
        np.save(os.path.join(out_dir, "expected_" + name + ".npy"), np.asarray(value))
  print("wrote", prefix)


def write_sharded(out_dir):
  """tf_sharded.ckpt: a sharded Saver over variables on two devices, so
  TensorFlow writes a bundle per device and merges them into two shards."""
  import tensorflow as tf
  tf.compat.v1.disable_eager_execution()
  g = tf.Graph()
  with g.as_default():
    with tf.device("/cpu:0"):
      a = tf.compat.v1.Variable([1.0, 2.0, 3.0], name="a")
    with tf.device("/cpu:1"):
      b = tf.compat.v1.Variable([-1.5, 2.5], name="b")
    saver = tf.compat.v1.train.Saver([a, b], sharded=True)
    config = tf.compat.v1.ConfigProto(device_count={"CPU": 2})
    with tf.compat.v1.Session(graph=g, config=config) as s:
      s.run(tf.compat.v1.global_variables_initializer())
      prefix = os.path.join(out_dir, "tf_sharded.ckpt")
      saver.save(s, prefix, write_meta_graph=False, write_state=False)
  print("wrote", prefix)


def dump(prefix):
  import tensorflow as tf
  reader = tf.train.load_checkpoint(prefix)
  dtypes = reader.get_variable_to_dtype_map()
  shapes = reader.get_variable_to_shape_map()
  for key in sorted(shapes):
    value = reader.get_tensor(key)
    flat = np.asarray(value).ravel()
    if flat.dtype.kind in "fV" and flat.dtype != np.float64:
      flat = flat.astype(np.float64)  # float16/32 and bfloat16 are exact in float64
    print("%s %s %s %s" % (key, dtypes[key].name, list(shapes[key]), flat.tolist()))


def main(argv):
  if len(argv) >= 2 and argv[1] == "dump" and len(argv) == 3:
    dump(argv[2])
  elif len(argv) >= 2 and argv[1] == "write":
    out_dir = argv[2] if len(argv) > 2 else os.path.dirname(os.path.abspath(__file__))
    write(out_dir)
    write_sharded(out_dir)
  else:
    sys.exit(__doc__)


if __name__ == "__main__":
  main(sys.argv)
