#include "distributed/worker.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "distributed/cluster_spec.h"
#include "distributed/data_plane.h"
#include "distributed/wire_codec.h"
#include "distributed/worker_collectives.h"
#include "graph/checkpoint/file_io.h"
#include "graph/status_macros.h"
#include "graph/tensor.h"
#include "kernels/eigen.h"
#include "kernels/resource_mgr.h"
#include "kernels/rendezvous.h"
#include "partition/wire_policy.h"
#include "placer/device_name.h"
#include "runtime/executor.h"
#include "runtime/local_rendezvous.h"
#include "runtime/plan_builder.h"
#include "runtime/plan_cache.h"

namespace graphrun {
namespace {

// Step ids remembered after their step ended, to refuse late RecvTensors.
constexpr size_t kMaxEndedSteps = size_t{1} << 16;
// How long a tensor offered on the data plane waits for its receiver.
constexpr absl::Duration kOfferTtl = absl::Seconds(60);
// What a RunGraph response's inline fetches may add up to: protobuf
// serializes messages of under 2 GB.
constexpr int64_t kMaxInlineFetchBytes = (int64_t{1} << 31) - (int64_t{16} << 20);
// Threads for blocking transfers (data plane pulls).
constexpr int kBlockingThreads = 4;

uint64_t RandomNonzero64() {
  std::random_device rd;
  uint64_t v = 0;
  while (v == 0) v = (uint64_t{rd()} << 32) ^ rd();
  return v;
}

absl::Status CheckTaskName(const std::string& task) {
  const std::string device = absl::StrCat(task, "/device:CPU:0");
  absl::StatusOr<std::string> canonical = placer::CanonicalizeDeviceName(device);
  if (!canonical.ok() || *canonical != device) {
    return absl::InvalidArgumentError(absl::StrCat(
        "task name '", task, "' must be canonical: /job:NAME/replica:R/task:T"));
  }
  return absl::OkStatus();
}

// Encodes a float32 tensor's values as fp16/bf16 words into `words` (of
// as many elements); returns the fp16 saturations.
int64_t EncodeFloats(const Tensor& t, WireEncoding encoding, Tensor* words) {
  const int64_t n = t.NumElements();
  const float* src = static_cast<const float*>(t.raw_data());
  uint16_t* dst = static_cast<uint16_t*>(words->raw_data());
  if (encoding == WIRE_ENCODING_FP16) return EncodeFp16(src, n, dst);
  EncodeBf16(src, n, dst);
  return 0;
}

// The float32 tensor of `shape` whose fp16/bf16 words are `words`.
absl::StatusOr<Tensor> DecodeFloats(const Tensor& words, WireEncoding encoding,
                                    const TensorShape& shape) {
  const DataType word_type = encoding == WIRE_ENCODING_FP16 ? DT_HALF : DT_BFLOAT16;
  if (words.dtype() != word_type || words.NumElements() != shape.num_elements()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a ", WireEncoding_Name(encoding), " tensor of shape ", shape.DebugString(),
        " arrived as ", DataTypeString(words.dtype()), " ", words.shape().DebugString()));
  }
  GR_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(HostAllocator(), DT_FLOAT, shape,
                                                 TensorBuffer::Init::kUninitialized));
  const int64_t n = t.NumElements();
  const uint16_t* src = static_cast<const uint16_t*>(words.raw_data());
  float* dst = static_cast<float*>(t.raw_data());
  if (encoding == WIRE_ENCODING_FP16) {
    DecodeFp16(src, n, dst);
  } else {
    DecodeBf16(src, n, dst);
  }
  return t;
}

// "send_device;recv_device;tensor_name" of a _Send/_Recv node or key: the
// transfer, whatever its incarnation and iteration.
std::string TransferName(absl::string_view send_device, absl::string_view recv_device,
                         absl::string_view tensor_name) {
  return absl::StrCat(send_device, ";", recv_device, ";", tensor_name);
}

std::string TransferOf(const NodeDef& node) {
  auto attr = [&](const char* name) -> std::string {
    auto it = node.attr().find(name);
    return it == node.attr().end() ? std::string() : it->second.s();
  };
  return TransferName(attr("send_device"), attr("recv_device"), attr("tensor_name"));
}

bool ClientTerminated(const NodeDef& node) {
  auto it = node.attr().find("client_terminated");
  return it != node.attr().end() && it->second.b();
}

// The cross-task transfers of `graph` that carry a fetched value to the
// client's _Send or a fed value from the client's _Recv: they travel
// exact, whatever the wire encoding (a fetch must be what was computed, a
// feed what was given).
std::vector<std::string> ExactTransfers(const GraphDef& graph) {
  absl::flat_hash_map<std::string, const NodeDef*> by_name;
  for (const NodeDef& n : graph.node()) by_name[n.name()] = &n;
  std::vector<std::string> out;
  for (const NodeDef& n : graph.node()) {
    if (n.input_size() == 0) continue;
    auto in = by_name.find(std::string(absl::string_view(n.input(0)).substr(
        0, absl::string_view(n.input(0)).find(':'))));
    if (in == by_name.end()) continue;
    const NodeDef& src = *in->second;
    // A fetch: _Recv (from another task) -> client _Send.
    if ((n.op() == "_Send" || n.op() == "_HostSend") && ClientTerminated(n) &&
        (src.op() == "_Recv" || src.op() == "_HostRecv") && !ClientTerminated(src)) {
      out.push_back(TransferOf(src));
    }
    // A feed: client _Recv -> _Send (to another task).
    if ((n.op() == "_Send" || n.op() == "_HostSend") && !ClientTerminated(n) &&
        (src.op() == "_Recv" || src.op() == "_HostRecv") && ClientTerminated(src)) {
      out.push_back(TransferOf(n));
    }
  }
  return out;
}

}  // namespace

// One worker's partitions of one session step graph.
struct RegisteredGraph {
  std::string session_handle;
  std::vector<PartitionPlan> partitions;
};

// What one step keeps on one worker.
class WorkerStep {
 public:
  WorkerStep(int64_t id, std::shared_ptr<Rendezvous> local_rendezvous)
      : step_id(id), local(std::move(local_rendezvous)) {}
  const int64_t step_id;
  // Where this worker's sends wait for their receivers.
  const std::shared_ptr<Rendezvous> local;
  // What the step's kernels use: `local`, and RecvTensor for keys whose
  // sender is on another task.
  std::shared_ptr<class WorkerRendezvous> rendezvous;
  std::atomic<int> encoding{WIRE_ENCODING_NONE};
  std::atomic<bool> gradients_only{false};
  std::atomic<int64_t> fp16_saturated{0};
  absl::Mutex mu;
  std::string session_handle ABSL_GUARDED_BY(mu);
};

// The rendezvous of one step on one worker.
class WorkerRendezvous : public Rendezvous,
                         public std::enable_shared_from_this<WorkerRendezvous> {
 public:
  WorkerRendezvous(Worker* worker, WorkerStep* step) : worker_(worker), step_(step) {}

  absl::Status Send(absl::string_view key, const Args& args, const Tensor& value,
                    bool is_dead) override {
    return step_->local->Send(key, args, value, is_dead);
  }

  void RecvAsync(absl::string_view key, const Args& args, DoneCallback done) override {
    const absl::string_view send_device = key.substr(0, key.find(';'));
    const absl::string_view task = distributed::TaskOfDevice(send_device);
    if (task == worker_->task_name()) {
      step_->local->RecvAsync(key, args, std::move(done));
      return;
    }
    absl::StatusOr<std::shared_ptr<WorkerInterface>> peer = worker_->Peer(std::string(task));
    if (!peer.ok()) {
      // Not a task of the cluster (a key of this task's own making).
      step_->local->RecvAsync(key, args, std::move(done));
      return;
    }
    RecvRemote(std::move(*peer), std::string(task), key, args, std::move(done));
  }

  void StartAbort(const absl::Status& status) override {
    std::vector<std::shared_ptr<Call>> calls;
    {
      absl::MutexLock lock(&mu_);
      if (!aborted_.ok()) return;
      aborted_ = status;
      for (auto& [id, call] : calls_) calls.push_back(call);
      calls_.clear();
    }
    for (auto& call : calls) call->opts.StartCancel();
    step_->local->StartAbort(status);
  }

 private:
  struct Call {
    RecvTensorRequest request;
    RecvTensorReply reply;
    CallOptions opts;
  };

  void RecvRemote(std::shared_ptr<WorkerInterface> peer, std::string task,
                  absl::string_view key, const Args& args, DoneCallback done) {
    auto call = std::make_shared<Call>();
    call->request.set_step_id(step_->step_id);
    call->request.set_rendezvous_key(std::string(key));
    call->request.set_accept_data_plane(worker_->data_plane_client_ != nullptr);
    call->request.set_encoding(worker_->TravelsExact(key, /*gradients_only=*/false)
                                   ? WIRE_ENCODING_NONE
                                   : static_cast<WireEncoding>(step_->encoding.load()));
    int64_t id = 0;
    absl::Status aborted;
    {
      absl::MutexLock lock(&mu_);
      aborted = aborted_;
      if (aborted.ok()) {
        id = next_call_++;
        calls_.emplace(id, call);
      }
    }
    if (!aborted.ok()) {
      done(aborted, Args(), args, Tensor(), false);
      return;
    }
    auto self = shared_from_this();
    // Keeps the peer's client alive until the call is over.
    peer->RecvTensorAsync(
        &call->request, &call->reply, &call->opts,
        [self, peer, call, id, task = std::move(task), args,
         done = std::move(done)](const absl::Status& s) mutable {
          self->Forget(id);
          if (!s.ok()) {
            done(self->PeerError(s, task, call->request.rendezvous_key()), Args(), args,
                 Tensor(), false);
            return;
          }
          self->Deliver(std::move(call), task, args, std::move(done));
        });
  }

  void Forget(int64_t id) {
    absl::MutexLock lock(&mu_);
    calls_.erase(id);
  }

  // The step's abort status when it was aborted (the failed call is its
  // consequence), else `s` naming the tensor and the task.
  absl::Status PeerError(const absl::Status& s, const std::string& task,
                         const std::string& key) {
    {
      absl::MutexLock lock(&mu_);
      if (!aborted_.ok()) return aborted_;
    }
    std::string tensor = key;
    absl::StatusOr<ParsedRendezvousKey> parsed = ParseRendezvousKey(key);
    if (parsed.ok()) tensor = parsed->tensor_name;
    return absl::Status(s.code(), absl::StrCat(worker_->task_name(), " receiving '", tensor,
                                               "' from ", task, ": ", s.message()));
  }

  void Deliver(std::shared_ptr<Call> call, const std::string& task, const Args& args,
               DoneCallback done) {
    const RecvTensorResponse& r = call->reply.meta;
    if (r.is_dead()) {
      done(absl::OkStatus(), Args(), args, Tensor(), true);
      return;
    }
    step_->fp16_saturated.fetch_add(r.fp16_saturated(), std::memory_order_relaxed);
    const WireEncoding encoding = r.encoding();
    if (encoding != WIRE_ENCODING_NONE && r.dtype() != DT_FLOAT) {
      done(absl::InvalidArgumentError(absl::StrCat(
               "task ", task, " sent a ", DataTypeString(r.dtype()), " tensor encoded for the wire")),
           Args(), args, Tensor(), false);
      return;
    }
    if (r.has_data_plane()) {
      auto self = shared_from_this();
      worker_->ScheduleBlocking([self, call, task, args, done = std::move(done)]() mutable {
        absl::StatusOr<Tensor> t = self->Pull(*call, task);
        if (!t.ok()) {
          done(t.status(), Args(), args, Tensor(), false);
          return;
        }
        done(absl::OkStatus(), Args(), args, *t, false);
      });
      return;
    }
    absl::StatusOr<Tensor> t = Inline(call->reply);
    if (!t.ok()) {
      done(absl::Status(t.status().code(), absl::StrCat("the tensor from ", task, ": ",
                                                        t.status().message())),
           Args(), args, Tensor(), false);
      return;
    }
    done(absl::OkStatus(), Args(), args, *t, false);
  }

  static absl::StatusOr<Tensor> Inline(const RecvTensorReply& reply) {
    const RecvTensorResponse& r = reply.meta;
    Tensor wire = reply.wire_value;
    if (r.has_tensor()) {
      GR_ASSIGN_OR_RETURN(wire, Tensor::FromProto(r.tensor()));
    }
    if (!wire.IsInitialized()) {
      return absl::InvalidArgumentError("the response carries no value");
    }
    GR_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromProto(r.shape()));
    if (r.encoding() != WIRE_ENCODING_NONE) return DecodeFloats(wire, r.encoding(), shape);
    if (wire.dtype() != r.dtype() || wire.shape() != shape) {
      return absl::InvalidArgumentError(
          absl::StrCat("a ", DataTypeString(r.dtype()), " ", shape.DebugString(),
                       " tensor arrived as ", DataTypeString(wire.dtype()), " ",
                       wire.shape().DebugString()));
    }
    return wire;
  }

  absl::StatusOr<Tensor> Pull(const Call& call, const std::string& task) {
    const RecvTensorResponse& r = call.reply.meta;
    int64_t saturated = 0;
    absl::StatusOr<Tensor> t = worker_->data_plane_client_->FetchTensor(
        r.data_plane(), r.encoding(), r.dtype(), r.shape(), absl::Seconds(5), &saturated);
    if (!t.ok()) return PeerError(t.status(), task, call.request.rendezvous_key());
    step_->fp16_saturated.fetch_add(saturated, std::memory_order_relaxed);
    return t;
  }

  Worker* const worker_;
  WorkerStep* const step_;
  absl::Mutex mu_;
  absl::Status aborted_ ABSL_GUARDED_BY(mu_);
  int64_t next_call_ ABSL_GUARDED_BY(mu_) = 0;
  absl::flat_hash_map<int64_t, std::shared_ptr<Call>> calls_ ABSL_GUARDED_BY(mu_);
};

Worker::Worker(const WorkerOptions& options)
    : options_(options),
      incarnation_(RandomNonzero64()),
      sessions_(options.session_lost_after, options.session_timeout, options.clock) {}

absl::StatusOr<std::unique_ptr<Worker>> Worker::Create(const WorkerOptions& options) {
  GR_RETURN_IF_ERROR(CheckTaskName(options.task_name));
  if (options.cpu_devices < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("cpu_devices must be at least 1, not ", options.cpu_devices));
  }
  std::unique_ptr<Worker> w(new Worker(options));
  const int cores = NumSchedulableCpus();
  const int n = options.cpu_devices;
  CpuDeviceOptions cpu;
  cpu.intra_op_threads =
      options.intra_op_threads > 0 ? options.intra_op_threads : std::max(1, cores / n);
  for (int i = 0; i < n; ++i) w->devices_.push_back(NewCpuDevice(options.task_name, i, cpu));
  auto incarnations = std::make_shared<DeviceIncarnations>();
  for (const auto& d : w->devices_) (*incarnations)[d->name()] = d->incarnation();
  w->incarnations_ = std::move(incarnations);
  const int inter = options.inter_op_threads > 0 ? options.inter_op_threads : cores;
  w->inter_op_pool_ = std::make_unique<Eigen::ThreadPool>(inter, false);
  w->blocking_pool_ = std::make_unique<Eigen::ThreadPool>(kBlockingThreads, false);
  if (options.data_plane) {
    GR_ASSIGN_OR_RETURN(w->data_plane_server_,
                        DataPlaneServer::Start(options.data_plane_host, 0));
    w->data_plane_client_ = std::make_unique<DataPlaneClient>();
  }
  Worker* self = w.get();
  WorkerCollectivesOptions collectives;
  collectives.task_name = options.task_name;
  collectives.cluster_tasks = [self] {
    std::set<std::string> tasks;
    absl::MutexLock lock(&self->mu_);
    for (const auto& [task, address] : self->cluster_) tasks.insert(task);
    return tasks;
  };
  collectives.peer = [self](const std::string& task) { return self->Peer(task); };
  collectives.clock = options.clock;
  collectives.ring_host = options.data_plane_host;
  w->collectives_ = std::make_shared<WorkerCollectives>(std::move(collectives));
  for (const auto& d : w->devices_) {
    std::shared_ptr<WorkerCollectives> executor = w->collectives_;
    GR_RETURN_IF_ERROR(d->resource_manager()
                           ->LookupOrCreate<CollectiveExecutor>(
                               kCollectiveContainer, kCollectiveExecutor,
                               [executor]() -> absl::StatusOr<std::shared_ptr<CollectiveExecutor>> {
                                 return executor;
                               })
                           .status());
  }
  w->reaper_ = std::make_unique<std::thread>([self] {
    while (!self->stop_reaper_.WaitForNotificationWithTimeout(absl::Seconds(1))) {
      self->DropIdleSessions();
      self->collectives_->Sweep();
    }
  });
  return w;
}

void Worker::TouchSession(const std::string& session_handle) { sessions_.Touch(session_handle); }

void Worker::SessionEnded(const std::string& session_handle, const absl::Status& why) {
  for (const auto& device : devices_) {
    ResourceMgr* resources = device->resource_manager();
    if (resources == nullptr) continue;
    for (const auto& [container, name] : resources->List()) {
      absl::StatusOr<std::shared_ptr<ResourceBase>> r =
          resources->Lookup<ResourceBase>(container, name);
      if (r.ok()) (*r)->SessionEnded(session_handle, why);
    }
  }
}

int Worker::DropIdleSessions() {
  const WorkerSessions::Due due = sessions_.Poll();
  for (const std::string& h : due.lost) {
    SessionEnded(h, absl::UnavailableError(absl::StrCat(
                        "the master of session ", h, " has made no call to ", options_.task_name,
                        " for ", absl::FormatDuration(options_.session_lost_after),
                        " (its client process is likely gone)")));
  }
  for (const std::string& h : due.idle) {
    AbortSession(h, absl::AbortedError(absl::StrCat(
                        "session ", h, " dropped by ", options_.task_name, ": its master made no call for ",
                        absl::FormatDuration(options_.session_timeout))));
  }
  return static_cast<int>(due.idle.size());
}

Worker::~Worker() {
  stop_reaper_.Notify();
  if (reaper_ != nullptr) reaper_->join();
  std::vector<int64_t> steps;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [id, step] : steps_) steps.push_back(id);
  }
  for (int64_t id : steps) EndStep(id, absl::CancelledError("the worker is shutting down"));
  // Pool threads finish what they run before the devices go.
  blocking_pool_.reset();
  inter_op_pool_.reset();
  data_plane_server_.reset();
}

std::vector<Device*> Worker::devices() const {
  std::vector<Device*> out;
  for (const auto& d : devices_) out.push_back(d.get());
  return out;
}

int Worker::NumSteps() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(steps_.size());
}

int Worker::NumGraphs() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(graphs_.size());
}

std::shared_ptr<WorkerStep> Worker::FindOrCreateStep(int64_t step_id, absl::Status* status) {
  absl::MutexLock lock(&mu_);
  auto it = steps_.find(step_id);
  if (it != steps_.end()) return it->second;
  if (ended_.contains(step_id)) {
    *status = absl::AbortedError(
        absl::StrCat("step ", step_id, " has ended on ", options_.task_name));
    return nullptr;
  }
  auto step = std::make_shared<WorkerStep>(step_id, NewLocalRendezvous(incarnations_));
  step->rendezvous = std::make_shared<WorkerRendezvous>(this, step.get());
  steps_.emplace(step_id, step);
  return step;
}

void Worker::EndStep(int64_t step_id, const absl::Status& reason) {
  std::shared_ptr<WorkerStep> step;
  {
    absl::MutexLock lock(&mu_);
    auto it = steps_.find(step_id);
    if (it != steps_.end()) {
      step = std::move(it->second);
      steps_.erase(it);
    }
    if (ended_.insert(step_id).second) {
      ended_order_.push_back(step_id);
      if (ended_order_.size() > kMaxEndedSteps) {
        ended_.erase(ended_order_.front());
        ended_order_.pop_front();
      }
    }
  }
  if (step != nullptr) step->rendezvous->StartAbort(reason);
}

void Worker::AbortSession(const std::string& session_handle, const absl::Status& reason) {
  std::vector<int64_t> steps;
  {
    absl::MutexLock lock(&mu_);
    sessions_.Forget(session_handle);
    for (auto it = graphs_.begin(); it != graphs_.end();) {
      if (it->second->session_handle == session_handle) {
        graphs_.erase(it++);
      } else {
        ++it;
      }
    }
    for (const auto& [id, step] : steps_) {
      absl::MutexLock step_lock(&step->mu);
      if (step->session_handle == session_handle) steps.push_back(id);
    }
  }
  for (int64_t id : steps) EndStep(id, reason);
}

absl::StatusOr<std::shared_ptr<WorkerInterface>> Worker::Peer(const std::string& task) {
  std::string address;
  {
    absl::MutexLock lock(&mu_);
    auto it = peers_.find(task);
    if (it != peers_.end()) return it->second;
    auto c = cluster_.find(task);
    if (c == cluster_.end()) {
      return absl::NotFoundError(absl::StrCat("task ", task, " is not in the cluster"));
    }
    address = c->second;
  }
  if (!options_.connect) {
    return absl::FailedPreconditionError(
        absl::StrCat(options_.task_name, " cannot reach other tasks (no connect function)"));
  }
  GR_ASSIGN_OR_RETURN(std::shared_ptr<WorkerInterface> peer, options_.connect(task, address));
  absl::MutexLock lock(&mu_);
  auto [it, inserted] = peers_.emplace(task, std::move(peer));
  return it->second;
}

namespace {

// "send_device;recv_device;tensor_name" of a rendezvous key
// (send_device;incarnation;recv_device;tensor_name;frame:iter), or "".
std::string TransferOfKey(absl::string_view key) {
  std::vector<absl::string_view> parts = absl::StrSplit(key, ';');
  if (parts.size() != 5) return "";
  return TransferName(parts[0], parts[2], parts[3]);
}

}  // namespace

bool Worker::TravelsExact(absl::string_view key, bool gradients_only) const {
  const std::string transfer = TransferOfKey(key);
  if (transfer.empty()) return false;
  absl::MutexLock lock(&mu_);
  return exact_transfers_.contains(transfer) ||
         (gradients_only && !gradient_transfers_.contains(transfer));
}

void Worker::ScheduleBlocking(std::function<void()> fn) { blocking_pool_->Schedule(std::move(fn)); }

void Worker::GetStatusAsync(const GetStatusRequest*, GetStatusResponse* response, CallOptions*,
                            StatusCallback done) {
  response->set_task_name(options_.task_name);
  const int cores = NumSchedulableCpus();
  for (const auto& d : devices_) {
    DeviceAttributes* a = response->add_devices();
    a->set_name(d->name());
    a->set_device_type(d->device_type());
    a->set_incarnation(d->incarnation());
    a->set_cores(std::max(1, cores / static_cast<int>(devices_.size())));
  }
  done(absl::OkStatus());
}

void Worker::RegisterGraphAsync(const RegisterGraphRequest* request,
                                RegisterGraphResponse* response, CallOptions*,
                                StatusCallback done) {
  std::map<std::string, GraphDef> partitions;
  for (const GraphPartition& p : request->partitions()) {
    if (!partitions.emplace(p.device(), p.graph()).second) {
      done(absl::InvalidArgumentError(
          absl::StrCat("two partitions for device ", p.device(), " on ", options_.task_name)));
      return;
    }
  }
  for (const auto& [task, address] : request->cluster()) {
    const absl::Status s = CheckTaskName(task);
    if (!s.ok()) {
      done(absl::InvalidArgumentError(absl::StrCat("RegisterGraph cluster: ", s.message())));
      return;
    }
  }
  absl::StatusOr<std::vector<PartitionPlan>> plans =
      CreatePartitionExecutors(partitions, devices());
  if (!plans.ok()) {
    done(absl::Status(plans.status().code(),
                      absl::StrCat(options_.task_name, ": ", plans.status().message())));
    return;
  }
  TouchSession(request->session_handle());
  std::vector<std::string> exact, gradients;
  for (const GraphPartition& p : request->partitions()) {
    for (std::string& t : ExactTransfers(p.graph())) exact.push_back(std::move(t));
    for (const NodeDef& n : p.graph().node()) {
      auto it = n.attr().find(kGradientAttr);
      if ((n.op() == "_Send" || n.op() == "_HostSend") && it != n.attr().end() &&
          it->second.b()) {
        gradients.push_back(TransferOf(n));
      }
    }
  }
  auto graph = std::make_shared<RegisteredGraph>();
  graph->session_handle = request->session_handle();
  graph->partitions = std::move(*plans);
  const std::string handle = absl::StrCat(
      "graph-", next_graph_.fetch_add(1), "-", absl::Hex(incarnation_ & 0xffffffff));
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [task, address] : request->cluster()) {
      if (task == options_.task_name) continue;
      auto [it, inserted] = cluster_.emplace(task, address);
      if (!inserted && it->second != address) {
        // The task moved: a new client on the next receive.
        it->second = address;
        peers_.erase(task);
      }
    }
    graphs_.emplace(handle, std::move(graph));
    for (std::string& t : exact) exact_transfers_.insert(std::move(t));
    for (std::string& t : gradients) gradient_transfers_.insert(std::move(t));
  }
  response->set_graph_handle(handle);
  done(absl::OkStatus());
}

void Worker::RunGraphAsync(const RunGraphRequest* request, RunGraphResponse* response,
                           CallOptions* opts, StatusCallback done) {
  checkpoint_io::CrashPoint("worker.run_graph");  // fault injection (tests)
  TouchSession(request->session_handle());
  for (int64_t id : request->ended_steps()) {
    EndStep(id, absl::AbortedError(absl::StrCat("step ", id, " has ended")));
  }
  std::shared_ptr<const RegisteredGraph> graph;
  {
    absl::MutexLock lock(&mu_);
    auto it = graphs_.find(request->graph_handle());
    if (it != graphs_.end()) graph = it->second;
  }
  if (graph == nullptr) {
    done(absl::FailedPreconditionError(absl::StrCat(
        "graph '", request->graph_handle(), "' is not registered on ", options_.task_name,
        " (the worker may have restarted since the session registered it)")));
    return;
  }
  absl::Status status;
  std::shared_ptr<WorkerStep> step = FindOrCreateStep(request->step_id(), &status);
  if (step == nullptr) {
    done(status);
    return;
  }
  {
    absl::MutexLock lock(&step->mu);
    step->session_handle = graph->session_handle;
  }
  step->encoding.store(request->wire_encoding());
  step->gradients_only.store(request->wire_gradients_only());
  if (options_.log_steps) {
    std::fprintf(stderr, "graphrun worker %s: step %lld started\n", options_.task_name.c_str(),
                 static_cast<long long>(request->step_id()));
    std::fflush(stderr);
  }
  for (const NamedTensor& feed : request->feeds()) {
    absl::StatusOr<Tensor> t = Tensor::FromProto(feed.tensor());
    if (!t.ok()) {
      done(absl::InvalidArgumentError(
          absl::StrCat("feed '", feed.name(), "': ", t.status().message())));
      return;
    }
    const absl::Status s = step->local->Send(feed.name(), Rendezvous::Args(), *t, false);
    if (!s.ok()) {
      done(s);
      return;
    }
  }

  struct RunState {
    CancellationManager cancellation;
    CallFrame frame;
    StepStatus status;
    std::atomic<int> remaining{0};
    // With collect_step_stats: per partition.
    std::vector<DeviceStepStats> dev_stats;
    std::vector<std::unique_ptr<StepStatsCollector>> collectors;
  };
  auto state = std::make_shared<RunState>();
  const size_t num_parts = graph->partitions.size();
  if (request->collect_step_stats()) {
    state->dev_stats.resize(num_parts);
    for (size_t i = 0; i < num_parts; ++i) {
      state->dev_stats[i].set_device(graph->partitions[i].executor->device()->name());
      state->collectors.push_back(std::make_unique<StepStatsCollector>(&state->dev_stats[i]));
    }
  }
  state->remaining.store(static_cast<int>(num_parts));
  std::shared_ptr<WorkerRendezvous> rendezvous = step->rendezvous;
  if (opts != nullptr) {
    opts->SetCancelCallback([state, rendezvous, id = request->step_id()] {
      const absl::Status s = absl::CancelledError(absl::StrCat("step ", id, " was cancelled"));
      state->status.Update(s);
      state->cancellation.StartCancel();
      rendezvous->StartAbort(s);
    });
  }
  auto finish = [this, state, step, graph, request, response, opts, done]() {
    absl::Status s = state->status.Get();
    if (s.ok()) {
      int64_t inline_bytes = 0;
      for (const std::string& key : request->fetches()) {
        absl::Status fetch_status;
        Tensor value;
        bool dead = false;
        step->local->RecvAsync(key, Rendezvous::Args(),
                               [&](const absl::Status& rs, const Rendezvous::Args&,
                                   const Rendezvous::Args&, const Tensor& v, bool is_dead) {
                                 fetch_status = rs;
                                 value = v;
                                 dead = is_dead;
                               });
        if (!fetch_status.ok()) {
          s = fetch_status;
          break;
        }
        NamedTensor* out = response->add_fetches();
        out->set_name(key);
        if (dead) continue;
        if (request->accept_data_plane() && data_plane_server_ != nullptr &&
            DataTypeSize(value.dtype()) > 0 &&
            static_cast<int64_t>(value.TotalBytes()) > options_.inline_limit_bytes) {
          // Large fetches skip the response's copies and its 2 GB limit.
          auto keep = std::make_shared<Tensor>(value);
          out->mutable_tensor()->set_dtype(value.dtype());
          value.shape().AsProto(out->mutable_tensor()->mutable_tensor_shape());
          *out->mutable_data_plane() = data_plane_server_->Offer(
              keep, static_cast<const char*>(keep->raw_data()),
              static_cast<int64_t>(keep->TotalBytes()), WIRE_ENCODING_NONE, kOfferTtl, nullptr);
          continue;
        }
        inline_bytes += static_cast<int64_t>(value.TotalBytes());
        if (inline_bytes > kMaxInlineFetchBytes) {
          s = absl::ResourceExhaustedError(absl::StrCat(
              options_.task_name, ": fetch ", key, " (", DataTypeString(value.dtype()), " ",
              value.shape().DebugString(), ") brings the RunGraph response to ", inline_bytes,
              " bytes, over the ", kMaxInlineFetchBytes,
              " it carries; with the data plane on (it is off under TLS) large fetches "
              "travel there"));
          break;
        }
        value.AsProtoTensorContent(out->mutable_tensor());
      }
    }
    response->set_fp16_saturated(step->fp16_saturated.load());
    for (DeviceStepStats& d : state->dev_stats) {
      *response->mutable_step_stats()->add_dev_stats() = std::move(d);
    }
    if (options_.log_steps) {
      std::fprintf(stderr, "graphrun worker %s: step %lld ended: %s\n",
                   options_.task_name.c_str(), static_cast<long long>(request->step_id()),
                   s.ToString().c_str());
      std::fflush(stderr);
    }
    if (opts != nullptr) opts->ClearCancelCallback();
    done(s);
  };
  Executor::Args args;
  args.step_id = request->step_id();
  args.call_frame = &state->frame;
  args.cancellation = &state->cancellation;
  args.rendezvous = rendezvous.get();
  Eigen::ThreadPoolInterface* pool = inter_op_pool_.get();
  args.runner = [pool](std::function<void()> fn) { pool->Schedule(std::move(fn)); };
  // The calling thread (gRPC's, or the client's for an in-process worker)
  // starts each partition and runs its cheap nodes (Recvs posted, Consts,
  // Sends of what is at hand); kernels that take time go to the pool. A
  // remote Recv's cheap consumers run where its reply arrives. Each saves
  // a thread hand-off, which costs tens of microseconds when the pool's
  // threads sleep.
  args.inline_cheap_only = true;
  args.session_handle = request->session_handle();
  if (num_parts == 0) {
    finish();
    return;
  }
  for (size_t i = 0; i < num_parts; ++i) {
    const Executor* executor = graph->partitions[i].executor.get();
    auto part_done = [state, rendezvous, finish](const absl::Status& s) {
      if (!s.ok() && state->status.Update(s)) rendezvous->StartAbort(s);
      if (state->remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) finish();
    };
    Executor::Args part_args = args;
    if (!state->collectors.empty()) part_args.stats = state->collectors[i].get();
    executor->RunAsync(part_args, part_done);
  }
}

void Worker::CleanupGraphAsync(const CleanupGraphRequest* request, CleanupGraphResponse*,
                               CallOptions*, StatusCallback done) {
  bool ended = false;
  {
    absl::MutexLock lock(&mu_);
    graphs_.erase(request->graph_handle());
    // The session's last graph: nothing left to keep for its master.
    bool more = false;
    for (const auto& [handle, graph] : graphs_) {
      if (graph->session_handle == request->session_handle()) {
        more = true;
        break;
      }
    }
    ended = !more && sessions_.Forget(request->session_handle());
  }
  // Closed by its master: what it filled is no longer waited on for it.
  if (ended) SessionEnded(request->session_handle(), absl::OkStatus());
  done(absl::OkStatus());
}

void Worker::CleanupStepAsync(const CleanupStepRequest* request, CleanupStepResponse*,
                              CallOptions*, StatusCallback done) {
  for (int64_t id : request->ended_steps()) {
    EndStep(id, absl::AbortedError(absl::StrCat("step ", id, " has ended")));
  }
  const int64_t id = request->step_id();
  if (id != 0) {
    EndStep(id, request->abort_reason().empty()
                    ? absl::AbortedError(absl::StrCat("step ", id, " has ended"))
                    : absl::AbortedError(request->abort_reason()));
  }
  done(absl::OkStatus());
}

int64_t Worker::DataPlaneTransfers() const {
  return data_plane_server_ == nullptr ? 0 : data_plane_server_->offers_taken();
}

void Worker::RecvTensorAsync(const RecvTensorRequest* request, RecvTensorReply* reply,
                             CallOptions*, StatusCallback done) {
  absl::Status status;
  std::shared_ptr<WorkerStep> step = FindOrCreateStep(request->step_id(), &status);
  if (step == nullptr) {
    done(status);
    return;
  }
  step->local->RecvAsync(
      request->rendezvous_key(), Rendezvous::Args(),
      [this, step, request, reply, done](const absl::Status& s, const Rendezvous::Args&,
                                         const Rendezvous::Args&, const Tensor& value,
                                         bool is_dead) {
        if (!s.ok()) {
          done(s);
          return;
        }
        RecvTensorResponse* meta = &reply->meta;
        meta->set_is_dead(is_dead);
        if (is_dead) {
          done(absl::OkStatus());
          return;
        }
        if (value.dtype() == DT_VARIANT || value.dtype() == DT_RESOURCE) {
          done(absl::UnimplementedError(absl::StrCat(
              "a ", DataTypeString(value.dtype()),
              " tensor (a TensorList or a resource handle) cannot travel between workers; "
              "keep its producer and consumers on one task (rendezvous key ",
              request->rendezvous_key(), ")")));
          return;
        }
        meta->set_dtype(value.dtype());
        value.shape().AsProto(meta->mutable_shape());
        const bool exact =
            TravelsExact(request->rendezvous_key(), step->gradients_only.load());
        const WireEncoding encoding =
            value.dtype() == DT_FLOAT && !exact ? request->encoding() : WIRE_ENCODING_NONE;
        meta->set_encoding(encoding);
        const int64_t n = value.NumElements();
        const int64_t wire_bytes = encoding == WIRE_ENCODING_NONE
                                       ? static_cast<int64_t>(value.TotalBytes())
                                       : n * 2;
        const bool fixed_size = DataTypeSize(value.dtype()) > 0;
        if (data_plane_server_ != nullptr && request->accept_data_plane() && fixed_size &&
            wire_bytes > options_.inline_limit_bytes) {
          // fp16 saturations travel with the bytes (the data plane's
          // trailer), counted as they are encoded.
          auto keep = std::make_shared<Tensor>(value);
          *meta->mutable_data_plane() = data_plane_server_->Offer(
              keep, static_cast<const char*>(keep->raw_data()),
              static_cast<int64_t>(keep->TotalBytes()), encoding, kOfferTtl, nullptr);
          done(absl::OkStatus());
          return;
        }
        if (!fixed_size) {
          value.AsProtoTensorContent(meta->mutable_tensor());  // strings
        } else if (encoding == WIRE_ENCODING_NONE) {
          reply->wire_value = value;
        } else {
          absl::StatusOr<Tensor> words =
              Tensor::Allocate(HostAllocator(),
                               encoding == WIRE_ENCODING_FP16 ? DT_HALF : DT_BFLOAT16,
                               value.shape(), TensorBuffer::Init::kUninitialized);
          if (!words.ok()) {
            done(words.status());
            return;
          }
          meta->set_fp16_saturated(EncodeFloats(value, encoding, &*words));
          reply->wire_value = *std::move(words);
        }
        done(absl::OkStatus());
      });
}

void Worker::HealthAsync(const HealthRequest* request, HealthResponse* response, CallOptions*,
                         StatusCallback done) {
  TouchSession(request->session_handle());
  response->set_status(HealthResponse::SERVING);
  response->set_task_name(options_.task_name);
  response->set_incarnation(incarnation_);
  done(absl::OkStatus());
}

void Worker::CollectiveAsync(const CollectiveRequest* request, CollectiveResponse* response,
                             CallOptions* opts, StatusCallback done) {
  collectives_->Serve(request, response, opts, std::move(done));
}

}  // namespace graphrun
