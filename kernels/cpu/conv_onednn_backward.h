// OneDnnConv2DBackpropInput / OneDnnConv2DBackpropFilter: float32 NHWC
// Conv2DBackpropInput and Conv2DBackpropFilter on oneDNN's
// convolution_backward_data and convolution_backward_weights, the paths
// conv_ops_gemm.cc's and conv_filter_grad_op.cc's kernels take for float
// NHWC, undilated convolutions padded less than the window (SAME, VALID or
// EXPLICIT, pads as TensorFlow computes them), unless
// GRAPHRUN_CONV2D_LIBRARY=eigen (read when a kernel is constructed) keeps
// them on their im2col + GEMM / direct-loop paths.
//
// As conv_onednn.h: oneDNN as Debian builds it threads with OpenMP, whose
// spinning workers take the cores the Eigen pool needs, so no OpenMP team is
// ever started. The work is cut by image into one single-threaded
// primitive per intra-op thread, run on the device's Eigen pool (pieces.h).
// Backward data: each piece writes its images' input gradient. Backward
// weights: each piece sums its images into a partial filter gradient of its
// own, and the partials are added in piece order at the end (so results
// differ from a single sum by float rounding only).
//
// One object per kernel instance; it keeps the primitives of the last
// geometry. The filter is reordered into the primitive's layout on every
// run (a training step changes it). Thread-safe; concurrent Runs may share
// an object.
#ifndef GRAPHRUN_KERNELS_CPU_CONV_ONEDNN_BACKWARD_H_
#define GRAPHRUN_KERNELS_CPU_CONV_ONEDNN_BACKWARD_H_

#include <cstdint>
#include <memory>
#include <optional>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"

namespace Eigen {
struct ThreadPoolDevice;
}  // namespace Eigen

namespace graphrun {
namespace cpu {

// Whether float NHWC convolution gradients may run on oneDNN: false when
// GRAPHRUN_CONV2D_LIBRARY is "eigen" (the forward path's switch, see
// conv_onednn.h), true otherwise.
bool OneDnnConvBackpropFromEnv();

// An NHWC convolution's geometry (of the forward convolution whose
// gradients are asked): input [batch, in_rows, in_cols, in_depth], filter
// [filter_rows, filter_cols, in_depth, out_depth], output [batch, out_rows,
// out_cols, out_depth]; pads as TensorFlow computes them.
struct OneDnnBackwardGeometry {
  int64_t batch = 0, in_rows = 0, in_cols = 0, in_depth = 0;
  int64_t filter_rows = 0, filter_cols = 0, out_depth = 0;
  int64_t stride_rows = 1, stride_cols = 1;
  int64_t pad_top = 0, pad_bottom = 0, pad_left = 0, pad_right = 0;
  int64_t out_rows = 0, out_cols = 0;

  bool operator==(const OneDnnBackwardGeometry& o) const;
  // The multiply-adds of the forward convolution (each gradient has as many).
  double MultiplyAdds() const;
};

// `g` when oneDNN can take it (every size positive, each pad smaller than
// the window, the output size consistent with the pads), else nothing.
// Dilated convolutions are not passed here (the callers keep them).
std::optional<OneDnnBackwardGeometry> OneDnnBackwardGeometryIfSupported(
    const OneDnnBackwardGeometry& g);

class OneDnnConv2DBackpropInput {
 public:
  OneDnnConv2DBackpropInput();
  ~OneDnnConv2DBackpropInput();
  OneDnnConv2DBackpropInput(const OneDnnConv2DBackpropInput&) = delete;
  OneDnnConv2DBackpropInput& operator=(const OneDnnConv2DBackpropInput&) = delete;

  // in_grad ([batch, in_rows, in_cols, in_depth], every element written) =
  // the gradient of the convolution with respect to its input, from
  // out_grad ([batch, out_rows, out_cols, out_depth]) and filter
  // ([filter_rows, filter_cols, in_depth, out_depth]), on `pool`'s threads
  // and the calling thread. Unimplemented when oneDNN has no primitive for
  // the geometry (the caller then takes another path), Internal for other
  // oneDNN failures.
  absl::Status Run(const OneDnnBackwardGeometry& g, const float* filter, const float* out_grad,
                   float* in_grad, const Eigen::ThreadPoolDevice& pool);

  struct Cached;  // conv_onednn_backward.cc

 private:
  mutable absl::Mutex mu_;
  std::shared_ptr<const Cached> cached_ ABSL_GUARDED_BY(mu_);
};

class OneDnnConv2DBackpropFilter {
 public:
  OneDnnConv2DBackpropFilter();
  ~OneDnnConv2DBackpropFilter();
  OneDnnConv2DBackpropFilter(const OneDnnConv2DBackpropFilter&) = delete;
  OneDnnConv2DBackpropFilter& operator=(const OneDnnConv2DBackpropFilter&) = delete;

  // filter_grad ([filter_rows, filter_cols, in_depth, out_depth]) = the
  // gradient of the convolution with respect to its filter, from in
  // ([batch, in_rows, in_cols, in_depth]) and out_grad ([batch, out_rows,
  // out_cols, out_depth]). Errors as OneDnnConv2DBackpropInput::Run.
  absl::Status Run(const OneDnnBackwardGeometry& g, const float* in, const float* out_grad,
                   float* filter_grad, const Eigen::ThreadPoolDevice& pool);

  struct Cached;  // conv_onednn_backward.cc

 private:
  mutable absl::Mutex mu_;
  std::shared_ptr<const Cached> cached_ ABSL_GUARDED_BY(mu_);
};

}  // namespace cpu
}  // namespace graphrun

#endif  // GRAPHRUN_KERNELS_CPU_CONV_ONEDNN_BACKWARD_H_
