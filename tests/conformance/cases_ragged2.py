"""Conformance cases for the ragged ops: RaggedRange, RaggedGather,
RaggedTensorToSparse, RaggedTensorToVariant and RaggedTensorFromVariant."""
import numpy as np
import tensorflow as tf

from conformance_cases import case, f32, f64, i32, i64


def splits(*rows, dtype=i64):
    """Row splits of rows of the given lengths."""
    return np.concatenate([[0], np.cumsum(rows)]).astype(dtype)


# --- RaggedRange: starts, limits, deltas each a scalar or a vector ---
case("RaggedRange", ("starts", np.array(0, i32)), ("limits", np.array(5, i32)),
     ("deltas", np.array(2, i32)))
case("RaggedRange", ("starts", np.array([0, 3, 7, -2], i32)), ("limits", np.array(6, i32)),
     ("deltas", np.array(1, i32)))
case("RaggedRange", ("starts", np.array([0, 5, 10, 4], i64)), ("limits", np.array([3, 1, 10, -4], i64)),
     ("deltas", np.array([1, -2, 3, -3], i64)), Tsplits=tf.int32)
case("RaggedRange", ("starts", np.array(0.5, f32)), ("limits", np.array([2.0, 0.5, -1.0], f32)),
     ("deltas", np.array([0.3, 0.25, -0.4], f32)))
case("RaggedRange", ("starts", np.array([1.0, -1.5], f64)), ("limits", np.array(3.25, f64)),
     ("deltas", np.array(0.7, f64)), Tsplits=tf.int32)
case("RaggedRange", ("starts", np.array([7, 2], i32)), ("limits", np.array([3, 9], i32)),
     ("deltas", np.array([2, -1], i32)))  # both rows empty
case("RaggedRange", ("starts", np.zeros([0], i32)), ("limits", np.zeros([0], i32)),
     ("deltas", np.array(1, i32)))
case("RaggedRange", ("starts", np.array([0, 1], i32)), ("limits", np.array(5, i32)),
     ("deltas", np.array([1, 0], i32)))  # delta 0
case("RaggedRange", ("starts", np.array(0.0, f32)), ("limits", np.array(1.0, f32)),
     ("deltas", np.array(0.0, f32)))
case("RaggedRange", ("starts", np.array([0, 1], i32)), ("limits", np.array([4, 5, 6], i32)),
     ("deltas", np.array(1, i32)))  # lengths differ
case("RaggedRange", ("starts", np.zeros([2, 2], i32)), ("limits", np.array(5, i32)),
     ("deltas", np.array(1, i32)))  # not a vector

# --- RaggedGather: params of 1 or 2 ragged levels, indices of rank 0-2 ---
# Drawn from a generator of this module's own, so that cases added to
# earlier modules leave these values alone.
VALS = np.random.RandomState(11).uniform(-2.0, 2.0, size=[7]).astype(f32)
case("RaggedGather", ("params_nested_splits", [splits(2, 0, 3, 2)]), ("params_dense_values", VALS),
     ("indices", np.array([3, 0, 1, 0], i32)), OUTPUT_RAGGED_RANK=1)
case("RaggedGather", ("params_nested_splits", [splits(1, 2, 0, dtype=i32)]),
     ("params_dense_values", np.array([b"a", b"bc", b"d"], object)),
     ("indices", np.array([2, 1, 1], i64)), OUTPUT_RAGGED_RANK=1)
case("RaggedGather", ("params_nested_splits", [splits(2, 0, 3, 2)]), ("params_dense_values", VALS),
     ("indices", np.array([[3, 1], [0, 2], [2, 2]], i64)), OUTPUT_RAGGED_RANK=2)
case("RaggedGather", ("params_nested_splits", [splits(2, 0, 3, 2)]), ("params_dense_values", VALS),
     ("indices", np.array(2, i32)), OUTPUT_RAGGED_RANK=0)
case("RaggedGather", ("params_nested_splits", [splits(2, 1, 0, dtype=i32)]),
     ("params_dense_values", np.arange(6, dtype=i32).reshape(3, 2)),
     ("indices", np.array([1, 0, 2], i32)), OUTPUT_RAGGED_RANK=1)  # values [3, 2]
NESTED = [splits(2, 0, 1, 3), splits(1, 3, 0, 2, 1, 0)]  # 4 rows of 6 rows of 7 values
case("RaggedGather", ("params_nested_splits", NESTED), ("params_dense_values", VALS),
     ("indices", np.array([3, 1, 0, 2], i32)), OUTPUT_RAGGED_RANK=2)
case("RaggedGather", ("params_nested_splits", NESTED), ("params_dense_values", VALS.astype(f64)),
     ("indices", np.array([[0, 3], [2, 0]], i64)), OUTPUT_RAGGED_RANK=3)
case("RaggedGather", ("params_nested_splits", [s.astype(i32) for s in NESTED]),
     ("params_dense_values", np.arange(7, dtype=i64)), ("indices", np.array(3, i32)),
     OUTPUT_RAGGED_RANK=1)
case("RaggedGather", ("params_nested_splits", [splits(2, 0, 3, 2)]), ("params_dense_values", VALS),
     ("indices", np.zeros([0], i32)), OUTPUT_RAGGED_RANK=1)
case("RaggedGather", ("params_nested_splits", [np.array([1, 2, 3, 5], i64)]),
     ("params_dense_values", VALS), ("indices", np.array([2, 0], i32)),
     OUTPUT_RAGGED_RANK=1)  # splits need not start at 0
case("RaggedGather", ("params_nested_splits", [splits(2, 0, 3, 2)]), ("params_dense_values", VALS),
     ("indices", np.array([1, 4], i32)), OUTPUT_RAGGED_RANK=1)  # out of range
case("RaggedGather", ("params_nested_splits", [splits(2, 0, 3, 2)]), ("params_dense_values", VALS),
     ("indices", np.array([[0, -1]], i64)), OUTPUT_RAGGED_RANK=2)  # negative
case("RaggedGather", ("params_nested_splits", [np.array([0, 3, 2, 7], i64)]),
     ("params_dense_values", VALS), ("indices", np.array([0], i32)), OUTPUT_RAGGED_RANK=1)
case("RaggedGather", ("params_nested_splits", [np.array([0, 3, 9], i64)]),
     ("params_dense_values", VALS), ("indices", np.array([0], i32)), OUTPUT_RAGGED_RANK=1)

# --- RaggedTensorToSparse ---
case("RaggedTensorToSparse", ("rt_nested_splits", [splits(2, 0, 3, 0, 2)]),
     ("rt_dense_values", VALS))
case("RaggedTensorToSparse", ("rt_nested_splits", NESTED), ("rt_dense_values", VALS))
case("RaggedTensorToSparse", ("rt_nested_splits", [splits(0, 2, 1, dtype=i32)]),
     ("rt_dense_values", np.arange(12, dtype=i32).reshape(3, 2, 2)))
case("RaggedTensorToSparse", ("rt_nested_splits", [splits(1, 0, 2, dtype=i32), splits(2, 0, 1, dtype=i32)]),
     ("rt_dense_values", np.array([b"a", b"b", b"c"], object)))
case("RaggedTensorToSparse", ("rt_nested_splits", [splits()]), ("rt_dense_values", np.zeros([0], f32)))
case("RaggedTensorToSparse", ("rt_nested_splits", [splits(0, 0, 0)]),
     ("rt_dense_values", np.zeros([0, 3], f32)))
case("RaggedTensorToSparse", ("rt_nested_splits", [splits(2, 0, 3)]), ("rt_dense_values", VALS))
case("RaggedTensorToSparse", ("rt_nested_splits", [np.array([1, 3, 7], i64)]),
     ("rt_dense_values", VALS))
case("RaggedTensorToSparse", ("rt_nested_splits", [np.array([0, 4, 2, 7], i64)]),
     ("rt_dense_values", VALS))
case("RaggedTensorToSparse", ("rt_nested_splits", [splits(2, 1), splits(1, 3, 0, 2)]),
     ("rt_dense_values", VALS[:6]))  # outer splits end past the inner rows

# --- RaggedTensorToVariant / RaggedTensorFromVariant ---
# The variant tensor is not recorded: the encoding's cases are its errors;
# RaggedTensorFromVariant decodes what a first RaggedTensorToVariant encodes.
for bad in (np.array([1, 3, 7], i64), np.array([0, 3, 6], i64), np.array([0, 4, 2, 7], i64),
            np.zeros([0], i64)):
    for batched in (True, False):
        case("RaggedTensorToVariant", ("rt_nested_splits", [bad]), ("rt_dense_values", VALS),
             batched_input=batched)
case("RaggedTensorToVariant", ("rt_nested_splits", [splits(2, 1), splits(1, 3, 0, 2)]),
     ("rt_dense_values", VALS[:6]), batched_input=True)


def encoded(batched, **attrs):
    return dict(pre=("RaggedTensorToVariant", "encoded_ragged", {"batched_input": batched}), **attrs)


MIXED = np.arange(12, dtype=i32).reshape(6, 2)
for irr in (0, -1):
    case("RaggedTensorFromVariant", ("rt_nested_splits", [splits(2, 0, 3, 2)]),
         ("rt_dense_values", VALS),
         **encoded(True, input_ragged_rank=irr, output_ragged_rank=1, Tvalues=tf.float32))
case("RaggedTensorFromVariant", ("rt_nested_splits", [splits(2, 0, 3, 2)]), ("rt_dense_values", VALS),
     **encoded(False, input_ragged_rank=1, output_ragged_rank=1, Tvalues=tf.float32))
for irr in (1, -1):
    case("RaggedTensorFromVariant", ("rt_nested_splits", [splits(2, 1, 1), splits(1, 3, 0, 2)]),
         ("rt_dense_values", MIXED),
         **encoded(True, input_ragged_rank=irr, output_ragged_rank=2, Tvalues=tf.int32))
case("RaggedTensorFromVariant", ("rt_nested_splits", [splits(2, 1, 1), splits(1, 3, 0, 2)]),
     ("rt_dense_values", MIXED),
     **encoded(False, input_ragged_rank=2, output_ragged_rank=2, Tvalues=tf.int32))
case("RaggedTensorFromVariant", ("rt_nested_splits", NESTED), ("rt_dense_values", VALS.astype(f64)),
     **encoded(True, input_ragged_rank=1, output_ragged_rank=2, Tvalues=tf.float64))
case("RaggedTensorFromVariant", ("rt_nested_splits", [splits(1, 2, 0, dtype=i32)]),
     ("rt_dense_values", np.array([b"a", b"bc", b"d"], object)),
     **encoded(True, input_ragged_rank=0, output_ragged_rank=1, Tvalues=tf.string, Tsplits=tf.int32))
case("RaggedTensorFromVariant", ("rt_nested_splits", []), ("rt_dense_values", MIXED),
     **encoded(False, input_ragged_rank=0, output_ragged_rank=0, Tvalues=tf.int32))
case("RaggedTensorFromVariant", ("rt_nested_splits", []), ("rt_dense_values", np.array(5, i64)),
     **encoded(False, input_ragged_rank=0, output_ragged_rank=0, Tvalues=tf.int64))
case("RaggedTensorFromVariant", ("rt_nested_splits", [splits()]), ("rt_dense_values", np.zeros([0, 2], f32)),
     **encoded(True, input_ragged_rank=0, output_ragged_rank=1, Tvalues=tf.float32))
case("RaggedTensorFromVariant", ("rt_nested_splits", [splits(), splits()]),
     ("rt_dense_values", np.zeros([0], f32)),
     **encoded(True, input_ragged_rank=1, output_ragged_rank=2, Tvalues=tf.float32))
case("RaggedTensorFromVariant", ("rt_nested_splits", [splits(0, 2, 0)]),
     ("rt_dense_values", np.zeros([2, 2], f32)),
     **encoded(True, input_ragged_rank=0, output_ragged_rank=1, Tvalues=tf.float32))
# Rows of equal length stack into a dense tensor.
case("RaggedTensorFromVariant", ("rt_nested_splits", [splits(2, 2, 2)]), ("rt_dense_values", VALS[:6]),
     **encoded(True, input_ragged_rank=-1, output_ragged_rank=0, Tvalues=tf.float32))
case("RaggedTensorFromVariant", ("rt_nested_splits", [splits()]), ("rt_dense_values", np.zeros([0], i32)),
     **encoded(True, input_ragged_rank=-1, output_ragged_rank=0, Tvalues=tf.int32))
# Refusals: the encoding's (bad splits), then the decoding's.
case("RaggedTensorFromVariant", ("rt_nested_splits", [np.array([0, 3, 9], i64)]), ("rt_dense_values", VALS),
     **encoded(True, input_ragged_rank=0, output_ragged_rank=1, Tvalues=tf.float32))
case("RaggedTensorFromVariant", ("rt_nested_splits", [splits(2, 0, 3, 2)]), ("rt_dense_values", VALS),
     **encoded(True, input_ragged_rank=0, output_ragged_rank=1, Tvalues=tf.float64))
case("RaggedTensorFromVariant", ("rt_nested_splits", [splits(2, 0, 3, 2)]), ("rt_dense_values", VALS),
     **encoded(True, input_ragged_rank=0, output_ragged_rank=1, Tvalues=tf.float32, Tsplits=tf.int32))
case("RaggedTensorFromVariant", ("rt_nested_splits", [splits(2, 1), splits(1, 3, 0)]),
     ("rt_dense_values", VALS[:4]),
     **encoded(True, input_ragged_rank=0, output_ragged_rank=1, Tvalues=tf.float32))
case("RaggedTensorFromVariant", ("rt_nested_splits", [splits(2, 0, 3, 2)]), ("rt_dense_values", VALS),
     **encoded(True, input_ragged_rank=-1, output_ragged_rank=0, Tvalues=tf.float32))
case("RaggedTensorFromVariant", ("rt_nested_splits", [splits(2, 0, 3, 2)]), ("rt_dense_values", VALS),
     **encoded(False, input_ragged_rank=-1, output_ragged_rank=0, Tvalues=tf.float32))
