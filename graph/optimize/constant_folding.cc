// Constant folding: nodes computable before the step runs become Consts.
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "graph/attr_slice.h"
#include "graph/graph.h"
#include "graph/optimize/graph_view.h"
#include "graph/optimize/optimizer.h"
#include "graph/status_macros.h"

namespace graphrun {
namespace {

using optimize::GraphView;

bool IsShapeOp(absl::string_view op) { return op == "Shape" || op == "Size" || op == "Rank"; }

// The value of Shape/Size/Rank of a fully known shape, in `out_type`.
absl::StatusOr<Tensor> ShapeValue(absl::string_view op, const PartialShape& shape,
                                  DataType out_type) {
  std::vector<int64_t> values;
  if (op == "Rank") {
    values.push_back(shape.rank());
  } else if (op == "Size") {
    int64_t n = 1;
    for (int64_t d : shape.dims()) n *= d;
    values.push_back(n);
  } else {
    values = shape.dims();
  }
  TensorShape tshape;
  if (op == "Shape") tshape = TensorShape({static_cast<int64_t>(values.size())});
  if (out_type == DT_INT32) {
    std::vector<int32_t> v32;
    for (int64_t v : values) {
      if (v > INT32_MAX) return absl::OutOfRangeError("does not fit int32");
      v32.push_back(static_cast<int32_t>(v));
    }
    return Tensor::FromVector<int32_t>(v32, tshape);
  }
  if (out_type == DT_INT64) return Tensor::FromVector<int64_t>(values, tshape);
  return absl::UnimplementedError("out_type");
}

bool FullyDefined(const PartialShape& s) {
  if (s.unknown_rank()) return false;
  for (int64_t d : s.dims()) {
    if (d < 0) return false;
  }
  return true;
}

}  // namespace

absl::Status FoldConstants(GraphDef* graph, const OptimizerOptions& options,
                           OptimizationReport::Pass* report) {
  GR_ASSIGN_OR_RETURN(GraphView view, GraphView::Create(graph));
  GR_ASSIGN_OR_RETURN(std::vector<int> order, view.TopologicalOrder());
  // Decoded values of the Consts seen so far (original and folded).
  absl::flat_hash_map<int, Tensor> values;
  auto const_value = [&](int i) -> const Tensor* {
    if (view.node(i).op() != "Const") return nullptr;
    auto it = values.find(i);
    if (it != values.end()) return &it->second;
    auto v = view.node(i).attr().find("value");
    if (v == view.node(i).attr().end() || !v->second.has_tensor()) return nullptr;
    auto t = Tensor::FromProto(v->second.tensor());
    if (!t.ok()) return nullptr;
    return &values.emplace(i, *std::move(t)).first->second;
  };

  for (int i : order) {
    NodeDef& def = view.node(i);
    if (optimize::IsControlFlowOrPlumbing(def.op())) continue;
    const OpDef* op_def = options.registry->Find(def.op());
    if (op_def == nullptr || op_def->is_stateful) continue;
    std::vector<DataType> in_types, out_types;
    if (!ComputeArgTypes(*op_def, AttrSlice(&def.attr(), op_def), &in_types, &out_types).ok()) {
      continue;
    }
    // One output of a plain dtype: it becomes a Const of the same name.
    if (out_types.size() != 1 || IsRefType(out_types[0]) || out_types[0] == DT_VARIANT ||
        out_types[0] == DT_RESOURCE) {
      continue;
    }
    const int data_inputs = view.num_data_inputs(i);
    if (data_inputs != static_cast<int>(in_types.size())) continue;

    Tensor value;
    bool folded = false;
    if (IsShapeOp(def.op()) && data_inputs == 1) {
      const int p = view.producer(i, 0);
      const Tensor* in = const_value(p);
      auto it = options.shapes.find(view.node(p).name());
      const int k = view.input(i, 0).index;
      if (in == nullptr && it != options.shapes.end() && k < static_cast<int>(it->second.size()) &&
          FullyDefined(it->second[k])) {
        auto v = ShapeValue(def.op(), it->second[k], out_types[0]);
        if (v.ok()) {
          value = *std::move(v);
          folded = true;
          // The value no longer needs the input, but the node must still
          // run where (and whether) its input does: in its frame, and dead
          // when the input is.
          view.SetInput(i, 0, TensorId{view.node(p).name(), kControlSlot});
        }
      }
    }
    if (!folded) {
      if (!options.evaluate || data_inputs == 0) continue;
      std::vector<Tensor> inputs;
      bool all_const = true;
      for (int pos = 0; pos < data_inputs && all_const; ++pos) {
        const int p = view.producer(i, pos);
        const Tensor* t = const_value(p);
        // A multi-output producer is never a Const.
        if (t == nullptr || view.input(i, pos).index != 0) {
          all_const = false;
        } else {
          inputs.push_back(*t);
        }
      }
      if (!all_const) continue;
      auto out = options.evaluate(def, *op_def, std::move(inputs));
      // A node that fails here fails at run time too, where its error
      // names the step: leave it.
      if (!out.ok() || out->size() != 1 || !(*out)[0].IsInitialized()) continue;
      value = std::move((*out)[0]);
      if (static_cast<int64_t>(value.TotalBytes()) > options.max_constant_bytes) continue;
      // The inputs' control inputs move to the folded node; its data
      // inputs become control inputs where they carry frame or deadness
      // (a Const with control inputs of its own).
      for (int pos = 0; pos < data_inputs; ++pos) {
        const int p = view.producer(i, pos);
        for (int q = 0; q < view.num_inputs(p); ++q) {
          if (view.input(p, q).IsControl()) view.AddControlInput(i, view.producer(p, q));
        }
      }
      std::vector<int> controls;
      for (int pos = data_inputs; pos < view.num_inputs(i); ++pos) {
        controls.push_back(view.producer(i, pos));
      }
      view.TruncateInputs(i, 0);
      for (int c : controls) view.AddControlInput(i, c);
    }
    const std::string old_op = def.op();
    def.set_op("Const");
    google::protobuf::Map<std::string, AttrValue> attrs;
    attrs["dtype"].set_type(value.dtype());
    value.AsProtoTensorContent(attrs["value"].mutable_tensor());
    *def.mutable_attr() = std::move(attrs);
    values[i] = std::move(value);
    if (report != nullptr) {
      report->changes.push_back(absl::StrCat("folded '", def.name(), "' (", old_op, ")"));
    }
  }
  return absl::OkStatus();
}

}  // namespace graphrun
