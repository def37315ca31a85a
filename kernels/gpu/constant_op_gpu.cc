// Const on a GPU: the value is copied into the device's memory once, when
// the kernel is made, and every step hands out that tensor. int32 values
// stay in host memory (shapes, axes and sizes that host-side code reads), as
// TensorFlow's GPU Const.
#include <utility>

#include "absl/strings/str_cat.h"
#include "kernels/cpu/forward_ops.h"
#include "kernels/device_context.h"
#include "kernels/kernel_registry.h"

namespace graphrun {
namespace {

class GpuConstOp : public OpKernel {
 public:
  explicit GpuConstOp(OpKernelConstruction* c) : OpKernel(c) {
    set_expensive(false);
    absl::StatusOr<Tensor> host = ConstValue(c);
    if (!host.ok()) {
      c->SetStatus(host.status());
      return;
    }
    DeviceContext* context = c->device()->device_context();
    if (context == nullptr) {
      c->SetStatus(absl::FailedPreconditionError(
          absl::StrCat(c->device()->name(), " has no device context to copy a constant with")));
      return;
    }
    absl::StatusOr<Tensor> on_device =
        Tensor::Allocate(c->device()->allocator(), host->dtype(), host->shape(),
                         TensorBuffer::Init::kUninitialized);
    if (!on_device.ok()) {
      c->SetStatus(absl::ResourceExhaustedError(absl::StrCat(
          "cannot allocate ", host->TotalBytes(), " bytes on ", c->device()->name(),
          " for the constant")));
      return;
    }
    // Kernels are made once per plan, off the step's path: waiting here
    // costs a step nothing.
    const absl::Status status = WaitFor([&](StatusCallback done) {
      context->CopyCpuTensorToDevice(*host, &*on_device, std::move(done));
    });
    if (!status.ok()) {
      c->SetStatus(status);
      return;
    }
    tensor_ = *std::move(on_device);
  }
  void Compute(OpKernelContext* ctx) override { ctx->set_output(0, tensor_); }

 private:
  Tensor tensor_;
};

REGISTER_KERNEL(KernelDefBuilder("Const")
                    .Device(kDeviceGpu)
                    .TypeConstraint("dtype", {DT_FLOAT, DT_DOUBLE, DT_HALF, DT_BFLOAT16, DT_INT64,
                                              DT_INT8, DT_UINT8, DT_INT16, DT_BOOL}),
                GpuConstOp);
const internal::KernelRegistrar kHostConst(KernelDefBuilder("Const")
                                               .Device(kDeviceGpu)
                                               .TypeConstraint<int32_t>("dtype")
                                               .HostMemory("output")
                                               .Build(NewHostConstOp));

}  // namespace
}  // namespace graphrun
