"""Conformance cases for the ops added after the suite began: FFT and
complex, image, sparse and string ops."""
import numpy as np
import tensorflow as tf

from conformance_cases import SPECIAL, case, f32, f64, i32, i64, rand

# --- Fourier transforms and complex numbers ---
SIG = rand([2, 8])
case("RFFT", ("input", SIG), ("fft_length", np.array([8], i32)))
case("RFFT", ("input", SIG), ("fft_length", np.array([6], i32)))   # cropped
case("RFFT", ("input", SIG), ("fft_length", np.array([12], i32)))  # padded
case("RFFT", ("input", rand([3, 5], f64)), ("fft_length", np.array([5], i32)), Tcomplex=tf.complex128)
case("RFFT", ("input", SIG), ("fft_length", np.array([8, 8], i32)))  # bad length
SPEC = (rand([2, 5]) + 1j * rand([2, 5])).astype(np.complex64)
case("IRFFT", ("input", SPEC), ("fft_length", np.array([8], i32)))
case("IRFFT", ("input", SPEC), ("fft_length", np.array([5], i32)))
case("IRFFT", ("input", SPEC), ("fft_length", np.array([12], i32)))
CPX = (rand([2, 3, 4]) + 1j * rand([2, 3, 4])).astype(np.complex64)
for op in ("FFT", "IFFT", "FFT2D", "IFFT2D", "FFT3D", "IFFT3D"):
    case(op, ("input", CPX))
case("FFT", ("input", CPX.astype(np.complex128)))
case("FFT", ("input", np.zeros([2, 0], np.complex64)))
case("RFFT2D", ("input", rand([2, 4, 6])), ("fft_length", np.array([4, 6], i32)))
case("RFFT2D", ("input", rand([4, 6])), ("fft_length", np.array([3, 8], i32)))
case("IRFFT2D", ("input", CPX), ("fft_length", np.array([3, 6], i32)))
case("RFFT3D", ("input", rand([2, 3, 4])), ("fft_length", np.array([2, 3, 4], i32)))
case("IRFFT3D", ("input", CPX), ("fft_length", np.array([2, 3, 6], i32)))
case("Complex", ("real", rand([2, 3])), ("imag", rand([3])))
case("Complex", ("real", rand([2], f64)), ("imag", rand([2], f64)), Tout=tf.complex128)
for op in ("Real", "Imag", "Angle"):
    case(op, ("input", CPX[0]))
    case(op, ("input", CPX[0].astype(np.complex128)), Tout=tf.float64)
case("Conj", ("input", CPX[0]))

# --- Stitching ---
case("ParallelDynamicStitch", ("indices", [np.array([0, 2], i32), np.array([1, 3], i32)]),
     ("data", [np.array([[1, 2], [5, 6]], f32), np.array([[3, 4], [7, 8]], f32)]))
case("ParallelDynamicStitch", ("indices", [np.array([1], i32), np.array([0], i32)]),
     ("data", [np.array([b"b"], object), np.array([b"a"], object)]))

# --- Detection heads ---
IMG = rand([2, 5, 6, 3], f32, 0, 1)
BOXES = np.array([[0.1, 0.2, 0.8, 0.9], [0.5, 0.5, 0.2, 0.1], [-0.2, 0.0, 0.6, 1.3]], f32)
for method in ("bilinear", "nearest"):
    case("CropAndResize", ("image", IMG), ("boxes", BOXES), ("box_ind", np.array([0, 1, 1], i32)),
         ("crop_size", np.array([4, 3], i32)), method=method, extrapolation_value=-1.0)
case("CropAndResize", ("image", (IMG * 255).astype(np.uint8)), ("boxes", BOXES[:1]),
     ("box_ind", np.array([1], i32)), ("crop_size", np.array([1, 1], i32)))
case("CropAndResize", ("image", IMG), ("boxes", BOXES[:1]), ("box_ind", np.array([2], i32)),
     ("crop_size", np.array([2, 2], i32)))
NMS_BOXES = np.array([[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, -0.1, 1, 0.9], [0, 10, 1, 11],
                      [0, 10.1, 1, 11.1], [0, 100, 1, 101]], f32)
NMS_SCORES = np.array([0.9, 0.75, 0.6, 0.95, 0.5, 0.3], f32)
case("NonMaxSuppressionV2", ("boxes", NMS_BOXES), ("scores", NMS_SCORES),
     ("max_output_size", np.array(3, i32)), ("iou_threshold", np.array(0.5, f32)))
CB = (rand([2, 6, 1, 4], f32, 0, 1)).astype(f32)
CB[..., 2:] = CB[..., :2] + 0.3
CS = rand([2, 6, 3], f32, 0, 1)
case("CombinedNonMaxSuppression", ("boxes", CB), ("scores", CS),
     ("max_output_size_per_class", np.array(2, i32)), ("max_total_size", np.array(5, i32)),
     ("iou_threshold", np.array(0.5, f32)), ("score_threshold", np.array(0.2, f32)))
case("CombinedNonMaxSuppression", ("boxes", CB), ("scores", CS),
     ("max_output_size_per_class", np.array(3, i32)), ("max_total_size", np.array(20, i32)),
     ("iou_threshold", np.array(0.3, f32)), ("score_threshold", np.array(0.1, f32)),
     pad_per_class=True, clip_boxes=False)
CBQ = np.concatenate([CB, CB[..., ::-1] * 1.1], axis=2)[:, :, :2]
CBQ = np.concatenate([CBQ, CB], axis=2)
case("CombinedNonMaxSuppression", ("boxes", CBQ), ("scores", CS),
     ("max_output_size_per_class", np.array(4, i32)), ("max_total_size", np.array(6, i32)),
     ("iou_threshold", np.array(0.5, f32)), ("score_threshold", np.array(0.0, f32)))

# --- Case mapping ---
WORDS = np.array(["HeLLo".encode(), "CAFÉ ÖL straße".encode(), "ΣΊΣΥΦΟΣ".encode(), b""], object)
for op in ("StringUpper", "StringLower"):
    case(op, ("input", WORDS))
    case(op, ("input", WORDS), encoding="utf-8")
    case(op, ("input", WORDS), encoding="latin1")

# --- Fake quantization ---
FQ = np.concatenate([rand([40], f32, -8, 8), np.array([0.0, -6.0, 6.0, 0.05, -0.05], f32)])
case("FakeQuantWithMinMaxArgs", ("inputs", FQ))
case("FakeQuantWithMinMaxArgs", ("inputs", FQ), min=-1.3, max=2.7, num_bits=4, narrow_range=True)
case("FakeQuantWithMinMaxArgs", ("inputs", FQ), min=0.5, max=3.0)
case("FakeQuantWithMinMaxVars", ("inputs", FQ), ("min", np.array(-2.5, f32)), ("max", np.array(1.0, f32)))
case("FakeQuantWithMinMaxVars", ("inputs", FQ), ("min", np.array(-0.3, f32)), ("max", np.array(5.1, f32)),
     num_bits=6, narrow_range=True)
case("FakeQuantWithMinMaxVarsPerChannel", ("inputs", FQ[:44].reshape(11, 4)),
     ("min", np.array([-1.0, -2.0, 0.0, -6.0], f32)), ("max", np.array([1.0, 0.5, 4.0, 6.0], f32)))
case("FakeQuantWithMinMaxVarsPerChannel", ("inputs", FQ[:44].reshape(11, 4)),
     ("min", np.array([-1.0, -2.0], f32)), ("max", np.array([1.0, 0.5], f32)))

# --- Linear algebra ---
SQ = rand([2, 3, 3]) + 3 * np.eye(3, dtype=f32)
case("MatrixInverse", ("input", SQ))
case("MatrixInverse", ("input", SQ.astype(f64)), adjoint=True)
case("MatrixInverse", ("input", np.ones([2, 2], f32)))
case("MatrixInverse", ("input", rand([2, 3])))
case("MatrixDeterminant", ("input", SQ))
case("MatrixDeterminant", ("input", rand([4, 4], f64)))
case("MatrixDeterminant", ("input", np.array([[0.0, 1.0], [1.0, 0.0]], f32)))
case("LogMatrixDeterminant", ("input", rand([3, 4, 4], f64)))

# --- Image patches ---
PIMG = rand([2, 5, 6, 2])
case("ExtractImagePatches", ("images", PIMG), ksizes=[1, 2, 3, 1], strides=[1, 1, 2, 1],
     rates=[1, 1, 1, 1], padding="VALID")
case("ExtractImagePatches", ("images", PIMG), ksizes=[1, 3, 2, 1], strides=[1, 2, 2, 1],
     rates=[1, 2, 1, 1], padding="SAME")
case("ExtractImagePatches", ("images", np.arange(2 * 4 * 4, dtype=i32).reshape(2, 4, 4, 1)),
     ksizes=[1, 2, 2, 1], strides=[1, 2, 2, 1], rates=[1, 1, 1, 1], padding="VALID")

# --- Diagonals, v2 ---
DG = rand([2, 3, 4])
case("MatrixDiagPartV2", ("input", DG), ("k", np.array([-1, 1], i32)), ("padding_value", np.array(9.0, f32)))
case("MatrixDiagPartV2", ("input", DG), ("k", np.array(1, i32)), ("padding_value", np.array(0.0, f32)))
case("MatrixDiagV2", ("diagonal", rand([2, 3])), ("k", np.array([0, 1], i32)), ("num_rows", np.array(-1, i32)),
     ("num_cols", np.array(-1, i32)), ("padding_value", np.array(0.0, f32)))
case("MatrixDiagV2", ("diagonal", rand([3])), ("k", np.array(-1, i32)), ("num_rows", np.array(4, i32)),
     ("num_cols", np.array(5, i32)), ("padding_value", np.array(7.0, f32)))
case("BatchMatMulV3", ("x", rand([2, 1, 3, 4])), ("y", rand([3, 4, 2])), Tout=tf.float32)
case("BatchMatMulV3", ("x", rand([2, 4, 3], f64)), ("y", rand([2, 4, 5], f64)), Tout=tf.float64, adj_x=True)

# --- Sparse tensors ---
SPI = np.array([[0, 1], [0, 3], [2, 0], [3, 2]], i64)
case("SparseReshape", ("input_indices", SPI), ("input_shape", np.array([4, 5], i64)),
     ("new_shape", np.array([2, -1], i64)))
case("SparseReshape", ("input_indices", SPI), ("input_shape", np.array([4, 5], i64)),
     ("new_shape", np.array([5, 2, 2], i64)))
case("SparseReshape", ("input_indices", SPI), ("input_shape", np.array([4, 5], i64)),
     ("new_shape", np.array([3, -1], i64)))
case("SparseFillEmptyRows", ("indices", SPI), ("values", np.array([1.0, 2.0, 3.0, 4.0], f32)),
     ("dense_shape", np.array([6, 5], i64)), ("default_value", np.array(-1.0, f32)))
case("SparseFillEmptyRows", ("indices", SPI[:0]), ("values", np.zeros([0], i64)),
     ("dense_shape", np.array([3, 2], i64)), ("default_value", np.array(7, i64)))
case("SparseFillEmptyRows", ("indices", SPI), ("values", np.array([b"a", b"b", b"c", b"d"], object)),
     ("dense_shape", np.array([4, 5], i64)), ("default_value", np.array(b"", object)))
case("SparseFillEmptyRows", ("indices", SPI), ("values", np.array([1, 2, 3, 4], i32)),
     ("dense_shape", np.array([3, 5], i64)), ("default_value", np.array(0, i32)))

# --- Colour ---
RGB = rand([2, 3, 4, 3], f32, 0, 1)
RGB[0, 0, 0] = [0.5, 0.5, 0.5]
case("AdjustContrastv2", ("images", RGB), ("contrast_factor", np.array(1.7, f32)))
case("AdjustContrastv2", ("images", RGB[0]), ("contrast_factor", np.array(-0.5, f32)))
for scale in (0.3, 2.5):
    case("AdjustSaturation", ("images", RGB), ("scale", np.array(scale, f32)))
for delta in (0.2, -0.7):
    case("AdjustHue", ("images", RGB), ("delta", np.array(delta, f32)))
case("AdjustHue", ("images", RGB[..., :2]), ("delta", np.array(0.1, f32)))

# --- Setting diagonals ---
MAT = rand([2, 3, 4])
case("MatrixSetDiag", ("input", MAT), ("diagonal", rand([2, 3])))
case("MatrixSetDiag", ("input", rand([4, 2]).astype(i32)), ("diagonal", np.array([7, 8], i32)))
case("MatrixSetDiag", ("input", MAT), ("diagonal", rand([2, 4])))  # wrong length
case("MatrixSetDiagV2", ("input", MAT), ("diagonal", rand([2, 2, 3])), ("k", np.array([-1, 0], i32)))
for align in ("RIGHT_LEFT", "LEFT_RIGHT", "LEFT_LEFT", "RIGHT_RIGHT"):
    case("MatrixSetDiagV3", ("input", MAT), ("diagonal", rand([2, 3, 3])),
         ("k", np.array([-1, 1], i32)), align=align)
case("MatrixSetDiagV3", ("input", MAT), ("diagonal", rand([2, 2])), ("k", np.array(2, i32)))
case("MatrixSetDiagV3", ("input", MAT), ("diagonal", rand([2, 3])), ("k", np.array(5, i32)))
case("MatrixSetDiagV3", ("input", np.zeros([0, 3, 3], f32)), ("diagonal", np.zeros([0, 3], f32)),
     ("k", np.array(0, i32)))

# --- Pooling with the window as inputs, and with the argmax ---
POOL_IN = rand([2, 5, 6, 3])
for pad in ("VALID", "SAME"):
    case("MaxPoolV2", ("input", POOL_IN), ("ksize", np.array([1, 2, 3, 1], i32)),
         ("strides", np.array([1, 2, 2, 1], i32)), padding=pad)
case("MaxPoolV2", ("input", (POOL_IN * 10).astype(i32)), ("ksize", np.array([1, 3, 3, 1], i32)),
     ("strides", np.array([1, 1, 1, 1], i32)), padding="SAME")
case("MaxPoolV2", ("input", POOL_IN), ("ksize", np.array([2, 2, 2, 1], i32)),
     ("strides", np.array([1, 1, 1, 1], i32)), padding="VALID")  # batch window
case("MaxPoolV2", ("input", POOL_IN), ("ksize", np.array([1, 2, 2], i32)),
     ("strides", np.array([1, 1, 1, 1], i32)), padding="VALID")
for pad in ("VALID", "SAME"):
    for include_batch in (False, True):
        case("MaxPoolWithArgmax", ("input", POOL_IN), ksize=[1, 3, 2, 1], strides=[1, 2, 2, 1],
             padding=pad, include_batch_in_index=include_batch)
TIES = np.ones([1, 4, 4, 2], f32)
case("MaxPoolWithArgmax", ("input", TIES), ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID")
case("MaxPoolWithArgmax", ("input", (POOL_IN * 10).astype(np.int64)), ksize=[1, 2, 2, 1],
     strides=[1, 1, 1, 1], padding="VALID")
case("MaxPoolWithArgmax", ("input", POOL_IN.astype(f64)), ksize=[1, 2, 2, 1],
     strides=[1, 1, 1, 1], padding="SAME")
case("MaxPoolWithArgmax", ("input", rand([5, 6, 3])), ksize=[1, 2, 2, 1], strides=[1, 1, 1, 1],
     padding="VALID")

# --- The gradient of Conv3D for its input ---
F3 = rand([2, 2, 3, 3, 4])
for pad, strides, grad_shape, in_shape in (("VALID", [1, 1, 1, 1, 1], [2, 3, 3, 2, 4], [2, 4, 4, 4, 3]),
                                          ("SAME", [1, 2, 1, 2, 1], [2, 2, 4, 2, 4], [2, 4, 4, 4, 3])):
    case("Conv3DBackpropInputV2", ("input_sizes", np.array(in_shape, i32)), ("filter", F3),
         ("out_backprop", rand(grad_shape)), strides=strides, padding=pad)
case("Conv3DBackpropInputV2", ("input_sizes", np.array([1, 5, 4, 4, 3], i64)), ("filter", F3),
     ("out_backprop", rand([1, 4, 3, 2, 4])), strides=[1, 1, 1, 1, 1], padding="VALID")
case("Conv3DBackpropInputV2", ("input_sizes", np.array([2, 4, 4, 4, 3], i32)), ("filter", F3.astype(f64)),
     ("out_backprop", rand([2, 3, 3, 2, 4], f64)), strides=[1, 1, 1, 1, 1], padding="VALID")
case("Conv3DBackpropInputV2", ("input_sizes", np.array([2, 4, 4, 4, 3], i32)), ("filter", F3),
     ("out_backprop", rand([2, 3, 3, 3, 4])), strides=[1, 1, 1, 1, 1], padding="VALID")  # mismatch
