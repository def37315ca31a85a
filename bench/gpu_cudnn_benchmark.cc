// graphrun's CUDA pooling and batch-norm kernels next to cuDNN's own, on the
// same shapes in one process (tools/gpu_check.sh runs this on a GPU
// machine): whether the direct kernels (written for TensorFlow's asymmetric
// SAME padding and AvgPool's count of in-input elements) cost anything on
// the shapes where cuDNN needs no padded copy.
//   arg 0 of each pair: 0 graphrun's kernel (OpKernel on a GpuDevice),
//                       1 cuDNN called directly on a stream of its own.
// Shapes: ResNet-50's first MaxPool (3x3 stride 2 on 32x114x114x64, VALID),
// a DenseNet transition AvgPool (2x2 stride 2 on 32x56x56x256), and
// FusedBatchNormV3 on 32x56x56x256 NHWC, inference and training.
// Without a GPU each stops with "no GPU visible".
#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <vector>

#include "graph/op_registry.h"
#include "kernels/kernel_registry.h"
#include "bench/gpu_bench_util.h"
#include "runtime/gpu/cuda_probe.h"
#include "runtime/gpu/gpu_device.h"
#include "runtime/gpu/gpu_platform.h"

#if GRAPHRUN_CUDA
#include <cuda_runtime.h>
#include <cudnn.h>
#endif

namespace graphrun {
namespace {

constexpr int64_t kN = 32;

using bench::Gpu;

void SetInts(NodeDef* node, const char* key, std::vector<int64_t> values) {
  AttrValue::ListValue* list = (*node->mutable_attr())[key].mutable_list();
  for (int64_t v : values) list->add_i(v);
}

// Runs `node` on the GPU over fresh float inputs of `shapes` until the
// benchmark stops, synchronizing after each run.
void RunGraphrunKernel(benchmark::State& state, const NodeDef& node,
                       const std::vector<TensorShape>& shapes, int num_outputs) {
  std::string why;
  Device* gpu = Gpu(&why);
  if (gpu == nullptr) {
    state.SkipWithError(why.c_str());
    return;
  }
  const OpDef* op_def = *OpRegistry::Global()->LookUp(node.op());
  const std::vector<DataType> in_types(shapes.size(), DT_FLOAT);
  const std::vector<DataType> out_types(num_outputs, DT_FLOAT);
  auto kernel = KernelRegistry::Global()->CreateKernel(gpu, node, op_def, in_types, out_types);
  if (!kernel.ok()) {
    state.SkipWithError(std::string(kernel.status().message()).c_str());
    return;
  }
  std::vector<Tensor> inputs;
  for (const TensorShape& shape : shapes) {
    // Device memory the host cannot write: zeroed on the GPU.
    inputs.push_back(*Tensor::Allocate(gpu->allocator(), DT_FLOAT, shape,
                                       TensorBuffer::Init::kUninitialized));
#if GRAPHRUN_CUDA
    cudaMemset(inputs.back().raw_data(), 0, inputs.back().TotalBytes());
#endif
  }
#if GRAPHRUN_CUDA
  cudaDeviceSynchronize();
#endif
  OpKernelContext::Params params;
  params.device = gpu;
  params.op_kernel = kernel->get();
  params.inputs = inputs.data();
  params.num_inputs = static_cast<int>(inputs.size());
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
}

NodeDef PoolNode(const char* op, int64_t k, int64_t s) {
  NodeDef node;
  node.set_name("pool");
  node.set_op(op);
  (*node.mutable_attr())["T"].set_type(DT_FLOAT);
  SetInts(&node, "ksize", {1, k, k, 1});
  SetInts(&node, "strides", {1, s, s, 1});
  (*node.mutable_attr())["padding"].set_s("VALID");
  (*node.mutable_attr())["data_format"].set_s("NHWC");
  return node;
}

NodeDef BatchNormNode(bool training) {
  NodeDef node;
  node.set_name("bn");
  node.set_op("FusedBatchNormV3");
  (*node.mutable_attr())["T"].set_type(DT_FLOAT);
  (*node.mutable_attr())["U"].set_type(DT_FLOAT);
  (*node.mutable_attr())["epsilon"].set_f(1e-3f);
  (*node.mutable_attr())["exponential_avg_factor"].set_f(1.0f);
  (*node.mutable_attr())["data_format"].set_s("NHWC");
  (*node.mutable_attr())["is_training"].set_b(training);
  return node;
}

// The pool cases: 0 MaxPool 3x3/2 on 32x114x114x64, 1 AvgPool 2x2/2 on
// 32x56x56x256.
struct PoolCase {
  const char* op;
  int64_t h, c, k, s;
};
constexpr PoolCase kPools[] = {{"MaxPool", 114, 64, 3, 2}, {"AvgPool", 56, 256, 2, 2}};

int64_t PoolBytes(const PoolCase& p) {
  const int64_t out = (p.h - p.k) / p.s + 1;
  return 4 * kN * p.c * (p.h * p.h + out * out);
}

void BM_PoolGraphrun(benchmark::State& state) {
  const PoolCase& p = kPools[state.range(0)];
  state.SetLabel(p.op);
  RunGraphrunKernel(state, PoolNode(p.op, p.k, p.s), {TensorShape({kN, p.h, p.h, p.c})}, 1);
  state.SetBytesProcessed(state.iterations() * PoolBytes(p));
}
BENCHMARK(BM_PoolGraphrun)->Arg(0)->Arg(1)->UseRealTime()->Unit(benchmark::kMicrosecond);

constexpr int64_t kBnH = 56, kBnC = 256;

void BM_BatchNormGraphrun(benchmark::State& state) {
  const bool training = state.range(0) == 1;
  state.SetLabel(training ? "training" : "inference");
  const TensorShape x({kN, kBnH, kBnH, kBnC});
  // Bytes: x read once (inference) or twice (statistics, then normalize)
  // and y written.
  RunGraphrunKernel(state, BatchNormNode(training),
                    {x, TensorShape({kBnC}), TensorShape({kBnC}),
                     TensorShape({kBnC}), TensorShape({kBnC})},
                    6);
  state.SetBytesProcessed(state.iterations() * x.num_elements() * 4 * (training ? 3 : 2));
}
BENCHMARK(BM_BatchNormGraphrun)->Arg(0)->Arg(1)->UseRealTime()->Unit(benchmark::kMicrosecond);

#if GRAPHRUN_CUDA
#define CHECK_CUDNN(call)                                                 \
  do {                                                                    \
    cudnnStatus_t _s = (call);                                            \
    if (_s != CUDNN_STATUS_SUCCESS) {                                     \
      state.SkipWithError((std::string(#call) + ": " + cudnnGetErrorString(_s)).c_str()); \
      return;                                                             \
    }                                                                     \
  } while (0)

// cuDNN's handle, x/y descriptors and device buffers for one case.
struct CudnnCase {
  cudnnHandle_t handle = nullptr;
  cudnnTensorDescriptor_t x = nullptr, y = nullptr, bn = nullptr;
  std::vector<void*> buffers;
  ~CudnnCase() {
    for (void* b : buffers) cudaFree(b);
    if (bn != nullptr) cudnnDestroyTensorDescriptor(bn);
    if (y != nullptr) cudnnDestroyTensorDescriptor(y);
    if (x != nullptr) cudnnDestroyTensorDescriptor(x);
    if (handle != nullptr) cudnnDestroy(handle);
  }
  void* Buffer(size_t bytes) {
    void* p = nullptr;
    if (cudaMalloc(&p, bytes) != cudaSuccess) return nullptr;
    cudaMemset(p, 0, bytes);
    buffers.push_back(p);
    return p;
  }
};

void BM_PoolCudnn(benchmark::State& state) {
  std::string why;
  if (Gpu(&why) == nullptr) {
    state.SkipWithError(why.c_str());
    return;
  }
  const PoolCase& p = kPools[state.range(0)];
  state.SetLabel(p.op);
  const int out = static_cast<int>((p.h - p.k) / p.s + 1);
  const int n = kN, c = p.c, h = p.h, k = p.k, s = p.s;
  cudaSetDevice(0);
  CudnnCase cs;
  CHECK_CUDNN(cudnnCreate(&cs.handle));
  CHECK_CUDNN(cudnnCreateTensorDescriptor(&cs.x));
  CHECK_CUDNN(cudnnCreateTensorDescriptor(&cs.y));
  CHECK_CUDNN(cudnnSetTensor4dDescriptor(cs.x, CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT, n, c, h, h));
  CHECK_CUDNN(
      cudnnSetTensor4dDescriptor(cs.y, CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT, n, c, out, out));
  cudnnPoolingDescriptor_t pool;
  CHECK_CUDNN(cudnnCreatePoolingDescriptor(&pool));
  const bool max = std::string(p.op) == "MaxPool";
  CHECK_CUDNN(cudnnSetPooling2dDescriptor(
      pool, max ? CUDNN_POOLING_MAX : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING,
      CUDNN_PROPAGATE_NAN, k, k, 0, 0, s, s));
  void* x = cs.Buffer(4ull * n * c * h * h);
  void* y = cs.Buffer(4ull * n * c * out * out);
  const float alpha = 1, beta = 0;
  for (auto _ : state) {
    cudnnStatus_t st = cudnnPoolingForward(cs.handle, pool, &alpha, cs.x, x, &beta, cs.y, y);
    cudaDeviceSynchronize();
    if (st != CUDNN_STATUS_SUCCESS) {
      state.SkipWithError(cudnnGetErrorString(st));
      break;
    }
  }
  cudnnDestroyPoolingDescriptor(pool);
  state.SetBytesProcessed(state.iterations() * PoolBytes(p));
}
BENCHMARK(BM_PoolCudnn)->Arg(0)->Arg(1)->UseRealTime()->Unit(benchmark::kMicrosecond);

void BM_BatchNormCudnn(benchmark::State& state) {
  std::string why;
  if (Gpu(&why) == nullptr) {
    state.SkipWithError(why.c_str());
    return;
  }
  const bool training = state.range(0) == 1;
  state.SetLabel(training ? "training" : "inference");
  const int n = kN, c = kBnC, h = kBnH;
  cudaSetDevice(0);
  CudnnCase cs;
  CHECK_CUDNN(cudnnCreate(&cs.handle));
  CHECK_CUDNN(cudnnCreateTensorDescriptor(&cs.x));
  CHECK_CUDNN(cudnnCreateTensorDescriptor(&cs.bn));
  CHECK_CUDNN(cudnnSetTensor4dDescriptor(cs.x, CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT, n, c, h, h));
  const cudnnBatchNormMode_t mode =
      training ? CUDNN_BATCHNORM_SPATIAL_PERSISTENT : CUDNN_BATCHNORM_SPATIAL;
  CHECK_CUDNN(cudnnDeriveBNTensorDescriptor(cs.bn, cs.x, mode));
  const size_t bytes = 4ull * n * c * h * h;
  void* x = cs.Buffer(bytes);
  void* y = cs.Buffer(bytes);
  std::vector<void*> v;
  for (int i = 0; i < 6; ++i) v.push_back(cs.Buffer(4ull * c));
  v.push_back(x);
  v.push_back(y);
  for (void* b : v) {
    if (b == nullptr) {
      state.SkipWithError("cudaMalloc failed");
      return;
    }
  }
  const float alpha = 1, beta = 0;
  for (auto _ : state) {
    cudnnStatus_t st =
        training ? cudnnBatchNormalizationForwardTraining(cs.handle, mode, &alpha, &beta, cs.x, x,
                                                          cs.x, y, cs.bn, v[0], v[1], 1.0, v[2],
                                                          v[3], 1e-3, v[4], v[5])
                 : cudnnBatchNormalizationForwardInference(cs.handle, mode, &alpha, &beta, cs.x,
                                                           x, cs.x, y, cs.bn, v[0], v[1], v[2],
                                                           v[3], 1e-3);
    cudaDeviceSynchronize();
    if (st != CUDNN_STATUS_SUCCESS) {
      state.SkipWithError(cudnnGetErrorString(st));
      break;
    }
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(bytes) * (training ? 3 : 2));
}
BENCHMARK(BM_BatchNormCudnn)->Arg(0)->Arg(1)->UseRealTime()->Unit(benchmark::kMicrosecond);
#endif

}  // namespace
}  // namespace graphrun
