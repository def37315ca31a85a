// Image ops: ResizeBilinear, ResizeNearestNeighbor, ResizeBicubic,
// ResizeArea and NonMaxSuppressionV3/V4/V5. Names, inputs, outputs and
// attrs are TensorFlow's (core/ops/image_ops.cc).
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/op_registry.h"
#include "graph/ops/shape_helpers.h"
#include "graph/shape_inference.h"
#include "graph/status_macros.h"

namespace graphrun {
namespace {

using op_shapes::InputWithRank;
using op_shapes::MergeDims;
using op_shapes::ShapeError;

// Resize*: images [batch, height, width, channels], size an int32 [2]
// (new_height, new_width); the output is [batch, new_height, new_width,
// channels], its spatial dims unknown unless size is a constant.
ShapeFn ResizeShapeFor(std::string op) {
  return [op = std::move(op)](InferenceContext* c) -> absl::Status {
    GR_ASSIGN_OR_RETURN(PartialShape images, InputWithRank(*c, op, 0, 4));
    GR_ASSIGN_OR_RETURN(PartialShape size, InputWithRank(*c, op, 1, 1));
    GR_RETURN_IF_ERROR(MergeDims(*c, op, size.dim(0), 2).status());
    std::vector<int64_t> dims = images.dims();
    dims[1] = dims[2] = -1;
    if (std::optional<std::vector<int64_t>> v = op_shapes::ConstantInts(*c, 1)) {
      for (int i = 0; i < 2; ++i) {
        if ((*v)[i] < 0) {
          return ShapeError(*c, op,
                            absl::StrCat("size must be non-negative, got ",
                                         (*v)[i]));
        }
        dims[1 + i] = (*v)[i];
      }
    }
    c->set_output(0, PartialShape(std::move(dims)));
    return absl::OkStatus();
  };
}

// NonMaxSuppressionV3/V4/V5: boxes [num_boxes, 4], scores [num_boxes],
// scalar max_output_size and thresholds. selected_indices (and V5's
// selected_scores) are vectors of unknown length, of max_output_size when
// V4/V5 pad to it; valid_outputs is a scalar.
ShapeFn NonMaxSuppressionShapeFor(std::string op, int num_scalars) {
  return [op = std::move(op), num_scalars](InferenceContext* c) -> absl::Status {
    GR_ASSIGN_OR_RETURN(PartialShape boxes, InputWithRank(*c, op, 0, 2));
    GR_ASSIGN_OR_RETURN(PartialShape scores, InputWithRank(*c, op, 1, 1));
    for (int i = 2; i < 2 + num_scalars; ++i) {
      GR_RETURN_IF_ERROR(InputWithRank(*c, op, i, 0).status());
    }
    GR_RETURN_IF_ERROR(MergeDims(*c, op, boxes.dim(1), 4).status());
    GR_RETURN_IF_ERROR(MergeDims(*c, op, boxes.dim(0), scores.dim(0)).status());
    int64_t selected = -1;
    bool pad = false;
    if (c->attrs().Find("pad_to_max_output_size") != nullptr) {
      GR_RETURN_IF_ERROR(c->GetAttr("pad_to_max_output_size", &pad));
    }
    if (pad) {
      std::optional<std::vector<int64_t>> v = op_shapes::ConstantInts(*c, 2);
      if (v.has_value() && v->size() == 1) {
        if ((*v)[0] < 0) {
          return ShapeError(*c, op, "max_output_size must be non-negative");
        }
        selected = (*v)[0];
      }
    }
    const PartialShape vec(std::vector<int64_t>{selected});
    for (int i = 0; i < c->num_outputs(); ++i) {
      const bool scalar = i == c->num_outputs() - 1 && c->num_outputs() > 1;
      c->set_output(i, scalar ? PartialShape(std::vector<int64_t>{}) : vec);
    }
    return absl::OkStatus();
  };
}

constexpr char kResizeTypes[] =
    "T: {int8, uint8, int16, uint16, int32, int64, bfloat16, half, float, "
    "double}";

}  // namespace

REGISTER_OP("ResizeBilinear")
    .Input("images: T")
    .Input("size: int32")
    .Output("resized_images: float")
    .Attr(kResizeTypes)
    .Attr("align_corners: bool = false")
    .Attr("half_pixel_centers: bool = false")
    .SetShapeFn(ResizeShapeFor("ResizeBilinear"));

REGISTER_OP("ResizeNearestNeighbor")
    .Input("images: T")
    .Input("size: int32")
    .Output("resized_images: T")
    .Attr(kResizeTypes)
    .Attr("align_corners: bool = false")
    .Attr("half_pixel_centers: bool = false")
    .SetShapeFn(ResizeShapeFor("ResizeNearestNeighbor"));

REGISTER_OP("ResizeBicubic")
    .Input("images: T")
    .Input("size: int32")
    .Output("resized_images: float")
    .Attr(kResizeTypes)
    .Attr("align_corners: bool = false")
    .Attr("half_pixel_centers: bool = false")
    .SetShapeFn(ResizeShapeFor("ResizeBicubic"));

REGISTER_OP("ResizeArea")
    .Input("images: T")
    .Input("size: int32")
    .Output("resized_images: float")
    .Attr(kResizeTypes)
    .Attr("align_corners: bool = false")
    .SetShapeFn(ResizeShapeFor("ResizeArea"));

REGISTER_OP("NonMaxSuppressionV3")
    .Input("boxes: T")
    .Input("scores: T")
    .Input("max_output_size: int32")
    .Input("iou_threshold: T_threshold")
    .Input("score_threshold: T_threshold")
    .Output("selected_indices: int32")
    .Attr("T: {half, float} = DT_FLOAT")
    .Attr("T_threshold: {half, float} = DT_FLOAT")
    .SetShapeFn(NonMaxSuppressionShapeFor("NonMaxSuppressionV3", 3));

REGISTER_OP("NonMaxSuppressionV4")
    .Input("boxes: T")
    .Input("scores: T")
    .Input("max_output_size: int32")
    .Input("iou_threshold: T_threshold")
    .Input("score_threshold: T_threshold")
    .Output("selected_indices: int32")
    .Output("valid_outputs: int32")
    .Attr("T: {half, float} = DT_FLOAT")
    .Attr("T_threshold: {half, float} = DT_FLOAT")
    .Attr("pad_to_max_output_size: bool = false")
    .SetShapeFn(NonMaxSuppressionShapeFor("NonMaxSuppressionV4", 3));

REGISTER_OP("NonMaxSuppressionV5")
    .Input("boxes: T")
    .Input("scores: T")
    .Input("max_output_size: int32")
    .Input("iou_threshold: T")
    .Input("score_threshold: T")
    .Input("soft_nms_sigma: T")
    .Output("selected_indices: int32")
    .Output("selected_scores: T")
    .Output("valid_outputs: int32")
    .Attr("T: {half, float} = DT_FLOAT")
    .Attr("pad_to_max_output_size: bool = false")
    .SetShapeFn(NonMaxSuppressionShapeFor("NonMaxSuppressionV5", 4));

REGISTER_OP("NonMaxSuppressionV2")
    .Input("boxes: T")
    .Input("scores: T")
    .Input("max_output_size: int32")
    .Input("iou_threshold: T_threshold")
    .Output("selected_indices: int32")
    .Attr("T: {half, float} = DT_FLOAT")
    .Attr("T_threshold: {half, float} = DT_FLOAT")
    .SetShapeFn(NonMaxSuppressionShapeFor("NonMaxSuppressionV2", 2));

// Outputs [batch, detections, 4], [batch, detections] twice and [batch];
// detections is max_total_size (or fewer with pad_per_class).
REGISTER_OP("CombinedNonMaxSuppression")
    .Input("boxes: float")
    .Input("scores: float")
    .Input("max_output_size_per_class: int32")
    .Input("max_total_size: int32")
    .Input("iou_threshold: float")
    .Input("score_threshold: float")
    .Output("nmsed_boxes: float")
    .Output("nmsed_scores: float")
    .Output("nmsed_classes: float")
    .Output("valid_detections: int32")
    .Attr("pad_per_class: bool = false")
    .Attr("clip_boxes: bool = true")
    .SetShapeFn([](InferenceContext* c) -> absl::Status {
      const PartialShape& boxes = c->input(0);
      const int64_t batch = boxes.unknown_rank() || boxes.rank() < 1 ? -1 : boxes.dim(0);
      int64_t total = -1;
      bool pad = false;
      GR_RETURN_IF_ERROR(c->GetAttr("pad_per_class", &pad));
      if (pad || !c->ConstantScalar(3, &total)) total = -1;
      c->set_output(0, PartialShape({batch, total, 4}));
      c->set_output(1, PartialShape({batch, total}));
      c->set_output(2, PartialShape({batch, total}));
      c->set_output(3, PartialShape({batch}));
      return absl::OkStatus();
    });

// [num_boxes, crop_height, crop_width, depth] float crops of the images.
REGISTER_OP("CropAndResize")
    .Input("image: T")
    .Input("boxes: float")
    .Input("box_ind: int32")
    .Input("crop_size: int32")
    .Output("crops: float")
    .Attr("T: {uint8, uint16, int8, int16, int32, int64, half, bfloat16, float, double}")
    .Attr("method: string = 'bilinear'")
    .Attr("extrapolation_value: float = 0")
    .SetShapeFn([](InferenceContext* c) -> absl::Status {
      const PartialShape& image = c->input(0);
      const PartialShape& boxes = c->input(1);
      std::optional<std::vector<int64_t>> size = op_shapes::ConstantInts(*c, 3);
      const bool known = size.has_value() && size->size() == 2;
      c->set_output(0, PartialShape({boxes.unknown_rank() || boxes.rank() < 1 ? -1 : boxes.dim(0),
                                     known ? (*size)[0] : -1, known ? (*size)[1] : -1,
                                     image.unknown_rank() || image.rank() != 4 ? -1
                                                                             : image.dim(3)}));
      return absl::OkStatus();
    });

// [batch, out_rows, out_cols, ksize_rows * ksize_cols * depth]: each output
// pixel's patch, rows then columns then channels.
REGISTER_OP("ExtractImagePatches")
    .Input("images: T")
    .Output("patches: T")
    .Attr("ksizes: list(int) >= 4")
    .Attr("strides: list(int) >= 4")
    .Attr("rates: list(int) >= 4")
    .Attr("T: {bfloat16, half, float, double, int8, int16, int32, int64, uint8, uint16, uint32, "
          "uint64, complex64, complex128, bool}")
    .Attr("padding: {'SAME', 'VALID'}")
    .SetShapeFn([](InferenceContext* c) -> absl::Status {
      GR_ASSIGN_OR_RETURN(PartialShape in, InputWithRank(*c, "ExtractImagePatches", 0, 4));
      std::vector<int64_t> k, s, r;
      std::string padding_name;
      GR_RETURN_IF_ERROR(c->GetAttr("ksizes", &k));
      GR_RETURN_IF_ERROR(c->GetAttr("strides", &s));
      GR_RETURN_IF_ERROR(c->GetAttr("rates", &r));
      GR_RETURN_IF_ERROR(c->GetAttr("padding", &padding_name));
      if (k.size() != 4 || s.size() != 4 || r.size() != 4) {
        return ShapeError(*c, "ExtractImagePatches", "ksizes, strides and rates take 4 values");
      }
      GR_ASSIGN_OR_RETURN(op_shapes::Padding padding, op_shapes::ParsePadding(padding_name));
      std::vector<int64_t> dims = {in.dim(0), -1, -1, -1};
      for (int d = 1; d <= 2; ++d) {
        GR_ASSIGN_OR_RETURN(dims[d], op_shapes::WindowedOutputSize(in.dim(d), k[d], r[d], s[d],
                                                                   padding, 0, 0));
      }
      if (in.dim(3) >= 0) dims[3] = k[1] * k[2] * in.dim(3);
      c->set_output(0, PartialShape(std::move(dims)));
      return absl::OkStatus();
    });

// Colour adjustments of images [..., channels] (3 for saturation and hue).
REGISTER_OP("AdjustContrastv2")
    .Input("images: T")
    .Input("contrast_factor: float")
    .Output("output: T")
    .Attr("T: {half, float} = DT_FLOAT")
    .SetShapeFn(shape_fns::UnchangedShape);

REGISTER_OP("AdjustSaturation")
    .Input("images: T")
    .Input("scale: float")
    .Output("output: T")
    .Attr("T: {half, float} = DT_FLOAT")
    .SetShapeFn(shape_fns::UnchangedShape);

REGISTER_OP("AdjustHue")
    .Input("images: T")
    .Input("delta: float")
    .Output("output: T")
    .Attr("T: {half, float} = DT_FLOAT")
    .SetShapeFn(shape_fns::UnchangedShape);

}  // namespace graphrun
