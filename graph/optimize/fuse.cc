// Kernel fusion: MatMul + BiasAdd [+ activation] becomes TensorFlow's
// _FusedMatMul, which adds the bias and applies the activation in the same
// pass as the product's output (one kernel, one write of the output).
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "graph/optimize/graph_view.h"
#include "graph/optimize/optimizer.h"
#include "graph/status_macros.h"

namespace graphrun {
namespace {

using optimize::GraphView;

bool FloatT(const NodeDef& n) {
  auto it = n.attr().find("T");
  return it != n.attr().end() && it->second.type() == DT_FLOAT;
}

bool IsFusableActivation(absl::string_view op) {
  return op == "Relu" || op == "Relu6" || op == "Elu" || op == "LeakyRelu" || op == "Tanh" ||
         op == "Sigmoid";
}

// _FusedMatMul has a CPU kernel only: fuse nodes meant for the CPU (or for
// whatever the placer picks, which then is the CPU).
bool CpuOrUnpinned(const std::string& device) {
  return device.empty() || absl::StrContains(device, "CPU");
}

}  // namespace

absl::Status FuseKernels(GraphDef* graph, const OptimizerOptions& options,
                         OptimizationReport::Pass* report) {
  GR_ASSIGN_OR_RETURN(GraphView view, GraphView::Create(graph));
  auto single_data_use = [&](int i) {
    return !options.preserve.contains(view.node(i).name()) && view.consumers(i).size() == 1 &&
           !view.HasControlConsumers(i);
  };
  for (int i = 0; i < view.num_nodes(); ++i) {
    const NodeDef& bias_add = view.node(i);
    if (bias_add.op() != "BiasAdd" || view.removed(i) || !FloatT(bias_add)) continue;
    auto format = bias_add.attr().find("data_format");
    if (format != bias_add.attr().end() && format->second.s() != "NHWC") continue;
    if (view.num_inputs(i) < 2 || view.input(i, 0).index != 0) continue;
    const int mm = view.producer(i, 0);
    const NodeDef& matmul = view.node(mm);
    if (matmul.op() != "MatMul" || !FloatT(matmul) || !single_data_use(mm) ||
        matmul.device() != bias_add.device() || !CpuOrUnpinned(bias_add.device())) {
      continue;
    }
    // An activation that only this BiasAdd feeds joins too; the last node
    // of the chain becomes the fused node and keeps its name.
    int last = i;
    std::string act;
    if (single_data_use(i)) {
      const int c = view.consumers(i)[0].first;
      const NodeDef& next = view.node(c);
      if (IsFusableActivation(next.op()) && FloatT(next) && next.device() == bias_add.device() &&
          view.num_data_inputs(c) == 1) {
        last = c;
        act = next.op();
      }
    }
    NodeDef fused;
    fused.set_name(view.node(last).name());
    fused.set_op("_FusedMatMul");
    fused.set_device(view.node(last).device());
    fused.add_input(view.input(mm, 0).ToString());
    fused.add_input(view.input(mm, 1).ToString());
    fused.add_input(view.input(i, 1).ToString());
    std::vector<std::string> controls;
    for (int node : {mm, i, last}) {
      for (int pos = view.num_data_inputs(node); pos < view.num_inputs(node); ++pos) {
        const std::string in = view.input(node, pos).ToString();
        if (std::find(controls.begin(), controls.end(), in) == controls.end()) {
          controls.push_back(in);
        }
      }
    }
    for (const std::string& c : controls) fused.add_input(c);
    auto& attr = *fused.mutable_attr();
    attr["T"].set_type(DT_FLOAT);
    attr["transpose_a"].set_b(matmul.attr().count("transpose_a") &&
                              matmul.attr().at("transpose_a").b());
    attr["transpose_b"].set_b(matmul.attr().count("transpose_b") &&
                              matmul.attr().at("transpose_b").b());
    attr["num_args"].set_i(1);
    attr["fused_ops"].mutable_list()->add_s("BiasAdd");
    if (!act.empty()) attr["fused_ops"].mutable_list()->add_s(act);
    attr["epsilon"].set_f(0.0001f);
    auto alpha = view.node(last).attr().find("alpha");
    attr["leakyrelu_alpha"].set_f(act == "LeakyRelu" && alpha != view.node(last).attr().end()
                                      ? alpha->second.f()
                                      : 0.2f);
    if (report != nullptr) {
      report->changes.push_back(absl::StrCat("fused '", matmul.name(), "' (MatMul) + '",
                                             bias_add.name(), "' (BiasAdd)",
                                             act.empty() ? "" : absl::StrCat(" + '", view.node(last).name(), "' (", act, ")"),
                                             " into _FusedMatMul '", fused.name(), "'"));
    }
    // The chain's inner nodes go; the last one is replaced in place (its
    // consumers keep naming it). The view's bookkeeping of these nodes is
    // stale from here on, so they are marked and not visited again.
    if (report != nullptr) {
      for (int node : {mm, i}) {
        if (node != last) report->merged_into[view.node(node).name()] = fused.name();
      }
    }
    view.node(last) = std::move(fused);
    for (int node : {mm, i}) {
      if (node != last) view.MarkRemoved(node);
    }
  }
  view.Compact();
  return absl::OkStatus();
}

}  // namespace graphrun
