// CPU kernels of SaveV2 and RestoreV2 (graph/ops/io_ops.cc) over the
// tensor-bundle library (graph/checkpoint/tensor_bundle.h), with
// TensorFlow's checks and messages (core/kernels/save_restore_v2_ops.cc):
// a graph's own Saver writes checkpoints TensorFlow reads and reads
// TensorFlow's. Whole tensors only: a shape_and_slices entry that names a
// slice is refused. A save writes beside the target and renames, so a save
// killed midway leaves the checkpoint that was there.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/checkpoint/tensor_bundle.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace {

absl::Status CheckInputs(OpKernelContext* ctx, int64_t num_tensors, std::string* prefix) {
  const Tensor& p = ctx->input(0);
  const Tensor& names = ctx->input(1);
  const Tensor& slices = ctx->input(2);
  if (p.dtype() != DT_STRING || p.NumElements() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Input prefix should have a single element, got ", p.NumElements(), "."));
  }
  if (names.NumElements() != num_tensors || slices.NumElements() != num_tensors) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Got ", names.NumElements(), " tensor names, ", slices.NumElements(),
        " shape_and_slices and ", num_tensors, " tensors; they must agree"));
  }
  for (int64_t i = 0; i < num_tensors; ++i) {
    if (!slices.flat<std::string>()[i].empty()) {
      return absl::UnimplementedError(absl::StrCat(
          "tensor ", names.flat<std::string>()[i], ": saving or restoring a slice ('",
          slices.flat<std::string>()[i], "') is not supported; only whole tensors"));
    }
  }
  *prefix = p.flat<std::string>()[0];
  return absl::OkStatus();
}

class SaveV2Op : public OpKernel {
 public:
  explicit SaveV2Op(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    const int64_t n = ctx->num_inputs() - 3;
    std::string prefix;
    OP_REQUIRES_OK(ctx, CheckInputs(ctx, n, &prefix));
    BundleWriter writer(prefix);
    for (int64_t i = 0; i < n; ++i) {
      OP_REQUIRES_OK(ctx, writer.Add(ctx->input(1).flat<std::string>()[i], ctx->input(3 + i)));
    }
    OP_REQUIRES_OK(ctx, writer.Finish());
  }
};

class RestoreV2Op : public OpKernel {
 public:
  explicit RestoreV2Op(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("dtypes", &dtypes_));
  }
  void Compute(OpKernelContext* ctx) override {
    const int64_t n = static_cast<int64_t>(dtypes_.size());
    std::string prefix;
    OP_REQUIRES_OK(ctx, CheckInputs(ctx, n, &prefix));
    absl::StatusOr<std::unique_ptr<BundleReader>> reader = BundleReader::Open(prefix);
    OP_REQUIRES_OK(ctx, reader.status());
    for (int64_t i = 0; i < n; ++i) {
      const std::string& name = ctx->input(1).flat<std::string>()[i];
      absl::StatusOr<Tensor> t = (*reader)->Lookup(name);
      OP_REQUIRES_OK(ctx, t.status());
      OP_REQUIRES(ctx, t->dtype() == dtypes_[i],
                  absl::InvalidArgumentError(absl::StrCat(
                      "tensor ", name, " in checkpoint ", prefix, " is ",
                      DataTypeString(t->dtype()), ", the graph restores it as ",
                      DataTypeString(dtypes_[i]))));
      ctx->set_output(static_cast<int>(i), *std::move(t));
    }
  }

 private:
  std::vector<DataType> dtypes_;
};

REGISTER_KERNEL(KernelDefBuilder("SaveV2").Device(kDeviceCpu), SaveV2Op);
REGISTER_KERNEL(KernelDefBuilder("RestoreV2").Device(kDeviceCpu), RestoreV2Op);

}  // namespace
}  // namespace graphrun
