// CPU kernels of SaveV2, RestoreV2, MergeV2Checkpoints, ShardedFilename and
// ShardedFilespec (graph/ops/io_ops.cc) over the
// tensor-bundle library (graph/checkpoint/tensor_bundle.h), with
// TensorFlow's checks and messages (core/kernels/save_restore_v2_ops.cc):
// a graph's own Saver writes checkpoints TensorFlow reads and reads
// TensorFlow's. Whole tensors only: a shape_and_slices entry that names a
// slice is refused. A save writes beside the target and renames, so a save
// killed midway leaves the checkpoint that was there.
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "graph/checkpoint/merge_bundles.h"
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

std::string Dirname(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

// The last step of a sharded save: the shards' bundles become one
// checkpoint; with delete_old_dirs, the shards' (now empty) temporary
// directories are removed.
class MergeV2CheckpointsOp : public OpKernel {
 public:
  explicit MergeV2CheckpointsOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("delete_old_dirs", &delete_old_dirs_));
    OP_REQUIRES_OK(c, c->GetAttr("allow_missing_files", &allow_missing_files_));
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& sources = ctx->input(0);
    const Tensor& destination = ctx->input(1);
    OP_REQUIRES(ctx, sources.dtype() == DT_STRING && sources.shape().dims() == 1,
                absl::InvalidArgumentError(absl::StrCat(
                    "Input checkpoint_prefixes should be an 1-D tensor, got ",
                    sources.shape().DebugString(), " instead.")));
    OP_REQUIRES(ctx, destination.dtype() == DT_STRING && destination.shape().dims() == 0,
                absl::InvalidArgumentError(absl::StrCat(
                    "Input destination_prefix should be a scalar tensor, got ",
                    destination.shape().DebugString(), " instead.")));
    const std::vector<std::string> prefixes(sources.flat<std::string>().begin(),
                                            sources.flat<std::string>().end());
    const std::string& merged = destination.scalar<std::string>();
    OP_REQUIRES_OK(ctx, MergeBundles(prefixes, merged, allow_missing_files_));
    if (delete_old_dirs_) {
      const std::string merged_dir = Dirname(merged);
      for (const std::string& prefix : prefixes) {
        const std::string dir = Dirname(prefix);
        if (dir != merged_dir) ::rmdir(dir.c_str());  // best effort: only if empty
      }
    }
  }

 private:
  bool delete_old_dirs_ = true;
  bool allow_missing_files_ = false;
};

absl::Status ScalarInputs(OpKernelContext* ctx) {
  for (int i = 0; i < ctx->num_inputs(); ++i) {
    if (ctx->input(i).shape().dims() != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input ", i, " of ", ctx->op_kernel().type_string(), " must be a scalar, got ",
          ctx->input(i).shape().DebugString()));
    }
  }
  return absl::OkStatus();
}

class ShardedFilenameOp : public OpKernel {
 public:
  explicit ShardedFilenameOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES_OK(ctx, ScalarInputs(ctx));
    ctx->set_output(0, Tensor::Scalar<std::string>(absl::StrFormat(
                           "%s-%05d-of-%05d", ctx->input(0).scalar<std::string>(),
                           ctx->input(1).scalar<int32_t>(), ctx->input(2).scalar<int32_t>())));
  }
};

class ShardedFilespecOp : public OpKernel {
 public:
  explicit ShardedFilespecOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES_OK(ctx, ScalarInputs(ctx));
    ctx->set_output(0, Tensor::Scalar<std::string>(
                           absl::StrFormat("%s-\?\?\?\?\?-of-%05d", ctx->input(0).scalar<std::string>(),
                                           ctx->input(1).scalar<int32_t>())));
  }
};

REGISTER_KERNEL(KernelDefBuilder("SaveV2").Device(kDeviceCpu), SaveV2Op);
REGISTER_KERNEL(KernelDefBuilder("RestoreV2").Device(kDeviceCpu), RestoreV2Op);
REGISTER_KERNEL(KernelDefBuilder("MergeV2Checkpoints").Device(kDeviceCpu), MergeV2CheckpointsOp);
REGISTER_KERNEL(KernelDefBuilder("ShardedFilename").Device(kDeviceCpu), ShardedFilenameOp);
REGISTER_KERNEL(KernelDefBuilder("ShardedFilespec").Device(kDeviceCpu), ShardedFilespecOp);

}  // namespace
}  // namespace graphrun
