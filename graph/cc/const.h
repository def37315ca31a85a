// Const builders: a Const node from a Tensor or from C++ values.
//
//   Output w = Const(scope, {1.f, 2.f, 3.f, 4.f}, TensorShape({2, 2}));
//   Output k = Const(scope.WithOpName("k"), int64_t{7});
//   Output s = Const(scope, {1, 2});            // int32 vector [2]
//   Output z = Const(scope, {0.f}, TensorShape({3, 3}));  // filled: 9 zeros
//
// Values with a shape: as many values as the shape has elements, or one
// value repeated to fill it; anything else records InvalidArgument in the
// scope. Like every builder, a scope with an error gives an empty Output.
// Needs the "Const" op registered (//graph:ops).
#ifndef GRAPHRUN_GRAPH_CC_CONST_H_
#define GRAPHRUN_GRAPH_CC_CONST_H_

#include <cstdint>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/string_view.h"
#include "graph/cc/scope.h"
#include "graph/tensor.h"
#include "graph/tensor_shape.h"

namespace graphrun {
namespace cc {

Output Const(const Scope& scope, const Tensor& value);

// Scalars.
Output Const(const Scope& scope, float value);
Output Const(const Scope& scope, double value);
Output Const(const Scope& scope, int32_t value);
Output Const(const Scope& scope, int64_t value);
Output Const(const Scope& scope, bool value);
Output Const(const Scope& scope, absl::string_view value);
Output Const(const Scope& scope, const char* value);

// Vectors: 1-D of their size, or reshaped to `shape`.
Output Const(const Scope& scope, const std::vector<float>& values);
Output Const(const Scope& scope, const std::vector<float>& values,
             const TensorShape& shape);
Output Const(const Scope& scope, const std::vector<double>& values);
Output Const(const Scope& scope, const std::vector<double>& values,
             const TensorShape& shape);
Output Const(const Scope& scope, const std::vector<int32_t>& values);
Output Const(const Scope& scope, const std::vector<int32_t>& values,
             const TensorShape& shape);
Output Const(const Scope& scope, const std::vector<int64_t>& values);
Output Const(const Scope& scope, const std::vector<int64_t>& values,
             const TensorShape& shape);
Output Const(const Scope& scope, const std::vector<std::string>& values);
Output Const(const Scope& scope, const std::vector<std::string>& values,
             const TensorShape& shape);

// Braced lists: {1.f, 2.f} is float, {1, 2} int32, {int64_t{1}} int64,
// {1.0} double, {"a", "b"} string. (Templates, so that each list picks
// its element type exactly instead of being ambiguous between vectors.)
template <typename T>
Output Const(const Scope& scope, std::initializer_list<T> values,
             const TensorShape& shape) {
  using Elem =
      std::conditional_t<std::is_same_v<T, const char*>, std::string, T>;
  return Const(scope, std::vector<Elem>(values.begin(), values.end()), shape);
}
template <typename T>
Output Const(const Scope& scope, std::initializer_list<T> values) {
  return Const(scope, values,
               TensorShape({static_cast<int64_t>(values.size())}));
}

}  // namespace cc
}  // namespace graphrun

#endif  // GRAPHRUN_GRAPH_CC_CONST_H_
