#include "distributed/collective_rings.h"

#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/notification.h"
#include "distributed/gloo_group.h"
#include "distributed/ring_allreduce.h"
#include "graph/status_macros.h"

namespace graphrun {
namespace {

// How long a ring or gloo reduce waits for a peer to send, without a
// timeout_seconds of its own.
constexpr absl::Duration kPeerWait = absl::Minutes(10);

bool WantsGloo(const CollectiveCall& call) {
  return absl::AsciiStrToLower(call.communication_hint) == "gloo";
}

// Bytes of one member's entry in a trade: key length, key, value length,
// value (lengths as 4 bytes, little-endian), zero-padded.
constexpr int64_t kEntryBytes = 64 << 10;

void PutLength(std::string* out, size_t n) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>((n >> (8 * i)) & 0xff));
}

size_t GetLength(const unsigned char* p) {
  return static_cast<size_t>(p[0]) | static_cast<size_t>(p[1]) << 8 |
         static_cast<size_t>(p[2]) << 16 | static_cast<size_t>(p[3]) << 24;
}

// Every member's (key, value), in rank order: this member's gathered with
// the others' through the meeting, under `call`'s keys and `execution`
// (negative: out of the way of the reduce's own executions).
absl::StatusOr<std::vector<std::pair<std::string, std::string>>> Trade(
    const CollectiveRings::Meet& meet, const CollectiveCall& call, int64_t execution,
    const std::string& key, const std::string& value, CancellationManager* cancellation) {
  if (8 + key.size() + value.size() > static_cast<size_t>(kEntryBytes)) {
    return absl::InternalError(absl::StrCat(call.Describe(), ": an entry of ",
                                            key.size() + value.size(),
                                            " bytes is over the trade's entry size"));
  }
  std::string entry;
  PutLength(&entry, key.size());
  entry += key;
  PutLength(&entry, value.size());
  entry += value;
  Tensor mine(DT_UINT8, TensorShape({kEntryBytes}));
  std::memset(mine.raw_data(), 0, kEntryBytes);
  std::memcpy(mine.raw_data(), entry.data(), entry.size());
  CollectiveCall trade = call;
  trade.kind = CollectiveKind::kGather;
  trade.dtype = DT_UINT8;
  trade.execution = execution;
  absl::Notification met;
  absl::StatusOr<Tensor> all = absl::UnknownError("no answer");
  meet(trade, mine, cancellation, [&](absl::StatusOr<Tensor> r) {
    all = std::move(r);
    met.Notify();
  });
  met.WaitForNotification();
  if (!all.ok()) return all.status();
  std::vector<std::pair<std::string, std::string>> out;
  const auto* bytes = static_cast<const unsigned char*>(all->raw_data());
  for (int64_t at = 0; at + kEntryBytes <= all->NumElements(); at += kEntryBytes) {
    const unsigned char* e = bytes + at;
    const size_t k = GetLength(e);
    const size_t v = k + 8 <= static_cast<size_t>(kEntryBytes) ? GetLength(e + 4 + k) : 0;
    if (8 + k + v > static_cast<size_t>(kEntryBytes)) {
      return absl::InternalError(absl::StrCat(call.Describe(), ": a bad entry in a trade"));
    }
    out.emplace_back(std::string(reinterpret_cast<const char*>(e + 4), k),
                     std::string(reinterpret_cast<const char*>(e + 8 + k), v));
  }
  return out;
}

// A tensor divided by n in place (integers truncating, as TensorFlow's Div).
void DivideBy(Tensor* t, int n) {
  switch (t->dtype()) {
    case DT_FLOAT:
      for (float& v : t->flat<float>()) v = v / static_cast<float>(n);
      break;
    case DT_DOUBLE:
      for (double& v : t->flat<double>()) v = v / n;
      break;
    case DT_INT32:
      for (int32_t& v : t->flat<int32_t>()) v = v / n;
      break;
    case DT_INT64:
      for (int64_t& v : t->flat<int64_t>()) v = v / n;
      break;
    default:
      break;
  }
}

WireEncoding EncodingFor(const CollectiveCall& call) {
  if (call.dtype != DT_FLOAT) return WIRE_ENCODING_NONE;
  if (call.wire_float == DT_HALF) return WIRE_ENCODING_FP16;
  if (call.wire_float == DT_BFLOAT16) return WIRE_ENCODING_BF16;
  return WIRE_ENCODING_NONE;
}

}  // namespace

// One member device's ring for one instance, and the thread that runs its
// executions in turn.
class CollectiveRings::Lane {
 public:
  Lane() : thread_([this] { Loop(); }) {}
  ~Lane() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
      if (ring_ != nullptr) ring_->Abort();
    }
    cv_.notify_all();
    thread_.join();
  }

  void Post(std::function<void()> job) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      jobs_.push_back(std::move(job));
    }
    cv_.notify_all();
  }

  // On the lane's thread: the ring (made if there is none) and the ranks'
  // devices.
  absl::Status Ensure(const CollectiveCall& call, const std::string& host, const Meet& meet,
                      absl::Duration connect_timeout, CancellationManager* cancellation) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (ring_ != nullptr || gloo_ != nullptr) return absl::OkStatus();
    }
    GR_ASSIGN_OR_RETURN(std::unique_ptr<RingListener> listener, RingListener::Listen(host));
    absl::StatusOr<std::vector<std::pair<std::string, std::string>>> all =
        Trade(meet, call, -1 - call.execution, call.device, listener->address(), cancellation);
    if (!all.ok()) {
      return absl::Status(all.status().code(),
                          absl::StrCat("setting up the ring: ", all.status().message()));
    }
    RingOptions options;
    options.connect_timeout = connect_timeout;
    // A peer may reach the reduce long after this member (a chief saving a
    // checkpoint between steps): a ring waits for it as long as the
    // member's timeout_seconds, else kPeerWait. A peer that dies closes
    // its sockets and fails the reduce at once.
    options.stall_timeout = call.timeout > absl::ZeroDuration() ? call.timeout : kPeerWait;
    options.rank = -1;
    std::vector<std::string> devices;
    for (auto& [device, address] : *all) {
      if (device == call.device) options.rank = static_cast<int>(devices.size());
      devices.push_back(device);
      options.addresses.push_back(address);
    }
    if (options.rank < 0) {
      return absl::InternalError(absl::StrCat(call.Describe(), ": not among the ring's members"));
    }
    if (WantsGloo(call)) {
      listener.reset();
      GR_ASSIGN_OR_RETURN(std::unique_ptr<GlooGroup> gloo,
                          GlooGroup::Connect(options.rank, static_cast<int>(devices.size()),
                                             host, StoreExchange(call, meet, cancellation),
                                             connect_timeout, options.stall_timeout));
      std::lock_guard<std::mutex> lock(mu_);
      gloo_ = std::move(gloo);
      SetRanks(devices);
      return absl::OkStatus();
    }
    absl::StatusOr<std::unique_ptr<graphrun::Ring>> ring =
        Ring::Connect(std::move(listener), options);
    if (!ring.ok()) return ring.status();
    std::lock_guard<std::mutex> lock(mu_);
    ring_ = *std::move(ring);
    SetRanks(devices);
    return absl::OkStatus();
  }

  // On the lane's thread, after Ensure. final_op Div: the sum divided by
  // n, as TensorFlow does, except that a 16-bit wire averages as it goes
  // (so partial sums stay in its range).
  absl::Status Allreduce(Tensor* out, const CollectiveCall& call) {
    const bool div = call.final_op == "Div";
    int n = 0;
    bool averaged = false;
    if (gloo_ != nullptr) {
      GR_RETURN_IF_ERROR(gloo_->Allreduce(out->raw_data(), out->NumElements(), out->dtype()));
      n = gloo_->size();
    } else {
      AllreduceOptions options;
      options.encoding = EncodingFor(call);
      options.mean = averaged = div && options.encoding != WIRE_ENCODING_NONE;
      GR_RETURN_IF_ERROR(
          ring_->Allreduce(out->raw_data(), out->NumElements(), out->dtype(), options));
      n = ring_->size();
    }
    if (div && !averaged) DivideBy(out, n);
    return absl::OkStatus();
  }
  void Abort() {
    std::lock_guard<std::mutex> lock(mu_);
    if (ring_ != nullptr) ring_->Abort();
  }
  // After a failure: the next execution makes a new ring. The ranks, for
  // the failure's message.
  std::string Drop() {
    std::lock_guard<std::mutex> lock(mu_);
    ring_.reset();
    gloo_.reset();
    return absl::StrJoin(ranks_, ", ");
  }

 private:
  void SetRanks(const std::vector<std::string>& devices) {
    ranks_.clear();
    for (size_t r = 0; r < devices.size(); ++r) ranks_.push_back(absl::StrCat(r, " ", devices[r]));
  }

  // gloo's store writes: the k-th write of every rank meet as one trade,
  // under the execution's key moved out of the way of the others.
  static GlooGroup::Exchange StoreExchange(const CollectiveCall& call, const Meet& meet,
                                           CancellationManager* cancellation) {
    auto writes = std::make_shared<int64_t>(0);
    return [call, meet, cancellation, writes](const std::string& key, const std::string& value) {
      return Trade(meet, call, -1 - call.execution - ((++*writes) << 32), key, value,
                   cancellation);
    };
  }

  void Loop() {
    while (true) {
      std::function<void()> job;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return stop_ || !jobs_.empty(); });
        if (jobs_.empty()) return;
        job = std::move(jobs_.front());
        jobs_.pop_front();
      }
      job();
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  bool stop_ = false;
  std::unique_ptr<graphrun::Ring> ring_;
  std::unique_ptr<GlooGroup> gloo_;
  std::vector<std::string> ranks_;
  std::thread thread_;
};

CollectiveRings::CollectiveRings(std::string host, Meet meet, absl::Duration connect_timeout)
    : host_(std::move(host)), meet_(std::move(meet)), connect_timeout_(connect_timeout) {}

CollectiveRings::~CollectiveRings() {
  std::map<std::tuple<std::string, std::string, int64_t, int64_t>, std::shared_ptr<Lane>> lanes;
  {
    absl::MutexLock lock(&mu_);
    lanes.swap(lanes_);
  }
  lanes.clear();  // aborts the rings and joins their threads, unlocked
}

void CollectiveRings::Forget(const std::string& scope) {
  std::vector<std::shared_ptr<Lane>> dropped;
  {
    absl::MutexLock lock(&mu_);
    for (auto it = lanes_.begin(); it != lanes_.end();) {
      if (std::get<0>(it->first) == scope) {
        dropped.push_back(std::move(it->second));
        it = lanes_.erase(it);
      } else {
        ++it;
      }
    }
  }
  if (dropped.empty()) return;
  // A lane's thread may still be finishing a job: not on the caller's.
  std::thread([dropped = std::move(dropped)]() mutable { dropped.clear(); }).detach();
}

bool CollectiveRings::Suits(const CollectiveCall& call, int64_t bytes) {
  const DataType t = call.dtype;
  if (call.kind != CollectiveKind::kReduce || call.merge_op != "Add" ||
      !(t == DT_FLOAT || t == DT_DOUBLE || t == DT_INT32 || t == DT_INT64)) {
    return false;
  }
  const std::string hint = absl::AsciiStrToLower(call.communication_hint);
  return hint == "ring" || hint == "gloo" ||
         ((hint == "auto" || hint.empty()) && bytes >= kAutoRingBytes);
}

void CollectiveRings::Run(CollectiveCall call, Tensor input, CancellationManager* cancellation,
                          CollectiveExecutor::Done done) {
  std::shared_ptr<Lane> lane;
  {
    absl::MutexLock lock(&mu_);
    std::shared_ptr<Lane>& slot =
        lanes_[{call.scope, call.device, call.group_key, call.instance_key}];
    if (slot == nullptr) slot = std::make_shared<Lane>();
    lane = slot;
  }
  Lane* l = lane.get();
  l->Post([host = host_, meet = meet_, wait = connect_timeout_, l, call = std::move(call),
           input = std::move(input), cancellation, done = std::move(done)]() {
    int64_t token = -1;
    if (cancellation != nullptr) {
      token = cancellation->NewToken();
      if (!cancellation->Register(token, [l] { l->Abort(); })) token = -1;
    }
    absl::Status s = token == -1 && cancellation != nullptr
                         ? absl::CancelledError("its step was cancelled")
                         : l->Ensure(call, host, meet, wait, cancellation);
    Tensor out;
    if (s.ok()) {
      out = Tensor(input.dtype(), input.shape());
      if (input.TotalBytes() > 0) std::memcpy(out.raw_data(), input.raw_data(), input.TotalBytes());
      s = l->Allreduce(&out, call);
    }
    if (token != -1) cancellation->Deregister(token);
    if (!s.ok()) {
      // The peers' calls of this execution fail at once rather than wait
      // for a member that will not come.
      l->Abort();
      const std::string ranks = l->Drop();
      done(absl::Status(s.code(), absl::StrCat(call.Describe(), " over a ring",
                                               ranks.empty() ? "" : " (ranks: " + ranks + ")",
                                               ": ", s.message())));
      return;
    }
    done(std::move(out));
  });
}

}  // namespace graphrun
