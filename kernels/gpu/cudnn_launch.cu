// gpu_launch.h's Conv2D over cuDNN's convolution API: descriptors per call,
// the algorithm chosen once per geometry from cuDNN's heuristics (the
// fastest whose workspace can be had), a handle per (GPU, stream). Float
// convolutions may run on TF32 tensor cores, as TensorFlow's do by default.
#include <cudnn.h>

#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "kernels/gpu/cuda_util.h"
#include "kernels/gpu/gpu_launch.h"

namespace graphrun {
namespace gpu {
namespace {

absl::Status FromCudnn(cudnnStatus_t s, const char* what) {
  if (s == CUDNN_STATUS_SUCCESS) return absl::OkStatus();
  const std::string message = std::string(what) + ": " + cudnnGetErrorString(s);
  if (s == CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED ||
      s == CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED) {
    return absl::ResourceExhaustedError(message);
  }
  if (s == CUDNN_STATUS_NOT_SUPPORTED_SUBLIBRARY_UNAVAILABLE) {
    return absl::UnavailableError(message);
  }
  switch (CUDNN_STATUS_CATEGORY(s)) {
    case CUDNN_STATUS_BAD_PARAM: return absl::InvalidArgumentError(message);
    case CUDNN_STATUS_NOT_SUPPORTED: return absl::UnimplementedError(message);
    default: return absl::InternalError(message);
  }
}

#define GR_CUDNN(call, what)                           \
  do {                                                 \
    absl::Status _s = FromCudnn((call), what);         \
    if (!_s.ok()) return _s;                           \
  } while (0)

// A cuDNN handle and the lock that keeps it to one thread at a time (cuDNN
// handles must not be used concurrently; GPU kernels run on whichever
// executor thread made them ready).
struct Handle {
  cudnnHandle_t handle = nullptr;
  std::mutex mu;
};

// One handle per (GPU, stream), kept for the process (as the cuBLAS ones).
absl::Status HandleFor(cudaStream_t stream, Handle** handle) {
  int device = 0;
  cudaGetDevice(&device);
  static std::mutex mu;
  static auto* handles = new std::map<std::pair<int, cudaStream_t>, Handle*>();
  std::lock_guard<std::mutex> lock(mu);
  auto it = handles->find({device, stream});
  if (it != handles->end()) {
    *handle = it->second;
    return absl::OkStatus();
  }
  cudnnHandle_t h;
  GR_CUDNN(cudnnCreate(&h), "cudnnCreate");
  absl::Status s = FromCudnn(cudnnSetStream(h, stream), "cudnnSetStream");
  if (!s.ok()) {
    cudnnDestroy(h);
    return s;
  }
  Handle* made = new Handle();
  made->handle = h;
  (*handles)[{device, stream}] = made;
  *handle = made;
  return absl::OkStatus();
}

// The descriptors of one convolution, destroyed with it.
struct Descriptors {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  ~Descriptors() {
    if (x != nullptr) cudnnDestroyTensorDescriptor(x);
    if (y != nullptr) cudnnDestroyTensorDescriptor(y);
    if (w != nullptr) cudnnDestroyFilterDescriptor(w);
    if (conv != nullptr) cudnnDestroyConvolutionDescriptor(conv);
  }
};

bool FitsInt(int64_t v) { return v >= 0 && v <= 2147483647; }

absl::Status Describe(const ConvGeometry& g, Descriptors* d) {
  for (int64_t v : {g.n, g.c, g.h, g.w, g.out_c, g.kh, g.kw, g.out_h, g.out_w, g.pad_h, g.pad_w,
                    g.stride_h, g.stride_w, g.dilation_h, g.dilation_w, g.groups}) {
    if (!FitsInt(v)) {
      return absl::InvalidArgumentError("a convolution dimension past cuDNN's int range");
    }
  }
  const cudnnTensorFormat_t format = g.nchw ? CUDNN_TENSOR_NCHW : CUDNN_TENSOR_NHWC;
  const auto i = [](int64_t v) { return static_cast<int>(v); };
  GR_CUDNN(cudnnCreateTensorDescriptor(&d->x), "cudnnCreateTensorDescriptor");
  GR_CUDNN(cudnnSetTensor4dDescriptor(d->x, format, CUDNN_DATA_FLOAT, i(g.n), i(g.c), i(g.h),
                                      i(g.w)),
           "the convolution's input descriptor");
  GR_CUDNN(cudnnCreateTensorDescriptor(&d->y), "cudnnCreateTensorDescriptor");
  GR_CUDNN(cudnnSetTensor4dDescriptor(d->y, format, CUDNN_DATA_FLOAT, i(g.n), i(g.out_c),
                                      i(g.out_h), i(g.out_w)),
           "the convolution's output descriptor");
  GR_CUDNN(cudnnCreateFilterDescriptor(&d->w), "cudnnCreateFilterDescriptor");
  GR_CUDNN(cudnnSetFilter4dDescriptor(d->w, CUDNN_DATA_FLOAT, format, i(g.out_c),
                                      i(g.c / g.groups), i(g.kh), i(g.kw)),
           "the convolution's filter descriptor");
  GR_CUDNN(cudnnCreateConvolutionDescriptor(&d->conv), "cudnnCreateConvolutionDescriptor");
  GR_CUDNN(cudnnSetConvolution2dDescriptor(d->conv, i(g.pad_h), i(g.pad_w), i(g.stride_h),
                                           i(g.stride_w), i(g.dilation_h), i(g.dilation_w),
                                           CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
           "the convolution descriptor");
  GR_CUDNN(cudnnSetConvolutionGroupCount(d->conv, i(g.groups)), "cudnnSetConvolutionGroupCount");
  GR_CUDNN(cudnnSetConvolutionMathType(d->conv, CUDNN_DEFAULT_MATH), "cudnnSetConvolutionMathType");
  return absl::OkStatus();
}

// A geometry as a map key.
using GeometryKey = std::vector<int64_t>;
GeometryKey KeyOf(const ConvGeometry& g) {
  int device = 0;
  cudaGetDevice(&device);
  return {device,     g.nchw,       g.n,          g.h,        g.w,        g.c,
          g.out_c,    g.kh,         g.kw,         g.groups,   g.stride_h, g.stride_w,
          g.dilation_h, g.dilation_w, g.pad_h,    g.pad_w};
}

// cuDNN's heuristic ranking for a geometry, fastest first, cached.
absl::Status RankedAlgorithms(cudnnHandle_t handle, const ConvGeometry& g, const Descriptors& d,
                              std::vector<cudnnConvolutionFwdAlgoPerf_t>* ranked) {
  static std::mutex mu;
  static auto* cache = new std::map<GeometryKey, std::vector<cudnnConvolutionFwdAlgoPerf_t>>();
  const GeometryKey key = KeyOf(g);
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache->find(key);
    if (it != cache->end()) {
      *ranked = it->second;
      return absl::OkStatus();
    }
  }
  int max_count = 0;
  GR_CUDNN(cudnnGetConvolutionForwardAlgorithmMaxCount(handle, &max_count),
           "cudnnGetConvolutionForwardAlgorithmMaxCount");
  std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(static_cast<size_t>(max_count > 0 ? max_count : 1));
  int returned = 0;
  GR_CUDNN(cudnnGetConvolutionForwardAlgorithm_v7(handle, d.x, d.w, d.conv, d.y,
                                                  static_cast<int>(perf.size()), &returned,
                                                  perf.data()),
           "cudnnGetConvolutionForwardAlgorithm_v7");
  ranked->clear();
  for (int k = 0; k < returned; ++k) {
    if (perf[k].status == CUDNN_STATUS_SUCCESS) ranked->push_back(perf[k]);
  }
  if (ranked->empty()) {
    return absl::InvalidArgumentError("cuDNN has no forward algorithm for this convolution");
  }
  std::lock_guard<std::mutex> lock(mu);
  (*cache)[key] = *ranked;
  return absl::OkStatus();
}

}  // namespace

absl::Status Conv2D(void* stream, const ConvGeometry& g, const float* in, const float* filter,
                    float* out, const WorkspaceFn& workspace) {
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  absl::Status status = cuda_util::UseStreamDevice(s);
  if (!status.ok()) return status;
  if (g.n * g.out_c * g.out_h * g.out_w == 0) return absl::OkStatus();
  if (g.groups < 1 || g.c % g.groups != 0 || g.out_c % g.groups != 0) {
    return absl::InvalidArgumentError("a grouped convolution whose channels the groups do not divide");
  }
  Handle* locked = nullptr;
  status = HandleFor(s, &locked);
  if (!status.ok()) return status;
  std::lock_guard<std::mutex> hold(locked->mu);
  cudnnHandle_t handle = locked->handle;
  Descriptors d;
  status = Describe(g, &d);
  if (!status.ok()) return status;
  std::vector<cudnnConvolutionFwdAlgoPerf_t> ranked;
  status = RankedAlgorithms(handle, g, d, &ranked);
  if (!status.ok()) return status;
  // The fastest algorithm whose workspace can be had and that runs; the
  // next when not (a heuristic's pick may still refuse the geometry as not
  // supported; any other error is the convolution's).
  absl::Status last = absl::InvalidArgumentError("cuDNN ranked no algorithm for this convolution");
  for (const cudnnConvolutionFwdAlgoPerf_t& p : ranked) {
    size_t bytes = 0;
    if (cudnnGetConvolutionForwardWorkspaceSize(handle, d.x, d.w, d.conv, d.y, p.algo, &bytes) !=
        CUDNN_STATUS_SUCCESS) {
      continue;
    }
    void* ws = nullptr;
    if (bytes > 0) {
      absl::StatusOr<void*> got = workspace(static_cast<int64_t>(bytes));
      if (!got.ok()) {
        last = got.status();
        continue;
      }
      ws = *got;
    }
    const float alpha = 1.0f, beta = 0.0f;
    const cudnnStatus_t run = cudnnConvolutionForward(handle, &alpha, d.x, in, d.w, filter, d.conv,
                                                      p.algo, ws, bytes, &beta, d.y, out);
    if (run == CUDNN_STATUS_SUCCESS) return absl::OkStatus();
    last = FromCudnn(run, "cudnnConvolutionForward");
    if (CUDNN_STATUS_CATEGORY(run) != CUDNN_STATUS_NOT_SUPPORTED) return last;
  }
  return last;
}

}  // namespace gpu
}  // namespace graphrun
