// Training on a GPU, float: the optimizer updates ApplyGradientDescent,
// ApplyMomentum and ApplyAdam (Nesterov too) in their ref and resource
// (ResourceApply*) forms, and BiasAddGrad.
//
// An update finds its variables (Var, kernels/variable.h) as the CPU's does
// and with its messages: each variable is locked in input order (var, then
// the slots), its value copied on the compute stream first when a read of
// this step still holds it, the hyperparameters checked to be scalars and
// the slots and gradient to have the variable's shape; then one CUDA kernel
// updates every element in place, reading the hyperparameters from device
// memory where their producers left them, with the CPU's arithmetic in its
// order (training_launch.cu). The resource forms keep their handles in host
// memory; the ref forms' edges carry the variable's handle.
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "kernels/gpu/gpu_kernel_util.h"
#include "kernels/kernel_registry.h"
#include "kernels/variable.h"

namespace graphrun {
namespace {

using gpu::GpuKernel;
using gpu::Stream;

using gpu::FloatData;

// The dense updates: `num_vars` variables, `num_scalars` hyperparameters,
// the gradient, then `num_trailing` more hyperparameters (Momentum's
// momentum), as TensorFlow orders the inputs.
class ApplyOp : public GpuKernel {
 public:
  ApplyOp(OpKernelConstruction* c, int num_vars, int num_scalars, int num_trailing = 0)
      : GpuKernel(c), num_vars_(num_vars), num_scalars_(num_scalars), num_trailing_(num_trailing) {
    resource_ = absl::StartsWith(type_string(), "Resource");
    if (c->attrs().Find("use_nesterov") != nullptr) {
      OP_REQUIRES_OK(c, c->GetAttr("use_nesterov", &nesterov_));
    }
  }

  void Compute(OpKernelContext* ctx) override {
    Slots slots;
    const int grad_index = num_vars_ + num_scalars_;
    for (int i = 0; i < num_scalars_ + num_trailing_; ++i) {
      const int input = i < num_scalars_ ? num_vars_ + i : grad_index + 1 + i - num_scalars_;
      const Tensor& s = ctx->input(input);
      OP_REQUIRES(ctx, s.dims() == 0 && s.dtype() == DT_FLOAT,
                  absl::InvalidArgumentError(absl::StrCat(
                      "input ", input, " (a hyperparameter) is not a float scalar: ",
                      DataTypeString(s.dtype()), " ", s.shape().DebugString())));
      slots.scalars.push_back(FloatData(s));
    }
    slots.grad = &ctx->input(grad_index);
    std::vector<Var*> vars;
    for (int i = 0; i < num_vars_; ++i) {
      absl::StatusOr<Var*> var = VarOf(ctx->input(i), i == 0 ? "var" : "an accumulator");
      OP_REQUIRES_OK(ctx, var.status());
      OP_REQUIRES(ctx, (*var)->dtype() == DT_FLOAT,
                  absl::InvalidArgumentError(
                      absl::StrCat("variable ", (*var)->name(), " is ",
                                   DataTypeString((*var)->dtype()), ", the update is float")));
      OP_REQUIRES_OK(ctx, CheckUpdatable(**var, resource_));
      vars.push_back(*var);
    }
    absl::StatusOr<void*> stream = Stream(ctx);
    OP_REQUIRES_OK(ctx, stream.status());
    slots.stream = *stream;
    OP_REQUIRES_OK(ctx, Nest(ctx, vars, 0, &slots));
    if (!resource_) ctx->set_output(0, ctx->input(0));
  }

 protected:
  struct Slots {
    void* stream = nullptr;
    std::vector<Tensor*> vars;          // var, then the slots
    std::vector<const float*> scalars;  // device pointers, in input order
    const Tensor* grad = nullptr;
  };
  // Queues the update of every element.
  virtual absl::Status Launch(const Slots& s, int64_t n) = 0;

  bool nesterov_ = false;

 private:
  absl::Status Nest(OpKernelContext* ctx, const std::vector<Var*>& vars, size_t k, Slots* slots) {
    if (k == vars.size()) {
      GR_RETURN_IF_ERROR(CheckShapes(*slots, vars));
      return Launch(*slots, slots->vars[0]->NumElements());
    }
    Var* var = vars[k];
    const std::string uninitialized =
        resource_ ? UninitializedResourceMessage(*var) : UninitializedRefMessage(*var);
    void* stream = slots->stream;
    const BufferCopy copy = [stream](const void* src, void* dst, size_t bytes) {
      return gpu::CopyOnDevice(stream, src, dst, static_cast<int64_t>(bytes));
    };
    return var->Update(
        uninitialized, ctx->device()->allocator(),
        [&](Tensor* t) {
          slots->vars.push_back(t);
          absl::Status s = Nest(ctx, vars, k + 1, slots);
          slots->vars.pop_back();
          return s;
        },
        copy);
  }

  static absl::Status CheckShapes(const Slots& slots, const std::vector<Var*>& vars) {
    const Tensor& var = *slots.vars[0];
    for (size_t i = 1; i < slots.vars.size(); ++i) {
      if (slots.vars[i]->shape() != var.shape()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "var and ", vars[i]->name(), " do not have the same shape",
            var.shape().DebugString(), " ", slots.vars[i]->shape().DebugString()));
      }
    }
    if (slots.grad->dtype() != DT_FLOAT) {
      return absl::InvalidArgumentError(absl::StrCat("grad is ",
                                                     DataTypeString(slots.grad->dtype()),
                                                     ", variable ", vars[0]->name(), " is float"));
    }
    if (slots.grad->shape() != var.shape()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "var and grad do not have the same shape", var.shape().DebugString(), " ",
          slots.grad->shape().DebugString(), " (variable ", vars[0]->name(), ")"));
    }
    return absl::OkStatus();
  }

  const int num_vars_, num_scalars_, num_trailing_;
  bool resource_ = false;
};

// var, alpha, delta.
class GradientDescentOp : public ApplyOp {
 public:
  explicit GradientDescentOp(OpKernelConstruction* c) : ApplyOp(c, 1, 1) {}

 private:
  absl::Status Launch(const Slots& s, int64_t n) override {
    return gpu::ApplyGradientDescent(s.stream, FloatData(s.vars[0]), s.scalars[0],
                                     FloatData(*s.grad), n);
  }
};

// var, accum, lr, grad, momentum.
class MomentumOp : public ApplyOp {
 public:
  explicit MomentumOp(OpKernelConstruction* c) : ApplyOp(c, 2, 1, 1) {}

 private:
  absl::Status Launch(const Slots& s, int64_t n) override {
    return gpu::ApplyMomentum(s.stream, FloatData(s.vars[0]), FloatData(s.vars[1]), s.scalars[0],
                              FloatData(*s.grad), s.scalars[1], nesterov_, n);
  }
};

// var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad.
class AdamOp : public ApplyOp {
 public:
  explicit AdamOp(OpKernelConstruction* c) : ApplyOp(c, 3, 6) {}

 private:
  absl::Status Launch(const Slots& s, int64_t n) override {
    gpu::AdamHyper h;
    h.beta1_power = s.scalars[0];
    h.beta2_power = s.scalars[1];
    h.lr = s.scalars[2];
    h.beta1 = s.scalars[3];
    h.beta2 = s.scalars[4];
    h.epsilon = s.scalars[5];
    return gpu::ApplyAdam(s.stream, FloatData(s.vars[0]), FloatData(s.vars[1]),
                          FloatData(s.vars[2]), h, FloatData(*s.grad), nesterov_, n);
  }
};

// BiasAddGrad: the sum over every dim but the channels', as reductions: one
// over the rows (channels last), or over each image's positions and then
// the batch (NCHW).
class BiasAddGradOp : public GpuKernel {
 public:
  explicit BiasAddGradOp(OpKernelConstruction* c) : GpuKernel(c) {
    std::string format = "NHWC";
    if (c->attrs().Find("data_format") != nullptr) {
      OP_REQUIRES_OK(c, c->GetAttr("data_format", &format));
    }
    OP_REQUIRES(c, format == "NHWC" || format == "NCHW",
                absl::InvalidArgumentError("Invalid data format"));
    nchw_ = format == "NCHW";
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    OP_REQUIRES(ctx, in.dims() >= 2,
                absl::InvalidArgumentError(
                    absl::StrCat("Input tensor must be at least 2D: ", in.shape().DebugString())));
    const int64_t channels = in.dim_size(nchw_ ? 1 : in.dims() - 1);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({channels}), &out));
    if (channels == 0) return;
    absl::StatusOr<void*> stream = Stream(ctx);
    OP_REQUIRES_OK(ctx, stream.status());
    const int64_t n = in.NumElements();
    if (n == 0) {
      OP_REQUIRES_OK(ctx, gpu::Zero(*stream, out->raw_data(),
                                    static_cast<int64_t>(out->TotalBytes())));
      return;
    }
    const int64_t outer = in.dim_size(0);
    const int64_t inner = nchw_ ? n / (outer * channels) : 1;
    if (!nchw_ || inner == 1) {
      OP_REQUIRES_OK(ctx, gpu::Reduce(*stream, gpu::ReduceOp::kSum, FloatData(in),
                                      FloatData(out), 1, n / channels, channels));
      return;
    }
    Tensor per_image;
    OP_REQUIRES_OK(ctx, ctx->allocate_temp(DT_FLOAT, TensorShape({outer, channels}), &per_image));
    OP_REQUIRES_OK(ctx, gpu::Reduce(*stream, gpu::ReduceOp::kSum, FloatData(in),
                                    FloatData(&per_image), outer * channels, inner, 1));
    OP_REQUIRES_OK(ctx, gpu::Reduce(*stream, gpu::ReduceOp::kSum, FloatData(per_image),
                                    FloatData(out), 1, outer, channels));
  }

 private:
  bool nchw_ = false;
};

// The ref form as is; the resource form with its handles in host memory.
void RegisterBothForms(const std::string& name, const std::vector<const char*>& state,
                       const KernelFactory& factory) {
  KernelRegistry::Global()->Register(KernelDefBuilder(absl::StrCat("Apply", name))
                                         .Device(kDeviceGpu)
                                         .TypeConstraint<float>("T")
                                         .Build(factory));
  KernelDefBuilder resource(absl::StrCat("ResourceApply", name));
  resource.Device(kDeviceGpu).TypeConstraint<float>("T");
  for (const char* arg : state) resource.HostMemory(arg);
  KernelRegistry::Global()->Register(resource.Build(factory));
}

template <typename Kernel>
OpKernel* Make(OpKernelConstruction* c) {
  return new Kernel(c);
}

const bool kRegistered = [] {
  RegisterBothForms("GradientDescent", {"var"}, Make<GradientDescentOp>);
  RegisterBothForms("Momentum", {"var", "accum"}, Make<MomentumOp>);
  RegisterBothForms("Adam", {"var", "m", "v"}, Make<AdamOp>);
  return true;
}();

REGISTER_KERNEL(KernelDefBuilder("BiasAddGrad").Device(kDeviceGpu).TypeConstraint<float>("T"),
                BiasAddGradOp);

}  // namespace
}  // namespace graphrun
