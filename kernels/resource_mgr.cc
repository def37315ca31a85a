#include "kernels/resource_mgr.h"

namespace graphrun {

constexpr char ResourceMgr::kDefaultContainer[];

absl::Status ResourceMgr::Delete(const std::string& container, const std::string& name) {
  absl::MutexLock lock(&mu_);
  if (resources_.erase({container, name}) == 0) {
    return absl::NotFoundError(
        absl::StrCat("Resource ", container, "/", name, " does not exist."));
  }
  return absl::OkStatus();
}

void ResourceMgr::Cleanup(const std::string& container) {
  absl::MutexLock lock(&mu_);
  for (auto it = resources_.begin(); it != resources_.end();) {
    it = it->first.first == container ? resources_.erase(it) : std::next(it);
  }
}

void ResourceMgr::Clear() {
  absl::MutexLock lock(&mu_);
  resources_.clear();
}

std::vector<std::pair<std::string, std::string>> ResourceMgr::List() const {
  absl::MutexLock lock(&mu_);
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& entry : resources_) out.push_back(entry.first);
  return out;
}

}  // namespace graphrun
