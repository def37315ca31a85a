#include "runtime/frozen_reads.h"

#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "graph/import.h"

namespace graphrun {
namespace {

// Stateful ops that change no state a later step can see: they read
// variables or tables, draw random numbers (the cuDNN RNNs for their
// dropout), stand for feeds and fetches, or change only the step's own
// TensorArrays and stacks (made anew by each step). Every other stateful op
// counts as a write.
bool OnlyReads(const std::string& op) {
  static const auto* ops = new absl::flat_hash_set<std::string>{
      "VarHandleOp", "ReadVariableOp", "VarIsInitializedOp", "VariableV2", "Variable",
      "IsVariableInitialized", "HashTableV2", "HashTable", "LookupTableFindV2",
      "LookupTableSizeV2", "RandomUniform", "RandomStandardNormal", "TruncatedNormal",
      "RandomUniformInt", "RandomShuffle", "Multinomial", "SampleDistortedBoundingBox",
      "SampleDistortedBoundingBoxV2", "Placeholder", "PlaceholderV2",
      "PlaceholderWithDefault", "_Arg", "_Retval", "NoOp", "Print", "PrintV2",
      "Assert", "CheckNumerics", "ResourceGather", "TensorArrayV3", "TensorArrayWriteV3",
      "TensorArrayReadV3", "TensorArrayGatherV3", "TensorArrayScatterV3", "TensorArrayConcatV3",
      "TensorArraySplitV3", "TensorArraySizeV3", "TensorArrayCloseV3", "StackV2", "StackPushV2",
      "StackPopV2", "StackCloseV2", "CudnnRNN", "CudnnRNNV2", "CudnnRNNV3"};
  return ops->contains(op);
}

bool Writes(const Node& node) { return node.IsStateful() && !OnlyReads(node.op()); }

absl::string_view NodeOf(absl::string_view tensor) {
  if (!tensor.empty() && tensor[0] == '^') tensor.remove_prefix(1);
  const size_t colon = tensor.find(':');
  return colon == absl::string_view::npos ? tensor : tensor.substr(0, colon);
}

// The node feeding data input `i` of `node`, or null.
const Node* Producer(const Node& node, int i) {
  const Edge* e = node.input_edge(i);
  return e == nullptr ? nullptr : e->src;
}

// A ReadVariableOp whose handle is a VarHandleOp's output, through Identity
// nodes only (a function's inlined resource argument): such a read sits in
// the root frame, so a Const can stand in for it.
bool FreezableRead(const Node& node) {
  if (node.op() != "ReadVariableOp") return false;
  const Node* src = Producer(node, 0);
  while (src != nullptr && src->op() == "Identity") src = Producer(*src, 0);
  return src != nullptr && src->op() == "VarHandleOp";
}

}  // namespace

ReadOnlyStep FindReadOnlyStep(const Graph& full, const std::vector<std::string>& feeds,
                              const std::vector<std::string>& fetches,
                              const std::vector<std::string>& targets) {
  absl::flat_hash_map<absl::string_view, const Node*> by_name;
  for (const auto& n : full.nodes()) by_name.emplace(n->name(), n.get());
  absl::flat_hash_set<absl::string_view> fed;
  for (const std::string& f : feeds) fed.insert(NodeOf(f));
  std::vector<const Node*> stack;
  absl::flat_hash_set<const Node*> seen;
  auto visit = [&](absl::string_view name) {
    auto it = by_name.find(name);
    if (it != by_name.end() && seen.insert(it->second).second) stack.push_back(it->second);
  };
  for (const std::string& f : fetches) visit(NodeOf(f));
  for (const std::string& t : targets) visit(NodeOf(t));
  ReadOnlyStep out;
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    if (Writes(*n)) out.writes_state = true;
    if (fed.contains(n->name())) continue;  // its producers do not run
    for (const Edge* e : n->in_edges()) {
      if (seen.insert(e->src).second) stack.push_back(e->src);
    }
  }
  for (const auto& n : full.nodes()) {
    if (seen.contains(n.get()) && !fed.contains(n->name()) && FreezableRead(*n)) {
      out.reads.push_back(n->name());
    }
  }
  return out;
}

bool StepWritesState(const Graph& step) {
  for (const auto& n : step.nodes()) {
    if (Writes(*n)) return true;
  }
  return false;
}

absl::StatusOr<std::unique_ptr<Graph>> WithReadsAsConstants(const Graph& full,
                                                            const std::vector<std::string>& reads,
                                                            const std::vector<Tensor>& values) {
  if (reads.size() != values.size()) {
    return absl::InternalError(absl::StrCat(reads.size(), " reads but ", values.size(), " values"));
  }
  absl::flat_hash_map<std::string, const Tensor*> value_of;
  for (size_t i = 0; i < reads.size(); ++i) value_of.emplace(reads[i], &values[i]);
  GraphDef def = full.ToGraphDef();
  for (NodeDef& n : *def.mutable_node()) {
    auto it = value_of.find(n.name());
    if (it == value_of.end()) continue;
    NodeDef c;
    c.set_name(n.name());
    c.set_op("Const");
    c.set_device(n.device());
    for (const std::string& in : n.input()) {
      if (!in.empty() && in[0] == '^') c.add_input(in);
    }
    (*c.mutable_attr())["dtype"].set_type(it->second->dtype());
    it->second->AsProtoTensorContent((*c.mutable_attr())["value"].mutable_tensor());
    n = std::move(c);
  }
  // `full` is already lowered; the names it holds are its own.
  ImportOptions import;
  import.lower_functional_ops = false;
  import.lower_collective_ops = false;
  import.allow_internal_names = true;
  return ImportGraphDef(def, import);
}

}  // namespace graphrun
