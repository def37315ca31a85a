// Recurrent-network cells. Names, inputs, outputs and attrs are
// TensorFlow's (core/ops/rnn_ops.cc and lstm_ops.cc).
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

// LSTMBlockCell (sequence false) and BlockLSTM / BlockLSTMV2 (true): the
// same inputs and outputs, the sequence ops with seq_len_max (int64 only,
// as TensorFlow's) first; `forget_bias` false leaves that attr out (V2).
void RegisterLstm(const char* op, bool sequence, bool forget_bias, const char* cell_clip) {
  OpDefBuilder b(op);
  if (sequence) b.Input("seq_len_max: int64");
  for (const char* in : {"x", "cs_prev", "h_prev", "w", "wci", "wcf", "wco", "b"}) {
    b.Input(absl::StrCat(in, ": T"));
  }
  for (const char* out : {"i", "cs", "f", "o", "ci", "co", "h"}) {
    b.Output(absl::StrCat(out, ": T"));
  }
  if (forget_bias) b.Attr("forget_bias: float = 1.0");
  b.Attr(absl::StrCat("cell_clip: float = ", cell_clip));
  b.Attr("use_peephole: bool = false");
  b.Attr("T: {half, float}");
  b.SetShapeFn([op, sequence](InferenceContext* c) { return LstmShape(c, op, sequence); });
  internal::OpRegistrar registrar(b);
}

const bool kRegistered = [] {
  RegisterLstm("LSTMBlockCell", /*sequence=*/false, /*forget_bias=*/true, "3.0");
  RegisterLstm("BlockLSTM", /*sequence=*/true, /*forget_bias=*/true, "3.0");
  RegisterLstm("BlockLSTMV2", /*sequence=*/true, /*forget_bias=*/false, "0.0");
  return true;
}();

}  // namespace
}  // namespace graphrun
