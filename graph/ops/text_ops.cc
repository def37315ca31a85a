// The string and ragged ops a Keras TextVectorization layer's graph runs
// (TensorFlow's core/ops/string_ops.cc, ragged_conversion_ops.cc,
// math_ops.cc): StringLower, StringUpper, StaticRegexReplace, StringSplitV2,
// RaggedTensorToTensor and DenseBincount. Names, inputs, outputs, attrs and
// defaults are TensorFlow's.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/op_registry.h"
#include "graph/shape_inference.h"
#include "graph/status_macros.h"

namespace graphrun {

REGISTER_OP("StringLower")
    .Input("input: string")
    .Output("output: string")
    .Attr("encoding: string = ''")
    .SetShapeFn(shape_fns::UnchangedShape);

REGISTER_OP("StringUpper")
    .Input("input: string")
    .Output("output: string")
    .Attr("encoding: string = ''")
    .SetShapeFn(shape_fns::UnchangedShape);

REGISTER_OP("StaticRegexReplace")
    .Input("input: string")
    .Output("output: string")
    .Attr("pattern: string")
    .Attr("rewrite: string")
    .Attr("replace_global: bool = true")
    .SetShapeFn(shape_fns::UnchangedShape);

// A sparse [batch, longest] result: indices [n, 2], values [n], shape [2].
REGISTER_OP("StringSplitV2")
    .Input("input: string")
    .Input("sep: string")
    .Output("indices: int64")
    .Output("values: string")
    .Output("shape: int64")
    .Attr("maxsplit: int = -1")
    .SetShapeFn([](InferenceContext* c) -> absl::Status {
      GR_RETURN_IF_ERROR(c->WithRank(c->input(0), 1, "input").status());
      GR_RETURN_IF_ERROR(c->WithRank(c->input(1), 0, "sep").status());
      c->set_output(0, PartialShape({-1, 2}));
      c->set_output(1, PartialShape({-1}));
      c->set_output(2, PartialShape({2}));
      return absl::OkStatus();
    });

// The dense tensor of a ragged one: rank = the partitions' ragged dims + the
// values' rank; dims from `shape` where it gives them.
REGISTER_OP("RaggedTensorToTensor")
    .Input("shape: Tshape")
    .Input("values: T")
    .Input("default_value: T")
    .Input("row_partition_tensors: num_row_partition_tensors * Tindex")
    .Output("result: T")
    .Attr("T: type")
    .Attr("Tindex: {int64, int32}")
    .Attr("Tshape: {int64, int32}")
    .Attr("num_row_partition_tensors: int")
    .Attr("row_partition_types: list(string)")
    .SetShapeFn([](InferenceContext* c) -> absl::Status {
      std::vector<std::string> types;
      GR_RETURN_IF_ERROR(c->GetAttr("row_partition_types", &types));
      int ragged = 0;
      for (const std::string& t : types) ragged += t == "FIRST_DIM_SIZE" ? 0 : 1;
      const PartialShape& values = c->input(1);
      if (values.rank() < 0) {
        c->set_output(0, PartialShape());
        return absl::OkStatus();
      }
      std::vector<int64_t> dims(static_cast<size_t>(ragged + 1), -1);
      for (int d = 1; d < values.rank(); ++d) dims.push_back(values.dim(d));
      std::vector<int64_t> given;
      if (c->ConstantVector(0, &given) && given.size() == dims.size()) {
        for (size_t d = 0; d < dims.size(); ++d) {
          if (given[d] >= 0) dims[d] = given[d];
        }
      }
      c->set_output(0, PartialShape(dims));
      return absl::OkStatus();
    });

// Counts (or sums of weights) of each value in [0, size), per row for a
// matrix input.
REGISTER_OP("DenseBincount")
    .Input("input: Tidx")
    .Input("size: Tidx")
    .Input("weights: T")
    .Attr("Tidx: {int32, int64}")
    .Attr("T: {int32, int64, float32, float64}")
    .Attr("binary_output: bool = false")
    .Output("output: T")
    .SetShapeFn([](InferenceContext* c) -> absl::Status {
      GR_RETURN_IF_ERROR(c->WithRank(c->input(1), 0, "size").status());
      int64_t size = -1;
      if (!c->ConstantScalar(1, &size)) size = -1;
      const PartialShape& in = c->input(0);
      if (in.rank() == 1) {
        c->set_output(0, PartialShape({size}));
      } else if (in.rank() == 2) {
        c->set_output(0, PartialShape({in.dim(0), size}));
      } else if (in.rank() < 0) {
        c->set_output(0, PartialShape());
      } else {
        return absl::InvalidArgumentError(
            absl::StrCat("DenseBincount: input must be 1-D or 2-D, has rank ", in.rank()));
      }
      return absl::OkStatus();
    });

}  // namespace graphrun
