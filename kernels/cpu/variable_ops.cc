// CPU kernels of the variable ops (graph/ops/state_ops.cc), with
// TensorFlow's semantics and messages (core/kernels/variable_ops.cc,
// dense_update_ops.cc, resource_variable_ops.cc). Both kinds of variable
// are a Var (kernels/variable.h) in the device's ResourceMgr, found by
// (container, shared_name or else the node's name), so a variable made by
// one step is the one the next step reads. VariableV2 and VarHandleOp
// output the same DT_RESOURCE scalar pointing to it: for VariableV2 it
// travels on a Ref(dtype) edge, and the executor reads the value where such
// an edge ends at an input that is not a ref. Other device types register
// the same kernels with their own copies (variable_ops.h).
#include "kernels/cpu/variable_ops.h"

#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "graph/status_macros.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"
#include "kernels/resource_mgr.h"
#include "kernels/variable.h"

namespace graphrun {
namespace {

// What the kernels share: the device's ways of copying and adding to a
// variable's elements (empty on CPUs).
class VariableKernelBase : public OpKernel {
 public:
  VariableKernelBase(OpKernelConstruction* c, VariableDeviceOps ops)
      : OpKernel(c), ops_(std::move(ops)) {}

 protected:
  // The copy Var takes, for this kernel's device.
  BufferCopy CopyOn(OpKernelContext* ctx) const {
    if (!ops_.copy) return {};
    return [this, ctx](const void* src, void* dst, size_t bytes) {
      return ops_.copy(ctx, src, dst, bytes);
    };
  }
  const VariableDeviceOps ops_;
};

// VariableV2 and VarHandleOp: the Var of this node, made on first use.
class VariableOp : public VariableKernelBase {
 public:
  explicit VariableOp(OpKernelConstruction* c, VariableDeviceOps ops = {})
      : VariableKernelBase(c, std::move(ops)) {
    OP_REQUIRES_OK(c, c->GetAttr("dtype", &dtype_));
    OP_REQUIRES_OK(c, c->GetAttr("shape", &shape_));
    OP_REQUIRES_OK(c, c->GetAttr("container", &container_));
    OP_REQUIRES_OK(c, c->GetAttr("shared_name", &shared_name_));
    if (container_.empty()) container_ = ResourceMgr::kDefaultContainer;
    if (shared_name_.empty()) shared_name_ = name();
    set_expensive(false);
  }

  void Compute(OpKernelContext* ctx) override {
    absl::MutexLock lock(&mu_);
    if (var_ == nullptr) {
      ResourceMgr* mgr = ctx->device()->resource_manager();
      OP_REQUIRES(ctx, mgr != nullptr,
                  absl::FailedPreconditionError(absl::StrCat(
                      ctx->device()->name(), " keeps no state: no variable can live there")));
      absl::StatusOr<std::shared_ptr<Var>> var = mgr->LookupOrCreate<Var>(
          container_, shared_name_, [this]() -> absl::StatusOr<std::shared_ptr<Var>> {
            return std::make_shared<Var>(shared_name_, dtype_, shape_);
          });
      OP_REQUIRES_OK(ctx, var.status());
      OP_REQUIRES(ctx, (*var)->dtype() == dtype_,
                  absl::InvalidArgumentError(absl::StrCat(
                      "variable ", shared_name_, " exists with dtype ",
                      DataTypeString((*var)->dtype()), ", this op declares ",
                      DataTypeString(dtype_))));
      var_ = *std::move(var);
    }
    ctx->set_output(0, RefTensor(var_));
  }

 private:
  DataType dtype_ = DT_FLOAT;
  PartialShape shape_;
  std::string container_, shared_name_;
  absl::Mutex mu_;
  std::shared_ptr<Var> var_ ABSL_GUARDED_BY(mu_);
};

// a += b or a -= b, elementwise, for the variable's dtype.
template <typename T>
void Accumulate(Tensor* a, const Tensor& b, bool add) {
  absl::Span<T> x = a->flat<T>();
  absl::Span<const T> y = b.flat<T>();
  if (add) {
    for (size_t i = 0; i < x.size(); ++i) x[i] += y[i];
  } else {
    for (size_t i = 0; i < x.size(); ++i) x[i] -= y[i];
  }
}

absl::Status AccumulateInto(OpKernelContext* ctx, const VariableDeviceOps& ops, Tensor* var,
                            const Tensor& value, bool add) {
  if (var->shape() != value.shape()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Must have the same shape. lhs shape= ", var->shape().DebugString(),
        " rhs shape= ", value.shape().DebugString()));
  }
  if (ops.accumulate) return ops.accumulate(ctx, var, value, add);
  switch (var->dtype()) {
    case DT_FLOAT: Accumulate<float>(var, value, add); break;
    case DT_DOUBLE: Accumulate<double>(var, value, add); break;
    case DT_INT32: Accumulate<int32_t>(var, value, add); break;
    case DT_INT64: Accumulate<int64_t>(var, value, add); break;
    default:
      return absl::UnimplementedError(absl::StrCat(
          "no CPU kernel adds into a ", DataTypeString(var->dtype()), " variable"));
  }
  return absl::OkStatus();
}

// Assign(ref, value): the ref passes on.
class AssignOp : public VariableKernelBase {
 public:
  explicit AssignOp(OpKernelConstruction* c, VariableDeviceOps ops = {})
      : VariableKernelBase(c, std::move(ops)) {
    OP_REQUIRES_OK(c, c->GetAttr("validate_shape", &validate_shape_));
  }
  void Compute(OpKernelContext* ctx) override {
    absl::StatusOr<Var*> var = VarOf(ctx->input(0), "Assign's ref");
    OP_REQUIRES_OK(ctx, var.status());
    OP_REQUIRES_OK(ctx, (*var)->Assign(ctx->input(1), validate_shape_, ctx->device()->allocator(),
                                       CopyOn(ctx)));
    ctx->set_output(0, ctx->input(0));
  }

 private:
  bool validate_shape_ = true;
};

// AssignAdd / AssignSub (ref) and AssignAddVariableOp / AssignSubVariableOp
// (resource): in place, copying first where a read still holds the value.
class AssignUpdateOp : public VariableKernelBase {
 public:
  explicit AssignUpdateOp(OpKernelConstruction* c, VariableDeviceOps ops = {})
      : VariableKernelBase(c, std::move(ops)) {
    const std::string& op = type_string();
    add_ = op == "AssignAdd" || op == "AssignAddVariableOp";
    resource_ = op == "AssignAddVariableOp" || op == "AssignSubVariableOp";
  }
  void Compute(OpKernelContext* ctx) override {
    absl::StatusOr<Var*> var = VarOf(ctx->input(0), resource_ ? "resource" : "ref");
    OP_REQUIRES_OK(ctx, var.status());
    const Tensor& value = ctx->input(1);
    OP_REQUIRES(ctx, value.dtype() == (*var)->dtype(),
                absl::InvalidArgumentError(absl::StrCat(
                    "Trying to update variable ", (*var)->name(), " of dtype ",
                    DataTypeString((*var)->dtype()), " with a ",
                    DataTypeString(value.dtype()), " value")));
    const std::string uninitialized = resource_ ? UninitializedResourceMessage(**var)
                                                : UninitializedRefMessage(**var);
    OP_REQUIRES_OK(ctx, (*var)->Update(
                            uninitialized, ctx->device()->allocator(),
                            [&](Tensor* t) { return AccumulateInto(ctx, ops_, t, value, add_); },
                            CopyOn(ctx)));
    if (!resource_) ctx->set_output(0, ctx->input(0));
  }

 private:
  bool add_ = true;
  bool resource_ = false;
};

// IsVariableInitialized (ref) and VarIsInitializedOp (resource).
class IsInitializedOp : public VariableKernelBase {
 public:
  explicit IsInitializedOp(OpKernelConstruction* c, VariableDeviceOps ops = {})
      : VariableKernelBase(c, std::move(ops)) {
    set_expensive(false);
  }
  void Compute(OpKernelContext* ctx) override {
    absl::StatusOr<Var*> var = VarOf(ctx->input(0), "the variable");
    OP_REQUIRES_OK(ctx, var.status());
    ctx->set_output(0, Tensor::Scalar<bool>((*var)->initialized()));
  }
};

class ReadVariableOp : public VariableKernelBase {
 public:
  explicit ReadVariableOp(OpKernelConstruction* c, VariableDeviceOps ops = {})
      : VariableKernelBase(c, std::move(ops)) {
    OP_REQUIRES_OK(c, c->GetAttr("dtype", &dtype_));
    set_expensive(false);
  }
  void Compute(OpKernelContext* ctx) override {
    absl::StatusOr<Var*> var = VarOf(ctx->input(0), "resource");
    OP_REQUIRES_OK(ctx, var.status());
    OP_REQUIRES(ctx, (*var)->dtype() == dtype_,
                absl::InvalidArgumentError(absl::StrCat(
                    "Trying to read variable ", (*var)->name(),
                    " with wrong dtype. Expected ", DataTypeString((*var)->dtype()), " got ",
                    DataTypeString(dtype_))));
    absl::StatusOr<Tensor> value = (*var)->Read(UninitializedResourceMessage(**var));
    OP_REQUIRES_OK(ctx, value.status());
    ctx->set_output(0, *std::move(value));
  }

 private:
  DataType dtype_ = DT_FLOAT;
};

class AssignVariableOp : public VariableKernelBase {
 public:
  explicit AssignVariableOp(OpKernelConstruction* c, VariableDeviceOps ops = {})
      : VariableKernelBase(c, std::move(ops)) {
    OP_REQUIRES_OK(c, c->GetAttr("validate_shape", &validate_shape_));
  }
  void Compute(OpKernelContext* ctx) override {
    absl::StatusOr<Var*> var = VarOf(ctx->input(0), "resource");
    OP_REQUIRES_OK(ctx, var.status());
    OP_REQUIRES_OK(ctx, (*var)->Assign(ctx->input(1), validate_shape_, ctx->device()->allocator(),
                                       CopyOn(ctx)));
  }

 private:
  bool validate_shape_ = false;
};

// The variable's shape, as an int32 or int64 vector.
class VariableShapeOp : public VariableKernelBase {
 public:
  explicit VariableShapeOp(OpKernelConstruction* c, VariableDeviceOps ops = {})
      : VariableKernelBase(c, std::move(ops)) {
    set_expensive(false);
  }
  void Compute(OpKernelContext* ctx) override {
    absl::StatusOr<Var*> var = VarOf(ctx->input(0), "resource");
    OP_REQUIRES_OK(ctx, var.status());
    absl::StatusOr<Tensor> value = (*var)->Read(UninitializedResourceMessage(**var));
    OP_REQUIRES_OK(ctx, value.status());
    const int rank = value->dims();
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({rank}), &out));
    for (int d = 0; d < rank; ++d) {
      if (out->dtype() == DT_INT64) {
        out->flat<int64_t>()[d] = value->dim_size(d);
      } else {
        out->flat<int32_t>()[d] = static_cast<int32_t>(value->dim_size(d));
      }
    }
  }
};

// Forgets the variable: later reads fail as uninitialized, and the device's
// ResourceMgr no longer holds it.
class DestroyResourceOp : public VariableKernelBase {
 public:
  explicit DestroyResourceOp(OpKernelConstruction* c, VariableDeviceOps ops = {})
      : VariableKernelBase(c, std::move(ops)) {
    OP_REQUIRES_OK(c, c->GetAttr("ignore_lookup_error", &ignore_lookup_error_));
  }
  void Compute(OpKernelContext* ctx) override {
    absl::StatusOr<Var*> var = VarOf(ctx->input(0), "resource");
    OP_REQUIRES_OK(ctx, var.status());
    (*var)->Reset();
    ResourceMgr* mgr = ctx->device()->resource_manager();
    bool found = false;
    if (mgr != nullptr) {
      for (const auto& [container, name] : mgr->List()) {
        absl::StatusOr<std::shared_ptr<Var>> held = mgr->Lookup<Var>(container, name);
        if (held.ok() && held->get() == *var) {
          found = mgr->Delete(container, name).ok();
          break;
        }
      }
    }
    OP_REQUIRES(ctx, found || ignore_lookup_error_,
                absl::NotFoundError(absl::StrCat("Resource ", (*var)->name(),
                                                 " does not exist.")));
  }

 private:
  bool ignore_lookup_error_ = true;
};

absl::StatusOr<std::vector<int64_t>> Indices(const Tensor& t, int64_t rows) {
  std::vector<int64_t> out(static_cast<size_t>(t.NumElements()));
  for (int64_t i = 0; i < t.NumElements(); ++i) {
    out[i] = t.dtype() == DT_INT32 ? t.flat<int32_t>()[i] : t.flat<int64_t>()[i];
    if (out[i] < 0 || out[i] >= rows) {
      return absl::InvalidArgumentError(absl::StrCat(
          "indices[", i, "] = ", out[i], " is not in [0, ", rows, ")"));
    }
  }
  return out;
}

// ResourceGather (batch_dims 0): rows of the variable.
class ResourceGatherOp : public OpKernel {
 public:
  explicit ResourceGatherOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("batch_dims", &batch_dims_));
  }
  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES(ctx, batch_dims_ == 0,
                absl::UnimplementedError("ResourceGather with batch_dims != 0"));
    absl::StatusOr<Var*> var = VarOf(ctx->input(0), "resource");
    OP_REQUIRES_OK(ctx, var.status());
    absl::StatusOr<Tensor> value = (*var)->Read(UninitializedResourceMessage(**var));
    OP_REQUIRES_OK(ctx, value.status());
    OP_REQUIRES(ctx, value->dims() >= 1 && value->dtype() != DT_STRING,
                absl::InvalidArgumentError(absl::StrCat(
                    "ResourceGather: variable ", (*var)->name(), " must be at least 1-D and "
                    "numeric, is ", DataTypeString(value->dtype()), " ",
                    value->shape().DebugString())));
    absl::StatusOr<std::vector<int64_t>> rows = Indices(ctx->input(1), value->dim_size(0));
    OP_REQUIRES_OK(ctx, rows.status());
    TensorShape shape = ctx->input(1).shape();
    for (int d = 1; d < value->dims(); ++d) shape.AddDim(value->dim_size(d));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, shape, &out));
    const size_t row_bytes =
        value->dim_size(0) == 0 ? 0 : value->TotalBytes() / value->dim_size(0);
    for (size_t i = 0; i < rows->size(); ++i) {
      std::memcpy(static_cast<char*>(out->raw_data()) + i * row_bytes,
                  static_cast<const char*>(value->raw_data()) + (*rows)[i] * row_bytes,
                  row_bytes);
    }
  }

 private:
  int64_t batch_dims_ = 0;
};

// ResourceScatterAdd / ResourceScatterUpdate: rows of `updates` added to
// (written over) the variable's rows at `indices`, in order.
template <typename T>
void ScatterRows(Tensor* var, const std::vector<int64_t>& rows, const Tensor& updates, bool add) {
  const int64_t width = var->dim_size(0) == 0 ? 0 : var->NumElements() / var->dim_size(0);
  absl::Span<T> v = var->flat<T>();
  absl::Span<const T> u = updates.flat<T>();
  for (size_t i = 0; i < rows.size(); ++i) {
    T* dst = v.data() + rows[i] * width;
    const T* src = u.data() + static_cast<int64_t>(i) * width;
    for (int64_t k = 0; k < width; ++k) dst[k] = add ? dst[k] + src[k] : src[k];
  }
}

class ResourceScatterOp : public OpKernel {
 public:
  explicit ResourceScatterOp(OpKernelConstruction* c) : OpKernel(c) {
    add_ = type_string() == "ResourceScatterAdd";
  }
  void Compute(OpKernelContext* ctx) override {
    absl::StatusOr<Var*> var = VarOf(ctx->input(0), "resource");
    OP_REQUIRES_OK(ctx, var.status());
    const Tensor& indices = ctx->input(1);
    const Tensor& updates = ctx->input(2);
    OP_REQUIRES_OK(ctx, (*var)->Update(
        UninitializedResourceMessage(**var), ctx->device()->allocator(), [&](Tensor* v) {
          TensorShape want = indices.shape();
          for (int d = 1; d < v->dims(); ++d) want.AddDim(v->dim_size(d));
          if (v->dims() < 1 || updates.shape() != want) {
            return absl::InvalidArgumentError(absl::StrCat(
                "updates must have shape indices.shape + params.shape[1:] = ",
                want.DebugString(), ", got ", updates.shape().DebugString(),
                " (variable ", (*var)->name(), " of shape ", v->shape().DebugString(), ")"));
          }
          GR_ASSIGN_OR_RETURN(std::vector<int64_t> rows, Indices(indices, v->dim_size(0)));
          switch (v->dtype()) {
            case DT_FLOAT: ScatterRows<float>(v, rows, updates, add_); break;
            case DT_DOUBLE: ScatterRows<double>(v, rows, updates, add_); break;
            case DT_INT32: ScatterRows<int32_t>(v, rows, updates, add_); break;
            case DT_INT64: ScatterRows<int64_t>(v, rows, updates, add_); break;
            default:
              return absl::UnimplementedError(absl::StrCat(
                  "no CPU kernel scatters into a ", DataTypeString(v->dtype()), " variable"));
          }
          return absl::OkStatus();
        }));
  }

 private:
  bool add_ = true;
};

REGISTER_KERNEL(KernelDefBuilder("VariableV2").Device(kDeviceCpu), VariableOp);
REGISTER_KERNEL(KernelDefBuilder("VarHandleOp").Device(kDeviceCpu), VariableOp);
REGISTER_KERNEL(KernelDefBuilder("Assign").Device(kDeviceCpu), AssignOp);
REGISTER_KERNEL(KernelDefBuilder("AssignAdd").Device(kDeviceCpu), AssignUpdateOp);
REGISTER_KERNEL(KernelDefBuilder("AssignSub").Device(kDeviceCpu), AssignUpdateOp);
REGISTER_KERNEL(KernelDefBuilder("AssignAddVariableOp").Device(kDeviceCpu), AssignUpdateOp);
REGISTER_KERNEL(KernelDefBuilder("AssignSubVariableOp").Device(kDeviceCpu), AssignUpdateOp);
REGISTER_KERNEL(KernelDefBuilder("IsVariableInitialized").Device(kDeviceCpu), IsInitializedOp);
REGISTER_KERNEL(KernelDefBuilder("VarIsInitializedOp").Device(kDeviceCpu), IsInitializedOp);
REGISTER_KERNEL(KernelDefBuilder("ReadVariableOp").Device(kDeviceCpu), ReadVariableOp);
REGISTER_KERNEL(KernelDefBuilder("AssignVariableOp").Device(kDeviceCpu), AssignVariableOp);
REGISTER_KERNEL(KernelDefBuilder("DestroyResourceOp").Device(kDeviceCpu), DestroyResourceOp);
REGISTER_KERNEL(KernelDefBuilder("VariableShape").Device(kDeviceCpu), VariableShapeOp);
REGISTER_KERNEL(KernelDefBuilder("ResourceGather").Device(kDeviceCpu), ResourceGatherOp);
REGISTER_KERNEL(KernelDefBuilder("ResourceScatterAdd").Device(kDeviceCpu), ResourceScatterOp);
REGISTER_KERNEL(KernelDefBuilder("ResourceScatterUpdate").Device(kDeviceCpu), ResourceScatterOp);

template <typename Kernel>
KernelFactory FactoryOf(VariableDeviceOps ops) {
  return [ops = std::move(ops)](OpKernelConstruction* c) -> OpKernel* {
    return new Kernel(c, ops);
  };
}

}  // namespace

KernelFactory VariableKernel(const std::string& op, VariableDeviceOps ops) {
  if (op == "VariableV2" || op == "VarHandleOp") return FactoryOf<VariableOp>(std::move(ops));
  if (op == "Assign") return FactoryOf<AssignOp>(std::move(ops));
  if (op == "AssignAdd" || op == "AssignSub" || op == "AssignAddVariableOp" ||
      op == "AssignSubVariableOp") {
    return FactoryOf<AssignUpdateOp>(std::move(ops));
  }
  if (op == "IsVariableInitialized" || op == "VarIsInitializedOp") {
    return FactoryOf<IsInitializedOp>(std::move(ops));
  }
  if (op == "ReadVariableOp") return FactoryOf<ReadVariableOp>(std::move(ops));
  if (op == "AssignVariableOp") return FactoryOf<AssignVariableOp>(std::move(ops));
  if (op == "DestroyResourceOp") return FactoryOf<DestroyResourceOp>(std::move(ops));
  if (op == "VariableShape") return FactoryOf<VariableShapeOp>(std::move(ops));
  return {};
}

}  // namespace graphrun
