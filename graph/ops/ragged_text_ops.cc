// Ragged text ops a Keras TextVectorization exports beyond its default
// mode: RaggedBincount (multi_hot, count, tf_idf), StringNGrams (ngrams),
// UnicodeDecode and UnicodeEncode (split="character"). Names, inputs,
// outputs, attrs and defaults are TensorFlow's.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/op_registry.h"
#include "graph/shape_inference.h"
#include "graph/status_macros.h"

namespace graphrun {

// Counts (or weight sums, or 1/0) of each value in [0, size) per row of a
// ragged tensor given by its row splits: [rows, size].
REGISTER_OP("RaggedBincount")
    .Input("splits: int64")
    .Input("values: Tidx")
    .Input("size: Tidx")
    .Input("weights: T")
    .Attr("Tidx: {int32, int64}")
    .Attr("T: {int32, int64, float32, float64}")
    .Attr("binary_output: bool = false")
    .Output("output: T")
    .SetShapeFn([](InferenceContext* c) -> absl::Status {
      GR_ASSIGN_OR_RETURN(PartialShape splits_shape, c->WithRank(c->input(0), 1, "splits"));
      GR_RETURN_IF_ERROR(c->WithRank(c->input(2), 0, "size").status());
      int64_t size = -1;
      if (!c->ConstantScalar(2, &size)) size = -1;
      const int64_t splits = splits_shape.dim(0);
      c->set_output(0, PartialShape({splits < 0 ? -1 : splits - 1, size}));
      return absl::OkStatus();
    });

// The n-grams of each row of a ragged string tensor, for each width,
// joined by `separator`, padded with `left_pad`/`right_pad`.
REGISTER_OP("StringNGrams")
    .Input("data: string")
    .Input("data_splits: Tsplits")
    .Output("ngrams: string")
    .Output("ngrams_splits: Tsplits")
    .Attr("separator: string")
    .Attr("ngram_widths: list(int) >= 0")
    .Attr("left_pad: string")
    .Attr("right_pad: string")
    .Attr("pad_width: int")
    .Attr("preserve_short_sequences: bool")
    .Attr("Tsplits: {int32, int64} = DT_INT64")
    .SetShapeFn([](InferenceContext* c) -> absl::Status {
      GR_RETURN_IF_ERROR(c->WithRank(c->input(0), 1, "data").status());
      GR_ASSIGN_OR_RETURN(PartialShape splits, c->WithRank(c->input(1), 1, "data_splits"));
      c->set_output(0, PartialShape({-1}));
      c->set_output(1, PartialShape({splits.dim(0)}));
      return absl::OkStatus();
    });

// The code points of each string: row splits over all of them (one row per
// string, in row-major order) and the code points.
REGISTER_OP("UnicodeDecode")
    .Input("input: string")
    .Output("row_splits: Tsplits")
    .Output("char_values: int32")
    .Attr("input_encoding: string")
    .Attr("errors: {'strict', 'replace', 'ignore'} = 'replace'")
    .Attr("replacement_char: int = 65533")
    .Attr("replace_control_characters: bool = false")
    .Attr("Tsplits: {int32, int64} = DT_INT64")
    .SetShapeFn([](InferenceContext* c) -> absl::Status {
      const PartialShape& in = c->input(0);
      int64_t n = in.rank() < 0 ? -1 : 1;
      for (int d = 0; d < in.rank() && n >= 0; ++d) n = in.dim(d) < 0 ? -1 : n * in.dim(d);
      c->set_output(0, PartialShape({n < 0 ? -1 : n + 1}));
      c->set_output(1, PartialShape({-1}));
      return absl::OkStatus();
    });

// One string per row of code points (given by row splits).
REGISTER_OP("UnicodeEncode")
    .Input("input_values: int32")
    .Input("input_splits: Tsplits")
    .Attr("errors: {'ignore', 'replace', 'strict'} = 'replace'")
    .Attr("output_encoding: {'UTF-8', 'UTF-16-BE', 'UTF-32-BE'}")
    .Attr("replacement_char: int = 65533")
    .Attr("Tsplits: {int32, int64} = DT_INT64")
    .Output("output: string")
    .SetShapeFn([](InferenceContext* c) -> absl::Status {
      GR_RETURN_IF_ERROR(c->WithRank(c->input(0), 1, "input_values").status());
      GR_ASSIGN_OR_RETURN(PartialShape splits_shape, c->WithRank(c->input(1), 1, "input_splits"));
      const int64_t splits = splits_shape.dim(0);
      c->set_output(0, PartialShape({splits < 0 ? -1 : splits - 1}));
      return absl::OkStatus();
    });

}  // namespace graphrun
