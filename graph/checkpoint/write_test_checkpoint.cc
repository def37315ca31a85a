// Checks graphrun's checkpoints against TensorFlow by hand:
//   write_test_checkpoint write PREFIX [N]  one tensor of every supported type,
//                                            plus N float tensors "extra/..."
//   write_test_checkpoint dump PREFIX       every key, dtype, shape, first value
// then: python graph/checkpoint/testdata/make_checkpoint_fixtures.py dump PREFIX
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string>
#include <utility>

#include "absl/strings/str_format.h"
#include "graph/checkpoint/tensor_bundle.h"

namespace graphrun {
namespace {

int Fail(const absl::Status& status) {
  std::cerr << status << "\n";
  return 1;
}

int Write(const std::string& prefix, int extra) {
  BundleWriter writer(prefix);
  const std::pair<const char*, Tensor> tensors[] = {
      {"dense/kernel",
       Tensor::FromVector<float>({1.5f, -2.25f, 3.0f, 0.1f, 1e-30f, -7.0f}, TensorShape({2, 3}))},
      {"f64_scalar", Tensor::Scalar<double>(-2.718281828459045)},
      {"f16", Tensor::FromVector<half>({half(1.0f), half(-65504.0f), half(0.5f)})},
      {"bf16", Tensor::FromVector<bfloat16>({bfloat16(3.0f), bfloat16(-2.5f)})},
      {"i8", Tensor::FromVector<int8_t>({-128, 127})},
      {"i16", Tensor::FromVector<int16_t>({-32768, 32767, 1}, TensorShape({3, 1}))},
      {"i32", Tensor::FromVector<int32_t>({INT32_MIN, 0, INT32_MAX})},
      {"i64", Tensor::FromVector<int64_t>({INT64_MIN, 5, INT64_MAX})},
      {"u8", Tensor::FromVector<uint8_t>({0, 255})},
      {"flags", Tensor::FromVector<bool>({true, false, true})},
      {"words", Tensor::FromVector<std::string>({"", "abc", std::string(300, 'z'), "end"},
                                                TensorShape({2, 2}))},
      {"global_step", Tensor::Scalar<int64_t>(42)},
  };
  for (const auto& [key, tensor] : tensors) {
    absl::Status status = writer.Add(key, tensor);
    if (!status.ok()) return Fail(status);
  }
  for (int i = 0; i < extra; ++i) {
    const std::string key = absl::StrFormat("extra/%s/%06d", std::string(30, 'n'), i);
    absl::Status status = writer.Add(key, Tensor::Scalar<float>(static_cast<float>(i)));
    if (!status.ok()) return Fail(status);
  }
  absl::Status status = writer.Finish();
  if (!status.ok()) return Fail(status);
  std::cout << "wrote " << prefix << "\n";
  return 0;
}

int Dump(const std::string& prefix) {
  auto reader = BundleReader::Open(prefix);
  if (!reader.ok()) return Fail(reader.status());
  for (const BundleTensorInfo& info : (*reader)->ListTensors()) {
    auto tensor = (*reader)->Lookup(info.key);
    if (!tensor.ok()) return Fail(tensor.status());
    std::cout << info.key << " " << DataTypeString(info.dtype) << " " << info.shape.DebugString()
              << " " << tensor->DebugString(4) << "\n";
  }
  return 0;
}

}  // namespace
}  // namespace graphrun

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "write" && (argc == 3 || argc == 4)) {
    return graphrun::Write(argv[2], argc == 4 ? std::atoi(argv[3]) : 0);
  }
  if (mode == "dump" && argc == 3) return graphrun::Dump(argv[2]);
  std::cerr << "usage: write_test_checkpoint write PREFIX [N] | dump PREFIX\n";
  return 2;
}
