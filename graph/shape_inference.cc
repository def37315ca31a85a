#include "graph/shape_inference.h"

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"

namespace graphrun {

InferenceContext::InferenceContext(AttrSlice attrs,
                                   std::vector<PartialShape> input_shapes,
                                   std::vector<const Tensor*> input_tensors,
                                   std::vector<DataType> input_types,
                                   std::vector<DataType> output_types)
    : attrs_(attrs),
      inputs_(std::move(input_shapes)),
      input_tensors_(std::move(input_tensors)),
      input_types_(std::move(input_types)),
      output_types_(std::move(output_types)),
      outputs_(output_types_.size()) {
  input_tensors_.resize(inputs_.size(), nullptr);
}

absl::Status InferenceContext::CheckOutputSizes() const {
  for (int i = 0; i < num_outputs(); ++i) {
    const PartialShape& s = outputs_[i];
    if (s.unknown_rank()) continue;
    std::vector<int64_t> known;
    for (int64_t d : s.dims()) {
      if (d > 0) known.push_back(d);
    }
    if (NonZeroDimProduct(known) < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("output ", i, " shape ", s.DebugString(),
                       " is too large (more than 2^48 elements)"));
    }
  }
  return absl::OkStatus();
}

bool InferenceContext::ConstantVector(int input,
                                      std::vector<int64_t>* values) const {
  const Tensor* t = input_tensors_[input];
  if (t == nullptr || t->dims() > 1) return false;
  values->clear();
  if (t->dtype() == DT_INT32) {
    for (int32_t v : t->flat<int32_t>()) values->push_back(v);
    return true;
  }
  if (t->dtype() == DT_INT64) {
    for (int64_t v : t->flat<int64_t>()) values->push_back(v);
    return true;
  }
  return false;
}

bool InferenceContext::ConstantScalar(int input, int64_t* value) const {
  std::vector<int64_t> v;
  const Tensor* t = input_tensors_[input];
  if (t == nullptr || t->NumElements() != 1 || !ConstantVector(input, &v)) {
    return false;
  }
  *value = v[0];
  return true;
}

absl::StatusOr<PartialShape> InferenceContext::WithRank(
    const PartialShape& shape, int rank, absl::string_view what) const {
  if (shape.unknown_rank()) return PartialShape(std::vector<int64_t>(rank, -1));
  if (shape.rank() != rank) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must have rank ", rank, " but has shape ",
                     shape.DebugString()));
  }
  return shape;
}

absl::StatusOr<PartialShape> InferenceContext::WithRankAtLeast(
    const PartialShape& shape, int rank, absl::string_view what) const {
  if (!shape.unknown_rank() && shape.rank() < rank) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must have rank at least ", rank,
                     " but has shape ", shape.DebugString()));
  }
  return shape;
}

absl::StatusOr<int64_t> InferenceContext::MergeDim(int64_t a, int64_t b) {
  if (a < 0) return b;
  if (b < 0 || a == b) return a;
  return absl::InvalidArgumentError(
      absl::StrCat("dimensions must be equal, but are ", a, " and ", b));
}

absl::StatusOr<PartialShape> InferenceContext::Merge(const PartialShape& a,
                                                     const PartialShape& b) {
  if (a.unknown_rank()) return b;
  if (b.unknown_rank()) return a;
  if (a.rank() != b.rank()) {
    return absl::InvalidArgumentError(
        absl::StrCat("shapes ", a.DebugString(), " and ", b.DebugString(),
                     " have different ranks"));
  }
  std::vector<int64_t> dims(a.rank());
  for (int i = 0; i < a.rank(); ++i) {
    auto d = MergeDim(a.dim(i), b.dim(i));
    if (!d.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("shapes ", a.DebugString(), " and ", b.DebugString(),
                       " are incompatible"));
    }
    dims[i] = *d;
  }
  return PartialShape(std::move(dims));
}

absl::StatusOr<PartialShape> InferenceContext::Broadcast(
    const PartialShape& a, const PartialShape& b) {
  if (a.unknown_rank() || b.unknown_rank()) return PartialShape();
  const int rank = std::max(a.rank(), b.rank());
  std::vector<int64_t> dims(rank);
  for (int i = 0; i < rank; ++i) {
    const int ia = a.rank() - rank + i, ib = b.rank() - rank + i;
    const int64_t da = ia >= 0 ? a.dim(ia) : 1;
    const int64_t db = ib >= 0 ? b.dim(ib) : 1;
    if (da == 1) {
      dims[i] = db;
    } else if (db == 1) {
      dims[i] = da;
    } else if (da < 0 || db < 0) {
      // One unknown, the other known and != 1: the known one wins, since the
      // unknown must be 1 or equal to it.
      dims[i] = da < 0 ? db : da;
    } else if (da == db) {
      dims[i] = da;
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "Dimensions must be equal, but are ", da, " and ", db));
    }
  }
  return PartialShape(std::move(dims));
}

namespace shape_fns {

absl::Status UnknownShape(InferenceContext* c) {
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, PartialShape());
  return absl::OkStatus();
}

absl::Status UnchangedShape(InferenceContext* c) {
  c->ForwardInput(0, 0);
  return absl::OkStatus();
}

absl::Status ScalarShape(InferenceContext* c) {
  c->set_output(0, PartialShape::Scalar());
  return absl::OkStatus();
}

absl::Status BroadcastBinaryShape(InferenceContext* c) {
  GR_ASSIGN_OR_RETURN(PartialShape out,
                      InferenceContext::Broadcast(c->input(0), c->input(1)));
  c->set_output(0, std::move(out));
  return absl::OkStatus();
}

absl::Status NoOutputs(InferenceContext*) { return absl::OkStatus(); }

}  // namespace shape_fns
}  // namespace graphrun
