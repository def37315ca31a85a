// The .index file of a TensorFlow checkpoint: an immutable, sorted
// string->string table in LevelDB's table format, as TensorFlow writes it
// (data blocks with prefix-compressed keys and restart points, an empty
// metaindex block, an index block, a 48-byte footer; no filter block, no
// compression). Reading validates every CRC, bound and key order.
//
// Written here rather than taken from Debian's libleveldb-dev because
// LevelDB's table reader allocates whatever size a block handle claims before
// checking it against the file, so a corrupt footer could abort the process.
//
// Builder: not thread-safe. ReadTable: stateless, thread-safe.
#ifndef GRAPHRUN_GRAPH_CHECKPOINT_TABLE_H_
#define GRAPHRUN_GRAPH_CHECKPOINT_TABLE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace graphrun {

struct TableOptions {
  // A data block is cut once its size reaches this (TensorFlow: 256 KiB).
  size_t block_size = 256 * 1024;
  // Every this many entries a data block stores a full key (a restart point).
  int block_restart_interval = 16;
};

// Builds a table in memory. Example:
//   TableBuilder builder;
//   GR_RETURN_IF_ERROR(builder.Add("", header));
//   GR_RETURN_IF_ERROR(builder.Add("w", entry));
//   std::string bytes = builder.Finish();
class TableBuilder {
 public:
  explicit TableBuilder(TableOptions options = {});

  // Keys must be strictly increasing, bytewise: InvalidArgument otherwise
  // (and the entry is not added).
  absl::Status Add(absl::string_view key, absl::string_view value);

  // The table's bytes. Call once, after the last Add.
  std::string Finish();

 private:
  class BlockBuilder {
   public:
    explicit BlockBuilder(int restart_interval) : restart_interval_(restart_interval) {}
    void Add(absl::string_view key, absl::string_view value);
    size_t SizeEstimate() const { return buffer_.size() + 4 * restarts_.size() + 4; }
    bool empty() const { return buffer_.empty(); }
    // The block's contents; resets the builder.
    std::string Finish();

   private:
    int restart_interval_;
    std::string buffer_;
    std::vector<uint32_t> restarts_ = {0};
    int counter_ = 0;
    std::string last_key_;
  };

  // Appends contents + trailer to out_; returns the encoded block handle.
  std::string WriteBlock(const std::string& contents);
  void FlushDataBlock();

  TableOptions options_;
  std::string out_;
  BlockBuilder data_block_;
  BlockBuilder index_block_{1};
  std::string last_key_;
  bool has_key_ = false;
  // After a data block is flushed, its index entry waits for the next key so
  // that the separator can be short.
  bool pending_index_entry_ = false;
  std::string pending_handle_;
};

// Parses and validates a whole table (its bytes in `contents`) and returns
// its entries in key order. DataLoss naming `filename` on a bad magic number,
// block CRC, handle, block layout or key order; Unimplemented for compressed
// (snappy) blocks, which TensorFlow's checkpoint writer never produces.
absl::StatusOr<std::vector<std::pair<std::string, std::string>>> ReadTable(
    absl::string_view contents, absl::string_view filename);

// Exposed for tests: LevelDB's bytewise key shortening.
std::string ShortestSeparator(absl::string_view start, absl::string_view limit);
std::string ShortSuccessor(absl::string_view key);

}  // namespace graphrun

#endif  // GRAPHRUN_GRAPH_CHECKPOINT_TABLE_H_
