// A lookup table: the object behind HashTableV2 and MutableHashTableV2
// handles (graph/ops/lookup_ops.cc), with TensorFlow's semantics and
// messages (core/kernels/lookup_table_op.h, initializable_lookup_table.cc,
// framework/lookup_interface.cc). It maps scalar keys to scalar values of
// one dtype each and lives in its device's ResourceMgr, keyed like a
// variable by (container, shared name), so the run that initializes it and
// the runs that read it share it.
//
// A hash table (HashTableV2) is initialized once, all of it at a time,
// then read-only; finding in it before that is FailedPrecondition "Table
// not initialized.". A mutable table (MutableHashTableV2) takes inserts,
// removals and imports at any time and finds at any time.
//
// Keys: string, int32, int64. Values: string, int32, int64, float, double,
// bool.
//
// Thread-safe.
#ifndef GRAPHRUN_KERNELS_LOOKUP_TABLE_H_
#define GRAPHRUN_KERNELS_LOOKUP_TABLE_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "graph/tensor.h"
#include "graph/variant.h"

namespace graphrun {

class LookupTable : public ResourceBase {
 public:
  DataType key_dtype() const { return key_dtype_; }
  DataType value_dtype() const { return value_dtype_; }
  bool is_mutable() const { return mutable_; }
  const std::string& name() const { return name_; }

  // "HashTable(<name>: string -> int64, 6 entries)".
  std::string DebugString() const override;

  // Hash tables: whether an initializer has filled it. Mutable: true.
  virtual bool initialized() const = 0;
  // Entries (0 for a hash table not yet initialized).
  virtual int64_t size() const = 0;

  // Values of `keys` into `values` (allocated by the caller: the keys'
  // shape, value_dtype()); a missing key gets `default_value`, a scalar or
  // one element per key. Checks dtypes and the default's shape as
  // TensorFlow does.
  absl::Status Find(const Tensor& keys, const Tensor& default_value, Tensor* values) const;

  // Hash table: fills it from `keys` and `values` (one value per key) and
  // marks it initialized. Once initialized: OK when the table has as many
  // entries as the data, else FailedPrecondition "Table was already
  // initialized with different data.". Mutable table: replaces every entry.
  // A key seen twice with different values is FailedPrecondition.
  absl::Status Import(const Tensor& keys, const Tensor& values);

  // Mutable tables only: sets (removes) the entries of `keys`.
  absl::Status Insert(const Tensor& keys, const Tensor& values);
  absl::Status Remove(const Tensor& keys);

  // Every entry, as two vectors (unordered, as TensorFlow's).
  absl::Status Export(Tensor* keys, Tensor* values) const;

 protected:
  LookupTable(std::string name, DataType key_dtype, DataType value_dtype, bool mutable_table)
      : name_(std::move(name)),
        key_dtype_(key_dtype),
        value_dtype_(value_dtype),
        mutable_(mutable_table) {}

  // Typed work, after the checks above.
  virtual void DoFind(const Tensor& keys, const Tensor& default_value, Tensor* values) const = 0;
  virtual absl::Status DoImport(const Tensor& keys, const Tensor& values) = 0;
  virtual void DoInsert(const Tensor& keys, const Tensor& values) = 0;
  virtual void DoRemove(const Tensor& keys) = 0;
  virtual absl::Status DoExport(Tensor* keys, Tensor* values) const = 0;

 private:
  absl::Status CheckTypes(const Tensor& keys, const Tensor& values) const;
  absl::Status CheckKeysAndValues(const Tensor& keys, const Tensor& values) const;

  const std::string name_;
  const DataType key_dtype_, value_dtype_;
  const bool mutable_;
};

// A new empty table; InvalidArgument for dtypes it does not hold.
absl::StatusOr<std::shared_ptr<LookupTable>> NewLookupTable(std::string name,
                                                            DataType key_dtype,
                                                            DataType value_dtype,
                                                            bool mutable_table);

// The table a DT_RESOURCE scalar points to; InvalidArgument otherwise.
absl::StatusOr<LookupTable*> TableOf(const Tensor& handle);

// How InitializeTableFromTextFileV2 reads a file (TensorFlow's
// lookup_util.cc): one entry per line; a line's key and value are column
// `key_index` / `value_index` of the line split at `delimiter`, or -2 the
// whole line, or -1 the line number plus `offset`; `vocab_size` >= 0 reads
// that many lines and fails when the file has fewer.
struct TextFileColumns {
  int64_t key_index = -2;
  int64_t value_index = -1;
  int64_t vocab_size = -1;
  char delimiter = '\t';
  int64_t offset = 0;
};

// Initializes hash table `table` from `filename` as TensorFlow does. A
// table already initialized is left as it is (OK). A missing file is
// NotFound naming it; an empty line, too few columns or a field that does
// not parse as the dtype is InvalidArgument naming the file and line.
absl::Status InitializeTableFromTextFile(LookupTable* table, const std::string& filename,
                                         const TextFileColumns& columns);

}  // namespace graphrun

#endif  // GRAPHRUN_KERNELS_LOOKUP_TABLE_H_
