// kernels/gpu/gpu_launch.h over FakeGpuPlatform: every launcher queues its
// work on the fake stream it is given (the fake's native stream is the
// GpuStream itself), where it runs on host memory in order with the
// stream's copies. Linked instead of the CUDA launchers (//runtime/gpu:
// gpu_kernels_on_fake), it lets the GPU OpKernels run whole sessions on CPU:
// their shapes, host-memory arguments, allocations, plans and launcher
// arguments are checked against the CPU kernels without a GPU. The
// arithmetic is plain host code written from the launchers' contracts; the
// CUDA kernels' own bodies are what only a GPU run checks.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <limits>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "graph/types.h"
#include "kernels/gpu/array_plans.h"
#include "kernels/gpu/gpu_launch.h"
#include "runtime/gpu/testing/fake_launch_util.h"
#include "runtime/gpu/testing/fake_spans.h"

namespace graphrun {
namespace gpu {
namespace {

using fake::Batched;
using fake::CopySpan;
using fake::DeviceSpan;
using fake::ElementBytes;
using fake::IndexBytes;
using fake::InputElements;
using fake::OnDevice;
using fake::Queue;
using fake::SpanOf;

absl::Status ElementBytesOk(int element_bytes) {
  if (element_bytes == 1 || element_bytes == 2 || element_bytes == 4 || element_bytes == 8) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      absl::StrCat("no GPU copy of ", element_bytes, "-byte elements"));
}

// Returns the error of OnDevice over the DeviceSpans `...` when there are
// elements to touch (the spans are only evaluated then).
#define GR_FAKE_ON_DEVICE(n, what, ...)                                \
  do {                                                                 \
    if ((n) > 0) {                                                     \
      absl::Status gr_device_ = OnDevice(stream, what, {__VA_ARGS__}); \
      if (!gr_device_.ok()) return gr_device_;                         \
    }                                                                  \
  } while (0)

int64_t Elements(const BroadcastShape& s) {
  int64_t n = 1;
  for (int d = 0; d < s.rank; ++d) n *= s.dims[d];
  return n;
}

// Offsets of output element i in x, y and the condition.
void Offsets(const BroadcastShape& s, int64_t i, int64_t* xi, int64_t* yi, int64_t* ci) {
  *xi = *yi = *ci = 0;
  for (int d = s.rank - 1; d >= 0; --d) {
    const int64_t c = i % s.dims[d];
    i /= s.dims[d];
    *xi += c * s.x_strides[d];
    *yi += c * s.y_strides[d];
    *ci += c * s.c_strides[d];
  }
}

float ToFloat(ElementType t, const void* p, int64_t i) {
  switch (t) {
    case ElementType::kFloat:
      return static_cast<const float*>(p)[i];
    case ElementType::kHalf:
      return static_cast<float>(static_cast<const half*>(p)[i]);
    case ElementType::kBfloat16:
      return static_cast<float>(static_cast<const bfloat16*>(p)[i]);
  }
  return 0;
}

void FromFloat(ElementType t, float v, void* p, int64_t i) {
  switch (t) {
    case ElementType::kFloat:
      static_cast<float*>(p)[i] = v;
      break;
    case ElementType::kHalf:
      static_cast<half*>(p)[i] = half(v);
      break;
    case ElementType::kBfloat16:
      static_cast<bfloat16*>(p)[i] = bfloat16(v);
      break;
  }
}

float Activate(Activation act, float v, float alpha) {
  switch (act) {
    case Activation::kNone:
      return v;
    case Activation::kRelu:
      return v > 0 ? v : 0;
    case Activation::kRelu6:
      return std::min(std::max(v, 0.0f), 6.0f);
    case Activation::kElu:
      return v > 0 ? v : std::expm1(v);
    case Activation::kLeakyRelu:
      return v > 0 ? v : v * alpha;
    case Activation::kTanh:
      return std::tanh(v);
    case Activation::kSigmoid:
      return 1.0f / (1.0f + std::exp(-v));
  }
  return v;
}

float ApplyUnary(UnaryOp op, float x, float alpha) {
  switch (op) {
    case UnaryOp::kNeg:
      return -x;
    case UnaryOp::kAbs:
      return std::fabs(x);
    case UnaryOp::kSquare:
      return x * x;
    case UnaryOp::kSqrt:
      return std::sqrt(x);
    case UnaryOp::kRsqrt:
      return 1.0f / std::sqrt(x);
    case UnaryOp::kExp:
      return std::exp(x);
    case UnaryOp::kLog:
      return std::log(x);
    case UnaryOp::kTanh:
      return std::tanh(x);
    case UnaryOp::kSigmoid:
      return 1.0f / (1.0f + std::exp(-x));
    case UnaryOp::kRelu:
      return x > 0 ? x : 0;
    case UnaryOp::kRelu6:
      return std::min(std::max(x, 0.0f), 6.0f);
    case UnaryOp::kElu:
      return x > 0 ? x : std::expm1(x);
    case UnaryOp::kSoftplus:
      return x > 20 ? x : std::log1p(std::exp(x));
    case UnaryOp::kReciprocal:
      return 1.0f / x;
    case UnaryOp::kErf:
      return std::erf(x);
    case UnaryOp::kErfc:
      return std::erfc(x);
    case UnaryOp::kFloor:
      return std::floor(x);
    case UnaryOp::kCeil:
      return std::ceil(x);
    case UnaryOp::kRint:
      return std::nearbyint(x);
    case UnaryOp::kSign:
      return x > 0 ? 1.0f : (x < 0 ? -1.0f : x);
    case UnaryOp::kLog1p:
      return std::log1p(x);
    case UnaryOp::kExpm1:
      return std::expm1(x);
    case UnaryOp::kSin:
      return std::sin(x);
    case UnaryOp::kCos:
      return std::cos(x);
    case UnaryOp::kSoftsign:
      return x / (1.0f + std::fabs(x));
    case UnaryOp::kSelu:
      return x > 0 ? 1.0507009873554804934f * x
                   : 1.0507009873554804934f * 1.6732632423543772848f * std::expm1(x);
    case UnaryOp::kLeakyRelu:
      return x > 0 ? x : x * alpha;
  }
  return x;
}

float ApplyBinary(BinaryOp op, float x, float y) {
  switch (op) {
    case BinaryOp::kAdd:
      return x + y;
    case BinaryOp::kSub:
      return x - y;
    case BinaryOp::kMul:
      return x * y;
    case BinaryOp::kDiv:
      return x / y;
    case BinaryOp::kMaximum:
      return std::fmax(x, y);
    case BinaryOp::kMinimum:
      return std::fmin(x, y);
    case BinaryOp::kSquaredDifference:
      return (x - y) * (x - y);
    case BinaryOp::kPow:
      return std::pow(x, y);
    case BinaryOp::kFloorDiv:
      return std::floor(x / y);
    case BinaryOp::kFloorMod: {
      const float r = std::fmod(x, y);
      return r != 0 && ((y < 0) != (r < 0)) ? r + y : r;
    }
    case BinaryOp::kDivNoNan:
      return y == 0 ? 0.0f : x / y;
  }
  return x;
}

bool ApplyCompare(CompareOp op, float a, float b) {
  switch (op) {
    case CompareOp::kLess:
      return a < b;
    case CompareOp::kLessEqual:
      return a <= b;
    case CompareOp::kGreater:
      return a > b;
    case CompareOp::kGreaterEqual:
      return a >= b;
    case CompareOp::kEqual:
      return a == b;
    case CompareOp::kNotEqual:
      return a != b;
  }
  return false;
}

template <typename Fn>
void VisitCast(CastType t, Fn&& fn) {
  switch (t) {
    case CastType::kFloat:
      fn(float{});
      break;
    case CastType::kHalf:
      fn(half{});
      break;
    case CastType::kBfloat16:
      fn(bfloat16{});
      break;
    case CastType::kDouble:
      fn(double{});
      break;
    case CastType::kInt32:
      fn(int32_t{});
      break;
    case CastType::kInt64:
      fn(int64_t{});
      break;
    case CastType::kBool:
      fn(bool{});
      break;
  }
}

template <typename T>
double AsDouble(T v) {
  return static_cast<double>(static_cast<float>(v));
}
template <>
double AsDouble<double>(double v) {
  return v;
}
template <>
double AsDouble<int64_t>(int64_t v) {
  return static_cast<double>(v);
}
template <>
double AsDouble<int32_t>(int32_t v) {
  return static_cast<double>(v);
}
template <>
double AsDouble<bool>(bool v) {
  return v ? 1.0 : 0.0;
}

// The bytes of one element of `t`.
int64_t CastBytes(CastType t) {
  int64_t bytes = 0;
  VisitCast(t, [&](auto zero) { bytes = sizeof(zero); });
  return bytes;
}

}  // namespace

absl::Status Gemm(void* stream, ElementType type, bool transpose_a, bool transpose_b, int64_t m,
                  int64_t n, int64_t k, const void* a, const void* b, void* c, int64_t batch,
                  int64_t stride_a, int64_t stride_b, int64_t stride_c, bool) {
  if (m < 1 || n < 1 || k < 1 || batch < 1) {
    return absl::InvalidArgumentError("a GEMM dimension below 1");
  }
  const int64_t bytes = ElementBytes(type);
  GR_FAKE_ON_DEVICE(m * n, "Gemm", DeviceSpan{a, Batched(batch, stride_a, m * k) * bytes},
                    DeviceSpan{b, Batched(batch, stride_b, k * n) * bytes},
                    DeviceSpan{c, Batched(batch, stride_c, m * n) * bytes});
  return Queue(stream, [=] {
    for (int64_t bt = 0; bt < batch; ++bt) {
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          double acc = 0;
          for (int64_t l = 0; l < k; ++l) {
            const float av =
                ToFloat(type, a, bt * stride_a + (transpose_a ? l * m + i : i * k + l));
            const float bv =
                ToFloat(type, b, bt * stride_b + (transpose_b ? j * k + l : l * n + j));
            acc += static_cast<double>(av) * bv;
          }
          FromFloat(type, static_cast<float>(acc), c, bt * stride_c + i * n + j);
        }
      }
    }
  });
}

absl::Status Unary(void* stream, UnaryOp op, const float* in, float* out, int64_t n, float alpha) {
  GR_FAKE_ON_DEVICE(n, "Unary", SpanOf(in, n), SpanOf(out, n));
  return Queue(stream, [=] {
    for (int64_t i = 0; i < n; ++i) out[i] = ApplyUnary(op, in[i], alpha);
  });
}

absl::Status Binary(void* stream, BinaryOp op, const float* x, const float* y, float* out,
                    const BroadcastShape& shape) {
  GR_FAKE_ON_DEVICE(Elements(shape), "Binary", SpanOf(x, InputElements(shape, shape.x_strides)),
                    SpanOf(y, InputElements(shape, shape.y_strides)),
                    SpanOf(out, Elements(shape)));
  return Queue(stream, [=] {
    for (int64_t i = 0, n = Elements(shape); i < n; ++i) {
      int64_t xi, yi, ci;
      Offsets(shape, i, &xi, &yi, &ci);
      out[i] = ApplyBinary(op, x[xi], y[yi]);
    }
  });
}

absl::Status Compare(void* stream, CompareOp op, const float* x, const float* y, bool* out,
                     const BroadcastShape& shape) {
  GR_FAKE_ON_DEVICE(Elements(shape), "Compare", SpanOf(x, InputElements(shape, shape.x_strides)),
                    SpanOf(y, InputElements(shape, shape.y_strides)),
                    SpanOf(out, Elements(shape)));
  return Queue(stream, [=] {
    for (int64_t i = 0, n = Elements(shape); i < n; ++i) {
      int64_t xi, yi, ci;
      Offsets(shape, i, &xi, &yi, &ci);
      out[i] = ApplyCompare(op, x[xi], y[yi]);
    }
  });
}

absl::Status Logical(void* stream, bool is_and, const bool* x, const bool* y, bool* out,
                     const BroadcastShape& shape) {
  GR_FAKE_ON_DEVICE(Elements(shape), "Logical", SpanOf(x, InputElements(shape, shape.x_strides)),
                    SpanOf(y, InputElements(shape, shape.y_strides)),
                    SpanOf(out, Elements(shape)));
  return Queue(stream, [=] {
    for (int64_t i = 0, n = Elements(shape); i < n; ++i) {
      int64_t xi, yi, ci;
      Offsets(shape, i, &xi, &yi, &ci);
      out[i] = is_and ? (x[xi] && y[yi]) : (x[xi] || y[yi]);
    }
  });
}

absl::Status LogicalNot(void* stream, const bool* x, bool* out, int64_t n) {
  GR_FAKE_ON_DEVICE(n, "LogicalNot", SpanOf(x, n), SpanOf(out, n));
  return Queue(stream, [=] {
    for (int64_t i = 0; i < n; ++i) out[i] = !x[i];
  });
}

absl::Status Select(void* stream, const bool* cond, const float* x, const float* y, float* out,
                    const BroadcastShape& shape) {
  GR_FAKE_ON_DEVICE(Elements(shape), "Select",
                    SpanOf(cond, InputElements(shape, shape.c_strides)),
                    SpanOf(x, InputElements(shape, shape.x_strides)),
                    SpanOf(y, InputElements(shape, shape.y_strides)),
                    SpanOf(out, Elements(shape)));
  return Queue(stream, [=] {
    for (int64_t i = 0, n = Elements(shape); i < n; ++i) {
      int64_t xi, yi, ci;
      Offsets(shape, i, &xi, &yi, &ci);
      out[i] = cond[ci] ? x[xi] : y[yi];
    }
  });
}

absl::Status ChannelBiasActivation(void* stream, const float* in, const float* bias, float* out,
                                   const ChannelView& v, Activation act, float alpha) {
  const int64_t size = v.outer * v.channels * v.inner;
  GR_FAKE_ON_DEVICE(size, "ChannelBiasActivation", SpanOf(in, size), SpanOf(bias, v.channels),
                    SpanOf(out, size));
  return Queue(stream, [=] {
    for (int64_t i = 0, n = v.outer * v.channels * v.inner; i < n; ++i) {
      out[i] = Activate(act, in[i] + bias[(i / v.inner) % v.channels], alpha);
    }
  });
}

absl::Status BiasAdd(void* stream, const float* in, const float* bias, float* out, int64_t rows,
                     int64_t cols) {
  ChannelView v;
  v.outer = rows;
  v.channels = cols;
  return ChannelBiasActivation(stream, in, bias, out, v, Activation::kNone, 0.0f);
}

absl::Status BiasActivation(void* stream, float* x, const float* bias, int64_t rows, int64_t cols,
                            Activation act, float leakyrelu_alpha) {
  ChannelView v;
  v.outer = rows;
  v.channels = cols;
  return ChannelBiasActivation(stream, x, bias, x, v, act, leakyrelu_alpha);
}

absl::Status Softmax(void* stream, const float* in, float* out, int64_t rows, int64_t cols,
                     bool log) {
  GR_FAKE_ON_DEVICE(rows * cols, "Softmax", SpanOf(in, rows * cols), SpanOf(out, rows * cols));
  return Queue(stream, [=] {
    for (int64_t r = 0; r < rows; ++r) {
      const float* row = in + r * cols;
      float m = -std::numeric_limits<float>::infinity();
      for (int64_t c = 0; c < cols; ++c) m = std::max(m, row[c]);
      double sum = 0;
      for (int64_t c = 0; c < cols; ++c) sum += std::exp(row[c] - m);
      for (int64_t c = 0; c < cols; ++c) {
        out[r * cols + c] = log ? row[c] - m - static_cast<float>(std::log(sum))
                                : static_cast<float>(std::exp(row[c] - m) / sum);
      }
    }
  });
}

absl::Status Zero(void* stream, void* ptr, int64_t bytes) {
  GR_FAKE_ON_DEVICE(bytes, "Zero", DeviceSpan{ptr, bytes});
  return Queue(stream, [=] { std::memset(ptr, 0, static_cast<size_t>(bytes)); });
}

absl::Status Cast(void* stream, CastType from, CastType to, const void* in, void* out, int64_t n,
                  bool truncate) {
  const bool narrows_float = (from == CastType::kFloat || from == CastType::kDouble) &&
                             (to == CastType::kHalf || to == CastType::kBfloat16 ||
                              (from == CastType::kDouble && to == CastType::kFloat));
  if (truncate && narrows_float) {
    return absl::UnimplementedError("the fake GPU's Cast does not truncate");
  }
  GR_FAKE_ON_DEVICE(n, "Cast", DeviceSpan{in, n * CastBytes(from)},
                    DeviceSpan{out, n * CastBytes(to)});
  return Queue(stream, [=] {
    VisitCast(from, [&](auto from_zero) {
      using From = decltype(from_zero);
      VisitCast(to, [&](auto to_zero) {
        using To = decltype(to_zero);
        const From* src = static_cast<const From*>(in);
        To* dst = static_cast<To*>(out);
        for (int64_t i = 0; i < n; ++i) {
          if constexpr (std::is_same_v<To, bool>) {
            dst[i] = AsDouble(src[i]) != 0;
          } else if constexpr (std::is_integral_v<From> && std::is_integral_v<To>) {
            dst[i] = static_cast<To>(src[i]);  // wraps, as on the GPU
          } else if constexpr (std::is_integral_v<To> || std::is_same_v<To, double>) {
            dst[i] = static_cast<To>(AsDouble(src[i]));
          } else {
            dst[i] = To(static_cast<float>(AsDouble(src[i])));
          }
        }
      });
    });
  });
}

absl::Status StridedCopy(void* stream, int element_bytes, const void* src, void* dst,
                         const StridedCopyPlan& plan) {
  GR_RETURN_IF_ERROR(ElementBytesOk(element_bytes));
  if (plan.rank < 0 || plan.rank > kMaxCopyDims) {
    return absl::InvalidArgumentError(absl::StrCat("a strided copy of rank ", plan.rank));
  }
  int64_t n = 1;
  for (int d = 0; d < plan.rank; ++d) n *= plan.dims[d];
  GR_FAKE_ON_DEVICE(n, "StridedCopy",
                    CopySpan(src, plan, plan.src_strides, plan.src_offset, element_bytes),
                    CopySpan(dst, plan, plan.dst_strides, plan.dst_offset, element_bytes));
  return Queue(stream, [=] { StridedCopyOnHost(plan, element_bytes, src, dst); });
}

absl::Status Fill(void* stream, int element_bytes, uint64_t bits, void* dst, int64_t n) {
  GR_RETURN_IF_ERROR(ElementBytesOk(element_bytes));
  GR_FAKE_ON_DEVICE(n, "Fill", DeviceSpan{dst, n * element_bytes});
  return Queue(stream, [=] {
    for (int64_t i = 0; i < n; ++i) {
      std::memcpy(static_cast<char*>(dst) + i * element_bytes, &bits, element_bytes);
    }
  });
}

absl::Status CopyOnDevice(void* stream, const void* src, void* dst, int64_t bytes) {
  GR_FAKE_ON_DEVICE(bytes, "CopyOnDevice", DeviceSpan{src, bytes}, DeviceSpan{dst, bytes});
  return Queue(stream, [=] { std::memcpy(dst, src, static_cast<size_t>(bytes)); });
}

absl::Status Gather(void* stream, int element_bytes, const void* params, IndexType index_type,
                    const void* indices, void* out, int64_t batch, int64_t outer, int64_t limit,
                    int64_t num_indices, int64_t inner) {
  GR_RETURN_IF_ERROR(ElementBytesOk(element_bytes));
  GR_FAKE_ON_DEVICE(batch * outer * num_indices * inner, "Gather",
                    DeviceSpan{params, batch * outer * limit * inner * element_bytes},
                    DeviceSpan{indices, batch * num_indices * IndexBytes(index_type)},
                    DeviceSpan{out, batch * outer * num_indices * inner * element_bytes});
  GatherExtent e;
  e.batch = batch;
  e.outer = outer;
  e.limit = limit;
  e.num_indices = num_indices;
  e.inner = inner;
  return Queue(stream, [=] {
    std::vector<int64_t> idx(static_cast<size_t>(batch * num_indices));
    for (size_t i = 0; i < idx.size(); ++i) {
      idx[i] = index_type == IndexType::kInt64 ? static_cast<const int64_t*>(indices)[i]
                                               : static_cast<const int32_t*>(indices)[i];
    }
    GatherOnHost(e, element_bytes, params, idx.data(), out);
  });
}

absl::Status Reduce(void* stream, ReduceOp op, const float* in, float* out, int64_t outer,
                    int64_t r, int64_t inner) {
  GR_FAKE_ON_DEVICE(outer * inner, "Reduce", SpanOf(r > 0 ? in : nullptr, outer * r * inner),
                    SpanOf(out, outer * inner));
  return Queue(stream, [=] { ReduceOnHost(op, in, out, outer, r, inner); });
}

absl::Status Pool(void* stream, bool max, const float* in, float* out, const PoolGeometry& g) {
  GR_FAKE_ON_DEVICE(g.n * g.c * g.out_h * g.out_w, "Pool", SpanOf(in, g.n * g.h * g.w * g.c),
                    SpanOf(out, g.n * g.c * g.out_h * g.out_w));
  return Queue(stream, [=] { PoolOnHost(max, in, out, g); });
}

absl::Status BatchNormInference(void* stream, const float* x, const float* scale,
                                const float* offset, const float* mean, const float* variance,
                                float epsilon, float* y, const ChannelView& v) {
  const int64_t ch = v.channels, size = v.outer * v.channels * v.inner;
  GR_FAKE_ON_DEVICE(size, "BatchNormInference", SpanOf(x, size), SpanOf(scale, ch),
                    SpanOf(offset, ch), SpanOf(mean, ch), SpanOf(variance, ch), SpanOf(y, size));
  return Queue(stream, [=] {
    for (int64_t i = 0, n = v.outer * v.channels * v.inner; i < n; ++i) {
      const int64_t c = (i / v.inner) % v.channels;
      y[i] = (x[i] - mean[c]) * (scale[c] / std::sqrt(variance[c] + epsilon)) + offset[c];
    }
  });
}

absl::Status BatchNormTraining(void* stream, const float* x, const float* scale,
                               const float* offset, const float* old_mean,
                               const float* old_variance, float epsilon, float factor, float* y,
                               float* batch_mean, float* batch_variance, float* saved_mean,
                               float* saved_variance, const ChannelView& v) {
  // old_* are read only when factor != 1 (and may be null when it is 1).
  const int64_t ch = v.channels, old = factor == 1.0f ? 0 : v.channels;
  GR_FAKE_ON_DEVICE(ch, "BatchNormTraining", SpanOf(scale, ch), SpanOf(offset, ch),
                    SpanOf(old_mean, old), SpanOf(old_variance, old), SpanOf(batch_mean, ch),
                    SpanOf(batch_variance, ch), SpanOf(saved_mean, ch),
                    SpanOf(saved_variance, ch));
  const int64_t size = v.outer * v.channels * v.inner;
  GR_FAKE_ON_DEVICE(size, "BatchNormTraining", SpanOf(x, size), SpanOf(y, size));
  return Queue(stream, [=] {
    const int64_t count = v.outer * v.inner;
    for (int64_t c = 0; c < v.channels; ++c) {
      double sum = 0, squares = 0;
      for (int64_t o = 0; o < v.outer; ++o) {
        for (int64_t k = 0; k < v.inner; ++k) sum += x[(o * v.channels + c) * v.inner + k];
      }
      const double mean = sum / count;
      for (int64_t o = 0; o < v.outer; ++o) {
        for (int64_t k = 0; k < v.inner; ++k) {
          const double d = x[(o * v.channels + c) * v.inner + k] - mean;
          squares += d * d;
        }
      }
      const float var = static_cast<float>(squares / count);
      saved_mean[c] = static_cast<float>(mean);
      saved_variance[c] = var;
      const float adjust =
          static_cast<float>(count) / static_cast<float>(count > 1 ? count - 1 : 1);
      batch_mean[c] =
          factor == 1.0f ? saved_mean[c] : old_mean[c] * (1 - factor) + saved_mean[c] * factor;
      batch_variance[c] =
          factor == 1.0f ? var * adjust : old_variance[c] * (1 - factor) + var * (factor * adjust);
    }
    for (int64_t i = 0, n = v.outer * v.channels * v.inner; i < n; ++i) {
      const int64_t c = (i / v.inner) % v.channels;
      y[i] =
          (x[i] - saved_mean[c]) * (scale[c] / std::sqrt(saved_variance[c] + epsilon)) + offset[c];
    }
  });
}

absl::Status Conv2D(void* stream, const ConvGeometry& g, const float* in, const float* filter,
                    float* out, const WorkspaceFn& workspace) {
  const int64_t filter_size = g.out_c * g.kh * g.kw * (g.groups > 0 ? g.c / g.groups : 0);
  GR_FAKE_ON_DEVICE(g.n * g.out_c * g.out_h * g.out_w, "Conv2D",
                    SpanOf(in, g.n * g.h * g.w * g.c), SpanOf(filter, filter_size),
                    SpanOf(out, g.n * g.out_c * g.out_h * g.out_w));
  // Ask for a little workspace, as cuDNN's algorithms do.
  absl::StatusOr<void*> ws = workspace(256);
  if (!ws.ok()) return ws.status();
  return Queue(stream, [=] { Conv2DOnHost(g, in, filter, out); });
}

}  // namespace gpu
}  // namespace graphrun
