// Session: runs a graph in this process (TensorFlow's DirectSession is the
// model).
//
//   auto session = Session::Create(graph_def, SessionOptions());
//   std::vector<Tensor> out;
//   absl::Status s = (*session)->Run({{"x", x}}, {"probs:0"}, {}, &out);
//
// Run() prunes the graph to what the fetches and targets need (feeds cut
// their producers off), places the pruned graph on the session's devices
// with the cost model (placer/), cuts it into one partition per device used
// (Send/Recv pairs between them, partition/), and builds one executor per
// partition -- once per (feeds, fetches, targets) signature, cached, so a
// repeated Run does no graph analysis; the signature is the sorted names, so
// the same feeds and fetches in another order share a plan. A step over
// several devices aborts every partition on the first error.
// Run is thread-safe: many steps may run at once, and a plan being built
// holds up only the Runs that wait for that plan. Extend() adds nodes.
#ifndef GRAPHRUN_RUNTIME_SESSION_H_
#define GRAPHRUN_RUNTIME_SESSION_H_

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "graph/protos/graph.pb.h"
#include "graph/tensor.h"
#include "runtime/device.h"
#include "runtime/protos/config.pb.h"

namespace graphrun {

struct SessionOptions {
  // Virtual CPU devices (/device:CPU:0..N-1), like TensorFlow's
  // device_count {"CPU": N}; they share the host's cores.
  int cpu_devices = 1;
  // Threads that run ready nodes; 0 = one per core.
  int inter_op_threads = 0;
  // Threads inside big kernels, per CPU device; 0 = cores / cpu_devices.
  // Session::Create refuses negative counts and more than 4096 threads in
  // all (inter_op_threads + cpu_devices x intra_op_threads).
  int intra_op_threads = 0;
  // Let idle inter-op threads spin before sleeping (TensorFlow's
  // disable_thread_spinning, inverted). Spinning shortens wake-ups between
  // tiny nodes but takes cores from the intra-op threads of big kernels, so
  // it is off by default.
  bool allow_thread_spinning = false;
  // TensorFlow's ConfigProto.log_device_placement: when a plan is built,
  // print one line per node to stdout, "name: (Op): /job:.../device:CPU:0",
  // followed by "# " and why the node is there.
  bool log_device_placement = false;
  // TensorFlow's allow_soft_placement: a device request no device can meet
  // falls back to another device instead of failing.
  bool allow_soft_placement = false;
  // Measured costs for the placer (a file written by `graphrun run
  // --save_costs`); "" = the analytical model.
  std::string cost_profile;
  // Feeds and fetches travel through the client side of the step's
  // rendezvous, as TensorFlow's client-terminated _Recv/_Send nodes (the
  // way a remote client talks to workers), instead of the in-process call
  // frame (_Arg/_Retval, TensorFlow's DirectSession default and faster).
  bool feeds_through_rendezvous = false;
  // Graph optimizer (graph/optimize/optimizer.h) on each step's pruned
  // graph before placement: constant folding, dead cond branches, identity
  // removal, arithmetic simplification, batch-norm folding, kernel fusion
  // (_FusedMatMul, _FusedConv2D), common subexpressions, pruning (see
  // graph/optimize/optimizer.h). Results stay within float rounding of the
  // graph as written; feeds and fetches keep their names.
  enum class Optimize { kNone, kDefault };
  Optimize optimize = Optimize::kDefault;
  // A step that writes no state (no assignment, optimizer update, restore
  // or table fill among the nodes it runs) reads its resource variables as
  // constants of its plan, so the optimizer folds them as in a frozen graph
  // (runtime/frozen_reads.h). Any step that may write state makes such
  // plans stale: the next run of one rebuilds it from the variables as they
  // are, and stops freezing that step. Needs `optimize`.
  bool freeze_read_only_variables = true;
  // Print what each optimizer pass changed (stdout) when a plan is built.
  bool log_optimizations = false;
  // Fail a step at the first node that outputs a NaN or an infinity (float
  // and double tensors in host memory), naming it.
  bool check_numerics = false;
  // Device name prefix of this process.
  std::string device_prefix = "/job:localhost/replica:0/task:0";
  // GPU devices for the session, made by the caller when the session is
  // created (graphrun run's --gpus; a fake GPU in tests), named under
  // `device_prefix`. Null: CPUs only.
  std::function<absl::StatusOr<std::vector<std::unique_ptr<Device>>>(
      const std::string& device_prefix)>
      make_gpu_devices;
};

class Session {
 public:
  virtual ~Session() = default;

  // Validates the graph (InvalidArgument naming the node on any problem).
  static absl::StatusOr<std::unique_ptr<Session>> Create(
      const GraphDef& graph, const SessionOptions& options = {});

  // Adds the nodes of `graph` (names must be new).
  virtual absl::Status Extend(const GraphDef& graph) = 0;

  // Feeds are (tensor name "node" or "node:k", value); fetches are tensor
  // names; targets are node names run for their effects. On success
  // `outputs` holds one tensor per fetch, in order.
  virtual absl::Status Run(const RunOptions& options,
                           const std::vector<std::pair<std::string, Tensor>>& feeds,
                           const std::vector<std::string>& fetches,
                           const std::vector<std::string>& targets,
                           std::vector<Tensor>* outputs,
                           RunMetadata* metadata) = 0;

  absl::Status Run(const std::vector<std::pair<std::string, Tensor>>& feeds,
                   const std::vector<std::string>& fetches,
                   const std::vector<std::string>& targets,
                   std::vector<Tensor>* outputs) {
    return Run(RunOptions(), feeds, fetches, targets, outputs, nullptr);
  }

  virtual std::vector<Device*> devices() const = 0;

  // Cancels every step running now: each ends with Cancelled, its waiting
  // kernels (a queue's dequeue, an accumulator's take) woken, the message
  // saying `reason`. Steps started afterwards run as usual. What stops a
  // queue runner's thread, as closing TensorFlow's session does.
  // Unimplemented for sessions that cannot.
  virtual absl::Status CancelRunningSteps(const std::string& reason) {
    return absl::UnimplementedError(
        absl::StrCat("this session cannot cancel its running steps (", reason, ")"));
  }
};

}  // namespace graphrun

#endif  // GRAPHRUN_RUNTIME_SESSION_H_
