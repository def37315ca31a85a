// Throughput of the wire codec (distributed/wire_codec.h) on one core, for
// float32 arrays of 1 MB (in L2), 16 MB (in L3) and 256 MB (memory), in
// bytes of float32 per second, so every figure compares with the others and
// with a network link's rate directly:
//   - {Fp16,Bf16}{Encode,Decode}/<kernel>/<MB>: each loop the codec has
//     (scalar, avx2, avx512), whichever the CPU runs;
//   - Memcpy/<MB>: copying the float32 array, the ceiling a pass over
//     memory has;
//   - Eigen{ToHalf,FromHalf,ToBf16,FromBf16}/<MB>: the same conversions as
//     Eigen's Tensor cast on the calling thread, the library alternative
//     (no saturation, and bfloat16 rounded to nearest rather than
//     truncated, so not a drop-in: a speed comparison only).
// Inputs are values in [-100, 100).
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "distributed/wire_codec.h"
#include "kernels/eigen.h"

namespace graphrun {
namespace {

using wire_codec_internal::Kernel;

struct Arrays {
  std::vector<float> floats;
  std::vector<uint16_t> words;
  std::vector<float> out;
};

// One set per size, made on first use and kept (page faults stay out of the
// loops).
Arrays& ArraysOf(int64_t mb) {
  static auto* arrays = new std::map<int64_t, std::unique_ptr<Arrays>>;
  std::unique_ptr<Arrays>& a = (*arrays)[mb];
  if (a == nullptr) {
    const int64_t n = mb * (1 << 20) / sizeof(float);
    a = std::make_unique<Arrays>();
    a->floats.resize(n);
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> dist(-100.0f, 100.0f);
    for (float& f : a->floats) f = dist(rng);
    a->words.resize(n);
    EncodeFp16(a->floats.data(), n, a->words.data());
    a->out.assign(n, 0.0f);
  }
  return *a;
}

enum class Op { kFp16Encode, kFp16Decode, kBf16Encode, kBf16Decode };

void BM_Codec(benchmark::State& state, Op op, Kernel kernel, int64_t mb) {
  if (!wire_codec_internal::SetKernelForTest(kernel)) {
    state.SkipWithError("this CPU cannot run the kernel");
    return;
  }
  Arrays& a = ArraysOf(mb);
  const int64_t n = a.floats.size();
  for (auto _ : state) {
    switch (op) {
      case Op::kFp16Encode:
        benchmark::DoNotOptimize(
            EncodeFp16(a.floats.data(), n, a.words.data()));
        break;
      case Op::kFp16Decode:
        DecodeFp16(a.words.data(), n, a.out.data());
        break;
      case Op::kBf16Encode:
        EncodeBf16(a.floats.data(), n, a.words.data());
        break;
      case Op::kBf16Decode:
        DecodeBf16(a.words.data(), n, a.out.data());
        break;
    }
    benchmark::ClobberMemory();
  }
  wire_codec_internal::SetKernelForTest(Kernel::kBest);
  state.SetBytesProcessed(state.iterations() * n *
                          static_cast<int64_t>(sizeof(float)));
}

void BM_Memcpy(benchmark::State& state, int64_t mb) {
  Arrays& a = ArraysOf(mb);
  const int64_t bytes = a.floats.size() * sizeof(float);
  for (auto _ : state) {
    std::memcpy(a.out.data(), a.floats.data(), bytes);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * bytes);
}

enum class EigenOp { kToHalf, kFromHalf, kToBf16, kFromBf16 };

void BM_Eigen(benchmark::State& state, EigenOp op, int64_t mb) {
  Arrays& a = ArraysOf(mb);
  const int64_t n = a.floats.size();
  ConstTensorMap<float> floats(a.floats.data(), n);
  TensorMap<float> out(a.out.data(), n);
  TensorMap<Eigen::half> to_half(reinterpret_cast<Eigen::half*>(a.words.data()),
                                 n);
  ConstTensorMap<Eigen::half> from_half(
      reinterpret_cast<const Eigen::half*>(a.words.data()), n);
  TensorMap<Eigen::bfloat16> to_bf16(
      reinterpret_cast<Eigen::bfloat16*>(a.words.data()), n);
  ConstTensorMap<Eigen::bfloat16> from_bf16(
      reinterpret_cast<const Eigen::bfloat16*>(a.words.data()), n);
  Eigen::DefaultDevice device;
  for (auto _ : state) {
    switch (op) {
      case EigenOp::kToHalf:
        to_half.device(device) = floats.cast<Eigen::half>();
        break;
      case EigenOp::kFromHalf:
        out.device(device) = from_half.cast<float>();
        break;
      case EigenOp::kToBf16:
        to_bf16.device(device) = floats.cast<Eigen::bfloat16>();
        break;
      case EigenOp::kFromBf16:
        out.device(device) = from_bf16.cast<float>();
        break;
    }
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * n *
                          static_cast<int64_t>(sizeof(float)));
}

int RegisterAll() {
  const std::pair<const char*, Op> ops[] = {{"Fp16Encode", Op::kFp16Encode},
                                            {"Fp16Decode", Op::kFp16Decode},
                                            {"Bf16Encode", Op::kBf16Encode},
                                            {"Bf16Decode", Op::kBf16Decode}};
  const std::pair<const char*, Kernel> kernels[] = {
      {"scalar", Kernel::kScalar},
      {"avx2", Kernel::kAvx2},
      {"avx512", Kernel::kAvx512}};
  const std::pair<const char*, EigenOp> eigen_ops[] = {
      {"EigenToHalf", EigenOp::kToHalf},
      {"EigenFromHalf", EigenOp::kFromHalf},
      {"EigenToBf16", EigenOp::kToBf16},
      {"EigenFromBf16", EigenOp::kFromBf16}};
  for (int64_t mb : {1, 16, 256}) {
    for (const auto& [op_name, op] : ops) {
      for (const auto& [kernel_name, kernel] : kernels) {
        if (!wire_codec_internal::KernelSupported(kernel)) continue;
        benchmark::RegisterBenchmark(
            absl::StrCat(op_name, "/", kernel_name, "/", mb).c_str(), BM_Codec,
            op, kernel, mb)
            ->UseRealTime();
      }
    }
    for (const auto& [name, op] : eigen_ops) {
      benchmark::RegisterBenchmark(absl::StrCat(name, "/", mb).c_str(),
                                   BM_Eigen, op, mb)
          ->UseRealTime();
    }
    benchmark::RegisterBenchmark(absl::StrCat("Memcpy/", mb).c_str(), BM_Memcpy,
                                 mb)
        ->UseRealTime();
  }
  return 0;
}

const int registered = RegisterAll();

}  // namespace
}  // namespace graphrun
