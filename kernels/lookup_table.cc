#include "kernels/lookup_table.h"

#include <algorithm>
#include <cstdio>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "graph/status_macros.h"

namespace graphrun {
namespace {

template <typename T>
std::string Text(const T& v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v ? "1" : "0";
  } else {
    return absl::StrCat(v);
  }
}

template <typename K, typename V>
class TypedTable : public LookupTable {
 public:
  TypedTable(std::string name, bool mutable_table)
      : LookupTable(std::move(name), DataTypeToEnum<K>::value, DataTypeToEnum<V>::value,
                    mutable_table) {}

  bool initialized() const override {
    absl::MutexLock lock(&mu_);
    return is_mutable() || initialized_;
  }
  int64_t size() const override {
    absl::MutexLock lock(&mu_);
    return static_cast<int64_t>(map_.size());
  }

 protected:
  void DoFind(const Tensor& keys, const Tensor& default_value, Tensor* values) const override {
    absl::MutexLock lock(&mu_);
    auto k = keys.flat<K>();
    auto d = default_value.flat<V>();
    auto out = values->flat<V>();
    // A HashTable takes the default's first element for every missing key;
    // a MutableHashTable, a default the keys' size key by key.
    const bool one_default = !is_mutable() || (d.size() == 1 && default_value.dims() == 0);
    for (size_t i = 0; i < k.size(); ++i) {
      auto it = map_.find(k[i]);
      out[i] = it != map_.end() ? it->second : d[one_default ? 0 : i];
    }
  }

  absl::Status DoImport(const Tensor& keys, const Tensor& values) override {
    auto k = keys.flat<K>();
    auto v = values.flat<V>();
    absl::MutexLock lock(&mu_);
    if (!is_mutable() && initialized_) {
      if (map_.size() == k.size()) return absl::OkStatus();
      return absl::FailedPreconditionError("Table was already initialized with different data.");
    }
    std::unordered_map<K, V> fresh;
    for (size_t i = 0; i < k.size(); ++i) {
      auto [it, inserted] = fresh.emplace(k[i], v[i]);
      if (!inserted && !is_mutable() && !(it->second == v[i])) {
        return absl::FailedPreconditionError(absl::StrCat(
            "HashTable has different value for same key. Key ", Text(k[i]), " has ",
            Text(it->second), " and trying to add value ", Text(static_cast<V>(v[i]))));
      }
      if (!inserted) it->second = v[i];
    }
    map_ = std::move(fresh);
    initialized_ = true;
    return absl::OkStatus();
  }

  void DoInsert(const Tensor& keys, const Tensor& values) override {
    auto k = keys.flat<K>();
    auto v = values.flat<V>();
    absl::MutexLock lock(&mu_);
    for (size_t i = 0; i < k.size(); ++i) map_[k[i]] = v[i];
  }

  void DoRemove(const Tensor& keys) override {
    absl::MutexLock lock(&mu_);
    for (const K& key : keys.flat<K>()) map_.erase(key);
  }

  absl::Status DoExport(Tensor* keys, Tensor* values) const override {
    absl::MutexLock lock(&mu_);
    if (!is_mutable() && !initialized_) {
      return absl::AbortedError("HashTable is not initialized.");
    }
    const int64_t n = static_cast<int64_t>(map_.size());
    *keys = Tensor(key_dtype(), TensorShape({n}));
    *values = Tensor(value_dtype(), TensorShape({n}));
    auto k = keys->flat<K>();
    auto v = values->flat<V>();
    int64_t i = 0;
    for (const auto& [key, value] : map_) {
      k[i] = key;
      v[i] = value;
      ++i;
    }
    return absl::OkStatus();
  }

 private:
  mutable absl::Mutex mu_;
  std::unordered_map<K, V> map_ ABSL_GUARDED_BY(mu_);
  bool initialized_ ABSL_GUARDED_BY(mu_) = false;
};

template <typename K>
std::shared_ptr<LookupTable> WithValues(std::string name, DataType value_dtype, bool mutable_table) {
  switch (value_dtype) {
    case DT_STRING: return std::make_shared<TypedTable<K, std::string>>(std::move(name), mutable_table);
    case DT_INT32: return std::make_shared<TypedTable<K, int32_t>>(std::move(name), mutable_table);
    case DT_INT64: return std::make_shared<TypedTable<K, int64_t>>(std::move(name), mutable_table);
    case DT_FLOAT: return std::make_shared<TypedTable<K, float>>(std::move(name), mutable_table);
    case DT_DOUBLE: return std::make_shared<TypedTable<K, double>>(std::move(name), mutable_table);
    case DT_BOOL: return std::make_shared<TypedTable<K, bool>>(std::move(name), mutable_table);
    default: return nullptr;
  }
}

// One field of a text-file line as a scalar of `dtype` (TensorFlow's
// TextFileLineIterator::SetValue).
absl::Status ParseField(const std::string& token, DataType dtype, int64_t line, int64_t offset,
                        Tensor* out, int64_t i) {
  auto bad = [&](const char* type) {
    return absl::InvalidArgumentError(
        absl::StrCat("Field ", token, " in line ", line, " is not a valid ", type, "."));
  };
  switch (dtype) {
    case DT_INT32: {
      int32_t v = 0;
      if (!absl::SimpleAtoi(token, &v)) return bad("int32");
      out->flat<int32_t>()[i] = static_cast<int32_t>(v + offset);  // as TensorFlow does
      return absl::OkStatus();
    }
    case DT_INT64: {
      int64_t v = 0;
      if (!absl::SimpleAtoi(token, &v)) return bad("int64");
      out->flat<int64_t>()[i] = v;
      return absl::OkStatus();
    }
    case DT_FLOAT: {
      float v = 0;
      if (!absl::SimpleAtof(token, &v)) return bad("float");
      out->flat<float>()[i] = v;
      return absl::OkStatus();
    }
    case DT_DOUBLE: {
      double v = 0;
      if (!absl::SimpleAtod(token, &v)) return bad("double");
      out->flat<double>()[i] = v;
      return absl::OkStatus();
    }
    case DT_STRING:
      out->flat<std::string>()[i] = token;
      return absl::OkStatus();
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("Data type ", DataTypeString(dtype), " not supported."));
  }
}

}  // namespace

std::string LookupTable::DebugString() const {
  return absl::StrCat(mutable_ ? "MutableHashTable(" : "HashTable(", name_, ": ",
                      DataTypeString(key_dtype_), " -> ", DataTypeString(value_dtype_), ", ",
                      size(), " entries)");
}

absl::Status LookupTable::CheckTypes(const Tensor& keys, const Tensor& values) const {
  if (keys.dtype() != key_dtype_) {
    return absl::InvalidArgumentError(absl::StrCat("Key must be type ", DataTypeString(key_dtype_),
                                                   " but got ", DataTypeString(keys.dtype())));
  }
  if (values.dtype() != value_dtype_) {
    return absl::InvalidArgumentError(
        absl::StrCat("Value must be type ", DataTypeString(value_dtype_), " but got ",
                     DataTypeString(values.dtype())));
  }
  return absl::OkStatus();
}

absl::Status LookupTable::CheckKeysAndValues(const Tensor& keys, const Tensor& values) const {
  GR_RETURN_IF_ERROR(CheckTypes(keys, values));
  if (values.shape() != keys.shape()) {
    return absl::InvalidArgumentError(absl::StrCat("Expected shape ", keys.shape().DebugString(),
                                                   " for value, got ",
                                                   values.shape().DebugString()));
  }
  return absl::OkStatus();
}

absl::Status LookupTable::Find(const Tensor& keys, const Tensor& default_value,
                               Tensor* values) const {
  GR_RETURN_IF_ERROR(CheckTypes(keys, default_value));
  if (default_value.dims() != 0 && default_value.shape() != keys.shape()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Expected shape [] or ", keys.shape().DebugString(), " for default value, got ",
        default_value.shape().DebugString()));
  }
  if (!initialized()) return absl::FailedPreconditionError("Table not initialized.");
  DoFind(keys, default_value, values);
  return absl::OkStatus();
}

absl::Status LookupTable::Import(const Tensor& keys, const Tensor& values) {
  GR_RETURN_IF_ERROR(CheckKeysAndValues(keys, values));
  return DoImport(keys, values);
}

absl::Status LookupTable::Insert(const Tensor& keys, const Tensor& values) {
  if (!mutable_) {
    return absl::UnimplementedError(
        "Insert not supported by InitializableLookupTable implementations");
  }
  GR_RETURN_IF_ERROR(CheckKeysAndValues(keys, values));
  DoInsert(keys, values);
  return absl::OkStatus();
}

absl::Status LookupTable::Remove(const Tensor& keys) {
  if (!mutable_) {
    return absl::UnimplementedError(
        "Remove not supported by InitializableLookupTable implementations");
  }
  if (keys.dtype() != key_dtype_) {
    return absl::InvalidArgumentError(absl::StrCat("Key must be type ", DataTypeString(key_dtype_),
                                                   " but got ", DataTypeString(keys.dtype())));
  }
  DoRemove(keys);
  return absl::OkStatus();
}

absl::Status LookupTable::Export(Tensor* keys, Tensor* values) const {
  return DoExport(keys, values);
}

absl::StatusOr<std::shared_ptr<LookupTable>> NewLookupTable(std::string name, DataType key_dtype,
                                                            DataType value_dtype,
                                                            bool mutable_table) {
  std::shared_ptr<LookupTable> table;
  switch (key_dtype) {
    case DT_STRING: table = WithValues<std::string>(name, value_dtype, mutable_table); break;
    case DT_INT32: table = WithValues<int32_t>(name, value_dtype, mutable_table); break;
    case DT_INT64: table = WithValues<int64_t>(name, value_dtype, mutable_table); break;
    default: break;
  }
  if (table == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "no lookup table maps ", DataTypeString(key_dtype), " to ", DataTypeString(value_dtype),
        " (keys: string, int32, int64; values: string, int32, int64, float, double, bool)"));
  }
  return table;
}

absl::StatusOr<LookupTable*> TableOf(const Tensor& handle) {
  LookupTable* table = handle.dtype() == DT_RESOURCE && handle.NumElements() == 1
                           ? handle.flat<ResourceHandle>()[0].get<LookupTable>()
                           : nullptr;
  if (table == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "table_handle must be a handle to a lookup table, got a ",
        DataTypeString(handle.dtype()), " tensor of shape ", handle.shape().DebugString()));
  }
  return table;
}

absl::Status InitializeTableFromTextFile(LookupTable* table, const std::string& filename,
                                         const TextFileColumns& columns) {
  const DataType kt = table->key_dtype(), vt = table->value_dtype();
  auto integer_or_string = [](DataType t) {
    return t == DT_INT32 || t == DT_INT64 || t == DT_STRING;
  };
  if (columns.key_index == -1 && kt != DT_INT64) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Key index for line number requires table key dtype of int64, got ",
        DataTypeString(kt)));
  }
  if (columns.key_index == -2 && !integer_or_string(kt)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Key index for whole line requires string or integer table key, got ",
        DataTypeString(kt)));
  }
  if (columns.value_index == -1 && vt != DT_INT64) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Value index for line number requires table value dtype of int64, got ",
        DataTypeString(vt)));
  }
  if (columns.value_index == -2 && !integer_or_string(vt)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Value index for whole line requires table value dtype of integer or string, got ",
        DataTypeString(vt)));
  }
  std::FILE* f = std::fopen(filename.c_str(), "rb");
  if (f == nullptr) {
    return absl::NotFoundError(absl::StrCat(filename, "; No such file or directory"));
  }
  std::string data;
  char buf[1 << 16];
  for (size_t n; (n = std::fread(buf, 1, sizeof(buf), f)) > 0;) data.append(buf, n);
  std::fclose(f);
  if (table->initialized()) return absl::OkStatus();  // TensorFlow ignores a second init

  // Lines end at '\n' (a '\r' before it is dropped); the last may lack one.
  std::vector<std::pair<std::string, size_t>> lines;  // line, offset after it
  for (size_t pos = 0; pos < data.size();) {
    size_t nl = data.find('\n', pos);
    const size_t end = nl == std::string::npos ? data.size() : nl;
    std::string line = data.substr(pos, end - pos);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    pos = nl == std::string::npos ? data.size() : nl + 1;
    lines.emplace_back(std::move(line), pos);
  }
  int64_t n = static_cast<int64_t>(lines.size());
  if (columns.vocab_size >= 0) {
    if (n < columns.vocab_size) {
      return absl::InvalidArgumentError(absl::StrCat("Invalid vocab_size in ", filename,
                                                     ": expected ", columns.vocab_size,
                                                     " but got ", n));
    }
    n = columns.vocab_size;
  }
  if (n == 0) {
    return absl::OutOfRangeError(
        absl::StrCat("Read less bytes than requested (", filename, " is empty)"));
  }
  Tensor keys(kt, TensorShape({n}));
  Tensor values(vt, TensorShape({n}));
  const int64_t columns_needed = std::max(columns.key_index, columns.value_index) + 1;
  for (int64_t i = 0; i < n; ++i) {
    const std::string& line = lines[i].first;
    if (line.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("Invalid content in ", filename,
                                                     ": empty line found at position ",
                                                     lines[i].second, "."));
    }
    std::vector<std::string> tokens;
    if (columns_needed > 0) {
      tokens = absl::StrSplit(line, columns.delimiter);
      if (static_cast<int64_t>(tokens.size()) < columns_needed) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Invalid number of columns in ", filename, " line ", i, " (", line,
            ") : expected at least ", columns_needed, " got ", tokens.size()));
      }
    }
    for (auto [index, out] : {std::make_pair(columns.key_index, &keys),
                              std::make_pair(columns.value_index, &values)}) {
      if (index == -1) {
        out->flat<int64_t>()[i] = i + columns.offset;
        continue;
      }
      const std::string& token = index == -2 ? line : tokens[index];
      absl::Status s = ParseField(token, out->dtype(), i, columns.offset, out, i);
      if (!s.ok()) return absl::Status(s.code(), absl::StrCat(s.message(), " (", filename, ")"));
    }
  }
  return table->Import(keys, values);
}

}  // namespace graphrun
