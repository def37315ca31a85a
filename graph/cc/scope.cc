#include "graph/cc/scope.h"

#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "graph/import.h"

namespace graphrun {
namespace cc {

std::string Operation::name() const { return node_ ? node_->name() : ""; }

Output Operation::output(int i) const {
  return node_ ? Output(node_, i) : Output();
}

std::vector<Output> Operation::outputs() const {
  std::vector<Output> out;
  out.reserve(num_outputs());
  for (int i = 0; i < num_outputs(); ++i) out.emplace_back(node_, i);
  return out;
}

DataType Output::dtype() const {
  if (node_ == nullptr || index_ < 0 || index_ >= node_->num_outputs()) {
    return DT_INVALID;
  }
  return node_->output_type(index_);
}

std::string Output::name() const {
  return node_ ? absl::StrCat(node_->name(), ":", index_) : "";
}

PartialShape Output::shape() const {
  if (node_ == nullptr || index_ < 0 || index_ >= node_->num_outputs()) {
    return PartialShape();
  }
  return node_->output_shape(index_);
}

// What every scope of one root shares.
struct Scope::SharedState {
  Graph graph;
  absl::Status status;
  // Full names handed out (ops and sub-scopes) -> last suffix used.
  absl::flat_hash_map<std::string, int> names;
};

Scope::Scope(std::shared_ptr<SharedState> state) : state_(std::move(state)) {}

Scope Scope::NewRootScope() { return Scope(std::make_shared<SharedState>()); }

std::string Scope::UniqueName(absl::string_view base) const {
  std::string full =
      prefix_.empty() ? std::string(base) : absl::StrCat(prefix_, "/", base);
  auto& names = state_->names;
  const Graph& graph = state_->graph;
  auto [it, inserted] = names.try_emplace(full, 0);
  if (inserted && graph.FindNode(full) == nullptr) return full;
  // A node added to the graph directly (not through a scope) may hold a
  // name the counters never saw, hence the graph check.
  int suffix = it->second;
  std::string candidate;
  do {
    candidate = absl::StrCat(full, "_", ++suffix);
  } while (names.contains(candidate) || graph.FindNode(candidate) != nullptr);
  names[full] = suffix;
  names.emplace(candidate, 0);
  return candidate;
}

Scope Scope::NewSubScope(absl::string_view child) const {
  Scope out = *this;
  out.op_name_.clear();
  if (!child.empty()) out.prefix_ = UniqueName(child);
  return out;
}

Scope Scope::WithOpName(absl::string_view op_name) const {
  Scope out = *this;
  out.op_name_ = std::string(op_name);
  return out;
}

Scope Scope::WithDevice(absl::string_view device) const {
  Scope out = *this;
  out.device_ = std::string(device);
  return out;
}

Scope Scope::WithControlDependencies(absl::Span<const Operation> deps) const {
  Scope out = *this;
  out.control_deps_.insert(out.control_deps_.end(), deps.begin(), deps.end());
  return out;
}

Scope Scope::WithControlDependencies(const Operation& dep) const {
  return WithControlDependencies(absl::Span<const Operation>(&dep, 1));
}

Scope Scope::WithControlDependencies(const Output& dep) const {
  return WithControlDependencies(dep.op());
}

Scope Scope::WithNoControlDependencies() const {
  Scope out = *this;
  out.control_deps_.clear();
  return out;
}

absl::Status Scope::status() const { return state_->status; }

bool Scope::ok() const { return state_->status.ok(); }

void Scope::UpdateStatus(const absl::Status& status) const {
  if (state_->status.ok() && !status.ok()) state_->status = status;
}

Graph* Scope::graph() const { return &state_->graph; }

absl::StatusOr<GraphDef> Scope::ToGraphDef() const {
  if (!ok()) return status();
  UpdateStatus(InferShapes(&state_->graph));
  if (!ok()) return status();
  return state_->graph.ToGraphDef();
}

std::string Scope::GetUniqueNameForOp(absl::string_view default_name) const {
  return UniqueName(op_name_.empty() ? default_name : op_name_);
}

}  // namespace cc
}  // namespace graphrun
