#include "graph/checkpoint/merge_bundles.h"

#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "graph/checkpoint/bundle_format.h"
#include "graph/checkpoint/file_io.h"
#include "graph/checkpoint/table.h"
#include "graph/status_macros.h"
#include "graph/tensor.h"

namespace graphrun {
namespace {

using checkpoint_io::ErrnoStatus;

std::string Dirname(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

bool Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

struct MergeState {
  bool have_header = false;
  BundleHeaderProto header;
  // Source data file -> its shard number in the merged bundle, in the order
  // first referenced.
  std::map<std::string, int> shard_of;
  std::vector<std::string> shard_files;
  std::map<std::string, BundleEntryProto> entries;
  std::vector<std::string> unreferenced;  // data files of sources with no tensors
};

absl::Status MergeOne(const std::string& prefix, MergeState* m) {
  const std::string index_path = IndexFilename(prefix);
  GR_ASSIGN_OR_RETURN(std::string contents, checkpoint_io::ReadFile(index_path));
  GR_ASSIGN_OR_RETURN(BundleIndex index, ParseBundleIndex(contents, index_path));
  const BundleHeaderProto& h = index.header;
  if (!m->have_header) {
    m->header = h;
    m->have_header = true;
  } else if (h.endianness() != m->header.endianness()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Merging bundles of different endianness: ", prefix, " differs from the first"));
  } else if (h.version().SerializeAsString() != m->header.version().SerializeAsString()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Merging bundles with different format versions: ", prefix, " has ",
        h.version().ShortDebugString(), ", the first ", m->header.version().ShortDebugString()));
  }
  std::vector<bool> used(static_cast<size_t>(h.num_shards()), false);
  for (auto& [key, entry] : index.entries) {
    auto existing = m->entries.find(key);
    if (existing != m->entries.end()) {
      BundleEntryProto& e = existing->second;
      if (e.slices_size() == 0 || entry.slices_size() == 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Duplicate tensor keyed by ", key, " encountered, when merging prefix: ", prefix));
      }
      if (e.dtype() != entry.dtype() ||
          e.shape().SerializeAsString() != entry.shape().SerializeAsString()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "slices of tensor ", key, " disagree on dtype or shape, when merging prefix: ",
            prefix));
      }
      for (const auto& slice : entry.slices()) *e.add_slices() = slice;
      continue;
    }
    // Partitioned tensors' full entries hold no bytes; slices and whole
    // tensors live in a data shard.
    const std::string file = DataFilename(prefix, entry.shard_id(), h.num_shards());
    used[static_cast<size_t>(entry.shard_id())] = true;
    auto [it, inserted] = m->shard_of.emplace(file, static_cast<int>(m->shard_files.size()));
    if (inserted) m->shard_files.push_back(file);
    entry.set_shard_id(it->second);
    m->entries.emplace(key, std::move(entry));
  }
  for (int s = 0; s < h.num_shards(); ++s) {
    if (!used[static_cast<size_t>(s)]) m->unreferenced.push_back(DataFilename(prefix, s, h.num_shards()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status MergeBundles(const std::vector<std::string>& prefixes,
                          const std::string& merged_prefix, bool allow_missing_files) {
  const std::string dir = Dirname(merged_prefix);
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return ErrnoStatus(errno, absl::StrCat("cannot create directory ", dir, " for checkpoint ",
                                           merged_prefix));
  }
  MergeState m;
  std::vector<std::string> merged;
  for (const std::string& prefix : prefixes) {
    if (!Exists(IndexFilename(prefix))) {
      if (allow_missing_files) continue;
      return absl::InvalidArgumentError(absl::StrCat(
          "allow_missing_files was set to false and ", prefix, " did not exist (no ",
          IndexFilename(prefix), ")"));
    }
    GR_RETURN_IF_ERROR(MergeOne(prefix, &m));
    merged.push_back(prefix);
  }
  if (merged.empty()) {
    return absl::InvalidArgumentError(
        "At least one prefix checkpoint file must exist, but none existed.");
  }
  const int num_shards = static_cast<int>(m.shard_files.size());
  for (int s = 0; s < num_shards; ++s) {
    const std::string to = DataFilename(merged_prefix, s, num_shards);
    if (::rename(m.shard_files[s].c_str(), to.c_str()) != 0) {
      return ErrnoStatus(errno, absl::StrCat("cannot rename ", m.shard_files[s], " to ", to));
    }
  }
  checkpoint_io::CrashPoint("merge.shards_renamed");
  BundleHeaderProto header = m.header;
  header.set_num_shards(num_shards == 0 ? 1 : num_shards);
  TableBuilder table;
  GR_RETURN_IF_ERROR(table.Add("", header.SerializeAsString()));
  for (const auto& [key, entry] : m.entries) {
    GR_RETURN_IF_ERROR(table.Add(key, entry.SerializeAsString()));
  }
  GR_RETURN_IF_ERROR(
      checkpoint_io::WriteFileAtomically(IndexFilename(merged_prefix), table.Finish()));
  // The merged checkpoint is complete; what is left of the sources is
  // cleared on a best-effort basis, as TensorFlow does.
  for (const std::string& prefix : merged) {
    if (prefix != merged_prefix) ::unlink(IndexFilename(prefix).c_str());
  }
  for (const std::string& file : m.unreferenced) ::unlink(file.c_str());
  return absl::OkStatus();
}

}  // namespace graphrun
