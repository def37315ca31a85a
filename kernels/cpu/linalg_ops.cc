// MatrixInverse, MatrixDeterminant and LogMatrixDeterminant on CPU with
// Eigen's LU decomposition with partial pivoting, as TensorFlow's
// matrix_inverse_op.cc and determinant_op.cc: a singular matrix is refused
// by MatrixInverse ("Input is not invertible."); the determinant of one is
// 0 (sign 0, log |det| -inf).
#include <cmath>
#include <cstdint>
#include <limits>

#include "absl/strings/str_cat.h"
#include "graph/tensor.h"
#include "Eigen/Dense"
#include "kernels/eigen.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace {

template <typename T>
using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Checks input 0 is [..., n, n]; sets *n and *batch.
absl::Status SquareBatch(const Tensor& in, int64_t* n, int64_t* batch) {
  if (in.dims() < 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Input tensor 0 must have rank >= 2, got ", in.shape().DebugString()));
  }
  *n = in.dim_size(in.dims() - 1);
  if (in.dim_size(in.dims() - 2) != *n) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Input matrices must be squares, got ", in.dim_size(in.dims() - 2), " != ", *n));
  }
  *batch = *n == 0 ? 0 : in.NumElements() / (*n * *n);
  return absl::OkStatus();
}

template <typename T>
class MatrixInverseOp : public OpKernel {
 public:
  explicit MatrixInverseOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("adjoint", &adjoint_));
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    int64_t n = 0, batch = 0;
    OP_REQUIRES_OK(ctx, SquareBatch(in, &n, &batch));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, in.shape(), &out));
    for (int64_t b = 0; b < batch; ++b) {
      Eigen::Map<const Matrix<T>> m(in.flat<T>().data() + b * n * n, n, n);
      Eigen::Map<Matrix<T>> o(out->flat<T>().data() + b * n * n, n, n);
      Eigen::PartialPivLU<Matrix<T>> lu(n);
      if (adjoint_) {
        lu.compute(m.adjoint());
      } else {
        lu.compute(m);
      }
      // As TensorFlow: invertible when every pivot is non-zero and finite
      // after the decomposition (the LU's diagonal).
      const auto diag = lu.matrixLU().diagonal();
      bool ok = true;
      for (int64_t i = 0; i < n; ++i) {
        const double a = std::abs(diag(i));
        ok = ok && a > 0 && std::isfinite(a);
      }
      OP_REQUIRES(ctx, ok, absl::InvalidArgumentError("Input is not invertible."));
      o = lu.inverse();
    }
  }

 private:
  bool adjoint_ = false;
};

// MatrixDeterminant (output 0 = det) and LogMatrixDeterminant (sign and
// log |det|).
template <typename T, bool kLog>
class DeterminantOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    using R = typename Eigen::NumTraits<T>::Real;
    const Tensor& in = ctx->input(0);
    int64_t n = 0, batch = 0;
    OP_REQUIRES_OK(ctx, SquareBatch(in, &n, &batch));
    std::vector<int64_t> dims(in.shape().dim_sizes().begin(), in.shape().dim_sizes().end() - 2);
    absl::StatusOr<TensorShape> shape = TensorShape::FromDims(dims);
    OP_REQUIRES_OK(ctx, shape.status());
    Tensor* out = nullptr;
    Tensor* log_out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *shape, &out));
    if (kLog) OP_REQUIRES_OK(ctx, ctx->allocate_output(1, *shape, &log_out));
    const int64_t count = shape->num_elements();
    for (int64_t b = 0; b < count; ++b) {
      T sign(1);
      R log_abs(0);
      if (n > 0) {
        Eigen::Map<const Matrix<T>> m(in.flat<T>().data() + b * n * n, n, n);
        Eigen::PartialPivLU<Matrix<T>> lu(m);
        const auto diag = lu.matrixLU().diagonal();
        for (int64_t i = 0; i < n; ++i) {
          const R a = std::abs(diag(i));
          if (a == R(0)) {
            sign = T(0);
            log_abs = -std::numeric_limits<R>::infinity();
            break;
          }
          sign *= diag(i) / a;
          log_abs += std::log(a);
        }
        if (sign != T(0)) sign *= T(lu.permutationP().determinant());
      }
      if (kLog) {
        out->flat<T>()[b] = sign;
        log_out->flat<T>()[b] = T(log_abs);
      } else {
        out->flat<T>()[b] = sign == T(0) ? T(0) : sign * T(std::exp(log_abs));
      }
    }
  }
};

#define GR_REGISTER_LINALG(T)                                                                  \
  REGISTER_KERNEL(KernelDefBuilder("MatrixInverse").Device(kDeviceCpu).TypeConstraint<T>("T"), \
                  MatrixInverseOp<T>);                                                         \
  REGISTER_KERNEL(                                                                             \
      KernelDefBuilder("MatrixDeterminant").Device(kDeviceCpu).TypeConstraint<T>("T"),         \
      DeterminantOp<T, false>);                                                                \
  REGISTER_KERNEL(                                                                             \
      KernelDefBuilder("LogMatrixDeterminant").Device(kDeviceCpu).TypeConstraint<T>("T"),      \
      DeterminantOp<T, true>)
GR_REGISTER_LINALG(float);
GR_REGISTER_LINALG(double);
GR_REGISTER_LINALG(complex64);
GR_REGISTER_LINALG(complex128);
#undef GR_REGISTER_LINALG

}  // namespace
}  // namespace graphrun
