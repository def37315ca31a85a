#include "runtime/plan_cache.h"

#include <algorithm>
#include <numeric>

#include "absl/strings/str_cat.h"

namespace graphrun {

StepSignature MakeStepSignature(const std::vector<std::string>& feeds,
                                const std::vector<std::string>& fetches,
                                const std::vector<std::string>& targets) {
  StepSignature sig;
  sig.feed_order.resize(feeds.size());
  std::iota(sig.feed_order.begin(), sig.feed_order.end(), 0);
  std::stable_sort(sig.feed_order.begin(), sig.feed_order.end(),
                   [&](int a, int b) { return feeds[a] < feeds[b]; });
  sig.fetch_order.resize(fetches.size());
  std::iota(sig.fetch_order.begin(), sig.fetch_order.end(), 0);
  std::stable_sort(sig.fetch_order.begin(), sig.fetch_order.end(),
                   [&](int a, int b) { return fetches[a] < fetches[b]; });
  sig.targets = targets;
  std::sort(sig.targets.begin(), sig.targets.end());
  sig.targets.erase(std::unique(sig.targets.begin(), sig.targets.end()), sig.targets.end());
  // Node names have no ',' and no '\x01'.
  for (int i : sig.feed_order) absl::StrAppend(&sig.key, feeds[i], ",");
  sig.key.push_back('\x01');
  for (int i : sig.fetch_order) absl::StrAppend(&sig.key, fetches[i], ",");
  sig.key.push_back('\x01');
  for (const auto& t : sig.targets) absl::StrAppend(&sig.key, t, ",");
  return sig;
}

bool StepStatus::Update(const absl::Status& s) {
  absl::MutexLock lock(&mu_);
  const bool derived =
      s.code() == absl::StatusCode::kCancelled || s.code() == absl::StatusCode::kAborted;
  if (status_.ok() || (status_derived_ && !derived)) {
    status_ = s;
    status_derived_ = derived;
    return true;
  }
  return false;
}

absl::Status StepStatus::Get() const {
  absl::MutexLock lock(&mu_);
  return status_;
}

}  // namespace graphrun
