#include "partition/wire_policy.h"

#include "absl/strings/match.h"
#include "graph/op_registry.h"
#include "graph/replicate.h"

namespace graphrun {

bool IsGradientInput(const Node& dst, int input) {
  // A data-parallel replica's share of a gradient bucket (graph/replicate.h).
  const AttrValue* exchange = dst.attrs().Find(kGradientExchangeAttr);
  if (exchange != nullptr && exchange->b()) return true;
  const std::string& op = dst.op();
  const bool update = absl::StartsWith(op, "Apply") || absl::StartsWith(op, "ResourceApply") ||
                      absl::StartsWith(op, "SparseApply") ||
                      absl::StartsWith(op, "ResourceSparseApply") ||
                      absl::EndsWith(op, "AccumulatorApplyGradient");
  if (!update || dst.op_def() == nullptr) return false;
  const std::vector<ArgDef>& args = dst.op_def()->inputs;
  // Update ops have one tensor per argument, so input i is argument i.
  if (input < 0 || input >= static_cast<int>(args.size()) || args.size() != dst.num_inputs()) {
    return false;
  }
  const std::string& name = args[input].name;
  return name == "grad" || name == "delta" || name == "gradient";
}

}  // namespace graphrun
