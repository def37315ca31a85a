#include "graph/checkpoint/table.h"

#include <algorithm>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "graph/checkpoint/coding.h"
#include "graph/checkpoint/crc32c.h"
#include "graph/status_macros.h"

namespace graphrun {
namespace {

constexpr size_t kFooterSize = 48;          // two padded handles + 8-byte magic
constexpr size_t kHandlesSize = 40;         // 2 x 20 bytes, the longest two varint64s
constexpr size_t kBlockTrailerSize = 5;     // type byte + fixed32 masked CRC
constexpr uint32_t kMagicLo = 0x8b80fb57u;  // LevelDB's 0xdb4775248b80fb57
constexpr uint32_t kMagicHi = 0xdb477524u;
constexpr char kNoCompression = 0;
constexpr char kSnappyCompression = 1;

struct BlockHandle {
  uint64_t offset = 0;
  uint64_t size = 0;
};

void EncodeHandle(const BlockHandle& h, std::string* dst) {
  coding::PutVarint64(dst, h.offset);
  coding::PutVarint64(dst, h.size);
}

bool DecodeHandle(absl::string_view* in, BlockHandle* h) {
  return coding::GetVarint64(in, &h->offset) && coding::GetVarint64(in, &h->size);
}

absl::Status Corrupt(absl::string_view filename, absl::string_view what) {
  return absl::DataLossError(absl::StrCat("corrupt table ", filename, ": ", what));
}

// The checked contents of the block at `h` (trailer stripped). `limit` is
// where block data ends (the footer's start).
absl::StatusOr<absl::string_view> ReadBlock(absl::string_view file, size_t limit,
                                            const BlockHandle& h, absl::string_view filename,
                                            absl::string_view what) {
  if (h.offset > limit || h.size > limit - h.offset ||
      kBlockTrailerSize > limit - h.offset - h.size) {
    return Corrupt(filename, absl::StrCat(what, " handle (offset ", h.offset, ", size ", h.size,
                                          ") is outside the file's ", limit, " block bytes"));
  }
  const char* p = file.data() + h.offset;
  const char type = p[h.size];
  const uint32_t stored = crc32c::Unmask(coding::DecodeFixed32(p + h.size + 1));
  const uint32_t actual = crc32c::Extend(0, p, h.size + 1);
  if (stored != actual) {
    return Corrupt(filename, absl::StrCat(what, " at offset ", h.offset, ": checksum mismatch"));
  }
  if (type == kSnappyCompression) {
    return absl::UnimplementedError(absl::StrCat(filename, ": ", what, " at offset ", h.offset,
                                                 " is snappy-compressed (unsupported)"));
  }
  if (type != kNoCompression) {
    return Corrupt(filename, absl::StrCat(what, " at offset ", h.offset,
                                          ": unknown compression type ", int{type}));
  }
  return absl::string_view(p, h.size);
}

// Decodes every entry of a block, checking its layout and restart array.
absl::Status ParseBlock(absl::string_view block, absl::string_view filename, absl::string_view what,
                        std::vector<std::pair<std::string, std::string>>* entries) {
  if (block.size() < 4) return Corrupt(filename, absl::StrCat(what, " is shorter than 4 bytes"));
  const uint64_t num_restarts = coding::DecodeFixed32(block.data() + block.size() - 4);
  if (num_restarts == 0 || num_restarts > (block.size() - 4) / 4) {
    return Corrupt(filename, absl::StrCat(what, " claims ", num_restarts, " restart points"));
  }
  const size_t restarts_at = block.size() - 4 - 4 * num_restarts;
  absl::string_view in = block.substr(0, restarts_at);
  std::vector<uint32_t> full_key_offsets;  // entries with shared == 0
  std::string key;
  while (!in.empty()) {
    const uint32_t offset = static_cast<uint32_t>(restarts_at - in.size());
    uint32_t shared = 0, unshared = 0, value_size = 0;
    if (!coding::GetVarint32(&in, &shared) || !coding::GetVarint32(&in, &unshared) ||
        !coding::GetVarint32(&in, &value_size) || shared > key.size() || unshared > in.size() ||
        value_size > in.size() - unshared) {
      return Corrupt(filename, absl::StrCat(what, ": bad entry at offset ", offset));
    }
    if (shared == 0) full_key_offsets.push_back(offset);
    key.resize(shared);
    key.append(in.data(), unshared);
    in.remove_prefix(unshared);
    entries->emplace_back(key, std::string(in.substr(0, value_size)));
    in.remove_prefix(value_size);
  }
  for (uint64_t i = 0; i < num_restarts; ++i) {
    const uint32_t r = coding::DecodeFixed32(block.data() + restarts_at + 4 * i);
    if (restarts_at == 0 && r == 0) continue;  // an empty block's single restart
    if (!std::binary_search(full_key_offsets.begin(), full_key_offsets.end(), r)) {
      return Corrupt(filename, absl::StrCat(what, ": restart point ", r,
                                            " is not the start of a full-key entry"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::string ShortestSeparator(absl::string_view start, absl::string_view limit) {
  const size_t min_len = std::min(start.size(), limit.size());
  size_t diff = 0;
  while (diff < min_len && start[diff] == limit[diff]) ++diff;
  if (diff < min_len) {
    const uint8_t byte = static_cast<uint8_t>(start[diff]);
    if (byte < 0xff && byte + 1 < static_cast<uint8_t>(limit[diff])) {
      std::string out(start.substr(0, diff + 1));
      out[diff] = static_cast<char>(byte + 1);
      return out;
    }
  }
  return std::string(start);
}

std::string ShortSuccessor(absl::string_view key) {
  for (size_t i = 0; i < key.size(); ++i) {
    const uint8_t byte = static_cast<uint8_t>(key[i]);
    if (byte != 0xff) {
      std::string out(key.substr(0, i + 1));
      out[i] = static_cast<char>(byte + 1);
      return out;
    }
  }
  return std::string(key);
}

void TableBuilder::BlockBuilder::Add(absl::string_view key, absl::string_view value) {
  size_t shared = 0;
  if (counter_ < restart_interval_) {
    const size_t n = std::min(last_key_.size(), key.size());
    while (shared < n && last_key_[shared] == key[shared]) ++shared;
  } else {
    restarts_.push_back(static_cast<uint32_t>(buffer_.size()));
    counter_ = 0;
  }
  coding::PutVarint32(&buffer_, static_cast<uint32_t>(shared));
  coding::PutVarint32(&buffer_, static_cast<uint32_t>(key.size() - shared));
  coding::PutVarint32(&buffer_, static_cast<uint32_t>(value.size()));
  buffer_.append(key.data() + shared, key.size() - shared);
  buffer_.append(value.data(), value.size());
  last_key_.assign(key.data(), key.size());
  ++counter_;
}

std::string TableBuilder::BlockBuilder::Finish() {
  std::string out = std::move(buffer_);
  for (uint32_t r : restarts_) coding::PutFixed32(&out, r);
  coding::PutFixed32(&out, static_cast<uint32_t>(restarts_.size()));
  buffer_.clear();
  restarts_ = {0};
  counter_ = 0;
  last_key_.clear();
  return out;
}

TableBuilder::TableBuilder(TableOptions options)
    : options_(options), data_block_(options.block_restart_interval) {}

std::string TableBuilder::WriteBlock(const std::string& contents) {
  BlockHandle handle{out_.size(), contents.size()};
  out_.append(contents);
  out_.push_back(kNoCompression);
  const uint32_t crc = crc32c::Extend(0, out_.data() + handle.offset, contents.size() + 1);
  coding::PutFixed32(&out_, crc32c::Mask(crc));
  std::string encoded;
  EncodeHandle(handle, &encoded);
  return encoded;
}

void TableBuilder::FlushDataBlock() {
  if (data_block_.empty()) return;
  pending_handle_ = WriteBlock(data_block_.Finish());
  pending_index_entry_ = true;
}

absl::Status TableBuilder::Add(absl::string_view key, absl::string_view value) {
  if (has_key_ && key <= last_key_) {
    return absl::InvalidArgumentError(absl::StrCat("table keys out of order: \"",
                                                   absl::CEscape(key), "\" after \"",
                                                   absl::CEscape(last_key_), "\""));
  }
  if (pending_index_entry_) {
    index_block_.Add(ShortestSeparator(last_key_, key), pending_handle_);
    pending_index_entry_ = false;
  }
  data_block_.Add(key, value);
  last_key_.assign(key.data(), key.size());
  has_key_ = true;
  if (data_block_.SizeEstimate() >= options_.block_size) FlushDataBlock();
  return absl::OkStatus();
}

std::string TableBuilder::Finish() {
  FlushDataBlock();
  std::string metaindex_handle = WriteBlock(BlockBuilder(options_.block_restart_interval).Finish());
  if (pending_index_entry_) {
    index_block_.Add(ShortSuccessor(last_key_), pending_handle_);
    pending_index_entry_ = false;
  }
  std::string index_handle = WriteBlock(index_block_.Finish());
  std::string footer = metaindex_handle + index_handle;
  footer.resize(kHandlesSize, '\0');
  coding::PutFixed32(&footer, kMagicLo);
  coding::PutFixed32(&footer, kMagicHi);
  out_.append(footer);
  return std::move(out_);
}

absl::StatusOr<std::vector<std::pair<std::string, std::string>>> ReadTable(
    absl::string_view contents, absl::string_view filename) {
  if (contents.size() < kFooterSize) {
    return Corrupt(filename, absl::StrCat("file is ", contents.size(),
                                          " bytes, shorter than the 48-byte footer"));
  }
  const size_t limit = contents.size() - kFooterSize;
  const char* footer = contents.data() + limit;
  if (coding::DecodeFixed32(footer + kHandlesSize) != kMagicLo ||
      coding::DecodeFixed32(footer + kHandlesSize + 4) != kMagicHi) {
    return Corrupt(filename, "bad magic number in the footer (not a table, or truncated)");
  }
  absl::string_view handles(footer, kHandlesSize);
  BlockHandle metaindex, index;
  if (!DecodeHandle(&handles, &metaindex) || !DecodeHandle(&handles, &index)) {
    return Corrupt(filename, "undecodable block handles in the footer");
  }
  GR_ASSIGN_OR_RETURN(absl::string_view meta_block,
                      ReadBlock(contents, limit, metaindex, filename, "metaindex block"));
  std::vector<std::pair<std::string, std::string>> meta_entries;
  GR_RETURN_IF_ERROR(ParseBlock(meta_block, filename, "metaindex block", &meta_entries));
  GR_ASSIGN_OR_RETURN(absl::string_view index_block,
                      ReadBlock(contents, limit, index, filename, "index block"));
  std::vector<std::pair<std::string, std::string>> index_entries;
  GR_RETURN_IF_ERROR(ParseBlock(index_block, filename, "index block", &index_entries));

  std::vector<std::pair<std::string, std::string>> entries;
  for (size_t b = 0; b < index_entries.size(); ++b) {
    const std::string what = absl::StrCat("data block ", b);
    absl::string_view value = index_entries[b].second;
    BlockHandle handle;
    if (!DecodeHandle(&value, &handle) || !value.empty()) {
      return Corrupt(filename, absl::StrCat("undecodable handle of ", what, " in the index"));
    }
    GR_ASSIGN_OR_RETURN(absl::string_view block,
                        ReadBlock(contents, limit, handle, filename, what));
    const size_t first = entries.size();
    GR_RETURN_IF_ERROR(ParseBlock(block, filename, what, &entries));
    if (entries.size() == first) return Corrupt(filename, absl::StrCat(what, " is empty"));
    // Keys: strictly increasing across blocks, and at most the block's separator.
    for (size_t i = std::max<size_t>(first, 1); i < entries.size(); ++i) {
      if (entries[i - 1].first >= entries[i].first) {
        return Corrupt(filename, absl::StrCat(what, ": keys out of order at \"",
                                              absl::CEscape(entries[i].first), "\""));
      }
    }
    if (entries.back().first > index_entries[b].first) {
      return Corrupt(filename, absl::StrCat(what, ": key beyond its index separator"));
    }
  }
  return entries;
}

}  // namespace graphrun
