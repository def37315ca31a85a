// gpu_launch.h for builds without the CUDA toolkit: nothing can be queued.
#include "kernels/gpu/gpu_launch.h"

namespace graphrun {
namespace gpu {
namespace {

absl::Status NoCuda() {
  return absl::UnavailableError("graphrun was built without CUDA (no toolkit at build time)");
}

}  // namespace

absl::Status Gemm(void*, ElementType, bool, bool, int64_t, int64_t, int64_t, const void*,
                  const void*, void*, int64_t, int64_t, int64_t, int64_t, bool) {
  return NoCuda();
}
absl::Status Unary(void*, UnaryOp, const float*, float*, int64_t, float) { return NoCuda(); }
absl::Status Binary(void*, BinaryOp, const float*, const float*, float*, const BroadcastShape&) {
  return NoCuda();
}
absl::Status BiasAdd(void*, const float*, const float*, float*, int64_t, int64_t) {
  return NoCuda();
}
absl::Status BiasActivation(void*, float*, const float*, int64_t, int64_t, Activation, float) {
  return NoCuda();
}
absl::Status ChannelBiasActivation(void*, const float*, const float*, float*, const ChannelView&,
                                   Activation, float) {
  return NoCuda();
}
absl::Status Softmax(void*, const float*, float*, int64_t, int64_t, bool) { return NoCuda(); }
absl::Status Zero(void*, void*, int64_t) { return NoCuda(); }
absl::Status Cast(void*, CastType, CastType, const void*, void*, int64_t, bool) {
  return NoCuda();
}
absl::Status Compare(void*, CompareOp, const float*, const float*, bool*, const BroadcastShape&) {
  return NoCuda();
}
absl::Status Logical(void*, bool, const bool*, const bool*, bool*, const BroadcastShape&) {
  return NoCuda();
}
absl::Status LogicalNot(void*, const bool*, bool*, int64_t) { return NoCuda(); }
absl::Status Select(void*, const bool*, const float*, const float*, float*,
                    const BroadcastShape&) {
  return NoCuda();
}
absl::Status StridedCopy(void*, int, const void*, void*, const StridedCopyPlan&) {
  return NoCuda();
}
absl::Status Fill(void*, int, uint64_t, void*, int64_t) { return NoCuda(); }
absl::Status CopyOnDevice(void*, const void*, void*, int64_t) { return NoCuda(); }
absl::Status Gather(void*, int, const void*, IndexType, const void*, void*, int64_t, int64_t,
                    int64_t, int64_t, int64_t) {
  return NoCuda();
}
absl::Status Reduce(void*, ReduceOp, const float*, float*, int64_t, int64_t, int64_t) {
  return NoCuda();
}
absl::Status Pool(void*, bool, const float*, float*, const PoolGeometry&) { return NoCuda(); }
absl::Status BatchNormInference(void*, const float*, const float*, const float*, const float*,
                                const float*, float, float*, const ChannelView&) {
  return NoCuda();
}
absl::Status BatchNormTraining(void*, const float*, const float*, const float*, const float*,
                               const float*, float, float, float*, float*, float*, float*, float*,
                               const ChannelView&) {
  return NoCuda();
}
absl::Status Conv2D(void*, const ConvGeometry&, const float*, const float*, float*,
                    const WorkspaceFn&) {
  return NoCuda();
}
absl::Status Conv2DBackpropInput(void*, const ConvGeometry&, const float*, const float*, float*,
                                 const WorkspaceFn&) {
  return NoCuda();
}
absl::Status Conv2DBackpropFilter(void*, const ConvGeometry&, const float*, const float*, float*,
                                  const WorkspaceFn&) {
  return NoCuda();
}
absl::Status MaxPoolGrad(void*, const float*, const float*, float*, const PoolGeometry&) {
  return NoCuda();
}
absl::Status AvgPoolGrad(void*, const float*, float*, const PoolGeometry&) { return NoCuda(); }
absl::Status ActivationGrad(void*, GradOp, const float*, const float*, float*, int64_t, float) {
  return NoCuda();
}
absl::Status SoftmaxCrossEntropy(void*, const float*, const float*, float*, float*,
                                 const XentShape&) {
  return NoCuda();
}
absl::Status SparseSoftmaxCrossEntropy(void*, const float*, IndexType, const void*, float*,
                                       float*, int64_t, int64_t) {
  return NoCuda();
}

absl::Status ApplyGradientDescent(void*, float*, const float*, const float*, int64_t) {
  return NoCuda();
}
absl::Status ApplyMomentum(void*, float*, float*, const float*, const float*, const float*, bool,
                           int64_t) {
  return NoCuda();
}
absl::Status ApplyAdam(void*, float*, float*, float*, const AdamHyper&, const float*, bool,
                       int64_t) {
  return NoCuda();
}

}  // namespace gpu
}  // namespace graphrun
