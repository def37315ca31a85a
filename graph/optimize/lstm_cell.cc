// LSTM cell fusion: the cell Keras (and tf.keras) writes for one LSTM step,
//
//   z = BiasAdd(MatMul(x, W) + MatMul(h_prev, U), b)
//   [zi, zf, zc, zo] = Split(1, z, num_split = 4)
//   c = Sigmoid(zf) * c_prev + Sigmoid(zi) * Tanh(zc)
//   h = Sigmoid(zo) * Tanh(c)
//
// (operands of the adds and products in either order) becomes one of
// TensorFlow's LSTMBlockCell, whose outputs 1 (cs) and 6 (h) replace c and
// h. Its weights are new constants: [W; U] with the gate columns moved from
// Keras' order (i, f, c, o) to LSTMBlockCell's (i, c, f, o), the bias moved
// alike, zero peepholes; forget_bias 0 and no cell clip, so the cell
// computes what the nodes did. Inside a loop the weights come in through
// constant Enters; the new weights enter the same frame the same way.
//
// float only, on the CPU or unpinned; x, h_prev and c_prev not known to be
// of other shapes than [batch, input], [batch, units], [batch, units] (a
// broadcast state is not the cell); the nodes between z and h may have no
// other consumers and must not be preserved; their control inputs pass to
// the fused node. Nodes left
// without consumers (the old weights, their Enters) go in pruning.
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/optimize/graph_view.h"
#include "graph/optimize/optimizer.h"
#include "graph/status_macros.h"
#include "graph/tensor.h"

namespace graphrun {
namespace {

using optimize::CpuOrUnpinned;
using optimize::FindAttr;
using optimize::GraphView;
using optimize::IsFloat;
using optimize::UniqueName;

// A constant operand: a Const, or a constant Enter of one (`enter` >= 0).
struct ConstSource {
  int value = -1;
  int enter = -1;
};

// Identities between are looked through (a loop body reads its weights
// through the Identities of the function it was lowered from). A Const
// with control inputs (one inside a loop body) is taken only when
// `anchored` allows it.
bool ConstantOperand(const GraphView& view, int i, int pos, ConstSource* out,
                     bool anchored = false) {
  if (view.input(i, pos).index != 0) return false;
  int p = view.producer(i, pos);
  while (view.node(p).op() == "Identity" && view.num_data_inputs(p) == 1 &&
         view.input(p, 0).index == 0) {
    p = view.producer(p, 0);
  }
  ConstSource s;
  if (view.node(p).op() == "Enter") {
    const AttrValue* constant = FindAttr(view.node(p), "is_constant");
    if (constant == nullptr || !constant->b() || view.num_data_inputs(p) != 1 ||
        view.input(p, 0).index != 0) {
      return false;
    }
    s.enter = p;
    p = view.producer(p, 0);
  }
  // Weights: a Const with no inputs at all, the same value in every frame.
  if (view.node(p).op() != "Const" || (!anchored && view.num_inputs(p) != 0)) return false;
  s.value = p;
  *out = s;
  return true;
}

// The node feeding data input `pos` of `i` from its output 0, if it runs `op`.
int ProducerOp(const GraphView& view, int i, int pos, absl::string_view op) {
  if (pos >= view.num_data_inputs(i) || view.input(i, pos).index != 0) return -1;
  const int p = view.producer(i, pos);
  return view.node(p).op() == op ? p : -1;
}

struct Cell {
  int matmul_x = -1, matmul_h = -1, add = -1, bias_add = -1, split = -1;
  int sig_i = -1, sig_f = -1, tanh_c = -1, sig_o = -1;
  int mul_f = -1, mul_i = -1, c = -1, tanh_cs = -1, h = -1;
  int c_prev_pos = -1;  // which input of mul_f is c_prev

  std::vector<int> Nodes() const {
    return {matmul_x, matmul_h, add, bias_add, split, sig_i, sig_f,
            tanh_c,   sig_o,    mul_f, mul_i,  c,     tanh_cs, h};
  }
  ConstSource w, u, b;
  int64_t input = 0, units = 0;
};

// The one consumer of output `index` of node i, or -1 when there is not
// exactly one (control consumers count).
int OnlyConsumer(const GraphView& view, int i, int index) {
  int found = -1;
  for (const auto& [consumer, pos] : view.consumers(i)) {
    const TensorId& in = view.input(consumer, pos);
    if (in.index != index) {
      if (in.index < 0) return -1;  // a control consumer
      continue;
    }
    if (found >= 0) return -1;
    found = consumer;
  }
  return found;
}

// Data input of binary node `i` that is not `known`'s output 0, or -1 when
// neither or both are.
int OtherOperand(const GraphView& view, int i, int known) {
  if (view.num_data_inputs(i) != 2) return -1;
  const bool first = view.producer(i, 0) == known && view.input(i, 0).index == 0;
  const bool second = view.producer(i, 1) == known && view.input(i, 1).index == 0;
  if (first == second) return -1;
  return first ? 1 : 0;
}

Tensor ConstValue(const GraphView& view, int i) {
  const AttrValue* v = FindAttr(view.node(i), "value");
  if (v == nullptr) return Tensor();
  auto t = Tensor::FromProto(v->tensor());
  return t.ok() ? *std::move(t) : Tensor();
}

bool MatchCell(const GraphView& view, const OptimizerOptions& options, int split, Cell* cell) {
  const NodeDef& s = view.node(split);
  const AttrValue* num_split = FindAttr(s, "num_split");
  if (s.op() != "Split" || view.removed(split) || !IsFloat(s) || num_split == nullptr ||
      num_split->i() != 4 || !CpuOrUnpinned(s.device()) || view.num_data_inputs(split) != 2) {
    return false;
  }
  Cell m;
  m.split = split;
  // split_dim: 1 or -1 of a matrix.
  ConstSource dim;
  if (!ConstantOperand(view, split, 0, &dim, /*anchored=*/true)) return false;
  const Tensor d = ConstValue(view, dim.value);
  if (d.NumElements() != 1 || d.dtype() != DT_INT32 ||
      (d.flat<int32_t>()[0] != 1 && d.flat<int32_t>()[0] != -1)) {
    return false;
  }
  m.bias_add = ProducerOp(view, split, 1, "BiasAdd");
  if (m.bias_add < 0) return false;
  const AttrValue* format = FindAttr(view.node(m.bias_add), "data_format");
  if (format != nullptr && format->s() != "NHWC") return false;
  if (!ConstantOperand(view, m.bias_add, 1, &m.b)) return false;
  m.add = ProducerOp(view, m.bias_add, 0, "AddV2");
  if (m.add < 0) m.add = ProducerOp(view, m.bias_add, 0, "Add");
  if (m.add < 0) return false;
  const int a0 = ProducerOp(view, m.add, 0, "MatMul");
  const int a1 = ProducerOp(view, m.add, 1, "MatMul");
  if (a0 < 0 || a1 < 0 || a0 == a1) return false;
  for (int mm : {a0, a1}) {
    const AttrValue* ta = FindAttr(view.node(mm), "transpose_a");
    const AttrValue* tb = FindAttr(view.node(mm), "transpose_b");
    if ((ta != nullptr && ta->b()) || (tb != nullptr && tb->b()) ||
        view.num_data_inputs(mm) != 2) {
      return false;
    }
  }
  ConstSource w0, w1;
  if (!ConstantOperand(view, a0, 1, &w0) || !ConstantOperand(view, a1, 1, &w1)) return false;
  const Tensor k0 = ConstValue(view, w0.value), k1 = ConstValue(view, w1.value);
  const Tensor bias = ConstValue(view, m.b.value);
  if (k0.dtype() != DT_FLOAT || k1.dtype() != DT_FLOAT || bias.dtype() != DT_FLOAT ||
      k0.dims() != 2 || k1.dims() != 2 || bias.dims() != 1 || k0.dim_size(1) != k1.dim_size(1) ||
      k0.dim_size(1) % 4 != 0 || bias.dim_size(0) != k0.dim_size(1)) {
    return false;
  }
  m.units = k0.dim_size(1) / 4;
  // The recurrent product's weights are [units, 4 * units]; when both are,
  // either order computes the same sum.
  if (k1.dim_size(0) == m.units) {
    m.matmul_x = a0, m.matmul_h = a1, m.w = w0, m.u = w1;
  } else if (k0.dim_size(0) == m.units) {
    m.matmul_x = a1, m.matmul_h = a0, m.w = w1, m.u = w0;
  } else {
    return false;
  }
  m.input = (m.matmul_x == a0 ? k0 : k1).dim_size(0);
  // Both weights and the bias enter the same frame, or none does.
  auto frame = [&](const ConstSource& c) -> std::string {
    if (c.enter < 0) return "";
    const AttrValue* f = FindAttr(view.node(c.enter), "frame_name");
    return f == nullptr ? "?" : f->s();
  };
  if ((m.w.enter < 0) != (m.u.enter < 0) || (m.w.enter < 0) != (m.b.enter < 0) ||
      frame(m.w) != frame(m.u) || frame(m.w) != frame(m.b)) {
    return false;
  }
  // The gates.
  m.sig_i = OnlyConsumer(view, split, 0);
  m.sig_f = OnlyConsumer(view, split, 1);
  m.tanh_c = OnlyConsumer(view, split, 2);
  m.sig_o = OnlyConsumer(view, split, 3);
  if (m.sig_i < 0 || m.sig_f < 0 || m.tanh_c < 0 || m.sig_o < 0 ||
      view.node(m.sig_i).op() != "Sigmoid" || view.node(m.sig_f).op() != "Sigmoid" ||
      view.node(m.tanh_c).op() != "Tanh" || view.node(m.sig_o).op() != "Sigmoid") {
    return false;
  }
  // mul_f = sig_f * c_prev, mul_i = sig_i * tanh_c, c = mul_f + mul_i.
  m.mul_f = OnlyConsumer(view, m.sig_f, 0);
  m.mul_i = OnlyConsumer(view, m.sig_i, 0);
  if (m.mul_f < 0 || m.mul_i < 0 || m.mul_i != OnlyConsumer(view, m.tanh_c, 0) ||
      view.node(m.mul_f).op() != "Mul" || view.node(m.mul_i).op() != "Mul") {
    return false;
  }
  m.c_prev_pos = OtherOperand(view, m.mul_f, m.sig_f);
  if (m.c_prev_pos < 0 || OtherOperand(view, m.mul_i, m.sig_i) < 0) return false;
  m.c = OnlyConsumer(view, m.mul_f, 0);
  if (m.c < 0 || m.c != OnlyConsumer(view, m.mul_i, 0) ||
      (view.node(m.c).op() != "AddV2" && view.node(m.c).op() != "Add") ||
      OtherOperand(view, m.c, m.mul_f) < 0) {
    return false;
  }
  // h = sig_o * Tanh(c); c has other consumers (the next step's state).
  m.h = OnlyConsumer(view, m.sig_o, 0);
  if (m.h < 0 || view.node(m.h).op() != "Mul") return false;
  const int other = OtherOperand(view, m.h, m.sig_o);
  if (other < 0 || view.input(m.h, other).index != 0) return false;
  m.tanh_cs = view.producer(m.h, other);
  if (view.node(m.tanh_cs).op() != "Tanh" || view.producer(m.tanh_cs, 0) != m.c ||
      view.input(m.tanh_cs, 0).index != 0 || OnlyConsumer(view, m.tanh_cs, 0) != m.h) {
    return false;
  }
  // Every node float and on one device; the inner ones read by nothing
  // else and not preserved. (Their control inputs pass to the fused node.)
  for (int n : m.Nodes()) {
    const NodeDef& node = view.node(n);
    if (view.removed(n) || !IsFloat(node) || node.device() != s.device()) return false;
    if (n == m.c || n == m.h) continue;
    if (options.preserve.contains(node.name()) || view.HasControlConsumers(n)) return false;
  }
  for (int n : {m.matmul_x, m.matmul_h, m.add, m.bias_add}) {
    if (OnlyConsumer(view, n, 0) < 0) return false;
  }
  if (options.preserve.contains(view.node(m.c).name()) ||
      options.preserve.contains(view.node(m.h).name())) {
    return false;
  }
  // Shapes known to differ from [batch, input] and [batch, units] (a
  // state broadcast by the Mul, a batch broadcast by the Add) are not the
  // cell; unknown ones are taken.
  auto known = [&](int node, int pos, int64_t cols) {
    auto it = options.shapes.find(view.input(node, pos).node);
    const int index = view.input(node, pos).index;
    if (it == options.shapes.end() || index >= static_cast<int>(it->second.size())) return true;
    const PartialShape& shape = it->second[index];
    if (shape.unknown_rank()) return true;
    return shape.rank() == 2 && (shape.dim(1) < 0 || shape.dim(1) == cols);
  };
  if (!known(m.matmul_x, 0, m.input) || !known(m.matmul_h, 0, m.units) ||
      !known(m.mul_f, m.c_prev_pos, m.units)) {
    return false;
  }
  auto batch = [&](int node, int pos) -> int64_t {
    auto it = options.shapes.find(view.input(node, pos).node);
    const int index = view.input(node, pos).index;
    if (it == options.shapes.end() || index >= static_cast<int>(it->second.size()) ||
        it->second[index].unknown_rank()) {
      return -1;
    }
    return it->second[index].dim(0);
  };
  int64_t rows = -1;
  for (const auto& [node, pos] : {std::pair<int, int>{m.matmul_x, 0}, {m.matmul_h, 0},
                                  {m.mul_f, m.c_prev_pos}}) {
    const int64_t b = batch(node, pos);
    if (b < 0) continue;
    if (rows >= 0 && b != rows) return false;
    rows = b;
  }
  *cell = m;
  return true;
}

// Adds a Const holding `value` and, when the cell's weights enter a frame,
// a constant Enter of it like `like`'s; returns the input to read.
std::string AddWeight(const GraphView& view, std::vector<NodeDef>* added, const Tensor& value,
                      const std::string& base, const ConstSource& like) {
  NodeDef c;
  c.set_name(UniqueName(view, *added, base));
  c.set_op("Const");
  c.set_device(view.node(like.value).device());
  (*c.mutable_attr())["dtype"].set_type(DT_FLOAT);
  value.AsProtoTensorContent((*c.mutable_attr())["value"].mutable_tensor());
  added->push_back(c);
  if (like.enter < 0) return c.name();
  const NodeDef& old = view.node(like.enter);
  NodeDef e;
  e.set_name(UniqueName(view, *added, base + "/enter"));
  e.set_op("Enter");
  e.set_device(old.device());
  e.add_input(c.name());
  for (int pos = 1; pos < view.num_inputs(like.enter); ++pos) {
    e.add_input(view.input(like.enter, pos).ToString());
  }
  *e.mutable_attr() = old.attr();
  added->push_back(e);
  return e.name();
}

}  // namespace

absl::Status FuseLstmCells(GraphDef* graph, const OptimizerOptions& options,
                           OptimizationReport::Pass* report) {
  GR_ASSIGN_OR_RETURN(GraphView view, GraphView::Create(graph));
  std::vector<NodeDef> added;
  // In topological order: a cell's new state is redirected to its fused
  // node before a later cell reading it is fused (and copies its inputs).
  GR_ASSIGN_OR_RETURN(const std::vector<int> order, view.TopologicalOrder());
  for (int split : order) {
    Cell m;
    if (!MatchCell(view, options, split, &m)) continue;
    const int64_t in = m.input, units = m.units;
    const Tensor w = ConstValue(view, m.w.value), u = ConstValue(view, m.u.value);
    const Tensor b = ConstValue(view, m.b.value);
    // Keras' gate blocks i, f, c, o -> LSTMBlockCell's i, c, f, o.
    constexpr int kFrom[4] = {0, 2, 1, 3};
    Tensor wu(DT_FLOAT, TensorShape({in + units, 4 * units}));
    Tensor bias(DT_FLOAT, TensorShape({4 * units}));
    Tensor zeros(DT_FLOAT, TensorShape({units}));
    auto wu_out = wu.flat<float>();
    auto w_in = w.flat<float>();
    auto u_in = u.flat<float>();
    for (int64_t r = 0; r < in + units; ++r) {
      const float* src = r < in ? &w_in[r * 4 * units] : &u_in[(r - in) * 4 * units];
      for (int g = 0; g < 4; ++g) {
        for (int64_t k = 0; k < units; ++k) {
          wu_out[r * 4 * units + g * units + k] = src[kFrom[g] * units + k];
        }
      }
    }
    for (int g = 0; g < 4; ++g) {
      for (int64_t k = 0; k < units; ++k) {
        bias.flat<float>()[g * units + k] = b.flat<float>()[kFrom[g] * units + k];
      }
    }
    for (float& z : zeros.flat<float>()) z = 0.f;
    const NodeDef& h = view.node(m.h);
    const std::string base = h.name() + "/lstm_block_cell";
    const std::string w_input = AddWeight(view, &added, wu, base + "/w", m.w);
    const std::string b_input = AddWeight(view, &added, bias, base + "/b", m.w);
    const std::string zero_input = AddWeight(view, &added, zeros, base + "/peephole", m.w);

    NodeDef fused;
    fused.set_name(UniqueName(view, added, base));
    fused.set_op("LSTMBlockCell");
    fused.set_device(h.device());
    fused.add_input(view.input(m.matmul_x, 0).ToString());
    fused.add_input(view.input(m.mul_f, m.c_prev_pos).ToString());
    fused.add_input(view.input(m.matmul_h, 0).ToString());
    fused.add_input(w_input);
    for (int k = 0; k < 3; ++k) fused.add_input(zero_input);
    fused.add_input(b_input);
    // The cell's control inputs (identity removal leaves those of the
    // Identities it bypassed on their readers), each once.
    optimize::AddControlInputsOf(view, m.Nodes(), &fused);
    auto& attr = *fused.mutable_attr();
    attr["T"].set_type(DT_FLOAT);
    attr["forget_bias"].set_f(0.f);
    attr["cell_clip"].set_f(-1.f);
    attr["use_peephole"].set_b(false);
    // c and h's consumers read the cell's outputs 1 and 6.
    for (const auto& [from, index] : {std::pair<int, int>{m.c, 1}, {m.h, 6}}) {
      const std::vector<std::pair<int, int>> consumers = view.consumers(from);
      for (const auto& [consumer, pos] : consumers) {
        if (consumer == m.tanh_cs || consumer == m.h) continue;
        const bool control = view.input(consumer, pos).IsControl();
        view.SetInput(consumer, pos, TensorId{fused.name(), control ? kControlSlot : index});
      }
    }
    if (report != nullptr) {
      report->changes.push_back(absl::StrCat("fused the LSTM cell '", view.node(m.split).name(),
                                             "' (14 nodes, ", units, " units) into LSTMBlockCell '",
                                             fused.name(), "'"));
    }
    for (int n : m.Nodes()) {
      if (report != nullptr) report->merged_into[view.node(n).name()] = fused.name();
      view.MarkRemoved(n);
    }
    added.push_back(std::move(fused));
  }
  view.Compact();
  for (NodeDef& n : added) *graph->add_node() = std::move(n);
  return absl::OkStatus();
}

}  // namespace graphrun
