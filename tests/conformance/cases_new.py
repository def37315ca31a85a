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
