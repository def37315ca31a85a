// Add, AddV2, Sub and Mul on CPU, with broadcasting (cwise_common.h). Add
// also concatenates strings, as TensorFlow's.
#include <string>

#include "kernels/cpu/cwise_common.h"

namespace graphrun {
namespace cwise {
namespace {

template <typename T>
using Add = BinaryOp<T, T, Eigen::internal::scalar_sum_op<T>>;
template <typename T>
using Sub = BinaryOp<T, T, Eigen::internal::scalar_difference_op<T>>;
template <typename T>
using Mul = BinaryOp<T, T, Eigen::internal::scalar_product_op<T>>;

#define GR_REGISTER_ARITH(T)                \
  GR_CWISE_REGISTER("Add", T, Add<T>);      \
  GR_CWISE_REGISTER("AddV2", T, Add<T>);    \
  GR_CWISE_REGISTER("Sub", T, Sub<T>);      \
  GR_CWISE_REGISTER("Mul", T, Mul<T>)

GR_REGISTER_ARITH(float);
GR_REGISTER_ARITH(double);
GR_REGISTER_ARITH(half);
GR_REGISTER_ARITH(bfloat16);
GR_REGISTER_ARITH(int8_t);
GR_REGISTER_ARITH(int16_t);
GR_REGISTER_ARITH(int32_t);
GR_REGISTER_ARITH(int64_t);
GR_REGISTER_ARITH(uint8_t);
#undef GR_REGISTER_ARITH

struct Concat {
  std::string operator()(const std::string& a, const std::string& b) const {
    return a + b;
  }
};
GR_CWISE_REGISTER("Add", std::string, BinaryOp<std::string, std::string, Concat>);

}  // namespace
}  // namespace cwise
}  // namespace graphrun
