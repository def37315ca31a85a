#include "graph/lower_functional.h"

#include <algorithm>
#include <deque>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "graph/attr_slice.h"
#include "graph/import.h"
#include "graph/status_macros.h"

namespace graphrun {
namespace {

constexpr absl::string_view kFunctionalOps[] = {
    "While", "StatelessWhile", "If",  "StatelessIf", "Case", "StatelessCase",
    "PartitionedCall", "StatefulPartitionedCall"};

bool IsWhile(absl::string_view op) { return op == "While" || op == "StatelessWhile"; }
bool IsIf(absl::string_view op) { return op == "If" || op == "StatelessIf"; }
bool IsCase(absl::string_view op) { return op == "Case" || op == "StatelessCase"; }

absl::Status Invalid(absl::string_view what) {
  return absl::InvalidArgumentError(what);
}

// Adds `context: ` in front of an error's message, keeping its code.
absl::Status WithContext(const absl::Status& s, absl::string_view context) {
  return absl::Status(s.code(), absl::StrCat(context, ": ", s.message()));
}

std::string TensorRef(absl::string_view node, int index) {
  return index == 0 ? std::string(node) : absl::StrCat(node, ":", index);
}

void SetType(NodeDef* n, const char* attr, DataType t) {
  (*n->mutable_attr())[attr].set_type(t);
}
void SetTypes(NodeDef* n, const char* attr, const std::vector<DataType>& ts) {
  AttrValue::ListValue* list = (*n->mutable_attr())[attr].mutable_list();
  for (DataType t : ts) list->add_type(t);
}

// A node's data inputs ("x", "x:1") and control inputs (node names).
struct NodeInputs {
  std::vector<std::string> data;
  std::vector<std::string> control;
};
NodeInputs InputsOf(const NodeDef& n) {
  NodeInputs in;
  for (const std::string& s : n.input()) {
    if (absl::StartsWith(s, "^")) {
      in.control.push_back(s.substr(1));
    } else {
      in.data.push_back(s);
    }
  }
  return in;
}

absl::StatusOr<std::vector<DataType>> TypeListAttr(const NodeDef& n,
                                                   const char* attr) {
  auto it = n.attr().find(attr);
  if (it == n.attr().end()) return std::vector<DataType>{};
  if (it->second.value_case() != AttrValue::kList) {
    return Invalid(absl::StrCat("attr '", attr, "' must be a list(type)"));
  }
  std::vector<DataType> out;
  for (int t : it->second.list().type()) out.push_back(static_cast<DataType>(t));
  return out;
}

absl::StatusOr<const NameAttrList*> FuncAttr(const NodeDef& n, const char* attr) {
  auto it = n.attr().find(attr);
  if (it == n.attr().end() || it->second.value_case() != AttrValue::kFunc) {
    return Invalid(absl::StrCat("attr '", attr, "' must name a function"));
  }
  return &it->second.func();
}

// The element type of a signature argument; `attrs` bind its type attr.
absl::StatusOr<DataType> ArgType(const proto::OpDef::ArgDef& arg,
                                 const AttrMap& attrs) {
  if (!arg.number_attr().empty() || !arg.type_list_attr().empty()) {
    return absl::UnimplementedError(absl::StrCat(
        "argument '", arg.name(), "' is a list of tensors; graphrun inlines "
        "functions whose arguments and results are single tensors"));
  }
  if (arg.type() != DT_INVALID) return arg.type();
  auto it = attrs.find(arg.type_attr());
  if (arg.type_attr().empty() || it == attrs.end() ||
      it->second.value_case() != AttrValue::kType) {
    return Invalid(absl::StrCat("argument '", arg.name(), "' has type attr '",
                                arg.type_attr(), "', which the call does not set"));
  }
  return it->second.type();
}

class Lowerer {
 public:
  Lowerer(const GraphDef& graph, const LowerFunctionalOptions& options)
      : options_(options), graph_(graph) {
    for (const FunctionDef& f : graph.library().function()) {
      functions_.emplace(f.signature().name(), &f);
    }
    chains_.emplace_back();  // chain 0: the graph itself
    for (const NodeDef& n : graph.node()) {
      nodes_.push_back(n);
      chain_of_.push_back(0);
      names_.insert(n.name());
    }
  }

  absl::StatusOr<GraphDef> Run() {
    for (size_t i = 0; i < nodes_.size(); ++i) {
      if (static_cast<int64_t>(nodes_.size()) > options_.max_nodes) {
        return Invalid(absl::StrCat(
            "inlining functions grows the graph past ", options_.max_nodes,
            " nodes (at ", NodeLabel(nodes_[i]), ")"));
      }
      if (!IsFunctionalOp(nodes_[i].op()) && !functions_.contains(nodes_[i].op())) {
        continue;
      }
      const NodeDef call = nodes_[i];
      const int chain = chain_of_[i];
      absl::StatusOr<NodeDef> replacement = Expand(call, chain);
      if (!replacement.ok()) {
        std::string label = NodeLabel(call);
        if (!chains_[chain].empty()) {
          absl::StrAppend(&label, " in function '",
                          absl::StrJoin(chains_[chain], "' > '"), "'");
        }
        return WithContext(replacement.status(), label);
      }
      nodes_[i] = *std::move(replacement);
    }
    if (static_cast<int64_t>(nodes_.size()) > options_.max_nodes) {
      return Invalid(absl::StrCat("inlining functions grows the graph past ",
                                  options_.max_nodes, " nodes"));
    }
    GraphDef out = graph_;
    out.clear_node();
    for (NodeDef& n : nodes_) *out.add_node() = std::move(n);
    return out;
  }

 private:
  // One function's results once inlined.
  struct Inlined {
    std::vector<std::string> outputs;          // tensor refs, one per result
    std::vector<DataType> output_types;
    std::vector<std::string> control_outputs;  // node names
  };
  // Where a function body goes.
  struct Site {
    std::string prefix;                       // body node "n" -> "prefix/n"
    std::vector<std::string> args;            // one tensor ref per argument
    std::vector<std::string> control_inputs;  // gate the whole body
    std::string device;                       // for body nodes without one
    const AttrMap* attrs = nullptr;           // binds placeholders, type attrs
    int chain = 0;                            // chain of the body's nodes
  };
  // Adds nodes named "<base>/<suffix>" on one device and chain.
  struct Builder {
    Lowerer* lowerer;
    std::string base;
    std::string device;
    int chain;
    NodeDef* Add(absl::string_view suffix, absl::string_view op) {
      return lowerer->Emit(lowerer->UniqueName(absl::StrCat(base, "/", suffix)),
                           op, device, chain);
    }
  };

  std::string UniqueName(absl::string_view base) {
    std::string name(base);
    for (int k = 1; names_.contains(name); ++k) name = absl::StrCat(base, "_", k);
    names_.insert(name);
    return name;
  }

  NodeDef* Emit(std::string name, absl::string_view op, const std::string& device,
                int chain) {
    NodeDef& n = nodes_.emplace_back();
    chain_of_.push_back(chain);
    n.set_name(std::move(name));
    n.set_op(std::string(op));
    n.set_device(device);
    return &n;
  }

  // The function `name`, entered from `chain`: the new chain's index, or an
  // error if the function is missing or already on the chain.
  absl::StatusOr<std::pair<const FunctionDef*, int>> Call(const std::string& name,
                                                          int chain) {
    auto f = functions_.find(name);
    if (f == functions_.end()) {
      return Invalid(absl::StrCat("function '", name,
                                  "' is not in the graph's function library"));
    }
    std::vector<std::string> path = chains_[chain];
    auto self = std::find(path.begin(), path.end(), name);
    if (self != path.end()) {
      std::vector<std::string> cycle(self, path.end());
      cycle.push_back(name);
      return Invalid(absl::StrCat("function '", name, "' calls itself (",
                                  absl::StrJoin(cycle, " -> "), ")"));
    }
    path.push_back(name);
    chains_.push_back(std::move(path));
    return std::make_pair(f->second, static_cast<int>(chains_.size()) - 1);
  }

  absl::StatusOr<NodeDef> Expand(const NodeDef& n, int chain) {
    if (IsWhile(n.op())) return ExpandWhile(n, chain);
    if (IsIf(n.op())) return ExpandIf(n, chain);
    if (IsCase(n.op())) return ExpandCase(n, chain);
    if (functions_.contains(n.op())) return ExpandCall(n, n.op(), n.attr(), chain);
    GR_ASSIGN_OR_RETURN(const NameAttrList* f, FuncAttr(n, "f"));
    return ExpandCall(n, f->name(), f->attr(), chain);
  }

  // The node that takes the rewritten node's name: IdentityN over the
  // results, or a NoOp when there are none.
  static NodeDef Replacement(const NodeDef& n, const std::vector<std::string>& outputs,
                             const std::vector<DataType>& types,
                             const std::vector<std::string>& control) {
    NodeDef r;
    r.set_name(n.name());
    r.set_device(n.device());
    r.set_op(outputs.empty() ? "NoOp" : "IdentityN");
    for (const std::string& o : outputs) r.add_input(o);
    for (const std::string& c : control) r.add_input(absl::StrCat("^", c));
    if (!outputs.empty()) SetTypes(&r, "T", types);
    *r.mutable_experimental_debug_info() = n.experimental_debug_info();
    return r;
  }

  absl::StatusOr<NodeDef> ExpandCall(const NodeDef& n, const std::string& fname,
                                     const AttrMap& attrs, int chain) {
    GR_ASSIGN_OR_RETURN(auto called, Call(fname, chain));
    const NodeInputs in = InputsOf(n);
    Site site{n.name(), in.data, in.control, n.device(), &attrs, called.second};
    absl::StatusOr<Inlined> body = InlineBody(*called.first, site);
    if (!body.ok()) return body.status();
    if (n.op() != fname) {  // PartitionedCall: Tout must match the results
      GR_ASSIGN_OR_RETURN(std::vector<DataType> tout, TypeListAttr(n, "Tout"));
      if (tout != body->output_types) {
        return Invalid(absl::StrCat("attr 'Tout' lists ", tout.size(),
                                    " types that differ from the results of function '",
                                    fname, "'"));
      }
    }
    return Replacement(n, body->outputs, body->output_types, body->control_outputs);
  }

  absl::StatusOr<NodeDef> ExpandWhile(const NodeDef& n, int chain) {
    GR_ASSIGN_OR_RETURN(std::vector<DataType> types, TypeListAttr(n, "T"));
    const NodeInputs in = InputsOf(n);
    if (in.data.size() != types.size()) {
      return Invalid(absl::StrCat("has ", in.data.size(), " data inputs but attr 'T' lists ",
                                  types.size(), " types"));
    }
    if (types.empty()) return Invalid("a While loop needs at least one loop variable");
    GR_ASSIGN_OR_RETURN(const NameAttrList* cond_fn, FuncAttr(n, "cond"));
    GR_ASSIGN_OR_RETURN(const NameAttrList* body_fn, FuncAttr(n, "body"));
    GR_ASSIGN_OR_RETURN(auto cond, Call(cond_fn->name(), chain));
    GR_ASSIGN_OR_RETURN(auto body, Call(body_fn->name(), chain));
    int64_t parallel = 10;
    if (auto it = n.attr().find("parallel_iterations"); it != n.attr().end()) {
      parallel = it->second.i();
    }
    const size_t num = types.size();
    Builder b{this, n.name(), n.device(), chain};

    std::string gate;  // the While's control inputs, gathered for the Enters
    if (!in.control.empty()) {
      NodeDef* noop = b.Add("control_inputs", "NoOp");
      for (const std::string& c : in.control) noop->add_input(absl::StrCat("^", c));
      gate = noop->name();
    }
    std::vector<std::string> merges(num), next(num), switches(num), exits(num);
    for (size_t i = 0; i < num; ++i) {
      next[i] = UniqueName(absl::StrCat(n.name(), "/next_iteration_", i));
    }
    for (size_t i = 0; i < num; ++i) {
      NodeDef* enter = b.Add(absl::StrCat("enter_", i), "Enter");
      enter->add_input(in.data[i]);
      if (!gate.empty()) enter->add_input(absl::StrCat("^", gate));
      SetType(enter, "T", types[i]);
      (*enter->mutable_attr())["frame_name"].set_s(n.name());
      (*enter->mutable_attr())["is_constant"].set_b(false);
      (*enter->mutable_attr())["parallel_iterations"].set_i(parallel);
      NodeDef* merge = b.Add(absl::StrCat("merge_", i), "Merge");
      merge->add_input(enter->name());
      merge->add_input(next[i]);
      SetType(merge, "T", types[i]);
      (*merge->mutable_attr())["N"].set_i(2);
      merges[i] = merge->name();
    }
    Site cond_site{absl::StrCat(n.name(), "/cond"), merges, {}, n.device(),
                   &cond_fn->attr(), cond.second};
    absl::StatusOr<Inlined> c = InlineBody(*cond.first, cond_site);
    if (!c.ok()) return c.status();
    if (c->outputs.size() != 1 || c->output_types[0] != DT_BOOL) {
      return Invalid(absl::StrCat(
          "cond function '", cond_fn->name(), "' must return a single bool, not ",
          c->outputs.size() == 1 ? DataTypeString(c->output_types[0])
                                 : absl::StrCat(c->outputs.size(), " results")));
    }
    NodeDef* loop_cond = b.Add("loop_cond", "LoopCond");
    loop_cond->add_input(c->outputs[0]);
    for (const std::string& ctl : c->control_outputs) loop_cond->add_input("^" + ctl);
    for (size_t i = 0; i < num; ++i) {
      NodeDef* sw = b.Add(absl::StrCat("switch_", i), "Switch");
      sw->add_input(merges[i]);
      sw->add_input(loop_cond->name());
      SetType(sw, "T", types[i]);
      switches[i] = sw->name();
      NodeDef* exit = b.Add(absl::StrCat("exit_", i), "Exit");
      exit->add_input(sw->name());
      SetType(exit, "T", types[i]);
      exits[i] = exit->name();
    }
    std::vector<std::string> body_args;
    for (const std::string& s : switches) body_args.push_back(TensorRef(s, 1));
    Site body_site{absl::StrCat(n.name(), "/body"), body_args, {}, n.device(),
                   &body_fn->attr(), body.second};
    absl::StatusOr<Inlined> bo = InlineBody(*body.first, body_site);
    if (!bo.ok()) return bo.status();
    if (bo->output_types != types) {
      return Invalid(absl::StrCat("body function '", body_fn->name(), "' returns ",
                                  bo->outputs.size(), " results whose types differ from "
                                  "the loop variables' (attr 'T')"));
    }
    for (size_t i = 0; i < num; ++i) {
      NodeDef* ni = Emit(next[i], "NextIteration", n.device(), chain);
      ni->add_input(bo->outputs[i]);
      for (const std::string& ctl : bo->control_outputs) ni->add_input("^" + ctl);
      SetType(ni, "T", types[i]);
    }
    return Replacement(n, exits, types, {});
  }

  absl::StatusOr<NodeDef> ExpandIf(const NodeDef& n, int chain) {
    const NodeInputs in = InputsOf(n);
    if (in.data.empty()) return Invalid("has no predicate input");
    GR_ASSIGN_OR_RETURN(std::vector<DataType> tin, TypeListAttr(n, "Tin"));
    GR_ASSIGN_OR_RETURN(std::vector<DataType> tout, TypeListAttr(n, "Tout"));
    if (in.data.size() != tin.size() + 1) {
      return Invalid(absl::StrCat("has ", in.data.size() - 1,
                                  " inputs after the predicate but attr 'Tin' lists ",
                                  tin.size(), " types"));
    }
    if (auto t = n.attr().find("Tcond"); t != n.attr().end() && t->second.type() != DT_BOOL) {
      return absl::UnimplementedError(absl::StrCat(
          "the predicate is ", DataTypeString(t->second.type()),
          "; graphrun lowers If only on a bool predicate"));
    }
    GR_ASSIGN_OR_RETURN(const NameAttrList* then_fn, FuncAttr(n, "then_branch"));
    GR_ASSIGN_OR_RETURN(const NameAttrList* else_fn, FuncAttr(n, "else_branch"));
    Builder b{this, n.name(), n.device(), chain};
    const std::string& pred = in.data[0];
    NodeDef* switch_pred = b.Add("switch_pred", "Switch");
    switch_pred->add_input(pred);
    switch_pred->add_input(pred);
    for (const std::string& c : in.control) switch_pred->add_input("^" + c);
    SetType(switch_pred, "T", DT_BOOL);
    const std::string sp = switch_pred->name();
    std::vector<std::string> pivots;
    for (int side : {1, 0}) {
      NodeDef* pivot = b.Add(side == 1 ? "pivot_t" : "pivot_f", "Identity");
      pivot->add_input(TensorRef(sp, side));
      SetType(pivot, "T", DT_BOOL);
      pivots.push_back(pivot->name());
    }
    std::vector<std::string> then_args, else_args;
    for (size_t i = 0; i < tin.size(); ++i) {
      NodeDef* sw = b.Add(absl::StrCat("switch_", i), "Switch");
      sw->add_input(in.data[i + 1]);
      sw->add_input(pred);
      SetType(sw, "T", tin[i]);
      then_args.push_back(TensorRef(sw->name(), 1));
      else_args.push_back(sw->name());
    }
    std::vector<Branch> branches = {{then_fn, then_args, pivots[0], "then"},
                                    {else_fn, else_args, pivots[1], "else"}};
    return FinishBranches(n, chain, tout, branches);
  }

  // Case: branch k runs when branch_index == k, the last one otherwise. A
  // chain of Switches on (index == k) passes the inputs down until taken.
  absl::StatusOr<NodeDef> ExpandCase(const NodeDef& n, int chain) {
    const NodeInputs in = InputsOf(n);
    if (in.data.empty()) return Invalid("has no branch_index input");
    GR_ASSIGN_OR_RETURN(std::vector<DataType> tin, TypeListAttr(n, "Tin"));
    GR_ASSIGN_OR_RETURN(std::vector<DataType> tout, TypeListAttr(n, "Tout"));
    if (in.data.size() != tin.size() + 1) {
      return Invalid(absl::StrCat("has ", in.data.size() - 1,
                                  " inputs after branch_index but attr 'Tin' lists ",
                                  tin.size(), " types"));
    }
    auto fns = n.attr().find("branches");
    if (fns == n.attr().end() || fns->second.list().func_size() == 0) {
      return Invalid("attr 'branches' must list at least one function");
    }
    const int num = fns->second.list().func_size();
    Builder b{this, n.name(), n.device(), chain};
    NodeDef* index = b.Add("branch_index", "Identity");
    index->add_input(in.data[0]);
    for (const std::string& c : in.control) index->add_input("^" + c);
    SetType(index, "T", DT_INT32);
    std::vector<std::string> carried(in.data.begin() + 1, in.data.end());
    std::string pred_carry;  // live until a branch is taken
    std::vector<Branch> branches;
    for (int k = 0; k + 1 < num; ++k) {
      NodeDef* value = b.Add(absl::StrCat("index_", k), "Const");
      value->add_input(absl::StrCat("^", index->name()));
      SetType(value, "dtype", DT_INT32);
      TensorProto* t = (*value->mutable_attr())["value"].mutable_tensor();
      t->set_dtype(DT_INT32);
      t->add_int_val(k);
      NodeDef* eq = b.Add(absl::StrCat("is_", k), "Equal");
      eq->add_input(index->name());
      eq->add_input(value->name());
      SetType(eq, "T", DT_INT32);
      NodeDef* sp = b.Add(absl::StrCat("switch_pred_", k), "Switch");
      sp->add_input(pred_carry.empty() ? eq->name() : pred_carry);
      sp->add_input(eq->name());
      SetType(sp, "T", DT_BOOL);
      pred_carry = sp->name();  // output 0: not taken here
      NodeDef* pivot = b.Add(absl::StrCat("pivot_", k), "Identity");
      pivot->add_input(TensorRef(sp->name(), 1));
      SetType(pivot, "T", DT_BOOL);
      std::vector<std::string> args;
      for (size_t i = 0; i < tin.size(); ++i) {
        NodeDef* sw = b.Add(absl::StrCat("switch_", k, "_", i), "Switch");
        sw->add_input(carried[i]);
        sw->add_input(eq->name());
        SetType(sw, "T", tin[i]);
        args.push_back(TensorRef(sw->name(), 1));
        carried[i] = sw->name();
      }
      branches.push_back({&fns->second.list().func(k), args, pivot->name(),
                          absl::StrCat("branch_", k)});
    }
    NodeDef* last = b.Add(absl::StrCat("pivot_", num - 1), "Identity");
    last->add_input(pred_carry.empty() ? index->name() : pred_carry);
    SetType(last, "T", pred_carry.empty() ? DT_INT32 : DT_BOOL);
    branches.push_back({&fns->second.list().func(num - 1), carried, last->name(),
                        absl::StrCat("branch_", num - 1),
                        pred_carry.empty() ? DT_INT32 : DT_BOOL});
    return FinishBranches(n, chain, tout, branches);
  }

  struct Branch {
    const NameAttrList* fn;
    std::vector<std::string> args;
    std::string pivot;  // live exactly when the branch runs
    std::string name;
    DataType pivot_type = DT_BOOL;
  };

  // Inlines each branch behind its pivot and merges the results.
  absl::StatusOr<NodeDef> FinishBranches(const NodeDef& n, int chain,
                                         const std::vector<DataType>& tout,
                                         const std::vector<Branch>& branches) {
    Builder b{this, n.name(), n.device(), chain};
    std::vector<Inlined> results;
    for (const Branch& br : branches) {
      GR_ASSIGN_OR_RETURN(auto called, Call(br.fn->name(), chain));
      Site site{absl::StrCat(n.name(), "/", br.name), br.args, {br.pivot}, n.device(),
                &br.fn->attr(), called.second};
      absl::StatusOr<Inlined> r = InlineBody(*called.first, site);
      if (!r.ok()) return r.status();
      if (r->output_types != tout) {
        return Invalid(absl::StrCat("branch function '", br.fn->name(), "' returns ",
                                    r->outputs.size(), " results whose types differ "
                                    "from attr 'Tout'"));
      }
      results.push_back(*std::move(r));
    }
    const int num = static_cast<int>(branches.size());
    std::vector<std::string> merges;
    for (size_t j = 0; j < tout.size(); ++j) {
      NodeDef* m = b.Add(absl::StrCat("merge_", j), "Merge");
      for (const Inlined& r : results) m->add_input(r.outputs[j]);
      SetType(m, "T", tout[j]);
      (*m->mutable_attr())["N"].set_i(num);
      merges.push_back(m->name());
    }
    // Runs once whichever branch ran, after that branch's control outputs.
    NodeDef* executed = b.Add("branch_executed", "Merge");
    for (int k = 0; k < num; ++k) {
      std::string done = branches[k].pivot;
      if (!results[k].control_outputs.empty()) {
        NodeDef* d = b.Add(absl::StrCat(branches[k].name, "_done"), "Identity");
        d->add_input(done);
        for (const std::string& c : results[k].control_outputs) d->add_input("^" + c);
        SetType(d, "T", branches[k].pivot_type);
        done = d->name();
      }
      executed->add_input(done);
    }
    SetType(executed, "T", branches[0].pivot_type);
    (*executed->mutable_attr())["N"].set_i(num);
    return Replacement(n, merges, tout, {executed->name()});
  }

  // Output arg name and tensor count of each output of a body node's op.
  using OutputLayout = std::vector<std::pair<std::string, int64_t>>;
  absl::StatusOr<OutputLayout> LayoutOf(const NodeDef& n) const;

  // Emits `f`'s body at `site`: Identity per argument, the body nodes
  // renamed, Identity per result. Errors name the function.
  absl::StatusOr<Inlined> InlineBody(const FunctionDef& f, const Site& site);
  absl::StatusOr<Inlined> InlineBodyUnlabelled(const FunctionDef& f, const Site& site);

  const LowerFunctionalOptions& options_;
  const GraphDef& graph_;
  absl::flat_hash_map<std::string, const FunctionDef*> functions_;
  // The output graph's nodes (deque: pointers stay valid as it grows), and
  // for each the chain of functions it was inlined from.
  std::deque<NodeDef> nodes_;
  std::deque<int> chain_of_;
  std::vector<std::vector<std::string>> chains_;
  absl::flat_hash_set<std::string> names_;
};

// Binds attr placeholders ("$T" in a polymorphic body) to the call's attrs.
absl::Status BindPlaceholders(NodeDef* n, const AttrMap& attrs) {
  for (auto& [key, value] : *n->mutable_attr()) {
    if (value.value_case() != AttrValue::kPlaceholder) continue;
    auto it = attrs.find(value.placeholder());
    if (it == attrs.end()) {
      return Invalid(absl::StrCat("attr '", key, "' is the placeholder '",
                                  value.placeholder(), "', which the call does not bind"));
    }
    value = it->second;
  }
  return absl::OkStatus();
}

bool AllDigits(absl::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(),
                                   [](char c) { return absl::ascii_isdigit(c); });
}

absl::StatusOr<Lowerer::OutputLayout> Lowerer::LayoutOf(const NodeDef& n) const {
  OutputLayout layout;
  if (auto f = functions_.find(n.op()); f != functions_.end()) {
    for (const auto& arg : f->second->signature().output_arg()) {
      if (!arg.number_attr().empty() || !arg.type_list_attr().empty()) {
        return absl::UnimplementedError(absl::StrCat(
            "function '", n.op(), "' returns a list of tensors ('", arg.name(), "')"));
      }
      layout.emplace_back(arg.name(), 1);
    }
    return layout;
  }
  const OpDef* op = options_.registry->Find(n.op());
  if (op == nullptr) {
    return Invalid(absl::StrCat("Op type not registered '", n.op(),
                                "': graphrun has no definition of this op"));
  }
  AttrSlice attrs(&n.attr(), op);
  for (const ArgDef& a : op->outputs) {
    int64_t count = 1;
    if (!a.number_attr.empty()) {
      GR_RETURN_IF_ERROR(attrs.Get(a.number_attr, &count));
    } else if (!a.type_list_attr.empty()) {
      std::vector<DataType> types;
      GR_RETURN_IF_ERROR(attrs.Get(a.type_list_attr, &types));
      count = static_cast<int64_t>(types.size());
    }
    layout.emplace_back(a.name, count);
  }
  return layout;
}

absl::StatusOr<Lowerer::Inlined> Lowerer::InlineBody(const FunctionDef& f,
                                                     const Site& site) {
  absl::StatusOr<Inlined> out = InlineBodyUnlabelled(f, site);
  if (!out.ok()) {
    return WithContext(out.status(),
                       absl::StrCat("function '", f.signature().name(), "'"));
  }
  return out;
}

absl::StatusOr<Lowerer::Inlined> Lowerer::InlineBodyUnlabelled(const FunctionDef& f,
                                                               const Site& site) {
  const proto::OpDef& sig = f.signature();
  const AttrMap& attrs = *site.attrs;
  if (static_cast<int>(site.args.size()) != sig.input_arg_size()) {
    return Invalid(absl::StrCat("takes ", sig.input_arg_size(), " arguments but is given ",
                                site.args.size()));
  }
  auto add = [&](absl::string_view suffix, absl::string_view op) {
    return Emit(UniqueName(absl::StrCat(site.prefix, "/", suffix)), op, site.device,
                site.chain);
  };
  // The gate every argument and every input-less body node waits for.
  std::string gate;
  if (site.control_inputs.size() == 1) {
    gate = site.control_inputs[0];
  } else if (site.control_inputs.size() > 1) {
    NodeDef* noop = add("input_control_node", "NoOp");
    for (const std::string& c : site.control_inputs) noop->add_input("^" + c);
    gate = noop->name();
  }
  absl::flat_hash_map<std::string, std::string> arg_nodes;
  std::string first_arg;
  for (int i = 0; i < sig.input_arg_size(); ++i) {
    const auto& arg = sig.input_arg(i);
    GR_ASSIGN_OR_RETURN(DataType type, ArgType(arg, attrs));
    NodeDef* id = add(absl::StrCat("input/", arg.name()), "Identity");
    id->add_input(site.args[i]);
    if (!gate.empty()) id->add_input("^" + gate);
    SetType(id, "T", type);
    if (!arg_nodes.emplace(arg.name(), id->name()).second) {
      return Invalid(absl::StrCat("two arguments are named '", arg.name(), "'"));
    }
    if (first_arg.empty()) first_arg = id->name();
  }
  // Constants and other source nodes join the call's frame or branch
  // through the gate, else through the first argument.
  const std::string source_gate = gate.empty() ? first_arg : gate;

  std::vector<NodeDef> body;
  std::vector<OutputLayout> layouts;
  absl::flat_hash_map<std::string, int> index;
  for (const NodeDef& n : f.node_def()) {
    if (!index.emplace(n.name(), static_cast<int>(body.size())).second) {
      return Invalid(absl::StrCat("two body nodes are named '", n.name(), "'"));
    }
    NodeDef copy = n;
    absl::Status bound = BindPlaceholders(&copy, attrs);
    if (!bound.ok()) return WithContext(bound, NodeLabel(n));
    absl::StatusOr<OutputLayout> layout = LayoutOf(copy);
    if (!layout.ok()) return WithContext(layout.status(), NodeLabel(n));
    body.push_back(std::move(copy));
    layouts.push_back(*std::move(layout));
  }
  std::vector<std::string> names;
  for (const NodeDef& n : body) {
    names.push_back(UniqueName(absl::StrCat(site.prefix, "/", n.name())));
  }

  // "arg", "node:out:k" and "^node" -> graph references.
  auto translate = [&](const std::string& ref) -> absl::StatusOr<std::string> {
    const bool control = absl::StartsWith(ref, "^");
    const std::vector<std::string> parts =
        absl::StrSplit(control ? absl::string_view(ref).substr(1) : ref, ':');
    auto unknown = [&] {
      return Invalid(absl::StrCat("input \"", ref,
                                  "\" names no node or argument of the function"));
    };
    if (auto a = arg_nodes.find(parts[0]); a != arg_nodes.end()) {
      if (control) return "^" + a->second;
      if (parts.size() == 1 || (parts.size() == 2 && parts[1] == "0")) return a->second;
      return Invalid(absl::StrCat("input \"", ref, "\": argument '", parts[0],
                                  "' is a single tensor"));
    }
    auto it = index.find(parts[0]);
    if (it == index.end()) return unknown();
    const std::string& target = names[it->second];
    if (control) return "^" + target;
    if (parts.size() == 1) return target;
    int k = 0;
    if (parts.size() == 2 && AllDigits(parts[1]) && absl::SimpleAtoi(parts[1], &k)) {
      return TensorRef(target, k);  // GraphDef syntax "node:k"
    }
    if (parts.size() > 3 || (parts.size() == 3 && (!AllDigits(parts[2]) ||
                                                    !absl::SimpleAtoi(parts[2], &k)))) {
      return Invalid(absl::StrCat("malformed input \"", ref, "\""));
    }
    int64_t offset = 0;
    for (const auto& [name, count] : layouts[it->second]) {
      if (name == parts[1]) {
        if (k >= count) {
          return Invalid(absl::StrCat("input \"", ref, "\": output '", name, "' of ",
                                      NodeLabel(f.node_def(it->second)), " has ", count,
                                      " tensors"));
        }
        return TensorRef(target, static_cast<int>(offset + k));
      }
      offset += count;
    }
    return Invalid(absl::StrCat("input \"", ref, "\": ", NodeLabel(f.node_def(it->second)),
                                " has no output named '", parts[1], "'"));
  };

  for (size_t i = 0; i < body.size(); ++i) {
    NodeDef& n = body[i];
    const std::vector<std::string> inputs(n.input().begin(), n.input().end());
    n.clear_input();
    for (const std::string& ref : inputs) {
      absl::StatusOr<std::string> t = translate(ref);
      if (!t.ok()) return WithContext(t.status(), NodeLabel(n));
      n.add_input(*std::move(t));
    }
    if (n.input_size() == 0 && !source_gate.empty()) n.add_input("^" + source_gate);
    n.set_name(names[i]);
    if (n.device().empty()) n.set_device(site.device);
    if (auto cls = n.mutable_attr()->find("_class"); cls != n.mutable_attr()->end()) {
      AttrValue::ListValue kept;
      for (const std::string& s : cls->second.list().s()) {
        if (!absl::StartsWith(s, "loc:@")) {
          kept.add_s(s);
        } else if (auto t = index.find(s.substr(5)); t != index.end()) {
          kept.add_s("loc:@" + names[t->second]);
        }
      }
      if (kept.s_size() == 0) {
        n.mutable_attr()->erase(cls);
      } else {
        *cls->second.mutable_list() = std::move(kept);
      }
    }
    nodes_.push_back(std::move(n));
    chain_of_.push_back(site.chain);
  }

  Inlined out;
  for (const auto& arg : sig.output_arg()) {
    GR_ASSIGN_OR_RETURN(DataType type, ArgType(arg, attrs));
    auto ret = f.ret().find(arg.name());
    if (ret == f.ret().end()) {
      return Invalid(absl::StrCat("result '", arg.name(), "' has no entry in ret"));
    }
    absl::StatusOr<std::string> value = translate(ret->second);
    if (!value.ok()) return WithContext(value.status(), absl::StrCat("ret '", arg.name(), "'"));
    NodeDef* id = add(absl::StrCat("output/", arg.name()), "Identity");
    id->add_input(*value);
    SetType(id, "T", type);
    out.outputs.push_back(id->name());
    out.output_types.push_back(type);
  }
  // Control outputs in signature order, then any others by name.
  std::vector<std::string> keys(sig.control_output().begin(), sig.control_output().end());
  std::vector<std::string> rest;
  for (const auto& [key, node] : f.control_ret()) {
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) rest.push_back(key);
  }
  std::sort(rest.begin(), rest.end());
  keys.insert(keys.end(), rest.begin(), rest.end());
  for (const std::string& key : keys) {
    auto c = f.control_ret().find(key);
    if (c == f.control_ret().end()) continue;
    auto it = index.find(c->second);
    if (it == index.end()) {
      return Invalid(absl::StrCat("control_ret '", key, "' names '", c->second,
                                  "', which is not a body node"));
    }
    out.control_outputs.push_back(names[it->second]);
  }
  return out;
}

}  // namespace

bool IsFunctionalOp(absl::string_view op) {
  for (absl::string_view f : kFunctionalOps) {
    if (op == f) return true;
  }
  return false;
}

bool NeedsLowering(const GraphDef& graph_def) {
  absl::flat_hash_set<absl::string_view> functions;
  for (const FunctionDef& f : graph_def.library().function()) {
    functions.insert(f.signature().name());
  }
  for (const NodeDef& n : graph_def.node()) {
    if (IsFunctionalOp(n.op()) || functions.contains(n.op())) return true;
  }
  return false;
}

absl::StatusOr<GraphDef> LowerFunctionalOps(const GraphDef& graph_def,
                                            const LowerFunctionalOptions& options) {
  return Lowerer(graph_def, options).Run();
}

std::vector<const FunctionDef*> ReachableFunctions(const GraphDef& graph_def) {
  absl::flat_hash_map<std::string, const FunctionDef*> library;
  for (const FunctionDef& f : graph_def.library().function()) {
    library.emplace(f.signature().name(), &f);
  }
  std::vector<const FunctionDef*> found;
  absl::flat_hash_set<std::string> seen;
  auto use = [&](const std::string& name) {
    auto it = library.find(name);
    if (it != library.end() && seen.insert(name).second) found.push_back(it->second);
  };
  auto scan = [&](const NodeDef& n) {
    use(n.op());
    // Attrs by name, so the order found does not depend on map order.
    std::vector<std::string> keys;
    for (const auto& [key, value] : n.attr()) keys.push_back(key);
    std::sort(keys.begin(), keys.end());
    for (const std::string& key : keys) {
      const AttrValue& value = n.attr().at(key);
      if (value.value_case() == AttrValue::kFunc) use(value.func().name());
      for (const NameAttrList& f : value.list().func()) use(f.name());
    }
  };
  for (const NodeDef& n : graph_def.node()) scan(n);
  for (size_t i = 0; i < found.size(); ++i) {
    for (const NodeDef& n : found[i]->node_def()) scan(n);
  }
  return found;
}

}  // namespace graphrun
