// Recurrent-network cells. Names, inputs, outputs and attrs are
// TensorFlow's (core/ops/rnn_ops.cc and lstm_ops.cc).
#include <vector>

#include "graph/op_registry.h"
#include "graph/ops/shape_helpers.h"
#include "graph/shape_inference.h"
#include "graph/status_macros.h"

namespace graphrun {
namespace {

using op_shapes::InputWithRank;
using op_shapes::MergeDims;
using op_shapes::ShapeError;

// LSTMBlockCell: x [batch, input], cs_prev and h_prev [batch, units], w
// [input + units, 4 * units], the peephole weights wci / wcf / wco [units],
// b [4 * units]; seven outputs [batch, units].
absl::Status LstmBlockCellShape(InferenceContext* c) {
  constexpr char kOp[] = "LSTMBlockCell";
  GR_ASSIGN_OR_RETURN(PartialShape x, InputWithRank(*c, kOp, 0, 2));
  GR_ASSIGN_OR_RETURN(PartialShape cs_prev, InputWithRank(*c, kOp, 1, 2));
  GR_ASSIGN_OR_RETURN(PartialShape h_prev, InputWithRank(*c, kOp, 2, 2));
  GR_ASSIGN_OR_RETURN(PartialShape w, InputWithRank(*c, kOp, 3, 2));
  int64_t units = -1;
  for (int i = 4; i < 7; ++i) {
    GR_ASSIGN_OR_RETURN(PartialShape peephole, InputWithRank(*c, kOp, i, 1));
    GR_ASSIGN_OR_RETURN(units, MergeDims(*c, kOp, units, peephole.dim(0)));
  }
  GR_ASSIGN_OR_RETURN(PartialShape b, InputWithRank(*c, kOp, 7, 1));
  GR_ASSIGN_OR_RETURN(units, MergeDims(*c, kOp, units, cs_prev.dim(1)));
  GR_ASSIGN_OR_RETURN(units, MergeDims(*c, kOp, units, h_prev.dim(1)));
  int64_t batch = x.dim(0);
  GR_ASSIGN_OR_RETURN(batch, MergeDims(*c, kOp, batch, cs_prev.dim(0)));
  GR_ASSIGN_OR_RETURN(batch, MergeDims(*c, kOp, batch, h_prev.dim(0)));
  // The gates' width: w's and b's columns, four times the units.
  int64_t gates = w.dim(1);
  GR_ASSIGN_OR_RETURN(gates, MergeDims(*c, kOp, gates, b.dim(0)));
  if (gates >= 0 && gates % 4 != 0) {
    return ShapeError(*c, kOp, "w has a number of columns that is not a multiple of 4");
  }
  if (gates >= 0) {
    GR_ASSIGN_OR_RETURN(units, MergeDims(*c, kOp, units, gates / 4));
  }
  if (units >= 0) {
    GR_ASSIGN_OR_RETURN(gates, MergeDims(*c, kOp, gates, 4 * units));
  }
  if (x.dim(1) >= 0 && units >= 0) {
    GR_RETURN_IF_ERROR(MergeDims(*c, kOp, w.dim(0), x.dim(1) + units).status());
  }
  for (int i = 0; i < 7; ++i) {
    c->set_output(i, PartialShape(std::vector<int64_t>{batch, units}));
  }
  return absl::OkStatus();
}

REGISTER_OP("LSTMBlockCell")
    .Input("x: T")
    .Input("cs_prev: T")
    .Input("h_prev: T")
    .Input("w: T")
    .Input("wci: T")
    .Input("wcf: T")
    .Input("wco: T")
    .Input("b: T")
    .Output("i: T")
    .Output("cs: T")
    .Output("f: T")
    .Output("o: T")
    .Output("ci: T")
    .Output("co: T")
    .Output("h: T")
    .Attr("forget_bias: float = 1.0")
    .Attr("cell_clip: float = 3.0")
    .Attr("use_peephole: bool = false")
    .Attr("T: {half, float}")
    .SetShapeFn(LstmBlockCellShape);

}  // namespace
}  // namespace graphrun
