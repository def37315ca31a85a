// Equal and NotEqual (real, complex, bool and string; incompatible_shape_error =
// false makes shapes that do not broadcast give a scalar false / true), and
// LogicalAnd / LogicalOr, on CPU with broadcasting.
#include <cstdint>
#include <string>

#include "kernels/cpu/cwise_common.h"

namespace graphrun {
namespace cwise {
namespace {

template <typename T>
struct EqualFn {
  bool operator()(const T& a, const T& b) const { return a == b; }
};
template <typename T>
struct NotEqualFn {
  bool operator()(const T& a, const T& b) const { return a != b; }
};

// Integers and bools compare equal exactly when their bits do, so each
// width shares one unsigned instantiation. Floating types compare as
// themselves (NaN != NaN, -0 == 0).
#define GR_REGISTER_EQUALITY(T, AS)                                          \
  GR_CWISE_REGISTER("Equal", T, BinaryOp<AS, bool, EqualFn<AS>>);           \
  GR_CWISE_REGISTER("NotEqual", T, BinaryOp<AS, bool, NotEqualFn<AS>>)

GR_REGISTER_EQUALITY(float, float);
GR_REGISTER_EQUALITY(double, double);
GR_REGISTER_EQUALITY(half, half);
GR_REGISTER_EQUALITY(bfloat16, bfloat16);
GR_REGISTER_EQUALITY(int8_t, uint8_t);
GR_REGISTER_EQUALITY(uint8_t, uint8_t);
GR_REGISTER_EQUALITY(bool, uint8_t);
GR_REGISTER_EQUALITY(int16_t, uint16_t);
GR_REGISTER_EQUALITY(uint16_t, uint16_t);
GR_REGISTER_EQUALITY(int32_t, uint32_t);
GR_REGISTER_EQUALITY(uint32_t, uint32_t);
GR_REGISTER_EQUALITY(int64_t, uint64_t);
GR_REGISTER_EQUALITY(uint64_t, uint64_t);
GR_REGISTER_EQUALITY(complex64, complex64);
GR_REGISTER_EQUALITY(complex128, complex128);
GR_REGISTER_EQUALITY(std::string, std::string);
#undef GR_REGISTER_EQUALITY

REGISTER_KERNEL(KernelDefBuilder("LogicalAnd").Device(kDeviceCpu),
                BinaryOp<bool, bool, Eigen::internal::scalar_boolean_and_op>);
REGISTER_KERNEL(KernelDefBuilder("LogicalOr").Device(kDeviceCpu),
                BinaryOp<bool, bool, Eigen::internal::scalar_boolean_or_op>);

}  // namespace
}  // namespace cwise
}  // namespace graphrun
