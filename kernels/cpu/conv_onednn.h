// OneDnnConv2D: float32 NHWC Conv2D on oneDNN's convolution_forward, the
// path conv_ops.cc's Conv2D takes for float NHWC, ungrouped, undilated
// SAME / VALID convolutions (see Conv2DLibraryFromEnv for the switch), and
// for _FusedConv2D with its bias and activation applied by oneDNN before
// the output is written; and DepthwiseConv2dNative's, as a convolution with
// one group per input channel.
//
// One object per kernel instance. It keeps the last primitive (keyed by the
// geometry and the fused activation) and the filter reordered into the
// layout that primitive wants (keyed by the filter's buffer, which it keeps
// referenced, so the address cannot be reused by another tensor while the
// reordered copy is cached).
// A filter tensor must therefore not be rewritten in place between runs;
// graphrun's kernels never do that to a buffer someone else references.
//
// oneDNN as Debian builds it threads with OpenMP, whose idle workers spin
// on the cores the Eigen pool needs next (a VGG16 step ran 2x slower than on
// Eigen that way). So no OpenMP team is ever started: the convolution is
// cut into one piece per intra-op thread (by image, or by output rows when
// there are fewer images than threads), each piece a single-threaded
// primitive run on the device's Eigen pool. A piece run by Winograd
// reorders its input into the blocked layout that primitive takes, and its
// output back, in the thread's scratch. Thread-safe; concurrent Runs may
// share an object.
#ifndef GRAPHRUN_KERNELS_CPU_CONV_ONEDNN_H_
#define GRAPHRUN_KERNELS_CPU_CONV_ONEDNN_H_

#include <cstdint>
#include <memory>
#include <optional>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "graph/tensor.h"
#include "kernels/cpu/bias_activation.h"

namespace Eigen {
struct ThreadPoolDevice;
}  // namespace Eigen

namespace graphrun {
namespace cpu {

// Which library runs float NHWC Conv2D, from GRAPHRUN_CONV2D_LIBRARY:
// "onednn", "eigen" (im2col + Eigen GEMM), or unset / "auto" (oneDNN where
// it applies). Read when a kernel is constructed. "eigen" also keeps float
// Conv2DBackpropInput / Conv2DBackpropFilter off oneDNN
// (conv_onednn_backward.h).
enum class Conv2DLibrary { kAuto, kOneDnn, kEigen };
Conv2DLibrary Conv2DLibraryFromEnv();

// How oneDNN computes an ordinary 3x3 stride-1 convolution, from
// GRAPHRUN_CONV2D_ALGORITHM: "direct" (every product, as TensorFlow does),
// "winograd" (oneDNN's Winograd F(4x4, 3x3) or F(2x2, 3x3) wherever it has
// one), or unset / "auto": Winograd where it measured faster here (both
// depths 32 or more, and each piece's output 12x12 or larger: a map cut
// into row pieces for the threads counts per piece), direct elsewhere.
// Pieces cut by output channels always run direct. Winograd does about a
// quarter of the multiplications; its results differ from direct ones
// (and so from TensorFlow's) by 1-4e-6 on outputs of magnitude 2 in the
// shapes measured here, within the tests' float tolerance. Read when a
// kernel is constructed.
enum class ConvAlgorithm { kAuto, kDirect, kWinograd };
ConvAlgorithm ConvAlgorithmFromEnv();
// Whether this CPU and oneDNN build have a Winograd convolution (oneDNN
// 2.x has it for float32 on AVX-512 only). Probed once.
bool OneDnnHasWinograd();

// An NHWC convolution's geometry; pads as TensorFlow computes them.
struct OneDnnConvGeometry {
  int64_t batch = 0, in_rows = 0, in_cols = 0, in_depth = 0;
  int64_t filter_rows = 0, filter_cols = 0, out_depth = 0;
  int64_t stride_rows = 1, stride_cols = 1;
  int64_t pad_top = 0, pad_bottom = 0, pad_left = 0, pad_right = 0;
  int64_t out_rows = 0, out_cols = 0;
  // 0: an ordinary convolution, filter [rows, cols, in_depth, out_depth].
  // Above 0: a depthwise one (DepthwiseConv2dNative), filter [rows, cols,
  // in_depth, multiplier], out_depth = in_depth * multiplier, output
  // channel c * multiplier + q from input channel c.
  int64_t multiplier = 0;

  bool operator==(const OneDnnConvGeometry& o) const;
};

// The geometry of the NHWC convolution `d` describes (conv_ops.cc's and
// depthwise_conv_op.cc's dims, which name their fields alike: batch,
// in_rows, ..., rows / cols windows), or nothing when oneDNN cannot take
// it: dilated, or padded as wide as the window or wider.
template <typename Dims>
std::optional<OneDnnConvGeometry> OneDnnGeometryOf(const Dims& d, int64_t out_depth,
                                                   int64_t multiplier = 0) {
  if (d.dilation_rows != 1 || d.dilation_cols != 1 || d.rows.pad_before >= d.filter_rows ||
      d.rows.pad_after >= d.filter_rows || d.cols.pad_before >= d.filter_cols ||
      d.cols.pad_after >= d.filter_cols) {
    return std::nullopt;
  }
  OneDnnConvGeometry g;
  g.batch = d.batch;
  g.in_rows = d.in_rows;
  g.in_cols = d.in_cols;
  g.in_depth = d.in_depth;
  g.filter_rows = d.filter_rows;
  g.filter_cols = d.filter_cols;
  g.out_depth = out_depth;
  g.multiplier = multiplier;
  g.stride_rows = d.stride_rows;
  g.stride_cols = d.stride_cols;
  g.pad_top = d.rows.pad_before;
  g.pad_bottom = d.rows.pad_after;
  g.pad_left = d.cols.pad_before;
  g.pad_right = d.cols.pad_after;
  g.out_rows = d.rows.out;
  g.out_cols = d.cols.out;
  return g;
}

// What _FusedConv2D adds to the convolution: out = act(conv + bias), the
// bias ([out_depth]) through oneDNN's bias input, the activation as an
// eltwise post-op.
struct OneDnnConvBias {
  const float* bias = nullptr;
  BiasActivation epilogue;
};

class OneDnnConv2D {
 public:
  OneDnnConv2D();
  ~OneDnnConv2D();
  OneDnnConv2D(const OneDnnConv2D&) = delete;
  OneDnnConv2D& operator=(const OneDnnConv2D&) = delete;

  // out ([batch, out_rows, out_cols, out_depth]) = in ([batch, in_rows,
  // in_cols, in_depth]) convolved with `filter` (float, [filter_rows,
  // filter_cols, in_depth, out_depth]) on `pool`'s threads and the calling
  // thread. Unimplemented when oneDNN has no primitive for the geometry
  // (the caller then takes another path), Internal for other oneDNN
  // failures. With `bias`, out is act(convolution + bias) instead.
  absl::Status Run(const OneDnnConvGeometry& g, const Tensor& filter,
                   const float* in, float* out,
                   const Eigen::ThreadPoolDevice& pool,
                   const OneDnnConvBias* bias = nullptr);

  // How the convolution last built for a successful Run was cut, and how
  // many of its pieces run by Winograd (zeros before one).
  struct Plan {
    int pieces = 0;
    int winograd_pieces = 0;
  };
  Plan LastPlan() const;

  // The primitives and reordered weights of one geometry and filter
  // (conv_onednn.cc).
  struct Cached;

 private:
  const ConvAlgorithm algorithm_;
  mutable absl::Mutex mu_;
  std::shared_ptr<const Cached> cached_ ABSL_GUARDED_BY(mu_);
};

}  // namespace cpu
}  // namespace graphrun

#endif  // GRAPHRUN_KERNELS_CPU_CONV_ONEDNN_H_
