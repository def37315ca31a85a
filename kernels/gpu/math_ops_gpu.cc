// The arithmetic GPU kernels: each checks shapes on the host, allocates its
// output in device memory and queues cuBLAS or a CUDA kernel on the
// device's compute stream (gpu_launch.h); consumers on the GPU queue after
// it, and copies out wait for it. Launching is cheap, so they run inline on
// the executor's thread. An error names the op; the executor adds the node.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "kernels/device_context.h"
#include "kernels/gpu/array_plans.h"
#include "kernels/gpu/broadcast.h"
#include "kernels/gpu/gpu_kernel_util.h"
#include "kernels/gpu/gpu_launch.h"
#include "kernels/kernel_registry.h"

namespace graphrun {
namespace {

using gpu::ElementTypeOf;
using gpu::GpuKernel;
using gpu::Stream;

// MatMul and BatchMatMul(V2): cuBLAS, float on TF32 tensor cores, half and
// bfloat16 on tensor cores with float accumulation.
class MatMulOp : public GpuKernel {
 public:
  explicit MatMulOp(OpKernelConstruction* c) : GpuKernel(c) {
    batched_ = c->def().op() == "BatchMatMul" || c->def().op() == "BatchMatMulV2";
    const char* ta = batched_ ? "adj_x" : "transpose_a";
    const char* tb = batched_ ? "adj_y" : "transpose_b";
    absl::Status s = c->GetAttr(ta, &transpose_a_);
    if (s.ok()) s = c->GetAttr(tb, &transpose_b_);
    if (!s.ok()) c->SetStatus(s);
  }

  void Compute(OpKernelContext* ctx) override {
    Product product;
    OP_REQUIRES_OK(ctx, Multiply(ctx, &product).status());
  }

 protected:
  struct Product {
    gpu::MatMulShape shape;
    Tensor* out = nullptr;
    void* stream = nullptr;
  };
  // Allocates output 0 and queues the product into it; false when the
  // output is empty (nothing queued).
  absl::StatusOr<bool> Multiply(OpKernelContext* ctx, Product* p) {
    const Tensor& a = ctx->input(0);
    const Tensor& b = ctx->input(1);
    GR_ASSIGN_OR_RETURN(
        p->shape, gpu::MatMulShapes(a.shape(), b.shape(), transpose_a_, transpose_b_, batched_));
    const gpu::MatMulShape& shape = p->shape;
    GR_RETURN_IF_ERROR(ctx->allocate_output(0, shape.output, &p->out));
    if (p->out->NumElements() == 0) return false;
    GR_ASSIGN_OR_RETURN(p->stream, Stream(ctx));
    if (shape.k == 0) {  // sums of nothing
      GR_RETURN_IF_ERROR(
          gpu::Zero(p->stream, p->out->raw_data(), static_cast<int64_t>(p->out->TotalBytes())));
      return true;
    }
    GR_ASSIGN_OR_RETURN(gpu::ElementType type, ElementTypeOf(a.dtype()));
    GR_RETURN_IF_ERROR(gpu::Gemm(p->stream, type, transpose_a_, transpose_b_, shape.m, shape.n,
                                 shape.k, a.raw_data(), b.raw_data(), p->out->raw_data(),
                                 shape.batch, shape.stride_a, shape.stride_b, shape.stride_c));
    return true;
  }

 private:
  bool batched_ = false;
  bool transpose_a_ = false;
  bool transpose_b_ = false;
};

// _FusedMatMul (float), as the graph optimizer makes it: the product, then
// the bias and activation in one pass over it. Its attrs are read as the
// CPU kernel reads them (fusions neither knows fail when the kernel is
// made, naming them).
class FusedMatMulOp : public MatMulOp {
 public:
  explicit FusedMatMulOp(OpKernelConstruction* c) : MatMulOp(c) {
    absl::StatusOr<gpu::Epilogue> epilogue = gpu::EpilogueFromAttrs(c);
    if (!epilogue.ok()) {
      c->SetStatus(epilogue.status());
      return;
    }
    epilogue_ = *epilogue;
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& bias = ctx->input(2);
    Product p;
    absl::StatusOr<bool> queued = Multiply(ctx, &p);
    OP_REQUIRES_OK(ctx, queued.status());
    if (!*queued) return;
    OP_REQUIRES(
        ctx, bias.dims() == 1 && bias.dim_size(0) == p.shape.n,
        absl::InvalidArgumentError(absl::StrCat("_FusedMatMul: the bias must be [", p.shape.n,
                                                "], got ", bias.shape().DebugString())));
    OP_REQUIRES_OK(
        ctx, gpu::BiasActivation(p.stream, static_cast<float*>(p.out->raw_data()),
                                 static_cast<const float*>(bias.raw_data()), p.shape.m, p.shape.n,
                                 epilogue_.activation, epilogue_.leakyrelu_alpha));
  }

 private:
  gpu::Epilogue epilogue_;
};

// Einsum of two inputs as one cuBLAS GEMM, the operands and the product
// rearranged by strided copies only where array_plans.h's PlanEinsum says.
class EinsumOp : public GpuKernel {
 public:
  explicit EinsumOp(OpKernelConstruction* c) : GpuKernel(c) {
    std::string equation;
    absl::Status s = c->GetAttr("equation", &equation);
    if (s.ok() && c->input_types().size() != 2) {
      s = absl::UnimplementedError("Einsum on GPU takes two inputs");
    }
    if (s.ok()) {
      absl::StatusOr<EinsumEquation> parsed = ParseEinsumEquation(equation, 2);
      s = parsed.status();
      if (parsed.ok()) equation_ = *std::move(parsed);
    }
    if (!s.ok()) c->SetStatus(s);
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& y = ctx->input(1);
    absl::StatusOr<gpu::EinsumPlan> plan = gpu::PlanEinsum(equation_, x.shape(), y.shape());
    OP_REQUIRES_OK(ctx, plan.status());
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, plan->output, &out));
    if (out->NumElements() == 0) return;
    absl::StatusOr<void*> stream = Stream(ctx);
    OP_REQUIRES_OK(ctx, stream.status());
    if (plan->k == 0 || x.NumElements() == 0 || y.NumElements() == 0) {  // sums of nothing
      OP_REQUIRES_OK(ctx,
                     gpu::Zero(*stream, out->raw_data(), static_cast<int64_t>(out->TotalBytes())));
      return;
    }
    absl::StatusOr<gpu::ElementType> type = ElementTypeOf(x.dtype());
    OP_REQUIRES_OK(ctx, type.status());
    const int bytes = static_cast<int>(DataTypeSize(x.dtype()));
    const void* a = plan->swap ? y.raw_data() : x.raw_data();
    const void* b = plan->swap ? x.raw_data() : y.raw_data();
    Tensor a_copy, b_copy, product;
    if (plan->copy_a) {
      OP_REQUIRES_OK(ctx, ctx->allocate_temp(x.dtype(), plan->a_layout, &a_copy));
      OP_REQUIRES_OK(ctx, gpu::StridedCopy(*stream, bytes, a, a_copy.raw_data(), plan->a_copy));
      a = a_copy.raw_data();
    }
    if (plan->copy_b) {
      OP_REQUIRES_OK(ctx, ctx->allocate_temp(x.dtype(), plan->b_layout, &b_copy));
      OP_REQUIRES_OK(ctx, gpu::StridedCopy(*stream, bytes, b, b_copy.raw_data(), plan->b_copy));
      b = b_copy.raw_data();
    }
    void* c = out->raw_data();
    if (plan->copy_out) {
      OP_REQUIRES_OK(ctx, ctx->allocate_temp(x.dtype(), plan->product, &product));
      c = product.raw_data();
    }
    OP_REQUIRES_OK(ctx, gpu::Gemm(*stream, *type, plan->transpose_a, plan->transpose_b, plan->m,
                                  plan->n, plan->k, a, b, c, plan->batch, plan->m * plan->k,
                                  plan->k * plan->n, plan->m * plan->n));
    if (plan->copy_out) {
      OP_REQUIRES_OK(ctx, gpu::StridedCopy(*stream, bytes, c, out->raw_data(), plan->out_copy));
    }
  }

 private:
  EinsumEquation equation_;  // parsed once
};

template <gpu::UnaryOp kOp>
class UnaryOp : public GpuKernel {
 public:
  explicit UnaryOp(OpKernelConstruction* c) : GpuKernel(c) {
    if constexpr (kOp == gpu::UnaryOp::kLeakyRelu) c->SetStatus(c->GetAttr("alpha", &alpha_));
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    // Forwarding empties input 0's slot: what the launch needs is read first.
    const float* in = static_cast<const float*>(x.raw_data());
    const int64_t n = x.NumElements();
    Tensor* y = nullptr;
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output(0, 0, x.shape(), &y));
    absl::StatusOr<void*> stream = Stream(ctx);
    OP_REQUIRES_OK(ctx, stream.status());
    OP_REQUIRES_OK(ctx,
                   gpu::Unary(*stream, kOp, in, static_cast<float*>(y->raw_data()), n, alpha_));
  }

 private:
  float alpha_ = 0.2f;
};

// A two-input elementwise op with NumPy broadcasting: Launch::Run queues
// it (the binary arithmetic, comparisons and LogicalAnd/Or below).
template <typename Launch>
class BroadcastOp : public GpuKernel {
 public:
  using GpuKernel::GpuKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& y = ctx->input(1);
    absl::StatusOr<gpu::Broadcast> b = gpu::MakeBroadcast(x.shape(), y.shape());
    OP_REQUIRES_OK(ctx, b.status());
    Tensor* z = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, b->output, &z));
    absl::StatusOr<void*> stream = Stream(ctx);
    OP_REQUIRES_OK(ctx, stream.status());
    OP_REQUIRES_OK(ctx, Launch::Run(*stream, x.raw_data(), y.raw_data(), z->raw_data(), b->shape));
  }
};

template <gpu::BinaryOp kOp>
struct BinaryLaunch {
  static absl::Status Run(void* s, const void* x, const void* y, void* z,
                          const gpu::BroadcastShape& b) {
    return gpu::Binary(s, kOp, static_cast<const float*>(x), static_cast<const float*>(y),
                       static_cast<float*>(z), b);
  }
};
template <gpu::BinaryOp kOp>
using BinaryOp = BroadcastOp<BinaryLaunch<kOp>>;

template <gpu::CompareOp kOp>
struct CompareLaunch {
  static absl::Status Run(void* s, const void* x, const void* y, void* z,
                          const gpu::BroadcastShape& b) {
    return gpu::Compare(s, kOp, static_cast<const float*>(x), static_cast<const float*>(y),
                        static_cast<bool*>(z), b);
  }
};
template <gpu::CompareOp kOp>
using CompareOp = BroadcastOp<CompareLaunch<kOp>>;

template <bool kAnd>
struct LogicalLaunch {
  static absl::Status Run(void* s, const void* x, const void* y, void* z,
                          const gpu::BroadcastShape& b) {
    return gpu::Logical(s, kAnd, static_cast<const bool*>(x), static_cast<const bool*>(y),
                        static_cast<bool*>(z), b);
  }
};

class LogicalNotOp : public GpuKernel {
 public:
  using GpuKernel::GpuKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    Tensor* z = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, x.shape(), &z));
    absl::StatusOr<void*> stream = Stream(ctx);
    OP_REQUIRES_OK(ctx, stream.status());
    OP_REQUIRES_OK(ctx, gpu::LogicalNot(*stream, static_cast<const bool*>(x.raw_data()),
                                        static_cast<bool*>(z->raw_data()), x.NumElements()));
  }
};

class SelectV2Op : public GpuKernel {
 public:
  using GpuKernel::GpuKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& cond = ctx->input(0);
    const Tensor& x = ctx->input(1);
    const Tensor& y = ctx->input(2);
    absl::StatusOr<gpu::Broadcast> b = gpu::MakeBroadcast3(cond.shape(), x.shape(), y.shape());
    OP_REQUIRES_OK(ctx, b.status());
    Tensor* z = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, b->output, &z));
    absl::StatusOr<void*> stream = Stream(ctx);
    OP_REQUIRES_OK(ctx, stream.status());
    OP_REQUIRES_OK(ctx, gpu::Select(*stream, static_cast<const bool*>(cond.raw_data()),
                                    static_cast<const float*>(x.raw_data()),
                                    static_cast<const float*>(y.raw_data()),
                                    static_cast<float*>(z->raw_data()), b->shape));
  }
};

// AddN: the inputs (one shape) summed into the output pairwise, in order.
class AddNOp : public GpuKernel {
 public:
  using GpuKernel::GpuKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& first = ctx->input(0);
    for (int i = 1; i < ctx->num_inputs(); ++i) {
      OP_REQUIRES(
          ctx, ctx->input(i).shape() == first.shape(),
          absl::InvalidArgumentError(absl::StrCat(
              "AddN: all inputs must have the same shape; input 0 is ", first.shape().DebugString(),
              ", input ", i, " is ", ctx->input(i).shape().DebugString())));
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, first.shape(), &out));
    absl::StatusOr<void*> stream = Stream(ctx);
    OP_REQUIRES_OK(ctx, stream.status());
    const int64_t n = first.NumElements();
    gpu::BroadcastShape same;
    same.rank = 1;
    same.dims[0] = n;
    same.x_strides[0] = same.y_strides[0] = 1;
    float* sum = static_cast<float*>(out->raw_data());
    if (ctx->num_inputs() == 1) {
      OP_REQUIRES_OK(ctx, gpu::CopyOnDevice(*stream, first.raw_data(), sum,
                                            static_cast<int64_t>(first.TotalBytes())));
      return;
    }
    for (int i = 1; i < ctx->num_inputs(); ++i) {
      const float* acc = i == 1 ? static_cast<const float*>(first.raw_data()) : sum;
      OP_REQUIRES_OK(ctx,
                     gpu::Binary(*stream, gpu::BinaryOp::kAdd, acc,
                                 static_cast<const float*>(ctx->input(i).raw_data()), sum, same));
    }
  }
};

// BiasAdd, the bias along the last dim (NHWC) or dim 1 (NCHW, rank >= 3).
class BiasAddOp : public GpuKernel {
 public:
  explicit BiasAddOp(OpKernelConstruction* c) : GpuKernel(c) {
    std::string format = "NHWC";
    if (c->attrs().Find("data_format") != nullptr) {
      absl::Status s = c->GetAttr("data_format", &format);
      if (!s.ok()) c->SetStatus(s);
    }
    if (format != "NHWC" && format != "NCHW") {
      c->SetStatus(absl::InvalidArgumentError(absl::StrCat("Invalid data format: ", format)));
    }
    nchw_ = format == "NCHW";
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& bias = ctx->input(1);
    OP_REQUIRES(ctx, x.dims() >= 2,
                absl::InvalidArgumentError(
                    absl::StrCat("Input tensor must be at least 2D: ", x.shape().DebugString())));
    const int channel_dim = nchw_ && x.dims() >= 3 ? 1 : x.dims() - 1;
    OP_REQUIRES(ctx, bias.dims() == 1 && bias.dim_size(0) == x.dim_size(channel_dim),
                absl::InvalidArgumentError(
                    absl::StrCat("Must provide as many biases as the ", nchw_ ? "channel" : "last",
                                 " dimension of the input tensor: ", bias.shape().DebugString(),
                                 " vs. ", x.shape().DebugString())));
    gpu::ChannelView v;
    v.channels = x.dim_size(channel_dim);
    v.outer = 1;
    for (int d = 0; d < channel_dim; ++d) v.outer *= x.dim_size(d);
    for (int d = channel_dim + 1; d < x.dims(); ++d) v.inner *= x.dim_size(d);
    const float* in = static_cast<const float*>(x.raw_data());
    const float* b = static_cast<const float*>(bias.raw_data());
    Tensor* y = nullptr;
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output(0, 0, x.shape(), &y));
    absl::StatusOr<void*> stream = Stream(ctx);
    OP_REQUIRES_OK(ctx, stream.status());
    OP_REQUIRES_OK(ctx,
                   gpu::ChannelBiasActivation(*stream, in, b, static_cast<float*>(y->raw_data()), v,
                                              gpu::Activation::kNone, 0.0f));
  }

 private:
  bool nchw_ = false;
};

class SoftmaxOp : public GpuKernel {
 public:
  explicit SoftmaxOp(OpKernelConstruction* c) : GpuKernel(c), log_(c->def().op() == "LogSoftmax") {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    OP_REQUIRES(ctx, x.dims() >= 1,
                absl::InvalidArgumentError("logits must have at least one dimension"));
    Tensor* y = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, x.shape(), &y));
    const int64_t cols = x.dim_size(x.dims() - 1);
    absl::StatusOr<void*> stream = Stream(ctx);
    OP_REQUIRES_OK(ctx, stream.status());
    OP_REQUIRES_OK(ctx, gpu::Softmax(*stream, static_cast<const float*>(x.raw_data()),
                                     static_cast<float*>(y->raw_data()),
                                     cols == 0 ? 0 : x.NumElements() / cols, cols, log_));
  }

 private:
  const bool log_;
};

absl::StatusOr<gpu::CastType> CastTypeOf(DataType t) {
  switch (t) {
    case DT_FLOAT:
      return gpu::CastType::kFloat;
    case DT_HALF:
      return gpu::CastType::kHalf;
    case DT_BFLOAT16:
      return gpu::CastType::kBfloat16;
    case DT_DOUBLE:
      return gpu::CastType::kDouble;
    case DT_INT32:
      return gpu::CastType::kInt32;
    case DT_INT64:
      return gpu::CastType::kInt64;
    case DT_BOOL:
      return gpu::CastType::kBool;
    default:
      return absl::InvalidArgumentError(absl::StrCat("no GPU Cast for ", DataTypeString(t)));
  }
}

class CastOp : public GpuKernel {
 public:
  explicit CastOp(OpKernelConstruction* c) : GpuKernel(c) {
    if (c->attrs().Find("Truncate") != nullptr) c->SetStatus(c->GetAttr("Truncate", &truncate_));
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    absl::StatusOr<gpu::CastType> from = CastTypeOf(x.dtype());
    OP_REQUIRES_OK(ctx, from.status());
    absl::StatusOr<gpu::CastType> to = CastTypeOf(ctx->expected_output_dtype(0));
    OP_REQUIRES_OK(ctx, to.status());
    Tensor* y = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, x.shape(), &y));
    absl::StatusOr<void*> stream = Stream(ctx);
    OP_REQUIRES_OK(ctx, stream.status());
    OP_REQUIRES_OK(ctx, gpu::Cast(*stream, *from, *to, x.raw_data(), y->raw_data(), x.NumElements(),
                                  truncate_));
  }

 private:
  bool truncate_ = false;
};

const std::vector<DataType> kGemmTypes = {DT_FLOAT, DT_HALF, DT_BFLOAT16};

REGISTER_KERNEL(KernelDefBuilder("MatMul").Device(kDeviceGpu).TypeConstraint("T", kGemmTypes),
                MatMulOp);
REGISTER_KERNEL(KernelDefBuilder("BatchMatMul").Device(kDeviceGpu).TypeConstraint("T", kGemmTypes),
                MatMulOp);
REGISTER_KERNEL(
    KernelDefBuilder("BatchMatMulV2").Device(kDeviceGpu).TypeConstraint("T", kGemmTypes), MatMulOp);

REGISTER_KERNEL(KernelDefBuilder("Einsum").Device(kDeviceGpu).TypeConstraint("T", kGemmTypes),
                EinsumOp);

REGISTER_KERNEL(KernelDefBuilder("_FusedMatMul").Device(kDeviceGpu).TypeConstraint<float>("T"),
                FusedMatMulOp);

#define GR_GPU_UNARY(name, op)                                                          \
  REGISTER_KERNEL(KernelDefBuilder(name).Device(kDeviceGpu).TypeConstraint<float>("T"), \
                  UnaryOp<gpu::UnaryOp::op>)
GR_GPU_UNARY("Neg", kNeg);
GR_GPU_UNARY("Abs", kAbs);
GR_GPU_UNARY("Square", kSquare);
GR_GPU_UNARY("Sqrt", kSqrt);
GR_GPU_UNARY("Rsqrt", kRsqrt);
GR_GPU_UNARY("Exp", kExp);
GR_GPU_UNARY("Log", kLog);
GR_GPU_UNARY("Tanh", kTanh);
GR_GPU_UNARY("Sigmoid", kSigmoid);
GR_GPU_UNARY("Relu", kRelu);
GR_GPU_UNARY("Relu6", kRelu6);
GR_GPU_UNARY("Elu", kElu);
GR_GPU_UNARY("Softplus", kSoftplus);
GR_GPU_UNARY("Reciprocal", kReciprocal);
GR_GPU_UNARY("Inv", kReciprocal);
GR_GPU_UNARY("Erf", kErf);
GR_GPU_UNARY("Erfc", kErfc);
GR_GPU_UNARY("Floor", kFloor);
GR_GPU_UNARY("Ceil", kCeil);
GR_GPU_UNARY("Round", kRint);
GR_GPU_UNARY("Rint", kRint);
GR_GPU_UNARY("Sign", kSign);
GR_GPU_UNARY("Log1p", kLog1p);
GR_GPU_UNARY("Expm1", kExpm1);
GR_GPU_UNARY("Sin", kSin);
GR_GPU_UNARY("Cos", kCos);
GR_GPU_UNARY("Softsign", kSoftsign);
GR_GPU_UNARY("Selu", kSelu);
GR_GPU_UNARY("LeakyRelu", kLeakyRelu);
#undef GR_GPU_UNARY

#define GR_GPU_BINARY(name, op)                                                         \
  REGISTER_KERNEL(KernelDefBuilder(name).Device(kDeviceGpu).TypeConstraint<float>("T"), \
                  BinaryOp<gpu::BinaryOp::op>)
GR_GPU_BINARY("Add", kAdd);
GR_GPU_BINARY("AddV2", kAdd);
GR_GPU_BINARY("Sub", kSub);
GR_GPU_BINARY("Mul", kMul);
GR_GPU_BINARY("RealDiv", kDiv);
GR_GPU_BINARY("Div", kDiv);
GR_GPU_BINARY("Maximum", kMaximum);
GR_GPU_BINARY("Minimum", kMinimum);
GR_GPU_BINARY("SquaredDifference", kSquaredDifference);
GR_GPU_BINARY("Pow", kPow);
GR_GPU_BINARY("FloorDiv", kFloorDiv);
GR_GPU_BINARY("FloorMod", kFloorMod);
GR_GPU_BINARY("DivNoNan", kDivNoNan);
#undef GR_GPU_BINARY

#define GR_GPU_COMPARE(name, op)                                                        \
  REGISTER_KERNEL(KernelDefBuilder(name).Device(kDeviceGpu).TypeConstraint<float>("T"), \
                  CompareOp<gpu::CompareOp::op>)
GR_GPU_COMPARE("Less", kLess);
GR_GPU_COMPARE("LessEqual", kLessEqual);
GR_GPU_COMPARE("Greater", kGreater);
GR_GPU_COMPARE("GreaterEqual", kGreaterEqual);
GR_GPU_COMPARE("Equal", kEqual);
GR_GPU_COMPARE("NotEqual", kNotEqual);
#undef GR_GPU_COMPARE

REGISTER_KERNEL(KernelDefBuilder("LogicalAnd").Device(kDeviceGpu),
                BroadcastOp<LogicalLaunch<true>>);
REGISTER_KERNEL(KernelDefBuilder("LogicalOr").Device(kDeviceGpu),
                BroadcastOp<LogicalLaunch<false>>);
REGISTER_KERNEL(KernelDefBuilder("LogicalNot").Device(kDeviceGpu), LogicalNotOp);
REGISTER_KERNEL(KernelDefBuilder("SelectV2").Device(kDeviceGpu).TypeConstraint<float>("T"),
                SelectV2Op);
REGISTER_KERNEL(KernelDefBuilder("AddN").Device(kDeviceGpu).TypeConstraint<float>("T"), AddNOp);

REGISTER_KERNEL(KernelDefBuilder("BiasAdd").Device(kDeviceGpu).TypeConstraint<float>("T"),
                BiasAddOp);
REGISTER_KERNEL(KernelDefBuilder("Softmax").Device(kDeviceGpu).TypeConstraint<float>("T"),
                SoftmaxOp);
REGISTER_KERNEL(KernelDefBuilder("LogSoftmax").Device(kDeviceGpu).TypeConstraint<float>("T"),
                SoftmaxOp);
const std::vector<DataType> kCastTypes = {DT_FLOAT, DT_HALF,  DT_BFLOAT16, DT_DOUBLE,
                                          DT_INT32, DT_INT64, DT_BOOL};
REGISTER_KERNEL(KernelDefBuilder("Cast")
                    .Device(kDeviceGpu)
                    .TypeConstraint("SrcT", kCastTypes)
                    .TypeConstraint("DstT", kCastTypes),
                CastOp);

}  // namespace
}  // namespace graphrun
