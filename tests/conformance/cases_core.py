"""Conformance cases: element-wise math, bitwise ops, segment reductions,
array, scatter and string ops, reductions and data movement."""
import numpy as np
import tensorflow as tf

from conformance_cases import SPECIAL, case, f32, f64, i32, i64, rand

# --- Element-wise unary math ---
for op, lo, hi in [("Abs", -3, 3), ("Neg", -3, 3), ("Exp", -5, 5), ("Log", 0.01, 5),
                   ("Sqrt", 0, 5), ("Rsqrt", 0.1, 5), ("Square", -3, 3),
                   ("Sin", -4, 4), ("Cos", -4, 4), ("Tan", -1.4, 1.4),
                   ("Asin", -1, 1), ("Acos", -1, 1), ("Atan", -5, 5),
                   ("Sinh", -3, 3), ("Cosh", -3, 3), ("Tanh", -4, 4),
                   ("Asinh", -5, 5), ("Acosh", 1, 6), ("Atanh", -0.99, 0.99),
                   ("Sigmoid", -6, 6), ("Erf", -3, 3), ("Erfc", -3, 3),
                   ("Log1p", -0.9, 3), ("Expm1", -3, 3), ("Floor", -3, 3),
                   ("Ceil", -3, 3), ("Round", -3, 3), ("Rint", -3, 3),
                   ("Sign", -3, 3), ("Reciprocal", 0.2, 3), ("Softplus", -5, 5),
                   ("Softsign", -5, 5), ("Relu", -3, 3), ("Relu6", -3, 9),
                   ("Elu", -3, 3), ("Selu", -3, 3)]:
    for dt in (f32, f64):
        case(op, ("x" if op not in ("Relu", "Relu6", "Elu", "Selu", "Softplus", "Softsign")
                  else "features", rand([2, 5], dt, lo, hi)))
    arg = "x" if op not in ("Relu", "Relu6", "Elu", "Selu", "Softplus", "Softsign") else "features"
    case(op, (arg, SPECIAL.astype(f32)))
    case(op, (arg, np.zeros([0, 3], f32)))
for op in ("Asinh", "Acosh", "Atanh"):
    case(op, ("x", np.array([1.0, 2.0, 0.5], np.float16)))
for op in ("Sqrt", "Rsqrt", "Exp", "Log", "Tanh", "Sigmoid"):
    for dt in (np.float16, f64):
        case(op, ("x", np.tile(SPECIAL, 2).astype(dt)))
    case(op, ("x", np.tile(SPECIAL, 2).astype(f32)))
case("IsNan", ("x", SPECIAL.astype(f32)))
case("IsInf", ("x", SPECIAL.astype(f32)))
case("IsFinite", ("x", SPECIAL.astype(f64)))

# --- Bitwise and shifts ---
INT_TYPES = (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)
for dt in INT_TYPES:
    info = np.iinfo(dt)
    x = np.array([0, 1, 5, 77, info.max, info.min, 12, 3], dt)
    y = np.array([3, 0, 9, 15, 1, info.max, 255 % (int(info.max) + 1), 6], dt)
    for op in ("BitwiseAnd", "BitwiseOr", "BitwiseXor"):
        case(op, ("x", x), ("y", y))
    case("Invert", ("x", x))
    case("PopulationCount", ("x", x))
    bits = np.iinfo(dt).bits
    s = np.array([0, 1, 3, bits - 1, bits, bits + 5, 2, 1], dt)
    if info.min < 0:
        s[5] = -1
    case("LeftShift", ("x", x), ("y", s))
    case("RightShift", ("x", x), ("y", s))
case("BitwiseAnd", ("x", np.array([[1, 2, 3], [4, 5, 6]], i32)), ("y", np.array([3], i32)))
case("LeftShift", ("x", np.array([[1, -2, 3]], i64)), ("y", np.array([[1], [2]], i64)))
case("BitwiseOr", ("x", np.array([1, 2, 3], i32)), ("y", np.array([1, 2], i32)))

# --- Checks ---
case("CheckNumerics", ("tensor", np.array([1.0, 2.0], f32)), message="ok")
case("CheckNumerics", ("tensor", np.array([1.0, np.nan], f32)), message="bad value")
case("CheckNumerics", ("tensor", np.array([np.inf, 2.0], f64)), message="inf here")
case("CheckNumerics", ("tensor", np.array([np.inf, np.nan], f32)), message="both")
case("ComplexAbs", ("x", np.array([3 + 4j, -1 - 1j, 0, 1e20 + 1e20j], np.complex64)))
case("ComplexAbs", ("x", np.array([[3 + 4j], [5 - 12j]], np.complex128)), Tout=tf.float64)

# --- Segments ---
DATA = rand([6, 3])
IDS = np.array([0, 0, 1, 3, 3, 3], i32)
for op in ("SegmentSum", "SegmentMean", "SegmentMax", "SegmentMin", "SegmentProd"):
    case(op, ("data", DATA), ("segment_ids", IDS))
    case(op, ("data", np.arange(5, dtype=i32)), ("segment_ids", np.array([0, 1, 1, 2, 2], i64)))
    case(op, ("data", np.zeros([0, 2], f32)), ("segment_ids", np.zeros([0], i32)))
    case(op, ("data", DATA), ("segment_ids", np.array([0, 2, 1, 3, 3, 3], i32)))  # not sorted
    case(op, ("data", DATA), ("segment_ids", np.array([0, 0, 1], i32)))  # wrong length
for op in ("UnsortedSegmentSum", "UnsortedSegmentMax", "UnsortedSegmentMin", "UnsortedSegmentProd"):
    case(op, ("data", DATA), ("segment_ids", np.array([2, 0, 2, -1, 4, 0], i32)),
         ("num_segments", np.array(5, i32)))
    case(op, ("data", np.arange(12, dtype=i64).reshape(2, 2, 3)),
         ("segment_ids", np.array([[1, 0], [1, 1]], i64)), ("num_segments", np.array(3, i64)))
    case(op, ("data", DATA), ("segment_ids", np.array([0, 1, 2, 3, 4, 7], i32)),
         ("num_segments", np.array(5, i32)))
SIDX = np.array([0, 2, 5, 1], i32)
SSEG = np.array([0, 0, 2, 2], i32)
for op in ("SparseSegmentSum", "SparseSegmentMean", "SparseSegmentSqrtN"):
    case(op, ("data", DATA), ("indices", SIDX), ("segment_ids", SSEG))
    case(op, ("data", DATA), ("indices", SIDX.astype(i64)), ("segment_ids", SSEG.astype(i64)))
    case(op, ("data", DATA), ("indices", np.array([0, 9], i32)), ("segment_ids", np.array([0, 1], i32)))
    case(op + "WithNumSegments", ("data", DATA), ("indices", SIDX), ("segment_ids", SSEG),
         ("num_segments", np.array(4, i32)))

# --- Array ops (v1 forms and others) ---
A = rand([2, 3, 4])
case("Concat", ("concat_dim", np.array(1, i32)), ("values", [A, rand([2, 2, 4])]))
case("Concat", ("concat_dim", np.array(-1, i32)), ("values", [A, A[:, :, :1]]))
case("Concat", ("concat_dim", np.array(0, i32)),
     ("values", [np.array([b"a", b"bc"], object), np.array([b"d"], object)]))
case("Concat", ("concat_dim", np.array(3, i32)), ("values", [A, A]))
case("SplitV", ("value", A), ("size_splits", np.array([1, -1, 1], i32)), ("axis", np.array(1, i32)),
     num_split=3)
case("SplitV", ("value", A), ("size_splits", np.array([3, 1], i64)), ("axis", np.array(-1, i32)),
     num_split=2)
case("SplitV", ("value", A), ("size_splits", np.array([2, 2], i32)), ("axis", np.array(1, i32)),
     num_split=2)
case("SplitV", ("value", np.arange(6, dtype=i32)), ("size_splits", np.array([6], i32)),
     ("axis", np.array(0, i32)), num_split=1)
case("BatchMatMul", ("x", rand([2, 3, 4])), ("y", rand([2, 4, 5])))
case("BatchMatMul", ("x", rand([2, 4, 3])), ("y", rand([2, 5, 4])), adj_x=True, adj_y=True)
case("BatchMatMul", ("x", rand([3, 4], f64)), ("y", rand([4, 2], f64)))
case("BatchMatMul", ("x", rand([2, 3, 4])), ("y", rand([2, 5, 5])))
case("MatrixDiagPart", ("input", rand([2, 3, 4])))
case("MatrixDiagPart", ("input", np.arange(9, dtype=i32).reshape(3, 3)))
case("MatrixDiag", ("diagonal", rand([2, 3])))
case("ReverseSequence", ("input", np.arange(24, dtype=f32).reshape(2, 4, 3)),
     ("seq_lengths", np.array([3, 1], i64)), seq_dim=1, batch_dim=0)
case("ReverseSequence", ("input", np.arange(24, dtype=i32).reshape(4, 2, 3)),
     ("seq_lengths", np.array([4, 0], i32)), seq_dim=0, batch_dim=1)
case("ReverseSequence", ("input", np.arange(6, dtype=f32).reshape(2, 3)),
     ("seq_lengths", np.array([4, 1], i64)), seq_dim=1, batch_dim=0)
T = np.arange(12, dtype=f32).reshape(4, 3)
for op in ("TensorScatterUpdate", "TensorScatterAdd", "TensorScatterSub",
           "TensorScatterMax", "TensorScatterMin"):
    case(op, ("tensor", T), ("indices", np.array([[2], [0]], i32)),
         ("updates", np.array([[9, 9, 9], [-1, 5, 20]], f32)))
    case(op, ("tensor", T), ("indices", np.array([[1, 1], [3, 2], [1, 1]], i64)),
         ("updates", np.array([7, 8, 9], f32)))
    case(op, ("tensor", T), ("indices", np.array([[4]], i32)), ("updates", np.ones([1, 3], f32)))
case("DynamicPartition", ("data", np.arange(10, dtype=f32).reshape(5, 2)),
     ("partitions", np.array([1, 0, 2, 1, 0], i32)), num_partitions=3)
case("DynamicPartition", ("data", np.array([b"a", b"b", b"c"], object)),
     ("partitions", np.array([1, 1, 0], i32)), num_partitions=2)
case("DynamicPartition", ("data", np.arange(4, dtype=i32)),
     ("partitions", np.array([0, 3, 1, 1], i32)), num_partitions=3)
case("SparseToDense", ("sparse_indices", np.array([[0, 1], [2, 0]], i64)),
     ("output_shape", np.array([3, 3], i64)), ("sparse_values", np.array([5.0, 6.0], f32)),
     ("default_value", np.array(-1.0, f32)))
case("SparseToDense", ("sparse_indices", np.array([1, 3], i32)), ("output_shape", np.array([5], i32)),
     ("sparse_values", np.array(7, i32)), ("default_value", np.array(0, i32)))
case("SparseToDense", ("sparse_indices", np.array([[3, 0]], i64)),
     ("output_shape", np.array([3, 3], i64)), ("sparse_values", np.array([5.0], f32)),
     ("default_value", np.array(0.0, f32)))
case("UniqueWithCounts", ("x", np.array([4, 1, 4, 7, 1, 4], i32)))
case("UniqueWithCounts", ("x", np.array([b"b", b"a", b"b"], object)), out_idx=tf.int64)
case("Bincount", ("arr", np.array([1, 1, 3, 0, 7], i32)), ("size", np.array(5, i32)),
     ("weights", np.zeros([0], f32)))
case("Bincount", ("arr", np.array([1, 1, 3, 0], i32)), ("size", np.array(4, i32)),
     ("weights", np.array([0.5, 1.0, 2.0, 3.0], f32)))
case("Bincount", ("arr", np.array([1, -1], i32)), ("size", np.array(4, i32)),
     ("weights", np.zeros([0], f32)))

# --- Strings ---
case("StringToNumber", ("string_tensor", np.array([b"1.5", b"-2e3", b" 7", b"inf"], object)))
case("StringToNumber", ("string_tensor", np.array([b"12", b"-3"], object)), out_type=tf.int64)
case("StringToNumber", ("string_tensor", np.array([b"12", b"x3"], object)), out_type=tf.int32)
case("AsString", ("input", np.array([1.5, -2.25, 1e10], f32)))
case("AsString", ("input", np.array([3, -42], i64)), width=5, fill="0")
case("AsString", ("input", np.array([1.0 / 3], f64)), precision=3, scientific=True)
case("AsString", ("input", np.array([True, False])))


# --- Element-wise binary ops, with broadcasting ---
X23, Y13 = rand([2, 3]), rand([1, 3])
for op in ("Add", "AddV2", "Sub", "Mul", "RealDiv", "Div", "Maximum", "Minimum",
           "SquaredDifference", "Atan2", "Pow", "DivNoNan", "MulNoNan", "Xdivy", "Xlogy",
           "Xlog1py", "FloorDiv", "FloorMod", "TruncateDiv", "TruncateMod"):
    y = np.abs(Y13) + 0.5 if op in ("Pow", "Xlogy", "FloorMod", "TruncateMod") else Y13
    x = np.abs(X23) if op == "Pow" else X23
    case(op, ("x", x), ("y", y))
    case(op, ("x", x.astype(f64)), ("y", y.astype(f64)))
    if op not in ("Atan2", "Pow", "DivNoNan", "MulNoNan", "Xdivy", "Xlogy", "Xlog1py", "RealDiv"):
        case(op, ("x", np.array([[7, -7, 9], [0, 5, -3]], i32)), ("y", np.array([2, 3, -4], i32)))
    case(op, ("x", rand([2, 3])), ("y", rand([4])))  # does not broadcast
for op in ("Equal", "NotEqual", "Less", "LessEqual", "Greater", "GreaterEqual"):
    case(op, ("x", np.array([[1, 2, 3], [4, 5, 6]], i32)), ("y", np.array([3, 2, 7], i32)))
    case(op, ("x", np.array([1.0, np.nan, -0.0], f32)), ("y", np.array([1.0, np.nan, 0.0], f32)))
for op in ("LogicalAnd", "LogicalOr"):
    case(op, ("x", np.array([[True, False], [True, True]])), ("y", np.array([True, False])))
case("LogicalNot", ("x", np.array([True, False])))

# --- Reductions ---
R = rand([2, 3, 4])
for op in ("Sum", "Mean", "Max", "Min", "Prod"):
    case(op, ("input", R), ("axis", np.array([1], i32)))
    case(op, ("input", R), ("axis", np.array([0, -1], i32)), keep_dims=True)
    case(op, ("input", np.arange(6, dtype=i32).reshape(2, 3)), ("axis", np.array(0, i64)))
    case(op, ("input", R), ("axis", np.array([3], i32)))
for op in ("All", "Any"):
    case(op, ("input", np.array([[True, False], [True, True]])), ("axis", np.array([1], i32)))
for op in ("ArgMax", "ArgMin"):
    case(op, ("input", R), ("dimension", np.array(1, i32)))
    case(op, ("input", R), ("dimension", np.array(-1, i32)), output_type=tf.int32)

# --- Shapes and data movement ---
case("Reshape", ("tensor", R), ("shape", np.array([4, -1], i32)))
case("Reshape", ("tensor", R), ("shape", np.array([5, -1], i32)))
case("Transpose", ("x", R), ("perm", np.array([2, 0, 1], i32)))
case("Transpose", ("x", R), ("perm", np.array([0, 0, 1], i32)))
case("Tile", ("input", X23), ("multiples", np.array([2, 1], i32)))
case("Pad", ("input", X23), ("paddings", np.array([[1, 0], [0, 2]], i32)))
case("PadV2", ("input", X23), ("paddings", np.array([[1, 0], [0, 2]], i64)),
     ("constant_values", np.array(9.0, f32)))
case("MirrorPad", ("input", X23), ("paddings", np.array([[1, 1], [2, 2]], i32)), mode="REFLECT")
case("MirrorPad", ("input", X23), ("paddings", np.array([[1, 1], [2, 2]], i32)), mode="SYMMETRIC")
case("Slice", ("input", R), ("begin", np.array([1, 0, 1], i32)), ("size", np.array([1, -1, 2], i32)))
case("Slice", ("input", R), ("begin", np.array([1, 0, 1], i32)), ("size", np.array([2, -1, 2], i32)))
case("StridedSlice", ("input", R), ("begin", np.array([0, 2, 0], i32)),
     ("end", np.array([2, 0, 4], i32)), ("strides", np.array([1, -1, 2], i32)))
case("StridedSlice", ("input", R), ("begin", np.array([1, 0], i32)), ("end", np.array([2, 0], i32)),
     ("strides", np.array([1, 1], i32)), shrink_axis_mask=1, ellipsis_mask=2)
case("Pack", ("values", [X23, X23 * 2]), axis=1)
case("Unpack", ("value", R), num=3, axis=1)
case("Split", ("axis", np.array(2, i32)), ("value", R), num_split=2)
case("Split", ("axis", np.array(1, i32)), ("value", R), num_split=2)
case("ConcatV2", ("values", [R, R]), ("axis", np.array(-1, i32)))
case("ExpandDims", ("input", X23), ("axis", np.array(-1, i32)))
case("Squeeze", ("input", np.zeros([1, 3, 1], f32)), axis=[0])
case("Gather", ("params", X23), ("indices", np.array([1, 0, 1], i32)))
case("GatherV2", ("params", R), ("indices", np.array([[2, 0]], i64)), ("axis", np.array(1, i32)))
case("GatherV2", ("params", R), ("indices", np.array([3], i32)), ("axis", np.array(1, i32)))
case("GatherNd", ("params", R), ("indices", np.array([[1, 2], [0, 0]], i32)))
case("ScatterNd", ("indices", np.array([[1], [3], [1]], i32)), ("updates", np.array([1.0, 2.0, 3.0], f32)),
     ("shape", np.array([5], i32)))
case("ReverseV2", ("tensor", R), ("axis", np.array([0, 2], i32)))
case("Roll", ("input", R), ("shift", np.array([1, -2], i32)), ("axis", np.array([1, 2], i32)))
case("Where", ("condition", np.array([[True, False], [False, True]])))
case("Cast", ("x", np.array([1.7, -1.7, 300.0], f32)), DstT=tf.int32)
case("Cast", ("x", np.array([1, 0, 5], i64)), DstT=tf.bool)
# float <-> half over more than a few vectors of 16 (the converting loops
# and their tails): rounding ties, overflow to inf, denormals, specials.
HALF_EDGES = np.array([65504, 65519.99, 65520, -65520, 1e5, 6.1e-5, 6e-8, 2.9e-8, 3e-8, 1e-9,
                       1 + 2**-11, 1 + 3 * 2**-11, 2049, 2051, -0.0, np.inf, -np.inf, np.nan], f32)
case("Cast", ("x", np.concatenate([HALF_EDGES, rand([53], f32, -70000, 70000)])),
     DstT=tf.float16)
HALF_BITS = np.array([0x0001, 0x03ff, 0x0400, 0x7bff, 0x7c00, 0xfc00, 0x7e00, 0x8001, 0x8000],
                     np.uint16).view(np.float16)
case("Cast", ("x", np.concatenate([HALF_BITS, rand([60], np.float16, -60000, 60000)])),
     DstT=tf.float32)
case("Fill", ("dims", np.array([2, 3], i32)), ("value", np.array(1.5, f32)))
case("Range", ("start", np.array(1, i32)), ("limit", np.array(10, i32)), ("delta", np.array(3, i32)))
case("Range", ("start", np.array(1.0, f32)), ("limit", np.array(0.0, f32)), ("delta", np.array(-0.25, f32)))
case("OneHot", ("indices", np.array([0, 2, -1, 5], i32)), ("depth", np.array(3, i32)),
     ("on_value", np.array(1.0, f32)), ("off_value", np.array(0.0, f32)))
case("Cumsum", ("x", X23), ("axis", np.array(1, i32)), exclusive=True, reverse=True)
case("Cumprod", ("x", X23), ("axis", np.array(0, i32)))
case("TopKV2", ("input", rand([2, 6])), ("k", np.array(3, i32)))
case("BroadcastTo", ("input", Y13), ("shape", np.array([2, 2, 3], i32)))
case("Unique", ("x", np.array([3, 1, 3, 2], i64)))
case("MatMul", ("a", rand([3, 4])), ("b", rand([5, 4])), transpose_b=True)
case("MatMul", ("a", rand([3, 4])), ("b", rand([3, 4])))
case("BatchMatMulV2", ("x", rand([2, 1, 3, 4])), ("y", rand([3, 4, 2])))
case("Softmax", ("logits", rand([2, 5])))
case("LogSoftmax", ("logits", rand([2, 5])))
case("BiasAdd", ("value", rand([2, 3, 4])), ("bias", rand([4])))
case("AddN", ("inputs", [X23, X23, X23]))
case("ClipByValue", ("t", X23), ("clip_value_min", np.array(-0.5, f32)), ("clip_value_max", np.array(0.5, f32)))
case("LeakyRelu", ("features", X23), alpha=0.3)
case("Bucketize", ("input", X23), boundaries=[-1.0, 0.0, 1.0])
case("InvertPermutation", ("x", np.array([2, 0, 1], i32)))
case("L2Loss", ("t", X23))
case("ZerosLike", ("x", X23))
case("OnesLike", ("x", np.arange(3, dtype=i64)))
case("Shape", ("input", R))
case("Size", ("input", R), out_type=tf.int64)
case("Rank", ("input", R))
