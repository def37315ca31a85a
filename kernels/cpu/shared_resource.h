// What the kernels of TensorFlow's handle ops that own an object
// (FIFOQueueV2, ResourceConditionalAccumulator) share: the object is found
// or made in the device's ResourceMgr by (container or "localhost",
// shared_name), or, without a shared name, is the node's own for the
// session (TensorFlow's ResourceOpKernel); the op outputs a scalar
// DT_RESOURCE handle to it, which the ops using it resolve with ObjectOf.
#ifndef GRAPHRUN_KERNELS_CPU_SHARED_RESOURCE_H_
#define GRAPHRUN_KERNELS_CPU_SHARED_RESOURCE_H_

#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "graph/tensor.h"
#include "kernels/op_kernel.h"
#include "kernels/resource_mgr.h"

namespace graphrun {

template <typename T>
class SharedResource {
 public:
  using Make = std::function<absl::StatusOr<std::shared_ptr<T>>(const std::string& name)>;

  // Reads the node's `container` and `shared_name` attrs, and
  // `use_node_name_sharing` where the op has it (the lookup tables): then a
  // node without a shared name shares by its own name.
  explicit SharedResource(OpKernelConstruction* c)
      : own_("graphrun_node_resources", c->def().name()) {
    OP_REQUIRES_OK(c, c->GetAttr("container", &container_));
    OP_REQUIRES_OK(c, c->GetAttr("shared_name", &shared_name_));
    auto sharing = c->def().attr().find("use_node_name_sharing");
    if (shared_name_.empty() && sharing != c->def().attr().end() && sharing->second.b()) {
      shared_name_ = c->def().name();
    }
    if (container_.empty()) container_ = ResourceMgr::kDefaultContainer;
    name_ = shared_name_.empty() ? c->def().name() : shared_name_;
  }

  // The object (made by `make` the first time), as a handle tensor in
  // `*handle`.
  absl::StatusOr<std::shared_ptr<T>> Get(OpKernelContext* ctx, const Make& make, Tensor* handle) {
    ResourceMgr* mgr = ctx->device()->resource_manager();
    auto make_named = [&]() { return make(name_); };
    absl::StatusOr<std::shared_ptr<T>> got;
    if (shared_name_.empty()) {
      got = own_.Get(mgr, make_named);
    } else if (mgr == nullptr) {
      return absl::FailedPreconditionError(
          absl::StrCat(ctx->device()->name(), " keeps no state: '", name_, "' cannot live there"));
    } else {
      got = mgr->LookupOrCreate<T>(container_, shared_name_, make_named);
    }
    if (!got.ok()) return got.status();
    *handle = Tensor(DT_RESOURCE, TensorShape());
    handle->flat<ResourceHandle>()[0] = ResourceHandle(name_, *got);
    return got;
  }

  const std::string& name() const { return name_; }

 private:
  std::string container_, shared_name_, name_;
  NodeResource<T> own_;
};

// The object behind a scalar handle tensor, or InvalidArgument naming what
// was expected (`kind`: "a queue", "an accumulator").
template <typename T>
absl::StatusOr<T*> ObjectOf(const Tensor& handle, const char* kind) {
  T* object = handle.dtype() == DT_RESOURCE && handle.NumElements() == 1
                  ? handle.flat<ResourceHandle>()[0].get<T>()
                  : nullptr;
  if (object == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("handle must be a handle to ", kind, ", got a ",
                                                   DataTypeString(handle.dtype()), " tensor of shape ",
                                                   handle.shape().DebugString()));
  }
  return object;
}

}  // namespace graphrun

#endif  // GRAPHRUN_KERNELS_CPU_SHARED_RESOURCE_H_
