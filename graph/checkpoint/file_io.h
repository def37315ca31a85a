// The POSIX file operations that checkpoints need: whole and ranged reads
// with clear statuses, and atomic replacement (temporary file beside the
// target, fsync, rename, fsync of the directory). Stateless; thread-safe.
#ifndef GRAPHRUN_GRAPH_CHECKPOINT_FILE_IO_H_
#define GRAPHRUN_GRAPH_CHECKPOINT_FILE_IO_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace graphrun {
namespace checkpoint_io {

// An errno as a status: NotFound for ENOENT, PermissionDenied for EACCES,
// else Internal; the message is "<what>: <strerror>".
absl::Status ErrnoStatus(int err, absl::string_view what);

absl::StatusOr<std::string> ReadFile(const std::string& path);

// Bytes [offset, offset + size) of `path`. DataLoss naming the file when it
// ends before offset + size (checked before anything is allocated).
absl::StatusOr<std::string> ReadRange(const std::string& path, int64_t offset, int64_t size);
// The same bytes into dst[0, size).
absl::Status ReadRangeInto(const std::string& path, int64_t offset, int64_t size, char* dst);

// Fault injection for crash tests: the environment variable
// GRAPHRUN_CRASH_AT="<point>:<n>" kills the process with SIGKILL the n-th
// time execution reaches CrashPoint("<point>"). The points:
// "bundle.data_written" (a bundle's data file written, nothing renamed),
// "bundle.between_renames" (data renamed into place, index not yet),
// "merge.shards_renamed" (a merge's shards renamed, index not yet written),
// "worker.run_graph" (a worker task asked to run a step's partition; with
// GRAPHRUN_CRASH_TASK=/job:J/replica:0/task:K only that task of a cluster
// started with one environment crashes).
// Without the variable this is a no-op.
void CrashPoint(absl::string_view point);

// ".tempstate" followed by a random number: unique per call.
std::string TempSuffix();

absl::Status WriteAll(int fd, absl::string_view data, absl::string_view path);

// Appends `data` to a file being written front to back, whose end is at
// `offset`. Each time the file passes a 16 MiB boundary, the disk's
// writeback of the 16 MiB before it is started, and the writeback of the
// piece two before that is waited for and the piece dropped from the page
// cache, so the copy into the page cache and the disk's writes overlap, the
// closing fsync has little left, and a big file takes no more than a few
// pieces of page cache (a write followed by one fsync does the two one
// after the other, and leaves the kernel a whole file of dirty pages to find
// room for). Hints to the kernel only: errors surface at the fsync, as for
// WriteAll.
absl::Status WriteBehind(int fd, absl::string_view data, int64_t offset, absl::string_view path);

// fsync of the directory holding `path`, so that a rename there is durable.
absl::Status SyncParentDir(const std::string& path);

// Replaces `path` with `data` atomically; on failure `path` is unchanged and
// no temporary file is left.
absl::Status WriteFileAtomically(const std::string& path, absl::string_view data);

}  // namespace checkpoint_io
}  // namespace graphrun

#endif  // GRAPHRUN_GRAPH_CHECKPOINT_FILE_IO_H_
