// State that outlives a step: each device owns a ResourceMgr, so objects
// made by a kernel (variables, TensorFlow's containers) live as long as the
// device, which is as long as the session (or the worker) that made it.
// Resources are keyed by (container, name) as in TensorFlow's ResourceMgr;
// "localhost" is the default container.
//
// Thread-safe.
#ifndef GRAPHRUN_KERNELS_RESOURCE_MGR_H_
#define GRAPHRUN_KERNELS_RESOURCE_MGR_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "graph/variant.h"

namespace graphrun {

class ResourceMgr {
 public:
  static constexpr char kDefaultContainer[] = "localhost";

  // The resource at (container, name), made by `create` when there is none.
  // FailedPrecondition when one of another type is there.
  template <typename T>
  absl::StatusOr<std::shared_ptr<T>> LookupOrCreate(
      const std::string& container, const std::string& name,
      const std::function<absl::StatusOr<std::shared_ptr<T>>()>& create) {
    absl::MutexLock lock(&mu_);
    auto it = resources_.find({container, name});
    if (it == resources_.end()) {
      absl::StatusOr<std::shared_ptr<T>> made = create();
      if (!made.ok()) return made.status();
      resources_.emplace(std::make_pair(container, name), *made);
      return *made;
    }
    std::shared_ptr<T> typed = std::dynamic_pointer_cast<T>(it->second);
    if (typed == nullptr) {
      return absl::FailedPreconditionError(absl::StrCat(
          "resource ", container, "/", name, " exists as ", it->second->DebugString(),
          ", not the kind this op uses"));
    }
    return typed;
  }

  // NotFound naming the container and name when there is none.
  template <typename T>
  absl::StatusOr<std::shared_ptr<T>> Lookup(const std::string& container,
                                            const std::string& name) const {
    absl::MutexLock lock(&mu_);
    auto it = resources_.find({container, name});
    std::shared_ptr<T> typed =
        it == resources_.end() ? nullptr : std::dynamic_pointer_cast<T>(it->second);
    if (typed == nullptr) {
      return absl::NotFoundError(
          absl::StrCat("Resource ", container, "/", name, " does not exist."));
    }
    return typed;
  }

  // Forgets (container, name); holders of the object keep it. NotFound when
  // there is none.
  absl::Status Delete(const std::string& container, const std::string& name);
  // Forgets every resource of `container`.
  void Cleanup(const std::string& container);
  // Forgets every resource.
  void Clear();
  // (container, name) of every resource, sorted.
  std::vector<std::pair<std::string, std::string>> List() const;

 private:
  mutable absl::Mutex mu_;
  std::map<std::pair<std::string, std::string>, std::shared_ptr<ResourceBase>> resources_
      ABSL_GUARDED_BY(mu_);
};

// What a stateful node keeps for its session (a random generator, a table
// without a shared name): in the device's ResourceMgr under (container, the
// node's name), so every plan that runs the node finds the same object, as
// TensorFlow's one kernel per stateful node does; the kernel's own where the
// device keeps no state. Found or made on first use, then held.
// Thread-safe.
template <typename T>
class NodeResource {
 public:
  using Make = std::function<absl::StatusOr<std::shared_ptr<T>>()>;
  NodeResource(std::string container, std::string node)
      : container_(std::move(container)), node_(std::move(node)) {}

  // `mgr` is the device's (nullptr where it keeps no state).
  absl::StatusOr<std::shared_ptr<T>> Get(ResourceMgr* mgr, const Make& make) {
    absl::MutexLock lock(&mu_);
    if (held_ == nullptr) {
      absl::StatusOr<std::shared_ptr<T>> got =
          mgr == nullptr ? make() : mgr->LookupOrCreate<T>(container_, node_, make);
      if (!got.ok()) return got.status();
      held_ = *std::move(got);
    }
    return held_;
  }

 private:
  const std::string container_, node_;
  absl::Mutex mu_;
  std::shared_ptr<T> held_ ABSL_GUARDED_BY(mu_);
};

}  // namespace graphrun

#endif  // GRAPHRUN_KERNELS_RESOURCE_MGR_H_
