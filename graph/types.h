// DataType helpers: names, sizes, reference types, and the mapping between
// C++ element types and DataType values. Stateless; thread-safe.
#ifndef GRAPHRUN_GRAPH_TYPES_H_
#define GRAPHRUN_GRAPH_TYPES_H_

#include <complex>
#include <cstdint>
#include <string>

#include "Eigen/Core"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/protos/types.pb.h"

namespace graphrun {

using half = Eigen::half;
using bfloat16 = Eigen::bfloat16;
using complex64 = std::complex<float>;
using complex128 = std::complex<double>;

// "float", "int32", "half", "bfloat16", "float_ref"... as TensorFlow writes
// them in op signatures and messages. Unknown values print as "unknown(N)".
std::string DataTypeString(DataType dtype);

// Parses TensorFlow's type names ("float", "int64", "bool", "string"...),
// and the enum names ("DT_FLOAT"). InvalidArgument for anything else.
absl::StatusOr<DataType> DataTypeFromString(absl::string_view name);

// True for the DT_*_REF range (101..133).
bool IsRefType(DataType dtype);
// DT_FLOAT_REF -> DT_FLOAT; non-ref types unchanged.
DataType BaseType(DataType dtype);
// DT_FLOAT -> DT_FLOAT_REF.
DataType MakeRefType(DataType dtype);

// True for every value the DataType enum defines.
bool IsValidDataType(int value);

// Bytes per element for fixed-size types graphrun can hold in a Tensor; 0
// for DT_STRING (variable size) and for types it cannot hold.
int DataTypeSize(DataType dtype);

// True if a Tensor can hold elements of this type (see tensor.h): the
// fixed-size types, DT_STRING, DT_VARIANT and DT_RESOURCE.
bool IsSupportedTensorType(DataType dtype);

bool IsFloatingType(DataType dtype);  // half, bfloat16, float, double
bool IsIntegerType(DataType dtype);   // signed and unsigned integers
bool IsComplexType(DataType dtype);

// Compile-time mapping from C++ type to DataType.
template <typename T>
struct DataTypeToEnum;
#define GR_MATCH_TYPE_AND_ENUM(TYPE, ENUM)          \
  template <>                                      \
  struct DataTypeToEnum<TYPE> {                    \
    static constexpr DataType value = DataType::ENUM; \
  }
GR_MATCH_TYPE_AND_ENUM(float, DT_FLOAT);
GR_MATCH_TYPE_AND_ENUM(double, DT_DOUBLE);
GR_MATCH_TYPE_AND_ENUM(int32_t, DT_INT32);
GR_MATCH_TYPE_AND_ENUM(uint32_t, DT_UINT32);
GR_MATCH_TYPE_AND_ENUM(uint16_t, DT_UINT16);
GR_MATCH_TYPE_AND_ENUM(uint8_t, DT_UINT8);
GR_MATCH_TYPE_AND_ENUM(int16_t, DT_INT16);
GR_MATCH_TYPE_AND_ENUM(int8_t, DT_INT8);
GR_MATCH_TYPE_AND_ENUM(std::string, DT_STRING);
GR_MATCH_TYPE_AND_ENUM(complex64, DT_COMPLEX64);
GR_MATCH_TYPE_AND_ENUM(complex128, DT_COMPLEX128);
GR_MATCH_TYPE_AND_ENUM(int64_t, DT_INT64);
GR_MATCH_TYPE_AND_ENUM(uint64_t, DT_UINT64);
GR_MATCH_TYPE_AND_ENUM(bool, DT_BOOL);
GR_MATCH_TYPE_AND_ENUM(half, DT_HALF);
GR_MATCH_TYPE_AND_ENUM(bfloat16, DT_BFLOAT16);
#undef GR_MATCH_TYPE_AND_ENUM

// Calls `fn.template operator()<T>()`-style visitors: SwitchOnType(dtype, f)
// invokes f(T{}) with a value of the C++ type for `dtype`. Returns false if
// the type is not one a Tensor can hold.
template <typename F>
bool VisitDataType(DataType dtype, F&& f) {
  switch (dtype) {
    case DT_FLOAT: f(float{}); return true;
    case DT_DOUBLE: f(double{}); return true;
    case DT_INT32: f(int32_t{}); return true;
    case DT_UINT32: f(uint32_t{}); return true;
    case DT_UINT16: f(uint16_t{}); return true;
    case DT_UINT8: f(uint8_t{}); return true;
    case DT_INT16: f(int16_t{}); return true;
    case DT_INT8: f(int8_t{}); return true;
    case DT_STRING: f(std::string{}); return true;
    case DT_COMPLEX64: f(complex64{}); return true;
    case DT_COMPLEX128: f(complex128{}); return true;
    case DT_INT64: f(int64_t{}); return true;
    case DT_UINT64: f(uint64_t{}); return true;
    case DT_BOOL: f(bool{}); return true;
    case DT_HALF: f(half{}); return true;
    case DT_BFLOAT16: f(bfloat16{}); return true;
    default: return false;
  }
}

}  // namespace graphrun

#endif  // GRAPHRUN_GRAPH_TYPES_H_
