#include "runtime/saver.h"

#include <dirent.h>
#include <unistd.h>

#include <sys/stat.h>

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "graph/checkpoint/checkpoint_state.h"
#include "graph/checkpoint/tensor_bundle.h"
#include "graph/status_macros.h"
#include "graph/tensor_shape.h"
#include "placer/variable_split.h"

namespace graphrun {
namespace {

struct Variable {
  std::string name;
  std::string device;  // as the graph requests it (a split one's: its first part's)
  bool resource = false;
  DataType dtype = DT_INVALID;
  PartialShape shape;
  // A variable split over ps tasks (placer/variable_split.h): its parts in
  // order, and the rows of each.
  std::vector<std::string> parts;
  std::vector<int64_t> rows;
};

// The number K of a part "NAME/part_K".
int PartNumber(const std::string& part) {
  int k = 0;
  const size_t at = part.rfind("/part_");
  if (at != std::string::npos) (void)absl::SimpleAtoi(part.substr(at + 6), &k);
  return k;
}

absl::StatusOr<std::vector<Variable>> Variables(const GraphDef& graph) {
  std::vector<Variable> out;
  std::map<std::string, size_t> split;  // a split variable's name -> its index in out
  for (const NodeDef& n : graph.node()) {
    if (n.op() != "VariableV2" && n.op() != "VarHandleOp") continue;
    Variable v;
    v.name = n.name();
    v.device = n.device();
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
    auto part_of = n.attr().find(placer::kPartOfAttr);
    if (part_of == n.attr().end()) {
      out.push_back(std::move(v));
      continue;
    }
    if (v.shape.unknown_rank() || v.shape.rank() < 1 || v.shape.dim(0) < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("variable part ", n.name(), " has no known first dimension"));
    }
    auto [it, first] = split.emplace(part_of->second.s(), out.size());
    if (first) {
      Variable whole = v;
      whole.name = part_of->second.s();
      out.push_back(std::move(whole));
    }
    Variable& whole = out[it->second];
    whole.parts.push_back(n.name());
    whole.rows.push_back(v.shape.dim(0));
  }
  for (Variable& v : out) {
    if (v.parts.empty()) continue;
    std::vector<size_t> order(v.parts.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return PartNumber(v.parts[a]) < PartNumber(v.parts[b]);
    });
    std::vector<std::string> parts;
    std::vector<int64_t> rows;
    int64_t total = 0;
    for (size_t i : order) {
      parts.push_back(v.parts[i]);
      rows.push_back(v.rows[i]);
      total += v.rows[i];
    }
    v.parts = std::move(parts);
    v.rows = std::move(rows);
    std::vector<int64_t> dims = {total};
    for (int d = 1; d < v.shape.rank(); ++d) dims.push_back(v.shape.dim(d));
    v.shape = PartialShape(dims);
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

// The node whose output is `v`'s value: a ref variable itself, else one
// added to `nodes` under graphrun_save/ (a resource variable's read; a
// split variable's ConcatV2 of its parts).
std::string ValueName(const Variable& v) {
  return v.resource || !v.parts.empty() ? absl::StrCat("graphrun_save/", v.name) : v.name;
}

std::string AddValueRead(GraphDef* nodes, const Variable& v) {
  const std::string read = ValueName(v);
  if (!v.resource && v.parts.empty()) return read;
  if (v.parts.empty()) {
    NodeDef* n = AddNode(nodes, read, "ReadVariableOp", {v.name});
    (*n->mutable_attr())["dtype"].set_type(v.dtype);
    return read;
  }
  std::vector<std::string> inputs;
  for (size_t k = 0; k < v.parts.size(); ++k) {
    if (!v.resource) {
      inputs.push_back(v.parts[k]);  // a ref part: read by the concatenation
      continue;
    }
    NodeDef* n = AddNode(nodes, absl::StrCat(read, "/part_", k), "ReadVariableOp", {v.parts[k]});
    (*n->mutable_attr())["dtype"].set_type(v.dtype);
    inputs.push_back(n->name());
  }
  NodeDef* axis = AddNode(nodes, read + "/axis", "Const", {});
  (*axis->mutable_attr())["dtype"].set_type(DT_INT32);
  Tensor::Scalar<int32_t>(0).AsProtoField((*axis->mutable_attr())["value"].mutable_tensor());
  inputs.push_back(axis->name());
  NodeDef* concat = AddNode(nodes, read, "ConcatV2", inputs);
  (*concat->mutable_attr())["N"].set_i(static_cast<int64_t>(v.parts.size()));
  (*concat->mutable_attr())["T"].set_type(v.dtype);
  (*concat->mutable_attr())["Tidx"].set_type(DT_INT32);
  return read;
}

// Adds `name`, which assigns the tensor `value` to `v` (to each of its
// parts its rows, when split).
void AddAssign(GraphDef* nodes, const Variable& v, const std::string& name,
               const std::string& value) {
  auto assign = [&](const std::string& node, const std::string& var, const std::string& from) {
    NodeDef* a = AddNode(nodes, node, v.resource ? "AssignVariableOp" : "Assign", {var, from});
    if (v.resource) {
      (*a->mutable_attr())["dtype"].set_type(v.dtype);
      (*a->mutable_attr())["validate_shape"].set_b(true);
    } else {
      (*a->mutable_attr())["T"].set_type(v.dtype);
    }
  };
  if (v.parts.empty()) {
    assign(name, v.name, value);
    return;
  }
  NodeDef* rows = AddNode(nodes, name + "/rows", "Const", {});
  (*rows->mutable_attr())["dtype"].set_type(DT_INT32);
  std::vector<int32_t> r(v.rows.begin(), v.rows.end());
  Tensor::FromVector(r).AsProtoField((*rows->mutable_attr())["value"].mutable_tensor());
  NodeDef* axis = AddNode(nodes, name + "/axis", "Const", {});
  (*axis->mutable_attr())["dtype"].set_type(DT_INT32);
  Tensor::Scalar<int32_t>(0).AsProtoField((*axis->mutable_attr())["value"].mutable_tensor());
  NodeDef* split = AddNode(nodes, name + "/split", "SplitV", {value, rows->name(), axis->name()});
  (*split->mutable_attr())["num_split"].set_i(static_cast<int64_t>(v.parts.size()));
  (*split->mutable_attr())["T"].set_type(v.dtype);
  (*split->mutable_attr())["Tlen"].set_type(DT_INT32);
  std::vector<std::string> waits;
  for (size_t k = 0; k < v.parts.size(); ++k) {
    const std::string part = absl::StrCat(name, "/part_", k);
    assign(part, v.parts[k], absl::StrCat(split->name(), ":", k));
    waits.push_back("^" + part);
  }
  AddNode(nodes, name, "NoOp", waits);
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

// The task part of a device request ("/job:ps/task:1" of
// "/job:ps/task:1/device:CPU:0"), "" when it names none.
std::string TaskOf(const std::string& device) {
  if (!absl::StartsWith(device, "/job:")) return "";
  return device.substr(0, device.find("/device:"));
}

// The first three inputs of a task's SaveV2 or RestoreV2, pinned to
// `task`: BASE/prefix (a fed string), BASE/names and BASE/slices (Consts:
// the variables' keys, whole tensors). Returns the variables' dtypes.
std::vector<DataType> AddShardSpec(GraphDef* nodes, const std::string& base,
                                   const std::string& task, const std::vector<Variable>& vars,
                                   const std::vector<int>& members) {
  NodeDef* p = AddNode(nodes, base + "prefix", "Placeholder", {});
  (*p->mutable_attr())["dtype"].set_type(DT_STRING);
  p->set_device(task);
  Tensor names(DT_STRING, TensorShape({static_cast<int64_t>(members.size())}));
  Tensor slices(DT_STRING, TensorShape({static_cast<int64_t>(members.size())}));
  std::vector<DataType> dtypes;
  for (size_t i = 0; i < members.size(); ++i) {
    names.flat<std::string>()[i] = vars[members[i]].name;
    slices.flat<std::string>()[i] = "";
    dtypes.push_back(vars[members[i]].dtype);
  }
  for (const auto& [name, value] :
       {std::pair<std::string, Tensor*>{"names", &names}, {"slices", &slices}}) {
    NodeDef* c = AddNode(nodes, base + name, "Const", {});
    (*c->mutable_attr())["dtype"].set_type(DT_STRING);
    value->AsProtoField((*c->mutable_attr())["value"].mutable_tensor());
    c->set_device(task);
  }
  return dtypes;
}

// A save of variables that live on several tasks (parameter servers): each
// task writes its own variables with a SaveV2 of its own, all at once, to
// a shard beside PREFIX, and a MergeV2Checkpoints makes the shards one
// checkpoint at PREFIX and removes them, as TensorFlow's sharded Saver.
absl::StatusOr<int> SaveSharded(const std::vector<Variable>& vars,
                                const std::map<std::string, std::vector<int>>& by_task,
                                Session* session, const std::string& prefix) {
  GraphDef nodes;
  const int n = static_cast<int>(by_task.size());
  std::vector<std::pair<std::string, Tensor>> feeds;
  std::vector<std::string> shard_prefixes;
  NodeDef* merge_prefixes = AddNode(&nodes, "graphrun_save_sharded/prefixes", "Placeholder", {});
  (*merge_prefixes->mutable_attr())["dtype"].set_type(DT_STRING);
  NodeDef* dest = AddNode(&nodes, "graphrun_save_sharded/destination", "Placeholder", {});
  (*dest->mutable_attr())["dtype"].set_type(DT_STRING);
  std::vector<std::string> saves;
  int k = 0;
  for (const auto& [task, members] : by_task) {
    const std::string base = absl::StrCat("graphrun_save_sharded/", k, "/");
    const std::vector<DataType> dtypes = AddShardSpec(&nodes, base, task, vars, members);
    std::vector<std::string> inputs = {base + "prefix", base + "names", base + "slices"};
    for (int m : members) {
      const Variable& v = vars[m];
      inputs.push_back(ValueName(v));
    }
    NodeDef* save_def = AddNode(&nodes, base + "save", "SaveV2", inputs);
    save_def->set_device(task);
    for (DataType t : dtypes) (*save_def->mutable_attr())["dtypes"].mutable_list()->add_type(t);
    saves.push_back(save_def->name());
    const std::string shard = absl::StrFormat("%s_temp/part-%05d-of-%05d", prefix, k, n);
    feeds.emplace_back(base + "prefix", Tensor::Scalar<std::string>(shard));
    shard_prefixes.push_back(shard);
    ++k;
  }
  NodeDef* merge = AddNode(&nodes, "graphrun_save_sharded/merge", "MergeV2Checkpoints",
                           {"graphrun_save_sharded/prefixes", "graphrun_save_sharded/destination"});
  (*merge->mutable_attr())["delete_old_dirs"].set_b(true);
  for (const std::string& s : saves) merge->add_input(absl::StrCat("^", s));
  GR_RETURN_IF_ERROR(ExtendOnce(session, nodes));
  Tensor prefixes(DT_STRING, TensorShape({n}));
  for (int i = 0; i < n; ++i) prefixes.flat<std::string>()[i] = shard_prefixes[i];
  feeds.emplace_back("graphrun_save_sharded/prefixes", prefixes);
  feeds.emplace_back("graphrun_save_sharded/destination", Tensor::Scalar<std::string>(prefix));
  std::vector<Tensor> out;
  absl::Status s = session->Run(feeds, {}, {"graphrun_save_sharded/merge"}, &out);
  if (!s.ok()) {
    return absl::Status(s.code(), absl::StrCat("saving ", prefix, " in ", n,
                                               " shards (one per task): ", s.message()));
  }
  return static_cast<int>(vars.size());
}

absl::StatusOr<int> SaveVariables(const GraphDef& graph, Session* session,
                                  const std::string& prefix) {
  GR_ASSIGN_OR_RETURN(std::vector<Variable> vars, Variables(graph));
  GraphDef nodes;
  std::vector<std::string> fetches;
  for (const Variable& v : vars) fetches.push_back(AddValueRead(&nodes, v));
  GR_RETURN_IF_ERROR(ExtendOnce(session, nodes));
  // Variables on several tasks: a shard per task, written where they live.
  std::map<std::string, std::vector<int>> by_task;
  for (size_t i = 0; i < vars.size(); ++i) by_task[TaskOf(vars[i].device)].push_back(i);
  if (by_task.size() > 1 && by_task.count("") == 0) {
    return SaveSharded(vars, by_task, session, prefix);
  }
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

// A restore of variables that live on several tasks: each task reads its
// own variables from the checkpoint with a RestoreV2 of its own and assigns
// them there, all at once; the client only checks the index.
absl::StatusOr<int> RestoreSharded(const std::vector<Variable>& vars,
                                   const std::map<std::string, std::vector<int>>& by_task,
                                   const BundleReader& reader, Session* session,
                                   const std::string& prefix) {
  for (const Variable& v : vars) {
    GR_ASSIGN_OR_RETURN(BundleTensorInfo info, reader.GetInfo(v.name));
    if (info.dtype != v.dtype || !v.shape.IsCompatibleWith(info.shape)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "checkpoint ", prefix, " holds ", v.name, " as ", DataTypeString(info.dtype), " ",
          info.shape.DebugString(), "; the graph's variable ", v.name, " is ",
          DataTypeString(v.dtype), " ", v.shape.DebugString()));
    }
  }
  GraphDef nodes;
  std::vector<std::pair<std::string, Tensor>> feeds;
  std::vector<std::string> targets;
  int k = 0;
  for (const auto& [task, members] : by_task) {
    const std::string base = absl::StrCat("graphrun_restore_sharded/", k++, "/");
    const std::vector<DataType> dtypes = AddShardSpec(&nodes, base, task, vars, members);
    NodeDef* restore =
        AddNode(&nodes, base + "restore", "RestoreV2", {base + "prefix", base + "names",
                                                        base + "slices"});
    restore->set_device(task);
    for (DataType t : dtypes) (*restore->mutable_attr())["dtypes"].mutable_list()->add_type(t);
    for (size_t i = 0; i < members.size(); ++i) {
      const Variable& v = vars[members[i]];
      const std::string value = absl::StrCat(base, "restore:", i);
      const std::string name = absl::StrCat(base, "assign/", v.name);
      AddAssign(&nodes, v, name, value);
      targets.push_back(name);
    }
    feeds.emplace_back(base + "prefix", Tensor::Scalar<std::string>(prefix));
  }
  GR_RETURN_IF_ERROR(ExtendOnce(session, nodes));
  std::vector<Tensor> unused;
  absl::Status s = session->Run(feeds, {}, targets, &unused);
  if (!s.ok()) {
    return absl::Status(s.code(), absl::StrCat("restoring ", prefix, " on ", by_task.size(),
                                               " tasks: ", s.message()));
  }
  return static_cast<int>(vars.size());
}

absl::Status WaitForVariables(
    const GraphDef& graph, Session* session, absl::Duration timeout,
    const std::function<bool(const std::string& name, const std::string& device)>& wait_for) {
  GR_ASSIGN_OR_RETURN(std::vector<Variable> vars, Variables(graph));
  if (wait_for) {
    vars.erase(std::remove_if(vars.begin(), vars.end(),
                              [&](const Variable& v) { return !wait_for(v.name, v.device); }),
               vars.end());
  }
  if (vars.empty()) return absl::OkStatus();
  GraphDef nodes;
  std::vector<std::string> fetches;
  for (const Variable& v : vars) {
    const std::string name = absl::StrCat("graphrun_wait/", v.name);
    // A split variable's parts are set together: its first part answers.
    NodeDef* n = AddNode(&nodes, name, v.resource ? "VarIsInitializedOp" : "IsVariableInitialized",
                         {v.parts.empty() ? v.name : v.parts.front()});
    if (v.resource) {
      // VarIsInitializedOp has no attrs.
    } else {
      (*n->mutable_attr())["dtype"].set_type(v.dtype);
    }
    fetches.push_back(name);
  }
  GR_RETURN_IF_ERROR(ExtendOnce(session, nodes));
  const absl::Time deadline = absl::Now() + timeout;
  absl::Duration pause = absl::Milliseconds(50);
  while (true) {
    std::vector<Tensor> ready;
    GR_RETURN_IF_ERROR(session->Run({}, fetches, {}, &ready));
    std::vector<std::string> missing;
    for (size_t i = 0; i < vars.size(); ++i) {
      if (!ready[i].flat<bool>()[0]) missing.push_back(vars[i].name);
    }
    if (missing.empty()) return absl::OkStatus();
    if (absl::Now() + pause > deadline) {
      std::string names;
      for (size_t i = 0; i < missing.size() && i < 5; ++i) {
        absl::StrAppend(&names, i == 0 ? "" : ", ", missing[i]);
      }
      if (missing.size() > 5) absl::StrAppend(&names, " and ", missing.size() - 5, " more");
      return absl::DeadlineExceededError(absl::StrCat(
          "waited ", absl::FormatDuration(timeout), " for another client to set the variables; ",
          missing.size(), " of ", vars.size(), " still have no value: ", names));
    }
    absl::SleepFor(pause);
    pause = std::min(pause * 2, absl::Milliseconds(500));
  }
}

absl::StatusOr<int> RestoreVariables(const GraphDef& graph, Session* session,
                                     const std::string& prefix_or_dir) {
  GR_ASSIGN_OR_RETURN(const std::string prefix, ResolveCheckpointPrefix(prefix_or_dir));
  GR_ASSIGN_OR_RETURN(std::unique_ptr<BundleReader> reader, BundleReader::Open(prefix));
  GR_ASSIGN_OR_RETURN(std::vector<Variable> vars, Variables(graph));
  std::map<std::string, std::vector<int>> by_task;
  for (size_t i = 0; i < vars.size(); ++i) by_task[TaskOf(vars[i].device)].push_back(i);
  if (by_task.size() > 1 && by_task.count("") == 0) {
    return RestoreSharded(vars, by_task, *reader, session, prefix);
  }
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
    AddAssign(&nodes, v, base, base + "/value");
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
