// LSTM loop fusion: a while loop (v1 frames, as TensorFlow lowers a Keras
// LSTM layer's loop) that steps one LSTMBlockCell (what lstm_cell.cc fused
// from the layer's nodes, or TensorFlow's own cell) through a sequence
// becomes one BlockLSTM over the whole sequence, which multiplies every
// step's input by the weights in one product and runs the steps without
// the loop's per-iteration nodes.
//
// The loop taken, each loop variable (Enter -> Merge -> Switch, Switch:1
// -> ... -> NextIteration -> Merge, Switch:0 -> Exit) one of:
//   the sequence   a TensorListFromTensor(x) read by the cell's
//                  TensorListGetItem at the time variable, passed on as is
//   a counter      a constant start, plus 1 each iteration; the time
//                  variable is one, starting at 0
//   an invariant   passed on as is (a bound the condition reads)
//   c and h        the cell's state: its inputs 1 and 2, its outputs 1 and 6
//   the outputs    a TensorList the cell's h is written into, at the time
//                  variable (every step's h) or at a constant index (the
//                  last h)
// and the condition a conjunction of counter < constant bound, which fixes
// the number of iterations N; x ([time, batch, input]) must have N steps
// and the cell's weights must be loop constants. Every node of the frame
// must be one of these; the frame must hold nothing else (a mask, another
// state, a nested loop) and no node of it may be preserved. The Exits'
// readers then read BlockLSTM's outputs: h and c of the last step
// (StridedSlice), a TensorList made of every step's h or the reserved list
// with the last h set, the counters' final values, the invariants' own.
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "graph/optimize/graph_view.h"
#include "graph/optimize/optimizer.h"
#include "graph/status_macros.h"
#include "graph/tensor.h"

namespace graphrun {
namespace {

using optimize::FindAttr;
using optimize::GraphView;

struct Source {
  int node = -1;
  int index = 0;
  bool operator==(const Source& o) const { return node == o.node && index == o.index; }
};

// The producer of data input `pos` of `i`, Identities looked through.
Source Through(const GraphView& view, int i, int pos) {
  if (pos >= view.num_data_inputs(i)) return {};
  Source s{view.producer(i, pos), view.input(i, pos).index};
  while (s.node >= 0 && s.index == 0 && view.node(s.node).op() == "Identity" &&
         view.num_data_inputs(s.node) == 1) {
    s = {view.producer(s.node, 0), view.input(s.node, 0).index};
  }
  return s;
}

// A scalar integer Const's value.
bool ScalarInt(const GraphView& view, int i, int64_t* value) {
  if (i < 0 || view.node(i).op() != "Const") return false;
  const AttrValue* v = FindAttr(view.node(i), "value");
  if (v == nullptr) return false;
  auto t = Tensor::FromProto(v->tensor());
  if (!t.ok() || t->NumElements() != 1) return false;
  if (t->dtype() == DT_INT32) {
    *value = t->flat<int32_t>()[0];
  } else if (t->dtype() == DT_INT64) {
    *value = t->flat<int64_t>()[0];
  } else {
    return false;
  }
  return true;
}

enum class Kind { kUnknown, kSequence, kCounter, kInvariant, kCell, kHidden, kOutputs };

struct LoopVar {
  int enter = -1, merge = -1, sw = -1, next = -1, exit = -1;
  Kind kind = Kind::kUnknown;
  int64_t start = 0;     // counters
  int set_item = -1;     // the outputs' TensorListSetItem
  bool by_time = false;  // the outputs: written at the time variable
  int64_t index = 0;     // the outputs: else at this index
};

struct Loop {
  std::string frame;
  std::vector<int> nodes;  // the frame's, Exits included
  std::vector<LoopVar> vars;
  int cell = -1, get_item = -1, loop_cond = -1;
  int time = -1, sequence = -1;  // indices into vars
  int64_t steps = 0;
  absl::flat_hash_set<int> explained;  // arithmetic and list nodes accounted for
};

int VarOfSwitchOutput(const Loop& loop, const Source& s) {
  for (size_t v = 0; v < loop.vars.size(); ++v) {
    if (loop.vars[v].sw == s.node && s.index == 1) return static_cast<int>(v);
  }
  return -1;
}

int VarOfMerge(const Loop& loop, const Source& s) {
  for (size_t v = 0; v < loop.vars.size(); ++v) {
    if (loop.vars[v].merge == s.node && s.index == 0) return static_cast<int>(v);
  }
  return -1;
}

// The frame's nodes: from its Enters along every edge, up to and with its
// Exits. False when it reaches into another frame (a nested loop).
bool CollectFrame(const GraphView& view, const std::string& frame, std::vector<int>* nodes) {
  std::vector<int> stack;
  absl::flat_hash_set<int> seen;
  for (int i = 0; i < view.num_nodes(); ++i) {
    if (view.removed(i) || view.node(i).op() != "Enter") continue;
    const AttrValue* f = FindAttr(view.node(i), "frame_name");
    if (f != nullptr && f->s() == frame) stack.push_back(i), seen.insert(i);
  }
  while (!stack.empty()) {
    const int i = stack.back();
    stack.pop_back();
    nodes->push_back(i);
    if (view.node(i).op() == "Exit") continue;
    for (const auto& [consumer, pos] : view.consumers(i)) {
      if (!seen.insert(consumer).second) continue;
      if (view.node(consumer).op() == "Enter") return false;
      stack.push_back(consumer);
    }
  }
  std::sort(nodes->begin(), nodes->end());
  return true;
}

// The loop variables: each Merge of the frame with its Enter, NextIteration,
// Switch and Exit, all Switches on one LoopCond.
bool FindVars(const GraphView& view, Loop* loop) {
  for (int i : loop->nodes) {
    if (view.node(i).op() != "Merge") continue;
    LoopVar v;
    v.merge = i;
    if (view.num_data_inputs(i) != 2) return false;
    for (int pos = 0; pos < 2; ++pos) {
      const int p = view.producer(i, pos);
      if (view.node(p).op() == "Enter") v.enter = p;
      if (view.node(p).op() == "NextIteration") v.next = p;
    }
    if (v.enter < 0 || v.next < 0) return false;
    for (const auto& [consumer, pos] : view.consumers(i)) {
      const std::string& op = view.node(consumer).op();
      if (op == "Switch" && pos == 0) {
        if (v.sw >= 0) return false;
        v.sw = consumer;
      }
    }
    if (v.sw < 0) return false;
    const Source cond = Through(view, v.sw, 1);
    if (cond.node < 0 || view.node(cond.node).op() != "LoopCond") return false;
    if (loop->loop_cond >= 0 && loop->loop_cond != cond.node) return false;
    loop->loop_cond = cond.node;
    for (const auto& [consumer, pos] : view.consumers(v.sw)) {
      if (view.node(consumer).op() == "Exit" && view.input(consumer, pos).index == 0) {
        if (v.exit >= 0) return false;
        v.exit = consumer;
      }
    }
    loop->vars.push_back(v);
  }
  return loop->loop_cond >= 0;
}

// Sorts the variables into their kinds around the loop's one cell.
bool ClassifyVars(const GraphView& view, Loop* loop) {
  const int c = loop->cell;
  // The cell's x is the sequence's element at the time variable.
  const Source x = Through(view, c, 0);
  if (x.index != 0 || view.node(x.node).op() != "TensorListGetItem") return false;
  loop->get_item = x.node;
  loop->explained.insert(x.node);
  loop->sequence = VarOfSwitchOutput(*loop, Through(view, x.node, 0));
  loop->time = VarOfSwitchOutput(*loop, Through(view, x.node, 1));
  const int cs = VarOfSwitchOutput(*loop, Through(view, c, 1));
  const int h = VarOfSwitchOutput(*loop, Through(view, c, 2));
  if (loop->sequence < 0 || loop->time < 0 || cs < 0 || h < 0) return false;
  for (size_t k = 0; k < loop->vars.size(); ++k) {
    LoopVar& v = loop->vars[k];
    const Source next = Through(view, v.next, 0);
    const Source self{v.sw, 1};
    if (next == self) {
      v.kind = static_cast<int>(k) == loop->sequence ? Kind::kSequence : Kind::kInvariant;
    } else if (next == Source{c, 1} && static_cast<int>(k) == cs) {
      v.kind = Kind::kCell;
    } else if (next == Source{c, 6} && static_cast<int>(k) == h) {
      v.kind = Kind::kHidden;
    } else if (next.index == 0 && (view.node(next.node).op() == "AddV2" ||
                                   view.node(next.node).op() == "Add")) {
      // start + 1 each iteration.
      const Source a = Through(view, next.node, 0), b = Through(view, next.node, 1);
      int64_t one = 0;
      const bool counts = (a == self && ScalarInt(view, b.node, &one) && one == 1) ||
                          (b == self && ScalarInt(view, a.node, &one) && one == 1);
      if (!counts || !ScalarInt(view, Through(view, v.enter, 0).node, &v.start)) return false;
      v.kind = Kind::kCounter;
      loop->explained.insert(next.node);
    } else if (next.index == 0 && view.node(next.node).op() == "TensorListSetItem" &&
               Through(view, next.node, 0) == self && Through(view, next.node, 2) == Source{c, 6}) {
      const Source at = Through(view, next.node, 1);
      v.by_time = VarOfSwitchOutput(*loop, at) == loop->time;
      if (!v.by_time && !ScalarInt(view, at.node, &v.index)) return false;
      v.kind = Kind::kOutputs;
      v.set_item = next.node;
      loop->explained.insert(next.node);
    } else {
      return false;
    }
  }
  const LoopVar& time = loop->vars[loop->time];
  return time.kind == Kind::kCounter && time.start == 0 &&
         loop->vars[loop->sequence].kind == Kind::kSequence;
}

// The iterations the condition allows: the least bound - start over its
// counter < bound terms.
bool Steps(const GraphView& view, Loop* loop, const Source& p, int64_t* steps) {
  const std::string& op = view.node(p.node).op();
  if (p.index != 0) return false;
  loop->explained.insert(p.node);
  if (op == "LogicalAnd") {
    int64_t a = 0, b = 0;
    if (!Steps(view, loop, Through(view, p.node, 0), &a) ||
        !Steps(view, loop, Through(view, p.node, 1), &b)) {
      return false;
    }
    *steps = std::min(a, b);
    return true;
  }
  if (op != "Less") return false;
  const int counter = VarOfMerge(*loop, Through(view, p.node, 0));
  if (counter < 0 || loop->vars[counter].kind != Kind::kCounter) return false;
  Source bound = Through(view, p.node, 1);
  const int invariant = VarOfMerge(*loop, bound);
  if (invariant >= 0) {
    if (loop->vars[invariant].kind != Kind::kInvariant) return false;
    bound = Through(view, loop->vars[invariant].enter, 0);
  } else if (view.node(bound.node).op() == "Enter") {
    bound = Through(view, bound.node, 0);
  }
  int64_t limit = 0;
  if (!ScalarInt(view, bound.node, &limit)) return false;
  *steps = std::max<int64_t>(limit - loop->vars[counter].start, 0);
  return true;
}

// The value outside the frame that loop constant `s` (a constant Enter or
// an invariant's Switch:1) carries in.
bool LoopConstant(const GraphView& view, const Loop& loop, const Source& s, TensorId* out) {
  int enter = -1;
  if (s.index == 0 && view.node(s.node).op() == "Enter") {
    const AttrValue* constant = FindAttr(view.node(s.node), "is_constant");
    if (constant == nullptr || !constant->b()) return false;
    enter = s.node;
  } else {
    const int v = VarOfSwitchOutput(loop, s);
    if (v < 0 || loop.vars[v].kind != Kind::kInvariant) return false;
    enter = loop.vars[v].enter;
  }
  *out = view.input(enter, 0);
  return !out->IsControl();
}

bool MatchLoop(const GraphView& view, const OptimizerOptions& options, int cell, Loop* loop) {
  const NodeDef& c = view.node(cell);
  if (c.op() != "LSTMBlockCell" || view.removed(cell) || !optimize::IsFloat(c) ||
      !optimize::CpuOrUnpinned(c.device())) {
    return false;
  }
  const Source cs_prev = Through(view, cell, 1);
  if (cs_prev.index != 1 || view.node(cs_prev.node).op() != "Switch") return false;
  const int merge = view.producer(cs_prev.node, 0);
  int enter = -1;
  for (int pos = 0; pos < view.num_data_inputs(merge); ++pos) {
    if (view.node(view.producer(merge, pos)).op() == "Enter") enter = view.producer(merge, pos);
  }
  const AttrValue* frame = enter < 0 ? nullptr : FindAttr(view.node(enter), "frame_name");
  if (frame == nullptr) return false;
  Loop m;
  m.frame = frame->s();
  m.cell = cell;
  if (!CollectFrame(view, m.frame, &m.nodes) || !FindVars(view, &m) || !ClassifyVars(view, &m) ||
      !Steps(view, &m, Through(view, m.loop_cond, 0), &m.steps) || m.steps < 1) {
    return false;
  }
  // Nothing else in the frame: plumbing, constants, and the nodes above.
  static const auto* const kPlumbing = new absl::flat_hash_set<std::string>{
      "Enter", "Merge", "Switch", "Exit", "NextIteration", "LoopCond", "Identity", "NoOp",
      "Const"};
  for (int n : m.nodes) {
    const NodeDef& node = view.node(n);
    if (view.removed(n) || options.preserve.contains(node.name())) return false;
    if (n == cell || m.explained.contains(n)) continue;
    if (!kPlumbing->contains(node.op())) return false;
    if (node.op() == "Enter") {
      const AttrValue* f = FindAttr(node, "frame_name");
      if (f == nullptr || f->s() != m.frame) return false;
    }
  }
  // The cell's outputs feed only the loop's state and outputs.
  for (const auto& [consumer, pos] : view.consumers(cell)) {
    const int index = view.input(consumer, pos).index;
    if (index != 1 && index != 6) return false;
  }
  // The sequence: x [steps, batch, input], float.
  const Source list = Through(view, m.vars[m.sequence].enter, 0);
  if (list.index != 0 || view.node(list.node).op() != "TensorListFromTensor") return false;
  const TensorId& x = view.input(list.node, 0);
  auto shape = options.shapes.find(x.node);
  if (shape == options.shapes.end() || x.index >= static_cast<int>(shape->second.size())) {
    return false;
  }
  const PartialShape& xs = shape->second[x.index];
  if (xs.unknown_rank() || xs.rank() != 3 || xs.dim(0) != m.steps) return false;
  // Lists written at every step must have been reserved with as many.
  for (const LoopVar& v : m.vars) {
    if (v.kind != Kind::kOutputs || !v.by_time) continue;
    const Source reserve = Through(view, v.enter, 0);
    int64_t n = 0;
    if (view.node(reserve.node).op() != "TensorListReserve" ||
        !ScalarInt(view, Through(view, reserve.node, 1).node, &n) || n != m.steps) {
      return false;
    }
  }
  *loop = std::move(m);
  return true;
}

}  // namespace

absl::Status FuseLstmLoops(GraphDef* graph, const OptimizerOptions& options,
                           OptimizationReport::Pass* report) {
  GR_ASSIGN_OR_RETURN(GraphView view, GraphView::Create(graph));
  std::vector<NodeDef> added;
  const int original = view.num_nodes();
  for (int cell = 0; cell < original; ++cell) {
    Loop loop;
    if (!MatchLoop(view, options, cell, &loop)) continue;
    TensorId weights[5];
    bool constants = true;
    for (int k = 0; k < 5; ++k) {
      constants = constants && LoopConstant(view, loop, Through(view, cell, 3 + k), &weights[k]);
    }
    if (!constants) continue;
    const NodeDef& c = view.node(cell);
    const std::string base = absl::StrCat(loop.frame, "/block_lstm");
    auto name = [&](const std::string& suffix) {
      return optimize::UniqueName(view, added, base + suffix);
    };
    auto add_const = [&](const std::string& suffix, const Tensor& value) {
      NodeDef k;
      k.set_name(name(suffix));
      k.set_op("Const");
      k.set_device(c.device());
      (*k.mutable_attr())["dtype"].set_type(value.dtype());
      value.AsProtoTensorContent((*k.mutable_attr())["value"].mutable_tensor());
      added.push_back(k);
      return added.back().name();
    };
    NodeDef block;
    block.set_name(name(""));
    block.set_op("BlockLSTM");
    block.set_device(c.device());
    block.add_input(add_const("/seq_len_max", Tensor::Scalar<int64_t>(loop.steps)));
    block.add_input(view.input(Through(view, loop.vars[loop.sequence].enter, 0).node, 0)
                        .ToString());
    TensorId c0, h0;
    for (const LoopVar& v : loop.vars) {
      if (v.kind == Kind::kCell) c0 = view.input(v.enter, 0);
      if (v.kind == Kind::kHidden) h0 = view.input(v.enter, 0);
    }
    block.add_input(c0.ToString());
    block.add_input(h0.ToString());
    for (const TensorId& w : weights) block.add_input(w.ToString());
    std::vector<int> enters;
    for (const LoopVar& v : loop.vars) enters.push_back(v.enter);
    optimize::AddControlInputsOf(view, enters, &block);
    for (const char* attr : {"T", "forget_bias", "cell_clip", "use_peephole"}) {
      const AttrValue* a = FindAttr(c, attr);
      if (a != nullptr) (*block.mutable_attr())[attr] = *a;
    }
    // The last step of output `index` (1: cs, 6: h): [batch, units].
    auto last = [&](int index) {
      NodeDef s;
      s.set_name(name(index == 1 ? "/last_cs" : "/last_h"));
      s.set_op("StridedSlice");
      s.set_device(c.device());
      s.add_input(TensorId{block.name(), index}.ToString());
      const int32_t t = static_cast<int32_t>(loop.steps);
      s.add_input(add_const(index == 1 ? "/last_cs/begin" : "/last_h/begin",
                            Tensor::FromVector<int32_t>({t - 1})));
      s.add_input(add_const(index == 1 ? "/last_cs/end" : "/last_h/end",
                            Tensor::FromVector<int32_t>({t})));
      s.add_input(add_const(index == 1 ? "/last_cs/strides" : "/last_h/strides",
                            Tensor::FromVector<int32_t>({1})));
      auto& attr = *s.mutable_attr();
      attr["T"].set_type(DT_FLOAT);
      attr["Index"].set_type(DT_INT32);
      for (const char* mask : {"begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask"}) {
        attr[mask].set_i(0);
      }
      attr["shrink_axis_mask"].set_i(1);
      added.push_back(s);
      return added.back().name();
    };
    std::string last_h, last_cs;
    // What each Exit's readers read instead.
    for (const LoopVar& v : loop.vars) {
      if (v.exit < 0 || view.consumers(v.exit).empty()) continue;
      TensorId value;
      switch (v.kind) {
        case Kind::kSequence:
        case Kind::kInvariant:
          value = view.input(v.enter, 0);
          break;
        case Kind::kCounter: {
          const int start = Through(view, v.enter, 0).node;
          const AttrValue* dtype = FindAttr(view.node(start), "dtype");
          const int64_t end = v.start + loop.steps;
          value.node = dtype != nullptr && dtype->type() == DT_INT64
                           ? add_const("/counter", Tensor::Scalar<int64_t>(end))
                           : add_const("/counter", Tensor::Scalar<int32_t>(
                                                       static_cast<int32_t>(end)));
          break;
        }
        case Kind::kCell:
          if (last_cs.empty()) last_cs = last(1);
          value.node = last_cs;
          break;
        case Kind::kHidden:
          if (last_h.empty()) last_h = last(6);
          value.node = last_h;
          break;
        case Kind::kOutputs: {
          NodeDef list;
          list.set_device(c.device());
          if (v.by_time) {
            // Every step's h, as a list like the reserved one.
            const int reserve = Through(view, v.enter, 0).node;
            list.set_name(name("/outputs"));
            list.set_op("TensorListFromTensor");
            list.add_input(TensorId{block.name(), 6}.ToString());
            list.add_input(view.input(reserve, 0).ToString());
            (*list.mutable_attr())["element_dtype"].set_type(DT_FLOAT);
            const AttrValue* shape_type = FindAttr(view.node(reserve), "shape_type");
            (*list.mutable_attr())["shape_type"].set_type(
                shape_type != nullptr ? shape_type->type() : DT_INT32);
          } else {
            // The reserved list with the last h at the loop's index.
            if (last_h.empty()) last_h = last(6);
            list.set_name(name("/output"));
            list.set_op("TensorListSetItem");
            list.add_input(view.input(v.enter, 0).ToString());
            list.add_input(add_const("/output/index",
                                     Tensor::Scalar<int32_t>(static_cast<int32_t>(v.index))));
            list.add_input(last_h);
            *list.mutable_attr() = view.node(v.set_item).attr();
          }
          added.push_back(list);
          value.node = added.back().name();
          break;
        }
        case Kind::kUnknown:
          return absl::InternalError("LSTM loop fusion: an unclassified loop variable");
      }
      const std::vector<std::pair<int, int>> consumers = view.consumers(v.exit);
      for (const auto& [consumer, pos] : consumers) {
        const bool control = view.input(consumer, pos).IsControl();
        view.SetInput(consumer, pos, control ? TensorId{block.name(), kControlSlot} : value);
      }
    }
    if (report != nullptr) {
      report->changes.push_back(absl::StrCat("fused the loop '", loop.frame, "' (",
                                             loop.steps, " steps of LSTMBlockCell '", c.name(),
                                             "', ", loop.nodes.size(),
                                             " nodes) into BlockLSTM '", block.name(), "'"));
      report->merged_into[c.name()] = block.name();
    }
    for (int n : loop.nodes) view.MarkRemoved(n);
    added.push_back(std::move(block));
  }
  view.Compact();
  for (NodeDef& n : added) *graph->add_node() = std::move(n);
  return absl::OkStatus();
}

}  // namespace graphrun
