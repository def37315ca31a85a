// Small CPU kernels that make or check indices and shapes: Unique and
// UniqueWithCounts (first occurrence order; -0 equals 0, every NaN is
// distinct), InvertPermutation,
// BroadcastArgs, Bucketize, LinSpace and EnsureShape (the input, after a
// run-time check against the `shape` attr). Semantics and messages follow
// TensorFlow's unique_op.cc, transpose_op.cc (InvertPermutation),
// bcast_ops.cc, bucketize_op.cc, sequence_ops.cc and shape_ops.cc.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/tensor.h"
#include "kernels/cpu/array_movement.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace array_kernels {
namespace {

// Numbers each distinct key in order of first appearance: idx[i] is the
// number of keys[i]; first[u] is where number u first appears.
template <typename K>
void NumberKeys(const std::vector<K>& keys, std::vector<int64_t>* idx,
                std::vector<int64_t>* first) {
  absl::flat_hash_map<K, int64_t> numbers;
  numbers.reserve(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    auto [it, inserted] =
        numbers.try_emplace(keys[i], static_cast<int64_t>(first->size()));
    if (inserted) first->push_back(static_cast<int64_t>(i));
    (*idx)[i] = it->second;
  }
}

// InvalidArgument unless input `x` is a vector.
absl::Status CheckVectorX(const Tensor& x) {
  if (x.dims() == 1) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "x must be a vector, but has shape ", x.shape().DebugString()));
}

class UniqueOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    OP_REQUIRES_OK(ctx, CheckVectorX(x));
    const int64_t n = x.NumElements();
    OP_REQUIRES(
        ctx,
        output_type(1) == DT_INT64 || n <= std::numeric_limits<int32_t>::max(),
        absl::InvalidArgumentError(absl::StrCat(
            "x has ", n, " elements: too many for int32 indices")));
    std::vector<int64_t> idx(static_cast<size_t>(n)), first;
    // Keys: floating values as double (exact, NaN != NaN),
    // integers and bools as their value in uint64_t, strings as themselves.
    VisitDataType(x.dtype(), [&](auto zero) {
      using T = decltype(zero);
      if constexpr (std::is_same_v<T, std::string>) {
        NumberKeys(
            std::vector<std::string>(x.flat<T>().begin(), x.flat<T>().end()),
            &idx, &first);
      } else if constexpr (std::is_same_v<T, float> ||
                           std::is_same_v<T, double> ||
                           std::is_same_v<T, half> ||
                           std::is_same_v<T, bfloat16>) {
        // TensorFlow tells -0 from 0 for the 16-bit floats (their hash is
        // of the bits) but not for float and double: a -0 half or
        // bfloat16 gets a key no value of theirs can have.
        constexpr bool kSixteenBit = std::is_same_v<T, half> || std::is_same_v<T, bfloat16>;
        constexpr double kNegativeZero16 = 1e300;
        std::vector<double> keys;
        keys.reserve(static_cast<size_t>(n));
        for (T v : x.flat<T>()) {
          const double d = static_cast<double>(v);
          if (d != 0) {
            keys.push_back(d);
          } else {
            keys.push_back(kSixteenBit && std::signbit(d) ? kNegativeZero16 : 0.0);
          }
        }
        NumberKeys(keys, &idx, &first);
      } else if constexpr (std::is_integral_v<T>) {
        std::vector<uint64_t> keys;
        keys.reserve(static_cast<size_t>(n));
        for (T v : x.flat<T>()) keys.push_back(static_cast<uint64_t>(v));
        NumberKeys(keys, &idx, &first);
      }
    });
    Tensor* y = nullptr;
    OP_REQUIRES_OK(
        ctx, ctx->allocate_output(
                 0, TensorShape({static_cast<int64_t>(first.size())}), &y));
    VisitCopyType(x.dtype(), [&](auto zero) {
      using P = decltype(zero);
      const P* in = DataAs<P>(x);
      P* out = MutableDataAs<P>(y);
      for (size_t u = 0; u < first.size(); ++u) out[u] = in[first[u]];
    });
    Tensor* idx_out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(1, x.shape(), &idx_out));
    if (idx_out->dtype() == DT_INT32) {
      std::copy(idx.begin(), idx.end(), idx_out->flat<int32_t>().begin());
    } else {
      std::copy(idx.begin(), idx.end(), idx_out->flat<int64_t>().begin());
    }
    if (ctx->num_outputs() < 3) return;
    // UniqueWithCounts: how often each unique value occurs.
    std::vector<int64_t> counts(first.size(), 0);
    for (int64_t u : idx) ++counts[static_cast<size_t>(u)];
    Tensor* count_out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(
                            2, TensorShape({static_cast<int64_t>(counts.size())}), &count_out));
    if (count_out->dtype() == DT_INT32) {
      std::copy(counts.begin(), counts.end(), count_out->flat<int32_t>().begin());
    } else {
      std::copy(counts.begin(), counts.end(), count_out->flat<int64_t>().begin());
    }
  }
};

template <typename T>
class InvertPermutationOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    OP_REQUIRES_OK(ctx, CheckVectorX(x));
    const int64_t n = x.NumElements();
    OP_REQUIRES(ctx, n <= std::numeric_limits<int32_t>::max(),
                absl::InvalidArgumentError(absl::StrCat(
                    "x has ", n, " elements: more than int32 can index")));
    Tensor* y = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, x.shape(), &y));
    const T* in = x.flat<T>().data();
    T* out = y->flat<T>().data();
    std::fill(out, out + n, T(-1));
    for (int64_t i = 0; i < n; ++i) {
      const T d = in[i];
      OP_REQUIRES(ctx, d >= 0 && d < n,
                  absl::InvalidArgumentError(
                      absl::StrCat(d, " is not between 0 and ", n)));
      OP_REQUIRES(ctx, out[d] == -1,
                  absl::InvalidArgumentError(
                      absl::StrCat(d, " is duplicated in the input.")));
      out[d] = static_cast<T>(i);
    }
  }
};

template <typename T>
class BroadcastArgsOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    std::vector<int64_t> shapes[2];
    for (int i = 0; i < 2; ++i) {
      const Tensor& s = ctx->input(i);
      OP_REQUIRES(ctx, s.dims() == 1,
                  absl::InvalidArgumentError(
                      absl::StrCat("s", i, " must be a vector, but has shape ",
                                   s.shape().DebugString())));
      shapes[i] = IntValues(s);
    }
    const std::vector<int64_t>& a = shapes[0];
    const std::vector<int64_t>& b = shapes[1];
    const size_t rank = std::max(a.size(), b.size());
    Tensor* out = nullptr;
    OP_REQUIRES_OK(
        ctx, ctx->allocate_output(0, TensorShape({static_cast<int64_t>(rank)}),
                                  &out));
    T* r = out->flat<T>().data();
    for (size_t i = 0; i < rank; ++i) {
      const int64_t da = i + a.size() >= rank ? a[i + a.size() - rank] : 1;
      const int64_t db = i + b.size() >= rank ? b[i + b.size() - rank] : 1;
      OP_REQUIRES(ctx, da == db || da == 1 || db == 1,
                  absl::InvalidArgumentError(absl::StrCat(
                      "Incompatible shapes: [", absl::StrJoin(a, ","),
                      "] vs. [", absl::StrJoin(b, ","), "]")));
      r[i] = static_cast<T>(da == 1 ? db : da);
    }
  }
};

template <typename T>
class BucketizeOp : public OpKernel {
 public:
  explicit BucketizeOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    ctx->SetStatus(ctx->GetAttr("boundaries", &boundaries_));
    if (!std::is_sorted(boundaries_.begin(), boundaries_.end())) {
      ctx->SetStatus(absl::InvalidArgumentError(
          absl::StrCat("Expected sorted boundaries, got [",
                       absl::StrJoin(boundaries_, ", "), "]")));
    }
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    Tensor* output = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, input.shape(), &output));
    const T* in = input.flat<T>().data();
    int32_t* out = output->flat<int32_t>().data();
    ParallelForRange(ctx, input.NumElements(), 16, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        // The number of boundaries <= the value, comparing as C++ does a T
        // with a float.
        out[i] = static_cast<int32_t>(
            std::upper_bound(boundaries_.begin(), boundaries_.end(), in[i]) -
            boundaries_.begin());
      }
    });
  }

 private:
  std::vector<float> boundaries_;
};

template <typename T>
class LinSpaceOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    static constexpr const char* kNames[] = {"start", "stop", "num"};
    for (int i = 0; i < 3; ++i) {
      const Tensor& t = ctx->input(i);
      OP_REQUIRES(ctx, t.dims() == 0,
                  absl::InvalidArgumentError(absl::StrCat(
                      kNames[i], " must be a scalar, but has shape ",
                      t.shape().DebugString())));
    }
    const T start = ctx->input(0).flat<T>()[0];
    const T stop = ctx->input(1).flat<T>()[0];
    const int64_t num = IntScalar(ctx->input(2));
    OP_REQUIRES(
        ctx, num > 0,
        absl::InvalidArgumentError(absl::StrCat("Requires num > 0: ", num)));
    OP_REQUIRES(ctx, num <= kMaxElements,
                absl::InvalidArgumentError(absl::StrCat(
                    "num ", num, " is too large (more than 2^48)")));
    Tensor* output = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({num}), &output));
    T* out = output->flat<T>().data();
    if (num == 1) {
      out[0] = start;
      return;
    }
    // start + i * step in T; the last value is `stop` exactly.
    const T step = (stop - start) / static_cast<T>(num - 1);
    for (int64_t i = 0; i + 1 < num; ++i) {
      if constexpr (std::is_floating_point_v<T>) {
        // The product is rounded before the sum, as TensorFlow computes
        // it; -march=native would otherwise fuse both into one FMA and
        // round once.
        volatile T offset = step * static_cast<T>(i);
        out[i] = start + offset;
      } else {
        out[i] = start + step * static_cast<T>(i);
      }
    }
    out[num - 1] = stop;
  }
};

class EnsureShapeOp : public OpKernel {
 public:
  explicit EnsureShapeOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    set_expensive(false);
    ctx->SetStatus(ctx->GetAttr("shape", &expected_));
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    OP_REQUIRES(
        ctx, expected_.IsCompatibleWith(PartialShape(input.shape())),
        absl::InvalidArgumentError(absl::StrCat(
            "Shape of tensor ", def().input_size() > 0 ? def().input(0) : "",
            " ", input.shape().DebugString(),
            " is not compatible with expected shape ", expected_.DebugString(),
            ".")));
    ctx->set_output(0, input);
  }

 private:
  PartialShape expected_;
};

// The dtypes Unique and UniqueWithCounts take.
std::vector<DataType> UniqueTypes() {
  return {DT_FLOAT, DT_DOUBLE, DT_HALF, DT_BFLOAT16, DT_INT8, DT_UINT8, DT_INT16,
          DT_UINT16, DT_INT32, DT_UINT32, DT_INT64, DT_UINT64, DT_BOOL, DT_STRING};
}

REGISTER_KERNEL(KernelDefBuilder("Unique")
                    .Device(kDeviceCpu)
                    .TypeConstraint("T", UniqueTypes())
                    .TypeConstraint("out_idx", {DT_INT32, DT_INT64}),
                UniqueOp);
REGISTER_KERNEL(KernelDefBuilder("UniqueWithCounts")
                    .Device(kDeviceCpu)
                    .TypeConstraint("T", UniqueTypes())
                    .TypeConstraint("out_idx", {DT_INT32, DT_INT64}),
                UniqueOp);
REGISTER_KERNEL(KernelDefBuilder("InvertPermutation")
                    .Device(kDeviceCpu)
                    .TypeConstraint<int32_t>("T"),
                InvertPermutationOp<int32_t>);
REGISTER_KERNEL(KernelDefBuilder("InvertPermutation")
                    .Device(kDeviceCpu)
                    .TypeConstraint<int64_t>("T"),
                InvertPermutationOp<int64_t>);
REGISTER_KERNEL(KernelDefBuilder("BroadcastArgs")
                    .Device(kDeviceCpu)
                    .TypeConstraint<int32_t>("T"),
                BroadcastArgsOp<int32_t>);
REGISTER_KERNEL(KernelDefBuilder("BroadcastArgs")
                    .Device(kDeviceCpu)
                    .TypeConstraint<int64_t>("T"),
                BroadcastArgsOp<int64_t>);

#define GR_REGISTER_BUCKETIZE(T)                                               \
  REGISTER_KERNEL(                                                             \
      KernelDefBuilder("Bucketize").Device(kDeviceCpu).TypeConstraint<T>("T"), \
      BucketizeOp<T>)
GR_REGISTER_BUCKETIZE(int32_t);
GR_REGISTER_BUCKETIZE(int64_t);
GR_REGISTER_BUCKETIZE(float);
GR_REGISTER_BUCKETIZE(double);
#undef GR_REGISTER_BUCKETIZE

#define GR_REGISTER_LINSPACE(T)                                      \
  REGISTER_KERNEL(KernelDefBuilder("LinSpace")                       \
                      .Device(kDeviceCpu)                            \
                      .TypeConstraint<T>("T")                        \
                      .TypeConstraint("Tidx", {DT_INT32, DT_INT64}), \
                  LinSpaceOp<T>)
GR_REGISTER_LINSPACE(float);
GR_REGISTER_LINSPACE(double);
GR_REGISTER_LINSPACE(half);
GR_REGISTER_LINSPACE(bfloat16);
#undef GR_REGISTER_LINSPACE

REGISTER_KERNEL(KernelDefBuilder("EnsureShape")
                    .Device(kDeviceCpu)
                    .TypeConstraint("T", AllTensorTypes()),
                EnsureShapeOp);

}  // namespace
}  // namespace array_kernels
}  // namespace graphrun
