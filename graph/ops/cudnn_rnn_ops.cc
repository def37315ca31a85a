// The cuDNN RNN ops (TensorFlow's core/ops/cudnn_rnn_ops.cc): CudnnRNN,
// CudnnRNNV2 (adds host_reserved) and CudnnRNNV3 (adds sequence_lengths,
// num_proj and time_major). Names, inputs, outputs, attrs and defaults are
// TensorFlow's.
#include <cstdint>
#include <string>
#include <vector>

#include "graph/op_registry.h"
#include "graph/ops/shape_helpers.h"
#include "graph/shape_inference.h"
#include "graph/status_macros.h"

namespace graphrun {
namespace {

constexpr char kModeAttr[] = "rnn_mode: {'rnn_relu', 'rnn_tanh', 'lstm', 'gru'} = 'lstm'";
constexpr char kInputModeAttr[] =
    "input_mode: {'linear_input', 'skip_input', 'auto_select'} = 'linear_input'";
constexpr char kDirectionAttr[] =
    "direction: {'unidirectional', 'bidirectional'} = 'unidirectional'";

// output [time, batch, dirs * units] ([batch, time, ...] when not time
// major), output_h the shape of input_h, output_c too for an LSTM (else a
// scalar); the reserved spaces of unknown size.
absl::Status CudnnRnnShape(InferenceContext* c) {
  GR_ASSIGN_OR_RETURN(PartialShape input, op_shapes::InputWithRank(*c, "CudnnRNN", 0, 3));
  GR_ASSIGN_OR_RETURN(PartialShape input_h, op_shapes::InputWithRank(*c, "CudnnRNN", 1, 3));
  std::string direction, mode;
  GR_RETURN_IF_ERROR(c->GetAttr("direction", &direction));
  GR_RETURN_IF_ERROR(c->GetAttr("rnn_mode", &mode));
  bool time_major = true;
  if (c->attrs().Find("time_major") != nullptr) {
    GR_RETURN_IF_ERROR(c->GetAttr("time_major", &time_major));
  }
  const int64_t dirs = direction == "bidirectional" ? 2 : 1;
  const int64_t units = input_h.unknown_rank() ? -1 : input_h.dim(2);
  const int64_t time = input.unknown_rank() ? -1 : input.dim(time_major ? 0 : 1);
  const int64_t batch = input.unknown_rank() ? -1 : input.dim(time_major ? 1 : 0);
  const int64_t width = units < 0 ? -1 : dirs * units;
  c->set_output(0, time_major ? PartialShape({time, batch, width})
                              : PartialShape({batch, time, width}));
  c->set_output(1, input_h);
  c->set_output(2, mode == "lstm" ? input_h : PartialShape(std::vector<int64_t>{}));
  for (int i = 3; i < c->num_outputs(); ++i) c->set_output(i, op_shapes::UnknownDims(1));
  return absl::OkStatus();
}

}  // namespace

REGISTER_OP("CudnnRNN")
    .Input("input: T")
    .Input("input_h: T")
    .Input("input_c: T")
    .Input("params: T")
    .SetIsStateful()
    .Output("output: T")
    .Output("output_h: T")
    .Output("output_c: T")
    .Output("reserve_space: T")
    .Attr("T: {half, float, double}")
    .Attr(kModeAttr)
    .Attr(kInputModeAttr)
    .Attr(kDirectionAttr)
    .Attr("dropout: float = 0.0")
    .Attr("seed: int = 0")
    .Attr("seed2: int = 0")
    .Attr("is_training: bool = true")
    .SetShapeFn(CudnnRnnShape);

REGISTER_OP("CudnnRNNV2")
    .Input("input: T")
    .Input("input_h: T")
    .Input("input_c: T")
    .Input("params: T")
    .SetIsStateful()
    .Output("output: T")
    .Output("output_h: T")
    .Output("output_c: T")
    .Output("reserve_space: T")
    .Output("host_reserved: int8")
    .Attr("T: {half, float, double}")
    .Attr(kModeAttr)
    .Attr(kInputModeAttr)
    .Attr(kDirectionAttr)
    .Attr("dropout: float = 0.0")
    .Attr("seed: int = 0")
    .Attr("seed2: int = 0")
    .Attr("is_training: bool = true")
    .SetShapeFn(CudnnRnnShape);

REGISTER_OP("CudnnRNNV3")
    .Input("input: T")
    .Input("input_h: T")
    .Input("input_c: T")
    .Input("params: T")
    .Input("sequence_lengths: int32")
    .SetIsStateful()
    .Output("output: T")
    .Output("output_h: T")
    .Output("output_c: T")
    .Output("reserve_space: T")
    .Output("host_reserved: int8")
    .Attr("T: {half, float, double}")
    .Attr(kModeAttr)
    .Attr(kInputModeAttr)
    .Attr(kDirectionAttr)
    .Attr("dropout: float = 0.0")
    .Attr("seed: int = 0")
    .Attr("seed2: int = 0")
    .Attr("num_proj: int = 0")
    .Attr("is_training: bool = true")
    .Attr("time_major: bool = true")
    .SetShapeFn(CudnnRnnShape);

}  // namespace graphrun
