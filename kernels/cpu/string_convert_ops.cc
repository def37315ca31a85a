// StringToNumber and AsString on CPU, TensorFlow's semantics and messages
// (string_to_number_op.cc, as_string_op.cc). StringToNumber accepts what
// TensorFlow's safe_strto* do: surrounding spaces, a sign, "inf"/"nan"
// for floats. AsString formats with printf as TensorFlow builds its format:
// "%" [fill] [width] ["." precision] then d/u/lld/llu for integers and f,
// e (scientific) or g (shortest) for floats; complex as "(re,im)"; bools as
// "true"/"false".
#include <cstdio>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace {

template <typename T>
bool Parse(const std::string& s, T* out) {
  if constexpr (std::is_same_v<T, float>) {
    return absl::SimpleAtof(s, out);
  } else if constexpr (std::is_same_v<T, double>) {
    return absl::SimpleAtod(s, out);
  } else {
    return absl::SimpleAtoi(s, out);
  }
}

template <typename T>
class StringToNumberOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, in.shape(), &out));
    const std::string* s = in.flat<std::string>().data();
    T* o = out->flat<T>().data();
    for (int64_t i = 0; i < in.NumElements(); ++i) {
      OP_REQUIRES(ctx, Parse(s[i], &o[i]),
                  absl::InvalidArgumentError(absl::StrCat(
                      "StringToNumberOp could not correctly convert string: ", s[i])));
    }
  }
};

class AsStringOp : public OpKernel {
 public:
  explicit AsStringOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    int64_t precision = -1, width = -1;
    bool scientific = false, shortest = false;
    std::string fill;
    DataType dtype = DT_INVALID;
    OP_REQUIRES_OK(ctx, ctx->GetAttr("T", &dtype));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("precision", &precision));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("scientific", &scientific));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("shortest", &shortest));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("width", &width));
    OP_REQUIRES_OK(ctx, ctx->GetAttr("fill", &fill));
    const bool is_float = dtype == DT_FLOAT || dtype == DT_DOUBLE || dtype == DT_HALF ||
                          dtype == DT_BFLOAT16 || dtype == DT_COMPLEX64 ||
                          dtype == DT_COMPLEX128;
    OP_REQUIRES(ctx, !(scientific && shortest),
                absl::InvalidArgumentError(
                    "Cannot select both scientific and shortest notation"));
    OP_REQUIRES(ctx, fill.size() <= 1,
                absl::InvalidArgumentError(absl::StrCat("Fill string must be one or fewer "
                                                        "characters")));
    OP_REQUIRES(ctx, !(scientific || shortest || precision > -1) || is_float,
                absl::InvalidArgumentError(absl::StrCat(
                    "scientific, shortest and precision apply to floating types, not ",
                    DataTypeString(dtype))));
    format_ = "%";
    if (!fill.empty()) {
      const char f = fill[0];
      OP_REQUIRES(ctx, f == ' ' || f == '+' || f == '-' || f == '0' || f == '#',
                  absl::InvalidArgumentError(absl::StrCat("Fill argument not supported: \"",
                                                          fill, "\"")));
      format_ += f;
    }
    if (width > -1) absl::StrAppend(&format_, width);
    if (precision > -1) absl::StrAppend(&format_, ".", precision);
    switch (dtype) {
      case DT_INT64: format_ += "lld"; break;
      case DT_UINT64: format_ += "llu"; break;
      case DT_UINT32: format_ += "u"; break;
      case DT_INT8: case DT_INT16: case DT_INT32: case DT_UINT8: case DT_UINT16:
        format_ += "d";
        break;
      default:
        format_ += shortest ? "g" : (scientific ? "e" : "f");
        break;
    }
    if (dtype == DT_COMPLEX64 || dtype == DT_COMPLEX128) {
      format_ = absl::StrCat("(", format_, ",", format_, ")");
    }
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, in.shape(), &out));
    std::string* o = out->flat<std::string>().data();
    const char* f = format_.c_str();
    VisitDataType(in.dtype(), [&](auto zero) {
      using T = decltype(zero);
      const T* x = in.flat<T>().data();
      for (int64_t i = 0; i < in.NumElements(); ++i) {
        if constexpr (std::is_same_v<T, std::string>) {
          o[i] = x[i];
        } else if constexpr (std::is_same_v<T, bool>) {
          o[i] = x[i] ? "true" : "false";
        } else if constexpr (std::is_same_v<T, complex64> || std::is_same_v<T, complex128>) {
          o[i] = Format(f, static_cast<double>(x[i].real()), static_cast<double>(x[i].imag()));
        } else if constexpr (std::is_same_v<T, int64_t>) {
          o[i] = Format(f, static_cast<long long>(x[i]));  // NOLINT(runtime/int)
        } else if constexpr (std::is_same_v<T, uint64_t>) {
          o[i] = Format(f, static_cast<unsigned long long>(x[i]));  // NOLINT(runtime/int)
        } else if constexpr (std::is_integral_v<T>) {
          o[i] = Format(f, static_cast<int>(x[i]));
        } else {
          o[i] = Format(f, static_cast<double>(x[i]));
        }
      }
    });
  }

 private:
  template <typename... Args>
  static std::string Format(const char* f, Args... args) {
    char buf[128];
    const int n = std::snprintf(buf, sizeof(buf), f, args...);
    if (n < static_cast<int>(sizeof(buf))) return std::string(buf, n < 0 ? 0 : n);
    std::string big(static_cast<size_t>(n) + 1, '\0');
    std::snprintf(big.data(), big.size(), f, args...);
    big.resize(static_cast<size_t>(n));
    return big;
  }

  std::string format_;
};

#define GR_REGISTER_STRING_TO_NUMBER(T)                                                     \
  REGISTER_KERNEL(                                                                          \
      KernelDefBuilder("StringToNumber").Device(kDeviceCpu).TypeConstraint<T>("out_type"), \
      StringToNumberOp<T>)
GR_REGISTER_STRING_TO_NUMBER(float);
GR_REGISTER_STRING_TO_NUMBER(double);
GR_REGISTER_STRING_TO_NUMBER(int32_t);
GR_REGISTER_STRING_TO_NUMBER(int64_t);
GR_REGISTER_STRING_TO_NUMBER(uint32_t);
GR_REGISTER_STRING_TO_NUMBER(uint64_t);
#undef GR_REGISTER_STRING_TO_NUMBER

REGISTER_KERNEL(KernelDefBuilder("AsString")
                    .Device(kDeviceCpu)
                    .TypeConstraint("T", {DT_FLOAT, DT_DOUBLE, DT_INT32, DT_UINT8, DT_INT16,
                                          DT_INT8, DT_INT64, DT_BFLOAT16, DT_UINT16, DT_HALF,
                                          DT_UINT32, DT_UINT64, DT_COMPLEX64, DT_COMPLEX128,
                                          DT_BOOL, DT_STRING}),
                AsStringOp);

}  // namespace
}  // namespace graphrun
