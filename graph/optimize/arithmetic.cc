// Arithmetic simplification: rewrites that leave a graph's values as they
// were (within float rounding) but compute them with fewer or cheaper nodes.
//
//   x * 1, 1 * x, x + 0, 0 + x, x - 0, x / 1      -> x
//   (x + c1) + c2, (x * c1) * c2, in any operand order
//                                                 -> x + c, x * c (c folded)
//   Transpose(x, identity), Transpose(Transpose(x, p), inverse of p) -> x
//   Reshape(x, x's own shape)                     -> x
//   Reshape(Reshape(x, s1), s2)                   -> Reshape(x, s2)
//   Cast(x) to x's own dtype                      -> x
//   Cast(Cast(x, A->B), B->C), A->B lossless      -> Cast(x, A->C)
//
// A neutral constant must broadcast into x without changing x's shape: a
// scalar always does; any other shape needs x's inferred shape
// (OptimizerOptions::shapes). Folding c1 and c2 reassociates: integers wrap
// the same either way, floats round once where the graph rounded twice, so
// results stay within float rounding of the graph as written (as Grappler,
// which reassociates float Add and Mul too). x + 0 also gives -0 back where
// the graph gave +0, and x + 0 or x * 1 keeps a subnormal x that the
// kernel, reading subnormals as zero (runtime/float_env.h), would have
// made 0.
//
// A node replaced by its input is bypassed: its consumers read the input.
// It stays, as an Identity of that input, where bypassing would change
// what the graph means or names: a preserved node, a node with control
// inputs (or whose constants have some: they put it in a loop frame or a
// cond branch), an input from a control-flow node or on another device.
// NoOps nothing waits for are left to pruning, Identity and StopGradient
// to identity removal.
#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/container/node_hash_map.h"
#include "absl/strings/str_cat.h"
#include "graph/optimize/graph_view.h"
#include "graph/optimize/optimizer.h"
#include "graph/status_macros.h"

namespace graphrun {
namespace {

using optimize::GraphView;

// Producers whose outputs only the node in between may consume directly:
// a Switch's outputs are branch pivots, loop nodes' outputs belong to
// frames, and Recv outputs arrive per step (as identity removal).
bool IsControlFlowProducer(absl::string_view op) {
  return op == "Switch" || op == "RefSwitch" || op == "Merge" || op == "RefMerge" ||
         op == "Enter" || op == "RefEnter" || op == "Exit" || op == "RefExit" ||
         op == "NextIteration" || op == "RefNextIteration" || op == "LoopCond" || op == "_Recv" ||
         op == "_HostRecv";
}

bool IsNumeric(DataType t) { return IsFloatingType(t) || IsIntegerType(t) || IsComplexType(t); }

DataType TypeAttr(const NodeDef& n, const char* name) {
  auto it = n.attr().find(name);
  return it == n.attr().end() ? DT_INVALID : it->second.type();
}

template <typename T>
bool AllEqualTo(const Tensor& t, int v) {
  for (T e : t.flat<T>()) {
    if (!(e == static_cast<T>(v))) return false;
  }
  return true;
}

// Whether every element of `t` is `v` (0 or 1); false for other dtypes.
bool AllEqual(const Tensor& t, int v) {
  switch (t.dtype()) {
    case DT_FLOAT:
      return AllEqualTo<float>(t, v);
    case DT_DOUBLE:
      return AllEqualTo<double>(t, v);
    case DT_INT8:
      return AllEqualTo<int8_t>(t, v);
    case DT_INT16:
      return AllEqualTo<int16_t>(t, v);
    case DT_INT32:
      return AllEqualTo<int32_t>(t, v);
    case DT_INT64:
      return AllEqualTo<int64_t>(t, v);
    case DT_UINT8:
      return AllEqualTo<uint8_t>(t, v);
    case DT_UINT16:
      return AllEqualTo<uint16_t>(t, v);
    case DT_UINT32:
      return AllEqualTo<uint32_t>(t, v);
    case DT_UINT64:
      return AllEqualTo<uint64_t>(t, v);
    default:
      return false;
  }
}

// Whether a constant of shape `c`, broadcast against x of shape `x` (null
// if unknown), leaves x's shape as it is.
bool BroadcastsInto(const TensorShape& c, const PartialShape* x) {
  if (c.dims() == 0) return true;
  if (x == nullptr || x->unknown_rank() || c.dims() > x->rank()) return false;
  for (int k = 1; k <= c.dims(); ++k) {
    const int64_t cd = c.dim_size(c.dims() - k), xd = x->dim(x->rank() - k);
    if (cd != 1 && cd != xd) return false;
  }
  return true;
}

// Whether Reshape(x, target) is x itself: the dims the target names are
// x's, and at most one -1 stands for the dim the others fix (none of them
// zero, or the -1 could not be inferred).
bool ReshapeIsIdentity(const PartialShape& x, const std::vector<int64_t>& target) {
  if (x.unknown_rank() || x.rank() != static_cast<int>(target.size())) return false;
  const auto inferred = std::count(target.begin(), target.end(), int64_t{-1});
  if (inferred > 1) return false;
  for (size_t d = 0; d < target.size(); ++d) {
    if (target[d] == -1) continue;
    if (target[d] < 0 || target[d] != x.dim(static_cast<int>(d))) return false;
    if (target[d] == 0 && inferred > 0) return false;
  }
  return true;
}

bool IntValues(const Tensor& t, std::vector<int64_t>* out) {
  out->clear();
  if (t.dims() > 1) return false;
  if (t.dtype() == DT_INT32) {
    for (int32_t v : t.flat<int32_t>()) out->push_back(v);
  } else if (t.dtype() == DT_INT64) {
    for (int64_t v : t.flat<int64_t>()) out->push_back(v);
  } else {
    return false;
  }
  return true;
}

// Casting `from` to `to` keeps every value (so a later cast may start from
// `from` instead).
bool IsLossless(DataType from, DataType to) {
  switch (from) {
    case DT_BOOL:
      return to == DT_INT8 || to == DT_UINT8 || to == DT_INT16 || to == DT_UINT16 ||
             to == DT_INT32 || to == DT_UINT32 || to == DT_INT64 || to == DT_UINT64;
    case DT_INT8:
      return to == DT_INT16 || to == DT_INT32 || to == DT_INT64 || to == DT_FLOAT ||
             to == DT_DOUBLE || to == DT_HALF;
    case DT_UINT8:
      return to == DT_INT16 || to == DT_UINT16 || to == DT_INT32 || to == DT_UINT32 ||
             to == DT_INT64 || to == DT_UINT64 || to == DT_FLOAT || to == DT_DOUBLE ||
             to == DT_HALF;
    case DT_INT16:
      return to == DT_INT32 || to == DT_INT64 || to == DT_FLOAT || to == DT_DOUBLE;
    case DT_UINT16:
      return to == DT_INT32 || to == DT_UINT32 || to == DT_INT64 || to == DT_UINT64 ||
             to == DT_FLOAT || to == DT_DOUBLE;
    case DT_INT32:
      return to == DT_INT64 || to == DT_DOUBLE;
    case DT_UINT32:
      return to == DT_INT64 || to == DT_UINT64 || to == DT_DOUBLE;
    case DT_HALF:
    case DT_BFLOAT16:
      return to == DT_FLOAT || to == DT_DOUBLE;
    case DT_FLOAT:
      return to == DT_DOUBLE;
    default:
      return false;
  }
}

// a + b or a * b elementwise, integers wrapping (as the kernels do).
template <typename T>
Tensor Combine(bool add, const Tensor& a, const Tensor& b) {
  const bool a_scalar = a.dims() == 0;
  Tensor out(a.dtype(), a_scalar ? b.shape() : a.shape());
  const int64_t n = out.NumElements();
  auto fa = a.flat<T>();
  auto fb = b.flat<T>();
  auto fo = out.flat<T>();
  for (int64_t k = 0; k < n; ++k) {
    const T x = fa[a.NumElements() == 1 ? 0 : k], y = fb[b.NumElements() == 1 ? 0 : k];
    if constexpr (std::is_integral_v<T>) {
      using W = std::make_unsigned_t<T>;
      fo[k] = static_cast<T>(add ? static_cast<W>(static_cast<W>(x) + static_cast<W>(y))
                                 : static_cast<W>(static_cast<W>(x) * static_cast<W>(y)));
    } else {
      fo[k] = add ? x + y : x * y;
    }
  }
  return out;
}

class Simplifier {
 public:
  Simplifier(GraphView* view, const OptimizerOptions& options, OptimizationReport::Pass* report)
      : view_(*view), options_(options), report_(report) {}

  // Applies the rules to node i until none does.
  void Visit(int i) {
    for (int round = 0; round < 8 && !view_.removed(i); ++round) {
      const std::string& op = view_.node(i).op();
      bool again = false;
      if (op == "Mul" || op == "Add" || op == "AddV2" || op == "Sub" || op == "Div" ||
          op == "RealDiv") {
        again = !DropNeutral(i) && FoldChain(i);
      } else if (op == "Transpose") {
        SimplifyTranspose(i);
      } else if (op == "Reshape") {
        again = SimplifyReshape(i);
      } else if (op == "Cast") {
        again = SimplifyCast(i);
      }
      if (!again) break;
    }
  }

  // The new constants, to add once the view is compacted.
  std::vector<NodeDef> TakeAddedConsts() {
    std::vector<NodeDef> out;
    for (const std::string& name : added_order_) {
      const AddedConst& c = added_.at(name);
      if (c.dropped) continue;
      NodeDef n;
      n.set_name(name);
      n.set_op("Const");
      n.set_device(c.device);
      for (int p : c.controls) n.add_input(absl::StrCat("^", view_.node(p).name()));
      (*n.mutable_attr())["dtype"].set_type(c.value.dtype());
      c.value.AsProtoTensorContent((*n.mutable_attr())["value"].mutable_tensor());
      out.push_back(std::move(n));
    }
    return out;
  }

 private:
  struct AddedConst {
    Tensor value;
    std::vector<int> controls;  // nodes it waits for (its frame, its branch)
    std::string device;
    bool dropped = false;
  };

  bool Preserved(int i) const { return options_.preserve.contains(view_.node(i).name()); }

  std::vector<int> ControlInputs(int i) const {
    std::vector<int> out;
    for (int pos = view_.num_data_inputs(i); pos < view_.num_inputs(i); ++pos) {
      out.push_back(view_.producer(i, pos));
    }
    return out;
  }

  const PartialShape* ShapeOf(const TensorId& id) const {
    auto it = options_.shapes.find(id.node);
    if (it == options_.shapes.end() || id.index < 0 ||
        id.index >= static_cast<int>(it->second.size())) {
      return nullptr;
    }
    return &it->second[id.index];
  }

  // The value of data input `pos` of node i if it is a constant (a Const
  // of the graph or one this pass added), and the nodes that constant
  // waits for.
  const Tensor* ConstInput(int i, int pos, std::vector<int>* controls) {
    const TensorId& id = view_.input(i, pos);
    if (id.IsControl() || id.index != 0) return nullptr;
    const int p = view_.producer(i, pos);
    if (p < 0) {
      auto it = added_.find(id.node);
      if (it == added_.end() || it->second.dropped) return nullptr;
      *controls = it->second.controls;
      return &it->second.value;
    }
    const NodeDef& def = view_.node(p);
    if (def.op() != "Const") return nullptr;
    auto cached = values_.find(p);
    if (cached == values_.end()) {
      auto v = def.attr().find("value");
      if (v == def.attr().end() || !v->second.has_tensor()) return nullptr;
      TensorFromProtoOptions limits;
      limits.max_bytes = options_.max_constant_bytes;
      auto t = Tensor::FromProto(v->second.tensor(), limits);
      if (!t.ok()) return nullptr;
      cached = values_.emplace(p, *std::move(t)).first;
    }
    *controls = ControlInputs(p);
    return &cached->second;
  }

  bool IsConstInput(int i, int pos) {
    std::vector<int> unused;
    return ConstInput(i, pos, &unused) != nullptr;
  }

  // Points input `pos` of node i at `to`; a constant this pass added for
  // that input is dropped.
  void Rewire(int i, int pos, TensorId to) {
    const TensorId& old = view_.input(i, pos);
    if (view_.producer(i, pos) < 0) {
      auto it = added_.find(old.node);
      if (it != added_.end()) it->second.dropped = true;
    }
    view_.SetInput(i, pos, to);
  }

  void AddControls(int i, const std::vector<int>& controls) {
    for (int c : controls) {
      if (c >= 0 && c != i) view_.AddControlInput(i, c);
    }
  }

  void Remove(int i) {
    for (int pos = 0; pos < view_.num_inputs(i); ++pos) {
      if (view_.producer(i, pos) < 0) {
        auto it = added_.find(view_.input(i, pos).node);
        if (it != added_.end()) it->second.dropped = true;
      }
    }
    view_.TruncateInputs(i, 0);
    view_.MarkRemoved(i);
  }

  // Removes node p (an input this pass just cut out) if nothing reads it
  // any more, as merged into `into`.
  void RemoveIfUnused(int p, const std::string& into) {
    if (Preserved(p) || !view_.consumers(p).empty()) return;
    const std::string name = view_.node(p).name();
    Remove(p);
    if (report_ != nullptr) {
      report_->changes.push_back(absl::StrCat("removed '", name, "' (", view_.node(p).op(),
                                              "): merged into '", into, "'"));
      report_->merged_into[name] = into;
    }
  }

  std::string NewConstName(const std::string& base) {
    std::string name = base;
    for (int k = 1; view_.Find(name) >= 0 || added_.contains(name); ++k) {
      name = absl::StrCat(base, "_", k);
    }
    return name;
  }

  // Node i computes the value of tensor `to`: bypass it, or make it an
  // Identity of `to` that keeps its control inputs and `controls`.
  void ReplaceWith(int i, TensorId to, const std::vector<int>& controls, absl::string_view why) {
    NodeDef& def = view_.node(i);
    const std::string name = def.name();
    const int to_p = view_.Find(to.node);
    const bool bypass = !Preserved(i) && view_.num_data_inputs(i) == view_.num_inputs(i) &&
                        controls.empty() && to_p >= 0 &&
                        !IsControlFlowProducer(view_.node(to_p).op()) &&
                        view_.node(to_p).device() == def.device();
    if (bypass) {
      const auto consumers = view_.consumers(i);  // a copy: SetInput edits it
      for (const auto& [c, pos] : consumers) {
        if (view_.removed(c)) continue;
        view_.SetInput(c, pos,
                       view_.input(c, pos).IsControl() ? TensorId{to.node, kControlSlot} : to);
      }
      Remove(i);
      if (report_ != nullptr) {
        report_->changes.push_back(absl::StrCat("bypassed '", name, "' (", why, ")"));
        report_->merged_into[name] = to.node;
      }
      return;
    }
    const DataType dtype = TypeAttr(def, def.op() == "Cast" ? "DstT" : "T");
    std::vector<int> keep = ControlInputs(i);
    keep.insert(keep.end(), controls.begin(), controls.end());
    Rewire(i, 0, to);
    for (int pos = 1; pos < view_.num_inputs(i); ++pos) {
      if (view_.producer(i, pos) < 0) {
        auto it = added_.find(view_.input(i, pos).node);
        if (it != added_.end()) it->second.dropped = true;
      }
    }
    view_.TruncateInputs(i, 1);
    for (int c : keep) {
      if (c != to_p) AddControls(i, {c});
    }
    def.set_op("Identity");
    google::protobuf::Map<std::string, AttrValue> attrs;
    attrs["T"].set_type(dtype);
    *def.mutable_attr() = std::move(attrs);
    if (report_ != nullptr) {
      report_->changes.push_back(
          absl::StrCat("'", name, "' (", why, ") became an Identity of '", to.ToString(), "'"));
    }
  }

  // x * 1, x + 0, x - 0, x / 1 (and 1 * x, 0 + x) -> x.
  bool DropNeutral(int i) {
    const NodeDef& def = view_.node(i);
    const std::string& op = def.op();
    if (view_.num_data_inputs(i) != 2 || !IsNumeric(TypeAttr(def, "T"))) return false;
    const bool is_mul = op == "Mul", is_div = op == "Div" || op == "RealDiv";
    const bool commutative = is_mul || op == "Add" || op == "AddV2";
    const int neutral = (is_mul || is_div) ? 1 : 0;
    for (int side = 1; side >= (commutative ? 0 : 1); --side) {
      std::vector<int> controls;
      const Tensor* c = ConstInput(i, side, &controls);
      if (c == nullptr || IsConstInput(i, 1 - side) || !AllEqual(*c, neutral)) continue;
      const TensorId x = view_.input(i, 1 - side);
      if (!BroadcastsInto(c->shape(), ShapeOf(x))) continue;
      const std::string why = absl::StrCat(op, (is_mul || is_div) ? " by 1" : " of 0");
      ReplaceWith(i, x, controls, why);
      return true;
    }
    return false;
  }

  // (x + c1) + c2 -> x + (c1 + c2); the same for Mul.
  bool FoldChain(int i) {
    const NodeDef& def = view_.node(i);
    const bool is_mul = def.op() == "Mul";
    if (!is_mul && def.op() != "Add" && def.op() != "AddV2") return false;
    const DataType dtype = TypeAttr(def, "T");
    if (view_.num_data_inputs(i) != 2 || !IsNumeric(dtype)) return false;
    auto same_family = [&](const NodeDef& n) {
      return is_mul ? n.op() == "Mul" : (n.op() == "Add" || n.op() == "AddV2");
    };
    for (int side = 1; side >= 0; --side) {
      std::vector<int> controls2;
      const Tensor* c2 = ConstInput(i, side, &controls2);
      const int p = view_.producer(i, 1 - side);
      if (c2 == nullptr || p < 0 || view_.input(i, 1 - side).index != 0) continue;
      const NodeDef& inner = view_.node(p);
      if (!same_family(inner) || TypeAttr(inner, "T") != dtype || inner.device() != def.device() ||
          view_.num_data_inputs(p) != 2) {
        continue;
      }
      for (int s = 1; s >= 0; --s) {
        std::vector<int> controls1;
        const Tensor* c1 = ConstInput(p, s, &controls1);
        if (c1 == nullptr || IsConstInput(p, 1 - s)) continue;
        auto folded = Fold(def, *c1, *c2);
        if (!folded.ok() ||
            static_cast<int64_t>(folded->TotalBytes()) > options_.max_constant_bytes) {
          continue;
        }
        const TensorId x = view_.input(p, 1 - s);
        const std::string name = NewConstName(absl::StrCat(def.name(), "/folded_constant"));
        AddedConst& added = added_[name];
        added_order_.push_back(name);
        added.value = *std::move(folded);
        added.device = def.device();
        added.controls = controls1;
        for (int c : controls2) {
          if (std::find(added.controls.begin(), added.controls.end(), c) == added.controls.end()) {
            added.controls.push_back(c);
          }
        }
        const std::string inner_name = inner.name();
        const std::vector<int> inner_controls = ControlInputs(p);
        Rewire(i, side, TensorId{name, 0});
        Rewire(i, 1 - side, x);
        AddControls(i, inner_controls);
        if (report_ != nullptr) {
          report_->changes.push_back(
              absl::StrCat("folded the constants of '", inner_name, "' and '", def.name(), "' (",
                           def.op(), "): now one ", def.op(), " of '", x.ToString(), "'"));
        }
        RemoveIfUnused(p, def.name());
        return true;
      }
    }
    return false;
  }

  absl::StatusOr<Tensor> Fold(const NodeDef& def, const Tensor& a, const Tensor& b) {
    const bool add = def.op() != "Mul";
    if (a.dtype() != b.dtype()) return absl::InvalidArgumentError("dtypes differ");
    if (a.shape() == b.shape() || a.dims() == 0 || b.dims() == 0) {
      switch (a.dtype()) {
        case DT_FLOAT:
          return Combine<float>(add, a, b);
        case DT_DOUBLE:
          return Combine<double>(add, a, b);
        case DT_INT32:
          return Combine<int32_t>(add, a, b);
        case DT_INT64:
          return Combine<int64_t>(add, a, b);
        default:
          break;
      }
    }
    if (!options_.evaluate) return absl::UnimplementedError("no evaluator");
    const OpDef* op_def = options_.registry->Find(def.op());
    if (op_def == nullptr) return absl::NotFoundError(def.op());
    NodeDef node;
    node.set_name(def.name());
    node.set_op(def.op());
    (*node.mutable_attr())["T"].set_type(a.dtype());
    GR_ASSIGN_OR_RETURN(std::vector<Tensor> out, options_.evaluate(node, *op_def, {a, b}));
    if (out.size() != 1 || !out[0].IsInitialized()) return absl::InternalError("no value");
    return std::move(out[0]);
  }

  // Transpose by the identity, or undoing the Transpose before it.
  void SimplifyTranspose(int i) {
    if (view_.num_data_inputs(i) != 2) return;
    std::vector<int> controls;
    const Tensor* perm_t = ConstInput(i, 1, &controls);
    std::vector<int64_t> perm;
    if (perm_t == nullptr || !IntValues(*perm_t, &perm)) return;
    bool identity = true;
    for (size_t k = 0; k < perm.size(); ++k) identity &= perm[k] == static_cast<int64_t>(k);
    if (identity) {
      ReplaceWith(i, view_.input(i, 0), controls, "Transpose by the identity");
      return;
    }
    const int p = view_.producer(i, 0);
    if (p < 0 || view_.input(i, 0).index != 0 || view_.node(p).op() != "Transpose" ||
        view_.num_data_inputs(p) != 2 || view_.node(p).device() != view_.node(i).device()) {
      return;
    }
    std::vector<int> inner_controls;
    const Tensor* inner_t = ConstInput(p, 1, &inner_controls);
    std::vector<int64_t> inner;
    if (inner_t == nullptr || !IntValues(*inner_t, &inner) || inner.size() != perm.size()) return;
    // Output dim j of the pair is input dim inner[perm[j]].
    for (size_t j = 0; j < perm.size(); ++j) {
      if (perm[j] < 0 || perm[j] >= static_cast<int64_t>(perm.size()) ||
          inner[perm[j]] != static_cast<int64_t>(j)) {
        return;
      }
    }
    const TensorId x = view_.input(p, 0);
    const std::string inner_name = view_.node(p).name();
    controls.insert(controls.end(), inner_controls.begin(), inner_controls.end());
    const std::vector<int> more = ControlInputs(p);
    controls.insert(controls.end(), more.begin(), more.end());
    ReplaceWith(i, x, controls, absl::StrCat("Transpose undoing '", inner_name, "'"));
    RemoveIfUnused(p, x.node);
  }

  // Returns true if the node is still a Reshape and changed.
  bool SimplifyReshape(int i) {
    if (view_.num_data_inputs(i) != 2) return false;
    const int p = view_.producer(i, 0);
    if (p >= 0 && view_.input(i, 0).index == 0 && view_.node(p).op() == "Reshape" &&
        view_.num_data_inputs(p) == 2 && view_.node(p).device() == view_.node(i).device()) {
      // Reshape(Reshape(x, s1), s2) -> Reshape(x, s2).
      std::vector<int> controls;
      if (ConstInput(p, 1, &controls) == nullptr) controls = {view_.producer(p, 1)};
      const std::vector<int> more = ControlInputs(p);
      controls.insert(controls.end(), more.begin(), more.end());
      const std::string inner_name = view_.node(p).name();
      const TensorId x = view_.input(p, 0);
      Rewire(i, 0, x);
      AddControls(i, controls);
      if (report_ != nullptr) {
        report_->changes.push_back(absl::StrCat("'", view_.node(i).name(), "' (Reshape) reshapes '",
                                                x.ToString(), "' directly, not '", inner_name,
                                                "'"));
      }
      RemoveIfUnused(p, view_.node(i).name());
      return true;
    }
    const TensorId x = view_.input(i, 0);
    const PartialShape* x_shape = ShapeOf(x);
    if (x_shape == nullptr) return false;
    std::vector<int> controls;
    const Tensor* shape_t = ConstInput(i, 1, &controls);
    std::vector<int64_t> target;
    if (shape_t != nullptr) {
      if (!IntValues(*shape_t, &target) || shape_t->dims() != 1) return false;
    } else {
      const PartialShape* out = ShapeOf(TensorId{view_.node(i).name(), 0});
      if (out == nullptr || !out->IsFullyDefined()) return false;
      target = out->dims();
      if (view_.producer(i, 1) >= 0) controls = {view_.producer(i, 1)};
    }
    if (!ReshapeIsIdentity(*x_shape, target)) return false;
    ReplaceWith(i, x, controls, "Reshape to its input's shape");
    return false;
  }

  // Returns true if the node is still a Cast and changed.
  bool SimplifyCast(int i) {
    NodeDef& def = view_.node(i);
    if (view_.num_data_inputs(i) != 1) return false;
    const DataType src = TypeAttr(def, "SrcT"), dst = TypeAttr(def, "DstT");
    if (src == dst && src != DT_INVALID) {
      ReplaceWith(i, view_.input(i, 0), {}, "Cast to its own dtype");
      return false;
    }
    const int p = view_.producer(i, 0);
    if (p < 0 || view_.input(i, 0).index != 0) return false;
    const NodeDef& inner = view_.node(p);
    auto truncate = def.attr().find("Truncate");
    if (inner.op() != "Cast" || view_.num_data_inputs(p) != 1 || inner.device() != def.device() ||
        TypeAttr(inner, "DstT") != src || !IsLossless(TypeAttr(inner, "SrcT"), src) ||
        (truncate != def.attr().end() && truncate->second.b())) {
      return false;
    }
    const DataType first = TypeAttr(inner, "SrcT");
    const std::string inner_name = inner.name();
    const TensorId x = view_.input(p, 0);
    const std::vector<int> controls = ControlInputs(p);
    Rewire(i, 0, x);
    AddControls(i, controls);
    (*def.mutable_attr())["SrcT"].set_type(first);
    if (report_ != nullptr) {
      report_->changes.push_back(absl::StrCat("'", def.name(), "' (Cast) casts '", x.ToString(),
                                              "' from ", DataTypeString(first),
                                              " directly, not through '", inner_name, "'"));
    }
    RemoveIfUnused(p, def.name());
    return true;
  }

  GraphView& view_;
  const OptimizerOptions& options_;
  OptimizationReport::Pass* report_;
  // Decoded Consts of the view and the constants this pass added (node
  // maps: pointers to their values stay valid as they grow).
  absl::node_hash_map<int, Tensor> values_;
  absl::node_hash_map<std::string, AddedConst> added_;
  std::vector<std::string> added_order_;
};

// Points each entry of `merged` (removed node -> the node it was merged
// into) at the end of its chain: a chain of 10,000 Adds merges one into
// the next, and all of them live on in the last.
void ResolveChains(absl::flat_hash_map<std::string, std::string>* merged) {
  std::vector<std::string> keys;
  keys.reserve(merged->size());
  for (const auto& [from, to] : *merged) keys.push_back(from);
  for (const std::string& key : keys) {
    std::string root = merged->at(key);
    for (size_t hops = 0; hops <= merged->size(); ++hops) {
      auto it = merged->find(root);
      if (it == merged->end() || it->second == root) break;
      root = it->second;
    }
    // Path compression: the next walk through here is one step.
    std::string cur = key;
    for (size_t hops = 0; hops <= merged->size(); ++hops) {
      auto it = merged->find(cur);
      if (it == merged->end() || it->second == root) break;
      cur = std::exchange(it->second, root);
    }
  }
}

}  // namespace

absl::Status SimplifyArithmetic(GraphDef* graph, const OptimizerOptions& options,
                                OptimizationReport::Pass* report) {
  GR_ASSIGN_OR_RETURN(GraphView view, GraphView::Create(graph));
  GR_ASSIGN_OR_RETURN(std::vector<int> order, view.TopologicalOrder());
  Simplifier simplifier(&view, options, report);
  // Producers first: a chain folds into its last node in one sweep.
  for (int i : order) {
    if (!view.removed(i)) simplifier.Visit(i);
  }
  if (report != nullptr) ResolveChains(&report->merged_into);
  std::vector<NodeDef> added = simplifier.TakeAddedConsts();
  view.Compact();
  for (NodeDef& n : added) *graph->add_node() = std::move(n);
  return absl::OkStatus();
}

}  // namespace graphrun
