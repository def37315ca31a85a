#include "graph/optimize/optimizer.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/status_macros.h"

namespace graphrun {

std::string OptimizationReport::ToString(int max_changes_per_pass) const {
  std::string out;
  for (const Pass& p : passes) {
    absl::StrAppend(&out, "optimizer: ", p.name, ": ", p.changes.size(), " change",
                    p.changes.size() == 1 ? "" : "s", ", ", p.nodes_before, " -> ",
                    p.nodes_after, " nodes\n");
    const int shown = std::min<int>(max_changes_per_pass, static_cast<int>(p.changes.size()));
    for (int i = 0; i < shown; ++i) absl::StrAppend(&out, "  ", p.changes[i], "\n");
    if (shown < static_cast<int>(p.changes.size())) {
      absl::StrAppend(&out, "  ... and ", p.changes.size() - shown, " more\n");
    }
  }
  return out;
}

namespace {

// Colocation constraints ("_class": ["loc:@name", ...]) that name removed
// nodes: one whose node lives on in another names that one instead, one
// whose node was pruned (or that now names its own node) is dropped, so
// the graph stays importable.
void RetargetColocation(GraphDef* graph,
                        const absl::flat_hash_map<std::string, std::string>& merged_into) {
  absl::flat_hash_set<std::string> names;
  for (const NodeDef& n : graph->node()) names.insert(n.name());
  constexpr absl::string_view kPrefix = "loc:@";
  for (NodeDef& n : *graph->mutable_node()) {
    auto it = n.mutable_attr()->find("_class");
    if (it == n.mutable_attr()->end() || !it->second.has_list()) continue;
    auto* list = it->second.mutable_list()->mutable_s();
    std::vector<std::string> kept;
    bool changed = false;
    for (const std::string& entry : *list) {
      if (!absl::StartsWith(entry, kPrefix)) {
        kept.push_back(entry);
        continue;
      }
      std::string target(absl::string_view(entry).substr(kPrefix.size()));
      if (!names.contains(target)) {
        auto merged = merged_into.find(target);
        target = merged != merged_into.end() ? merged->second : "";
        changed = true;
      }
      if (target.empty() || !names.contains(target) || target == n.name()) {
        changed = true;
        continue;
      }
      const std::string retargeted = absl::StrCat(kPrefix, target);
      if (std::find(kept.begin(), kept.end(), retargeted) == kept.end()) {
        kept.push_back(retargeted);
      } else {
        changed = true;
      }
    }
    if (!changed) continue;
    if (kept.empty()) {
      n.mutable_attr()->erase("_class");
    } else {
      list->Clear();
      for (std::string& e : kept) list->Add(std::move(e));
    }
  }
}

}  // namespace

absl::Status OptimizeGraph(GraphDef* graph, const OptimizerOptions& options,
                           OptimizationReport* report) {
  using PassFn = absl::Status (*)(GraphDef*, const OptimizerOptions&, OptimizationReport::Pass*);
  static constexpr std::pair<const char*, PassFn> kPasses[] = {
      {"constant folding", &FoldConstants},
      {"dead branches", &PruneDeadBranches},
      {"identity removal", &RemoveIdentities},
      {"arithmetic", &SimplifyArithmetic},
      {"constant folding again", &FoldConstants},
      {"batch-norm folding", &FoldBatchNorms},
      {"pad folding", &FoldPads},
      {"LSTM cell fusion", &FuseLstmCells},
      {"LSTM loop fusion", &FuseLstmLoops},
      {"kernel fusion", &FuseKernels},
      {"pool gradient fusion", &FuseMaxPoolReluGrads},
      {"common subexpressions", &EliminateCommonSubexpressions},
      {"pruning", &PruneUnused},
  };
  GraphDef work = *graph;
  OptimizationReport local;
  // Folding again pays only where dead branches or arithmetic changed
  // something (a Merge that became its constant input, a folded chain).
  bool refold = false;
  for (const auto& [name, fn] : kPasses) {
    if (fn == &FoldConstants && !local.passes.empty() && !refold) continue;
    OptimizationReport::Pass pass;
    pass.name = name;
    pass.nodes_before = work.node_size();
    GR_RETURN_IF_ERROR(fn(&work, options, &pass));
    pass.nodes_after = work.node_size();
    if (fn == &PruneDeadBranches || fn == &SimplifyArithmetic) refold |= !pass.changes.empty();
    local.passes.push_back(std::move(pass));
  }
  // Follow each chain of merges to the node that survived.
  for (const auto& pass : local.passes) {
    for (const auto& [from, to] : pass.merged_into) local.merged_into[from] = to;
  }
  for (auto& [from, to] : local.merged_into) {
    for (int hops = 0; hops < 64; ++hops) {
      auto it = local.merged_into.find(to);
      if (it == local.merged_into.end() || it->second == to) break;
      to = it->second;
    }
  }
  RetargetColocation(&work, local.merged_into);
  *graph = std::move(work);
  if (report != nullptr) *report = std::move(local);
  return absl::OkStatus();
}

}  // namespace graphrun
