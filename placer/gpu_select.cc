#include "placer/gpu_select.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <optional>
#include <tuple>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "graph/status_macros.h"

namespace graphrun {
namespace placer {
namespace {

absl::Status FileError(int err, absl::string_view what,
                       absl::string_view path) {
  return absl::ErrnoToStatus(err, absl::StrCat(what, " ", path));
}

// The pid a claimant wrote into its lock file, or "?".
std::string ClaimantPid(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "?";
  char buffer[32] = {};
  ssize_t n = read(fd, buffer, sizeof(buffer) - 1);
  close(fd);
  absl::string_view pid =
      absl::StripAsciiWhitespace(absl::string_view(buffer, n > 0 ? n : 0));
  return pid.empty() ? "?" : std::string(pid);
}

constexpr int kBusyUtilizationPercent = 50;

// One GPU the query returned, as the selection sees it.
struct Candidate {
  const GpuStatus* gpu = nullptr;
  int ordinal = -1;      // CUDA ordinal; -1: hidden by CUDA_VISIBLE_DEVICES
  bool claimed = false;  // by another process or GpuClaims object
  std::string claimant;  // its pid, when claimed
  std::string outcome = "hidden by CUDA_VISIBLE_DEVICES";
};

enum class Mode { kAuto, kAll, kNone, kList };

struct Request {
  Mode mode = Mode::kAuto;
  std::vector<int> indices;  // kList
};

absl::StatusOr<Request> ParseGpus(const std::string& gpus) {
  if (gpus == "auto") return Request{Mode::kAuto, {}};
  if (gpus == "all") return Request{Mode::kAll, {}};
  if (gpus == "none") return Request{Mode::kNone, {}};
  Request request{Mode::kList, {}};
  for (absl::string_view token : absl::StrSplit(gpus, ',')) {
    int index = 0;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(token), &index) ||
        index < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "gpus=\"", gpus,
          "\": expected \"auto\", \"all\", \"none\" or GPU indices such as "
          "\"0,2\""));
    }
    if (std::count(request.indices.begin(), request.indices.end(), index)) {
      return absl::InvalidArgumentError(
          absl::StrCat("gpus=\"", gpus, "\" names GPU ", index, " twice"));
    }
    request.indices.push_back(index);
  }
  return request;
}

// Positions in `gpus` (sorted by index) of the GPUs CUDA_VISIBLE_DEVICES
// leaves visible, in its order. Index entries are taken as NVML indices,
// which CUDA's numbering matches for identical GPUs or with
// CUDA_DEVICE_ORDER=PCI_BUS_ID.
std::vector<size_t> VisibleGpus(const GpuSelectOptions& options,
                                const std::vector<GpuStatus>& gpus) {
  std::vector<size_t> visible;
  if (!options.has_cuda_visible_devices) {
    for (size_t i = 0; i < gpus.size(); ++i) visible.push_back(i);
    return visible;
  }
  for (absl::string_view entry :
       absl::StrSplit(options.cuda_visible_devices, ',')) {
    entry = absl::StripAsciiWhitespace(entry);
    std::optional<size_t> match;
    int index = 0;
    if (absl::SimpleAtoi(entry, &index)) {
      for (size_t i = 0; i < gpus.size(); ++i) {
        if (gpus[i].index == index) match = i;
      }
    } else if (absl::StartsWithIgnoreCase(entry, "GPU-")) {
      int matches = 0;
      for (size_t i = 0; i < gpus.size(); ++i) {
        if (absl::StartsWithIgnoreCase(gpus[i].uuid, entry)) {
          match = i;
          ++matches;
        }
      }
      if (matches != 1) match.reset();  // none, or an ambiguous prefix
    }
    // As in CUDA, the first entry naming no GPU (or one again) ends the list.
    if (!match || std::count(visible.begin(), visible.end(), *match)) break;
    visible.push_back(*match);
  }
  return visible;
}

bool IsBusy(const Candidate& c) {
  const GpuStatus& gpu = *c.gpu;
  return c.claimed || gpu.utilization_percent >= kBusyUtilizationPercent ||
         (gpu.total_memory > 0 && gpu.free_memory * 2 < gpu.total_memory);
}

// Best first: not claimed, fewer other processes, lower utilization (in
// 10-point steps), more free memory (in steps of 5% of the largest GPU),
// lower index. Unknown counts and utilization rank as 0. Coarse steps keep
// sampling noise from reordering GPUs that are equally idle.
std::vector<Candidate*> Rank(std::vector<Candidate*> gpus) {
  int64_t largest = 0;
  for (const Candidate* c : gpus) {
    largest = std::max(largest, c->gpu->total_memory);
  }
  const int64_t step = std::max<int64_t>(1, largest / 20);
  auto key = [step](const Candidate* c) {
    const GpuStatus& g = *c->gpu;
    return std::make_tuple(c->claimed, std::max(g.other_processes, 0),
                           std::max(g.utilization_percent, 0) / 10,
                           -(g.free_memory / step), g.index);
  };
  std::sort(gpus.begin(), gpus.end(),
            [&key](const Candidate* a, const Candidate* b) {
              return key(a) < key(b);
            });
  return gpus;
}

// gpus=auto: ranks `visible` and takes the best per `num_gpus`, claiming
// them through `claims` (nullable). A GPU lost to a concurrent claimant is
// marked claimed and the ranking redone, at most once per GPU.
std::vector<Candidate*> ChooseAuto(int num_gpus,
                                   const std::vector<Candidate*>& visible,
                                   GpuClaims* claims,
                                   std::vector<std::string>* notes) {
  while (true) {
    const std::vector<Candidate*> ranked = Rank(visible);
    std::vector<Candidate*> chosen;
    if (num_gpus >= 0) {
      chosen.assign(ranked.begin(), ranked.begin() + num_gpus);
    } else {
      for (Candidate* c : ranked) {
        if (!IsBusy(*c)) chosen.push_back(c);
      }
    }
    const bool fallback = num_gpus < 0 && chosen.empty() && !ranked.empty();
    if (fallback) chosen.push_back(ranked.front());
    for (size_t r = 0; r < ranked.size(); ++r) {
      Candidate* c = ranked[r];
      const bool picked = std::count(chosen.begin(), chosen.end(), c) > 0;
      c->outcome =
          absl::StrCat(picked ? "chosen" : "not chosen", " (rank ", r + 1, ")");
      if (fallback && picked) {
        absl::StrAppend(&c->outcome, ": every GPU is busy, this one least");
      } else if (!picked) {
        absl::StrAppend(&c->outcome, num_gpus >= 0
                                         ? absl::StrCat(": num_gpus=", num_gpus)
                                         : std::string(": busy"));
      }
    }
    bool lost = false;
    for (Candidate* c : chosen) {
      if (claims == nullptr || lost) break;
      absl::Status status = claims->Claim(*c->gpu);
      if (absl::IsUnavailable(status) && !c->claimed) {
        c->claimed = lost = true;
        c->claimant = ClaimantPid(claims->LockPath(*c->gpu));
      } else if (!status.ok() && !absl::IsUnavailable(status)) {
        notes->push_back(
            absl::StrCat("GPU claims ignored: ", status.message()));
        claims = nullptr;
      }
    }
    if (!lost) return chosen;
  }
}

std::string Gib(int64_t bytes) {
  return absl::StrFormat("%.1f GiB", static_cast<double>(bytes) / (1 << 30));
}

std::string Describe(const Candidate& c) {
  const GpuStatus& g = *c.gpu;
  std::string line = absl::StrCat("GPU ", g.index);
  if (!g.name.empty()) absl::StrAppend(&line, " (", g.name, ")");
  if (g.total_memory > 0) {
    absl::StrAppend(&line, ": ", Gib(g.free_memory), " free of ",
                    Gib(g.total_memory));
  } else {
    absl::StrAppend(&line, ": memory unknown");
  }
  if (g.utilization_percent >= 0) {
    absl::StrAppend(&line, ", ", g.utilization_percent, "% busy");
  } else {
    absl::StrAppend(&line, ", utilization unknown");
  }
  if (g.other_processes < 0) {
    absl::StrAppend(&line, ", other processes unknown");
  } else if (g.other_processes == 0) {
    absl::StrAppend(&line, ", no other process");
  } else {
    absl::StrAppend(&line, ", ", g.other_processes, " other process",
                    g.other_processes == 1 ? "" : "es");
  }
  if (c.claimed) {
    absl::StrAppend(&line, ", claimed by graphrun pid ", c.claimant);
  }
  absl::StrAppend(&line, ": ", c.outcome);
  return line;
}

std::string IndexList(const std::vector<Candidate*>& gpus) {
  if (gpus.empty()) return "none";
  return absl::StrJoin(gpus, ", ", [](std::string* out, const Candidate* c) {
    absl::StrAppend(out, c->gpu->index);
  });
}
}  // namespace

std::string GpuClaims::DefaultDirectory() {
  const char* tmp = std::getenv("TMPDIR");
  std::string dir = (tmp != nullptr && *tmp != '\0') ? tmp : "/tmp";
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return absl::StrCat(dir, "/graphrun-gpu-claims-", getuid());
}

GpuClaims::GpuClaims(std::string directory)
    : directory_(std::move(directory)) {}

GpuClaims::~GpuClaims() {
  // Closing the last fd of an open file releases its flock.
  for (const auto& [path, fd] : held_) close(fd);
}

std::string GpuClaims::LockPath(const GpuStatus& gpu) const {
  if (gpu.uuid.empty()) {
    return absl::StrCat(directory_, "/gpu-index-", gpu.index, ".lock");
  }
  std::string key = gpu.uuid;
  for (char& c : key) {
    if (!absl::ascii_isalnum(c) && c != '-') c = '_';
  }
  return absl::StrCat(directory_, "/", key, ".lock");
}

absl::Status GpuClaims::EnsureDirectory() {
  if (directory_ready_) return absl::OkStatus();
  if (mkdir(directory_.c_str(), 0700) != 0 && errno != EEXIST) {
    return FileError(errno, "creating GPU claims directory", directory_);
  }
  // Someone else's directory (or a link) in /tmp could fake or hide claims.
  struct stat info;
  if (lstat(directory_.c_str(), &info) != 0) {
    return FileError(errno, "checking GPU claims directory", directory_);
  }
  if (!S_ISDIR(info.st_mode) || info.st_uid != getuid()) {
    return absl::PermissionDeniedError(
        absl::StrCat("GPU claims directory ", directory_,
                     " is not a directory owned by uid ", getuid()));
  }
  directory_ready_ = true;
  return absl::OkStatus();
}

absl::StatusOr<bool> GpuClaims::ClaimedByOther(const GpuStatus& gpu) {
  GR_RETURN_IF_ERROR(EnsureDirectory());
  const std::string path = LockPath(gpu);
  if (held_.count(path) > 0) return false;
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return FileError(errno, "opening GPU claim", path);
  // A shared lock conflicts only with a claim's exclusive one; it is dropped
  // at once by close().
  const int rc = flock(fd, LOCK_SH | LOCK_NB);
  const int err = errno;
  close(fd);
  if (rc == 0) return false;
  if (err == EWOULDBLOCK) return true;
  return FileError(err, "testing GPU claim", path);
}

absl::Status GpuClaims::Claim(const GpuStatus& gpu) {
  GR_RETURN_IF_ERROR(EnsureDirectory());
  const std::string path = LockPath(gpu);
  if (held_.count(path) > 0) return absl::OkStatus();
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return FileError(errno, "opening GPU claim", path);
  // A few tries: another process's ClaimedByOther() holds a shared lock for
  // microseconds.
  bool locked = false;
  for (int attempt = 0; attempt < 5 && !locked; ++attempt) {
    if (attempt > 0) usleep(2000);
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
      locked = true;
    } else if (errno != EWOULDBLOCK) {
      const int err = errno;
      close(fd);
      return FileError(err, "locking GPU claim", path);
    }
  }
  if (!locked) {
    close(fd);
    return absl::UnavailableError(
        absl::StrCat("GPU ", gpu.index, " is claimed by graphrun pid ",
                     ClaimantPid(path), " (", path, ")"));
  }
  // For humans; the lock alone is the claim, so write errors do not matter.
  const std::string pid = absl::StrCat(getpid(), "\n");
  if (ftruncate(fd, 0) == 0) {
    (void)!pwrite(fd, pid.data(), pid.size(), 0);
  }
  held_[path] = fd;
  return absl::OkStatus();
}

absl::StatusOr<GpuChoice> SelectGpus(const GpuSelectOptions& options,
                                     GpuInfoSource* source, GpuClaims* claims) {
  GR_ASSIGN_OR_RETURN(const Request request, ParseGpus(options.gpus));
  if (options.num_gpus < -1 ||
      (options.num_gpus != -1 && request.mode != Mode::kAuto)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "num_gpus=", options.num_gpus, " with gpus=\"", options.gpus,
        "\": num_gpus is -1 or a count, and only for gpus=auto"));
  }
  GpuChoice choice;
  if (request.mode == Mode::kNone) {
    choice.reasons.push_back("gpus=none: no GPU used");
    return choice;
  }
  absl::StatusOr<std::vector<GpuStatus>> queried = source->Query();
  if (!queried.ok()) {
    if (request.mode == Mode::kList) {
      return WithContext(queried.status(),
                         absl::StrCat("gpus=\"", options.gpus, "\""));
    }
    choice.reasons.push_back(
        absl::StrCat("no GPU query available: ", queried.status().message()));
    return choice;
  }
  std::vector<GpuStatus> gpus = *std::move(queried);
  std::stable_sort(
      gpus.begin(), gpus.end(),
      [](const GpuStatus& a, const GpuStatus& b) { return a.index < b.index; });
  std::vector<Candidate> candidates(gpus.size());
  for (size_t i = 0; i < gpus.size(); ++i) candidates[i].gpu = &gpus[i];
  std::vector<Candidate*> visible;
  for (size_t position : VisibleGpus(options, gpus)) {
    candidates[position].ordinal = static_cast<int>(visible.size());
    candidates[position].outcome = "not chosen";
    visible.push_back(&candidates[position]);
  }

  std::vector<std::string> notes;
  for (Candidate* c : visible) {
    if (claims == nullptr) break;
    absl::StatusOr<bool> claimed = claims->ClaimedByOther(*c->gpu);
    if (!claimed.ok()) {
      notes.push_back(
          absl::StrCat("GPU claims ignored: ", claimed.status().message()));
      for (Candidate* other : visible) other->claimed = false;
      claims = nullptr;
    } else if (*claimed) {
      c->claimed = true;
      c->claimant = ClaimantPid(claims->LockPath(*c->gpu));
    }
  }
  GpuClaims* const claim_through = options.claim ? claims : nullptr;

  std::vector<Candidate*> chosen;
  if (request.mode == Mode::kAuto) {
    if (options.num_gpus > static_cast<int>(visible.size())) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "num_gpus=", options.num_gpus, " but only ", visible.size(),
          " GPUs are visible (", gpus.size(), " on this host)"));
    }
    chosen = ChooseAuto(options.num_gpus, visible, claim_through, &notes);
  } else {
    if (request.mode == Mode::kAll) {
      chosen = visible;
      std::sort(chosen.begin(), chosen.end(),
                [](const Candidate* a, const Candidate* b) {
                  return a->gpu->index < b->gpu->index;
                });
    }
    for (int index : request.indices) {
      auto it = std::find_if(
          visible.begin(), visible.end(),
          [index](const Candidate* c) { return c->gpu->index == index; });
      if (it != visible.end()) {
        chosen.push_back(*it);
        continue;
      }
      const bool exists =
          std::any_of(gpus.begin(), gpus.end(),
                      [index](const GpuStatus& g) { return g.index == index; });
      return absl::InvalidArgumentError(absl::StrCat(
          "gpus=\"", options.gpus, "\": GPU ", index,
          exists ? absl::StrCat(" is hidden by CUDA_VISIBLE_DEVICES=\"",
                                options.cuda_visible_devices, "\"")
                 : std::string(" does not exist"),
          "; visible GPUs: ", IndexList(visible)));
    }
    for (Candidate* c : visible) c->outcome = "not requested";
    const char* why =
        request.mode == Mode::kAll ? "chosen (gpus=all)" : "chosen (requested)";
    for (Candidate* c : chosen) {
      c->outcome = why;
      if (claim_through == nullptr) continue;
      absl::Status status = claim_through->Claim(*c->gpu);
      if (absl::IsUnavailable(status)) {
        c->claimed = true;
        c->claimant = ClaimantPid(claim_through->LockPath(*c->gpu));
      } else if (!status.ok()) {
        notes.push_back(absl::StrCat("GPU ", c->gpu->index,
                                     " not claimed: ", status.message()));
      }
      if (c->claimed) {
        absl::StrAppend(&c->outcome, ", although another process claims it");
      }
    }
  }

  for (const Candidate* c : chosen) {
    choice.selected.push_back(c->gpu->index);
    choice.cuda_ordinals.push_back(c->ordinal);
    if (c->claimed) {
      choice.shared.push_back(absl::StrCat("GPU ", c->gpu->index,
                                           " is shared with graphrun pid ", c->claimant));
    } else if (IsBusy(*c)) {
      choice.shared.push_back(
          absl::StrCat("GPU ", c->gpu->index, " is shared: it is busy with other work"));
    }
  }
  for (const Candidate& c : candidates) choice.reasons.push_back(Describe(c));
  for (std::string& note : notes) choice.reasons.push_back(std::move(note));
  return choice;
}

std::string FormatGpuChoice(const GpuChoice& choice) {
  std::string out = "GPUs selected:";
  if (choice.selected.empty()) absl::StrAppend(&out, " none");
  for (size_t i = 0; i < choice.selected.size(); ++i) {
    absl::StrAppend(&out, i == 0 ? " " : ", ", choice.selected[i],
                    " as GPU:", i);
  }
  for (const std::string& reason : choice.reasons) {
    absl::StrAppend(&out, "\n  ", reason);
  }
  return out;
}
}  // namespace placer
}  // namespace graphrun
