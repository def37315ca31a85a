#include "runtime/saver.h"

#include <dirent.h>
#include <unistd.h>

#include <sys/stat.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "graph/checkpoint/checkpoint_state.h"
#include "graph/checkpoint/tensor_bundle.h"
#include "graph/status_macros.h"
#include "graph/tensor_shape.h"

namespace graphrun {
namespace {

struct Variable {
  std::string name;
  bool resource = false;
  DataType dtype = DT_INVALID;
  PartialShape shape;
};

absl::StatusOr<std::vector<Variable>> Variables(const GraphDef& graph) {
  std::vector<Variable> out;
  for (const NodeDef& n : graph.node()) {
    if (n.op() != "VariableV2" && n.op() != "VarHandleOp") continue;
    Variable v;
    v.name = n.name();
    v.resource = n.op() == "VarHandleOp";
    auto dtype = n.attr().find("dtype");
    if (dtype == n.attr().end()) {
      return absl::InvalidArgumentError(absl::StrCat("variable ", n.name(), " has no dtype"));
    }
    v.dtype = dtype->second.type();
    auto shape = n.attr().find("shape");
    if (shape != n.attr().end()) {
      absl::StatusOr<PartialShape> s = PartialShape::FromProto(shape->second.shape());
      if (s.ok()) v.shape = *s;
    }
    out.push_back(std::move(v));
  }
  return out;
}

NodeDef* AddNode(GraphDef* g, const std::string& name, const std::string& op,
                 std::vector<std::string> inputs) {
  NodeDef* n = g->add_node();
  n->set_name(name);
  n->set_op(op);
  for (std::string& in : inputs) n->add_input(std::move(in));
  return n;
}

// Adds `nodes` to the session's graph unless an earlier save or restore
// did: the session then refuses them as duplicates, which is fine. (A
// record of sessions by address would go stale when a session is freed
// and another takes its place.)
absl::Status ExtendOnce(Session* session, const GraphDef& nodes) {
  if (nodes.node_size() == 0) return absl::OkStatus();
  absl::Status s = session->Extend(nodes);
  if (!s.ok() && absl::StrContains(s.message(), absl::StrCat("duplicate node name '",
                                                               nodes.node(0).name(), "'"))) {
    return absl::OkStatus();
  }
  return s;
}

std::string Basename(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

absl::StatusOr<int> SaveVariables(const GraphDef& graph, Session* session,
                                  const std::string& prefix) {
  GR_ASSIGN_OR_RETURN(std::vector<Variable> vars, Variables(graph));
  GraphDef nodes;
  std::vector<std::string> fetches;
  for (const Variable& v : vars) {
    if (!v.resource) {
      fetches.push_back(v.name);
      continue;
    }
    const std::string read = absl::StrCat("graphrun_save/", v.name);
    NodeDef* n = AddNode(&nodes, read, "ReadVariableOp", {v.name});
    (*n->mutable_attr())["dtype"].set_type(v.dtype);
    fetches.push_back(read);
  }
  GR_RETURN_IF_ERROR(ExtendOnce(session, nodes));
  std::vector<Tensor> values;
  if (!fetches.empty()) {
    absl::Status s = session->Run({}, fetches, {}, &values);
    if (!s.ok()) {
      return absl::Status(s.code(), absl::StrCat("saving ", prefix, ": ", s.message()));
    }
  }
  BundleWriter writer(prefix);
  for (size_t i = 0; i < vars.size(); ++i) {
    GR_RETURN_IF_ERROR(writer.Add(vars[i].name, values[i]));
  }
  GR_RETURN_IF_ERROR(writer.Finish());
  return static_cast<int>(vars.size());
}

std::string CheckpointDirectory(const std::string& prefix) {
  const size_t slash = prefix.rfind('/');
  return slash == std::string::npos ? "." : (slash == 0 ? "/" : prefix.substr(0, slash));
}

absl::Status UpdateCheckpointState(const std::string& prefix,
                                   const std::vector<std::string>& dropped) {
  const std::string dir = CheckpointDirectory(prefix);
  CheckpointState state;
  absl::StatusOr<CheckpointState> old = ReadCheckpointState(dir);
  if (old.ok()) state = *old;
  const std::string name = Basename(prefix);
  state.set_model_checkpoint_path(name);
  std::vector<std::string> all(state.all_model_checkpoint_paths().begin(),
                               state.all_model_checkpoint_paths().end());
  all.erase(std::remove(all.begin(), all.end(), name), all.end());
  for (const std::string& d : dropped) {
    all.erase(std::remove(all.begin(), all.end(), Basename(d)), all.end());
  }
  all.push_back(name);
  state.clear_all_model_checkpoint_paths();
  for (const std::string& p : all) state.add_all_model_checkpoint_paths(p);
  return WriteCheckpointState(dir, state);
}

void RemoveCheckpoint(const std::string& prefix) {
  const std::string dir = CheckpointDirectory(prefix);
  const std::string name = Basename(prefix);
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return;
  std::vector<std::string> doomed;
  while (const dirent* e = ::readdir(d)) {
    const std::string file = e->d_name;
    if (file == name + ".index" || absl::StartsWith(file, name + ".data-")) {
      doomed.push_back(absl::StrCat(dir, "/", file));
    }
  }
  ::closedir(d);
  // The index first: a checkpoint without one is no longer visible.
  std::sort(doomed.begin(), doomed.end(), [](const std::string& a, const std::string& b) {
    return absl::EndsWith(a, ".index") > absl::EndsWith(b, ".index");
  });
  for (const std::string& f : doomed) ::unlink(f.c_str());
}

absl::StatusOr<std::string> ResolveCheckpointPrefix(const std::string& prefix_or_dir) {
  struct stat st;
  if (stat(prefix_or_dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    return LatestCheckpoint(prefix_or_dir);
  }
  return prefix_or_dir;
}

absl::StatusOr<int> RestoreVariables(const GraphDef& graph, Session* session,
                                     const std::string& prefix_or_dir) {
  GR_ASSIGN_OR_RETURN(const std::string prefix, ResolveCheckpointPrefix(prefix_or_dir));
  GR_ASSIGN_OR_RETURN(std::unique_ptr<BundleReader> reader, BundleReader::Open(prefix));
  GR_ASSIGN_OR_RETURN(std::vector<Variable> vars, Variables(graph));
  GraphDef nodes;
  std::vector<std::pair<std::string, Tensor>> feeds;
  std::vector<std::string> targets;
  for (const Variable& v : vars) {
    GR_ASSIGN_OR_RETURN(Tensor value, reader->Lookup(v.name));
    if (value.dtype() != v.dtype || !v.shape.IsCompatibleWith(value.shape())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "checkpoint ", prefix, " holds ", v.name, " as ", DataTypeString(value.dtype()), " ",
          value.shape().DebugString(), "; the graph's variable ", v.name, " is ",
          DataTypeString(v.dtype), " ", v.shape.DebugString()));
    }
    const std::string base = absl::StrCat("graphrun_restore/", v.name);
    NodeDef* value_node = AddNode(&nodes, base + "/value", "Placeholder", {});
    (*value_node->mutable_attr())["dtype"].set_type(v.dtype);
    if (v.resource) {
      NodeDef* assign = AddNode(&nodes, base, "AssignVariableOp", {v.name, base + "/value"});
      (*assign->mutable_attr())["dtype"].set_type(v.dtype);
      (*assign->mutable_attr())["validate_shape"].set_b(true);
    } else {
      NodeDef* assign = AddNode(&nodes, base, "Assign", {v.name, base + "/value"});
      (*assign->mutable_attr())["T"].set_type(v.dtype);
    }
    feeds.emplace_back(base + "/value", std::move(value));
    targets.push_back(base);
  }
  GR_RETURN_IF_ERROR(ExtendOnce(session, nodes));
  if (!targets.empty()) {
    std::vector<Tensor> unused;
    absl::Status s = session->Run(feeds, {}, targets, &unused);
    if (!s.ok()) {
      return absl::Status(s.code(), absl::StrCat("restoring ", prefix, ": ", s.message()));
    }
  }
  return static_cast<int>(vars.size());
}

}  // namespace graphrun
