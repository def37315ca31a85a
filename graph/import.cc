#include "graph/import.h"

#include <algorithm>
#include <map>
#include <optional>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "graph/control_flow.h"
#include "graph/lower_collectives.h"
#include "graph/lower_functional.h"
#include "graph/shape_inference.h"
#include "graph/status_macros.h"

namespace graphrun {
namespace {

// Graphs that embed their input pipeline (a tf.data iterator, a queue, a
// reader): graphrun runs the model, not the pipeline. The hint names what
// to cut: this node, whose outputs become the graph's inputs.
std::string InputPipelineHint(const NodeDef& def) {
  static const absl::flat_hash_set<std::string>* const kPipelineOps =
      new absl::flat_hash_set<std::string>({
          "IteratorGetNext", "IteratorGetNextSync", "IteratorGetNextAsOptional", "IteratorV2",
          "Iterator", "AnonymousIterator", "AnonymousIteratorV2", "AnonymousIteratorV3",
          "OneShotIterator", "MakeIterator", "MultiDeviceIterator",
          "MultiDeviceIteratorGetNextFromShard", "FIFOQueue", "FIFOQueueV2",
          "PaddingFIFOQueue", "PaddingFIFOQueueV2", "RandomShuffleQueue",
          "RandomShuffleQueueV2", "PriorityQueue", "PriorityQueueV2", "QueueDequeue",
          "QueueDequeueV2", "QueueDequeueMany", "QueueDequeueManyV2", "QueueDequeueUpTo",
          "QueueDequeueUpToV2", "QueueEnqueue", "QueueEnqueueV2", "QueueEnqueueMany",
          "QueueEnqueueManyV2", "QueueClose", "QueueCloseV2", "QueueSize", "QueueSizeV2",
          "ReaderReadV2", "ReaderReadUpToV2", "TFRecordReaderV2", "TextLineReaderV2",
          "WholeFileReaderV2", "FixedLengthRecordReaderV2"});
  if (!kPipelineOps->contains(def.op())) return "";
  return absl::StrCat(
      ". It belongs to an input pipeline (tf.data iterator, queue or reader), which graphrun "
      "does not run: cut the graph at '", def.name(),
      "' (replace it with Placeholders of its outputs' dtypes and shapes, or export the "
      "model without its input pipeline) and feed what it would produce");
}

constexpr int kMaxOutputIndex = 1 << 20;

bool IsNameStartChar(char c) { return absl::ascii_isalnum(c) || c == '.'; }
bool IsNameChar(char c) {
  return absl::ascii_isalnum(c) || c == '_' || c == '.' || c == '-' ||
         c == '/' || c == '>';
}

absl::Status NodeError(const NodeDef& def, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(NodeLabel(def), ": ", what));
}

// Every tensor an attr holds must declare a sane shape: a one-value proto may
// claim [1e11,1e11] and would otherwise blow up whoever decodes it.
absl::Status CheckTensorAttrs(const NodeDef& def, int64_t max_bytes) {
  for (const auto& [name, value] : def.attr()) {
    std::vector<const TensorProto*> tensors;
    if (value.value_case() == AttrValue::kTensor) tensors.push_back(&value.tensor());
    for (const auto& t : value.list().tensor()) tensors.push_back(&t);
    for (const TensorProto* t : tensors) {
      auto shape = PartialShape::FromProto(t->tensor_shape());
      if (!shape.ok()) {
        return NodeError(def, absl::StrCat("attr '", name, "': ", shape.status().message()));
      }
      const int size = DataTypeSize(t->dtype());
      if (shape->num_elements() > 0 && size > 0 &&
          static_cast<double>(shape->num_elements()) * size > static_cast<double>(max_bytes)) {
        return NodeError(def, absl::StrCat(
            "attr '", name, "': tensor of shape ", shape->DebugString(), " and type ",
            DataTypeString(t->dtype()), " is larger than the limit of ", max_bytes,
            " bytes"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::string NodeLabel(const NodeDef& node) {
  return absl::StrCat("node '", node.name(), "' (", node.op(), ")");
}
std::string NodeLabel(const Node& node) { return NodeLabel(node.def()); }

std::string TensorId::ToString() const {
  if (index == kControlSlot) return absl::StrCat("^", node);
  if (index == 0) return node;
  return absl::StrCat(node, ":", index);
}

absl::string_view InputNodeName(absl::string_view input) {
  if (!input.empty() && input[0] == '^') input.remove_prefix(1);
  return input.substr(0, input.rfind(':'));
}

bool IsValidNodeName(absl::string_view name) {
  if (name.empty() || !IsNameStartChar(name[0])) return false;
  for (char c : name) {
    if (!IsNameChar(c)) return false;
  }
  return true;
}

absl::StatusOr<TensorId> ParseTensorId(absl::string_view input,
                                       bool allow_internal_names) {
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("malformed input reference \"", absl::CHexEscape(input),
                     "\": ", why));
  };
  TensorId id;
  absl::string_view name = input;
  if (absl::ConsumePrefix(&name, "^")) {
    id.index = kControlSlot;
    if (name.empty()) return bad("'^' must be followed by a node name");
    if (absl::StrContains(name, ':')) {
      return bad("a control input names a node, not an output");
    }
  } else if (size_t colon = name.rfind(':'); colon != absl::string_view::npos) {
    absl::string_view digits = name.substr(colon + 1);
    name = name.substr(0, colon);
    if (digits.empty()) return bad("missing output index after ':'");
    for (char c : digits) {
      if (!absl::ascii_isdigit(c)) return bad("output index is not a number");
    }
    int64_t index = 0;
    if (!absl::SimpleAtoi(digits, &index) || index > kMaxOutputIndex) {
      return bad("output index is out of range");
    }
    id.index = static_cast<int>(index);
  }
  if (name.empty()) return bad("empty node name");
  const bool internal = allow_internal_names && name[0] == '_' &&
                        IsValidNodeName(name.substr(1));
  if (!internal && !IsValidNodeName(name)) return bad("not a valid node name");
  id.node = std::string(name);
  return id;
}

absl::StatusOr<std::unique_ptr<Graph>> ImportGraphDef(
    const GraphDef& graph_def, const ImportOptions& options) {
  if (options.lower_functional_ops && NeedsLowering(graph_def)) {
    LowerFunctionalOptions lower;
    lower.registry = options.registry;
    GR_ASSIGN_OR_RETURN(GraphDef lowered, LowerFunctionalOps(graph_def, lower));
    ImportOptions rest = options;
    rest.lower_functional_ops = false;
    return ImportGraphDef(lowered, rest);
  }
  if (options.lower_collective_ops && HasCollectiveOps(graph_def)) {
    GR_ASSIGN_OR_RETURN(GraphDef lowered, LowerCollectiveOps(graph_def));
    ImportOptions rest = options;
    rest.lower_collective_ops = false;
    return ImportGraphDef(lowered, rest);
  }
  auto graph = std::make_unique<Graph>();
  graph->set_meta(graph_def);

  absl::flat_hash_set<std::string> functions;
  for (const auto& f : graph_def.library().function()) {
    functions.insert(f.signature().name());
  }

  // Every op this build lacks, with the nodes that use it: the error for
  // the first such node lists them all, so one run shows what is missing.
  std::string missing_ops;
  if (!options.allow_unknown_ops) {
    std::vector<std::pair<std::string, std::vector<std::string>>> missing;
    int missing_nodes = 0;
    for (const NodeDef& def : graph_def.node()) {
      if (def.op().empty() || functions.contains(def.op()) ||
          options.registry->Find(def.op()) != nullptr) {
        continue;
      }
      ++missing_nodes;
      auto it = std::find_if(missing.begin(), missing.end(),
                             [&](const auto& m) { return m.first == def.op(); });
      if (it == missing.end()) it = missing.insert(missing.end(), {def.op(), {}});
      it->second.push_back(def.name());
    }
    if (missing_nodes > 1) {
      std::vector<std::string> parts;
      for (const auto& [op, nodes] : missing) {
        std::vector<std::string> shown(nodes.begin(),
                                       nodes.begin() + std::min<size_t>(nodes.size(), 8));
        std::string part = absl::StrCat(op, " (", absl::StrJoin(shown, ", "));
        if (nodes.size() > shown.size()) {
          absl::StrAppend(&part, " and ", nodes.size() - shown.size(), " more");
        }
        parts.push_back(part + ")");
      }
      missing_ops = absl::StrCat("; ", missing_nodes, " nodes use ops graphrun lacks: ",
                                 absl::StrJoin(parts, "; "));
    }
  }

  // Pass 1: nodes, with their parsed inputs.
  std::vector<std::vector<TensorId>> inputs(graph_def.node_size());
  for (int i = 0; i < graph_def.node_size(); ++i) {
    const NodeDef& def = graph_def.node(i);
    const bool internal = options.allow_internal_names && !def.name().empty() &&
                          def.name()[0] == '_' && IsValidNodeName(def.name().substr(1));
    if (!internal && !IsValidNodeName(def.name())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "node #", i, " (", def.op().empty() ? "no op" : def.op(),
          ") has an invalid name \"", absl::CHexEscape(def.name()),
          "\": names match [A-Za-z0-9.][A-Za-z0-9_.\\-/>]*"));
    }
    if (def.op().empty()) return NodeError(def, "the node has no op");
    if (functions.contains(def.op()) && !options.allow_unknown_ops) {
      return NodeError(def, absl::StrCat(
          "calls function '", def.op(),
          "' from the graph's library, and function calls are not being inlined"));
    }
    const OpDef* op_def = options.registry->Find(def.op());
    if (op_def == nullptr && !options.allow_unknown_ops) {
      return NodeError(def, absl::StrCat(
          "Op type not registered '", def.op(),
          "': graphrun has no definition of this op", InputPipelineHint(def), missing_ops));
    }
    GR_RETURN_IF_ERROR(CheckTensorAttrs(def, options.max_constant_bytes));
    bool seen_control = false;
    for (const std::string& in : def.input()) {
      auto id = ParseTensorId(in, options.allow_internal_names);
      if (!id.ok()) return NodeError(def, id.status().message());
      if (id->IsControl()) {
        seen_control = true;
      } else if (seen_control) {
        return NodeError(def, absl::StrCat(
            "data input \"", in,
            "\" comes after a control input; control dependencies must come "
            "after regular dependencies"));
      }
      inputs[i].push_back(*std::move(id));
    }
    absl::StatusOr<Node*> node = graph->AddNode(def, op_def);
    if (!node.ok()) return NodeError(def, node.status().message());
    int num_data = 0;
    for (const TensorId& id : inputs[i]) num_data += id.IsControl() ? 0 : 1;
    if (op_def != nullptr && num_data != (*node)->num_inputs()) {
      std::vector<std::string> args;
      for (const ArgDef& a : op_def->inputs) args.push_back(a.name);
      return NodeError(def, absl::StrCat(
          "has ", num_data, " data inputs but the op takes ",
          (*node)->num_inputs(), " (", absl::StrJoin(args, ", "), ")"));
    }
  }

  // Pass 2: edges.
  for (int i = 0; i < graph_def.node_size(); ++i) {
    Node* dst = graph->node(i);
    int slot = 0;
    for (const TensorId& id : inputs[i]) {
      Node* src = graph->FindNode(id.node);
      if (src == nullptr) {
        return NodeError(dst->def(), absl::StrCat(
            "input \"", id.ToString(), "\" names node '", id.node,
            "', which is not in the graph"));
      }
      if (id.IsControl()) {
        graph->AddControlEdge(src, dst);
        continue;
      }
      auto edge = graph->AddEdge(src, id.index, dst, slot);
      if (!edge.ok()) return NodeError(dst->def(), edge.status().message());
      ++slot;
    }
  }

  // Colocation references must name nodes of the graph.
  for (const auto& node : graph->nodes()) {
    auto it = node->def().attr().find("_class");
    if (it == node->def().attr().end()) continue;
    for (const std::string& s : it->second.list().s()) {
      if (!absl::StartsWith(s, "loc:@")) continue;
      const std::string target = s.substr(5);
      if (graph->FindNode(target) == nullptr) {
        return NodeError(node->def(), absl::StrCat(
            "expects to be colocated with unknown node '", target, "'"));
      }
    }
  }

  GR_RETURN_IF_ERROR(graph->TopologicalOrder().status());
  if (HasLoops(*graph)) GR_RETURN_IF_ERROR(BuildControlFlowInfo(*graph).status());
  if (options.infer_shapes) GR_RETURN_IF_ERROR(InferShapes(graph.get(), options));
  return graph;
}

absl::Status InferShapes(Graph* graph, const ImportOptions& options) {
  GR_ASSIGN_OR_RETURN(std::vector<Node*> order, graph->TopologicalOrder());
  // Values of Const nodes, for shape functions that read constant inputs.
  std::map<int, Tensor> constants;
  TensorFromProtoOptions tensor_options;
  tensor_options.max_bytes = options.max_constant_bytes;
  for (Node* node : order) {
    if (node->op_def() == nullptr) continue;  // unknown op: shapes unknown
    if (node->op() == "Const") {
      const AttrValue* value = node->attrs().Find("value");
      if (value == nullptr || value->value_case() != AttrValue::kTensor) {
        return NodeError(node->def(), "attr 'value' must hold a tensor");
      }
      DataType dtype = DT_INVALID;
      GR_RETURN_IF_ERROR(node->attrs().Get("dtype", &dtype));
      if (value->tensor().dtype() != dtype) {
        return NodeError(node->def(), absl::StrCat(
            "attr 'dtype' is ", DataTypeString(dtype), " but the value is a ",
            DataTypeString(value->tensor().dtype()), " tensor"));
      }
      auto t = Tensor::FromProto(value->tensor(), tensor_options);
      if (!t.ok()) {
        return NodeError(node->def(), absl::StrCat("attr 'value': ",
                                                   t.status().message()));
      }
      // Small integer constants feed shape functions (Reshape, Transpose...).
      if (t->NumElements() <= 1024 &&
          (dtype == DT_INT32 || dtype == DT_INT64)) {
        constants.emplace(node->id(), *std::move(t));
      }
    }
    std::vector<PartialShape> in_shapes(node->num_inputs());
    std::vector<const Tensor*> in_values(node->num_inputs(), nullptr);
    for (const Edge* e : node->in_edges()) {
      if (e->IsControl()) continue;
      if (e->src->op_def() != nullptr) {
        in_shapes[e->dst_input] = e->src->output_shape(e->src_output);
      }
      auto c = constants.find(e->src->id());
      if (c != constants.end() && e->src_output == 0) {
        in_values[e->dst_input] = &c->second;
      }
    }
    std::vector<PartialShape> in_copy = in_shapes;
    InferenceContext ctx(node->attrs(), std::move(in_shapes),
                         std::move(in_values), node->input_types(),
                         node->output_types());
    if (node->op_def()->shape_fn) {
      absl::Status s = node->op_def()->shape_fn(&ctx);
      if (!s.ok()) {
        std::vector<std::string> shapes;
        for (const auto& p : in_copy) shapes.push_back(p.DebugString());
        return absl::Status(
            s.code(), absl::StrCat(NodeLabel(*node), ": ", s.message(),
                                   " (input shapes: ",
                                   absl::StrJoin(shapes, ", "), ")"));
      }
    }
    graph->set_output_shapes(node, ctx.outputs());
  }
  return absl::OkStatus();
}

}  // namespace graphrun
