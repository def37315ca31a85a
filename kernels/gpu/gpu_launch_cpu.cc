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
absl::Status Unary(void*, UnaryOp, const float*, float*, int64_t) { return NoCuda(); }
absl::Status Binary(void*, BinaryOp, const float*, const float*, float*, const BroadcastShape&) {
  return NoCuda();
}
absl::Status BiasAdd(void*, const float*, const float*, float*, int64_t, int64_t) {
  return NoCuda();
}
absl::Status BiasActivation(void*, float*, const float*, int64_t, int64_t, Activation, float) {
  return NoCuda();
}
absl::Status Softmax(void*, const float*, float*, int64_t, int64_t, bool) { return NoCuda(); }
absl::Status ReduceRows(void*, const float*, float*, int64_t, int64_t, bool) { return NoCuda(); }
absl::Status Zero(void*, void*, int64_t) { return NoCuda(); }
absl::Status Cast(void*, ElementType, ElementType, const void*, void*, int64_t) {
  return NoCuda();
}

}  // namespace gpu
}  // namespace graphrun
