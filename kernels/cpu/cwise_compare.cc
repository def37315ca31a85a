// Less, LessEqual, Greater and GreaterEqual on CPU (bool output, with
// broadcasting). Greater(x, y) runs as Less(y, x), and GreaterEqual as
// LessEqual swapped, which also holds for NaN (every comparison false).
#include "kernels/cpu/cwise_common.h"

namespace graphrun {
namespace cwise {
namespace {

template <typename T>
struct LessFn {
  bool operator()(const T& a, const T& b) const { return a < b; }
};
template <typename T>
struct LessEqualFn {
  bool operator()(const T& a, const T& b) const { return a <= b; }
};

#define GR_REGISTER_COMPARE(T)                                              \
  GR_CWISE_REGISTER("Less", T, BinaryOp<T, bool, LessFn<T>>);               \
  GR_CWISE_REGISTER("LessEqual", T, BinaryOp<T, bool, LessEqualFn<T>>);     \
  GR_CWISE_REGISTER("Greater", T, SwappedBinaryOp<T, bool, LessFn<T>>);     \
  GR_CWISE_REGISTER("GreaterEqual", T,                                      \
                    SwappedBinaryOp<T, bool, LessEqualFn<T>>)

GR_REGISTER_COMPARE(float);
GR_REGISTER_COMPARE(double);
GR_REGISTER_COMPARE(half);
GR_REGISTER_COMPARE(bfloat16);
GR_REGISTER_COMPARE(int8_t);
GR_REGISTER_COMPARE(int16_t);
GR_REGISTER_COMPARE(int32_t);
GR_REGISTER_COMPARE(int64_t);
GR_REGISTER_COMPARE(uint8_t);
GR_REGISTER_COMPARE(uint16_t);
GR_REGISTER_COMPARE(uint32_t);
GR_REGISTER_COMPARE(uint64_t);
#undef GR_REGISTER_COMPARE

}  // namespace
}  // namespace cwise
}  // namespace graphrun
