#include "graph/lower_functional.h"

#include <algorithm>
#include <deque>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/function_inliner.h"
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

class Lowerer : public NodeSink {
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

  std::string UniqueName(absl::string_view base) override {
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
    InlineSite site{n.name(), in.data, in.control, n.device(), &attrs};
    absl::StatusOr<InlinedFunction> body = InlineBody(*called.first, site, called.second);
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
    InlineSite cond_site{absl::StrCat(n.name(), "/cond"), merges, {}, n.device(),
                         &cond_fn->attr()};
    absl::StatusOr<InlinedFunction> c = InlineBody(*cond.first, cond_site, cond.second);
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
    InlineSite body_site{absl::StrCat(n.name(), "/body"), body_args, {}, n.device(),
                         &body_fn->attr()};
    absl::StatusOr<InlinedFunction> bo = InlineBody(*body.first, body_site, body.second);
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
    std::vector<InlinedFunction> results;
    for (const Branch& br : branches) {
      GR_ASSIGN_OR_RETURN(auto called, Call(br.fn->name(), chain));
      InlineSite site{absl::StrCat(n.name(), "/", br.name), br.args, {br.pivot},
                      n.device(), &br.fn->attr()};
      absl::StatusOr<InlinedFunction> r = InlineBody(*called.first, site, called.second);
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
      for (const InlinedFunction& r : results) m->add_input(r.outputs[j]);
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

  // Inlines `f` at `site`; the new nodes belong to `chain`.
  absl::StatusOr<InlinedFunction> InlineBody(const FunctionDef& f, const InlineSite& site,
                                             int chain) {
    current_chain_ = chain;
    return InlineFunctionBody(f, site, functions_, *options_.registry, this);
  }

  // NodeSink, for InlineFunctionBody.
  NodeDef* Add(NodeDef node) override {
    NodeDef& n = nodes_.emplace_back(std::move(node));
    chain_of_.push_back(current_chain_);
    return &n;
  }

  const LowerFunctionalOptions& options_;
  const GraphDef& graph_;
  FunctionMap functions_;
  // The output graph's nodes (deque: pointers stay valid as it grows), and
  // for each the chain of functions it was inlined from.
  std::deque<NodeDef> nodes_;
  std::deque<int> chain_of_;
  std::vector<std::vector<std::string>> chains_;
  absl::flat_hash_set<std::string> names_;
  int current_chain_ = 0;  // of the nodes InlineFunctionBody adds
};

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
