// ArgMax and ArgMin on CPU, as TensorFlow's ArgOp: `dimension` is a scalar
// (negative counts from the end), the reduced dimension must not be empty,
// ties give the first index. The input is viewed as [outer, n, inner] and
// reduced with Eigen's argmax/argmin over the middle dimension.
#include <cstdint>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "kernels/eigen.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace {

// Element counts above this run on the thread pool.
constexpr int64_t kThreadedMinElements = kParallelElements;

template <bool kMax, typename T, typename Device>
void ArgReduce(const Device& d, const T* in, int64_t outer, int64_t n,
               int64_t inner, int64_t* out) {
  ConstTensorMap<T, 3> x(in, outer, n, inner);
  TensorMap<int64_t, 2> y(out, outer, inner);
  if constexpr (kMax) {
    y.device(d) = x.argmax(1).template cast<int64_t>();
  } else {
    y.device(d) = x.argmin(1).template cast<int64_t>();
  }
}

// Reads a scalar int16/int32/int64 tensor.
int64_t ScalarAsInt64(const Tensor& t) {
  switch (t.dtype()) {
    case DT_INT16: return t.flat<int16_t>()[0];
    case DT_INT32: return t.flat<int32_t>()[0];
    default: return t.flat<int64_t>()[0];
  }
}

template <typename T, bool kMax>
class ArgOp : public OpKernel {
 public:
  explicit ArgOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("output_type", &output_type_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& dimension = ctx->input(1);
    OP_REQUIRES(ctx, dimension.dims() == 0,
                absl::InvalidArgumentError(absl::StrCat(
                    "dim must be a scalar, but received tensor of shape: ",
                    dimension.shape().DebugString())));
    OP_REQUIRES(ctx,
                dimension.dtype() == DT_INT16 || dimension.dtype() == DT_INT32 ||
                    dimension.dtype() == DT_INT64,
                absl::InvalidArgumentError(absl::StrCat(
                    "dimension must be int16, int32 or int64, got ",
                    DataTypeString(dimension.dtype()))));
    const int64_t dim = ScalarAsInt64(dimension);
    const int rank = input.dims();
    const int64_t axis = dim < 0 ? dim + rank : dim;
    OP_REQUIRES(ctx, axis >= 0 && axis < rank,
                absl::InvalidArgumentError(
                    absl::StrCat("Expected dimension in the range [", -rank,
                                 ", ", rank, "), but got ", dim)));
    OP_REQUIRES(ctx, input.dim_size(axis) > 0,
                absl::InvalidArgumentError(absl::StrCat(
                    "Reduction axis ", dim, " is empty in shape ",
                    input.shape().DebugString())));
    TensorShape out_shape;
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < rank; ++i) {
      if (i == axis) continue;
      out_shape.AddDim(input.dim_size(i));
      (i < axis ? outer : inner) *= input.dim_size(i);
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, out_shape, &out));
    const int64_t out_size = out_shape.num_elements();
    if (out_size == 0) return;

    Tensor indices;
    int64_t* idx = nullptr;
    if (output_type_ == DT_INT64) {
      idx = out->flat<int64_t>().data();
    } else {
      OP_REQUIRES_OK(ctx, ctx->allocate_temp(DT_INT64, TensorShape({out_size}),
                                             &indices));
      idx = indices.flat<int64_t>().data();
    }
    const Eigen::ThreadPoolDevice* pool = ctx->device()->eigen_cpu_device();
    const int64_t n = input.dim_size(axis);
    const T* in = input.flat<T>().data();
    if (pool != nullptr && input.NumElements() > kThreadedMinElements) {
      ArgReduce<kMax>(*pool, in, outer, n, inner, idx);
    } else {
      ArgReduce<kMax>(Eigen::DefaultDevice(), in, outer, n, inner, idx);
    }
    switch (output_type_) {
      case DT_INT64: break;
      case DT_INT32: Narrow<int32_t>(idx, out); break;
      case DT_INT16: Narrow<int16_t>(idx, out); break;
      case DT_UINT16: Narrow<uint16_t>(idx, out); break;
      default:
        ctx->SetStatus(absl::InvalidArgumentError(
            absl::StrCat("Unsupported output_type ",
                         DataTypeString(output_type_))));
    }
  }

 private:
  template <typename Tout>
  static void Narrow(const int64_t* idx, Tensor* out) {
    TensorMap<Tout, 1>(out->flat<Tout>().data(), out->NumElements()) =
        ConstTensorMap<int64_t, 1>(idx, out->NumElements()).template cast<Tout>();
  }

  DataType output_type_ = DT_INT64;
};

#define GR_REGISTER_ARG(T)                                                  \
  REGISTER_KERNEL(                                                          \
      KernelDefBuilder("ArgMax").Device(kDeviceCpu).TypeConstraint<T>("T"), \
      ArgOp<T, true>);                                                      \
  REGISTER_KERNEL(                                                          \
      KernelDefBuilder("ArgMin").Device(kDeviceCpu).TypeConstraint<T>("T"), \
      ArgOp<T, false>)
GR_REGISTER_ARG(float);
GR_REGISTER_ARG(double);
GR_REGISTER_ARG(half);
GR_REGISTER_ARG(bfloat16);
GR_REGISTER_ARG(int8_t);
GR_REGISTER_ARG(uint8_t);
GR_REGISTER_ARG(int16_t);
GR_REGISTER_ARG(uint16_t);
GR_REGISTER_ARG(int32_t);
GR_REGISTER_ARG(uint32_t);
GR_REGISTER_ARG(int64_t);
GR_REGISTER_ARG(uint64_t);
GR_REGISTER_ARG(bool);
#undef GR_REGISTER_ARG

}  // namespace
}  // namespace graphrun
