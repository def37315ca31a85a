#include "graph/cc/const.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "graph/cc/node_builder.h"

namespace graphrun {
namespace cc {
namespace {

// A tensor of `shape` from `values` (one value fills the shape); records
// an error in the scope when the counts do not fit.
template <typename T>
Output ConstFromValues(const Scope& scope, const std::vector<T>& values,
                       const TensorShape& shape) {
  if (!scope.ok()) return Output();
  const int64_t n = static_cast<int64_t>(values.size());
  if (n != shape.num_elements() && !(n == 1 && shape.num_elements() > 0)) {
    scope.UpdateStatus(absl::InvalidArgumentError(
        absl::StrCat("Const '", scope.GetUniqueNameForOp("Const"), "': ", n,
                     " values do not fill shape ", shape.DebugString(), " (",
                     shape.num_elements(), " elements)")));
    return Output();
  }
  Tensor t(DataTypeToEnum<T>::value, shape);
  absl::Span<T> flat = t.flat<T>();
  if (n == shape.num_elements()) {
    std::copy(values.begin(), values.end(), flat.begin());
  } else {
    std::fill(flat.begin(), flat.end(), values[0]);
  }
  return Const(scope, t);
}

TensorShape VectorShape(size_t n) {
  return TensorShape({static_cast<int64_t>(n)});
}

}  // namespace

Output Const(const Scope& scope, const Tensor& value) {
  if (!scope.ok()) return Output();
  return NodeBuilder(scope.GetUniqueNameForOp("Const"), "Const")
      .Attr("value", value)
      .Attr("dtype", value.dtype())
      .Finalize(scope)
      .output(0);
}

Output Const(const Scope& scope, float value) {
  return Const(scope, Tensor::Scalar(value));
}
Output Const(const Scope& scope, double value) {
  return Const(scope, Tensor::Scalar(value));
}
Output Const(const Scope& scope, int32_t value) {
  return Const(scope, Tensor::Scalar(value));
}
Output Const(const Scope& scope, int64_t value) {
  return Const(scope, Tensor::Scalar(value));
}
Output Const(const Scope& scope, bool value) {
  return Const(scope, Tensor::Scalar(value));
}
Output Const(const Scope& scope, absl::string_view value) {
  return Const(scope, Tensor::Scalar(std::string(value)));
}
Output Const(const Scope& scope, const char* value) {
  return Const(scope, absl::string_view(value));
}

Output Const(const Scope& scope, const std::vector<float>& values) {
  return ConstFromValues(scope, values, VectorShape(values.size()));
}
Output Const(const Scope& scope, const std::vector<float>& values,
             const TensorShape& shape) {
  return ConstFromValues(scope, values, shape);
}
Output Const(const Scope& scope, const std::vector<double>& values) {
  return ConstFromValues(scope, values, VectorShape(values.size()));
}
Output Const(const Scope& scope, const std::vector<double>& values,
             const TensorShape& shape) {
  return ConstFromValues(scope, values, shape);
}
Output Const(const Scope& scope, const std::vector<int32_t>& values) {
  return ConstFromValues(scope, values, VectorShape(values.size()));
}
Output Const(const Scope& scope, const std::vector<int32_t>& values,
             const TensorShape& shape) {
  return ConstFromValues(scope, values, shape);
}
Output Const(const Scope& scope, const std::vector<int64_t>& values) {
  return ConstFromValues(scope, values, VectorShape(values.size()));
}
Output Const(const Scope& scope, const std::vector<int64_t>& values,
             const TensorShape& shape) {
  return ConstFromValues(scope, values, shape);
}
Output Const(const Scope& scope, const std::vector<std::string>& values) {
  return ConstFromValues(scope, values, VectorShape(values.size()));
}
Output Const(const Scope& scope, const std::vector<std::string>& values,
             const TensorShape& shape) {
  return ConstFromValues(scope, values, shape);
}

}  // namespace cc
}  // namespace graphrun
