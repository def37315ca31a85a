// Wire codec: how float32 tensors may be narrowed to 16 bits on the
// cross-worker edges of a distributed step, halving the bytes a remote
// Rendezvous puts on the network. The sender encodes a float32 buffer into
// 16-bit words, the receiver decodes them back into float32; other dtypes,
// and edges inside one worker, are never encoded.
//
//   kNone  float32 travels as is.
//   kFp16  IEEE binary16, rounded to nearest even; finite values too large
//          for a half saturate to +-65504 instead of becoming infinite.
//   kBf16  bfloat16 by truncation: the upper 16 bits of the float32, as
//          TensorFlow's wire format for bfloat16 does; cheaper and with
//          float32's range, at 8 bits of mantissa.
//
// The loops are vectorised (AVX-512 or AVX2+F16C, chosen once per process
// from what the CPU has, with a scalar path for other CPUs), so a codec core
// runs near memory bandwidth, far above what one TCP stream carries. Every
// path produces the same bits for the same input.
//
// Thread-safe: pure functions over caller-owned buffers. `src` and `dst`
// must not overlap; `n` is an element count (n <= 0 does nothing).
#ifndef GRAPHRUN_DISTRIBUTED_WIRE_CODEC_H_
#define GRAPHRUN_DISTRIBUTED_WIRE_CODEC_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace graphrun {

// The policy for float32 tensors between tasks. kGradients (the default
// over workers): an edge into an optimizer update's gradient input
// (partition/wire_policy.h) travels fp16, everything else exact. kFp16
// ("all", or "fp16"): every float32 tensor fp16. kBf16: as kGradients, in
// bfloat16. kNone: everything exact. A fed or fetched value always travels
// exact.
enum class WireCompression { kNone, kFp16, kBf16, kGradients };

// "none" | "gradients" | "all" | "fp16" | "bf16" -> the value.
// InvalidArgument quoting `name` and listing the accepted names otherwise
// (names are case-sensitive).
absl::StatusOr<WireCompression> ParseWireCompression(absl::string_view name);

// Whether `c` compresses gradients only.
inline bool CompressesGradientsOnly(WireCompression c) {
  return c == WireCompression::kGradients || c == WireCompression::kBf16;
}

// The name ParseWireCompression accepts for `c` (kFp16: "fp16").
absl::string_view WireCompressionName(WireCompression c);

// float32 -> binary16, round to nearest even, for n values. Finite values
// that IEEE rounding would turn into infinity (|x| >= 65520) become +-65504
// instead; the return value counts them (values in (65504, 65520) round to
// 65504 as usual and are not counted). +-Inf stay +-Inf; -0 stays -0; a NaN
// stays a NaN of the same sign, quiet, with the top 9 bits of its payload;
// results below 2^-14 are exact subnormal halves, and values at or under
// 2^-25 (half the smallest subnormal) round to +-0.
int64_t EncodeFp16(const float* src, int64_t n, uint16_t* dst);

// binary16 -> float32, exact (every half is a float32). A NaN decodes to a
// quiet NaN of the same sign whose payload starts with the half's.
void DecodeFp16(const uint16_t* src, int64_t n, float* dst);

// float32 -> bfloat16 by truncation (the upper 16 bits: no rounding), except
// that a NaN whose truncated mantissa would be zero (and so read as an
// infinity) gets the quiet bit set, so a NaN always stays a NaN.
void EncodeBf16(const float* src, int64_t n, uint16_t* dst);

// bfloat16 -> float32, exact: the 16 bits become the float32's upper half.
void DecodeBf16(const uint16_t* src, int64_t n, float* dst);

namespace wire_codec_internal {

// The loops the functions above run. kBest is the fastest the CPU has, and
// what they use unless a test chose another.
enum class Kernel { kBest, kScalar, kAvx2, kAvx512 };

// Whether this CPU can run `k` (kBest and kScalar always).
bool KernelSupported(Kernel k);

// Test hook: makes the functions above use `k` from now on, process-wide
// (kBest restores the default). False, changing nothing, when the CPU cannot
// run it. Not to be called while another thread encodes or decodes.
bool SetKernelForTest(Kernel k);

}  // namespace wire_codec_internal
}  // namespace graphrun

#endif  // GRAPHRUN_DISTRIBUTED_WIRE_CODEC_H_
