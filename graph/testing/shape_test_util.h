// Helpers for tests of op definitions and shape functions: AttrValue
// builders, and ShapeRun, which runs an op's shape function on given input
// shapes, constant inputs and attrs the way graph construction would.
//
//   EXPECT_EQ(ShapeRun("Pad").In(PartialShape({2, -1})).In(paddings).Str(), "[5,?]");
#ifndef GRAPHRUN_GRAPH_TESTING_SHAPE_TEST_UTIL_H_
#define GRAPHRUN_GRAPH_TESTING_SHAPE_TEST_UTIL_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/attr_slice.h"
#include "graph/protos/attr_value.pb.h"
#include "graph/tensor.h"
#include "graph/tensor_shape.h"

namespace graphrun {
namespace testing {

AttrValue AttrB(bool v);
AttrValue AttrI(int64_t v);
AttrValue AttrF(float v);
AttrValue AttrS(const std::string& v);
AttrValue AttrType(DataType v);
AttrValue AttrInts(const std::vector<int64_t>& v);
AttrValue AttrTypes(const std::vector<DataType>& v);
AttrValue AttrTensor(const Tensor& v);
AttrValue AttrShape(const std::vector<int64_t>& dims);  // -1 = unknown

class ShapeRun {
 public:
  explicit ShapeRun(std::string op) : op_(std::move(op)) {}

  ShapeRun& In(PartialShape shape);
  // A constant input: its shape is the tensor's.
  ShapeRun& In(Tensor value);
  ShapeRun& Attr(const std::string& name, AttrValue value);

  // The output shapes (attr defaults fill what was not given).
  absl::StatusOr<std::vector<PartialShape>> Run() const;
  // "[2,3]", "[2];[2]" for several outputs, or "error: <message>".
  std::string Str() const;
  // The InvalidArgument message; fails the test for any other outcome.
  std::string Error() const;

 private:
  std::string op_;
  std::vector<PartialShape> shapes_;
  std::map<int, Tensor> consts_;
  AttrMap attrs_;
};

}  // namespace testing
}  // namespace graphrun

#endif  // GRAPHRUN_GRAPH_TESTING_SHAPE_TEST_UTIL_H_
