#include "runtime/step_graph.h"

#include <map>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "graph/import.h"
#include "graph/rendezvous_key.h"
#include "graph/status_macros.h"

namespace graphrun {
namespace {

// Colocation with a node that pruning removed (a fed Placeholder, say)
// constrains nothing: TensorFlow groups nodes by the "loc:@x" string and
// never needs x itself.
void DropPrunedColocations(const Graph& g, const std::vector<bool>& keep, NodeDef* n) {
  auto cls = n->mutable_attr()->find("_class");
  if (cls == n->mutable_attr()->end()) return;
  auto* specs = cls->second.mutable_list()->mutable_s();
  for (int i = specs->size() - 1; i >= 0; --i) {
    absl::string_view spec = specs->Get(i);
    if (!absl::ConsumePrefix(&spec, "loc:@")) continue;
    const Node* target = g.FindNode(spec);
    if (target == nullptr || !keep[target->id()]) specs->erase(specs->begin() + i);
  }
  if (specs->empty()) n->mutable_attr()->erase(cls);
}

// The rendezvous key of a client-terminated feed or fetch.
std::string ClientKey(const StepGraphOptions& options, const std::string& tensor) {
  return CreateRendezvousKey(options.client_device, options.client_device_incarnation,
                             options.client_device, tensor, 0, 0);
}

void SetClientSendRecvAttrs(const StepGraphOptions& options, const std::string& tensor,
                            NodeDef* n) {
  auto& attr = *n->mutable_attr();
  attr["tensor_name"].set_s(tensor);
  attr["send_device"].set_s(options.client_device);
  attr["recv_device"].set_s(options.client_device);
  attr["send_device_incarnation"].set_i(static_cast<int64_t>(options.client_device_incarnation));
  attr["client_terminated"].set_b(true);
}

// Runs the optimizer on `out`, keeping the feeds, fetches and `roots`, and
// records in `step` what it removed.
absl::Status Optimize(const Graph& g, const std::vector<const Node*>& roots,
                      const StepGraphOptions& options, GraphDef* out, StepGraph* step) {
  OptimizerOptions oopts;
  for (const std::string& n : step->feed_nodes) oopts.preserve.insert(n);
  for (const NodeDef& n : out->node()) {
    if (n.op() == "_Retval" || n.op() == "_Send") oopts.preserve.insert(n.name());
  }
  for (const Node* r : roots) oopts.preserve.insert(r->name());
  for (const NodeDef& n : out->node()) {
    const Node* full = g.FindNode(n.name());
    if (full == nullptr) continue;
    std::vector<PartialShape> shapes;
    for (int k = 0; k < full->num_outputs(); ++k) shapes.push_back(full->output_shape(k));
    oopts.shapes.emplace(n.name(), std::move(shapes));
  }
  // A feed's value is checked against its shape before each step.
  for (size_t i = 0; i < step->feed_nodes.size(); ++i) {
    oopts.shapes[step->feed_nodes[i]] = {step->feed_shapes[i]};
  }
  oopts.evaluate = options.evaluate;
  // (name, op) of every node, for the placement log's removed nodes.
  std::vector<std::pair<std::string, std::string>> before;
  for (const NodeDef& n : out->node()) before.emplace_back(n.name(), n.op());
  GR_RETURN_IF_ERROR(OptimizeGraph(out, oopts, &step->optimization));
  absl::flat_hash_set<std::string> after;
  for (const NodeDef& n : out->node()) after.insert(n.name());
  const auto& merged_into = step->optimization.merged_into;
  for (const auto& [name, op] : before) {
    if (after.contains(name) || step->log_names.contains(name)) continue;
    auto it = merged_into.find(name);
    step->log_removed.push_back(
        {name, op, it != merged_into.end() && after.contains(it->second) ? it->second : ""});
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<StepGraph> BuildStepGraph(const Graph& g, const std::vector<std::string>& feeds,
                                         const std::vector<std::string>& fetches,
                                         const std::vector<std::string>& targets,
                                         const StepGraphOptions& options) {
  if (!options.feed_value_shapes.empty() && options.feed_value_shapes.size() != feeds.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "feed_value_shapes has ", options.feed_value_shapes.size(), " shapes for ",
        feeds.size(), " feeds"));
  }
  StepGraph step;
  auto resolve = [&](const std::string& name, absl::string_view what)
      -> absl::StatusOr<std::pair<const Node*, int>> {
    auto id = ParseTensorId(name);
    if (!id.ok() || id->IsControl()) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, " '", name, "' is not a tensor name (\"node\" or \"node:k\")"));
    }
    const Node* node = g.FindNode(id->node);
    if (node == nullptr) {
      return absl::NotFoundError(absl::StrCat(what, " '", name, "': there is no node '",
                                              id->node, "' in the graph"));
    }
    if (id->index >= node->num_outputs()) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, " '", name, "': ", NodeLabel(*node), " has ", node->num_outputs(),
          " outputs"));
    }
    return std::make_pair(node, id->index);
  };

  // Fed tensors -> their _Arg (or client _Recv) node names.
  std::map<std::pair<int, int>, std::string> fed;
  GraphDef out;
  *out.mutable_versions() = g.versions();
  for (size_t i = 0; i < feeds.size(); ++i) {
    GR_ASSIGN_OR_RETURN(auto t, resolve(feeds[i], "feed"));
    const std::string arg = absl::StrCat("_arg_", t.first->name(), "_", t.second, "_", i);
    if (!fed.emplace(std::make_pair(t.first->id(), t.second), arg).second) {
      return absl::InvalidArgumentError(absl::StrCat("'", feeds[i], "' is fed twice"));
    }
    step.feed_dtypes.push_back(BaseType(t.first->output_type(t.second)));
    step.feed_shapes.push_back(t.first->output_shape(t.second));
    step.feed_labels.push_back(NodeLabel(*t.first));
    step.feed_nodes.push_back(arg);
    step.log_names[arg] = {t.first->name(), t.first->op(),
                           absl::StrCat("feed of '", feeds[i], "'")};
    NodeDef* n = out.add_node();
    n->set_name(arg);
    if (options.feeds_through_rendezvous) {
      // TensorFlow's client-terminated feed: a _Recv on the client device
      // that the client's Send satisfies.
      const std::string tensor = absl::StrCat(t.first->name(), ":", t.second);
      n->set_op("_Recv");
      n->set_device(options.client_device);
      SetClientSendRecvAttrs(options, tensor, n);
      (*n->mutable_attr())["tensor_type"].set_type(step.feed_dtypes.back());
      step.feed_keys.push_back(ClientKey(options, tensor));
    } else {
      n->set_op("_Arg");
      n->set_device(t.first->requested_device());
      (*n->mutable_attr())["T"].set_type(step.feed_dtypes.back());
      (*n->mutable_attr())["index"].set_i(static_cast<int64_t>(i));
    }
  }
  std::vector<const Node*> roots;
  std::vector<std::string> retval_inputs;
  std::vector<DataType> retval_dtypes;
  for (const std::string& f : fetches) {
    GR_ASSIGN_OR_RETURN(auto t, resolve(f, "fetch"));
    retval_dtypes.push_back(BaseType(t.first->output_type(t.second)));
    auto it = fed.find({t.first->id(), t.second});
    if (it != fed.end()) {
      retval_inputs.push_back(it->second);
    } else {
      retval_inputs.push_back(TensorId{t.first->name(), t.second}.ToString());
      roots.push_back(t.first);
    }
  }
  for (const std::string& target : targets) {
    const Node* node = g.FindNode(target);
    if (node == nullptr) {
      return absl::NotFoundError(absl::StrCat("target '", target,
                                              "': there is no node by that name"));
    }
    roots.push_back(node);
  }

  // Everything the roots need, stopping at fed tensors.
  std::vector<bool> keep(g.num_nodes(), false);
  std::vector<const Node*> stack = roots;
  for (const Node* r : roots) keep[r->id()] = true;
  // A fed Placeholder hands its control edges to its feed node, as in
  // TensorFlow: `^x` waits for the fed value, not for the Placeholder.
  std::map<int, std::string> fed_placeholders;
  for (const auto& f : fed) {
    const Node* src = g.node(f.first.first);
    if (src->op() == "Placeholder" || src->op() == "PlaceholderV2" ||
        src->op() == "PlaceholderWithDefault") {
      fed_placeholders.emplace(src->id(), f.second);
    }
  }
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    for (const Edge* e : n->in_edges()) {
      if (!e->IsControl() && fed.count({e->src->id(), e->src_output})) continue;
      if (e->IsControl() && fed_placeholders.count(e->src->id())) continue;
      if (!keep[e->src->id()]) {
        keep[e->src->id()] = true;
        stack.push_back(e->src);
      }
    }
  }
  // A fed node the step still runs (for another output) keeps its name in
  // the log; its feed node is then listed as an added node.
  for (const auto& f : fed) {
    if (keep[f.first.first]) {
      step.log_names[f.second].name.clear();
      step.log_names[f.second].op.clear();
    }
  }
  for (const auto& node : g.nodes()) {
    if (!keep[node->id()]) continue;
    NodeDef* n = out.add_node();
    *n = node->def();
    auto pinned = options.pinned_devices.find(n->name());
    if (pinned != options.pinned_devices.end()) n->set_device(pinned->second);
    DropPrunedColocations(g, keep, n);
    n->clear_input();
    for (const std::string& in : node->def().input()) {
      auto id = ParseTensorId(in, /*allow_internal_names=*/true);
      if (id.ok() && !id->IsControl()) {
        const Node* src = g.FindNode(id->node);
        auto it = fed.find({src->id(), id->index});
        if (it != fed.end()) {
          n->add_input(it->second);
          continue;
        }
      } else if (id.ok()) {
        const Node* src = g.FindNode(id->node);
        auto it = src == nullptr ? fed_placeholders.end() : fed_placeholders.find(src->id());
        if (it != fed_placeholders.end()) {
          n->add_input(absl::StrCat("^", it->second));
          continue;
        }
      }
      n->add_input(in);
    }
  }
  for (size_t i = 0; i < retval_inputs.size(); ++i) {
    NodeDef* n = out.add_node();
    n->add_input(retval_inputs[i]);
    if (options.feeds_through_rendezvous) {
      // The client-terminated fetch: a _Send on the client device.
      n->set_name(absl::StrCat("_send_", i));
      n->set_op("_Send");
      n->set_device(options.client_device);
      // A fetch named twice is sent twice: give each its own key.
      const std::string tensor = absl::StrCat(fetches[i], "#", i);
      SetClientSendRecvAttrs(options, tensor, n);
      (*n->mutable_attr())["T"].set_type(retval_dtypes[i]);
      step.fetch_keys.push_back(ClientKey(options, tensor));
    } else {
      n->set_name(absl::StrCat("_retval_", i));
      n->set_op("_Retval");
      (*n->mutable_attr())["index"].set_i(static_cast<int64_t>(i));
      (*n->mutable_attr())["T"].set_type(retval_dtypes[i]);
    }
    step.log_names[n->name()] = {"", "", absl::StrCat("fetch of '", fetches[i], "'")};
    step.fetch_nodes.push_back(n->name());
  }
  if (options.optimize) GR_RETURN_IF_ERROR(Optimize(g, roots, options, &out, &step));

  ImportOptions import;
  import.infer_shapes = false;  // done on the full graph already
  import.allow_internal_names = true;
  GR_ASSIGN_OR_RETURN(step.graph, ImportGraphDef(out, import));
  // The placer's costs want shapes: the full graph's, and the fed values'
  // own (where given) for the feed nodes.
  for (size_t i = 0; i < step.feed_nodes.size(); ++i) {
    step.graph->set_output_shapes(step.graph->FindNode(step.feed_nodes[i]),
                                  {options.feed_value_shapes.empty()
                                       ? step.feed_shapes[i]
                                       : PartialShape(options.feed_value_shapes[i])});
  }
  for (const auto& node : step.graph->nodes()) {
    const Node* full = g.FindNode(node->name());
    if (full == nullptr || full->num_outputs() != node->num_outputs()) continue;
    std::vector<PartialShape> shapes;
    for (int k = 0; k < full->num_outputs(); ++k) shapes.push_back(full->output_shape(k));
    step.graph->set_output_shapes(node.get(), std::move(shapes));
  }
  return step;
}

absl::Status CheckFeed(const StepGraph& step, size_t i, const std::string& name,
                       const Tensor& value) {
  if (value.dtype() != step.feed_dtypes[i]) {
    return absl::InvalidArgumentError(absl::StrCat(
        "feed '", name, "' is a ", DataTypeString(value.dtype()), " tensor, but ",
        step.feed_labels[i], " produces ", DataTypeString(step.feed_dtypes[i])));
  }
  if (!step.feed_shapes[i].IsCompatibleWith(value.shape())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "feed '", name, "' has shape ", value.shape().DebugString(), ", but ",
        step.feed_labels[i], " has shape ", step.feed_shapes[i].DebugString()));
  }
  return absl::OkStatus();
}

}  // namespace graphrun
