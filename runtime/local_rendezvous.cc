#include "runtime/local_rendezvous.h"

#include <atomic>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "runtime/copy_tensor.h"

namespace graphrun {
namespace {

std::atomic<RecvWaitingHook> recv_waiting_hook{nullptr};

// OK unless `key` names a device of `incarnations` with another
// incarnation; InvalidArgument for a key that does not parse.
absl::Status CheckIncarnation(const DeviceIncarnations* incarnations, absl::string_view key) {
  if (incarnations == nullptr) return absl::OkStatus();
  // "send_device;incarnation;...": only the first two parts are needed.
  const size_t a = key.find(';');
  const size_t b = a == absl::string_view::npos ? a : key.find(';', a + 1);
  uint64_t incarnation = 0;
  if (b == absl::string_view::npos || b - a != 17 ||
      !absl::SimpleHexAtoi(key.substr(a + 1, 16), &incarnation)) {
    absl::Status s = ParseRendezvousKey(key).status();
    return s.ok() ? absl::InvalidArgumentError(absl::StrCat("invalid rendezvous key '", key, "'"))
                  : s;
  }
  const absl::string_view device = key.substr(0, a);
  auto it = incarnations->find(device);
  if (it == incarnations->end() || it->second == incarnation) return absl::OkStatus();
  return absl::FailedPreconditionError(
      absl::StrCat("rendezvous key '", key, "' was made for incarnation ", absl::Hex(incarnation),
                   " of device ", device, ", but the live device is incarnation ",
                   absl::Hex(it->second), " (was its worker restarted?)"));
}

class LocalRendezvous : public Rendezvous {
 public:
  explicit LocalRendezvous(std::shared_ptr<const DeviceIncarnations> incarnations)
      : incarnations_(std::move(incarnations)) {}

  absl::Status Send(absl::string_view key, const Args& args, const Tensor& value,
                    bool is_dead) override {
    absl::Status valid = CheckIncarnation(incarnations_.get(), key);
    if (!valid.ok()) return valid;
    DoneCallback waiter;
    Args recv_args;
    {
      absl::MutexLock lock(&mu_);
      if (!status_.ok()) return status_;
      auto it = table_.find(key);
      if (it == table_.end()) {
        Item& item = table_[key];
        item.has_value = true;
        item.args = args;
        item.value = value;
        item.is_dead = is_dead;
        return absl::OkStatus();
      }
      if (it->second.has_value) {
        return absl::InternalError(
            absl::StrCat("rendezvous key '", key, "' was sent twice in one step"));
      }
      waiter = std::move(it->second.waiter);
      recv_args = it->second.args;
      table_.erase(it);
    }
    Deliver(key, args, recv_args, value, is_dead, std::move(waiter));
    return absl::OkStatus();
  }

  void RecvAsync(absl::string_view key, const Args& args, DoneCallback done) override {
    Tensor value;
    Args send_args;
    bool is_dead = false;
    bool waiting = false;
    absl::Status status = CheckIncarnation(incarnations_.get(), key);
    if (status.ok()) {
      absl::MutexLock lock(&mu_);
      if (!status_.ok()) {
        status = status_;
      } else {
        auto it = table_.find(key);
        if (it == table_.end()) {
          Item& item = table_[key];
          item.waiter = std::move(done);
          item.args = args;
          waiting = true;
        } else if (!it->second.has_value) {
          status = absl::InternalError(
              absl::StrCat("rendezvous key '", key, "' was received twice in one step"));
        } else {
          send_args = it->second.args;
          value = std::move(it->second.value);
          is_dead = it->second.is_dead;
          table_.erase(it);
        }
      }
    }
    if (waiting) {
      // `this` may already be handed the value on another thread: the hook
      // only learns that the Recv waited.
      if (RecvWaitingHook hook = recv_waiting_hook.load(std::memory_order_acquire)) {
        hook(this, key);
      }
      return;
    }
    if (!status.ok()) {
      done(status, send_args, args, value, is_dead);
      return;
    }
    Deliver(key, send_args, args, value, is_dead, std::move(done));
  }

  void StartAbort(const absl::Status& status) override {
    std::vector<std::pair<DoneCallback, Args>> waiters;
    {
      absl::MutexLock lock(&mu_);
      if (!status_.ok()) return;
      status_ = status.ok() ? absl::AbortedError("rendezvous aborted") : status;
      for (auto& [key, item] : table_) {
        if (!item.has_value) waiters.emplace_back(std::move(item.waiter), item.args);
      }
      table_.clear();
    }
    const absl::Status abort_status = status_copy();
    for (auto& [waiter, recv_args] : waiters) {
      waiter(abort_status, Args(), recv_args, Tensor(), false);
    }
  }

 private:
  // Hands `value` to the receiver: by reference within one memory space,
  // else copied into the receiver's (a transfer that cannot be made fails
  // at the Recv, which reports it). A dead value carries nothing to copy.
  static void Deliver(absl::string_view key, const Args& send_args, const Args& recv_args,
                      const Tensor& value, bool is_dead, DoneCallback done) {
    if (is_dead || SameMemorySpace(send_args, recv_args)) {
      done(absl::OkStatus(), send_args, recv_args, value, is_dead);
      return;
    }
    CopyTensorBetweenEnds(key, send_args, recv_args, value,
                          [send_args, recv_args, done = std::move(done)](
                              const absl::Status& s, const Tensor& copied) {
                            done(s, send_args, recv_args, copied, false);
                          });
  }

  struct Item {
    bool has_value = false;
    // The sender's Args with a value, the receiver's with a waiter.
    Args args;
    Tensor value;
    bool is_dead = false;
    DoneCallback waiter;
  };
  absl::Status status_copy() {
    absl::MutexLock lock(&mu_);
    return status_;
  }

  const std::shared_ptr<const DeviceIncarnations> incarnations_;
  absl::Mutex mu_;
  absl::Status status_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, Item> table_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

void SetRecvWaitingHookForTest(RecvWaitingHook hook) {
  recv_waiting_hook.store(hook, std::memory_order_release);
}

std::shared_ptr<Rendezvous> NewLocalRendezvous(
    std::shared_ptr<const DeviceIncarnations> incarnations) {
  return std::make_shared<LocalRendezvous>(std::move(incarnations));
}

}  // namespace graphrun
