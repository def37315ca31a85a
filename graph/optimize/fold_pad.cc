// Pad folding: a zero Pad of the spatial dims in front of a convolution
// (Keras' ZeroPadding2D before a VALID Conv2D) becomes the convolution's
// own explicit padding, so the padded copy is never made and the kernel
// skips the zeros instead of multiplying by them.
//
//   Conv2D(Pad(x, p), w, padding=VALID)            -> Conv2D(x, w, EXPLICIT p)
//   Conv2D(Pad(x, p), w, EXPLICIT e)               -> Conv2D(x, w, EXPLICIT p+e)
//
// likewise for _FusedConv2D and DepthwiseConv2dNative; float32, NHWC, p a
// constant [4, 2] with no padding of the batch and channel dims, Pad or
// PadV2 with a constant value of zero. Consumers that are not such
// convolutions keep the Pad; it goes (pruning) when nothing reads it.
#include <algorithm>
#include <array>
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
using optimize::FindAttr;

// The [4, 2] padding of a Const node as rows of (before, after), if it
// pads only dims 1 and 2 and by amounts a kernel can take.
bool SpatialPaddings(const NodeDef& n, std::array<int64_t, 8>* out) {
  if (n.op() != "Const") return false;
  const AttrValue* value = FindAttr(n, "value");
  if (value == nullptr) return false;
  auto t = Tensor::FromProto(value->tensor());
  if (!t.ok() || t->dims() != 2 || t->dim_size(0) != 4 || t->dim_size(1) != 2) return false;
  for (int i = 0; i < 8; ++i) {
    const int64_t v = t->dtype() == DT_INT32   ? t->flat<int32_t>()[i]
                      : t->dtype() == DT_INT64 ? t->flat<int64_t>()[i]
                                               : -1;
    // Non-negative and small enough that sums of them stay far from
    // overflow (the kernel checks the output size).
    if (v < 0 || v > (int64_t{1} << 30)) return false;
    (*out)[i] = v;
  }
  return (*out)[0] == 0 && (*out)[1] == 0 && (*out)[6] == 0 && (*out)[7] == 0;
}

// A scalar float Const holding 0 (PadV2's constant_values).
bool ZeroScalar(const NodeDef& n) {
  if (n.op() != "Const") return false;
  const AttrValue* value = FindAttr(n, "value");
  if (value == nullptr || value->tensor().dtype() != DT_FLOAT) return false;
  auto t = Tensor::FromProto(value->tensor());
  return t.ok() && t->dims() == 0 && t->flat<float>()[0] == 0.f;
}

// A convolution reading the Pad as its input 0 that can take the padding.
bool FoldableConsumer(const NodeDef& c, int pos, const std::string& device) {
  if (pos != 0 || c.device() != device || !IsFloat(c)) return false;
  if (c.op() != "Conv2D" && c.op() != "_FusedConv2D" && c.op() != "DepthwiseConv2dNative") {
    return false;
  }
  const AttrValue* format = FindAttr(c, "data_format");
  if (format != nullptr && format->s() != "NHWC") return false;
  const AttrValue* padding = FindAttr(c, "padding");
  if (padding == nullptr) return false;
  if (padding->s() == "VALID") return true;
  if (padding->s() != "EXPLICIT") return false;
  const AttrValue* explicit_paddings = FindAttr(c, "explicit_paddings");
  return explicit_paddings != nullptr && explicit_paddings->list().i_size() == 8;
}

}  // namespace

absl::Status FoldPads(GraphDef* graph, const OptimizerOptions& options,
                      OptimizationReport::Pass* report) {
  GR_ASSIGN_OR_RETURN(GraphView view, GraphView::Create(graph));
  for (int i = 0; i < view.num_nodes(); ++i) {
    const NodeDef& pad = view.node(i);
    const bool v2 = pad.op() == "PadV2";
    if ((pad.op() != "Pad" && !v2) || !IsFloat(pad) || !CpuOrUnpinned(pad.device())) continue;
    const int data_inputs = view.num_data_inputs(i);
    if (data_inputs != (v2 ? 3 : 2) || view.input(i, 0).IsControl()) continue;
    std::array<int64_t, 8> p;
    if (!SpatialPaddings(view.node(view.producer(i, 1)), &p)) continue;
    if (v2 && !ZeroScalar(view.node(view.producer(i, 2)))) continue;
    const TensorId source = view.input(i, 0);
    const auto consumers = view.consumers(i);  // copied: rewiring edits it
    int folded = 0;
    std::string first;
    for (const auto& [c, pos] : consumers) {
      NodeDef& conv = view.node(c);
      if (view.removed(c) || !FoldableConsumer(conv, pos, pad.device())) continue;
      std::array<int64_t, 8> total = p;
      if (FindAttr(conv, "padding")->s() == "EXPLICIT") {
        const auto& e = FindAttr(conv, "explicit_paddings")->list();
        for (int k = 0; k < 8; ++k) total[k] += e.i(k);
        // A convolution padding its batch or channels is not one to touch.
        if (total[0] != 0 || total[1] != 0 || total[6] != 0 || total[7] != 0) continue;
      }
      (*conv.mutable_attr())["padding"].set_s("EXPLICIT");
      auto* list = (*conv.mutable_attr())["explicit_paddings"].mutable_list();
      list->clear_i();
      for (int64_t v : total) list->add_i(v);
      view.SetInput(c, 0, source);
      // What ran before the Pad, or before its constants (a folded
      // constant keeps the control inputs that place it in a frame or a
      // branch), still runs before the convolution.
      for (int k = data_inputs; k < view.num_inputs(i); ++k) {
        view.AddControlInput(c, view.producer(i, k));
      }
      for (int d = 1; d < data_inputs; ++d) {
        const int constant = view.producer(i, d);
        for (int k = view.num_data_inputs(constant); k < view.num_inputs(constant); ++k) {
          view.AddControlInput(c, view.producer(constant, k));
        }
      }
      if (report != nullptr) {
        report->changes.push_back(absl::StrCat("folded '", pad.name(), "' (", pad.op(),
                                               ") into '", conv.name(), "' (", conv.op(),
                                               ") as explicit padding"));
      }
      if (first.empty()) first = conv.name();
      ++folded;
    }
    // Every reader took the padding: the Pad lives on in the first.
    if (folded > 0 && folded == static_cast<int>(consumers.size()) &&
        !view.HasControlConsumers(i) && !options.preserve.contains(pad.name()) &&
        report != nullptr) {
      report->merged_into[pad.name()] = first;
    }
  }
  return absl::OkStatus();
}

}  // namespace graphrun
