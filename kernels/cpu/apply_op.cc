#include "kernels/cpu/apply_op.h"

namespace graphrun {
namespace cpu {

std::vector<int64_t> SparseRows(const Tensor& indices) {
  std::vector<int64_t> rows(static_cast<size_t>(indices.NumElements()));
  for (size_t i = 0; i < rows.size(); ++i) {
    rows[i] = indices.dtype() == DT_INT32 ? indices.flat<int32_t>()[i]
                                          : indices.flat<int64_t>()[i];
  }
  return rows;
}

absl::Status ApplyOp::CheckSparse(const Tensor& var, const Tensor& grad, const Tensor& indices,
                                  const std::string& name) const {
  if (indices.dtype() != DT_INT32 && indices.dtype() != DT_INT64) {
    return absl::InvalidArgumentError(absl::StrCat(
        "indices must be int32 or int64, got ", DataTypeString(indices.dtype())));
  }
  if (indices.dims() != 1) {
    return absl::InvalidArgumentError(absl::StrCat("indices must be one-dimensional, got ",
                                                   indices.shape().DebugString()));
  }
  if (var.dims() < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("var must be at least 1 dimensional (variable ", name, ")"));
  }
  if (grad.dims() != var.dims()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "var and grad must have the same rank: var ", var.shape().DebugString(), ", grad ",
        grad.shape().DebugString(), " (variable ", name, ")"));
  }
  for (int d = 1; d < var.dims(); ++d) {
    if (var.dim_size(d) != grad.dim_size(d)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "var and grad must match in dimension ", d, ": var ", var.shape().DebugString(),
          ", grad ", grad.shape().DebugString(), " (variable ", name, ")"));
    }
  }
  if (grad.dim_size(0) != indices.dim_size(0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "grad must be the same size as indices in the first dimension: grad ",
        grad.shape().DebugString(), ", indices ", indices.shape().DebugString()));
  }
  const std::vector<int64_t> rows = SparseRows(indices);
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i] < 0 || rows[i] >= var.dim_size(0)) {
      return absl::InvalidArgumentError(absl::StrCat("Index ", rows[i], " at offset ", i,
                                                     " in indices is out of range (variable ",
                                                     name, " has ", var.dim_size(0), " rows)"));
    }
  }
  return absl::OkStatus();
}

}  // namespace cpu
}  // namespace graphrun
