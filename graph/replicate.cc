#include "graph/replicate.h"

#include <algorithm>
#include <map>
#include <memory>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "graph/graph.h"
#include "graph/import.h"
#include "graph/lower_collectives.h"
#include "graph/status_macros.h"
#include "graph/tensor.h"

namespace graphrun {
namespace {

constexpr char kExchangeScope[] = "graphrun_allreduce";
constexpr char kReplicasScope[] = "graphrun_replicas";

bool IsCheckpointOp(const std::string& op) {
  return op == "SaveV2" || op == "Save" || op == "SaveSlices" || op == "RestoreV2" ||
         op == "Restore" || op == "RestoreSlice" || op == "MergeV2Checkpoints";
}

bool IsVariableOp(const std::string& op) {
  return op == "VariableV2" || op == "Variable" || op == "VarHandleOp";
}

bool IsFloat(DataType t) { return t == DT_FLOAT || t == DT_DOUBLE; }

// One optimizer update's gradient.
struct Update {
  const Node* apply;
  int grad_input;
  std::string grad;  // the tensor feeding it
  DataType dtype;
  std::vector<int64_t> shape;
  int64_t elements;
  int order;  // topological position of the gradient's producer
};

// Follows input 0 of an update to its variable op (through Identity).
const Node* VariableOf(const Node& update) {
  const Node* n = &update;
  for (int hops = 0; hops < 8; ++hops) {
    const Edge* e = n->input_edge(0);
    if (e == nullptr) return nullptr;
    n = e->src;
    if (IsVariableOp(n->op())) return n;
    if (n->op() != "Identity" && n->op() != "RefIdentity") return nullptr;
  }
  return nullptr;
}

absl::StatusOr<Update> DescribeUpdate(const Node& apply, const std::vector<int>& position) {
  const OpDef* def = apply.op_def();
  if (def == nullptr || def->inputs.size() != static_cast<size_t>(apply.num_inputs())) {
    return absl::InvalidArgumentError(
        absl::StrCat(NodeLabel(apply), ": an optimizer update graphrun cannot replicate"));
  }
  Update u{&apply, -1, "", DT_INVALID, {}, 0, 0};
  for (size_t i = 0; i < def->inputs.size(); ++i) {
    if (def->inputs[i].name == "grad" || def->inputs[i].name == "delta") u.grad_input = i;
  }
  const Edge* grad = u.grad_input < 0 ? nullptr : apply.input_edge(u.grad_input);
  if (grad == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(NodeLabel(apply), ": no gradient input to average over replicas"));
  }
  u.grad = apply.def().input(u.grad_input);
  u.dtype = apply.input_type(u.grad_input);
  u.order = position[grad->src->id()];
  if (!IsFloat(u.dtype)) {
    return absl::InvalidArgumentError(absl::StrCat(
        NodeLabel(apply), ": its gradient is ", DataTypeString(u.dtype),
        "; only float and double gradients are averaged over replicas"));
  }
  const PartialShape& inferred = grad->src->output_shape(grad->src_output);
  if (inferred.IsFullyDefined()) {
    for (int d = 0; d < inferred.rank(); ++d) u.shape.push_back(inferred.dim(d));
  } else if (const Node* var = VariableOf(apply); var != nullptr) {
    const AttrValue* shape = var->attrs().Find("shape");
    if (shape == nullptr || shape->shape().unknown_rank()) u.shape = {-1};
    else for (const auto& d : shape->shape().dim()) u.shape.push_back(d.size());
  } else {
    u.shape = {-1};
  }
  u.elements = 1;
  for (int64_t d : u.shape) {
    if (d < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          NodeLabel(apply), ": the shape of its gradient ", u.grad,
          " is not fully known, so it cannot be fused for the allreduce"));
    }
    u.elements *= d;
  }
  return u;
}

AttrValue TypeAttr(DataType t) {
  AttrValue v;
  v.set_type(t);
  return v;
}
AttrValue IntAttr(int64_t i) {
  AttrValue v;
  v.set_i(i);
  return v;
}
AttrValue StringAttr(const std::string& v) {
  AttrValue a;
  a.set_s(v);
  return a;
}

AttrValue BoolAttr(bool b) {
  AttrValue v;
  v.set_b(b);
  return v;
}

// Builds the nodes of one replica's part of the exchange.
class Builder {
 public:
  Builder(GraphDef* out, absl::flat_hash_set<std::string>* taken)
      : out_(out), taken_(taken) {}

  absl::StatusOr<NodeDef*> Add(const std::string& name, const std::string& op,
                               std::vector<std::string> inputs, const std::string& device) {
    if (!taken_->insert(name).second) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the graph already has a node named '", name, "', which replication needs"));
    }
    NodeDef* n = out_->add_node();
    n->set_name(name);
    n->set_op(op);
    n->set_device(device);
    for (std::string& i : inputs) n->add_input(std::move(i));
    return n;
  }

  absl::StatusOr<std::string> Const(const std::string& name, const Tensor& value,
                                    const std::string& device) {
    GR_ASSIGN_OR_RETURN(NodeDef * n, Add(name, "Const", {}, device));
    (*n->mutable_attr())["dtype"] = TypeAttr(value.dtype());
    value.AsProtoTensorContent((*n->mutable_attr())["value"].mutable_tensor());
    return name;
  }

  absl::StatusOr<std::string> Vector(const std::string& name, const std::vector<int32_t>& v,
                                     const std::string& device) {
    Tensor t(DT_INT32, TensorShape({static_cast<int64_t>(v.size())}));
    std::copy(v.begin(), v.end(), t.flat<int32_t>().data());
    return Const(name, t, device);
  }

 private:
  GraphDef* out_;
  absl::flat_hash_set<std::string>* taken_;
};

Tensor ScaleBy(DataType dtype, double scale) {
  return dtype == DT_DOUBLE ? Tensor::Scalar<double>(scale)
                            : Tensor::Scalar<float>(static_cast<float>(scale));
}

}  // namespace

std::string ReplicatedGraph::NodeName(const std::string& name, int replica) const {
  if (replica == 0 || !replicated.contains(name)) return name;
  return absl::StrCat("replica_", replica, "/", name);
}

std::string ReplicatedGraph::TensorName(const std::string& tensor, int replica) const {
  const bool control = absl::StartsWith(tensor, "^");
  std::string node = control ? tensor.substr(1) : tensor;
  std::string suffix;
  if (!control) {
    const size_t colon = node.rfind(':');
    if (colon != std::string::npos) {
      suffix = node.substr(colon);
      node.resize(colon);
    }
  }
  return absl::StrCat(control ? "^" : "", NodeName(node, replica), suffix);
}

absl::StatusOr<ReplicatedGraph> ReplicateForDataParallel(const GraphDef& given,
                                                         const ReplicateOptions& options) {
  const int n = static_cast<int>(options.devices.size());
  if (n < 1) return absl::InvalidArgumentError("replication needs at least one device");
  if (options.wire_float != DT_FLOAT && options.wire_float != DT_HALF &&
      options.wire_float != DT_BFLOAT16) {
    return absl::InvalidArgumentError("the wire type of gradients is float, half or bfloat16");
  }
  // Functions inlined and functional control flow lowered first, so the
  // updates inside a tf.function's train step are nodes like any other.
  GR_ASSIGN_OR_RETURN(std::unique_ptr<Graph> graph, ImportGraphDef(given));
  GR_ASSIGN_OR_RETURN(std::vector<Node*> topo, graph->TopologicalOrder());
  std::vector<int> position(graph->num_nodes(), 0);
  for (size_t i = 0; i < topo.size(); ++i) position[topo[i]->id()] = static_cast<int>(i);

  ReplicatedGraph out;
  out.replicas = n;
  // The Saver's subgraphs: everything downstream of a checkpoint op.
  absl::flat_hash_set<const Node*> once;
  for (const Node* node : topo) {
    bool downstream = IsCheckpointOp(node->op());
    for (const Edge* e : node->in_edges()) downstream = downstream || once.contains(e->src);
    if (downstream) once.insert(node);
  }
  for (const auto& node : graph->nodes()) {
    if (!once.contains(node.get())) out.replicated.insert(node->name());
  }

  // The updates, in the order the backward pass makes their gradients
  // (last layer first), fused into buckets of one dtype.
  std::vector<Update> updates;
  for (const auto& node : graph->nodes()) {
    const std::string& op = node->op();
    if (once.contains(node.get())) continue;
    if (absl::StartsWith(op, "SparseApply") || absl::StartsWith(op, "ResourceSparseApply")) {
      return absl::InvalidArgumentError(absl::StrCat(
          NodeLabel(*node), ": sparse gradients (embedding lookups) are not averaged over "
          "replicas; train this graph on one replica or with parameter servers"));
    }
    if (absl::StartsWith(op, "Apply") || absl::StartsWith(op, "ResourceApply")) {
      GR_ASSIGN_OR_RETURN(Update u, DescribeUpdate(*node, position));
      updates.push_back(std::move(u));
    }
  }
  if (updates.empty()) {
    return absl::InvalidArgumentError(
        "the graph has no optimizer update (Apply* or ResourceApply* op) whose gradient "
        "replicas could average");
  }
  std::stable_sort(updates.begin(), updates.end(),
                   [](const Update& a, const Update& b) { return a.order > b.order; });
  std::vector<std::vector<const Update*>> buckets;
  std::map<DataType, std::pair<int, int64_t>> open;  // dtype -> (bucket, bytes)
  for (const Update& u : updates) {
    const int64_t bytes = u.elements * DataTypeSize(u.dtype);
    auto it = open.find(u.dtype);
    if (it == open.end() || it->second.second + bytes > options.bucket_bytes) {
      buckets.emplace_back();
      it = open.insert_or_assign(u.dtype, std::make_pair(static_cast<int>(buckets.size()) - 1,
                                                         int64_t{0})).first;
    }
    buckets[it->second.first].push_back(&u);
    it->second.second += bytes;
  }

  // Every replica's copy of the graph.
  absl::flat_hash_set<std::string> taken;
  for (const auto& node : graph->nodes()) taken.insert(node->name());
  GraphDef base = graph->ToGraphDef();
  *out.graph.mutable_versions() = base.versions();
  *out.graph.mutable_library() = base.library();
  absl::flat_hash_map<std::string, std::string> new_grad;  // "update:input" -> averaged
  for (int r = 0; r < n; ++r) {
    for (const NodeDef& def : base.node()) {
      if (r > 0 && !out.replicated.contains(def.name())) continue;
      NodeDef* copy = out.graph.add_node();
      *copy = def;
      copy->set_device(options.devices[r]);
      if (r == 0) continue;
      copy->set_name(out.NodeName(def.name(), r));
      if (!taken.insert(copy->name()).second) {
        return absl::InvalidArgumentError(absl::StrCat(
            "the graph already has a node named '", copy->name(), "', the name of replica ", r,
            "'s copy of '", def.name(), "'"));
      }
      for (std::string& in : *copy->mutable_input()) in = out.TensorName(in, r);
      auto& attrs = *copy->mutable_attr();
      if (auto c = attrs.find("_class"); c != attrs.end()) {
        for (std::string& s : *c->second.mutable_list()->mutable_s()) {
          if (absl::StartsWith(s, "loc:@")) s = absl::StrCat("loc:@", out.NodeName(s.substr(5), r));
        }
      }
      if (auto f = attrs.find("frame_name"); f != attrs.end() && def.op() == "Enter") {
        f->second.set_s(absl::StrCat("replica_", r, "/", f->second.s()));
      }
    }
    if (r == 0) out.replica0 = out.graph;
  }

  // The exchange of each bucket.
  Builder b(&out.graph, &taken);
  for (size_t k = 0; k < buckets.size(); ++k) {
    const std::vector<const Update*>& bucket = buckets[k];
    const DataType dtype = bucket.front()->dtype;
    int64_t total = 0;
    for (const Update* u : bucket) total += u->elements;
    GradientBucket info{dtype, total, {}};
    for (const Update* u : bucket) info.updates.push_back(u->apply->name());
    out.buckets.push_back(info);
    // Segment j of the flat bucket: [begin[j], begin[j] + size[j]).
    std::vector<int64_t> begin(n), size(n);
    for (int j = 0, at = 0; j < n; ++j) {
      size[j] = total / n + (j < total % n ? 1 : 0);
      begin[j] = at;
      at += size[j];
    }
    auto name = [&](int r, const std::string& leaf) {
      return absl::StrCat(r == 0 ? "" : absl::StrCat("replica_", r, "/"), kExchangeScope,
                          "/bucket_", k, "/", leaf);
    };
    const bool rounded = dtype == DT_FLOAT && options.wire_float != DT_FLOAT && n > 1;
    // `value` as the wire carries it (float -> wire_float -> float), on `dev`.
    auto wire_rounded = [&](int r, const std::string& value, const std::string& dev,
                            const std::string& leaf) -> absl::StatusOr<std::string> {
      GR_ASSIGN_OR_RETURN(NodeDef * down, b.Add(name(r, "to_wire"), "Cast", {value}, dev));
      (*down->mutable_attr())["SrcT"] = TypeAttr(DT_FLOAT);
      (*down->mutable_attr())["DstT"] = TypeAttr(options.wire_float);
      (*down->mutable_attr())["Truncate"] = BoolAttr(false);
      GR_ASSIGN_OR_RETURN(NodeDef * up, b.Add(name(r, leaf), "Cast", {down->name()}, dev));
      (*up->mutable_attr())["SrcT"] = TypeAttr(options.wire_float);
      (*up->mutable_attr())["DstT"] = TypeAttr(DT_FLOAT);
      (*up->mutable_attr())["Truncate"] = BoolAttr(false);
      return up->name();
    };
    // The mean of `parts` on replica r's device: their sum in replica
    // order, float32, times 1/N.
    auto mean_of = [&](int r, const std::vector<std::string>& parts) -> absl::StatusOr<std::string> {
      const std::string& dev = options.devices[r];
      GR_ASSIGN_OR_RETURN(NodeDef * sum, b.Add(name(r, "sum"), "AddN", parts, dev));
      (*sum->mutable_attr())["N"] = IntAttr(n);
      (*sum->mutable_attr())["T"] = TypeAttr(dtype);
      (*sum->mutable_attr())[kGradientExchangeAttr] = BoolAttr(true);
      GR_ASSIGN_OR_RETURN(std::string inv,
                          b.Const(name(r, "inverse_replicas"), ScaleBy(dtype, 1.0 / n), dev));
      GR_ASSIGN_OR_RETURN(NodeDef * mean, b.Add(name(r, "mean"), "Mul", {sum->name(), inv}, dev));
      (*mean->mutable_attr())["T"] = TypeAttr(dtype);
      return mean->name();
    };
    // Each replica's bucket, flattened into one vector.
    std::vector<std::string> fused(n);
    for (int r = 0; r < n; ++r) {
      const std::string& dev = options.devices[r];
      GR_ASSIGN_OR_RETURN(std::string flat_shape, b.Vector(name(r, "flat_shape"), {-1}, dev));
      GR_ASSIGN_OR_RETURN(std::string axis, b.Const(name(r, "axis"), Tensor::Scalar<int32_t>(0), dev));
      std::vector<std::string> flats;
      for (size_t g = 0; g < bucket.size(); ++g) {
        GR_ASSIGN_OR_RETURN(NodeDef * f, b.Add(name(r, absl::StrCat("flat_", g)), "Reshape",
                                               {out.TensorName(bucket[g]->grad, r), flat_shape},
                                               dev));
        (*f->mutable_attr())["T"] = TypeAttr(dtype);
        (*f->mutable_attr())["Tshape"] = TypeAttr(DT_INT32);
        flats.push_back(f->name());
      }
      fused[r] = flats.front();
      if (flats.size() > 1) {
        std::vector<std::string> in = flats;
        in.push_back(axis);
        GR_ASSIGN_OR_RETURN(NodeDef * c, b.Add(name(r, "fused"), "ConcatV2", in, dev));
        (*c->mutable_attr())["N"] = IntAttr(flats.size());
        (*c->mutable_attr())["T"] = TypeAttr(dtype);
        (*c->mutable_attr())["Tidx"] = TypeAttr(DT_INT32);
        fused[r] = c->name();
      }
    }
    // Each replica's averaged bucket.
    std::vector<std::string> whole(n);
    if (!options.collective_exchange.empty() && n > 1) {
      // A collective reduce per replica, met at run time over a ring
      // between the tasks.
      for (int r = 0; r < n; ++r) {
        const std::string& dev = options.devices[r];
        GR_ASSIGN_OR_RETURN(std::string size, b.Const(name(r, "group_size"),
                                                      Tensor::Scalar<int32_t>(n), dev));
        GR_ASSIGN_OR_RETURN(std::string group, b.Const(name(r, "group_key"),
                                                       Tensor::Scalar<int32_t>(kReplicaGroupKey),
                                                       dev));
        GR_ASSIGN_OR_RETURN(std::string instance,
                            b.Const(name(r, "instance_key"),
                                    Tensor::Scalar<int32_t>(static_cast<int32_t>(k + 1)), dev));
        GR_ASSIGN_OR_RETURN(NodeDef * c, b.Add(name(r, "allreduce"), "CollectiveReduceV2",
                                               {fused[r], size, group, instance}, dev));
        (*c->mutable_attr())["T"] = TypeAttr(dtype);
        (*c->mutable_attr())["merge_op"] = StringAttr("Add");
        (*c->mutable_attr())["final_op"] = StringAttr("Div");
        (*c->mutable_attr())["communication_hint"] = StringAttr(options.collective_exchange);
        (*c->mutable_attr())["Nordering_token"] = IntAttr(0);
        (*c->mutable_attr())[kRunTimeCollectiveAttr] = BoolAttr(true);
        if (rounded) (*c->mutable_attr())[kCollectiveWireFloatAttr] = TypeAttr(options.wire_float);
        whole[r] = c->name();
      }
    } else if (n == 2) {
      // Two replicas: each sends the other its whole bucket and both sum the
      // two in replica order, one hop instead of a reduce-scatter and an
      // all-gather, with the same bytes each way and no segment copies.
      // With a rounding wire each replica sums its own bucket as the wire
      // carries it, as the other receives it, so both sums are the same.
      std::vector<std::string> sent = fused;
      for (int r = 0; r < n && rounded; ++r) {
        GR_ASSIGN_OR_RETURN(sent[r], wire_rounded(r, fused[r], options.devices[r], "sent"));
      }
      for (int r = 0; r < n; ++r) {
        GR_ASSIGN_OR_RETURN(whole[r], mean_of(r, sent));
      }
    } else {
      // Segment j of each replica's bucket.
      for (int r = 0; r < n; ++r) {
        const std::string& dev = options.devices[r];
        for (int j = 0; j < n; ++j) {
          GR_ASSIGN_OR_RETURN(std::string at,
                              b.Vector(name(r, absl::StrCat("segment_", j, "/begin")),
                                       {static_cast<int32_t>(begin[j])}, dev));
          GR_ASSIGN_OR_RETURN(std::string len,
                              b.Vector(name(r, absl::StrCat("segment_", j, "/size")),
                                       {static_cast<int32_t>(size[j])}, dev));
          GR_ASSIGN_OR_RETURN(NodeDef * s, b.Add(name(r, absl::StrCat("segment_", j)), "Slice",
                                                 {fused[r], at, len}, dev));
          (*s->mutable_attr())["T"] = TypeAttr(dtype);
          (*s->mutable_attr())["Index"] = TypeAttr(DT_INT32);
        }
      }
      // Reduce-scatter: replica j averages segment j.
      std::vector<std::string> shares(n);
      for (int j = 0; j < n; ++j) {
        const std::string& dev = options.devices[j];
        std::vector<std::string> parts;
        for (int r = 0; r < n; ++r) parts.push_back(name(r, absl::StrCat("segment_", j)));
        GR_ASSIGN_OR_RETURN(std::string share, mean_of(j, parts));
        if (rounded) {
          // What the wire will carry, kept by the owner too.
          GR_ASSIGN_OR_RETURN(share, wire_rounded(j, share, dev, "share"));
        }
        GR_ASSIGN_OR_RETURN(NodeDef * id, b.Add(name(j, "averaged"), "Identity", {share}, dev));
        (*id->mutable_attr())["T"] = TypeAttr(dtype);
        shares[j] = id->name();
      }
      // All-gather.
      for (int r = 0; r < n; ++r) {
        whole[r] = shares.front();
        if (n == 1) continue;
        std::vector<std::string> in = shares;
        in.push_back(name(r, "axis"));
        GR_ASSIGN_OR_RETURN(NodeDef * c, b.Add(name(r, "gathered"), "ConcatV2", in,
                                               options.devices[r]));
        (*c->mutable_attr())["N"] = IntAttr(n);
        (*c->mutable_attr())["T"] = TypeAttr(dtype);
        (*c->mutable_attr())["Tidx"] = TypeAttr(DT_INT32);
        (*c->mutable_attr())[kGradientExchangeAttr] = BoolAttr(true);
        whole[r] = c->name();
      }
    }
    // Each replica's averaged bucket cut back into its gradients.
    for (int r = 0; r < n; ++r) {
      const std::string& dev = options.devices[r];
      int64_t at = 0;
      for (size_t g = 0; g < bucket.size(); ++g) {
        const Update& u = *bucket[g];
        const std::string leaf = absl::StrCat("grad_", g);
        GR_ASSIGN_OR_RETURN(std::string from, b.Vector(name(r, leaf + "/begin"),
                                                       {static_cast<int32_t>(at)}, dev));
        GR_ASSIGN_OR_RETURN(std::string len, b.Vector(name(r, leaf + "/size"),
                                                      {static_cast<int32_t>(u.elements)}, dev));
        at += u.elements;
        GR_ASSIGN_OR_RETURN(NodeDef * s, b.Add(name(r, leaf + "/flat"), "Slice",
                                               {whole[r], from, len}, dev));
        (*s->mutable_attr())["T"] = TypeAttr(dtype);
        (*s->mutable_attr())["Index"] = TypeAttr(DT_INT32);
        std::vector<int32_t> dims(u.shape.begin(), u.shape.end());
        GR_ASSIGN_OR_RETURN(std::string shape, b.Vector(name(r, leaf + "/shape"), dims, dev));
        GR_ASSIGN_OR_RETURN(NodeDef * g_out, b.Add(name(r, leaf), "Reshape", {s->name(), shape}, dev));
        (*g_out->mutable_attr())["T"] = TypeAttr(dtype);
        (*g_out->mutable_attr())["Tshape"] = TypeAttr(DT_INT32);
        new_grad[absl::StrCat(out.NodeName(u.apply->name(), r), ":", u.grad_input)] =
            g_out->name();
      }
    }
  }
  // The updates take the averaged gradients.
  for (NodeDef& def : *out.graph.mutable_node()) {
    for (int i = 0; i < def.input_size(); ++i) {
      auto it = new_grad.find(absl::StrCat(def.name(), ":", i));
      if (it != new_grad.end()) def.set_input(i, it->second);
    }
  }

  // Broadcast from replica 0, and each replica's reads of every variable.
  std::vector<std::string> assigns;
  for (const auto& node : graph->nodes()) {
    if (!IsVariableOp(node->op()) || !out.replicated.contains(node->name())) continue;
    const bool resource = node->op() == "VarHandleOp";
    const AttrValue* dtype_attr = node->attrs().Find("dtype");
    if (dtype_attr == nullptr) continue;
    const DataType dtype = dtype_attr->type();
    ReplicatedVariable var{node->name(), {}};
    for (int r = 0; r < n; ++r) {
      const std::string& dev = options.devices[r];
      const std::string read_name = absl::StrCat(r == 0 ? "" : absl::StrCat("replica_", r, "/"),
                                                 kReplicasScope, "/read/", node->name());
      GR_ASSIGN_OR_RETURN(NodeDef * read,
                          b.Add(read_name, resource ? "ReadVariableOp" : "Identity",
                                {out.NodeName(node->name(), r)}, dev));
      (*read->mutable_attr())[resource ? "dtype" : "T"] = TypeAttr(dtype);
      var.reads.push_back(read->name());
      if (r == 0) continue;
      GR_ASSIGN_OR_RETURN(
          NodeDef * assign,
          b.Add(absl::StrCat("replica_", r, "/", kReplicasScope, "/broadcast/", node->name()),
                resource ? "AssignVariableOp" : "Assign",
                {out.NodeName(node->name(), r), var.reads.front()}, dev));
      (*assign->mutable_attr())[resource ? "dtype" : "T"] = TypeAttr(dtype);
      if (!resource) (*assign->mutable_attr())["validate_shape"] = BoolAttr(true);
      assigns.push_back(absl::StrCat("^", assign->name()));
    }
    out.variables.push_back(std::move(var));
  }
  out.broadcast_op = absl::StrCat(kReplicasScope, "/broadcast");
  GR_RETURN_IF_ERROR(b.Add(out.broadcast_op, "NoOp", assigns, options.devices[0]).status());
  return out;
}

}  // namespace graphrun
