// A Session over a data-parallel replicated graph (graph/replicate.h): it
// takes the feeds, fetches and targets of the graph as written and runs
// them on every replica at once.
//
//   ReplicateOptions options;
//   options.devices = {"/device:CPU:0", "/device:CPU:1"};
//   GR_ASSIGN_OR_RETURN(ReplicatedGraph rg, ReplicateForDataParallel(graph, options));
//   SessionOptions so;
//   so.cpu_devices = 2;
//   GR_ASSIGN_OR_RETURN(std::unique_ptr<Session> inner, Session::Create(rg.graph, so));
//   ReplicatedSession session(std::move(rg), std::move(inner));
//   GR_RETURN_IF_ERROR(session.Run({}, {}, {"init"}, &out));
//   GR_RETURN_IF_ERROR(session.Broadcast());  // replica 0's values everywhere
//   GR_RETURN_IF_ERROR(session.Run({{"x", batch}, {"y", labels}}, {"loss"}, {"train"}, &out));
//
// Feeds of rank >= 1 are split along their first axis, one equal slice
// per replica (InvalidArgument naming the feed when the replicas do not
// divide it); scalars go whole to every replica. A fetched float or double
// scalar is the mean over the replicas (a mean loss reads as the full
// batch's); any other fetch is replica 0's, or, with fetch_all_replicas,
// the replicas' values stacked on a new first axis. Targets run on every
// replica. Names the replicated graph does not copy (the Saver's nodes,
// nodes added by Extend) run once, as given.
#ifndef GRAPHRUN_RUNTIME_REPLICATED_SESSION_H_
#define GRAPHRUN_RUNTIME_REPLICATED_SESSION_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "graph/replicate.h"
#include "runtime/session.h"

namespace graphrun {

class ReplicatedSession : public Session {
 public:
  ReplicatedSession(ReplicatedGraph graph, std::unique_ptr<Session> inner,
                    bool fetch_all_replicas = false);

  absl::Status Extend(const GraphDef& graph) override { return inner_->Extend(graph); }
  absl::Status Run(const RunOptions& options,
                   const std::vector<std::pair<std::string, Tensor>>& feeds,
                   const std::vector<std::string>& fetches,
                   const std::vector<std::string>& targets, std::vector<Tensor>* outputs,
                   RunMetadata* metadata) override;
  using Session::Run;
  std::vector<Device*> devices() const override { return inner_->devices(); }
  absl::Status CancelRunningSteps(const std::string& reason) override {
    return inner_->CancelRunningSteps(reason);
  }

  // Copies replica 0's variables to the other replicas: after an
  // initializer (whose random values may differ by replica) or a restore
  // (which reads the checkpoint into replica 0 only).
  absl::Status Broadcast();
  // Internal if any variable differs between replica 0 and another
  // replica, naming the variable, the replica and the first element that
  // differs.
  absl::Status CheckReplicasEqual();

  int replicas() const { return graph_.replicas; }
  const ReplicatedGraph& graph() const { return graph_; }
  Session* inner() { return inner_.get(); }

 private:
  bool Replicated(const std::string& tensor_or_node) const;

  ReplicatedGraph graph_;
  std::unique_ptr<Session> inner_;
  bool fetch_all_replicas_;
};

}  // namespace graphrun

#endif  // GRAPHRUN_RUNTIME_REPLICATED_SESSION_H_
