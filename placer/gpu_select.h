// Picks which GPUs a graphrun process uses when the user has not pinned them.
//
// A GpuInfoSource reports every GPU on the host (NVML here, the CUDA runtime
// in runtime/gpu/gpu_info_source.h, or a fake); GpuClaims lets graphrun processes on one host mark the GPUs they use
// with advisory file locks; SelectGpus() combines both with the user's
// --gpus / CUDA_VISIBLE_DEVICES into a GpuChoice with one human reason per
// GPU. Runs before any device is created; nothing here needs a GPU.
//
// Thread-compatible: use each object from one thread at a time.
#ifndef GRAPHRUN_PLACER_GPU_SELECT_H_
#define GRAPHRUN_PLACER_GPU_SELECT_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace graphrun {
namespace placer {

struct GpuStatus {
  int index = 0;  // physical index, as the driver (NVML, nvidia-smi) numbers it
  std::string name;
  std::string uuid;  // "GPU-8932f937-...", or "" when unknown
  int64_t total_memory = 0;
  int64_t free_memory = 0;
  int utilization_percent = -1;  // -1: unknown
  int other_processes = -1;  // compute processes besides this one; -1: unknown
};

// Reports the GPUs of this host. Query() returns every GPU, in any order, or
// Unavailable when there is no way to ask (no driver, no library).
class GpuInfoSource {
 public:
  virtual ~GpuInfoSource() = default;
  virtual absl::StatusOr<std::vector<GpuStatus>> Query() = 0;
};

// Asks NVML, loaded with dlopen at the first Query(), so graphrun runs on
// hosts without the driver. Query() is Unavailable, naming the cause, when the
// library cannot be loaded or NVML cannot initialize. `library` is the name
// or path given to dlopen.
class NvmlGpuInfoSource : public GpuInfoSource {
 public:
  explicit NvmlGpuInfoSource(std::string library = "libnvidia-ml.so.1");
  ~NvmlGpuInfoSource() override;
  NvmlGpuInfoSource(const NvmlGpuInfoSource&) = delete;
  NvmlGpuInfoSource& operator=(const NvmlGpuInfoSource&) = delete;

  absl::StatusOr<std::vector<GpuStatus>> Query() override;

 private:
  std::string library_;
  void* handle_ = nullptr;  // from dlopen; closed by the destructor
};

// Returns the GPUs it was given; for tests and for planning with --fake_gpus.
class FakeGpuInfoSource : public GpuInfoSource {
 public:
  explicit FakeGpuInfoSource(std::vector<GpuStatus> gpus)
      : gpus_(std::move(gpus)) {}
  absl::StatusOr<std::vector<GpuStatus>> Query() override { return gpus_; }

 private:
  std::vector<GpuStatus> gpus_;
};

// Advisory claims between graphrun processes on one host: one lock file per
// GPU (named by uuid when known, else by index) under `directory`, locked
// with flock(). A held lock is a claim; it vanishes when its holder exits,
// however it exits. Locks taken through different GpuClaims objects conflict
// even within one process. The directory is created (mode 0700) on first use
// and must belong to this user.
class GpuClaims {
 public:
  // $TMPDIR (or /tmp) + "/graphrun-gpu-claims-<uid>".
  static std::string DefaultDirectory();

  GpuClaims() : GpuClaims(DefaultDirectory()) {}
  explicit GpuClaims(std::string directory);
  ~GpuClaims();  // releases every claim this object holds
  GpuClaims(const GpuClaims&) = delete;
  GpuClaims& operator=(const GpuClaims&) = delete;

  // Whether a live process (or another GpuClaims object) holds `gpu`'s claim.
  // False when this object holds it. Errors when the directory or lock file
  // cannot be used.
  absl::StatusOr<bool> ClaimedByOther(const GpuStatus& gpu);

  // Claims `gpu` until this object is destroyed; OK if already held here.
  // Unavailable when someone else holds it; other errors for file trouble.
  absl::Status Claim(const GpuStatus& gpu);

  // The lock file for `gpu`; it holds the claimant's pid, for humans.
  std::string LockPath(const GpuStatus& gpu) const;

 private:
  absl::Status EnsureDirectory();

  std::string directory_;
  bool directory_ready_ = false;
  std::map<std::string, int> held_;  // lock path -> open, locked fd
};

struct GpuSelectOptions {
  // "auto" (rank and pick idle GPUs), "all", "none", or physical indices in
  // the order they should become GPU:0, GPU:1, ...: "2,0".
  std::string gpus = "auto";
  // With "auto" only: how many GPUs to take, best first. -1: every GPU that
  // is not busy (utilization >= 50%, less than half its memory free, or
  // claimed by another process), or the single best one when all are busy.
  int num_gpus = -1;
  // The caller copies CUDA_VISIBLE_DEVICES from the environment here. When
  // set, only the GPUs it lists are candidates, in its order. Entries are
  // indices or "GPU-" UUID prefixes; as in CUDA, the list ends at the first
  // entry that names no GPU, names one twice, or is ambiguous (so "" and
  // "-1" hide every GPU). MIG entries are not supported and end the list.
  std::string cuda_visible_devices;
  bool has_cuda_visible_devices = false;
  // Claim the chosen GPUs through the GpuClaims given to SelectGpus().
  bool claim = true;
};

struct GpuChoice {
  // Physical indices, in the order they become GPU:0, GPU:1, ...
  std::vector<int> selected;
  // selected[i]'s CUDA runtime ordinal in this process: its position among
  // the GPUs CUDA_VISIBLE_DEVICES leaves visible (the index when unset).
  std::vector<int> cuda_ordinals;
  // One line per GPU, by index, e.g. "GPU 1 (NVIDIA H200): 139.2 GiB free of
  // 140.0 GiB, 0% busy, no other process: chosen (rank 1)"; plus a line for
  // anything that affected the whole choice.
  std::vector<std::string> reasons;
  // One line per selected GPU that another process already uses (claimed by
  // another graphrun, or busy): "GPU 0 is shared with graphrun pid 4711".
  std::vector<std::string> shared;
};

// Chooses GPUs per `options`, asking `source` (not with "none") and, when
// `claims` is not null, skipping GPUs other processes claimed ("auto") and
// claiming the chosen ones (options.claim). Explicit lists are honored even
// for claimed GPUs; the reason says so. Deterministic for the same inputs.
// Errors: InvalidArgument for a malformed option or an index that does not
// exist or is hidden; ResourceExhausted when num_gpus exceeds the visible
// GPUs; the query's error for an explicit list. A failed query with "auto" or
// "all" selects nothing and says why in `reasons`.
absl::StatusOr<GpuChoice> SelectGpus(const GpuSelectOptions& options,
                                     GpuInfoSource* source, GpuClaims* claims);

// The choice and its reasons as indented lines, for logs.
std::string FormatGpuChoice(const GpuChoice& choice);

}  // namespace placer
}  // namespace graphrun

#endif  // GRAPHRUN_PLACER_GPU_SELECT_H_
