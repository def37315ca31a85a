"""Conformance cases (image2): ResizeBicubic and ResizeArea."""
import numpy as np
import tensorflow as tf

from conformance_cases import case, f32, f64, i32, i64

# Inputs come from a generator of their own, so the modules recorded after
# this one draw the same values as before.
_RNG = np.random.RandomState(2024)


def _img(shape, dtype=f32, lo=0.0, hi=4.0):
    return _RNG.uniform(lo, hi, size=shape).astype(dtype)


def _size(h, w):
    return np.array([h, w], i32)


IMG3 = _img([2, 5, 6, 3])          # three channels
IMG1 = _img([1, 4, 7, 1], lo=-2.0)  # one channel
IMG4 = _img([1, 6, 5, 4])          # four channels
U8 = _RNG.randint(0, 256, size=[1, 5, 4, 3]).astype(np.uint8)
I32 = _RNG.randint(-1000, 1000, size=[2, 4, 5, 2]).astype(i32)
I64 = np.arange(40, dtype=i64).reshape(1, 4, 5, 2) * 1000
I16 = _RNG.randint(-300, 300, size=[1, 3, 4, 2]).astype(np.int16)
MODES = ((False, False), (True, False), (False, True))  # align_corners, half_pixel_centers

# --- ResizeBicubic ---
for ac, hp in MODES:
    for h, w in ((9, 11), (3, 4), (5, 6), (7, 3)):
        case("ResizeBicubic", ("images", IMG3), ("size", _size(h, w)), align_corners=ac,
             half_pixel_centers=hp)
    case("ResizeBicubic", ("images", IMG1), ("size", _size(10, 3)), align_corners=ac,
         half_pixel_centers=hp)
    case("ResizeBicubic", ("images", IMG4), ("size", _size(4, 13)), align_corners=ac,
         half_pixel_centers=hp)
    case("ResizeBicubic", ("images", U8), ("size", _size(8, 7)), align_corners=ac,
         half_pixel_centers=hp)
    case("ResizeBicubic", ("images", I32), ("size", _size(3, 9)), align_corners=ac,
         half_pixel_centers=hp)
    case("ResizeBicubic", ("images", IMG3), ("size", _size(1, 1)), align_corners=ac,
         half_pixel_centers=hp)
    case("ResizeBicubic", ("images", IMG3[:, :1]), ("size", _size(3, 8)), align_corners=ac,
         half_pixel_centers=hp)  # one input row
    case("ResizeBicubic", ("images", IMG1[:, :1, :1]), ("size", _size(4, 5)), align_corners=ac,
         half_pixel_centers=hp)  # one input pixel
case("ResizeBicubic", ("images", IMG3.astype(f64)), ("size", _size(7, 4)))
case("ResizeBicubic", ("images", IMG3.astype(np.float16)), ("size", _size(4, 8)),
     half_pixel_centers=True)
case("ResizeBicubic", ("images", IMG4.astype(tf.bfloat16.as_numpy_dtype)), ("size", _size(3, 8)))
case("ResizeBicubic", ("images", I64), ("size", _size(6, 3)), half_pixel_centers=True)
case("ResizeBicubic", ("images", I16), ("size", _size(5, 5)), align_corners=True)
case("ResizeBicubic", ("images", U8.astype(np.int8)), ("size", _size(2, 7)))
case("ResizeBicubic", ("images", U8.astype(np.uint16)), ("size", _size(6, 2)),
     half_pixel_centers=True)
case("ResizeBicubic", ("images", IMG3), ("size", _size(40, 3)), half_pixel_centers=True)
case("ResizeBicubic", ("images", IMG3[:0]), ("size", _size(3, 3)))  # empty batch
case("ResizeBicubic", ("images", IMG3), ("size", _size(0, 3)))  # size 0
case("ResizeBicubic", ("images", IMG3), ("size", _size(4, -2)))  # negative size
case("ResizeBicubic", ("images", IMG3), ("size", _size(4, 4)), align_corners=True,
     half_pixel_centers=True)  # both attrs set
case("ResizeBicubic", ("images", IMG3[0]), ("size", _size(4, 4)))  # not 4-D
case("ResizeBicubic", ("images", IMG3), ("size", np.array([4, 4, 4], i32)))  # 3 sizes
case("ResizeBicubic", ("images", IMG3[:, :0]), ("size", _size(4, 4)))  # zero height
case("ResizeBicubic", ("images", IMG3[..., :0]), ("size", _size(4, 4)))  # no channels

# --- ResizeArea ---
for ac in (False, True):
    for h, w in ((9, 11), (3, 4), (5, 6), (2, 9), (10, 12)):
        case("ResizeArea", ("images", IMG3), ("size", _size(h, w)), align_corners=ac)
    case("ResizeArea", ("images", IMG1), ("size", _size(3, 5)), align_corners=ac)
    case("ResizeArea", ("images", IMG4), ("size", _size(4, 13)), align_corners=ac)
    case("ResizeArea", ("images", U8), ("size", _size(3, 3)), align_corners=ac)
    case("ResizeArea", ("images", U8), ("size", _size(7, 9)), align_corners=ac)
    case("ResizeArea", ("images", I32), ("size", _size(3, 2)), align_corners=ac)
    case("ResizeArea", ("images", IMG3), ("size", _size(1, 1)), align_corners=ac)
    case("ResizeArea", ("images", IMG3[:, :1]), ("size", _size(3, 4)), align_corners=ac)
    case("ResizeArea", ("images", IMG1[:, :1, :1]), ("size", _size(2, 3)), align_corners=ac)
case("ResizeArea", ("images", IMG3.astype(f64)), ("size", _size(4, 4)))
case("ResizeArea", ("images", IMG3.astype(np.float16)), ("size", _size(2, 5)))
case("ResizeArea", ("images", IMG4.astype(tf.bfloat16.as_numpy_dtype)), ("size", _size(4, 3)))
case("ResizeArea", ("images", I64), ("size", _size(3, 3)))
case("ResizeArea", ("images", I16), ("size", _size(2, 3)), align_corners=True)
case("ResizeArea", ("images", U8.astype(np.int8)), ("size", _size(4, 2)))
case("ResizeArea", ("images", U8.astype(np.uint16)), ("size", _size(5, 4)))
case("ResizeArea", ("images", IMG3[:0]), ("size", _size(3, 3)))  # empty batch
case("ResizeArea", ("images", IMG3), ("size", _size(0, 3)))  # size 0
case("ResizeArea", ("images", IMG3), ("size", _size(3, -1)))  # negative size
case("ResizeArea", ("images", IMG3[0]), ("size", _size(4, 4)))  # not 4-D
case("ResizeArea", ("images", IMG3), ("size", np.array([4], i32)))  # 1 size
case("ResizeArea", ("images", IMG3[..., :0]), ("size", _size(4, 4)))  # no channels
