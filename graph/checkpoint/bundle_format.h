// The pieces of TensorFlow's checkpoint V2 ("tensor bundle") format that do
// not touch files: file names, the .index table's header and entries, and the
// encoding of tensors in .data shards. BundleWriter and BundleReader
// (tensor_bundle.h) are built on these; the fuzzer drives them directly.
// Stateless; thread-safe.
#ifndef GRAPHRUN_GRAPH_CHECKPOINT_BUNDLE_FORMAT_H_
#define GRAPHRUN_GRAPH_CHECKPOINT_BUNDLE_FORMAT_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/checkpoint/protos/tensor_bundle.pb.h"
#include "graph/tensor.h"

namespace graphrun {

// kTensorBundleVersion: writers set producer = 1; readers accept data whose
// min_consumer <= 1 and whose bad_consumers do not list 1.
inline constexpr int kTensorBundleVersion = 1;

// "PREFIX.index" and "PREFIX.data-00000-of-00001".
std::string IndexFilename(absl::string_view prefix);
std::string DataFilename(absl::string_view prefix, int shard, int num_shards);

// A parsed .index: the header (key "") and every other entry in key order.
struct BundleIndex {
  BundleHeaderProto header;
  std::vector<std::pair<std::string, BundleEntryProto>> entries;
};

// Parses and checks a .index file's bytes: the table (see table.h), the header
// first, a supported version, endianness and shard count, and each entry's
// dtype, shape and shard. DataLoss (or InvalidArgument for an unsupported
// version) naming `filename`.
absl::StatusOr<BundleIndex> ParseBundleIndex(absl::string_view contents,
                                             absl::string_view filename);

// A tensor's bytes in a .data shard and the unmasked CRC32C that its entry
// stores (masked). Numeric and bool tensors: the row-major little-endian
// buffer. Strings: varint64 lengths, the fixed32 masked CRC of the lengths,
// then the bytes; the CRC covers each length as a little-endian uint32
// (uint64 above 2^32-1), the 4 length-checksum bytes and the string bytes.
// Unimplemented for types a checkpoint cannot hold here (variant, resource).
struct EncodedTensor {
  std::string bytes;
  uint32_t crc32c = 0;
};
absl::StatusOr<EncodedTensor> EncodeTensor(const Tensor& tensor);

// Decodes `bytes` (exactly entry.size() bytes) as the tensor `entry`
// describes, verifying the CRC; byte-swaps when `big_endian`. DataLoss naming
// `what` (file and key) on a size or checksum mismatch.
absl::StatusOr<Tensor> DecodeTensor(const BundleEntryProto& entry, bool big_endian,
                                    absl::string_view bytes, absl::string_view what);

}  // namespace graphrun

#endif  // GRAPHRUN_GRAPH_CHECKPOINT_BUNDLE_FORMAT_H_
