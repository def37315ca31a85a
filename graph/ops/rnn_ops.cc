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

// The LSTM ops' shapes. LSTMBlockCell: x [batch, input], cs_prev and
// h_prev [batch, units], w [input + units, 4 * units], the peephole weights
// wci / wcf / wco [units], b [4 * units]; seven outputs [batch, units].
// BlockLSTM and BlockLSTMV2: seq_len_max (a scalar) first, x [time, batch,
// input], the rest alike; seven outputs [time, batch, units].
absl::Status LstmShape(InferenceContext* c, const char* op, bool sequence) {
  const int first = sequence ? 1 : 0;  // x's input
  if (sequence) GR_RETURN_IF_ERROR(InputWithRank(*c, op, 0, 0).status());
  GR_ASSIGN_OR_RETURN(PartialShape x, InputWithRank(*c, op, first, sequence ? 3 : 2));
  GR_ASSIGN_OR_RETURN(PartialShape cs_prev, InputWithRank(*c, op, first + 1, 2));
  GR_ASSIGN_OR_RETURN(PartialShape h_prev, InputWithRank(*c, op, first + 2, 2));
  GR_ASSIGN_OR_RETURN(PartialShape w, InputWithRank(*c, op, first + 3, 2));
  int64_t units = -1;
  for (int i = first + 4; i < first + 7; ++i) {
    GR_ASSIGN_OR_RETURN(PartialShape peephole, InputWithRank(*c, op, i, 1));
    GR_ASSIGN_OR_RETURN(units, MergeDims(*c, op, units, peephole.dim(0)));
  }
  GR_ASSIGN_OR_RETURN(PartialShape b, InputWithRank(*c, op, first + 7, 1));
  GR_ASSIGN_OR_RETURN(units, MergeDims(*c, op, units, cs_prev.dim(1)));
  GR_ASSIGN_OR_RETURN(units, MergeDims(*c, op, units, h_prev.dim(1)));
  const int x_batch = sequence ? 1 : 0;
  int64_t batch = x.dim(x_batch);
  GR_ASSIGN_OR_RETURN(batch, MergeDims(*c, op, batch, cs_prev.dim(0)));
  GR_ASSIGN_OR_RETURN(batch, MergeDims(*c, op, batch, h_prev.dim(0)));
  // The gates' width: w's and b's columns, four times the units.
  int64_t gates = w.dim(1);
  GR_ASSIGN_OR_RETURN(gates, MergeDims(*c, op, gates, b.dim(0)));
  if (gates >= 0 && gates % 4 != 0) {
    return ShapeError(*c, op, "w has a number of columns that is not a multiple of 4");
  }
  if (gates >= 0) {
    GR_ASSIGN_OR_RETURN(units, MergeDims(*c, op, units, gates / 4));
  }
  if (units >= 0) {
    GR_ASSIGN_OR_RETURN(gates, MergeDims(*c, op, gates, 4 * units));
  }
  const int64_t input = x.dim(x_batch + 1);
  if (input >= 0 && units >= 0) {
    GR_RETURN_IF_ERROR(MergeDims(*c, op, w.dim(0), input + units).status());
  }
  const std::vector<int64_t> out =
      sequence ? std::vector<int64_t>{x.dim(0), batch, units} : std::vector<int64_t>{batch, units};
  for (int i = 0; i < 7; ++i) c->set_output(i, PartialShape(out));
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
    .SetShapeFn([](InferenceContext* c) { return LstmShape(c, "LSTMBlockCell", false); });

// TensorFlow's seq_len_max is int64 only.
REGISTER_OP("BlockLSTM")
    .Input("seq_len_max: int64")
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
    .SetShapeFn([](InferenceContext* c) { return LstmShape(c, "BlockLSTM", true); });

REGISTER_OP("BlockLSTMV2")
    .Input("seq_len_max: int64")
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
    .Attr("cell_clip: float = 0.0")
    .Attr("use_peephole: bool = false")
    .Attr("T: {half, float}")
    .SetShapeFn([](InferenceContext* c) { return LstmShape(c, "BlockLSTMV2", true); });

}  // namespace
}  // namespace graphrun
