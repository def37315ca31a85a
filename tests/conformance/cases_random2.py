"""Conformance cases (random2): the seeded sampling ops Multinomial,
RandomShuffle and SampleDistortedBoundingBox(V2). Every case sets both seeds,
so TensorFlow's first draw for the node is reproducible."""
import numpy as np
import tensorflow as tf

from conformance_cases import case, f32, f64, i32, i64, rand

NINF = -np.inf

# --- Multinomial ---
case("Multinomial", ("logits", rand([3, 5])), ("num_samples", np.array(10, i32)),
     seed=7, seed2=11)
case("Multinomial", ("logits", rand([2, 4], f64)), ("num_samples", np.array(7, i32)),
     seed=1, seed2=2, output_dtype=tf.int32)
case("Multinomial", ("logits", rand([5, 20], f64, -5, 5)), ("num_samples", np.array(33, i32)),
     seed=3, seed2=4, output_dtype=tf.int64)
case("Multinomial", ("logits", rand([1, 3])), ("num_samples", np.array(1, i32)),
     seed=5, seed2=9, output_dtype=tf.int32)
case("Multinomial", ("logits", rand([2, 3]).astype(np.float16)), ("num_samples", np.array(6, i32)),
     seed=12, seed2=34)
case("Multinomial", ("logits", rand([4, 6])), ("num_samples", np.array(0, i32)), seed=7, seed2=11)
case("Multinomial", ("logits", np.zeros([0, 3], f32)), ("num_samples", np.array(4, i32)),
     seed=7, seed2=11)
# Non-finite logits are never drawn; a row without a finite logit gives
# num_classes.
case("Multinomial", ("logits", np.array([[0, NINF, 1], [NINF, NINF, 2], [NINF, NINF, NINF]], f32)),
     ("num_samples", np.array(8, i32)), seed=21, seed2=22)
case("Multinomial", ("logits", np.array([[1, NINF, 0.5, NINF]], f64)),
     ("num_samples", np.array(9, i32)), seed=21, seed2=22, output_dtype=tf.int32)
case("Multinomial", ("logits", rand([4])), ("num_samples", np.array(2, i32)), seed=1, seed2=1)
case("Multinomial", ("logits", rand([2, 3])), ("num_samples", np.array([2], i32)), seed=1, seed2=1)
case("Multinomial", ("logits", rand([2, 3])), ("num_samples", np.array(-1, i32)), seed=1, seed2=1)
case("Multinomial", ("logits", np.zeros([2, 0], f32)), ("num_samples", np.array(3, i32)),
     seed=1, seed2=1)

# --- RandomShuffle (along the first dimension) ---
case("RandomShuffle", ("value", np.arange(10, dtype=f32)), seed=7, seed2=11)
case("RandomShuffle", ("value", np.arange(50, dtype=i32)), seed=3, seed2=5)
case("RandomShuffle", ("value", rand([5, 3])), seed=7, seed2=11)
case("RandomShuffle", ("value", np.arange(16, dtype=i64).reshape([4, 2, 2])), seed=2, seed2=9)
case("RandomShuffle", ("value", np.array([b"a", b"bb", b"ccc", b"d", b"", b"ff"], object)),
     seed=4, seed2=8)
case("RandomShuffle", ("value", np.array([[b"a", b"b"], [b"c", b"d"], [b"e", b"f"], [b"g", b"h"]],
                                         object)), seed=4, seed2=8)
case("RandomShuffle", ("value", np.array([True, False, False, True, True])), seed=6, seed2=1)
case("RandomShuffle", ("value", rand([3, 2], f64)), seed=1, seed2=3)
case("RandomShuffle", ("value", np.zeros([0], f32)), seed=7, seed2=11)
case("RandomShuffle", ("value", np.array([4.5], f32)), seed=7, seed2=11)
case("RandomShuffle", ("value", np.array([[1, 2, 3]], i32)), seed=7, seed2=11)
case("RandomShuffle", ("value", np.zeros([3, 0], f32)), seed=7, seed2=11)
case("RandomShuffle", ("value", np.array(3.0, f32)), seed=7, seed2=11)

# --- SampleDistortedBoundingBox(V2) ---
BOX = np.array([[[0.1, 0.2, 0.5, 0.6]]], f32)
BOXES = np.array([[[0.0, 0.0, 0.3, 0.4], [0.5, 0.5, 0.9, 1.0]]], f32)
V2 = "SampleDistortedBoundingBoxV2"
case(V2, ("image_size", np.array([480, 640, 3], i32)), ("bounding_boxes", BOX),
     ("min_object_covered", np.array(0.1, f32)), seed=7, seed2=11)
case(V2, ("image_size", np.array([480, 640, 3], i32)), ("bounding_boxes", BOXES),
     ("min_object_covered", np.array(0.5, f32)), seed=1, seed2=2,
     aspect_ratio_range=[0.5, 2.0], area_range=[0.1, 0.8], max_attempts=50)
case(V2, ("image_size", np.array([200, 150, 3], np.uint8)), ("bounding_boxes", BOX),
     ("min_object_covered", np.array(0.3, f32)), seed=3, seed2=4)
case(V2, ("image_size", np.array([37, 91, 1], i64)), ("bounding_boxes", BOXES),
     ("min_object_covered", np.array(0.0, f32)), seed=5, seed2=6, area_range=[0.3, 1.0])
case(V2, ("image_size", np.array([64, 64, 3], np.int16)), ("bounding_boxes", np.zeros([1, 0, 4], f32)),
     ("min_object_covered", np.array(0.1, f32)), seed=8, seed2=9, use_image_if_no_bounding_boxes=True)
case(V2, ("image_size", np.array([100, 120, 3], np.int8)), ("bounding_boxes", BOX),
     ("min_object_covered", np.array(0.2, f32)), seed=10, seed2=12)
# Constraints no crop meets: the whole image.
case(V2, ("image_size", np.array([50, 60, 3], i32)), ("bounding_boxes", BOX),
     ("min_object_covered", np.array(1.0, f32)), seed=7, seed2=11, area_range=[0.05, 0.1],
     max_attempts=3)
case(V2, ("image_size", np.array([64, 64, 3], i32)), ("bounding_boxes", np.zeros([1, 0, 4], f32)),
     ("min_object_covered", np.array(0.1, f32)), seed=7, seed2=11)
case(V2, ("image_size", np.array([64, 64, 3], i32)),
     ("bounding_boxes", np.array([[[0.1, 0.2, 1.5, 0.6]]], f32)),
     ("min_object_covered", np.array(0.1, f32)), seed=7, seed2=11)
case(V2, ("image_size", np.array([64, 64], i32)), ("bounding_boxes", BOX),
     ("min_object_covered", np.array(0.1, f32)), seed=7, seed2=11)
case(V2, ("image_size", np.array([64, 64, 3], i32)), ("bounding_boxes", BOX),
     ("min_object_covered", np.array(-0.5, f32)), seed=7, seed2=11)
case(V2, ("image_size", np.array([64, 64, 3], i32)), ("bounding_boxes", BOX),
     ("min_object_covered", np.array(0.1, f32)), seed=7, seed2=11, area_range=[0.5, 1.5])
case(V2, ("image_size", np.array([64, 64, 3], i32)), ("bounding_boxes", BOX[0]),
     ("min_object_covered", np.array(0.1, f32)), seed=7, seed2=11)
V1 = "SampleDistortedBoundingBox"
case(V1, ("image_size", np.array([480, 640, 3], i32)), ("bounding_boxes", BOX),
     seed=7, seed2=11)
case(V1, ("image_size", np.array([300, 200, 3], i64)), ("bounding_boxes", BOXES),
     seed=13, seed2=17, min_object_covered=0.4, aspect_ratio_range=[0.9, 1.1], max_attempts=20)
case(V1, ("image_size", np.array([64, 64, 3], i32)), ("bounding_boxes", BOX),
     seed=7, seed2=11, max_attempts=0)
