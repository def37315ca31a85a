#include "distributed/worker_collectives.h"

#include <atomic>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "distributed/cluster_spec.h"
#include "graph/status_macros.h"

namespace graphrun {
namespace {

constexpr char kChiefLeader[] = "/job:chief/replica:0/task:0";
constexpr char kWorkerLeader[] = "/job:worker/replica:0/task:0";

CollectiveRequest ToRequest(const CollectiveCall& call, const Tensor& input) {
  CollectiveRequest r;
  r.set_node(call.node);
  r.set_scope(call.scope);
  r.set_device(call.device);
  r.set_kind(static_cast<int>(call.kind));
  r.set_group_size(call.group_size);
  r.set_group_key(call.group_key);
  r.set_instance_key(call.instance_key);
  r.set_execution(call.execution);
  r.set_dtype(call.dtype);
  r.set_merge_op(call.merge_op);
  r.set_final_op(call.final_op);
  *r.mutable_shape() = call.shape.AsProto();
  if (input.IsInitialized()) input.AsProtoTensorContent(r.mutable_input());
  r.set_timeout_seconds(absl::ToDoubleSeconds(call.timeout));
  return r;
}

absl::StatusOr<CollectiveCall> FromRequest(const CollectiveRequest& r) {
  CollectiveCall call;
  if (r.kind() < 0 || r.kind() > 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("collective request from node '", r.node(), "' of unknown kind ", r.kind()));
  }
  call.kind = static_cast<CollectiveKind>(r.kind());
  call.node = r.node();
  call.scope = r.scope();
  call.device = r.device();
  call.group_size = r.group_size();
  call.group_key = r.group_key();
  call.instance_key = r.instance_key();
  call.execution = r.execution();
  call.dtype = r.dtype();
  call.merge_op = r.merge_op();
  call.final_op = r.final_op();
  GR_ASSIGN_OR_RETURN(call.shape, TensorShape::FromProto(r.shape()));
  if (r.timeout_seconds() > 0) call.timeout = absl::Seconds(r.timeout_seconds());
  return call;
}

}  // namespace

WorkerCollectives::WorkerCollectives(WorkerCollectivesOptions options)
    : options_(std::move(options)),
      rings_(std::make_unique<CollectiveRings>(
          options_.ring_host,
          [this](CollectiveCall call, Tensor input, CancellationManager* cancellation,
                 Done done) { Meet(std::move(call), std::move(input), cancellation,
                                   std::move(done)); },
          options_.connect_timeout)) {}

WorkerCollectives::~WorkerCollectives() = default;

std::string WorkerCollectives::Leader() const {
  if (absl::StartsWith(options_.task_name, "/job:chief/")) return kChiefLeader;
  if (options_.cluster_tasks) {
    for (const std::string& t : options_.cluster_tasks()) {
      if (absl::StartsWith(t, "/job:chief/")) return kChiefLeader;
    }
  }
  return kWorkerLeader;
}

void WorkerCollectives::Run(CollectiveCall call, Tensor input, CancellationManager* cancellation,
                            Done done) {
  {
    absl::MutexLock lock(&mu_);
    call.execution =
        executions_[{call.scope, call.device, call.group_key, call.instance_key}]++;
  }
  if (call.group_size > 1 &&
      CollectiveRings::Suits(call, input.IsInitialized() ? input.TotalBytes() : 0)) {
    rings_->Run(std::move(call), std::move(input), cancellation, std::move(done));
    return;
  }
  Meet(std::move(call), std::move(input), cancellation, std::move(done));
}

void WorkerCollectives::Meet(CollectiveCall call, Tensor input,
                             CancellationManager* cancellation, Done done) {
  const std::string leader = Leader();
  if (leader != options_.task_name) {
    RunRemote(leader, call, input, cancellation, std::move(done));
    return;
  }
  if (cancellation == nullptr) {
    JoinHere(call, std::move(input), std::move(done));
    return;
  }
  // The cancellation is in place before the member joins: its `done` may
  // run inside the Join, after which the step (and `cancellation`) may be
  // gone.
  const int64_t id = meeting_.NewId();
  const int64_t token = cancellation->NewToken();
  std::weak_ptr<WorkerCollectives> weak = weak_from_this();
  if (!cancellation->Register(token, [weak, id] {
        if (auto self = weak.lock()) {
          self->meeting_.Leave(id, absl::CancelledError("its step was cancelled"));
        }
      })) {
    done(absl::CancelledError(absl::StrCat(call.Describe(), ": its step was cancelled")));
    return;
  }
  meeting_.Join(id, call, std::move(input), options_.clock(),
                [cancellation, token, done = std::move(done)](absl::StatusOr<Tensor> result) {
                  cancellation->TryDeregister(token);
                  done(std::move(result));
                });
}

int64_t WorkerCollectives::JoinHere(const CollectiveCall& call, Tensor input, Done done) {
  return meeting_.Join(call, std::move(input), options_.clock(), std::move(done));
}

void WorkerCollectives::RunRemote(const std::string& leader, const CollectiveCall& call,
                                  const Tensor& input, CancellationManager* cancellation,
                                  Done done) {
  absl::StatusOr<std::shared_ptr<WorkerInterface>> peer = options_.peer(leader);
  if (!peer.ok()) {
    done(absl::Status(peer.status().code(),
                      absl::StrCat(call.Describe(), ": cannot reach the group's leader ", leader,
                                   ": ", peer.status().message())));
    return;
  }
  struct State {
    CollectiveRequest request;
    CollectiveResponse response;
    CallOptions opts;
    HealthRequest health_request;
    HealthResponse health;
    CallOptions health_opts;
    int64_t token = -1;
  };
  auto state = std::make_shared<State>();
  state->request = ToRequest(call, input);
  // A member with a timeout is not left waiting on a leader that no longer
  // answers (the leader's own sweep fails the instance first).
  if (call.timeout > absl::ZeroDuration()) state->opts.SetTimeout(call.timeout + absl::Seconds(5));
  if (cancellation != nullptr) {
    state->token = cancellation->NewToken();
    if (!cancellation->Register(state->token, [state] {
          state->health_opts.StartCancel();
          state->opts.StartCancel();
        })) {
      done(absl::CancelledError(absl::StrCat(call.Describe(), ": its step was cancelled")));
      return;
    }
  }
  std::shared_ptr<WorkerInterface> client = *peer;
  const std::string what = call.Describe();
  auto call_leader = [state, client, cancellation, what, leader,
                      done = std::move(done)](const absl::Status& reached) {
    if (!reached.ok()) {
      if (cancellation != nullptr) cancellation->TryDeregister(state->token);
      done(absl::Status(reached.code(), absl::StrCat(what, ": the group's leader ", leader,
                                                     " did not answer: ", reached.message())));
      return;
    }
    client->CollectiveAsync(
        &state->request, &state->response, &state->opts,
        [state, cancellation, what, done](const absl::Status& s) {
          if (cancellation != nullptr) cancellation->TryDeregister(state->token);
          if (!s.ok()) {
            // The leader's own answers name a member (CollectiveCall::
            // Describe: "... of group G, instance I ..."); the transport's
            // (the leader gone, the call cancelled) name none.
            done(absl::StrContains(s.message(), " of group ")
                     ? s
                     : absl::Status(s.code(), absl::StrCat(what, ": ", s.message())));
            return;
          }
          done(Tensor::FromProto(state->response.output()));
        });
  };
  bool reached = false;
  {
    absl::MutexLock lock(&mu_);
    reached = reached_.count(leader) > 0;
  }
  if (reached) {
    call_leader(absl::OkStatus());
    return;
  }
  // The first call: wait for the leader's task to come up.
  state->health_opts.SetWaitForReady(true);
  state->health_opts.SetTimeout(options_.connect_timeout);
  client->HealthAsync(&state->health_request, &state->health, &state->health_opts,
                      [weak = weak_from_this(), leader, call_leader](const absl::Status& s) {
                        std::shared_ptr<WorkerCollectives> self = weak.lock();
                        if (s.ok() && self != nullptr) {
                          absl::MutexLock lock(&self->mu_);
                          self->reached_.insert(leader);
                        }
                        call_leader(s);
                      });
}

void WorkerCollectives::Serve(const CollectiveRequest* request, CollectiveResponse* response,
                              CallOptions* opts, StatusCallback done) {
  absl::StatusOr<CollectiveCall> call = FromRequest(*request);
  if (!call.ok()) {
    done(call.status());
    return;
  }
  Tensor input;
  if (call->kind != CollectiveKind::kBcastRecv) {
    absl::StatusOr<Tensor> t = Tensor::FromProto(request->input());
    if (!t.ok()) {
      done(absl::InvalidArgumentError(
          absl::StrCat(call->Describe(), ": its input does not decode: ", t.status().message())));
      return;
    }
    input = *std::move(t);
  }
  // The cancellation is in place before the member joins: its answer may
  // come inside the Join, and gRPC may then free `opts` with the call.
  const int64_t id = meeting_.NewId();
  if (opts != nullptr) {
    std::weak_ptr<WorkerCollectives> weak = weak_from_this();
    opts->SetCancelCallback([weak, id] {
      if (auto self = weak.lock()) {
        self->meeting_.Leave(id, absl::UnavailableError(
                                     "its call to the leader was cancelled (its step ended, or "
                                     "its task went away)"));
      }
    });
  }
  meeting_.Join(id, *call, std::move(input), options_.clock(),
                [opts, response, done](absl::StatusOr<Tensor> result) {
                  if (opts != nullptr) opts->ClearCancelCallback();
                  if (!result.ok()) {
                    done(result.status());
                    return;
                  }
                  result->AsProtoTensorContent(response->mutable_output());
                  done(absl::OkStatus());
                });
}

void WorkerCollectives::SessionEnded(const std::string& handle, const absl::Status& why) {
  // Only a session its master closed: one merely quiet for a while (`why`
  // not OK) may go on, and its counts must stay in step with the other
  // tasks'.
  if (handle.empty() || !why.ok()) return;
  meeting_.ForgetScope(handle);
  {
    absl::MutexLock lock(&mu_);
    for (auto it = executions_.begin(); it != executions_.end();) {
      it = std::get<0>(it->first) == handle ? executions_.erase(it) : std::next(it);
    }
  }
  rings_->Forget(handle);
}

void WorkerCollectives::Sweep() {
  const absl::Time now = options_.clock();
  meeting_.Sweep(now);
  for (const CollectiveMeeting::Waiting& w : meeting_.Waits()) {
    if (now - w.since < options_.probe_after) continue;
    for (const std::string& device : w.missing) {
      const std::string task(distributed::TaskOfDevice(device));
      if (task == options_.task_name) continue;
      {
        absl::MutexLock lock(&mu_);
        if (!probing_.insert(task).second) continue;
      }
      absl::StatusOr<std::shared_ptr<WorkerInterface>> peer = options_.peer(task);
      if (!peer.ok()) {
        absl::MutexLock lock(&mu_);
        probing_.erase(task);
        continue;
      }
      struct Probe {
        HealthRequest request;
        HealthResponse response;
        CallOptions opts;
      };
      auto probe = std::make_shared<Probe>();
      probe->opts.SetTimeout(absl::Seconds(2));
      (*peer)->HealthAsync(
          &probe->request, &probe->response, &probe->opts,
          [weak = weak_from_this(), probe, task, device, w](const absl::Status& s) {
            std::shared_ptr<WorkerCollectives> self = weak.lock();
            if (self == nullptr) return;
            {
              absl::MutexLock lock(&self->mu_);
              self->probing_.erase(task);
            }
            if (s.ok()) return;
            self->meeting_.Fail(w, absl::UnavailableError(absl::StrCat(
                              "collective group ", w.group_key, ", instance ", w.instance_key,
                              ", execution ", w.execution, ": member ", device,
                              " has not come and its task does not answer: ", s.message())));
          });
    }
  }
}

}  // namespace graphrun
