// GPU figures, side by side in one process (tools/gpu_check.sh runs this on
// a GPU machine):
//   - MatMul 4096^3 in float (TF32), half and bfloat16 through graphrun's
//     kernel (OpKernel on a GpuDevice) and through cuBLAS called directly;
//     TFLOP/s in the counters;
//   - host time per GPU kernel node: a session step of a chain of Relu
//     nodes on tiny tensors, per node;
//   - host <-> GPU copies through the device context, GB/s;
//   - the device allocator's allocate + free (BFC), which also runs on a
//     fake GPU where there is none, and reserved / peak in a steady loop;
//   - a ResNet-50 and a BERT-style encoder step (the test fixtures, batch
//     32) on the CPU alone and with their nodes on the GPU.
// Without a GPU the GPU benchmarks stop with "no GPU visible".
#include <benchmark/benchmark.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "graph/graph_io.h"
#include "graph/npy.h"
#include "graph/op_registry.h"
#include "graph/status_macros.h"
#include "kernels/device_context.h"
#include "kernels/kernel_registry.h"
#include "bench/gpu_bench_util.h"
#include "runtime/gpu/cuda_probe.h"
#include "runtime/gpu/gpu_device.h"
#include "runtime/gpu/gpu_platform.h"
#include "runtime/gpu/testing/fake_gpu_platform.h"
#include "runtime/session.h"
#include "tests/fixture_manifest.h"

#if GRAPHRUN_CUDA
#include <cublas_v2.h>
#include <cuda_runtime.h>
#endif

namespace graphrun {
namespace {

constexpr char kPrefix[] = "/job:localhost/replica:0/task:0";

using bench::Gpu;

DataType TypeArg(int64_t i) { return i == 0 ? DT_FLOAT : i == 1 ? DT_HALF : DT_BFLOAT16; }

void BM_MatMulGraphrun(benchmark::State& state) {
  std::string why;
  Device* gpu = Gpu(&why);
  if (gpu == nullptr) {
    state.SkipWithError(why.c_str());
    return;
  }
  const int64_t n = state.range(1);
  const DataType type = TypeArg(state.range(0));
  NodeDef node;
  node.set_name("mm");
  node.set_op("MatMul");
  (*node.mutable_attr())["T"].set_type(type);
  (*node.mutable_attr())["transpose_a"].set_b(false);
  (*node.mutable_attr())["transpose_b"].set_b(false);
  const OpDef* op_def = *OpRegistry::Global()->LookUp("MatMul");
  auto kernel = KernelRegistry::Global()->CreateKernel(gpu, node, op_def, {type, type}, {type});
  if (!kernel.ok()) {
    state.SkipWithError(std::string(kernel.status().message()).c_str());
    return;
  }
  std::vector<Tensor> inputs = {
      *Tensor::Allocate(gpu->allocator(), type, TensorShape({n, n}),
                        TensorBuffer::Init::kUninitialized),
      *Tensor::Allocate(gpu->allocator(), type, TensorShape({n, n}),
                        TensorBuffer::Init::kUninitialized)};
  OpKernelContext::Params params;
  params.device = gpu;
  params.op_kernel = kernel->get();
  params.inputs = inputs.data();
  params.num_inputs = 2;
  for (auto _ : state) {
    OpKernelContext ctx(&params);
    (*kernel)->Compute(&ctx);
    if (!ctx.status().ok()) {
      state.SkipWithError(std::string(ctx.status().message()).c_str());
      return;
    }
    if (!gpu->Sync().ok()) {
      state.SkipWithError("GPU error");
      return;
    }
  }
  state.counters["TFLOP/s"] = benchmark::Counter(2.0 * n * n * n * state.iterations() / 1e12,
                                                 benchmark::Counter::kIsRate);
}
BENCHMARK(BM_MatMulGraphrun)->ArgsProduct({{0, 1, 2}, {4096}})->UseRealTime()->Unit(benchmark::kMillisecond);

#if GRAPHRUN_CUDA
// The same product through cuBLAS directly, on a stream of its own.
void BM_MatMulCublas(benchmark::State& state) {
  std::string why;
  if (Gpu(&why) == nullptr) {
    state.SkipWithError(why.c_str());
    return;
  }
  const int64_t n = state.range(1);
  const int t = static_cast<int>(state.range(0));
  const cudaDataType_t data = t == 0 ? CUDA_R_32F : t == 1 ? CUDA_R_16F : CUDA_R_16BF;
  const cublasComputeType_t compute = t == 0 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  const size_t bytes = static_cast<size_t>(n * n) * (t == 0 ? 4 : 2);
  cudaSetDevice(0);
  void *a, *b, *c;
  cudaMalloc(&a, bytes);
  cudaMalloc(&b, bytes);
  cudaMalloc(&c, bytes);
  cublasHandle_t handle;
  cublasCreate(&handle);
  const float alpha = 1, beta = 0;
  for (auto _ : state) {
    cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, b, data, n, a, data, n,
                 &beta, c, data, n, compute, CUBLAS_GEMM_DEFAULT);
    cudaDeviceSynchronize();
  }
  state.counters["TFLOP/s"] = benchmark::Counter(2.0 * n * n * n * state.iterations() / 1e12,
                                                 benchmark::Counter::kIsRate);
  cublasDestroy(handle);
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
}
BENCHMARK(BM_MatMulCublas)->ArgsProduct({{0, 1, 2}, {4096}})->UseRealTime()->Unit(benchmark::kMillisecond);
#endif

// A session step of `n` chained Relu nodes on a 16-float tensor on the GPU:
// time per node is the host's cost of one GPU kernel node.
void BM_GpuKernelNodeHostTime(benchmark::State& state) {
  std::string why;
  if (Gpu(&why) == nullptr) {
    state.SkipWithError(why.c_str());
    return;
  }
  const int n = static_cast<int>(state.range(0));
  std::string text =
      "node { name: 'x' op: 'Placeholder' device: '/device:CPU:0' attr { key: 'dtype' value { "
      "type: DT_FLOAT } } }\n";
  std::string prev = "x";
  for (int i = 0; i < n; ++i) {
    const std::string name = absl::StrCat("r", i);
    absl::StrAppend(&text, "node { name: '", name, "' op: 'Relu' input: '", prev,
                    "' device: '/device:GPU:0' attr { key: 'T' value { type: DT_FLOAT } } }\n");
    prev = name;
  }
  for (char& ch : text) {
    if (ch == '\'') ch = '"';
  }
  SessionOptions options;
  options.optimize = SessionOptions::Optimize::kNone;
  absl::StatusOr<std::unique_ptr<GpuPlatform>> platform = NewCudaPlatform(0);
  if (!platform.ok()) {
    state.SkipWithError(std::string(platform.status().message()).c_str());
    return;
  }
  options.make_gpu_devices = GpuDevicesOn({std::shared_ptr<GpuPlatform>(*std::move(platform))});
  auto session = Session::Create(*ParseGraphDef(text, GraphFormat::kText), options);
  if (!session.ok()) {
    state.SkipWithError(std::string(session.status().message()).c_str());
    return;
  }
  const Tensor x = Tensor::FromVector<float>(std::vector<float>(16, 1.0f));
  std::vector<Tensor> out;
  for (auto _ : state) {
    absl::Status s = (*session)->Run({{"x", x}}, {prev}, {}, &out);
    if (!s.ok()) {
      state.SkipWithError(std::string(s.message()).c_str());
      return;
    }
  }
  // Seconds per node (the goal is at most 3 us).
  state.counters["s_per_node"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * n,
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_GpuKernelNodeHostTime)->Arg(1000)->UseRealTime()->Unit(benchmark::kMillisecond);

// Host <-> GPU through the device context; arg 0: 0 host to device, 1 device
// to host; arg 1: MiB; arg 2: pinned host memory (1) or pageable (0).
void BM_Copy(benchmark::State& state) {
  std::string why;
  Device* gpu = Gpu(&why);
  if (gpu == nullptr) {
    state.SkipWithError(why.c_str());
    return;
  }
  const bool to_device = state.range(0) == 0;
  const int64_t floats = state.range(1) << 18;
  AllocatorAttributes host_attr;
  host_attr.on_host = true;
  Allocator* host_alloc = state.range(2) ? gpu->GetAllocator(host_attr) : HostAllocator();
  Tensor host = *Tensor::Allocate(host_alloc, DT_FLOAT, TensorShape({floats}));
  Tensor device = *Tensor::Allocate(gpu->allocator(), DT_FLOAT, TensorShape({floats}),
                                    TensorBuffer::Init::kUninitialized);
  DeviceContext* ctx = gpu->device_context();
  for (auto _ : state) {
    absl::Status s = WaitFor([&](StatusCallback cb) {
      if (to_device) {
        ctx->CopyCpuTensorToDevice(host, &device, cb);
      } else {
        ctx->CopyDeviceTensorToCpu(device, &host, cb);
      }
    });
    if (!s.ok()) {
      state.SkipWithError(std::string(s.message()).c_str());
      return;
    }
  }
  state.SetBytesProcessed(state.iterations() * floats * 4);
}
BENCHMARK(BM_Copy)->ArgsProduct({{0, 1}, {256}, {0, 1}})->UseRealTime()->Unit(benchmark::kMillisecond);

// The device allocator's allocate + free of mixed sizes, in a steady loop
// shaped like a network's step: each layer's output (cycling through 2-32
// MiB, with small tensors between) lives until the layer after next has
// run, and every fourth is also kept for a residual add four layers on.
// Counters: reserved / peak in use once the loop is steady. Runs on a fake
// GPU too (the BFC allocator never touches the memory it manages).
void BM_DeviceAllocator(benchmark::State& state) {
  std::string why;
  Device* gpu = state.range(0) == 1 ? Gpu(&why) : nullptr;
  std::unique_ptr<Device> fake;
  if (state.range(0) == 1 && gpu == nullptr) {
    state.SkipWithError(why.c_str());
    return;
  }
  if (gpu == nullptr) {
    fake = *NewGpuDevice(kPrefix, 0, std::make_shared<FakeGpuPlatform>(), {});
    gpu = fake.get();
  }
  Allocator* a = gpu->allocator();
  constexpr size_t kMiB = size_t{1} << 20;
  const size_t sizes[] = {8 * kMiB, 256,       16 * kMiB, 4 * kMiB,  777,
                          32 * kMiB, 2 * kMiB, 64 << 10,  12 * kMiB, 24 * kMiB,
                          4096,     6 * kMiB,  20 * kMiB, 1 << 18};
  constexpr int kSizes = sizeof(sizes) / sizeof(sizes[0]);
  struct Live {
    void* ptr;
    size_t bytes;
    int64_t until;  // freed when this layer has run
  };
  std::vector<Live> live;
  int64_t layer = 0;
  auto step = [&] {
    const size_t bytes = sizes[layer % kSizes];
    void* p = a->AllocateRaw(256, bytes);
    benchmark::DoNotOptimize(p);
    live.push_back({p, bytes, layer + ((layer % 4 == 0) ? 4 : 2)});
    for (size_t j = 0; j < live.size();) {
      if (live[j].until <= layer) {
        a->DeallocateRaw(live[j].ptr, live[j].bytes);
        live[j] = live.back();
        live.pop_back();
      } else {
        ++j;
      }
    }
    ++layer;
  };
  for (int warm = 0; warm < 10 * kSizes; ++warm) step();
  for (auto _ : state) step();
  const AllocatorStats stats = a->GetStats().value_or(AllocatorStats());
  state.counters["reserved_over_peak"] =
      stats.peak_bytes_in_use > 0
          ? static_cast<double>(stats.bytes_reserved) / static_cast<double>(stats.peak_bytes_in_use)
          : 0;
  state.counters["peak_MiB"] = static_cast<double>(stats.peak_bytes_in_use) / kMiB;
  for (const Live& l : live) a->DeallocateRaw(l.ptr, l.bytes);
}
// 0: a fake GPU (runs anywhere), 1: GPU 0.
BENCHMARK(BM_DeviceAllocator)->Arg(0)->Arg(1);

// The same layers as steps, as an executor runs a network: each step makes
// 56 layer outputs, frees them all by its end, and tells the allocator
// where it starts and ends (BeginStep / EndStep), so the device allocator
// runs the steps from a plan of the one before (bfc_allocator.h). One
// iteration is one step. Counters: reserved / peak in use once the loop is
// steady.
void BM_DeviceAllocatorSteps(benchmark::State& state) {
  std::string why;
  Device* gpu = state.range(0) == 1 ? Gpu(&why) : nullptr;
  std::unique_ptr<Device> fake;
  if (state.range(0) == 1 && gpu == nullptr) {
    state.SkipWithError(why.c_str());
    return;
  }
  if (gpu == nullptr) {
    fake = *NewGpuDevice(kPrefix, 0, std::make_shared<FakeGpuPlatform>(), {});
    gpu = fake.get();
  }
  Allocator* a = gpu->allocator();
  constexpr size_t kMiB = size_t{1} << 20;
  const size_t sizes[] = {8 * kMiB, 256,       16 * kMiB, 4 * kMiB,  777,
                          32 * kMiB, 2 * kMiB, 64 << 10,  12 * kMiB, 24 * kMiB,
                          4096,     6 * kMiB,  20 * kMiB, 1 << 18};
  constexpr int kSizes = sizeof(sizes) / sizeof(sizes[0]);
  constexpr int kLayers = 56;
  struct Live {
    void* ptr;
    size_t bytes;
    int until;
  };
  int64_t allocations = 0;
  auto step = [&] {
    std::vector<Live> live;
    a->BeginStep();
    for (int layer = 0; layer < kLayers + 4; ++layer) {
      if (layer < kLayers) {
        const size_t bytes = sizes[layer % kSizes];
        void* p = a->AllocateRaw(256, bytes);
        benchmark::DoNotOptimize(p);
        live.push_back({p, bytes, layer + ((layer % 4 == 0) ? 4 : 2)});
      }
      for (size_t j = 0; j < live.size();) {
        if (live[j].until <= layer) {
          a->DeallocateRaw(live[j].ptr, live[j].bytes);
          live[j] = live.back();
          live.pop_back();
        } else {
          ++j;
        }
      }
    }
    a->EndStep();
  };
  for (int warm = 0; warm < 3; ++warm) step();
  for (auto _ : state) {
    step();
    allocations += kLayers;
  }
  const AllocatorStats stats = a->GetStats().value_or(AllocatorStats());
  state.counters["reserved_over_peak"] =
      stats.peak_bytes_in_use > 0
          ? static_cast<double>(stats.bytes_reserved) / static_cast<double>(stats.peak_bytes_in_use)
          : 0;
  state.counters["peak_MiB"] = static_cast<double>(stats.peak_bytes_in_use) / kMiB;
  state.SetItemsProcessed(allocations);
}
BENCHMARK(BM_DeviceAllocatorSteps)->Arg(0)->Arg(1);

// A whole model's step, its batch raised to `batch` (the fixture's inputs
// repeated), on the CPU alone (device 0) and with every node asked onto
// GPU 0 (device 1: soft placement keeps those without a GPU kernel on the
// CPU). The fixture models of tests/fixtures/models: ResNet-50 (32x32
// images) and the BERT-style encoder (16 tokens).
const char* const kModels[] = {"resnet50", "bert_tiny"};

absl::StatusOr<Tensor> RepeatBatch(const Tensor& t, int64_t batch) {
  TensorShape shape = t.shape();
  if (shape.dims() == 0 || shape.dim_size(0) == 0) return t;
  const int64_t rows = shape.dim_size(0);
  shape.set_dim(0, batch);
  Tensor out(t.dtype(), shape);
  const size_t row_bytes = t.TotalBytes() / static_cast<size_t>(rows);
  for (int64_t r = 0; r < batch; ++r) {
    std::memcpy(static_cast<char*>(out.raw_data()) + r * row_bytes,
                static_cast<const char*>(t.raw_data()) + (r % rows) * row_bytes, row_bytes);
  }
  return out;
}

void BM_ModelStep(benchmark::State& state) {
  const std::string name = kModels[state.range(0)];
  const bool on_gpu = state.range(1) == 1;
  const int64_t batch = state.range(2);
  state.SetLabel(absl::StrCat(name, on_gpu ? " CPU+GPU" : " CPU only", " batch ", batch));
  std::string why;
  if (on_gpu && Gpu(&why) == nullptr) {
    state.SkipWithError(why.c_str());
    return;
  }
  const std::string dir = "tests/fixtures/models/";
  testing::FixtureModel model;
  for (const testing::FixtureModel& m : testing::ReadFixtureManifest(dir)) {
    if (m.name == name) model = m;
  }
  absl::StatusOr<GraphDef> graph = testing::LoadFixtureGraph(model);
  if (model.name.empty() || !graph.ok()) {
    state.SkipWithError(("cannot load " + dir + name + " (run from the repository root)").c_str());
    return;
  }
  SessionOptions options;
  if (on_gpu) {
    for (NodeDef& n : *graph->mutable_node()) n.set_device("/device:GPU:0");
    options.allow_soft_placement = true;
    absl::StatusOr<std::unique_ptr<GpuPlatform>> platform = NewCudaPlatform(0);
    if (!platform.ok()) {
      state.SkipWithError(std::string(platform.status().message()).c_str());
      return;
    }
    options.make_gpu_devices =
        GpuDevicesOn({std::shared_ptr<GpuPlatform>(*std::move(platform))}, GpuDeviceOptions());
  }
  absl::StatusOr<std::unique_ptr<Session>> session = Session::Create(*graph, options);
  if (!session.ok()) {
    state.SkipWithError(std::string(session.status().message()).c_str());
    return;
  }
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (const std::string& feed : model.feeds) {
    absl::StatusOr<Tensor> t = ReadNpyFile(testing::FixtureNpyPath(model, feed));
    if (t.ok()) t = RepeatBatch(*t, batch);
    if (!t.ok()) {
      state.SkipWithError(std::string(t.status().message()).c_str());
      return;
    }
    feeds.push_back({feed, *std::move(t)});
  }
  std::vector<Tensor> out;
  // The first step makes the kernels (and reorders weights): not timed.
  const absl::Status first = (*session)->Run(feeds, model.fetches, {}, &out);
  if (!first.ok()) {
    state.SkipWithError(std::string(first.message()).c_str());
    return;
  }
  for (auto _ : state) {
    const absl::Status s = (*session)->Run(feeds, model.fetches, {}, &out);
    if (!s.ok()) {
      state.SkipWithError(std::string(s.message()).c_str());
      return;
    }
  }
}
BENCHMARK(BM_ModelStep)
    ->ArgsProduct({{0, 1}, {0, 1}, {32}})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace graphrun
