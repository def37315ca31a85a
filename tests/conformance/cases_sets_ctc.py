"""Conformance cases (sets_ctc): set operations along the last dimension
(SetSize, DenseToDense/DenseToSparse/SparseToSparseSetOperation) and
CTCGreedyDecoder."""
import numpy as np
import tensorflow as tf

from conformance_cases import case, f32, f64, i32, i64

# A generator of this module's own, so that later modules' draws from the
# shared one stay as they were.
RNG = np.random.RandomState(11)


def rand(shape, dtype=f32):
    return RNG.uniform(-2.0, 2.0, size=shape).astype(dtype)


OPS = ("a-b", "b-a", "intersection", "union")


def sparse(rows, shape, dtype):
    """(indices, values, shape) of a SparseTensor whose group `key` (the
    leading coordinates) holds the values rows[key], in row-major order."""
    ix, vals = [], []
    for key in sorted(rows):
        for j, v in enumerate(rows[key]):
            ix.append(list(key) + [j])
            vals.append(v)
    ix = np.array(ix, i64).reshape([-1, len(shape)])
    vals = np.array(vals, dtype) if dtype is not object else np.array(vals, object)
    return ix, vals.reshape([-1]), np.array(shape, i64)


def dense_sparse(op, dense, rows, shape, dtype, **attrs):
    ix, vals, sh = sparse(rows, shape, dtype)
    case("DenseToSparseSetOperation", ("set1", dense), ("set2_indices", ix),
         ("set2_values", vals), ("set2_shape", sh), set_operation=op, **attrs)


def sparse_sparse(op, rows1, shape1, rows2, shape2, dtype, **attrs):
    a = sparse(rows1, shape1, dtype)
    b = sparse(rows2, shape2, dtype)
    case("SparseToSparseSetOperation", ("set1_indices", a[0]), ("set1_values", a[1]),
         ("set1_shape", a[2]), ("set2_indices", b[0]), ("set2_values", b[1]),
         ("set2_shape", b[2]), set_operation=op, **attrs)


# --- DenseToDenseSetOperation ---
D1 = np.array([[1, 2, 2, 3], [4, 4, 4, 4], [7, 5, 6, 5]], i32)  # duplicates in rows
D2 = np.array([[3, 3, 9], [1, 2, 3], [5, 6, 7]], i32)           # row 2 equal as sets
for op in OPS:
    case("DenseToDenseSetOperation", ("set1", D1), ("set2", D2), set_operation=op)
    case("DenseToDenseSetOperation", ("set1", D1.astype(i64).reshape([3, 1, 4])),
         ("set2", D2.astype(i64).reshape([3, 1, 3])), set_operation=op)
S1 = np.array([[[b"b", b"a", b"b"], [b"", b"x", b"y"]],
               [[b"zz", b"z", b"a"], [b"q", b"q", b"q"]]], object)
S2 = np.array([[[b"a", b"c"], [b"y", b""]], [[b"Z", b"z"], [b"q", b"r"]]], object)
for op in OPS:
    case("DenseToDenseSetOperation", ("set1", S1), ("set2", S2), set_operation=op)
case("DenseToDenseSetOperation", ("set1", D1.astype(np.int8)), ("set2", D2.astype(np.int8)),
     set_operation="UNION")
case("DenseToDenseSetOperation", ("set1", D1.astype(np.uint8)), ("set2", D2.astype(np.uint8)),
     set_operation="B-A")
case("DenseToDenseSetOperation", ("set1", D1.astype(np.int16)), ("set2", D2.astype(np.int16)),
     set_operation="intersection")
case("DenseToDenseSetOperation", ("set1", D1.astype(np.uint16)), ("set2", D2.astype(np.uint16)),
     set_operation="a-b")
# Every result empty; zero-width and zero-group inputs.
case("DenseToDenseSetOperation", ("set1", D1), ("set2", D1[:, ::-1].copy()), set_operation="a-b")
case("DenseToDenseSetOperation", ("set1", np.zeros([2, 0], i32)), ("set2", np.zeros([2, 3], i32)),
     set_operation="union")
case("DenseToDenseSetOperation", ("set1", np.zeros([2, 0], i32)), ("set2", np.zeros([2, 0], i32)),
     set_operation="union")
case("DenseToDenseSetOperation", ("set1", np.zeros([0, 3], i64)), ("set2", np.zeros([0, 2], i64)),
     set_operation="intersection")
# Errors: rank 1, mismatched leading dims, mismatched ranks, unknown op.
case("DenseToDenseSetOperation", ("set1", np.array([1, 2], i32)), ("set2", np.array([2], i32)),
     set_operation="union")
case("DenseToDenseSetOperation", ("set1", D1), ("set2", D2[:2]), set_operation="a-b")
case("DenseToDenseSetOperation", ("set1", D1), ("set2", D2.reshape([3, 1, 3])),
     set_operation="a-b")
case("DenseToDenseSetOperation", ("set1", D1), ("set2", D2), set_operation="xor")

# --- DenseToSparseSetOperation ---
ROWS = {(0,): [3, 9, 3], (2,): [5, 0]}  # row 1 empty
for op in OPS:
    dense_sparse(op, D1, ROWS, [3, 4], i32)
    dense_sparse(op, D1.astype(i64), ROWS, [3, 3], i64)
SROWS = {(0, 1): [b"y", b"w"], (1, 0): [b"a", b"a", b"zz"]}
for op in OPS:
    dense_sparse(op, S1, SROWS, [2, 2, 3], object)
dense_sparse("union", D1, {}, [3, 5], i32)                        # empty sparse set
dense_sparse("a-b", D1.astype(np.uint8), {(1,): [4, 1]}, [3, 2], np.uint8)
# Unsorted sparse indices: refused, or taken run by run without validation.
UNSORTED = (np.array([[2, 0], [0, 0], [0, 1]], i64), np.array([5, 3, 4], i32),
            np.array([3, 2], i64))
for validate in (True, False):
    case("DenseToSparseSetOperation", ("set1", D1), ("set2_indices", UNSORTED[0]),
         ("set2_values", UNSORTED[1]), ("set2_shape", UNSORTED[2]), set_operation="union",
         validate_indices=validate)
# Errors: leading dims differ, ranks differ, index out of bounds, rank 1.
dense_sparse("union", D1, ROWS, [4, 4], i32)
dense_sparse("union", D1, {(0, 0): [1]}, [3, 1, 2], i32)
dense_sparse("union", D1, {(0,): [1, 2, 3, 4, 5]}, [3, 4], i32)
case("DenseToSparseSetOperation", ("set1", np.array([1, 2], i32)),
     ("set2_indices", np.array([[0]], i64)), ("set2_values", np.array([1], i32)),
     ("set2_shape", np.array([2], i64)), set_operation="union")

# --- SparseToSparseSetOperation ---
R1 = {(0,): [1, 1, 2], (1,): [4], (3,): [7, 8]}
R2 = {(0,): [2, 3], (2,): [6], (3,): [8, 7, 7]}
for op in OPS:
    sparse_sparse(op, R1, [4, 3], R2, [4, 3], i32)
    sparse_sparse(op, {(0, 1): [5, 1]}, [2, 2, 2], {(0, 1): [1], (1, 1): [9]}, [2, 2, 4], i64)
    sparse_sparse(op, {(0,): [b"x", b"b"], (1,): [b""]}, [3, 2],
                  {(0,): [b"b"], (2,): [b"c"]}, [3, 1], object)
sparse_sparse("union", {}, [2, 3], {}, [2, 3], i32)
sparse_sparse("intersection", R1, [4, 3], {}, [4, 0], i32)
sparse_sparse("union", R1, [4, 3], R2, [5, 3], i32)            # leading dims differ
sparse_sparse("union", R1, [4, 3], {(0, 0): [1]}, [4, 1, 1], i32)  # ranks differ
case("SparseToSparseSetOperation", ("set1_indices", np.array([[0, 1], [0, 0]], i64)),
     ("set1_values", np.array([1, 2], i32)), ("set1_shape", np.array([1, 2], i64)),
     ("set2_indices", np.zeros([0, 2], i64)), ("set2_values", np.zeros([0], i32)),
     ("set2_shape", np.array([1, 2], i64)), set_operation="union")  # out of order

# --- SetSize ---
ix, vals, sh = sparse({(0,): [1, 1, 2], (2,): [5]}, [3, 3], i32)
case("SetSize", ("set_indices", ix), ("set_values", vals), ("set_shape", sh))
ix, vals, sh = sparse({(0, 1): [b"a", b"a"], (1, 0): [b"b", b"c", b""]}, [2, 2, 3], object)
case("SetSize", ("set_indices", ix), ("set_values", vals), ("set_shape", sh))
case("SetSize", ("set_indices", np.zeros([0, 2], i64)), ("set_values", np.zeros([0], i64)),
     ("set_shape", np.array([2, 0], i64)))
case("SetSize", ("set_indices", np.array([[0, 0], [0, 1], [2, 0]], i64)),
     ("set_values", np.array([1, 1, 3], i32)), ("set_shape", np.array([2, 4], i64)))
case("SetSize", ("set_indices", np.array([[0, 0], [0, 1], [2, 0]], i64)),
     ("set_values", np.array([1, 1, 3], i32)), ("set_shape", np.array([2, 4], i64)),
     validate_indices=False)
case("SetSize", ("set_indices", np.array([[0], [1]], i64)),
     ("set_values", np.array([1, 1], i32)), ("set_shape", np.array([4], i64)))

# --- CTCGreedyDecoder ---
# Logits built so that repeats and blanks occur: class 3 (the default blank)
# and class 0 are made the largest at some steps.
LOGITS = rand([6, 3, 4])
LOGITS[1, :, 2] = LOGITS[0, :, 2] = 5.0
LOGITS[2, 0, 3] = LOGITS[3, 1, 0] = LOGITS[4, 2, 3] = 9.0
LOGITS[5, :, 2] = 6.0
LENS = np.array([6, 4, 0], i32)
for merge in (False, True):
    case("CTCGreedyDecoder", ("inputs", LOGITS), ("sequence_length", LENS), merge_repeated=merge)
    case("CTCGreedyDecoder", ("inputs", LOGITS.astype(f64)), ("sequence_length", LENS),
         merge_repeated=merge, blank_index=0)
    case("CTCGreedyDecoder", ("inputs", LOGITS), ("sequence_length", np.array([6, 6, 6], i32)),
         merge_repeated=merge, blank_index=-4)
case("CTCGreedyDecoder", ("inputs", LOGITS.astype(f64)), ("sequence_length", np.array([3, 5, 1], i32)),
     blank_index=2)
case("CTCGreedyDecoder", ("inputs", rand([5, 2, 7], f64)), ("sequence_length", np.array([5, 2], i32)),
     merge_repeated=True)
# Errors: sequence_length past max_time, batch mismatch, bad blank_index,
# empty inputs, wrong rank.
case("CTCGreedyDecoder", ("inputs", LOGITS), ("sequence_length", np.array([7, 1, 1], i32)))
case("CTCGreedyDecoder", ("inputs", LOGITS), ("sequence_length", np.array([1, 1], i32)))
case("CTCGreedyDecoder", ("inputs", LOGITS), ("sequence_length", LENS), blank_index=4)
case("CTCGreedyDecoder", ("inputs", LOGITS), ("sequence_length", LENS), blank_index=-5)
case("CTCGreedyDecoder", ("inputs", np.zeros([6, 0, 4], f32)), ("sequence_length", np.zeros([0], i32)))
case("CTCGreedyDecoder", ("inputs", LOGITS[0]), ("sequence_length", LENS))
