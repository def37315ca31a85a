// The optimizer updates (TensorFlow's core/ops/training_ops.cc): SGD,
// momentum and Keras's momentum, Adam, Adam with AMSGrad, AdaMax, Adagrad
// (with and without epsilon), Adadelta, RMSProp and centered RMSProp, and
// the sparse forms that update the rows `indices` names (grad holding one
// row per index). The Apply* forms update ref variables in place and pass
// the variable's ref on; the ResourceApply* forms update resource
// variables and have no outputs. Names, inputs (in TensorFlow's order:
// var, slots, leading hyperparameters, grad, indices, trailing
// hyperparameters), attrs and shape functions are TensorFlow's; all are
// stateful, so no optimizer pass merges or prunes an update.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/op_registry.h"
#include "graph/ops/shape_helpers.h"
#include "graph/shape_inference.h"
#include "graph/status_macros.h"

namespace graphrun {
namespace {

enum Forms { kRefAndResource, kResourceOnly };

struct ApplySpec {
  const char* name;                  // "Adam": ApplyAdam, ResourceApplyAdam
  std::vector<const char*> slots;    // state updated with the variable
  std::vector<const char*> leading;  // hyperparameters before grad
  const char* grad;
  std::vector<const char*> trailing;  // hyperparameters after grad (and indices)
  std::vector<const char*> attrs;     // besides T and use_locking
  bool sparse;
  Forms forms;
};

// The variable's shape merged with each slot's (and a dense gradient's);
// hyperparameters are scalars, indices a vector. The ref form outputs the
// variable's shape.
ShapeFn ApplyShape(const ApplySpec& s, bool ref) {
  const int slots = static_cast<int>(s.slots.size());
  const int leading = static_cast<int>(s.leading.size());
  const int grad = 1 + slots + leading;
  const int trailing = static_cast<int>(s.trailing.size());
  const bool sparse = s.sparse;
  return [=](InferenceContext* c) -> absl::Status {
    PartialShape shape = c->input(0);
    for (int i = 1; i <= slots; ++i) {
      GR_ASSIGN_OR_RETURN(shape, InferenceContext::Merge(shape, c->input(i)));
    }
    if (!sparse) {
      GR_ASSIGN_OR_RETURN(shape, InferenceContext::Merge(shape, c->input(grad)));
    }
    std::vector<int> scalars;
    for (int i = 0; i < leading; ++i) scalars.push_back(1 + slots + i);
    const int first_trailing = grad + (sparse ? 2 : 1);
    for (int i = 0; i < trailing; ++i) scalars.push_back(first_trailing + i);
    for (int i : scalars) {
      GR_RETURN_IF_ERROR(c->WithRank(c->input(i), 0, "a hyperparameter").status());
    }
    if (sparse) GR_RETURN_IF_ERROR(c->WithRank(c->input(grad + 1), 1, "indices").status());
    if (ref) c->set_output(0, shape);
    return absl::OkStatus();
  };
}

void Register(const ApplySpec& s, bool ref) {
  const std::string op = absl::StrCat(ref ? "" : "Resource", s.sparse ? "Sparse" : "",
                                      "Apply", s.name);
  const char* state = ref ? ": Ref(T)" : ": resource";
  OpDefBuilder b(op);
  b.Input(absl::StrCat("var", state));
  for (const char* slot : s.slots) b.Input(absl::StrCat(slot, state));
  for (const char* h : s.leading) b.Input(absl::StrCat(h, ": T"));
  b.Input(absl::StrCat(s.grad, ": T"));
  if (s.sparse) b.Input("indices: Tindices");
  for (const char* h : s.trailing) b.Input(absl::StrCat(h, ": T"));
  if (ref) b.Output("out: Ref(T)");
  b.Attr(absl::StrCat("T: {", op_shapes::kNumberTypes, "}"));
  if (s.sparse) b.Attr("Tindices: {int32, int64}");
  b.Attr("use_locking: bool = false");
  for (const char* a : s.attrs) b.Attr(a);
  b.SetIsStateful();
  b.SetShapeFn(ref ? ApplyShape(s, true) : shape_fns::NoOutputs);
  internal::OpRegistrar registrar(b);
}

const char* const kNesterov = "use_nesterov: bool = false";
const char* const kUpdateSlots = "update_slots: bool = true";
const std::vector<const char*> kAdam = {"beta1_power", "beta2_power", "lr",
                                        "beta1",       "beta2",       "epsilon"};
const std::vector<const char*> kRms = {"lr", "rho", "momentum", "epsilon"};

const bool kRegistered = [] {
  const ApplySpec specs[] = {
      // var -= alpha * delta.
      {"GradientDescent", {}, {"alpha"}, "delta", {}, {}, false, kRefAndResource},
      // accum = accum * momentum + grad; var -= lr * accum (or Nesterov's).
      {"Momentum", {"accum"}, {"lr"}, "grad", {"momentum"}, {kNesterov}, false, kRefAndResource},
      {"Momentum", {"accum"}, {"lr"}, "grad", {"momentum"}, {kNesterov}, true, kRefAndResource},
      // accum = accum * momentum - lr * grad; var += accum.
      {"KerasMomentum", {"accum"}, {"lr"}, "grad", {"momentum"}, {kNesterov}, false,
       kResourceOnly},
      {"KerasMomentum", {"accum"}, {"lr"}, "grad", {"momentum"}, {kNesterov}, true,
       kResourceOnly},
      {"Adam", {"m", "v"}, kAdam, "grad", {}, {kNesterov}, false, kRefAndResource},
      {"AdamWithAmsgrad", {"m", "v", "vhat"}, kAdam, "grad", {}, {}, false, kResourceOnly},
      {"AdaMax", {"m", "v"}, {"beta1_power", "lr", "beta1", "beta2", "epsilon"}, "grad", {},
       {}, false, kRefAndResource},
      // accum += grad * grad; var -= grad * lr * rsqrt(accum).
      {"Adagrad", {"accum"}, {"lr"}, "grad", {}, {kUpdateSlots}, false, kRefAndResource},
      {"Adagrad", {"accum"}, {"lr"}, "grad", {}, {kUpdateSlots}, true, kRefAndResource},
      // accum += grad * grad; var -= grad * lr / (sqrt(accum) + epsilon).
      {"AdagradV2", {"accum"}, {"lr", "epsilon"}, "grad", {}, {kUpdateSlots}, false,
       kRefAndResource},
      {"AdagradV2", {"accum"}, {"lr", "epsilon"}, "grad", {}, {kUpdateSlots}, true,
       kRefAndResource},
      {"Adadelta", {"accum", "accum_update"}, {"lr", "rho", "epsilon"}, "grad", {}, {}, false,
       kRefAndResource},
      {"RMSProp", {"ms", "mom"}, kRms, "grad", {}, {}, false, kRefAndResource},
      {"RMSProp", {"ms", "mom"}, kRms, "grad", {}, {}, true, kRefAndResource},
      {"CenteredRMSProp", {"mg", "ms", "mom"}, kRms, "grad", {}, {}, false, kRefAndResource},
      {"CenteredRMSProp", {"mg", "ms", "mom"}, kRms, "grad", {}, {}, true, kRefAndResource},
  };
  for (const ApplySpec& s : specs) {
    if (s.forms == kRefAndResource) Register(s, /*ref=*/true);
    Register(s, /*ref=*/false);
  }
  return true;
}();

}  // namespace
}  // namespace graphrun
