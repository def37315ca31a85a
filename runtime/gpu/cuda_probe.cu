// CUDA side of cuda_probe.h; compiled by nvcc on every build with a toolkit.
#include <cuda_runtime.h>

#include <string>

#include "runtime/gpu/cuda_probe.h"

namespace graphrun {
namespace {

__global__ void FillKernel(float* out, float value, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    out[i] = value;
  }
}

std::string CudaError(cudaError_t err) {
  return std::string(cudaGetErrorName(err)) + ": " + cudaGetErrorString(err);
}

}  // namespace

GpuInventory QueryGpus() {
  GpuInventory inv;
  inv.cuda_compiled = true;
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    inv.why_none = "no usable CUDA driver (" + CudaError(err) + ")";
    cudaGetLastError();  // clear the sticky error
    return inv;
  }
  if (count == 0) {
    inv.why_none = "the CUDA driver reports no GPUs";
    return inv;
  }
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) continue;
    GpuInfo info;
    info.ordinal = i;
    info.name = prop.name;
    info.total_memory = static_cast<int64_t>(prop.totalGlobalMem);
    info.compute_major = prop.major;
    info.compute_minor = prop.minor;
    info.multiprocessors = prop.multiProcessorCount;
    size_t free_bytes = 0, total_bytes = 0;
    if (cudaSetDevice(i) == cudaSuccess &&
        cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess) {
      info.free_memory = static_cast<int64_t>(free_bytes);
    }
    inv.gpus.push_back(info);
  }
  return inv;
}

absl::Status FillOnGpu(int ordinal, float value, absl::Span<float> out) {
  cudaError_t err = cudaSetDevice(ordinal);
  if (err != cudaSuccess) {
    return absl::UnavailableError("GPU " + std::to_string(ordinal) + ": " +
                                  CudaError(err));
  }
  const size_t bytes = out.size() * sizeof(float);
  float* device = nullptr;
  err = cudaMalloc(&device, bytes == 0 ? 4 : bytes);
  if (err != cudaSuccess) {
    return absl::ResourceExhaustedError("GPU " + std::to_string(ordinal) +
                                        ": cudaMalloc of " +
                                        std::to_string(bytes) + " bytes: " +
                                        CudaError(err));
  }
  const int threads = 256;
  const int blocks = static_cast<int>(
      std::min<int64_t>((static_cast<int64_t>(out.size()) + threads - 1) / threads, 4096));
  if (!out.empty()) {
    FillKernel<<<blocks, threads>>>(device, value, static_cast<int64_t>(out.size()));
  }
  err = cudaGetLastError();
  if (err == cudaSuccess && !out.empty()) {
    err = cudaMemcpy(out.data(), device, bytes, cudaMemcpyDeviceToHost);
  }
  cudaFree(device);
  if (err != cudaSuccess) {
    return absl::InternalError("GPU " + std::to_string(ordinal) +
                               ": fill kernel: " + CudaError(err));
  }
  return absl::OkStatus();
}

}  // namespace graphrun
