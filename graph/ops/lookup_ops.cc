// Lookup tables (TensorFlow's core/ops/lookup_ops.cc): HashTableV2 (filled
// once by an initializer, then read-only) and MutableHashTableV2 make a
// table of scalar keys to scalar values and output its DT_RESOURCE handle;
// the LookupTable*V2 ops find, insert, remove, import, export and count its
// entries; InitializeTableV2 and InitializeTableFromTextFileV2 fill a
// HashTableV2. Names, inputs, outputs, attrs and defaults are TensorFlow's;
// every op is stateful, so no pass folds, merges or prunes one.
//
// Shape functions: a handle is a scalar. Every table registered here maps
// a scalar to a scalar, so a find's values have the keys' shape and an
// export gives two vectors of one length.
#include "graph/op_registry.h"
#include "graph/shape_inference.h"
#include "graph/status_macros.h"

namespace graphrun {
namespace {

absl::Status HandleShape(InferenceContext* c) {
  c->set_output(0, PartialShape::Scalar());
  return absl::OkStatus();
}

absl::Status ScalarHandleInput(InferenceContext* c) {
  return c->WithRank(c->input(0), 0, "table_handle").status();
}

// LookupTableFindV2: values have the keys' shape; the default is a scalar
// or one per key.
absl::Status FindShape(InferenceContext* c) {
  GR_RETURN_IF_ERROR(ScalarHandleInput(c));
  c->set_output(0, c->input(1));
  return absl::OkStatus();
}

// Insert and import: a value per key.
absl::Status KeysValuesShape(InferenceContext* c) {
  GR_RETURN_IF_ERROR(ScalarHandleInput(c));
  GR_RETURN_IF_ERROR(InferenceContext::Merge(c->input(1), c->input(2)).status());
  return absl::OkStatus();
}

absl::Status ExportShape(InferenceContext* c) {
  GR_RETURN_IF_ERROR(ScalarHandleInput(c));
  c->set_output(0, PartialShape({-1}));
  c->set_output(1, PartialShape({-1}));
  return absl::OkStatus();
}

// InitializeTableV2: keys and values are vectors of one length.
absl::Status InitializeShape(InferenceContext* c) {
  GR_RETURN_IF_ERROR(ScalarHandleInput(c));
  GR_ASSIGN_OR_RETURN(PartialShape keys, c->WithRank(c->input(1), 1, "keys"));
  GR_RETURN_IF_ERROR(InferenceContext::Merge(keys, c->input(2)).status());
  return absl::OkStatus();
}

absl::Status TextFileShape(InferenceContext* c) {
  GR_RETURN_IF_ERROR(ScalarHandleInput(c));
  return c->WithRank(c->input(1), 0, "filename").status();
}

}  // namespace

REGISTER_OP("HashTableV2")
    .Output("table_handle: resource")
    .Attr("container: string = ''")
    .Attr("shared_name: string = ''")
    .Attr("use_node_name_sharing: bool = false")
    .Attr("key_dtype: type")
    .Attr("value_dtype: type")
    .SetIsStateful()
    .SetShapeFn(HandleShape);

REGISTER_OP("MutableHashTableV2")
    .Output("table_handle: resource")
    .Attr("container: string = ''")
    .Attr("shared_name: string = ''")
    .Attr("use_node_name_sharing: bool = false")
    .Attr("key_dtype: type")
    .Attr("value_dtype: type")
    .SetIsStateful()
    .SetShapeFn(HandleShape);

REGISTER_OP("LookupTableFindV2")
    .Input("table_handle: resource")
    .Input("keys: Tin")
    .Input("default_value: Tout")
    .Output("values: Tout")
    .Attr("Tin: type")
    .Attr("Tout: type")
    .SetIsStateful()
    .SetShapeFn(FindShape);

REGISTER_OP("LookupTableInsertV2")
    .Input("table_handle: resource")
    .Input("keys: Tin")
    .Input("values: Tout")
    .Attr("Tin: type")
    .Attr("Tout: type")
    .SetIsStateful()
    .SetShapeFn(KeysValuesShape);

REGISTER_OP("LookupTableRemoveV2")
    .Input("table_handle: resource")
    .Input("keys: Tin")
    .Attr("Tin: type")
    .SetIsStateful()
    .SetShapeFn(ScalarHandleInput);

REGISTER_OP("LookupTableImportV2")
    .Input("table_handle: resource")
    .Input("keys: Tin")
    .Input("values: Tout")
    .Attr("Tin: type")
    .Attr("Tout: type")
    .SetIsStateful()
    .SetShapeFn(KeysValuesShape);

REGISTER_OP("LookupTableExportV2")
    .Input("table_handle: resource")
    .Output("keys: Tkeys")
    .Output("values: Tvalues")
    .Attr("Tkeys: type")
    .Attr("Tvalues: type")
    .SetIsStateful()
    .SetShapeFn(ExportShape);

REGISTER_OP("LookupTableSizeV2")
    .Input("table_handle: resource")
    .Output("size: int64")
    .SetIsStateful()
    .SetShapeFn([](InferenceContext* c) -> absl::Status {
      GR_RETURN_IF_ERROR(ScalarHandleInput(c));
      c->set_output(0, PartialShape::Scalar());
      return absl::OkStatus();
    });

REGISTER_OP("InitializeTableV2")
    .Input("table_handle: resource")
    .Input("keys: Tkey")
    .Input("values: Tval")
    .Attr("Tkey: type")
    .Attr("Tval: type")
    .SetIsStateful()
    .SetShapeFn(InitializeShape);

REGISTER_OP("InitializeTableFromTextFileV2")
    .Input("table_handle: resource")
    .Input("filename: string")
    .Attr("key_index: int >= -2")
    .Attr("value_index: int >= -2")
    .Attr("vocab_size: int >= -1 = -1")
    .Attr("delimiter: string = '\\t'")  // a tab
    .Attr("offset: int = 0")
    .SetIsStateful()
    .SetShapeFn(TextFileShape);

}  // namespace graphrun
