// Batch-norm folding: an inference graph's per-channel scale and shift
// after a convolution or a dense layer (Keras freezes BatchNormalization
// into Mul and AddV2 by constants) move into the layer's weights and bias.
//
//   Mul(Conv2D(x, W), m)            -> Conv2D(x, W*m)
//   Mul(BiasAdd(Conv2D(x, W), b), m) -> BiasAdd(Conv2D(x, W*m), b*m)
//   AddV2(BiasAdd(conv, b), a)       -> BiasAdd(conv, b+a)
//   AddV2(conv, a) / Sub(conv, a)    -> BiasAdd(conv, a) / BiasAdd(conv, -a)
//
// for Conv2D, DepthwiseConv2dNative (NHWC) and MatMul (not transposing b),
// float32, m and a constants with one value per output channel (or one in
// all). The rewritten nodes keep their names; new weights are new Consts.
#include <algorithm>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/optimize/graph_view.h"
#include "graph/optimize/optimizer.h"
#include "graph/status_macros.h"

namespace graphrun {
namespace {

using optimize::GraphView;

// The value of a float Const node, or nothing.
bool ConstFloat(const NodeDef& n, Tensor* out) {
  if (n.op() != "Const") return false;
  auto it = n.attr().find("value");
  if (it == n.attr().end() || it->second.tensor().dtype() != DT_FLOAT) return false;
  auto t = Tensor::FromProto(it->second.tensor());
  if (!t.ok()) return false;
  *out = *std::move(t);
  return true;
}

bool IsLayer(const NodeDef& n) {
  if (!optimize::IsFloat(n)) return false;
  if (n.op() == "Conv2D" || n.op() == "DepthwiseConv2dNative") {
    const AttrValue* f = optimize::FindAttr(n, "data_format");
    return f == nullptr || f->s() == "NHWC";
  }
  if (n.op() == "MatMul") {
    const AttrValue* tb = optimize::FindAttr(n, "transpose_b");
    return tb == nullptr || !tb->b();
  }
  return false;
}

bool IsBiasAddNhwc(const NodeDef& n) {
  if (n.op() != "BiasAdd" || !optimize::IsFloat(n)) return false;
  const AttrValue* f = optimize::FindAttr(n, "data_format");
  return f == nullptr || f->s() == "NHWC";
}

// A per-channel constant for `channels` output channels: [C], [1,...,1,C]
// or one value. Returns it as a [channels] vector.
bool ChannelVector(const Tensor& t, int64_t channels, std::vector<float>* out) {
  const int64_t n = t.NumElements();
  if (n != 1 && n != channels) return false;
  for (int d = 0; d + 1 < t.dims(); ++d) {
    if (t.dim_size(d) != 1) return false;
  }
  if (n == channels && t.dims() == 0) return false;
  out->resize(channels);
  for (int64_t c = 0; c < channels; ++c) (*out)[c] = t.flat<float>()[n == 1 ? 0 : c];
  return true;
}

}  // namespace

absl::Status FoldBatchNorms(GraphDef* graph, const OptimizerOptions& options,
                            OptimizationReport::Pass* report) {
  // Each round rewrites every chain by one step; chains are short.
  for (int round = 0; round < 8; ++round) {
    GR_ASSIGN_OR_RETURN(GraphView view, GraphView::Create(graph));
    std::vector<NodeDef> added;
    std::vector<bool> touched(view.num_nodes(), false);
    int changes = 0;
    auto single_use = [&](int i) {
      return !options.preserve.contains(view.node(i).name()) && view.consumers(i).size() == 1;
    };
    // A new constant runs where the constants it derives from run (their
    // control inputs put them in a loop frame or cond branch).
    auto new_const = [&](const std::string& base, const Tensor& value,
                         std::initializer_list<int> sources) {
      std::string name = base;
      for (int k = 0; view.Find(name) >= 0 || [&] {
             for (const NodeDef& a : added) {
               if (a.name() == name) return true;
             }
             return false;
           }();
           ++k) {
        name = absl::StrCat(base, "_", k);
      }
      NodeDef n;
      n.set_name(name);
      n.set_op("Const");
      (*n.mutable_attr())["dtype"].set_type(DT_FLOAT);
      value.AsProtoTensorContent((*n.mutable_attr())["value"].mutable_tensor());
      for (int src : sources) {
        for (int pos = 0; pos < view.num_inputs(src); ++pos) {
          const std::string in = view.input(src, pos).ToString();
          if (std::find(n.input().begin(), n.input().end(), in) == n.input().end()) {
            n.add_input(in);
          }
        }
      }
      added.push_back(n);
      return name;
    };
    for (int i = 0; i < view.num_nodes(); ++i) {
      NodeDef& op = view.node(i);
      const bool is_mul = op.op() == "Mul";
      const bool is_add = op.op() == "AddV2" || op.op() == "Add";
      const bool is_sub = op.op() == "Sub";
      if (!(is_mul || is_add || is_sub) || touched[i]) continue;
      if (view.num_inputs(i) != 2 || view.input(i, 0).IsControl() ||
          view.input(i, 1).IsControl()) {
        continue;
      }
      // Which side is the layer and which the constant (Sub: only x - c).
      for (int side = 0; side < 2; ++side) {
        if (is_sub && side == 1) break;
        const int p = view.producer(i, side);
        const int c = view.producer(i, 1 - side);
        if (view.input(i, side).index != 0 || view.input(i, 1 - side).index != 0) continue;
        Tensor k;
        if (!ConstFloat(view.node(c), &k) || touched[p] || !single_use(p)) continue;
        NodeDef& prev = view.node(p);
        int layer = -1, bias = -1;
        if (IsLayer(prev)) {
          layer = p;
        } else if (IsBiasAddNhwc(prev) && view.num_inputs(p) == 2 &&
                   IsLayer(view.node(view.producer(p, 0))) && single_use(view.producer(p, 0)) &&
                   view.input(p, 0).index == 0) {
          layer = view.producer(p, 0);
          bias = view.producer(p, 1);
        } else {
          continue;
        }
        Tensor w;
        const int w_node = view.producer(layer, 1);
        if (!ConstFloat(view.node(w_node), &w) || w.dims() < 2 || touched[layer]) continue;
        const int64_t channels =
            view.node(layer).op() == "DepthwiseConv2dNative"
                ? w.dim_size(w.dims() - 2) * w.dim_size(w.dims() - 1)
                : w.dim_size(w.dims() - 1);
        // The constant must not widen the output's rank.
        const int out_rank = view.node(layer).op() == "MatMul" ? 2 : 4;
        std::vector<float> v;
        if (k.dims() > out_rank || !ChannelVector(k, channels, &v)) continue;
        Tensor b;
        if (bias >= 0 && (!ConstFloat(view.node(bias), &b) || b.NumElements() != channels)) {
          continue;
        }
        const std::string& out_name = op.name();
        if (is_mul) {
          // Scale the weights (channel = innermost index of the filter,
          // depthwise filters' last two dims together) and the bias.
          Tensor w2 = *Tensor::Allocate(HostAllocator(), DT_FLOAT, w.shape());
          const int64_t n = w.NumElements();
          for (int64_t j = 0; j < n; ++j) w2.flat<float>()[j] = w.flat<float>()[j] * v[j % channels];
          view.SetInput(layer, 1,
                        TensorId{new_const(view.node(w_node).name() + "/bn_folded", w2, {w_node, c}), 0});
          if (bias >= 0) {
            Tensor b2 = *Tensor::Allocate(HostAllocator(), DT_FLOAT, b.shape());
            for (int64_t j = 0; j < channels; ++j) b2.flat<float>()[j] = b.flat<float>()[j] * v[j];
            view.SetInput(p, 1,
                          TensorId{new_const(view.node(bias).name() + "/bn_folded", b2, {bias, c}), 0});
          }
        } else {
          const float sign = is_sub ? -1.f : 1.f;
          Tensor b2 = *Tensor::Allocate(HostAllocator(), DT_FLOAT, TensorShape({channels}));
          for (int64_t j = 0; j < channels; ++j) {
            b2.flat<float>()[j] = (bias >= 0 ? b.flat<float>()[j] : 0.f) + sign * v[j];
          }
          const std::string name = bias >= 0
                                       ? new_const(out_name + "/bn_bias", b2, {bias, c})
                                       : new_const(out_name + "/bn_bias", b2, {c});
          if (bias >= 0) {
            view.SetInput(p, 1, TensorId{name, 0});
          } else {
            // The Add itself becomes the layer's BiasAdd.
            touched[i] = true;
            touched[p] = true;
            NodeDef& add = view.node(i);
            add.set_op("BiasAdd");
            google::protobuf::Map<std::string, AttrValue> attrs;
            attrs["T"].set_type(DT_FLOAT);
            attrs["data_format"].set_s("NHWC");
            *add.mutable_attr() = std::move(attrs);
            if (side == 1) view.SetInput(i, 0, TensorId{view.node(p).name(), 0});
            // (The new Const gets added below; the view does not know it.)
            add.set_input(1, name);
            ++changes;
            if (report != nullptr) {
              report->changes.push_back(absl::StrCat("'", out_name, "' (", is_sub ? "Sub" : "Add",
                                                     ") became the bias of '",
                                                     view.node(layer).name(), "'"));
            }
            break;
          }
        }
        // The Mul/Add is now the identity on `p`'s output: bypass it.
        const auto consumers = view.consumers(i);
        for (const auto& [cons, pos] : consumers) {
          TensorId id = view.input(cons, pos);
          id.node = view.node(p).name();
          view.SetInput(cons, pos, id);
        }
        touched[i] = touched[p] = touched[layer] = true;
        view.TruncateInputs(i, 0);
        view.MarkRemoved(i);
        ++changes;
        if (report != nullptr) {
          report->changes.push_back(absl::StrCat("folded '", out_name, "' (", op.op(),
                                                 ") into '", view.node(layer).name(), "'"));
          report->merged_into[out_name] = view.node(p).name();
        }
        break;
      }
    }
    view.Compact();
    for (NodeDef& n : added) *graph->add_node() = std::move(n);
    if (changes == 0) break;
  }
  return absl::OkStatus();
}

}  // namespace graphrun
