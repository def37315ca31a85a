// AttrSlice: typed, read-only access to a node's attrs, falling back to the
// op's declared defaults for attrs the NodeDef leaves out. Borrowed view: the
// attr map and OpDef must outlive it. Thread-compatible.
#ifndef GRAPHRUN_GRAPH_ATTR_SLICE_H_
#define GRAPHRUN_GRAPH_ATTR_SLICE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/map.h"
#include "graph/op_registry.h"
#include "graph/protos/attr_value.pb.h"
#include "graph/tensor.h"
#include "graph/tensor_shape.h"

namespace graphrun {

using AttrMap = google::protobuf::Map<std::string, AttrValue>;

class AttrSlice {
 public:
  // `op_def` may be null (unknown op): then only the node's own attrs exist.
  AttrSlice(const AttrMap* attrs, const OpDef* op_def)
      : attrs_(attrs), op_def_(op_def) {}

  // The node's value, else the op's default, else nullptr.
  const AttrValue* Find(absl::string_view name) const;

  // NotFound if absent; InvalidArgument if present with another type.
  absl::Status Get(absl::string_view name, int64_t* value) const;
  absl::Status Get(absl::string_view name, int32_t* value) const;
  absl::Status Get(absl::string_view name, float* value) const;
  absl::Status Get(absl::string_view name, bool* value) const;
  absl::Status Get(absl::string_view name, std::string* value) const;
  absl::Status Get(absl::string_view name, DataType* value) const;
  absl::Status Get(absl::string_view name, PartialShape* value) const;
  absl::Status Get(absl::string_view name, Tensor* value) const;
  absl::Status Get(absl::string_view name, std::vector<int64_t>* value) const;
  absl::Status Get(absl::string_view name, std::vector<int32_t>* value) const;
  absl::Status Get(absl::string_view name, std::vector<float>* value) const;
  absl::Status Get(absl::string_view name, std::vector<DataType>* value) const;
  absl::Status Get(absl::string_view name, std::vector<std::string>* value) const;

 private:
  absl::StatusOr<const AttrValue*> FindOrError(absl::string_view name,
                                               AttrValue::ValueCase want) const;
  const AttrMap* attrs_;
  const OpDef* op_def_;
};

// "int", "list(float)"... the attr type of a value; "" when it has none.
std::string AttrValueTypeName(const AttrValue& value);

// Short text form of an attr value for messages and summaries.
std::string AttrValueSummary(const AttrValue& value);

}  // namespace graphrun

#endif  // GRAPHRUN_GRAPH_ATTR_SLICE_H_
