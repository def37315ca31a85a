// InferenceContext: what an op's shape function sees and sets.
//
// A shape function reads its node's attrs, the (partial) shapes of its
// inputs and, where an input is a constant known at graph-build time, the
// input's value; it sets a PartialShape for each output. It returns
// InvalidArgument when the inputs cannot be valid (the caller adds the node
// name). Unknown stays unknown: functions must accept unknown ranks/dims.
#ifndef GRAPHRUN_GRAPH_SHAPE_INFERENCE_H_
#define GRAPHRUN_GRAPH_SHAPE_INFERENCE_H_

#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "graph/attr_slice.h"
#include "graph/tensor.h"
#include "graph/tensor_shape.h"

namespace graphrun {

class InferenceContext {
 public:
  InferenceContext(AttrSlice attrs, std::vector<PartialShape> input_shapes,
                   std::vector<const Tensor*> input_tensors,
                   std::vector<DataType> input_types,
                   std::vector<DataType> output_types);

  const AttrSlice& attrs() const { return attrs_; }
  template <typename T>
  absl::Status GetAttr(absl::string_view name, T* value) const {
    return attrs_.Get(name, value);
  }

  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  const PartialShape& input(int i) const { return inputs_[i]; }
  // The value of input i when it is a constant; nullptr otherwise.
  const Tensor* input_tensor(int i) const { return input_tensors_[i]; }
  DataType input_type(int i) const { return input_types_[i]; }

  int num_outputs() const { return static_cast<int>(outputs_.size()); }
  DataType output_type(int i) const { return output_types_[i]; }
  void set_output(int i, PartialShape shape) { outputs_[i] = std::move(shape); }
  const PartialShape& output(int i) const { return outputs_[i]; }
  const std::vector<PartialShape>& outputs() const { return outputs_; }

  // OK unless some output's known dims break TensorShape's invariant (their
  // non-zero product passes kMaxElements: "output 0 shape [2^30,2^30] is too
  // large ..."). Ops registered through OpDefBuilder run it after their shape
  // function, so a broadcast, MatMul or Gather of huge dims fails at import.
  absl::Status CheckOutputSizes() const;

  // Sets output i to the value of input j (the common "same shape" case).
  void ForwardInput(int input, int output) { outputs_[output] = inputs_[input]; }

  // Reads a constant int32/int64 vector input (e.g. Reshape's shape);
  // nullopt-like: returns false if the input is not constant.
  bool ConstantVector(int input, std::vector<int64_t>* values) const;
  // Reads a constant scalar int input.
  bool ConstantScalar(int input, int64_t* value) const;

  // InvalidArgument unless `shape` has rank `rank` (unknown rank passes and
  // becomes that rank with unknown dims).
  absl::StatusOr<PartialShape> WithRank(const PartialShape& shape, int rank,
                                        absl::string_view what) const;
  absl::StatusOr<PartialShape> WithRankAtLeast(const PartialShape& shape,
                                               int rank,
                                               absl::string_view what) const;
  // The most specific shape compatible with both; InvalidArgument if none.
  static absl::StatusOr<PartialShape> Merge(const PartialShape& a,
                                            const PartialShape& b);
  // NumPy/TensorFlow broadcasting of two shapes.
  static absl::StatusOr<PartialShape> Broadcast(const PartialShape& a,
                                                const PartialShape& b);
  // Dims a and b merged: -1 unknown; InvalidArgument if both known and differ.
  static absl::StatusOr<int64_t> MergeDim(int64_t a, int64_t b);

 private:
  AttrSlice attrs_;
  std::vector<PartialShape> inputs_;
  std::vector<const Tensor*> input_tensors_;
  std::vector<DataType> input_types_;
  std::vector<DataType> output_types_;
  std::vector<PartialShape> outputs_;
};

// Shape functions shared by many ops.
namespace shape_fns {
absl::Status UnknownShape(InferenceContext* c);     // all outputs unknown
absl::Status UnchangedShape(InferenceContext* c);   // output 0 = input 0
absl::Status ScalarShape(InferenceContext* c);      // output 0 = []
absl::Status BroadcastBinaryShape(InferenceContext* c);  // numpy broadcast
absl::Status NoOutputs(InferenceContext* c);
}  // namespace shape_fns

}  // namespace graphrun

#endif  // GRAPHRUN_GRAPH_SHAPE_INFERENCE_H_
