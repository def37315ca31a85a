#include "graph/optimize/optimizer.h"

#include <utility>

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
      {"kernel fusion", &FuseKernels},
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
  *graph = std::move(work);
  if (report != nullptr) *report = std::move(local);
  return absl::OkStatus();
}

}  // namespace graphrun
