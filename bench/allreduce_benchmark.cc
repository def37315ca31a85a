// The ring allreduce (distributed/ring_allreduce.h) between N processes on
// loopback: bus bandwidth, 2(n-1)/n * bytes / time, for float32 tensors of
// each size, as float32 and as fp16 on the wire (the mean, as gradients
// are averaged). Medians of --reps; ranks line up before each timed call
// with a one-value allreduce. bench/allreduce_vs_gloo.py runs it next to
// PyTorch's gloo and plain TCP in the same run.
//
//   bazel-bin/bench/allreduce_benchmark --ranks=2 --sizes_mb=1,16,64,256 --reps=7
//
// The same reduce over gloo (distributed/gloo_group.h, float32) in the same
// processes, alternating with the ring's.
//
// Prints one line per size: "size_mb ranks ring_busbw_gbps
// ring_fp16_busbw_gbps ring_ms ring_fp16_ms gloo_busbw_gbps gloo_ms".
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "distributed/gloo_group.h"
#include "distributed/ring_allreduce.h"
#include "graph/status_macros.h"

ABSL_FLAG(int, ranks, 2, "processes in the ring");
ABSL_FLAG(std::string, sizes_mb, "1,16,64,256", "tensor sizes in MB (float32)");
ABSL_FLAG(int, reps, 7, "timed calls per size and method");

namespace graphrun {
namespace {

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int RunRank(int rank, int n, std::unique_ptr<RingListener> listener,
            const std::vector<std::string>& addresses, const std::vector<double>& sizes_mb,
            int reps, int report_fd) {
  RingOptions options;
  options.rank = rank;
  options.addresses = addresses;
  absl::StatusOr<std::unique_ptr<Ring>> ring = Ring::Connect(std::move(listener), options);
  if (!ring.ok()) {
    std::fprintf(stderr, "rank %d: %s\n", rank, ring.status().ToString().c_str());
    return 1;
  }
  float one = 1;
  auto barrier = [&] { return (*ring)->Allreduce(&one, 1, DT_FLOAT).ok(); };
  // gloo's rendezvous over the ring: each rank's (key, value) in its slot
  // of a zeroed buffer, summed.
  constexpr int64_t kSlot = 8192;
  auto exchange = [&](const std::string& key, const std::string& value)
      -> absl::StatusOr<std::vector<std::pair<std::string, std::string>>> {
    const std::string entry = key + '\0' + value;
    if (static_cast<int64_t>(entry.size()) + 4 > kSlot) {
      return absl::InternalError("rendezvous entry too long");
    }
    std::vector<int32_t> words(static_cast<size_t>(kSlot * n), 0);
    std::vector<unsigned char> mine(static_cast<size_t>(kSlot), 0);
    const uint32_t len = static_cast<uint32_t>(entry.size());
    std::memcpy(mine.data(), &len, 4);
    std::memcpy(mine.data() + 4, entry.data(), entry.size());
    for (int64_t i = 0; i < kSlot; ++i) words[static_cast<size_t>(rank * kSlot + i)] = mine[i];
    GR_RETURN_IF_ERROR((*ring)->Allreduce(words.data(), kSlot * n, DT_INT32));
    std::vector<std::pair<std::string, std::string>> all;
    for (int r = 0; r < n; ++r) {
      std::string bytes(static_cast<size_t>(kSlot), '\0');
      for (int64_t i = 0; i < kSlot; ++i) {
        bytes[static_cast<size_t>(i)] = static_cast<char>(words[static_cast<size_t>(r * kSlot + i)]);
      }
      uint32_t l = 0;
      std::memcpy(&l, bytes.data(), 4);
      const std::string e = bytes.substr(4, l);
      const size_t zero = e.find('\0');
      all.emplace_back(e.substr(0, zero), e.substr(zero + 1));
    }
    return all;
  };
  absl::StatusOr<std::unique_ptr<GlooGroup>> gloo =
      GlooGroup::Connect(rank, n, "127.0.0.1", exchange, absl::Seconds(60), absl::Seconds(60));
  if (!gloo.ok()) {
    std::fprintf(stderr, "rank %d: %s\n", rank, gloo.status().ToString().c_str());
    return 1;
  }
  for (double mb : sizes_mb) {
    const int64_t count = static_cast<int64_t>(mb * (1 << 20) / 4);
    std::vector<float> data(count, 1.0f);
    std::vector<double> t_none, t_fp16, t_gloo;
    for (int rep = 0; rep < reps + 1; ++rep) {
      for (int method = 0; method < 3; ++method) {
        if (!barrier()) return 1;
        const double t0 = Now();
        absl::Status s;
        if (method == 2) {
          // The mean, as the ring's calls take it.
          s = (*gloo)->Allreduce(data.data(), count, DT_FLOAT);
          for (float& v : data) v /= static_cast<float>(n);
        } else {
          s = (*ring)->Allreduce(
              data.data(), count, DT_FLOAT,
              AllreduceOptions{method == 1 ? WIRE_ENCODING_FP16 : WIRE_ENCODING_NONE,
                               /*mean=*/true});
        }
        const double t = Now() - t0;
        if (!s.ok()) {
          std::fprintf(stderr, "rank %d: %s\n", rank, s.ToString().c_str());
          return 1;
        }
        if (rep > 0) (method == 0 ? t_none : method == 1 ? t_fp16 : t_gloo).push_back(t);
      }
    }
    if (rank == 0) {
      const double bytes = static_cast<double>(count) * 4;
      const double bus = 2.0 * (n - 1) / n * bytes;
      char line[256];
      const int len = std::snprintf(
          line, sizeof(line), "%g %d %.3f %.3f %.3f %.3f %.3f %.3f\n", mb, n,
          bus / Median(t_none) / 1e9, bus / Median(t_fp16) / 1e9, Median(t_none) * 1e3,
          Median(t_fp16) * 1e3, bus / Median(t_gloo) / 1e9, Median(t_gloo) * 1e3);
      if (write(report_fd, line, len) != len) return 1;
    }
  }
  return 0;
}

}  // namespace
}  // namespace graphrun

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  const int n = absl::GetFlag(FLAGS_ranks);
  std::vector<double> sizes;
  for (absl::string_view s : absl::StrSplit(absl::GetFlag(FLAGS_sizes_mb), ',')) {
    double v = 0;
    if (!absl::SimpleAtod(s, &v) || v <= 0) {
      std::fprintf(stderr, "bad --sizes_mb entry '%s'\n", std::string(s).c_str());
      return 2;
    }
    sizes.push_back(v);
  }
  std::vector<std::unique_ptr<graphrun::RingListener>> listeners;
  std::vector<std::string> addresses;
  for (int i = 0; i < n; ++i) {
    auto l = graphrun::RingListener::Listen("127.0.0.1");
    if (!l.ok()) {
      std::fprintf(stderr, "%s\n", l.status().ToString().c_str());
      return 1;
    }
    addresses.push_back((*l)->address());
    listeners.push_back(*std::move(l));
  }
  std::printf(
      "size_mb ranks ring_busbw_gbps ring_fp16_busbw_gbps ring_ms ring_fp16_ms gloo_busbw_gbps "
      "gloo_ms\n");
  std::fflush(stdout);
  std::vector<pid_t> pids;
  for (int i = 0; i < n; ++i) {
    const pid_t pid = fork();
    if (pid == 0) {
      for (int j = 0; j < n; ++j) {
        if (j != i) listeners[j].reset();
      }
      _exit(graphrun::RunRank(i, n, std::move(listeners[i]), addresses, sizes,
                              absl::GetFlag(FLAGS_reps), STDOUT_FILENO));
    }
    pids.push_back(pid);
  }
  listeners.clear();
  int failed = 0;
  for (pid_t pid : pids) {
    int st = 0;
    waitpid(pid, &st, 0);
    failed += !(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  }
  return failed == 0 ? 0 : 1;
}
