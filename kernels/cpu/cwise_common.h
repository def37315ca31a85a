// Shared machinery of the CPU element-wise kernels (kernels/cpu/cwise_*.cc):
// TensorFlow's broadcasting rules (BroadcastPlan, as TF's BCastList), the
// choice of Eigen device by work size, and the Eigen evaluation of unary and
// binary functors, with fast paths for same-shape and scalar-vs-tensor
// inputs and a general path that broadcasts after collapsing both inputs to
// a common rank of at most kMaxBroadcastRank. Stateless; thread-safe.
#ifndef GRAPHRUN_KERNELS_CPU_CWISE_COMMON_H_
#define GRAPHRUN_KERNELS_CPU_CWISE_COMMON_H_

#include <algorithm>
#include <cstdint>
#include <optional>
#include <type_traits>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/types/span.h"
#include "graph/tensor.h"
#include "kernels/eigen.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace cwise {

// Work above this many elements runs on the intra-op pool; below it, on the
// calling thread.
inline constexpr int64_t kParallelThreshold = kParallelElements;
// Largest rank the general broadcasting path handles (after collapsing).
inline constexpr int kMaxBroadcastRank = 8;

// Calls fn(device) with the intra-op ThreadPoolDevice for big work and a
// DefaultDevice (this thread) otherwise.
template <typename Fn>
void RunOnDevice(OpKernelContext* ctx, int64_t work, Fn&& fn) {
  if (work > kParallelThreshold) {
    fn(ctx->eigen_cpu_device());
  } else {
    Eigen::DefaultDevice device;
    fn(device);
  }
}

template <typename T, int N = 1>
using ConstMap =
    Eigen::TensorMap<Eigen::Tensor<const T, N, Eigen::RowMajor, Eigen::DenseIndex>>;
template <typename T, int N = 1>
using MutableMap =
    Eigen::TensorMap<Eigen::Tensor<T, N, Eigen::RowMajor, Eigen::DenseIndex>>;

// Element pointers. The kernels pick the C++ type (sometimes a same-sized
// stand-in, e.g. uint32_t for int32 in Equal), so no dtype check here.
template <typename T>
const T* Data(const Tensor& t) {
  return static_cast<const T*>(t.raw_data());
}
template <typename T>
T* MutableData(Tensor* t) {
  return static_cast<T*>(t->raw_data());
}

// How N shapes broadcast against each other, NumPy-style, as TensorFlow's
// BCastList with its "fewer dims" optimization: trailing dimensions align,
// and adjacent dimensions in which the same inputs are broadcast merge into
// one. E.g. [2,3,4] vs [4] -> out_dims [6,4], in_dims {[6,4], [1,4]},
// in_bcast {[1,1], [6,1]}.
struct BroadcastPlan {
  // Inline storage: a plan is made per kernel run, and for the common small
  // ranks it then allocates nothing.
  using Dims = absl::InlinedVector<int64_t, 6>;
  bool valid = false;
  // The uncollapsed broadcast shape (the output's shape).
  Dims output_dims;
  // Collapsed output shape; at least one entry.
  Dims out_dims;
  // Per input: its collapsed shape (same rank as out_dims) and how many
  // times each dimension repeats to make out_dims.
  absl::InlinedVector<Dims, 3> in_dims;
  absl::InlinedVector<Dims, 3> in_bcast;

  int rank() const { return static_cast<int>(out_dims.size()); }
};

BroadcastPlan MakeBroadcastPlan(absl::Span<const TensorShape* const> shapes);

// True if output 0 can take over input `input`'s buffer with `shape`:
// same dtype and element count, a whole buffer from this device's
// allocator, and no other holder. (What forward_input_or_allocate_output
// checks, asked without committing.)
bool CanForward(OpKernelContext* ctx, int input, const TensorShape& shape);

// Makes output 0 with `shape` from the first of `candidates` that
// CanForward, else allocates it. A forwarded input's slot is left empty:
// read what you need from the inputs first.
absl::Status ForwardOrAllocate(OpKernelContext* ctx,
                               std::initializer_list<int> candidates,
                               const TensorShape& shape, Tensor** out);

// OK if every input has input 0's shape, else TensorFlow's
// ValidateInputsAreSameShape error: "Inputs to operation n of type AddN must
// have the same size and shape.  Input 0: [2] != input 1: [3]".
absl::Status CheckInputsSameShape(OpKernelContext* ctx);

// Options of a binary kernel.
struct BinaryOptions {
  // Compute f(y, x) instead of f(x, y) (Greater runs as a swapped Less).
  bool swap_inputs = false;
  // Equal/NotEqual with incompatible_shape_error=false: the scalar result
  // when the shapes do not broadcast.
  std::optional<bool> incompatible_result;
};

// What PrepareBinary found, in compute order (a, b): the inputs' elements
// (captured before the output may take over an input's buffer), the plan
// for (a, b) and the output.
struct BinaryState {
  const void* a = nullptr;
  int64_t a_count = 0;
  const void* b = nullptr;
  int64_t b_count = 0;
  BroadcastPlan plan;
  Tensor* out = nullptr;
};

// Checks that inputs 0 and 1 broadcast ("Incompatible shapes: [2,3] vs.
// [4]"), runs `validate(x, y)` when the output is non-empty, then allocates
// output 0 (reusing an input when it can). Returns true if there is
// anything to compute; false when an error was set, the output is empty, or
// the output was fully written already (shapes that do not broadcast for
// Equal/NotEqual without incompatible_shape_error).
bool PrepareBinary(
    OpKernelContext* ctx, const BinaryOptions& options,
    absl::FunctionRef<absl::Status(const Tensor&, const Tensor&)> validate,
    BinaryState* state);

// A binary functor with its right (left) operand bound to a scalar, keeping
// the functor's vectorized form when it has one.
template <typename F, typename T>
struct ScalarRight {
  explicit ScalarRight(const T* v) : value(*v) {}
  auto operator()(const T& a) const { return F()(a, value); }
  template <typename Packet>
  Packet packetOp(const Packet& a) const {
    return F().packetOp(a, Eigen::internal::pset1<Packet>(value));
  }
  T value;
};

template <typename F, typename T>
struct ScalarLeft {
  explicit ScalarLeft(const T* v) : value(*v) {}
  auto operator()(const T& b) const { return F()(value, b); }
  template <typename Packet>
  Packet packetOp(const Packet& b) const {
    return F().packetOp(Eigen::internal::pset1<Packet>(value), b);
  }
  T value;
};

}  // namespace cwise
}  // namespace graphrun

namespace Eigen {
namespace internal {
template <typename F, typename T>
struct functor_traits<graphrun::cwise::ScalarRight<F, T>> {
  enum {
    Cost = functor_traits<F>::Cost,
    PacketAccess = functor_traits<F>::PacketAccess
  };
};
template <typename F, typename T>
struct functor_traits<graphrun::cwise::ScalarLeft<F, T>> {
  enum {
    Cost = functor_traits<F>::Cost,
    PacketAccess = functor_traits<F>::PacketAccess
  };
};
}  // namespace internal
}  // namespace Eigen

namespace graphrun {
namespace cwise {

// `dims` as Eigen dimensions, padded on the left with 1s to rank N.
template <int N>
Eigen::DSizes<Eigen::DenseIndex, N> PaddedDims(absl::Span<const int64_t> dims) {
  Eigen::DSizes<Eigen::DenseIndex, N> out;
  const int pad = N - static_cast<int>(dims.size());
  for (int i = 0; i < N; ++i) out[i] = i < pad ? 1 : dims[i - pad];
  return out;
}

// The general path instantiates these ranks only; a collapsed rank in
// between pads up to the next one.
inline int InstantiatedRank(int rank) {
  if (rank <= 2) return 2;
  if (rank <= 4) return rank;
  return kMaxBroadcastRank;
}

template <int N, typename Tin, typename Tout, typename F, typename Device>
void BinaryBroadcastN(const Device& d, const BroadcastPlan& p, const Tin* a,
                      const Tin* b, Tout* out) {
  ConstMap<Tin, N> am(a, PaddedDims<N>(p.in_dims[0]));
  ConstMap<Tin, N> bm(b, PaddedDims<N>(p.in_dims[1]));
  MutableMap<Tout, N> om(out, PaddedDims<N>(p.out_dims));
  const auto ab = PaddedDims<N>(p.in_bcast[0]);
  const auto bb = PaddedDims<N>(p.in_bcast[1]);
  om.device(d) = am.broadcast(ab).binaryExpr(bm.broadcast(bb), F());
}

// out = F(a, b) elementwise, broadcasting as `state.plan` says. The caller
// has checked that the plan is valid, its rank at most kMaxBroadcastRank,
// and the output non-empty.
template <typename Tin, typename Tout, typename F>
void ComputeBinary(OpKernelContext* ctx, const BinaryState& state) {
  const BroadcastPlan& p = state.plan;
  const Tin* a = static_cast<const Tin*>(state.a);
  const Tin* b = static_cast<const Tin*>(state.b);
  Tout* out = MutableData<Tout>(state.out);
  const int64_t n = state.out->NumElements();
  RunOnDevice(ctx, n, [&](const auto& d) {
    if (p.rank() == 1) {
      // Same shape, or one side has a single element.
      MutableMap<Tout> om(out, n);
      if (state.b_count == 1) {
        om.device(d) = ConstMap<Tin>(a, n).unaryExpr(ScalarRight<F, Tin>(b));
      } else if (state.a_count == 1) {
        om.device(d) = ConstMap<Tin>(b, n).unaryExpr(ScalarLeft<F, Tin>(a));
      } else {
        om.device(d) = ConstMap<Tin>(a, n).binaryExpr(ConstMap<Tin>(b, n), F());
      }
      return;
    }
    switch (InstantiatedRank(p.rank())) {
      case 2: BinaryBroadcastN<2, Tin, Tout, F>(d, p, a, b, out); break;
      case 3: BinaryBroadcastN<3, Tin, Tout, F>(d, p, a, b, out); break;
      case 4: BinaryBroadcastN<4, Tin, Tout, F>(d, p, a, b, out); break;
      default:
        BinaryBroadcastN<kMaxBroadcastRank, Tin, Tout, F>(d, p, a, b, out);
        break;
    }
  });
}

// Validation hook of BinaryOp, run on the original (x, y) when the output
// is non-empty, before it is allocated.
struct NoCheck {
  template <typename T>
  static absl::Status Validate(const Tensor&, const Tensor&) {
    return absl::OkStatus();
  }
};

// Validation hook of the integer divisions and remainders: InvalidArgument
// "Integer division by zero" if any divisor (y) is 0.
struct NonZeroDivisor {
  template <typename T>
  static absl::Status Validate(const Tensor&, const Tensor& y) {
    const T* p = Data<T>(y);
    const T* end = p + y.NumElements();
    for (; p != end; ++p) {
      if (*p == T(0)) {
        return absl::InvalidArgumentError("Integer division by zero");
      }
    }
    return absl::OkStatus();
  }
};

// z = F(x, y) with broadcasting. Tin/Tout are the element types the
// functor sees (possibly same-sized stand-ins for the node's dtype).
template <typename Tin, typename Tout, typename F, typename Check = NoCheck>
class BinaryOp : public OpKernel {
 public:
  explicit BinaryOp(OpKernelConstruction* ctx, BinaryOptions options = {})
      : OpKernel(ctx), options_(std::move(options)) {
    const AttrValue* strict = ctx->attrs().Find("incompatible_shape_error");
    if (strict != nullptr && !strict->b()) {
      options_.incompatible_result = (type_string() == "NotEqual");
    }
  }

  void Compute(OpKernelContext* ctx) override {
    if (ComputeSmall(ctx)) return;
    BinaryState state;
    if (!PrepareBinary(ctx, options_, &Check::template Validate<Tin>,
                       &state)) {
      return;
    }
    ComputeBinary<Tin, Tout, F>(ctx, state);
  }

 private:
  // Inputs of one shape with a few elements (a scalar loop counter): an
  // element at a time, without a broadcast plan or an Eigen expression,
  // whose setup costs more than the arithmetic. False when not such inputs.
  bool ComputeSmall(OpKernelContext* ctx) {
    constexpr int64_t kSmall = 16;
    const Tensor& x = ctx->input(0);
    const Tensor& y = ctx->input(1);
    const int64_t n = x.NumElements();
    if (n > kSmall || n == 0 || !(x.shape() == y.shape())) return false;
    const absl::Status valid = Check::template Validate<Tin>(x, y);
    if (!valid.ok()) {
      ctx->SetStatus(valid);
      return true;
    }
    // The buffers stay where they are if the output takes one over, and
    // each element is read before its own output is written.
    const Tin* a = Data<Tin>(x);
    const Tin* b = Data<Tin>(y);
    const TensorShape shape = x.shape();
    Tensor* out = nullptr;
    const absl::Status s = ForwardOrAllocate(ctx, {0, 1}, shape, &out);
    if (!s.ok()) {
      ctx->SetStatus(s);
      return true;
    }
    Tout* o = MutableData<Tout>(out);
    const F f;
    for (int64_t i = 0; i < n; ++i) {
      const Tin ai = a[i], bi = b[i];
      o[i] = options_.swap_inputs ? f(bi, ai) : f(ai, bi);
    }
    return true;
  }

 public:

 private:
  BinaryOptions options_;
};

// BinaryOp computing F(y, x): Greater(x, y) is Less(y, x).
template <typename Tin, typename Tout, typename F>
class SwappedBinaryOp : public BinaryOp<Tin, Tout, F> {
 public:
  explicit SwappedBinaryOp(OpKernelConstruction* ctx)
      : BinaryOp<Tin, Tout, F>(ctx, BinaryOptions{/*swap_inputs=*/true, {}}) {}
};

// y = F(x) elementwise.
template <typename T, typename F, typename Tout = T>
class UnaryOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    // Read x before y may take over its buffer (and empty its slot).
    const Tensor& x = ctx->input(0);
    const T* in = Data<T>(x);
    const TensorShape shape = x.shape();
    const int64_t n = shape.num_elements();
    Tensor* y = nullptr;
    OP_REQUIRES_OK(ctx, ForwardOrAllocate(ctx, {0}, shape, &y));
    if (n == 0) return;
    Tout* out = MutableData<Tout>(y);
    RunOnDevice(ctx, n, [&](const auto& d) {
      MutableMap<Tout>(out, n).device(d) = ConstMap<T>(in, n).unaryExpr(F());
    });
  }
};

}  // namespace cwise
}  // namespace graphrun

// Registers KERNEL for OP on CPU with type attr "T" = TYPE.
#define GR_CWISE_REGISTER(OP, TYPE, ...)                                    \
  REGISTER_KERNEL(::graphrun::KernelDefBuilder(OP)                          \
                      .Device(::graphrun::kDeviceCpu)                       \
                      .TypeConstraint<TYPE>("T"),                           \
                  __VA_ARGS__)

#endif  // GRAPHRUN_KERNELS_CPU_CWISE_COMMON_H_
