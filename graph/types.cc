#include "graph/types.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/strip.h"
#include "absl/strings/str_cat.h"

namespace graphrun {
namespace {

struct TypeName {
  DataType dtype;
  const char* name;
};

// TensorFlow's spellings (DataTypeStringInternal).
constexpr TypeName kTypeNames[] = {
    {DT_FLOAT, "float"},
    {DT_DOUBLE, "double"},
    {DT_INT32, "int32"},
    {DT_UINT8, "uint8"},
    {DT_INT16, "int16"},
    {DT_INT8, "int8"},
    {DT_STRING, "string"},
    {DT_COMPLEX64, "complex64"},
    {DT_INT64, "int64"},
    {DT_BOOL, "bool"},
    {DT_QINT8, "qint8"},
    {DT_QUINT8, "quint8"},
    {DT_QINT32, "qint32"},
    {DT_BFLOAT16, "bfloat16"},
    {DT_QINT16, "qint16"},
    {DT_QUINT16, "quint16"},
    {DT_UINT16, "uint16"},
    {DT_COMPLEX128, "complex128"},
    {DT_HALF, "half"},
    {DT_RESOURCE, "resource"},
    {DT_VARIANT, "variant"},
    {DT_UINT32, "uint32"},
    {DT_UINT64, "uint64"},
    {DT_FLOAT8_E5M2, "float8_e5m2"},
    {DT_FLOAT8_E4M3FN, "float8_e4m3fn"},
    {DT_FLOAT8_E4M3FNUZ, "float8_e4m3fnuz"},
    {DT_FLOAT8_E4M3B11FNUZ, "float8_e4m3b11fnuz"},
    {DT_FLOAT8_E5M2FNUZ, "float8_e5m2fnuz"},
    {DT_INT4, "int4"},
    {DT_UINT4, "uint4"},
    {DT_INT2, "int2"},
    {DT_UINT2, "uint2"},
    {DT_FLOAT4_E2M1FN, "float4_e2m1fn"},
};

constexpr int kRefOffset = 100;

}  // namespace

bool IsValidDataType(int value) { return DataType_IsValid(value); }

bool IsRefType(DataType dtype) {
  // Proto3 enums are open: a GraphDef may carry any number here.
  return dtype > kRefOffset && DataType_IsValid(dtype);
}

DataType BaseType(DataType dtype) {
  return IsRefType(dtype) ? static_cast<DataType>(dtype - kRefOffset) : dtype;
}

DataType MakeRefType(DataType dtype) {
  return IsRefType(dtype) ? dtype : static_cast<DataType>(dtype + kRefOffset);
}

std::string DataTypeString(DataType dtype) {
  if (IsRefType(dtype)) return DataTypeString(BaseType(dtype)) + "_ref";
  for (const TypeName& t : kTypeNames) {
    if (t.dtype == dtype) return t.name;
  }
  if (dtype == DT_INVALID) return "invalid";
  return absl::StrCat("unknown(", static_cast<int>(dtype), ")");
}

absl::StatusOr<DataType> DataTypeFromString(absl::string_view name) {
  std::string lower = absl::AsciiStrToLower(name);
  absl::string_view base = lower;
  if (absl::ConsumePrefix(&base, "dt_")) {
    // Enum spelling: DT_FLOAT, DT_FLOAT_REF.
  }
  bool ref = absl::ConsumeSuffix(&base, "_ref");
  for (const TypeName& t : kTypeNames) {
    if (base == t.name) return ref ? MakeRefType(t.dtype) : t.dtype;
  }
  // A few aliases users write.
  if (base == "float32") return ref ? DT_FLOAT_REF : DT_FLOAT;
  if (base == "float64") return ref ? DT_DOUBLE_REF : DT_DOUBLE;
  if (base == "float16") return ref ? DT_HALF_REF : DT_HALF;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown data type '", name, "'"));
}

int DataTypeSize(DataType dtype) {
  switch (dtype) {
    case DT_FLOAT: return 4;
    case DT_DOUBLE: return 8;
    case DT_INT32: return 4;
    case DT_UINT32: return 4;
    case DT_UINT16: return 2;
    case DT_UINT8: return 1;
    case DT_INT16: return 2;
    case DT_INT8: return 1;
    case DT_COMPLEX64: return 8;
    case DT_COMPLEX128: return 16;
    case DT_INT64: return 8;
    case DT_UINT64: return 8;
    case DT_BOOL: return 1;
    case DT_HALF: return 2;
    case DT_BFLOAT16: return 2;
    default: return 0;
  }
}

bool IsSupportedTensorType(DataType dtype) {
  return dtype == DT_STRING || dtype == DT_VARIANT || dtype == DT_RESOURCE ||
         DataTypeSize(dtype) > 0;
}

bool IsFloatingType(DataType dtype) {
  return dtype == DT_FLOAT || dtype == DT_DOUBLE || dtype == DT_HALF ||
         dtype == DT_BFLOAT16;
}

bool IsIntegerType(DataType dtype) {
  switch (dtype) {
    case DT_INT8: case DT_INT16: case DT_INT32: case DT_INT64:
    case DT_UINT8: case DT_UINT16: case DT_UINT32: case DT_UINT64:
      return true;
    default:
      return false;
  }
}

bool IsComplexType(DataType dtype) {
  return dtype == DT_COMPLEX64 || dtype == DT_COMPLEX128;
}

}  // namespace graphrun
