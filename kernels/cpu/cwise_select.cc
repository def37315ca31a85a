// Select (TensorFlow 1 semantics: condition a scalar, t's shape, or a vector
// picking whole rows of t and e) and SelectV2 (condition, t and e broadcast
// together) on CPU, for every dtype a Tensor holds. Selecting copies
// elements, so each element size shares one instantiation.
#include <complex>
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "kernels/cpu/cwise_common.h"

namespace graphrun {
namespace cwise {
namespace {

absl::Status ThenElseSameShape(const Tensor& t, const Tensor& e) {
  if (t.shape() == e.shape()) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("'then' and 'else' must have the same size.  but received: ",
                   t.shape().DebugString(), " vs. ", e.shape().DebugString()));
}

template <int N, typename T, typename Device>
void SelectBroadcastN(const Device& d, const BroadcastPlan& p, const bool* c,
                      const T* t, const T* e, T* out) {
  ConstMap<bool, N> cm(c, PaddedDims<N>(p.in_dims[0]));
  ConstMap<T, N> tm(t, PaddedDims<N>(p.in_dims[1]));
  ConstMap<T, N> em(e, PaddedDims<N>(p.in_dims[2]));
  MutableMap<T, N>(out, PaddedDims<N>(p.out_dims)).device(d) =
      cm.broadcast(PaddedDims<N>(p.in_bcast[0]))
          .select(tm.broadcast(PaddedDims<N>(p.in_bcast[1])),
                  em.broadcast(PaddedDims<N>(p.in_bcast[2])));
}

// out = c ? t : e with (c, t, e) broadcast as `p` says.
template <typename T, typename Device>
void SelectBroadcast(const Device& d, const BroadcastPlan& p, const bool* c,
                     const T* t, const T* e, T* out) {
  switch (InstantiatedRank(p.rank())) {
    case 2: SelectBroadcastN<2>(d, p, c, t, e, out); break;
    case 3: SelectBroadcastN<3>(d, p, c, t, e, out); break;
    case 4: SelectBroadcastN<4>(d, p, c, t, e, out); break;
    default: SelectBroadcastN<kMaxBroadcastRank>(d, p, c, t, e, out); break;
  }
}

// T: a type of the node dtype's element size (or std::string).
template <typename T>
class SelectOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& cond = ctx->input(0);
    const Tensor& t = ctx->input(1);
    const Tensor& e = ctx->input(2);
    if (cond.dims() == 0) {
      OP_REQUIRES_OK(ctx, ThenElseSameShape(t, e));
      ctx->set_output(0, cond.scalar<bool>() ? t : e);
      return;
    }
    const bool by_rows = cond.dims() == 1 && t.dims() != 1;
    if (by_rows) {
      OP_REQUIRES(ctx, t.dims() >= 1,
                  absl::InvalidArgumentError(absl::StrCat(
                      "'then' must be at least a vector, but saw shape: ",
                      t.shape().DebugString())));
      OP_REQUIRES(ctx, t.dim_size(0) == cond.NumElements(),
                  absl::InvalidArgumentError(absl::StrCat(
                      "Number of batches of 'then' must match size of 'cond', "
                      "but saw: ",
                      t.dim_size(0), " vs. ", cond.NumElements())));
      OP_REQUIRES_OK(ctx, ThenElseSameShape(t, e));
    } else {
      OP_REQUIRES_OK(ctx, CheckInputsSameShape(ctx));
    }
    const TensorShape shape = t.shape();
    const int64_t n = shape.num_elements();
    const int64_t rows = cond.NumElements();
    const bool* c = Data<bool>(cond);
    const T* tp = Data<T>(t);
    const T* ep = Data<T>(e);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ForwardOrAllocate(ctx, {1, 2}, shape, &out));
    if (n == 0) return;
    T* o = MutableData<T>(out);
    RunOnDevice(ctx, n, [&](const auto& d) {
      if (!by_rows) {
        MutableMap<T>(o, n).device(d) =
            ConstMap<bool>(c, n).select(ConstMap<T>(tp, n), ConstMap<T>(ep, n));
        return;
      }
      // cond [rows] picks rows of t, e viewed as [rows, n / rows].
      const int64_t cols = n / rows;
      BroadcastPlan p;
      p.out_dims = {rows, cols};
      p.in_dims = {{rows, 1}, {rows, cols}, {rows, cols}};
      p.in_bcast = {{1, cols}, {1, 1}, {1, 1}};
      SelectBroadcastN<2>(d, p, c, tp, ep, o);
    });
  }
};

template <typename T>
class SelectV2Op : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& cond = ctx->input(0);
    const Tensor& t = ctx->input(1);
    const Tensor& e = ctx->input(2);
    const TensorShape* shapes[] = {&cond.shape(), &t.shape(), &e.shape()};
    const BroadcastPlan p = MakeBroadcastPlan(shapes);
    OP_REQUIRES(ctx, p.valid,
                absl::InvalidArgumentError(absl::StrCat(
                    "condition ", cond.shape().DebugString(), ", then ",
                    t.shape().DebugString(), ", and else ",
                    e.shape().DebugString(), " must be broadcastable")));
    auto shape = TensorShape::FromDims(p.output_dims);
    OP_REQUIRES_OK(ctx, shape.status());
    OP_REQUIRES(ctx, p.rank() <= kMaxBroadcastRank,
                absl::UnimplementedError(absl::StrCat(
                    "Broadcast between ", cond.shape().DebugString(), ", ",
                    t.shape().DebugString(), " and ", e.shape().DebugString(),
                    " is not supported yet.")));
    const int64_t n = shape->num_elements();
    const bool same_shapes = cond.NumElements() == n && t.NumElements() == n &&
                             e.NumElements() == n;
    const bool* c = Data<bool>(cond);
    const T* tp = Data<T>(t);
    const T* ep = Data<T>(e);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ForwardOrAllocate(ctx, {1, 2}, *shape, &out));
    if (n == 0) return;
    T* o = MutableData<T>(out);
    RunOnDevice(ctx, n, [&](const auto& d) {
      if (p.rank() == 1 && same_shapes) {
        MutableMap<T>(o, n).device(d) =
            ConstMap<bool>(c, n).select(ConstMap<T>(tp, n), ConstMap<T>(ep, n));
      } else {
        SelectBroadcast(d, p, c, tp, ep, o);
      }
    });
  }
};

#define GR_REGISTER_SELECT(TYPE, AS)                      \
  GR_CWISE_REGISTER("Select", TYPE, SelectOp<AS>);        \
  GR_CWISE_REGISTER("SelectV2", TYPE, SelectV2Op<AS>)

GR_REGISTER_SELECT(bool, uint8_t);
GR_REGISTER_SELECT(int8_t, uint8_t);
GR_REGISTER_SELECT(uint8_t, uint8_t);
GR_REGISTER_SELECT(int16_t, uint16_t);
GR_REGISTER_SELECT(uint16_t, uint16_t);
GR_REGISTER_SELECT(half, uint16_t);
GR_REGISTER_SELECT(bfloat16, uint16_t);
GR_REGISTER_SELECT(float, uint32_t);
GR_REGISTER_SELECT(int32_t, uint32_t);
GR_REGISTER_SELECT(uint32_t, uint32_t);
GR_REGISTER_SELECT(double, uint64_t);
GR_REGISTER_SELECT(int64_t, uint64_t);
GR_REGISTER_SELECT(uint64_t, uint64_t);
GR_REGISTER_SELECT(complex64, uint64_t);
GR_REGISTER_SELECT(complex128, complex128);
GR_REGISTER_SELECT(std::string, std::string);
#undef GR_REGISTER_SELECT

}  // namespace
}  // namespace cwise
}  // namespace graphrun
