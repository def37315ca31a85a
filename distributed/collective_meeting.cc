#include "distributed/collective_meeting.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/lower_collectives.h"
#include "graph/status_macros.h"

namespace graphrun {

int64_t CollectiveMeeting::NewId() {
  absl::MutexLock lock(&mu_);
  const int64_t id = next_id_++;
  pending_.insert(id);
  return id;
}

int64_t CollectiveMeeting::Join(const CollectiveCall& call, Tensor input, absl::Time now,
                                Done done) {
  const int64_t id = NewId();
  Join(id, call, std::move(input), now, std::move(done));
  return id;
}

void CollectiveMeeting::Join(int64_t id, const CollectiveCall& call, Tensor input,
                             absl::Time now, Done done) {
  std::vector<Member> ready;
  {
    absl::ReleasableMutexLock lock(&mu_);
    pending_.erase(id);
    auto early = left_early_.find(id);
    if (early != left_early_.end()) {
      const absl::Status why(early->second.code(),
                             absl::StrCat(call.Describe(), ": ", early->second.message()));
      left_early_.erase(early);
      lock.Release();
      done(why);
      return;
    }
    const Key key{call.scope, call.group_key, call.instance_key, call.execution};
    if (RecentlyMetLocked(key)) {
      lock.Release();
      done(absl::InvalidArgumentError(absl::StrCat(
          call.Describe(), ": the execution has met already, with the group's ", call.group_size,
          " members; more members use these keys than the group size says")));
      return;
    }
    auto failed = failed_.find(key);
    if (failed != failed_.end()) {
      const absl::Status why = failed->second;
      lock.Release();
      done(why);
      return;
    }
    auto [it, fresh] = executions_.try_emplace(key);
    if (fresh) it->second.since = now;
    Member m;
    m.id = id;
    m.call = call;
    m.input = std::move(input);
    if (call.timeout > absl::ZeroDuration()) m.deadline = now + call.timeout;
    m.done = std::move(done);
    it->second.members.push_back(std::move(m));
    member_of_[id] = key;
    if (static_cast<int64_t>(it->second.members.size()) >= call.group_size) {
      ready = TakeLocked(key);
      met_.insert(key);
      met_order_.push_back(key);
      if (met_order_.size() > kMaxFailed) {
        met_.erase(met_order_.front());
        met_order_.pop_front();
      }
      std::set<std::string>& devices = groups_[{call.scope, call.group_key}];
      devices.clear();
      for (const Member& r : ready) devices.insert(r.call.device);
    }
  }
  if (!ready.empty()) Answer(std::move(ready), absl::OkStatus());
}

void CollectiveMeeting::Leave(int64_t id, const absl::Status& why) {
  std::vector<Member> failed;
  absl::Status status;
  {
    absl::MutexLock lock(&mu_);
    auto m = member_of_.find(id);
    if (m == member_of_.end()) {
      if (pending_.count(id) > 0) left_early_.emplace(id, why);
      return;
    }
    const Key key = m->second;
    std::string who;
    for (const Member& member : executions_[key].members) {
      if (member.id == id) who = member.call.Describe();
    }
    status = absl::Status(why.code(), absl::StrCat(who, " left the collective: ", why.message()));
    failed = TakeLocked(key);
    RecordFailureLocked(key, status);
  }
  Answer(std::move(failed), status);
}

void CollectiveMeeting::Sweep(absl::Time now) {
  std::vector<std::pair<std::vector<Member>, absl::Status>> failed;
  {
    absl::MutexLock lock(&mu_);
    std::vector<Key> late;
    for (const auto& [key, e] : executions_) {
      for (const Member& m : e.members) {
        if (m.deadline <= now) {
          late.push_back(key);
          break;
        }
      }
    }
    for (const Key& key : late) {
      Execution& e = executions_[key];
      const Member* first_late = nullptr;
      for (const Member& m : e.members) {
        if (m.deadline <= now) first_late = &m;
      }
      std::string missing;
      auto g = groups_.find({std::get<0>(key), std::get<1>(key)});
      if (g != groups_.end()) {
        std::vector<std::string> absent;
        for (const std::string& d : g->second) {
          bool came = false;
          for (const Member& m : e.members) came |= m.call.device == d;
          if (!came) absent.push_back(d);
        }
        missing = absl::StrCat("; still missing: ", absl::StrJoin(absent, ", "));
      }
      absl::Status why = absl::DeadlineExceededError(absl::StrCat(
          first_late->call.Describe(), " waited its timeout of ",
          absl::FormatDuration(first_late->call.timeout), " for the group's ",
          first_late->call.group_size, " members; ", Came(e.members), missing));
      RecordFailureLocked(key, why);
      failed.emplace_back(TakeLocked(key), std::move(why));
    }
  }
  for (auto& [members, why] : failed) Answer(std::move(members), why);
}

void CollectiveMeeting::ForgetScope(const std::string& scope) {
  absl::MutexLock lock(&mu_);
  for (auto it = groups_.begin(); it != groups_.end();) {
    it = it->first.first == scope ? groups_.erase(it) : std::next(it);
  }
}

std::vector<CollectiveMeeting::Waiting> CollectiveMeeting::Waits() const {
  absl::MutexLock lock(&mu_);
  std::vector<Waiting> out;
  for (const auto& [key, e] : executions_) {
    Waiting w;
    std::tie(w.scope, w.group_key, w.instance_key, w.execution) = key;
    w.since = e.since;
    auto g = groups_.find({w.scope, w.group_key});
    if (g != groups_.end()) {
      for (const std::string& d : g->second) {
        bool came = false;
        for (const Member& m : e.members) came |= m.call.device == d;
        if (!came) w.missing.push_back(d);
      }
    }
    out.push_back(std::move(w));
  }
  return out;
}

void CollectiveMeeting::Fail(const Waiting& which, const absl::Status& why) {
  std::vector<Member> failed;
  {
    absl::MutexLock lock(&mu_);
    const Key key{which.scope, which.group_key, which.instance_key, which.execution};
    if (executions_.find(key) == executions_.end()) return;
    failed = TakeLocked(key);
    RecordFailureLocked(key, why);
  }
  Answer(std::move(failed), why);
}

bool CollectiveMeeting::RecentlyMetLocked(const Key& key) const {
  return met_.count(key) > 0;
}

void CollectiveMeeting::RecordFailureLocked(const Key& key, const absl::Status& why) {
  if (!failed_.emplace(key, why).second) return;
  failed_order_.push_back(key);
  if (failed_order_.size() > kMaxFailed) {
    failed_.erase(failed_order_.front());
    failed_order_.pop_front();
  }
}

std::vector<CollectiveMeeting::Member> CollectiveMeeting::TakeLocked(const Key& key) {
  auto it = executions_.find(key);
  if (it == executions_.end()) return {};
  std::vector<Member> members = std::move(it->second.members);
  executions_.erase(it);
  for (const Member& m : members) member_of_.erase(m.id);
  return members;
}

std::string CollectiveMeeting::Came(const std::vector<Member>& members) {
  std::vector<std::string> devices;
  for (const Member& m : members) devices.push_back(m.call.device);
  std::sort(devices.begin(), devices.end());
  return absl::StrCat(members.size(), " came (", absl::StrJoin(devices, ", "), ")");
}

absl::StatusOr<std::vector<Tensor>> CollectiveMeeting::Outputs(std::vector<Member>* members) {
  // Ranks: device names in string order.
  std::sort(members->begin(), members->end(), [](const Member& a, const Member& b) {
    return CollectiveRankBefore(a.call.device, b.call.device);
  });
  std::vector<const CollectiveCall*> calls;
  for (size_t r = 0; r < members->size(); ++r) {
    const Member& m = (*members)[r];
    if (r > 0 && m.call.device == (*members)[r - 1].call.device) {
      return absl::InvalidArgumentError(absl::StrCat(
          "two members of one collective instance run on one device: ",
          (*members)[r - 1].call.Describe(), " and ", m.call.Describe()));
    }
    calls.push_back(&m.call);
  }
  if (static_cast<int64_t>(members->size()) != members->front().call.group_size) {
    return absl::InvalidArgumentError(absl::StrCat(
        members->front().call.Describe(), ": more members than the group's size; ",
        Came(*members)));
  }
  GR_RETURN_IF_ERROR(CheckCollectiveMembers(calls));
  const CollectiveCall& first = members->front().call;
  std::vector<Tensor> out(members->size());
  if (first.kind == CollectiveKind::kReduce || first.kind == CollectiveKind::kGather) {
    std::vector<Tensor> inputs;
    for (const Member& m : *members) inputs.push_back(m.input);
    GR_ASSIGN_OR_RETURN(Tensor combined, CombineCollective(first, inputs));
    for (Tensor& t : out) t = combined;
    return out;
  }
  const Tensor* sent = nullptr;
  for (const Member& m : *members) {
    if (m.call.kind == CollectiveKind::kBcastSend) sent = &m.input;
  }
  for (size_t r = 0; r < members->size(); ++r) {
    const CollectiveCall& c = (*members)[r].call;
    if (c.kind == CollectiveKind::kBcastSend) {
      out[r] = *sent;
      continue;
    }
    if (c.shape.num_elements() != sent->NumElements()) {
      return absl::InvalidArgumentError(absl::StrCat(
          c.Describe(), " expects shape ", c.shape.DebugString(), " but the sender's tensor has ",
          sent->NumElements(), " elements (", sent->shape().DebugString(), ")"));
    }
    GR_ASSIGN_OR_RETURN(out[r], sent->Reshaped(c.shape));
  }
  return out;
}

void CollectiveMeeting::Answer(std::vector<Member> members, const absl::Status& failed) {
  if (members.empty()) return;
  absl::StatusOr<std::vector<Tensor>> outputs =
      failed.ok() ? Outputs(&members) : absl::StatusOr<std::vector<Tensor>>(failed);
  for (size_t r = 0; r < members.size(); ++r) {
    if (outputs.ok()) {
      members[r].done((*outputs)[r]);
    } else {
      members[r].done(outputs.status());
    }
  }
}

}  // namespace graphrun
