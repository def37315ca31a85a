// gpu_launch.h's Conv2D, Conv2DBackpropInput and Conv2DBackpropFilter over
// cuDNN's convolution API: descriptors per call, the algorithms ranked once
// per geometry and direction by cuDNN's heuristics (the fastest whose
// workspace can be had and that runs is used), a handle per (GPU, stream).
// Float convolutions may run on TF32 tensor cores, as TensorFlow's do by
// default; as TensorFlow's (without determinism asked for), the backward
// filter algorithms cuDNN ranks first may sum with atomics.
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

// A geometry and direction as a map key.
using GeometryKey = std::vector<int64_t>;
GeometryKey KeyOf(const ConvGeometry& g, int direction) {
  int device = 0;
  cudaGetDevice(&device);
  return {direction,  device,     g.nchw,     g.n,        g.h,          g.w,
          g.c,        g.out_c,    g.kh,       g.kw,       g.groups,     g.stride_h,
          g.stride_w, g.dilation_h, g.dilation_w, g.pad_h, g.pad_w};
}

// What differs between the three directions: cuDNN's perf type and its
// ranking, workspace and run calls. `a` and `b` are the operands (forward:
// x, w; backward data: w, dy; backward filter: x, dy), `out` the result.
struct Forward {
  using Perf = cudnnConvolutionFwdAlgoPerf_t;
  static constexpr int kDirection = 0;
  static constexpr const char* kName = "cudnnConvolutionForward";
  static cudnnStatus_t MaxCount(cudnnHandle_t h, int* n) {
    return cudnnGetConvolutionForwardAlgorithmMaxCount(h, n);
  }
  static cudnnStatus_t Rank(cudnnHandle_t h, const Descriptors& d, int want, int* got, Perf* p) {
    return cudnnGetConvolutionForwardAlgorithm_v7(h, d.x, d.w, d.conv, d.y, want, got, p);
  }
  static cudnnStatus_t Workspace(cudnnHandle_t h, const Descriptors& d, const Perf& p,
                                 size_t* bytes) {
    return cudnnGetConvolutionForwardWorkspaceSize(h, d.x, d.w, d.conv, d.y, p.algo, bytes);
  }
  static cudnnStatus_t Run(cudnnHandle_t h, const Descriptors& d, const Perf& p, void* ws,
                           size_t bytes, const void* a, const void* b, void* out) {
    const float alpha = 1.0f, beta = 0.0f;
    return cudnnConvolutionForward(h, &alpha, d.x, a, d.w, b, d.conv, p.algo, ws, bytes, &beta,
                                   d.y, out);
  }
};

struct BackwardData {
  using Perf = cudnnConvolutionBwdDataAlgoPerf_t;
  static constexpr int kDirection = 1;
  static constexpr const char* kName = "cudnnConvolutionBackwardData";
  static cudnnStatus_t MaxCount(cudnnHandle_t h, int* n) {
    return cudnnGetConvolutionBackwardDataAlgorithmMaxCount(h, n);
  }
  static cudnnStatus_t Rank(cudnnHandle_t h, const Descriptors& d, int want, int* got, Perf* p) {
    return cudnnGetConvolutionBackwardDataAlgorithm_v7(h, d.w, d.y, d.conv, d.x, want, got, p);
  }
  static cudnnStatus_t Workspace(cudnnHandle_t h, const Descriptors& d, const Perf& p,
                                 size_t* bytes) {
    return cudnnGetConvolutionBackwardDataWorkspaceSize(h, d.w, d.y, d.conv, d.x, p.algo, bytes);
  }
  static cudnnStatus_t Run(cudnnHandle_t h, const Descriptors& d, const Perf& p, void* ws,
                           size_t bytes, const void* a, const void* b, void* out) {
    const float alpha = 1.0f, beta = 0.0f;
    return cudnnConvolutionBackwardData(h, &alpha, d.w, a, d.y, b, d.conv, p.algo, ws, bytes,
                                        &beta, d.x, out);
  }
};

struct BackwardFilter {
  using Perf = cudnnConvolutionBwdFilterAlgoPerf_t;
  static constexpr int kDirection = 2;
  static constexpr const char* kName = "cudnnConvolutionBackwardFilter";
  static cudnnStatus_t MaxCount(cudnnHandle_t h, int* n) {
    return cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(h, n);
  }
  static cudnnStatus_t Rank(cudnnHandle_t h, const Descriptors& d, int want, int* got, Perf* p) {
    return cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, d.x, d.y, d.conv, d.w, want, got, p);
  }
  static cudnnStatus_t Workspace(cudnnHandle_t h, const Descriptors& d, const Perf& p,
                                 size_t* bytes) {
    return cudnnGetConvolutionBackwardFilterWorkspaceSize(h, d.x, d.y, d.conv, d.w, p.algo,
                                                          bytes);
  }
  static cudnnStatus_t Run(cudnnHandle_t h, const Descriptors& d, const Perf& p, void* ws,
                           size_t bytes, const void* a, const void* b, void* out) {
    const float alpha = 1.0f, beta = 0.0f;
    return cudnnConvolutionBackwardFilter(h, &alpha, d.x, a, d.y, b, d.conv, p.algo, ws, bytes,
                                          &beta, d.w, out);
  }
};

// cuDNN's heuristic ranking for a geometry in direction D, fastest first,
// cached.
template <typename D>
absl::Status RankedAlgorithms(cudnnHandle_t handle, const ConvGeometry& g, const Descriptors& d,
                              std::vector<typename D::Perf>* ranked) {
  using Perf = typename D::Perf;
  static std::mutex mu;
  static auto* cache = new std::map<GeometryKey, std::vector<Perf>>();
  const GeometryKey key = KeyOf(g, D::kDirection);
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache->find(key);
    if (it != cache->end()) {
      *ranked = it->second;
      return absl::OkStatus();
    }
  }
  int max_count = 0;
  GR_CUDNN(D::MaxCount(handle, &max_count), "the algorithm count");
  std::vector<Perf> perf(static_cast<size_t>(max_count > 0 ? max_count : 1));
  int returned = 0;
  GR_CUDNN(D::Rank(handle, d, static_cast<int>(perf.size()), &returned, perf.data()),
           "the algorithm heuristics");
  ranked->clear();
  for (int k = 0; k < returned; ++k) {
    if (perf[k].status == CUDNN_STATUS_SUCCESS) ranked->push_back(perf[k]);
  }
  if (ranked->empty()) {
    return absl::InvalidArgumentError(
        std::string("cuDNN has no algorithm for this convolution (") + D::kName + ")");
  }
  std::lock_guard<std::mutex> lock(mu);
  (*cache)[key] = *ranked;
  return absl::OkStatus();
}

// One convolution in direction D: the fastest ranked algorithm whose
// workspace can be had and that runs; the next when not (a heuristic's
// pick may still refuse the geometry as not supported; any other error is
// the convolution's).
template <typename D>
absl::Status Convolve(void* stream, const ConvGeometry& g, const void* a, const void* b,
                      void* out, const WorkspaceFn& workspace) {
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  absl::Status status = cuda_util::UseStreamDevice(s);
  if (!status.ok()) return status;
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
  std::vector<typename D::Perf> ranked;
  status = RankedAlgorithms<D>(handle, g, d, &ranked);
  if (!status.ok()) return status;
  absl::Status last = absl::InvalidArgumentError("cuDNN ranked no algorithm for this convolution");
  for (const typename D::Perf& p : ranked) {
    size_t bytes = 0;
    if (D::Workspace(handle, d, p, &bytes) != CUDNN_STATUS_SUCCESS) continue;
    void* ws = nullptr;
    if (bytes > 0) {
      absl::StatusOr<void*> got = workspace(static_cast<int64_t>(bytes));
      if (!got.ok()) {
        last = got.status();
        continue;
      }
      ws = *got;
    }
    const cudnnStatus_t run = D::Run(handle, d, p, ws, bytes, a, b, out);
    if (run == CUDNN_STATUS_SUCCESS) return absl::OkStatus();
    last = FromCudnn(run, D::kName);
    if (CUDNN_STATUS_CATEGORY(run) != CUDNN_STATUS_NOT_SUPPORTED) return last;
  }
  return last;
}

}  // namespace

absl::Status Conv2D(void* stream, const ConvGeometry& g, const float* in, const float* filter,
                    float* out, const WorkspaceFn& workspace) {
  if (g.n * g.out_c * g.out_h * g.out_w == 0) {
    return cuda_util::UseStreamDevice(static_cast<cudaStream_t>(stream));
  }
  return Convolve<Forward>(stream, g, in, filter, out, workspace);
}

absl::Status Conv2DBackpropInput(void* stream, const ConvGeometry& g, const float* filter,
                                 const float* out_backprop, float* in_backprop,
                                 const WorkspaceFn& workspace) {
  if (g.n * g.c * g.h * g.w == 0) {
    return cuda_util::UseStreamDevice(static_cast<cudaStream_t>(stream));
  }
  return Convolve<BackwardData>(stream, g, filter, out_backprop, in_backprop, workspace);
}

absl::Status Conv2DBackpropFilter(void* stream, const ConvGeometry& g, const float* in,
                                  const float* out_backprop, float* filter_backprop,
                                  const WorkspaceFn& workspace) {
  if (g.out_c * g.kh * g.kw * g.c == 0) {
    return cuda_util::UseStreamDevice(static_cast<cudaStream_t>(stream));
  }
  return Convolve<BackwardFilter>(stream, g, in, out_backprop, filter_backprop, workspace);
}

}  // namespace gpu
}  // namespace graphrun
