#!/usr/bin/env python3
"""Prints TensorFlow's values for image_ops_test.cc: ResizeBilinear and
ResizeNearestNeighbor under every align_corners / half_pixel_centers rule
(up- and down-sampling, 1x1) on the test's Image(), the integer-image cases,
and NonMaxSuppressionV3/V4/V5 (hard, padded and soft) on the test's Boxes()
and Scores() and on its six-box case, run through tf.raw_ops, as the test's
C++ literals (float32 results written as doubles).

    /work/tfvenv/bin/python kernels/cpu/make_image_ops_test_values.py
    /work/tfvenv/bin/python kernels/cpu/make_image_ops_test_values.py --check

--check reads the values image_ops_test.cc commits and compares them with
TensorFlow's, exactly (exit 1 on a mismatch); the valid-output counts the
test states with EXPECT_EQ are compared too.
"""
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ["TF_ENABLE_ONEDNN_OPTS"] = "0"  # TensorFlow's Eigen kernels

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from cc_expected import Cases  # noqa: E402

raw = tf.raw_ops

SIZES = [(5, 3), (2, 2), (6, 9), (1, 1)]
RULES = [(False, False), (True, False), (False, True)]  # align_corners, half_pixel_centers


def image():
    """The test's Image(): [2, 3, 4, 2], ((i * 7 + 3) % 11) / 4 - 1.25."""
    i = np.arange(48)
    return (((i * 7 + 3) % 11) / np.float32(4.0) - np.float32(1.25)).astype(np.float32).reshape(
        2, 3, 4, 2)


def boxes():
    """The test's Boxes(): 40 boxes, every fourth with its corners swapped."""
    v = []
    for i in range(40):
        y1, x1 = np.float32(i * 13 % 17) / np.float32(4), np.float32(i * 7 % 19) / np.float32(4)
        h, w = np.float32(1 + (i % 5) / 2.0), np.float32(1 + (i % 3) / 2.0)
        v += [y1 + h, x1, y1, x1 + w] if i % 4 == 0 else [y1, x1, y1 + h, x1 + w]
    return np.array(v, np.float32).reshape(40, 4)


def scores():
    """The test's Scores(): ((i * 29) % 41) / 41 in float."""
    return (np.arange(40) * 29 % 41).astype(np.float32) / np.float32(41)


def cc_bool(b):
    return "true" if b else "false"


def main():
    c = Cases(os.path.join(HERE, "image_ops_test.cc"))
    ops = {"ResizeBilinear": raw.ResizeBilinear, "ResizeNearestNeighbor": raw.ResizeNearestNeighbor}
    for name, op in ops.items():
        for size in SIZES:
            for align, half in RULES:
                c.case("%s to %dx%d align_corners %d half_pixel_centers %d" %
                       (name, size[0], size[1], align, half),
                       op(images=image(), size=np.array(size, np.int32), align_corners=align,
                          half_pixel_centers=half),
                       '{"%s", {%d, %d}, %s, %s,' % (name, size[0], size[1], cc_bool(align),
                                                     cc_bool(half)), kind="d")

    pixels = (np.arange(48) * 37 % 256).astype(np.uint8).reshape(2, 3, 4, 2)
    c.case("ResizeBilinear uint8 half_pixel_centers",
           raw.ResizeBilinear(images=pixels, size=np.array([5, 3], np.int32),
                              half_pixel_centers=True),
           "const std::vector<double> bilinear =", kind="d")
    c.case("ResizeNearestNeighbor int32 half_pixel_centers",
           raw.ResizeNearestNeighbor(images=pixels.astype(np.int32),
                                     size=np.array([5, 7], np.int32), half_pixel_centers=True),
           "const std::vector<int32_t> nearest =")

    c.case("NonMaxSuppressionV3 max 20 iou 0.5 score 0.1",
           raw.NonMaxSuppressionV3(boxes=boxes(), scores=scores(), max_output_size=20,
                                   iou_threshold=np.float32(0.5), score_threshold=np.float32(0.1)),
           "I(20), F(0.5f), F(0.1f)});", after="ElementsAreArray(")
    selected, valid = raw.NonMaxSuppressionV4(
        boxes=boxes(), scores=scores(), max_output_size=30, iou_threshold=np.float32(0.3),
        score_threshold=np.float32(0.2), pad_to_max_output_size=True)
    c.case("NonMaxSuppressionV4 padded", selected, "I(30), F(0.3f), F(0.2f)});",
           after="ElementsAreArray(", occurrence=0)
    c.expect("NonMaxSuppressionV4 padded valid", [valid], [17])
    selected, _ = raw.NonMaxSuppressionV4(
        boxes=boxes(), scores=scores(), max_output_size=30, iou_threshold=np.float32(0.3),
        score_threshold=np.float32(0.2))
    c.expect("NonMaxSuppressionV4 unpadded count", [tf.size(selected)], [17])

    selected, selected_scores, valid = raw.NonMaxSuppressionV5(
        boxes=boxes(), scores=scores(), max_output_size=25, iou_threshold=np.float32(0.6),
        score_threshold=np.float32(0.15), soft_nms_sigma=np.float32(0.3))
    c.case("NonMaxSuppressionV5 soft indices", selected, "F(0.15f), F(0.3f)});",
           after="ElementsAreArray(")
    c.case("NonMaxSuppressionV5 soft scores", selected_scores,
           "const std::vector<double> scores =", kind="d")
    c.expect("NonMaxSuppressionV5 soft valid", [valid], [25])

    six = np.array([0, 0, 1, 1, 0, 0.1, 1, 1.1, 0, -0.1, 1, 0.9, 0, 10, 1, 11, 0, 10.1, 1, 11.1,
                    0, 100, 1, 101], np.float32).reshape(6, 4)
    selected, selected_scores, valid = raw.NonMaxSuppressionV5(
        boxes=six, scores=np.array([0.9, 0.75, 0.6, 0.95, 0.5, 0.3], np.float32),
        max_output_size=8, iou_threshold=np.float32(0.5), score_threshold=np.float32(0.1),
        soft_nms_sigma=np.float32(0.5), pad_to_max_output_size=True)
    c.case("NonMaxSuppressionV5 six boxes padded indices", selected,
           "{boxes, s, I(8), F(0.5f), F(0.1f), F(0.5f)});", after="ElementsAreArray(")
    c.case("NonMaxSuppressionV5 six boxes padded scores", selected_scores,
           "const std::vector<double> want =", kind="d")
    c.expect("NonMaxSuppressionV5 six boxes valid", [valid], [6])
    c.finish()


if __name__ == "__main__":
    main()
