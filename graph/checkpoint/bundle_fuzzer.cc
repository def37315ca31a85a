// libFuzzer target: arbitrary bytes -> a checkpoint's .index and data shard
// -> index parsing and every entry's tensor decoding. Must never crash, hang
// or allocate without bound, whatever the input.
//
// Input layout: a 2-byte little-endian length n, n bytes of .index, then the
// data shard. Build with clang, libFuzzer and ASan (--config=fuzz, as
// tools/fuzz.sh does for graph/fuzz); the same entry point runs under gcc in
// bundle_fuzz_regression_test over fuzz_corpus/.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "graph/checkpoint/bundle_format.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const size_t n = data[0] | static_cast<size_t>(data[1]) << 8;
  absl::string_view rest(reinterpret_cast<const char*>(data) + 2, size - 2);
  if (n > rest.size()) return 0;
  const absl::string_view index_bytes = rest.substr(0, n);
  const absl::string_view shard = rest.substr(n);
  auto index = graphrun::ParseBundleIndex(index_bytes, "fuzz.index");
  if (!index.ok()) return 0;
  const bool big_endian = index->header.endianness() == graphrun::BundleHeaderProto::BIG;
  for (const auto& [key, entry] : index->entries) {
    if (entry.slices_size() > 0 || entry.shard_id() != 0) continue;
    if (entry.offset() > static_cast<int64_t>(shard.size()) ||
        entry.size() > static_cast<int64_t>(shard.size()) - entry.offset()) {
      continue;  // BundleReader refuses these before reading (file_io.cc ReadRange)
    }
    auto tensor =
        graphrun::DecodeTensor(entry, big_endian, shard.substr(entry.offset(), entry.size()), key);
    if (tensor.ok()) (void)tensor->DebugString(4);
  }
  return 0;
}
