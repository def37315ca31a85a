// BatchMatMulV2 on CPU: broadcasts the batch dimensions (numpy rules, as
// TensorFlow's MatMulBCast) and multiplies each pair of matrices with Gemm.
// Many small matrices are spread over the thread pool one matrix per task;
// big ones use the pool inside Gemm.
#include <algorithm>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "kernels/cpu/gemm.h"
#include "kernels/eigen.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace {

// Output batch shape and, for each output matrix, the x and y matrix it
// reads. Fails if the batch dimensions do not broadcast.
struct BatchBroadcast {
  TensorShape batch_shape;
  std::vector<int64_t> x_index;
  std::vector<int64_t> y_index;
};

absl::Status ComputeBatchBroadcast(const TensorShape& x, const TensorShape& y,
                                   BatchBroadcast* out) {
  const int xr = x.dims() - 2, yr = y.dims() - 2;
  const int rank = std::max(xr, yr);
  // Batch dims right-aligned and padded with 1s.
  std::vector<int64_t> xd(rank, 1), yd(rank, 1);
  for (int i = 0; i < xr; ++i) xd[rank - xr + i] = x.dim_size(i);
  for (int i = 0; i < yr; ++i) yd[rank - yr + i] = y.dim_size(i);
  std::vector<int64_t> od(rank);
  for (int i = 0; i < rank; ++i) {
    if (xd[i] != yd[i] && xd[i] != 1 && yd[i] != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "In[0] and In[1] must have compatible batch dimensions: ",
          x.DebugString(), " vs. ", y.DebugString()));
    }
    od[i] = xd[i] == 1 ? yd[i] : xd[i];
  }
  out->batch_shape = TensorShape();
  for (int64_t d : od) {
    // [2^30,1] with [1,2^30] batch dims broadcast past kMaxElements.
    absl::Status s = out->batch_shape.AddDimWithStatus(d);
    if (!s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "broadcasting batch dimensions of ", x.DebugString(), " and ",
          y.DebugString(), ": ", s.message()));
    }
  }
  // Strides in matrices; 0 along a broadcast dimension.
  std::vector<int64_t> xs(rank), ys(rank);
  int64_t xstride = 1, ystride = 1;
  for (int i = rank - 1; i >= 0; --i) {
    xs[i] = xd[i] == 1 ? 0 : xstride;
    ys[i] = yd[i] == 1 ? 0 : ystride;
    xstride *= xd[i];
    ystride *= yd[i];
  }
  const int64_t batch = out->batch_shape.num_elements();
  out->x_index.assign(batch, 0);
  out->y_index.assign(batch, 0);
  std::vector<int64_t> pos(rank, 0);
  for (int64_t b = 0; b < batch; ++b) {
    int64_t xi = 0, yi = 0;
    for (int i = 0; i < rank; ++i) {
      xi += pos[i] * xs[i];
      yi += pos[i] * ys[i];
    }
    out->x_index[b] = xi;
    out->y_index[b] = yi;
    for (int i = rank - 1; i >= 0; --i) {
      if (++pos[i] < od[i]) break;
      pos[i] = 0;
    }
  }
  return absl::OkStatus();
}

template <typename T>
constexpr bool kIsComplex = std::is_same_v<T, complex64> ||
                            std::is_same_v<T, complex128>;

template <typename T>
class BatchMatMulV2Op : public OpKernel {
 public:
  explicit BatchMatMulV2Op(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("adj_x", &adj_x_));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("adj_y", &adj_y_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& y = ctx->input(1);
    OP_REQUIRES(ctx, x.dims() >= 2,
                absl::InvalidArgumentError(
                    absl::StrCat("In[0] ndims must be >= 2: ", x.dims())));
    OP_REQUIRES(ctx, y.dims() >= 2,
                absl::InvalidArgumentError(
                    absl::StrCat("In[1] ndims must be >= 2: ", y.dims())));
    BatchBroadcast bcast;
    OP_REQUIRES_OK(ctx, ComputeBatchBroadcast(x.shape(), y.shape(), &bcast));
    int64_t d0 = x.dim_size(x.dims() - 2), d1 = x.dim_size(x.dims() - 1);
    int64_t d2 = y.dim_size(y.dims() - 2), d3 = y.dim_size(y.dims() - 1);
    const int64_t x_matrix = d0 * d1, y_matrix = d2 * d3;
    if (adj_x_) std::swap(d0, d1);
    if (adj_y_) std::swap(d2, d3);
    OP_REQUIRES(ctx, d1 == d2,
                absl::InvalidArgumentError(absl::StrCat(
                    "Matrix size-incompatible: In[0]: ", x.shape().DebugString(),
                    ", In[1]: ", y.shape().DebugString())));
    TensorShape out_shape = bcast.batch_shape;
    OP_REQUIRES_OK(ctx, out_shape.AddDimWithStatus(d0));
    OP_REQUIRES_OK(ctx, out_shape.AddDimWithStatus(d3));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, out_shape, &out));
    if (out->NumElements() == 0) return;

    const Eigen::ThreadPoolDevice* device = ctx->device()->eigen_cpu_device();
    const T* xp = x.flat<T>().data();
    const T* yp = y.flat<T>().data();
    // adj of a complex matrix is its conjugate transpose: conjugate a copy.
    Tensor x_conj, y_conj;
    if constexpr (kIsComplex<T>) {
      if (adj_x_ && x.NumElements() > 0) {
        OP_REQUIRES_OK(ctx, Conjugate(ctx, x, &x_conj));
        xp = x_conj.flat<T>().data();
      }
      if (adj_y_ && y.NumElements() > 0) {
        OP_REQUIRES_OK(ctx, Conjugate(ctx, y, &y_conj));
        yp = y_conj.flat<T>().data();
      }
    }

    const int64_t m = d0, k = d1, n = d3;
    const int64_t batch = bcast.batch_shape.num_elements();
    T* op = out->flat<T>().data();
    auto multiply = [&](int64_t b, const Eigen::ThreadPoolDevice* d) {
      Gemm<T>(d, adj_x_, adj_y_, m, n, k, xp + bcast.x_index[b] * x_matrix,
              yp + bcast.y_index[b] * y_matrix, op + b * m * n);
    };
    const double work = static_cast<double>(m) * n * k;
    if (device != nullptr && device->numThreads() > 1 && batch > 1 &&
        work <= kGemmThreadedMinWork && work * batch > kGemmThreadedMinWork) {
      // Many small products: one single-threaded Gemm per task.
      const Eigen::TensorOpCost cost(
          static_cast<double>(m * k + k * n) * sizeof(T),
          static_cast<double>(m * n) * sizeof(T), 2 * work);
      device->parallelFor(batch, cost, [&](Eigen::Index first,
                                           Eigen::Index last) {
        for (Eigen::Index b = first; b < last; ++b) multiply(b, nullptr);
      });
    } else {
      for (int64_t b = 0; b < batch; ++b) multiply(b, device);
    }
  }

 private:
  static absl::Status Conjugate(OpKernelContext* ctx, const Tensor& in,
                                Tensor* out) {
    absl::Status s = ctx->allocate_temp(in.dtype(), in.shape(), out);
    if (!s.ok()) return s;
    const int64_t size = in.NumElements();
    Eigen::TensorMap<Eigen::Tensor<const T, 1, Eigen::RowMajor>> src(
        in.flat<T>().data(), size);
    Eigen::TensorMap<Eigen::Tensor<T, 1, Eigen::RowMajor>> dst(
        out->flat<T>().data(), size);
    dst = src.conjugate();
    return absl::OkStatus();
  }

  bool adj_x_ = false;
  bool adj_y_ = false;
};

#define GR_REGISTER_BATCH_MATMUL(T)                    \
  REGISTER_KERNEL(KernelDefBuilder("BatchMatMulV2")    \
                      .Device(kDeviceCpu)              \
                      .TypeConstraint<T>("T"),         \
                  BatchMatMulV2Op<T>)
GR_REGISTER_BATCH_MATMUL(float);
GR_REGISTER_BATCH_MATMUL(double);
GR_REGISTER_BATCH_MATMUL(half);
GR_REGISTER_BATCH_MATMUL(bfloat16);
GR_REGISTER_BATCH_MATMUL(int16_t);
GR_REGISTER_BATCH_MATMUL(int32_t);
GR_REGISTER_BATCH_MATMUL(int64_t);
GR_REGISTER_BATCH_MATMUL(complex64);
GR_REGISTER_BATCH_MATMUL(complex128);
#undef GR_REGISTER_BATCH_MATMUL

}  // namespace
}  // namespace graphrun
