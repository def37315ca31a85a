// Maximum and Minimum on CPU, with broadcasting. A NaN operand gives NaN, as
// TensorFlow's functor::maximum / minimum (Eigen::PropagateNaN).
#include "kernels/cpu/cwise_common.h"

namespace graphrun {
namespace cwise {
namespace {

template <typename T>
using Maximum =
    BinaryOp<T, T, Eigen::internal::scalar_max_op<T, T, Eigen::PropagateNaN>>;
template <typename T>
using Minimum =
    BinaryOp<T, T, Eigen::internal::scalar_min_op<T, T, Eigen::PropagateNaN>>;

#define GR_REGISTER_MINMAX(T)                   \
  GR_CWISE_REGISTER("Maximum", T, Maximum<T>);  \
  GR_CWISE_REGISTER("Minimum", T, Minimum<T>)

GR_REGISTER_MINMAX(float);
GR_REGISTER_MINMAX(double);
GR_REGISTER_MINMAX(half);
GR_REGISTER_MINMAX(bfloat16);
GR_REGISTER_MINMAX(int8_t);
GR_REGISTER_MINMAX(int16_t);
GR_REGISTER_MINMAX(int32_t);
GR_REGISTER_MINMAX(int64_t);
GR_REGISTER_MINMAX(uint8_t);
#undef GR_REGISTER_MINMAX

}  // namespace
}  // namespace cwise
}  // namespace graphrun
