// Merging the per-shard bundles of a sharded save into one checkpoint, as
// TensorFlow's MergeV2Checkpoints does: a Saver with `sharded=True` (and
// every SavedModel and tf.train.Checkpoint save) writes one bundle per
// device under a temporary prefix, then merges them under the final prefix.
#ifndef GRAPHRUN_GRAPH_CHECKPOINT_MERGE_BUNDLES_H_
#define GRAPHRUN_GRAPH_CHECKPOINT_MERGE_BUNDLES_H_

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace graphrun {

// Merges the bundles at `prefixes` into one at `merged_prefix`: their data
// shards are renamed to "<merged_prefix>.data-<i>-of-<n>" (n the number of
// shards that hold tensors), then one index naming every tensor is written
// atomically beside them (the index last, so a merge killed midway leaves
// no index at `merged_prefix` and any earlier checkpoint untouched); the
// sources' index files are then removed. Creates merged_prefix's directory
// if its parent exists. A missing source is InvalidArgument naming it
// unless `allow_missing_files` (then at least one must exist); a key in two
// sources, or sources of different endianness or format version, are
// InvalidArgument naming the key or prefix. Slices of one partitioned
// tensor from several sources are joined into one entry.
absl::Status MergeBundles(const std::vector<std::string>& prefixes,
                          const std::string& merged_prefix, bool allow_missing_files = false);

}  // namespace graphrun

#endif  // GRAPHRUN_GRAPH_CHECKPOINT_MERGE_BUNDLES_H_
