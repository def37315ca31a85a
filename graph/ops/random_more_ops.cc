// Stateful sampling ops seeded by seed/seed2 attrs (TensorFlow's
// core/ops/random_ops.cc and image_ops.cc): Multinomial (class indices
// drawn from unnormalized log-probabilities), RandomShuffle (a permutation
// of the first dimension) and SampleDistortedBoundingBox / V2 (a random
// crop window for an image). Names, inputs, attrs and shape functions are
// TensorFlow's. Kernels: kernels/cpu/random_more_ops.cc.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/op_registry.h"
#include "graph/ops/shape_helpers.h"
#include "graph/shape_inference.h"
#include "graph/status_macros.h"

namespace graphrun {
namespace {

using op_shapes::InputWithRank;
using op_shapes::ShapeError;

// Multinomial: logits [batch, classes] and a scalar num_samples give
// [batch, num_samples]; num_samples is known when it is a constant.
absl::Status MultinomialShape(InferenceContext* c) {
  GR_ASSIGN_OR_RETURN(PartialShape logits, InputWithRank(*c, "Multinomial", 0, 2));
  GR_RETURN_IF_ERROR(InputWithRank(*c, "Multinomial", 1, 0).status());
  int64_t samples = -1;
  if (std::optional<std::vector<int64_t>> v = op_shapes::ConstantInts(*c, 1)) {
    if (v->size() == 1) {
      samples = (*v)[0];
      if (samples < 0) {
        return ShapeError(*c, "Multinomial",
                          absl::StrCat("Dimension size, given by scalar input 1, must be "
                                       "non-negative but is ",
                                       samples));
      }
    }
  }
  c->set_output(0, PartialShape(std::vector<int64_t>{logits.dim(0), samples}));
  return absl::OkStatus();
}

// Dim `dim` of `shape`, when known, must equal `value`.
absl::Status DimIs(const InferenceContext& c, const std::string& op, const PartialShape& shape,
                   int dim, int64_t value) {
  const int64_t d = shape.dim(dim);
  if (d >= 0 && d != value) {
    return ShapeError(c, op, absl::StrCat("Dimension must be ", value, " but is ", d));
  }
  return absl::OkStatus();
}

// SampleDistortedBoundingBox(V2): image_size [3], bounding_boxes
// [batch, N, 4] (and V2's scalar min_object_covered) give begin [3],
// size [3] and bboxes [1, 1, 4].
ShapeFn BoundingBoxShapeFor(std::string op, bool v2) {
  return [op = std::move(op), v2](InferenceContext* c) -> absl::Status {
    GR_ASSIGN_OR_RETURN(PartialShape image_size, InputWithRank(*c, op, 0, 1));
    GR_ASSIGN_OR_RETURN(PartialShape boxes, InputWithRank(*c, op, 1, 3));
    if (v2) GR_RETURN_IF_ERROR(InputWithRank(*c, op, 2, 0).status());
    GR_RETURN_IF_ERROR(DimIs(*c, op, image_size, 0, 3));
    GR_RETURN_IF_ERROR(DimIs(*c, op, boxes, 2, 4));
    c->set_output(0, PartialShape(std::vector<int64_t>{3}));
    c->set_output(1, PartialShape(std::vector<int64_t>{3}));
    c->set_output(2, PartialShape(std::vector<int64_t>{1, 1, 4}));
    return absl::OkStatus();
  };
}

constexpr char kImageSizeType[] = "T: {uint8, int8, int16, int32, int64}";

}  // namespace

// TensorFlow declares T as realnumbertype; its CPU kernels cover half,
// bfloat16, float and double.
REGISTER_OP("Multinomial")
    .Input("logits: T")
    .Input("num_samples: int32")
    .Output("output: output_dtype")
    .Attr("seed: int = 0")
    .Attr("seed2: int = 0")
    .Attr(
        "T: {float, double, int32, uint8, int16, int8, int64, bfloat16, "
        "uint16, half, "
        "uint32, uint64}")
    .Attr("output_dtype: {int32, int64} = DT_INT64")
    .SetIsStateful()
    .SetShapeFn(MultinomialShape);

REGISTER_OP("RandomShuffle")
    .Input("value: T")
    .Output("output: T")
    .Attr("seed: int = 0")
    .Attr("seed2: int = 0")
    .Attr("T: type")
    .SetIsStateful()
    .SetShapeFn(shape_fns::UnchangedShape);

REGISTER_OP("SampleDistortedBoundingBox")
    .Input("image_size: T")
    .Input("bounding_boxes: float")
    .Output("begin: T")
    .Output("size: T")
    .Output("bboxes: float")
    .Attr(kImageSizeType)
    .Attr("seed: int = 0")
    .Attr("seed2: int = 0")
    .Attr("min_object_covered: float = 0.1")
    .Attr("aspect_ratio_range: list(float) = [0.75, 1.33]")
    .Attr("area_range: list(float) = [0.05, 1.0]")
    .Attr("max_attempts: int = 100")
    .Attr("use_image_if_no_bounding_boxes: bool = false")
    .SetIsStateful()
    .SetShapeFn(BoundingBoxShapeFor("SampleDistortedBoundingBox", false));

REGISTER_OP("SampleDistortedBoundingBoxV2")
    .Input("image_size: T")
    .Input("bounding_boxes: float")
    .Input("min_object_covered: float")
    .Output("begin: T")
    .Output("size: T")
    .Output("bboxes: float")
    .Attr(kImageSizeType)
    .Attr("seed: int = 0")
    .Attr("seed2: int = 0")
    .Attr("aspect_ratio_range: list(float) = [0.75, 1.33]")
    .Attr("area_range: list(float) = [0.05, 1.0]")
    .Attr("max_attempts: int = 100")
    .Attr("use_image_if_no_bounding_boxes: bool = false")
    .SetIsStateful()
    .SetShapeFn(BoundingBoxShapeFor("SampleDistortedBoundingBoxV2", true));

}  // namespace graphrun
