// Checkpoint save and restore throughput, side by side in one process:
//   BM_BundleSave      BundleWriter: 16 float tensors, GiB in all (arg 0:
//                      MiB), to a V2 checkpoint (data and index written
//                      beside, fsynced, renamed);
//   BM_BundleRestore   BundleReader: the same checkpoint read back, every
//                      tensor's CRC32C checked;
//   BM_PlainWrite      the same bytes written to one file with write(2) and
//                      fsynced: the ceiling for a save;
//   BM_PlainRead       that file read back with read(2).
// Counter: bytes_per_second. The files go to $TMPDIR (or /tmp).
// bench/checkpoint_vs_tensorflow.py puts these next to TensorFlow's Saver.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/checkpoint/tensor_bundle.h"
#include "graph/tensor.h"

namespace graphrun {
namespace {

constexpr int kTensors = 16;

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

void BM_BundleSave(benchmark::State& state) {
  const std::vector<Tensor>& tensors = Tensors(state.range(0));
  const std::string prefix = TmpPath("bundle");
  // Each save to a new prefix (as savers do, "model.ckpt-<step>"), renamed
  // over the restore benchmark's prefix untimed.
  const std::string fresh = TmpPath("bundle_new");
  for (auto _ : state) {
    BundleWriter writer(fresh);
    for (int i = 0; i < kTensors; ++i) {
      absl::Status s = writer.Add(absl::StrCat("layer_", i, "/kernel"), tensors[i]);
      if (!s.ok()) state.SkipWithError(std::string(s.message()).c_str());
    }
    absl::Status s = writer.Finish();
    if (!s.ok()) state.SkipWithError(std::string(s.message()).c_str());
    state.PauseTiming();
    for (const char* suffix : {".index", ".data-00000-of-00001"}) {
      std::rename((fresh + suffix).c_str(), (prefix + suffix).c_str());
    }
    state.ResumeTiming();
  }
  state.SetBytesProcessed(state.iterations() * (state.range(0) << 20));
}

void BM_BundleRestore(benchmark::State& state) {
  Tensors(state.range(0));
  const std::string prefix = TmpPath("bundle");
  for (auto _ : state) {
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
  for (auto _ : state) {
    // A new file each time, as for the checkpoint.
    state.PauseTiming();
    unlink(path.c_str());
    state.ResumeTiming();
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    for (const Tensor& t : tensors) {
      const char* p = static_cast<const char*>(t.raw_data());
      size_t left = t.TotalBytes();
      while (left > 0) {
        const ssize_t n = write(fd, p, left);
        if (n <= 0) break;
        p += n;
        left -= static_cast<size_t>(n);
      }
    }
    fsync(fd);
    close(fd);
  }
  state.SetBytesProcessed(state.iterations() * (state.range(0) << 20));
}

void BM_PlainRead(benchmark::State& state) {
  const int64_t bytes = state.range(0) << 20;
  const std::string path = TmpPath("plain");
  std::vector<char> buffer(static_cast<size_t>(bytes));
  for (auto _ : state) {
    const int fd = open(path.c_str(), O_RDONLY);
    size_t got = 0;
    while (got < buffer.size()) {
      const ssize_t n = read(fd, buffer.data() + got, buffer.size() - got);
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    close(fd);
  }
  state.SetBytesProcessed(state.iterations() * bytes);
}

// Saves before restores, writes before reads: each read finds its file.
BENCHMARK(BM_BundleSave)->Arg(1024)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_PlainWrite)->Arg(1024)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_BundleRestore)->Arg(1024)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_PlainRead)->Arg(1024)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace graphrun

BENCHMARK_MAIN();
