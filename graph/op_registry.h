// Op definitions and the registry that holds them.
//
// An OpDef states an op's typed inputs and outputs, its attrs (types,
// defaults, allowed values, minimums) and its shape function. Ops keep
// TensorFlow's names, attrs and semantics. Definitions are written with
// REGISTER_OP in TensorFlow's spec syntax:
//
//   REGISTER_OP("MatMul")
//       .Input("a: T").Input("b: T").Output("product: T")
//       .Attr("transpose_a: bool = false").Attr("transpose_b: bool = false")
//       .Attr("T: {half, bfloat16, float, double, int32, int64}")
//       .SetShapeFn(MatMulShape);
//
// The registry is filled at static-initialization time and read-only after
// that; lookups are thread-safe.
#ifndef GRAPHRUN_GRAPH_OP_REGISTRY_H_
#define GRAPHRUN_GRAPH_OP_REGISTRY_H_

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/protos/attr_value.pb.h"
#include "graph/types.h"

namespace graphrun {

class InferenceContext;
using ShapeFn = std::function<absl::Status(InferenceContext*)>;

// One input or output of an op.
struct ArgDef {
  std::string name;
  // Exactly one of these says the element type: a fixed type, the name of a
  // "type" attr, or the name of a "list(type)" attr (one tensor per entry).
  DataType type = DT_INVALID;
  std::string type_attr;
  std::string type_list_attr;
  // If set, the arg is a list of this many tensors (an "int" attr), all of
  // the type above.
  std::string number_attr;
  bool is_ref = false;
};

// One attribute of an op.
struct AttrDef {
  std::string name;
  // "int", "float", "bool", "string", "type", "shape", "tensor", "func",
  // or "list(<one of those>)".
  std::string type;
  std::optional<AttrValue> default_value;
  // For "type"/"list(type)": the allowed types; for "string": allowed values.
  std::vector<DataType> allowed_types;
  std::vector<std::string> allowed_strings;
  // For "int": minimum value; for lists: minimum length.
  std::optional<int64_t> minimum;
};

struct OpDef {
  std::string name;
  std::vector<ArgDef> inputs;
  std::vector<ArgDef> outputs;
  std::vector<AttrDef> attrs;
  bool is_stateful = false;
  bool is_commutative = false;
  ShapeFn shape_fn;  // may be empty: outputs get unknown shapes

  // nullptr if there is no such attr.
  const AttrDef* FindAttr(absl::string_view attr_name) const;
  // "MatMul(a: T, b: T) -> (product: T); attrs: T: {float,...}, ..."
  std::string Signature() const;
};

// Builds an OpDef from TensorFlow-style spec strings. Errors in a spec are
// programmer errors and abort at registration time with the op's name.
class OpDefBuilder {
 public:
  explicit OpDefBuilder(std::string op_name);
  OpDefBuilder& Input(std::string spec);   // "x: T", "xs: N * T", "y: float"
  OpDefBuilder& Output(std::string spec);
  OpDefBuilder& Attr(std::string spec);    // "T: {float, double} = DT_FLOAT"
  OpDefBuilder& SetIsStateful();
  OpDefBuilder& SetIsCommutative();
  OpDefBuilder& SetShapeFn(ShapeFn fn);
  absl::StatusOr<OpDef> Build() const;

 private:
  std::string name_;
  std::vector<std::string> inputs_, outputs_, attrs_;
  bool stateful_ = false, commutative_ = false;
  ShapeFn shape_fn_;
};

class OpRegistry {
 public:
  // The process-wide registry that REGISTER_OP fills.
  static OpRegistry* Global();

  // AlreadyExists if the name is taken.
  absl::Status Register(OpDef op_def);
  // nullptr if unknown.
  const OpDef* Find(absl::string_view op_name) const;
  // NotFound("Op type not registered 'Foo' in graphrun") when unknown.
  absl::StatusOr<const OpDef*> LookUp(absl::string_view op_name) const;
  std::vector<std::string> ListOpNames() const;

 private:
  std::map<std::string, std::unique_ptr<OpDef>, std::less<>> ops_;
};

namespace internal {
struct OpRegistrar {
  OpRegistrar(const OpDefBuilder& builder);  // NOLINT: used by REGISTER_OP
};
}  // namespace internal

#define GR_REGISTER_OP_UNIQ(ctr, name) \
  static ::graphrun::internal::OpRegistrar gr_op_registrar_##ctr = \
      ::graphrun::OpDefBuilder(name)
#define GR_REGISTER_OP_UNIQ_HELPER(ctr, name) GR_REGISTER_OP_UNIQ(ctr, name)
#define REGISTER_OP(name) GR_REGISTER_OP_UNIQ_HELPER(__COUNTER__, name)

}  // namespace graphrun

#endif  // GRAPHRUN_GRAPH_OP_REGISTRY_H_
