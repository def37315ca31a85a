#include "kernels/op_kernel.h"

#include <new>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"

namespace graphrun {

namespace {

// The kernel's own copy of its NodeDef, for names in messages: tensor attrs
// bigger than this keep their dtype and shape but not their values, which
// the constructor has read already (a Const holding a layer's weights would
// otherwise be held twice).
constexpr size_t kMaxKeptTensorAttrBytes = 1024;

NodeDef KernelDef(const NodeDef& def) {
  bool big = false;
  for (const auto& [name, value] : def.attr()) {
    if (value.has_tensor() && value.tensor().ByteSizeLong() > kMaxKeptTensorAttrBytes) {
      big = true;
    }
  }
  if (!big) return def;
  NodeDef out;
  out.set_name(def.name());
  out.set_op(def.op());
  out.set_device(def.device());
  *out.mutable_input() = def.input();
  if (def.has_experimental_debug_info()) {
    *out.mutable_experimental_debug_info() = def.experimental_debug_info();
  }
  for (const auto& [name, value] : def.attr()) {
    if (value.has_tensor() && value.tensor().ByteSizeLong() > kMaxKeptTensorAttrBytes) {
      TensorProto* t = (*out.mutable_attr())[name].mutable_tensor();
      t->set_dtype(value.tensor().dtype());
      *t->mutable_tensor_shape() = value.tensor().tensor_shape();
    } else {
      (*out.mutable_attr())[name] = value;
    }
  }
  return out;
}

}  // namespace

OpKernel::OpKernel(OpKernelConstruction* ctx)
    : input_types_(ctx->input_types().begin(), ctx->input_types().end()),
      output_types_(ctx->output_types().begin(), ctx->output_types().end()),
      output_on_host_(ctx->output_on_host().begin(), ctx->output_on_host().end()),
      def_(KernelDef(ctx->def())) {}

void AsyncOpKernel::Compute(OpKernelContext* ctx) {
  absl::Notification n;
  ComputeAsync(ctx, [&n] { n.Notify(); });
  n.WaitForNotification();
}

bool CancellationManager::Register(int64_t token, Callback cb) {
  absl::MutexLock lock(&mu_);
  if (cancelled_.load(std::memory_order_relaxed)) return false;
  callbacks_.emplace(token, std::move(cb));
  return true;
}

void CancellationManager::Deregister(int64_t token) {
  {
    absl::MutexLock lock(&mu_);
    if (callbacks_.erase(token) > 0) return;
    if (!cancelled_.load(std::memory_order_relaxed)) return;
  }
  // Not found and cancelling: the callback may be running right now.
  callbacks_done_.WaitForNotification();
}

void CancellationManager::TryDeregister(int64_t token) {
  absl::MutexLock lock(&mu_);
  callbacks_.erase(token);
}

void CancellationManager::StartCancel() {
  absl::flat_hash_map<int64_t, Callback> callbacks;
  {
    absl::MutexLock lock(&mu_);
    if (cancelled_.exchange(true, std::memory_order_acq_rel)) return;
    callbacks.swap(callbacks_);
  }
  // Outside the lock: callbacks may register or deregister others.
  for (auto& [token, cb] : callbacks) cb();
  callbacks_done_.Notify();
}

OpKernelContext::OpKernelContext(Params* params)
    : params_(params), outputs_(params->op_kernel->num_outputs()) {}


absl::Status OpKernelContext::allocate_output(int i, const TensorShape& shape,
                                              Tensor** out) {
  // Kernels overwrite their outputs: no zero fill (a 16 MB output would
  // otherwise cost a memset and its page faults on every step).
  auto t = Tensor::Allocate(output_allocator(i), expected_output_dtype(i), shape,
                            TensorBuffer::Init::kUninitialized);
  if (!t.ok()) return t.status();
  outputs_[i] = *std::move(t);
  *out = &outputs_[i];
  return absl::OkStatus();
}

bool OpKernelContext::forward_input(int input, int output, const TensorShape& shape,
                                    Tensor** out) {
  Tensor& in = params_->inputs[input];
  // Only the sole holder of a whole buffer may write into it: a Const's
  // value, a fed tensor or a tensor another consumer still reads is shared.
  if (!(in.dtype() == expected_output_dtype(output) && in.dtype() != DT_STRING &&
        in.NumElements() == shape.num_elements() && in.RefCountIsOne() &&
        in.IsWholeBuffer() && in.buffer_allocator() == output_allocator(output))) {
    return false;
  }
  if (in.shape() == shape) {
    // The input is the output as it is: the output owns it now.
    outputs_[output] = std::move(in);
  } else {
    auto reshaped = in.Reshaped(shape);
    if (!reshaped.ok()) return false;
    outputs_[output] = *std::move(reshaped);
  }
  // Drop the input's reference, resetting the slot in place (assigning a
  // temporary Tensor() costs a stack round trip on this path).
  in.~Tensor();
  new (&in) Tensor();
  *out = &outputs_[output];
  return true;
}

absl::Status OpKernelContext::forward_input_or_allocate_output(
    int input, int output, const TensorShape& shape, Tensor** out) {
  if (forward_input(input, output, shape, out)) return absl::OkStatus();
  return allocate_output(output, shape, out);
}

Allocator* OpKernelContext::output_allocator(int i) const {
  if (params_->op_kernel->output_on_host(i)) {
    AllocatorAttributes host;
    host.on_host = true;
    return params_->device->GetAllocator(host);
  }
  return params_->device->allocator();
}

absl::Status OpKernelContext::allocate_temp(DataType dtype,
                                            const TensorShape& shape,
                                            Tensor* out, AllocatorAttributes attr) {
  auto t = Tensor::Allocate(attr.on_host ? params_->device->GetAllocator(attr)
                                         : params_->device->allocator(),
                            dtype, shape, TensorBuffer::Init::kUninitialized);
  if (!t.ok()) return t.status();
  *out = *std::move(t);
  return absl::OkStatus();
}

void OpKernelContext::set_output(int i, Tensor tensor) {
  outputs_[i] = std::move(tensor);
}

void OpKernelContext::SetStatus(const absl::Status& status) {
  if (status_.ok() && !status.ok()) status_ = status;
}

}  // namespace graphrun
