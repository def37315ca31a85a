// CPU kernels of the lookup table ops (graph/ops/lookup_ops.cc), with
// TensorFlow's semantics and messages (core/kernels/lookup_table_op.cc,
// lookup_table_init_op.cc). HashTableV2 and MutableHashTableV2 find or make
// their LookupTable (kernels/lookup_table.h) through SharedResource
// (shared_resource.h): by (container, shared_name, else with
// use_node_name_sharing the node's name) in the device's ResourceMgr on
// every run, so an initializer's run and a later lookup's share it; with
// neither, the table is the node's own for the session, as in TensorFlow.
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "kernels/cpu/shared_resource.h"
#include "kernels/kernel_registry.h"
#include "kernels/lookup_table.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace {

class HashTableOp : public OpKernel {
 public:
  explicit HashTableOp(OpKernelConstruction* c) : OpKernel(c), resource_(c) {
    OP_REQUIRES_OK(c, c->GetAttr("key_dtype", &key_dtype_));
    OP_REQUIRES_OK(c, c->GetAttr("value_dtype", &value_dtype_));
    mutable_ = type_string() == "MutableHashTableV2";
    set_expensive(false);
  }

  void Compute(OpKernelContext* ctx) override {
    auto make = [this](const std::string& name) -> absl::StatusOr<std::shared_ptr<LookupTable>> {
      return NewLookupTable(name, key_dtype_, value_dtype_, mutable_);
    };
    Tensor handle;
    absl::StatusOr<std::shared_ptr<LookupTable>> found = resource_.Get(ctx, make, &handle);
    OP_REQUIRES_OK(ctx, found.status());
    const LookupTable& table = **found;
    OP_REQUIRES(ctx,
                table.key_dtype() == key_dtype_ && table.value_dtype() == value_dtype_ &&
                    table.is_mutable() == mutable_,
                absl::InvalidArgumentError(absl::StrCat(
                    "Conflicting key/value dtypes ", DataTypeString(key_dtype_), "->",
                    DataTypeString(value_dtype_), " with ", DataTypeString(table.key_dtype()),
                    "-", DataTypeString(table.value_dtype()), " for table ", table.name())));
    ctx->set_output(0, handle);
  }

 private:
  DataType key_dtype_ = DT_INVALID, value_dtype_ = DT_INVALID;
  bool mutable_ = false;
  SharedResource<LookupTable> resource_;
};

// The table of input 0, or a failed context.
LookupTable* Table(OpKernelContext* ctx) {
  absl::StatusOr<LookupTable*> table = TableOf(ctx->input(0));
  if (!table.ok()) {
    ctx->SetStatus(table.status());
    return nullptr;
  }
  return *table;
}

class LookupTableFindOp : public OpKernel {
 public:
  explicit LookupTableFindOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    LookupTable* table = Table(ctx);
    if (table == nullptr) return;
    const Tensor& keys = ctx->input(1);
    const Tensor& default_value = ctx->input(2);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, keys.shape(), &out));
    OP_REQUIRES_OK(ctx, table->Find(keys, default_value, out));
  }
};

class LookupTableInsertOp : public OpKernel {
 public:
  explicit LookupTableInsertOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    LookupTable* table = Table(ctx);
    if (table == nullptr) return;
    OP_REQUIRES_OK(ctx, table->Insert(ctx->input(1), ctx->input(2)));
  }
};

class LookupTableRemoveOp : public OpKernel {
 public:
  explicit LookupTableRemoveOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    LookupTable* table = Table(ctx);
    if (table == nullptr) return;
    OP_REQUIRES_OK(ctx, table->Remove(ctx->input(1)));
  }
};

// LookupTableImportV2, and InitializeTableV2 (vectors only).
class LookupTableImportOp : public OpKernel {
 public:
  explicit LookupTableImportOp(OpKernelConstruction* c) : OpKernel(c) {
    initialize_ = type_string() == "InitializeTableV2";
  }
  void Compute(OpKernelContext* ctx) override {
    LookupTable* table = Table(ctx);
    if (table == nullptr) return;
    const Tensor& keys = ctx->input(1);
    const Tensor& values = ctx->input(2);
    if (initialize_) {
      OP_REQUIRES(ctx, !table->is_mutable(),
                  absl::InvalidArgumentError(absl::StrCat(
                      "Table localhost ", table->name(), " is not initializable")));
      OP_REQUIRES(ctx, keys.dims() == 1,
                  absl::InvalidArgumentError(absl::StrCat(
                      "Keys must be a vector, but received shape", keys.shape().DebugString())));
      OP_REQUIRES(ctx, values.dims() == 1,
                  absl::InvalidArgumentError(absl::StrCat("Values must be a vector, but received "
                                                          "shape",
                                                          values.shape().DebugString())));
      OP_REQUIRES(ctx, keys.NumElements() == values.NumElements(),
                  absl::InvalidArgumentError(absl::StrCat(
                      "Keys and values must have the same size ", keys.NumElements(), " vs ",
                      values.NumElements())));
    }
    OP_REQUIRES_OK(ctx, table->Import(keys, values));
  }

 private:
  bool initialize_ = false;
};

class LookupTableExportOp : public OpKernel {
 public:
  explicit LookupTableExportOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    LookupTable* table = Table(ctx);
    if (table == nullptr) return;
    OP_REQUIRES(ctx,
                table->key_dtype() == output_type(0) && table->value_dtype() == output_type(1),
                absl::InvalidArgumentError(absl::StrCat(
                    "LookupTableExportV2 of ", DataTypeString(output_type(0)), " -> ",
                    DataTypeString(output_type(1)), " from table ", table->name(), " of ",
                    DataTypeString(table->key_dtype()), " -> ",
                    DataTypeString(table->value_dtype()))));
    Tensor keys, values;
    OP_REQUIRES_OK(ctx, table->Export(&keys, &values));
    ctx->set_output(0, std::move(keys));
    ctx->set_output(1, std::move(values));
  }
};

class LookupTableSizeOp : public OpKernel {
 public:
  explicit LookupTableSizeOp(OpKernelConstruction* c) : OpKernel(c) { set_expensive(false); }
  void Compute(OpKernelContext* ctx) override {
    LookupTable* table = Table(ctx);
    if (table == nullptr) return;
    ctx->set_output(0, Tensor::Scalar<int64_t>(table->size()));
  }
};

class InitializeTableFromTextFileOp : public OpKernel {
 public:
  explicit InitializeTableFromTextFileOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("key_index", &columns_.key_index));
    OP_REQUIRES_OK(c, c->GetAttr("value_index", &columns_.value_index));
    OP_REQUIRES_OK(c, c->GetAttr("vocab_size", &columns_.vocab_size));
    OP_REQUIRES_OK(c, c->GetAttr("offset", &columns_.offset));
    std::string delimiter;
    OP_REQUIRES_OK(c, c->GetAttr("delimiter", &delimiter));
    OP_REQUIRES(c, delimiter.size() == 1,
                absl::InvalidArgumentError("delimiter should be only 1 char"));
    columns_.delimiter = delimiter[0];
  }
  void Compute(OpKernelContext* ctx) override {
    LookupTable* table = Table(ctx);
    if (table == nullptr) return;
    OP_REQUIRES(ctx, !table->is_mutable(),
                absl::InvalidArgumentError(absl::StrCat("Table localhost ", table->name(),
                                                        " is not initializable")));
    const Tensor& filename = ctx->input(1);
    OP_REQUIRES(ctx, filename.dims() == 0,
                absl::InvalidArgumentError(absl::StrCat(
                    "filename should be a single string, but got ",
                    filename.shape().DebugString())));
    const std::string& path = filename.flat<std::string>()[0];
    OP_REQUIRES(ctx, !path.empty(), absl::InvalidArgumentError("filename cannot be empty."));
    OP_REQUIRES_OK(ctx, InitializeTableFromTextFile(table, path, columns_));
  }

 private:
  TextFileColumns columns_;
};

REGISTER_KERNEL(KernelDefBuilder("HashTableV2").Device(kDeviceCpu), HashTableOp);
REGISTER_KERNEL(KernelDefBuilder("MutableHashTableV2").Device(kDeviceCpu), HashTableOp);
REGISTER_KERNEL(KernelDefBuilder("LookupTableFindV2").Device(kDeviceCpu), LookupTableFindOp);
REGISTER_KERNEL(KernelDefBuilder("LookupTableInsertV2").Device(kDeviceCpu), LookupTableInsertOp);
REGISTER_KERNEL(KernelDefBuilder("LookupTableRemoveV2").Device(kDeviceCpu), LookupTableRemoveOp);
REGISTER_KERNEL(KernelDefBuilder("LookupTableImportV2").Device(kDeviceCpu), LookupTableImportOp);
REGISTER_KERNEL(KernelDefBuilder("InitializeTableV2").Device(kDeviceCpu), LookupTableImportOp);
REGISTER_KERNEL(KernelDefBuilder("LookupTableExportV2").Device(kDeviceCpu), LookupTableExportOp);
REGISTER_KERNEL(KernelDefBuilder("LookupTableSizeV2").Device(kDeviceCpu), LookupTableSizeOp);
REGISTER_KERNEL(KernelDefBuilder("InitializeTableFromTextFileV2").Device(kDeviceCpu),
                InitializeTableFromTextFileOp);

}  // namespace
}  // namespace graphrun
