// The gradient of a convolution block's Relu and max pooling in one pass:
// TensorFlow's gradient graph of relu -> max_pool writes
//
//   ReluGrad(MaxPoolGrad(r, pooled, dy), r)
//
// where r is the Relu's output, both the pooling's input and the features
// ReluGrad masks by. The pair becomes one _FusedMaxPoolGrad (fused_ops
// ["ReluGrad"]) that masks each image's gradient while it is still in the
// core's cache, instead of writing the pooling's gradient out and reading
// it back (an activation-sized tensor each way, most of the two kernels'
// time on a small CNN). The values are the pair's, bit for bit.
//
// Float only, NHWC, on the CPU or not pinned (the fused kernel is a CPU
// kernel). The fused node takes ReluGrad's name; the MaxPoolGrad must have
// no other consumer and not be preserved.
//
// The convolution's bias gradient, BiasAddGrad of that same gradient, is
// then taken by the fused node too (fused_ops ["ReluGrad", "BiasAddGrad"],
// output 1) from each image while it is in cache: one more pass over the
// activation-sized tensor saved, and the node off the backward pass's
// critical path (v1 optimizers' gradient gating makes the convolution's
// gradients wait for it). BiasAddGrad's readers read output 1 instead; it
// must be NHWC, on the same device, not preserved, without control inputs.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/optimize/graph_view.h"
#include "graph/optimize/optimizer.h"
#include "graph/status_macros.h"

namespace graphrun {
namespace {

using optimize::CpuOrUnpinned;
using optimize::GraphView;
using optimize::IsFloat;

bool Nhwc(const NodeDef& n) {
  auto format = n.attr().find("data_format");
  return format == n.attr().end() || format->second.s() == "NHWC";
}

// The MaxPoolGrad that ReluGrad node `i` may absorb, or -1.
int FusablePoolGrad(const GraphView& view, const OptimizerOptions& options, int i) {
  const NodeDef& relu_grad = view.node(i);
  if (relu_grad.op() != "ReluGrad" || view.removed(i) || !IsFloat(relu_grad) ||
      !CpuOrUnpinned(relu_grad.device()) || view.num_data_inputs(i) != 2 ||
      view.input(i, 0).index != 0) {
    return -1;
  }
  const int pool_grad = view.producer(i, 0);
  if (pool_grad < 0 || view.removed(pool_grad)) return -1;
  const NodeDef& p = view.node(pool_grad);
  if (p.op() != "MaxPoolGrad" || !IsFloat(p) || !Nhwc(p) || p.device() != relu_grad.device() ||
      view.num_data_inputs(pool_grad) != 3 || options.preserve.contains(p.name()) ||
      view.consumers(pool_grad).size() != 1 || view.HasControlConsumers(pool_grad)) {
    return -1;
  }
  // ReluGrad's features are the pooling's input.
  if (!(view.input(pool_grad, 0) == view.input(i, 1))) return -1;
  return pool_grad;
}

}  // namespace

absl::Status FuseMaxPoolReluGrads(GraphDef* graph, const OptimizerOptions& options,
                                  OptimizationReport::Pass* report) {
  GR_ASSIGN_OR_RETURN(GraphView view, GraphView::Create(graph));
  const int num_nodes = view.num_nodes();
  for (int i = 0; i < num_nodes; ++i) {
    const int pool_grad = FusablePoolGrad(view, options, i);
    if (pool_grad < 0) continue;
    const NodeDef& p = view.node(pool_grad);
    NodeDef fused;
    fused.set_name(view.node(i).name());
    fused.set_op("_FusedMaxPoolGrad");
    fused.set_device(view.node(i).device());
    for (int pos = 0; pos < 3; ++pos) fused.add_input(view.input(pool_grad, pos).ToString());
    optimize::AddControlInputsOf(view, {pool_grad, i}, &fused);
    *fused.mutable_attr() = p.attr();
    (*fused.mutable_attr())["fused_ops"].mutable_list()->add_s("ReluGrad");
    // The node keeps ReluGrad's name, and with it its colocation.
    auto colocation = view.node(i).attr().find("_class");
    if (colocation != view.node(i).attr().end()) {
      (*fused.mutable_attr())["_class"] = colocation->second;
    }
    if (report != nullptr) {
      report->changes.push_back(absl::StrCat("fused '", p.name(), "' (MaxPoolGrad) + '",
                                             fused.name(), "' (ReluGrad) into _FusedMaxPoolGrad '",
                                             fused.name(), "'"));
      report->merged_into[p.name()] = fused.name();
    }
    view.MarkRemoved(pool_grad);
    view.node(i) = std::move(fused);
  }
  // The bias gradients of the fused nodes' outputs.
  for (int i = 0; i < num_nodes; ++i) {
    const NodeDef& b = view.node(i);
    if (view.removed(i) || b.op() != "BiasAddGrad" || !IsFloat(b) || !Nhwc(b) ||
        options.preserve.contains(b.name()) || view.num_inputs(i) != 1 ||
        view.input(i, 0).index != 0) {
      continue;
    }
    const int f = view.producer(i, 0);
    if (f < 0 || view.removed(f) || view.node(f).op() != "_FusedMaxPoolGrad" ||
        view.node(f).device() != b.device()) {
      continue;
    }
    const auto ops = view.node(f).attr().find("fused_ops");
    if (ops == view.node(f).attr().end() || ops->second.list().s_size() != 1) continue;
    NodeDef& fused = view.node(f);
    (*fused.mutable_attr())["fused_ops"].mutable_list()->add_s("BiasAddGrad");
    const auto consumers = view.consumers(i);
    for (const auto& [c, pos] : consumers) {
      TensorId id = view.input(c, pos);
      id.node = fused.name();
      if (!id.IsControl()) id.index = 1;
      view.SetInput(c, pos, id);
    }
    if (report != nullptr) {
      report->changes.push_back(absl::StrCat("fused '", b.name(), "' (BiasAddGrad) into '",
                                             fused.name(), "' as its output 1"));
      report->merged_into[b.name()] = fused.name();
    }
    view.TruncateInputs(i, 0);
    view.MarkRemoved(i);
  }
  view.Compact();
  return absl::OkStatus();
}

}  // namespace graphrun
