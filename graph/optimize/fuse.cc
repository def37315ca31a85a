// Kernel fusion: a MatMul, Conv2D or DepthwiseConv2dNative, a bias added to
// its output and optionally an activation become TensorFlow's
// _FusedMatMul, _FusedConv2D or _FusedDepthwiseConv2dNative, which add the
// bias and apply the activation before the product's output is written
// (one kernel, one write of the output).
//
//   BiasAdd(MatMul(a, b), bias) [-> act]  -> _FusedMatMul(a, b, bias)
//   BiasAdd(Conv2D(x, w), bias) [-> act]  -> _FusedConv2D(x, w, bias)
//   BiasAdd(DepthwiseConv2dNative(x, w), bias) [-> act]
//                                         -> _FusedDepthwiseConv2dNative(x, w, bias)
//
// with act one of Relu, Relu6, Elu, LeakyRelu, Tanh, Sigmoid, and the bias
// also an Add/AddV2 of a 1-D float Const with one value per output channel.
// A product read only by an activation (a bias-free layer, or one whose
// batch norm folded to a zero shift) fuses with a zero bias:
//
//   act(Conv2D(x, w))                     -> _FusedConv2D(x, w, zeros)
// A bias that is not a constant (a variable's value in a training graph)
// joins when shape inference knows it is a vector of that many values.
// float only; convolutions in NHWC; nodes on the CPU or not pinned (the fused
// kernels are CPU kernels). The fused node takes the name of the chain's
// last node; the others must have no other consumer and not be preserved,
// except that the product may also be read by Shape nodes (TensorFlow's
// gradient of the bias Add reads the product's shape): the bias and the
// activation keep that shape, so they read the fused node instead.
#include <algorithm>
#include <string>
#include <utility>
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

bool IsFusableActivation(absl::string_view op) {
  return op == "Relu" || op == "Relu6" || op == "Elu" || op == "LeakyRelu" || op == "Tanh" ||
         op == "Sigmoid";
}

// The fused op for a chain headed by `head`, or null when it has none.
const char* FusedOpFor(const NodeDef& head) {
  if (!IsFloat(head)) return nullptr;
  if (head.op() == "MatMul") return "_FusedMatMul";
  if (head.op() == "Conv2D" || head.op() == "DepthwiseConv2dNative") {
    auto format = head.attr().find("data_format");
    if (format == head.attr().end() || format->second.s() == "NHWC") {
      return head.op() == "Conv2D" ? "_FusedConv2D" : "_FusedDepthwiseConv2dNative";
    }
  }
  return nullptr;
}

// The dims of a Const node's value, or nothing (rank -1).
PartialShape ConstShape(const NodeDef& n) {
  auto value = n.attr().find("value");
  if (n.op() != "Const" || value == n.attr().end()) return PartialShape();
  auto shape = PartialShape::FromProto(value->second.tensor().tensor_shape());
  return shape.ok() ? *shape : PartialShape();
}

// The dims of output `index` of node `n` as shape inference found them:
// a Const's value, else the inferred shapes; rank -1 when unknown.
PartialShape KnownShape(const GraphView& view, const OptimizerOptions& options, int n,
                        int index) {
  if (view.node(n).op() == "Const") return index == 0 ? ConstShape(view.node(n)) : PartialShape();
  auto known = options.shapes.find(view.node(n).name());
  if (known == options.shapes.end() || index < 0 ||
      static_cast<size_t>(index) >= known->second.size()) {
    return PartialShape();
  }
  return known->second[index];
}

// How many output channels `head` (a MatMul or convolution) has: the last dim of
// its inferred shape, else of its (constant) weights; -1 if unknown.
int64_t OutputChannels(const GraphView& view, const OptimizerOptions& options, int head) {
  const PartialShape out = KnownShape(view, options, head, 0);
  if (out.rank() > 0 && out.dim(out.rank() - 1) >= 0) return out.dim(out.rank() - 1);
  if (view.num_data_inputs(head) < 2) return -1;
  const PartialShape w = ConstShape(view.node(view.producer(head, 1)));
  if (w.rank() != 2 && w.rank() != 4) return -1;
  const NodeDef& n = view.node(head);
  if (n.op() == "MatMul") {
    auto tb = n.attr().find("transpose_b");
    return w.dim(tb != n.attr().end() && tb->second.b() ? 0 : 1);
  }
  if (n.op() == "DepthwiseConv2dNative") {
    // [rows, cols, in, multiplier]: in * multiplier outputs.
    return w.rank() == 4 && w.dim(2) >= 0 && w.dim(3) >= 0 ? w.dim(2) * w.dim(3) : -1;
  }
  return w.dim(w.rank() - 1);
}

// Whether any of the nodes `from` is `target` or reads it, through any
// chain of data or control inputs (one walk for all of them).
bool DependsOn(const GraphView& view, std::vector<int> from, int target) {
  std::vector<int> stack = std::move(from);
  std::vector<bool> seen(view.num_nodes(), false);
  while (!stack.empty()) {
    const int n = stack.back();
    stack.pop_back();
    if (n == target) return true;
    if (n < 0 || seen[n]) continue;
    seen[n] = true;
    for (int pos = 0; pos < view.num_inputs(n); ++pos) stack.push_back(view.producer(n, pos));
  }
  return false;
}

// head -> bias -> [activation], found from the bias node.
struct Chain {
  int head = -1;
  int bias = -1;  // -1: no bias node (a zero bias is made)
  int bias_pos = 1;  // the input of `bias` that is the bias vector
  int last = -1;     // the activation, or `bias`
  std::string activation;
  const char* fused_op = nullptr;
  // (Shape node, input position) reading the head's product: they read
  // the fused node instead.
  std::vector<std::pair<int, int>> shape_readers;
};

// Whether `head` may disappear into a chain whose next node is `next`: not
// preserved, no control consumers, and read only by `next` and by Shape
// nodes (listed in `shape_readers`).
bool HeadFusable(const GraphView& view, const OptimizerOptions& options, int head, int next,
                 std::vector<std::pair<int, int>>* shape_readers) {
  if (options.preserve.contains(view.node(head).name()) || view.HasControlConsumers(head)) {
    return false;
  }
  shape_readers->clear();
  int next_uses = 0;
  for (const auto& [consumer, pos] : view.consumers(head)) {
    if (view.input(consumer, pos).index != 0) return false;
    if (consumer == next) {
      ++next_uses;
    } else if (view.node(consumer).op() == "Shape" && pos == 0 && !view.removed(consumer)) {
      shape_readers->emplace_back(consumer, pos);
    } else {
      return false;
    }
  }
  return next_uses == 1;
}

// Whether the fused node of `chain` would read its own output: with the
// product's Shape readers pointed at the fused node, any other input of
// the chain's nodes (the bias, a control input such as an Assert on the
// product's shape) that comes from the product closes a cycle.
bool ReadsItsOwnProduct(const GraphView& view, const Chain& chain) {
  if (chain.shape_readers.empty()) return false;
  std::vector<int> inputs;
  for (int node : {chain.bias, chain.last}) {
    if (node < 0) continue;
    for (int pos = 0; pos < view.num_inputs(node); ++pos) {
      const int p = view.producer(node, pos);
      if (p != chain.head && p != chain.bias) inputs.push_back(p);
    }
  }
  return DependsOn(view, std::move(inputs), chain.head);
}

// The chain whose bias node is `i`, if the nodes may be fused.
bool MatchChain(const GraphView& view, const OptimizerOptions& options, int i, Chain* chain) {
  const NodeDef& bias = view.node(i);
  const bool is_bias_add = bias.op() == "BiasAdd";
  const bool is_add = bias.op() == "Add" || bias.op() == "AddV2";
  if (!(is_bias_add || is_add) || view.removed(i) || !IsFloat(bias)) return false;
  if (view.num_data_inputs(i) != 2 || !CpuOrUnpinned(bias.device())) return false;
  if (is_bias_add) {
    auto format = bias.attr().find("data_format");
    if (format != bias.attr().end() && format->second.s() != "NHWC") return false;
  }
  auto single_data_use = [&](int n) {
    return !options.preserve.contains(view.node(n).name()) && view.consumers(n).size() == 1 &&
           !view.HasControlConsumers(n);
  };
  // BiasAdd's value is input 0; an Add's may be either, the other then a
  // 1-D constant with one value per output channel.
  for (int side = 0; side < (is_add ? 2 : 1); ++side) {
    if (view.input(i, side).index != 0) continue;
    const int head = view.producer(i, side);
    const NodeDef& h = view.node(head);
    const char* fused_op = FusedOpFor(h);
    std::vector<std::pair<int, int>> shape_readers;
    if (fused_op == nullptr || view.removed(head) ||
        !HeadFusable(view, options, head, i, &shape_readers) || h.device() != bias.device()) {
      continue;
    }
    if (is_add) {
      const TensorId& b_in = view.input(i, 1 - side);
      const PartialShape b = KnownShape(view, options, view.producer(i, 1 - side), b_in.index);
      const int64_t channels = OutputChannels(view, options, head);
      if (b.rank() != 1 || channels < 0 || b.dim(0) != channels) continue;
    }
    *chain = Chain();
    chain->shape_readers = std::move(shape_readers);
    chain->head = head;
    chain->bias = i;
    chain->bias_pos = 1 - side;
    chain->last = i;
    chain->fused_op = fused_op;
    // An activation that only this bias feeds joins too.
    if (single_data_use(i)) {
      const int c = view.consumers(i)[0].first;
      const NodeDef& next = view.node(c);
      if (IsFusableActivation(next.op()) && IsFloat(next) && next.device() == bias.device() &&
          view.num_data_inputs(c) == 1) {
        chain->last = c;
        chain->activation = next.op();
      }
    }
    // A bias computed from the product (say through its shape) stays.
    return !ReadsItsOwnProduct(view, *chain);
  }
  return false;
}

// The chain act(head) whose activation is node `i`, with no bias between.
bool MatchBiaslessChain(const GraphView& view, const OptimizerOptions& options, int i,
                        Chain* chain) {
  const NodeDef& act = view.node(i);
  if (!IsFusableActivation(act.op()) || view.removed(i) || !IsFloat(act) ||
      !CpuOrUnpinned(act.device()) || view.num_data_inputs(i) != 1 ||
      view.input(i, 0).index != 0) {
    return false;
  }
  const int head = view.producer(i, 0);
  const NodeDef& h = view.node(head);
  const char* fused_op = FusedOpFor(h);
  std::vector<std::pair<int, int>> shape_readers;
  if (fused_op == nullptr || view.removed(head) || h.device() != act.device() ||
      !HeadFusable(view, options, head, i, &shape_readers) || view.num_data_inputs(head) != 2 ||
      OutputChannels(view, options, head) < 0) {
    return false;
  }
  *chain = Chain();
  chain->shape_readers = std::move(shape_readers);
  chain->head = head;
  chain->last = i;
  chain->activation = act.op();
  chain->fused_op = fused_op;
  return !ReadsItsOwnProduct(view, *chain);
}

// A Const of `channels` zeros named after `base`, in the frame the layer's
// weights `like` run in: with the control inputs of `like` when that is a
// Const, else after `like` itself (weights that enter a loop come through
// an Enter, and a Const without inputs would sit outside the loop).
NodeDef ZeroBias(const GraphView& view, const std::string& base, int64_t channels, int like) {
  std::string name = base;
  for (int k = 0; view.Find(name) >= 0; ++k) name = absl::StrCat(base, "_", k);
  NodeDef n;
  n.set_name(name);
  n.set_op("Const");
  (*n.mutable_attr())["dtype"].set_type(DT_FLOAT);
  TensorProto* t = (*n.mutable_attr())["value"].mutable_tensor();
  t->set_dtype(DT_FLOAT);
  t->mutable_tensor_shape()->add_dim()->set_size(channels);
  for (int64_t c = 0; c < channels; ++c) t->add_float_val(0.f);
  if (view.node(like).op() != "Const") {
    n.add_input("^" + view.node(like).name());
    return n;
  }
  for (int pos = view.num_data_inputs(like); pos < view.num_inputs(like); ++pos) {
    n.add_input(view.input(like, pos).ToString());
  }
  return n;
}

// The fused node computing `chain`: the head's data inputs and the bias,
// then the control inputs of all the chain's nodes; the head's attrs that
// the fused op has, and the fusion's.
absl::StatusOr<NodeDef> FusedNode(const GraphView& view, const OptimizerOptions& options,
                                  const Chain& chain, const std::string& bias_input) {
  GR_ASSIGN_OR_RETURN(const OpDef* op_def, options.registry->LookUp(chain.fused_op));
  const NodeDef& head = view.node(chain.head);
  const NodeDef& last = view.node(chain.last);
  NodeDef fused;
  fused.set_name(last.name());
  fused.set_op(chain.fused_op);
  fused.set_device(last.device());
  fused.add_input(view.input(chain.head, 0).ToString());
  fused.add_input(view.input(chain.head, 1).ToString());
  fused.add_input(bias_input);
  std::vector<int> parts;
  for (int node : {chain.head, chain.bias, chain.last}) {
    if (node >= 0) parts.push_back(node);
  }
  optimize::AddControlInputsOf(view, parts, &fused);
  auto& attr = *fused.mutable_attr();
  for (const AttrDef& a : op_def->attrs) {
    auto it = head.attr().find(a.name);
    if (it != head.attr().end()) attr[a.name] = it->second;
  }
  attr["T"].set_type(DT_FLOAT);
  attr["num_args"].set_i(1);
  attr["fused_ops"].mutable_list()->add_s("BiasAdd");
  if (!chain.activation.empty()) attr["fused_ops"].mutable_list()->add_s(chain.activation);
  attr["epsilon"].set_f(0.0001f);
  auto alpha = last.attr().find("alpha");
  attr["leakyrelu_alpha"].set_f(chain.activation == "LeakyRelu" && alpha != last.attr().end()
                                    ? alpha->second.f()
                                    : 0.2f);
  return fused;
}

}  // namespace

absl::Status FuseKernels(GraphDef* graph, const OptimizerOptions& options,
                         OptimizationReport::Pass* report) {
  GR_ASSIGN_OR_RETURN(GraphView view, GraphView::Create(graph));
  std::vector<NodeDef> added;
  const int num_nodes = view.num_nodes();
  for (int i = 0; i < num_nodes; ++i) {
    Chain chain;
    std::string bias_input;
    if (MatchChain(view, options, i, &chain)) {
      bias_input = view.input(chain.bias, chain.bias_pos).ToString();
    } else if (MatchBiaslessChain(view, options, i, &chain)) {
      const int weights = view.producer(chain.head, 1);
      // (Each head is fused once, so the names of `added` differ.)
      added.push_back(ZeroBias(view, view.node(chain.head).name() + "/zero_bias",
                               OutputChannels(view, options, chain.head), weights));
      bias_input = added.back().name();
    } else {
      continue;
    }
    GR_ASSIGN_OR_RETURN(NodeDef fused, FusedNode(view, options, chain, bias_input));
    const NodeDef& head = view.node(chain.head);
    if (report != nullptr) {
      const std::string bias =
          chain.bias >= 0
              ? absl::StrCat(" + '", view.node(chain.bias).name(), "' (", view.node(chain.bias).op(),
                             ")")
              : std::string(" + a zero bias");
      report->changes.push_back(absl::StrCat(
          "fused '", head.name(), "' (", head.op(), ")", bias,
          chain.activation.empty()
              ? ""
              : absl::StrCat(" + '", view.node(chain.last).name(), "' (", chain.activation, ")"),
          " into ", chain.fused_op, " '", fused.name(), "'"));
    }
    // The chain's inner nodes go; the last one is replaced in place (its
    // consumers keep naming it). The view's bookkeeping of these nodes is
    // stale from here on, so they are marked and not visited again.
    for (int node : {chain.head, chain.bias}) {
      if (node < 0 || node == chain.last) continue;
      if (report != nullptr) report->merged_into[view.node(node).name()] = fused.name();
      view.MarkRemoved(node);
    }
    view.node(chain.last) = std::move(fused);
    for (const auto& [reader, pos] : chain.shape_readers) {
      view.SetInput(reader, pos, TensorId{view.node(chain.last).name(), 0});
    }
  }
  view.Compact();
  for (NodeDef& n : added) *graph->add_node() = std::move(n);
  return absl::OkStatus();
}

}  // namespace graphrun
