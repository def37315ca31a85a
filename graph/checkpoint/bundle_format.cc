#include "graph/checkpoint/bundle_format.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "graph/checkpoint/coding.h"
#include "graph/checkpoint/crc32c.h"
#include "graph/checkpoint/table.h"
#include "graph/status_macros.h"
#include "graph/types.h"

namespace graphrun {
namespace {

absl::Status BadEntry(absl::string_view filename, absl::string_view key, absl::string_view what) {
  return absl::DataLossError(absl::StrCat("corrupt checkpoint index ", filename, ": key \"",
                                          absl::CEscape(key), "\": ", what));
}

bool HasFixedSize(DataType dtype) { return DataTypeSize(dtype) > 0; }

// Reverses the bytes of each `width`-byte element in place.
void SwapElements(char* data, size_t num_bytes, int width) {
  if (width <= 1) return;
  for (size_t i = 0; i + width <= num_bytes; i += width) std::reverse(data + i, data + i + width);
}

// A string length as the string CRC covers it: 4 bytes, or 8 above 2^32-1,
// in the writer's byte order.
void ExtendWithLength(uint64_t length, bool big_endian, uint32_t* crc) {
  char buf[8];
  const int width = length <= UINT32_MAX ? 4 : 8;
  for (int i = 0; i < width; ++i) buf[i] = static_cast<char>((length >> (8 * i)) & 0xff);
  if (big_endian) std::reverse(buf, buf + width);
  *crc = crc32c::Extend(*crc, buf, width);
}

absl::StatusOr<Tensor> DecodeStrings(const TensorShape& shape, bool big_endian, uint32_t masked_crc,
                                     absl::string_view bytes, absl::string_view what) {
  // Every element takes at least one length byte: check before allocating.
  if (shape.num_elements() > static_cast<int64_t>(bytes.size())) {
    return absl::DataLossError(absl::StrCat(what, ": ", bytes.size(), " bytes cannot hold ",
                                            shape.num_elements(), " strings"));
  }
  const int64_t n = shape.num_elements();
  absl::string_view in = bytes;
  std::vector<uint64_t> lengths(n);
  uint32_t crc = 0;
  uint64_t total = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (!coding::GetVarint64(&in, &lengths[i])) {
      return absl::DataLossError(absl::StrCat(what, ": bad length of string ", i));
    }
    ExtendWithLength(lengths[i], big_endian, &crc);
    total += std::min<uint64_t>(lengths[i], bytes.size() + 1);
  }
  if (in.size() < 4) return absl::DataLossError(absl::StrCat(what, ": truncated string lengths"));
  uint32_t stored = coding::DecodeFixed32(in.data());
  if (big_endian) stored = __builtin_bswap32(stored);
  if (crc32c::Unmask(stored) != crc) {
    return absl::DataLossError(absl::StrCat(what, ": checksum mismatch in string lengths"));
  }
  crc = crc32c::Extend(crc, in.data(), 4);
  in.remove_prefix(4);
  if (total != in.size()) {
    return absl::DataLossError(absl::StrCat(what, ": string lengths sum to ", total, " bytes, but ",
                                            in.size(), " follow them"));
  }
  crc = crc32c::Extend(crc, in.data(), in.size());
  if (crc32c::Mask(crc) != masked_crc) {
    return absl::DataLossError(absl::StrCat(what, ": checksum mismatch in string bytes"));
  }
  Tensor t(DT_STRING, shape);
  auto flat = t.flat<std::string>();
  for (int64_t i = 0; i < n; ++i) {
    flat[i].assign(in.data(), lengths[i]);
    in.remove_prefix(lengths[i]);
  }
  return t;
}

}  // namespace

std::string IndexFilename(absl::string_view prefix) { return absl::StrCat(prefix, ".index"); }

std::string DataFilename(absl::string_view prefix, int shard, int num_shards) {
  return absl::StrFormat("%s.data-%05d-of-%05d", prefix, shard, num_shards);
}

absl::StatusOr<BundleIndex> ParseBundleIndex(absl::string_view contents,
                                             absl::string_view filename) {
  GR_ASSIGN_OR_RETURN(auto table, ReadTable(contents, filename));
  if (table.empty() || !table[0].first.empty()) {
    return absl::DataLossError(
        absl::StrCat("corrupt checkpoint index ", filename, ": no header entry (key \"\")"));
  }
  BundleIndex index;
  if (!index.header.ParseFromString(table[0].second)) {
    return absl::DataLossError(
        absl::StrCat("corrupt checkpoint index ", filename, ": unparsable header"));
  }
  const VersionDef& version = index.header.version();
  if (version.producer() < 0 || version.min_consumer() > kTensorBundleVersion ||
      std::count(version.bad_consumers().begin(), version.bad_consumers().end(),
                 kTensorBundleVersion) > 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("checkpoint ", filename, " needs a newer reader: producer ",
                     version.producer(), ", min_consumer ", version.min_consumer(),
                     "; this reader is version ", kTensorBundleVersion));
  }
  const int num_shards = index.header.num_shards();
  if (num_shards < 1 || num_shards > 99999) {
    return absl::DataLossError(
        absl::StrCat("corrupt checkpoint index ", filename, ": ", num_shards, " data shards"));
  }
  if (index.header.endianness() != BundleHeaderProto::LITTLE &&
      index.header.endianness() != BundleHeaderProto::BIG) {
    return absl::DataLossError(
        absl::StrCat("corrupt checkpoint index ", filename, ": unknown endianness"));
  }
  index.entries.reserve(table.size() - 1);
  for (size_t i = 1; i < table.size(); ++i) {
    const std::string& key = table[i].first;
    BundleEntryProto entry;
    if (!entry.ParseFromString(table[i].second)) return BadEntry(filename, key, "unparsable");
    if (!IsValidDataType(entry.dtype())) return BadEntry(filename, key, "invalid dtype");
    auto shape = TensorShape::FromProto(entry.shape());
    if (!shape.ok()) return BadEntry(filename, key, shape.status().message());
    if (entry.slices_size() == 0 && (entry.shard_id() < 0 || entry.shard_id() >= num_shards ||
                                     entry.offset() < 0 || entry.size() < 0)) {
      return BadEntry(filename, key,
                      absl::StrCat("shard ", entry.shard_id(), " of ", num_shards, ", offset ",
                                   entry.offset(), ", size ", entry.size()));
    }
    index.entries.emplace_back(key, std::move(entry));
  }
  return index;
}

absl::StatusOr<EncodedTensor> EncodeTensor(const Tensor& tensor) {
  EncodedTensor out;
  if (tensor.dtype() == DT_STRING) {
    auto strings = tensor.flat<std::string>();
    for (const std::string& s : strings) {
      coding::PutVarint64(&out.bytes, s.size());
      ExtendWithLength(s.size(), /*big_endian=*/false, &out.crc32c);
    }
    const uint32_t length_crc = crc32c::Mask(out.crc32c);
    std::string crc_bytes;
    coding::PutFixed32(&crc_bytes, length_crc);
    out.crc32c = crc32c::Extend(out.crc32c, crc_bytes.data(), crc_bytes.size());
    out.bytes += crc_bytes;
    for (const std::string& s : strings) {
      out.bytes += s;
      out.crc32c = crc32c::Extend(out.crc32c, s.data(), s.size());
    }
    return out;
  }
  if (!HasFixedSize(tensor.dtype())) {
    return absl::UnimplementedError(
        absl::StrCat("cannot save a ", DataTypeString(tensor.dtype()), " tensor in a checkpoint"));
  }
  out.bytes.assign(static_cast<const char*>(tensor.raw_data()), tensor.TotalBytes());
  out.crc32c = crc32c::Value(out.bytes);
  return out;
}

absl::StatusOr<Tensor> DecodeTensor(const BundleEntryProto& entry, bool big_endian,
                                    absl::string_view bytes, absl::string_view what) {
  GR_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromProto(entry.shape()));
  const DataType dtype = entry.dtype();
  if (static_cast<int64_t>(bytes.size()) != entry.size()) {
    return absl::DataLossError(
        absl::StrCat(what, ": ", bytes.size(), " bytes for an entry of ", entry.size()));
  }
  if (dtype == DT_STRING) {
    return DecodeStrings(shape, big_endian, entry.crc32c(), bytes, what);
  }
  const int width = DataTypeSize(dtype);
  if (width <= 0) {
    return absl::UnimplementedError(
        absl::StrCat(what, ": cannot read ", DataTypeString(dtype), " tensors"));
  }
  if (shape.num_elements() != static_cast<int64_t>(bytes.size()) / width ||
      bytes.size() % width != 0) {
    return absl::DataLossError(absl::StrCat(what, ": ", bytes.size(), " bytes for ",
                                            shape.num_elements(), " elements of ",
                                            DataTypeString(dtype)));
  }
  if (crc32c::Mask(crc32c::Value(bytes)) != entry.crc32c()) {
    return absl::DataLossError(absl::StrCat(what, ": checksum mismatch in tensor bytes"));
  }
  Tensor t(dtype, shape);
  if (!bytes.empty()) std::memcpy(t.raw_data(), bytes.data(), bytes.size());
  if (dtype == DT_BOOL) {
    // Any nonzero byte is true; keep the bool objects valid.
    auto* b = static_cast<uint8_t*>(t.raw_data());
    for (size_t i = 0; i < bytes.size(); ++i) b[i] = b[i] != 0;
  }
  if (big_endian) {
    // Complex numbers are two floats, each swapped on its own.
    const int swap = IsComplexType(dtype) ? width / 2 : width;
    SwapElements(static_cast<char*>(t.raw_data()), bytes.size(), swap);
  }
  return t;
}

}  // namespace graphrun
