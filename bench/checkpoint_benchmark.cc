// Checkpoint save and restore throughput, side by side in one process:
//   BM_BundleSave      BundleWriter: 16 float tensors, GiB in all (arg 0:
//                      MiB), to a V2 checkpoint (data and index written
//                      beside, fsynced, renamed);
//   BM_BundleRestore   BundleReader: the same checkpoint read back, every
//                      tensor's CRC32C checked; arg 1: 0 from the page
//                      cache, 1 from the disk (the file's cached pages
//                      dropped before each read, untimed);
//   BM_PlainWrite      the same bytes written to one file with write(2) and
//                      fsynced: the ceiling for a save;
//   BM_PlainRead       that file read back with read(2) into host-allocator
//                      memory; arg 1 as for BM_BundleRestore.
// Counter: bytes_per_second. The files go to $TMPDIR (or /tmp).
// bench/checkpoint_vs_tensorflow.py puts these next to TensorFlow's Saver.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/checkpoint/tensor_bundle.h"
#include "graph/tensor.h"

namespace graphrun {
namespace {

constexpr int kTensors = 16;
// read(2) calls of 8 MiB, as the restore makes.
constexpr int64_t kChunk = int64_t{8} << 20;

std::string TmpPath(const std::string& name) {
  const char* dir = std::getenv("TMPDIR");
  return absl::StrCat(dir != nullptr ? dir : "/tmp", "/graphrun_ckpt_bench_", name);
}

// kTensors float tensors of `mib` MiB in all, filled with a pattern.
const std::vector<Tensor>& Tensors(int64_t mib) {
  static auto* cache = new std::vector<Tensor>();
  static int64_t cached_mib = -1;
  if (cached_mib != mib) {
    cache->clear();
    const int64_t per = (mib << 20) / kTensors / 4;
    for (int i = 0; i < kTensors; ++i) {
      Tensor t(DT_FLOAT, TensorShape({per}));
      float* p = t.flat<float>().data();
      for (int64_t k = 0; k < per; ++k) p[k] = static_cast<float>((k * 7 + i) % 1000) * 1e-3f;
      cache->push_back(std::move(t));
    }
    cached_mib = mib;
  }
  return *cache;
}

// One V2 checkpoint of `tensors` at `prefix`.
absl::Status SaveBundle(const std::vector<Tensor>& tensors, const std::string& prefix) {
  BundleWriter writer(prefix);
  for (int i = 0; i < kTensors; ++i) {
    absl::Status s = writer.Add(absl::StrCat("layer_", i, "/kernel"), tensors[i]);
    if (!s.ok()) return s;
  }
  return writer.Finish();
}

// The same bytes to one new file at `path`, fsynced.
bool WritePlain(const std::vector<Tensor>& tensors, const std::string& path) {
  unlink(path.c_str());
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return false;
  for (const Tensor& t : tensors) {
    const char* p = static_cast<const char*>(t.raw_data());
    size_t left = t.TotalBytes();
    while (left > 0) {
      const ssize_t n = write(fd, p, left);
      if (n <= 0) {
        close(fd);
        return false;
      }
      p += n;
      left -= static_cast<size_t>(n);
    }
  }
  const bool synced = fsync(fd) == 0;
  return close(fd) == 0 && synced;
}

void BM_BundleSave(benchmark::State& state) {
  const std::vector<Tensor>& tensors = Tensors(state.range(0));
  const std::string prefix = TmpPath("bundle");
  // Each save to a new prefix (as savers do, "model.ckpt-<step>"), renamed
  // over the restore benchmark's prefix untimed.
  const std::string fresh = TmpPath("bundle_new");
  for (auto _ : state) {
    absl::Status s = SaveBundle(tensors, fresh);
    if (!s.ok()) {
      state.SkipWithError(std::string(s.message()).c_str());
      return;
    }
    state.PauseTiming();
    for (const char* suffix : {".index", ".data-00000-of-00001"}) {
      std::rename((fresh + suffix).c_str(), (prefix + suffix).c_str());
    }
    state.ResumeTiming();
  }
  state.SetBytesProcessed(state.iterations() * (state.range(0) << 20));
}

// Puts `path`'s pages in the page cache (cold = false) or takes them out
// (cold = true), so a read finds the file where the benchmark says. A save
// leaves most of a big checkpoint out of the cache (WriteBehind).
void PlaceInCache(const std::string& path, bool cold) {
  const int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0) return;
  if (cold) {
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  } else {
    std::vector<char> buf(kChunk);
    while (read(fd, buf.data(), buf.size()) > 0) {
    }
  }
  close(fd);
}

void BM_BundleRestore(benchmark::State& state) {
  Tensors(state.range(0));
  const std::string prefix = TmpPath("bundle");
  for (auto _ : state) {
    state.PauseTiming();
    PlaceInCache(prefix + ".data-00000-of-00001", state.range(1) != 0);
    state.ResumeTiming();
    auto reader = BundleReader::Open(prefix);
    if (!reader.ok()) {
      state.SkipWithError(std::string(reader.status().message()).c_str());
      return;
    }
    for (int i = 0; i < kTensors; ++i) {
      auto t = (*reader)->Lookup(absl::StrCat("layer_", i, "/kernel"));
      if (!t.ok()) state.SkipWithError(std::string(t.status().message()).c_str());
      benchmark::DoNotOptimize(t);
    }
  }
  state.SetBytesProcessed(state.iterations() * (state.range(0) << 20));
}

void BM_PlainWrite(benchmark::State& state) {
  const std::vector<Tensor>& tensors = Tensors(state.range(0));
  const std::string path = TmpPath("plain");
  // A new file each time, renamed over the last one untimed: the files live
  // and die as the checkpoint's do, so both find the same page cache.
  const std::string fresh = TmpPath("plain_new");
  for (auto _ : state) {
    if (!WritePlain(tensors, fresh)) {
      state.SkipWithError(absl::StrCat("cannot write ", fresh).c_str());
      return;
    }
    state.PauseTiming();
    std::rename(fresh.c_str(), path.c_str());
    state.ResumeTiming();
  }
  state.SetBytesProcessed(state.iterations() * (state.range(0) << 20));
}

void BM_PlainRead(benchmark::State& state) {
  const int64_t bytes = state.range(0) << 20;
  const std::string path = TmpPath("plain");
  // Into memory from the same allocator as the restored tensors (huge pages
  // for big blocks), so the two differ by the checkpoint's own work only.
  Tensor buffer(DT_UINT8, TensorShape({bytes}));
  char* dst = static_cast<char*>(buffer.raw_data());
  std::memset(dst, 0, static_cast<size_t>(bytes));
  for (auto _ : state) {
    state.PauseTiming();
    PlaceInCache(path, state.range(1) != 0);
    state.ResumeTiming();
    const int fd = open(path.c_str(), O_RDONLY);
    if (fd < 0) {
      state.SkipWithError(absl::StrCat("cannot open ", path, " (run BM_PlainWrite first)").c_str());
      return;
    }
    int64_t got = 0;
    while (got < bytes) {
      const ssize_t n = read(fd, dst + got, static_cast<size_t>(std::min<int64_t>(bytes - got, kChunk)));
      if (n <= 0) break;
      got += n;
    }
    close(fd);
    if (got != bytes) {
      state.SkipWithError(absl::StrCat(path, " holds ", got, " bytes, not ", bytes).c_str());
      return;
    }
  }
  state.SetBytesProcessed(state.iterations() * bytes);
}

BENCHMARK(BM_BundleSave)->Arg(1024)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_PlainWrite)->Arg(1024)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_BundleRestore)->Args({1024, 0})->Args({1024, 1})->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_PlainRead)->Args({1024, 0})->Args({1024, 1})->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace graphrun

// The checkpoint and the plain file are written once before any benchmark
// runs, so the reads find them in any order. On this kind of virtual machine
// a process's first gigabytes of fresh page cache cost several times the
// next (the host hands freed guest pages back lazily), so whichever
// benchmark ran first would pay for them: run with
// --benchmark_enable_random_interleaving=true --benchmark_repetitions=N to
// spread this machine's drift over all four.
int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  const std::vector<graphrun::Tensor>& tensors = graphrun::Tensors(1024);
  const absl::Status saved = graphrun::SaveBundle(tensors, graphrun::TmpPath("bundle"));
  if (!saved.ok() || !graphrun::WritePlain(tensors, graphrun::TmpPath("plain"))) {
    std::fprintf(stderr, "cannot write the files to read back: %s\n",
                 std::string(saved.message()).c_str());
    return 1;
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
