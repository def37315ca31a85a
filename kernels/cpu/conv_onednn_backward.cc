#include "kernels/cpu/conv_onednn_backward.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "dnnl.hpp"
#include "kernels/cpu/onednn_threads.h"
#include "kernels/cpu/pieces.h"
#include "kernels/eigen.h"

namespace graphrun {
namespace cpu {
namespace {

using Tag = dnnl::memory::format_tag;
using Dt = dnnl::memory::data_type;

dnnl::engine& Engine() {
  static dnnl::engine* const engine = new dnnl::engine(dnnl::engine::kind::cpu, 0);
  return *engine;
}

// Floating-point operations below which a piece is not worth a thread
// (about 10 us of work here; as conv_onednn.cc).
constexpr double kMinFlopsPerPiece = 1e6;

// Pieces of `g` by image: at most `threads`, image counts differing by one.
std::vector<std::pair<int64_t, int64_t>> SplitByImage(const OneDnnBackwardGeometry& g,
                                                      int threads) {
  std::vector<std::pair<int64_t, int64_t>> pieces;  // (first image, images)
  const int64_t n = std::max<int64_t>(1, std::min<int64_t>(threads, g.batch));
  for (int64_t i = 0, image = 0; i < n; ++i) {
    const int64_t images = g.batch / n + (i < g.batch % n ? 1 : 0);
    pieces.emplace_back(image, images);
    image += images;
  }
  return pieces;
}

// Threads worth using for `g`: one per kMinFlopsPerPiece, at most the pool's.
int ThreadsFor(const OneDnnBackwardGeometry& g, const Eigen::ThreadPoolDevice& pool) {
  const double work = 2.0 * g.MultiplyAdds() / kMinFlopsPerPiece;
  return std::max(1, std::min<int>(pool.numThreads(), static_cast<int>(work)));
}

dnnl::memory::dims Strides(const OneDnnBackwardGeometry& g) {
  return {g.stride_rows, g.stride_cols};
}
dnnl::memory::dims PadsBefore(const OneDnnBackwardGeometry& g) { return {g.pad_top, g.pad_left}; }
dnnl::memory::dims PadsAfter(const OneDnnBackwardGeometry& g) {
  return {g.pad_bottom, g.pad_right};
}
// oneDNN names dimensions N, C, H, W whatever the memory layout.
dnnl::memory::desc InputDesc(const OneDnnBackwardGeometry& g, int64_t images) {
  return dnnl::memory::desc({images, g.in_depth, g.in_rows, g.in_cols}, Dt::f32, Tag::nhwc);
}
dnnl::memory::desc OutputDesc(const OneDnnBackwardGeometry& g, int64_t images) {
  return dnnl::memory::desc({images, g.out_depth, g.out_rows, g.out_cols}, Dt::f32, Tag::nhwc);
}
dnnl::memory::desc AnyWeightsDesc(const OneDnnBackwardGeometry& g) {
  return dnnl::memory::desc({g.out_depth, g.in_depth, g.filter_rows, g.filter_cols}, Dt::f32,
                            Tag::any);
}
// TensorFlow's filter layout [rows, cols, in, out] is oneDNN's hwio.
dnnl::memory::desc UserWeightsDesc(const OneDnnBackwardGeometry& g) {
  return dnnl::memory::desc({g.out_depth, g.in_depth, g.filter_rows, g.filter_cols}, Dt::f32,
                            Tag::hwio);
}

// The forward convolution oneDNN wants as a hint for a backward primitive.
dnnl::convolution_forward::primitive_desc ForwardHint(const OneDnnBackwardGeometry& g,
                                                      int64_t images) {
  const dnnl::convolution_forward::desc desc(
      dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct, InputDesc(g, images),
      AnyWeightsDesc(g), OutputDesc(g, images), Strides(g), PadsBefore(g), PadsAfter(g));
  return dnnl::convolution_forward::primitive_desc(desc, Engine());
}

dnnl::primitive_attr UserScratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

absl::Status Failure(const dnnl::error& e) {
  if (e.status == dnnl_unimplemented) {
    return absl::UnimplementedError(
        absl::StrCat("oneDNN has no backward convolution for this geometry: ", e.what()));
  }
  return absl::InternalError(absl::StrCat("oneDNN backward convolution: ", e.what()));
}

// Runs run(i) for each of n pieces on `pool`, returning the first oneDNN
// failure (exceptions must not leave a pool thread).
template <typename Fn>
absl::Status RunAll(const Eigen::ThreadPoolDevice& pool, int n, Fn run) {
  absl::Mutex mu;
  absl::Status status;
  RunPieces(pool, n, [&](int i) {
    try {
      OneOpenMpThread();
      run(i);
    } catch (const dnnl::error& e) {
      absl::MutexLock lock(&mu);
      if (status.ok()) status = Failure(e);
    }
  });
  return status;
}

// The thread's scratch for `bytes` as oneDNN memory of `desc` at `offset`
// (oneDNN's own allocation when the scratch could not be had).
dnnl::memory ScratchMemory(char* scratch, const dnnl::memory::desc& desc, size_t offset) {
  return scratch != nullptr ? dnnl::memory(desc, Engine(), scratch + offset)
                            : dnnl::memory(desc, Engine());
}

size_t Aligned(size_t bytes) { return (bytes + 63) / 64 * 64; }

}  // namespace

bool OneDnnConvBackpropFromEnv() {
  const char* v = std::getenv("GRAPHRUN_CONV2D_LIBRARY");
  return v == nullptr || std::strcmp(v, "eigen") != 0;
}

bool OneDnnBackwardGeometry::operator==(const OneDnnBackwardGeometry& o) const {
  return batch == o.batch && in_rows == o.in_rows && in_cols == o.in_cols &&
         in_depth == o.in_depth && filter_rows == o.filter_rows && filter_cols == o.filter_cols &&
         out_depth == o.out_depth && stride_rows == o.stride_rows && stride_cols == o.stride_cols &&
         pad_top == o.pad_top && pad_bottom == o.pad_bottom && pad_left == o.pad_left &&
         pad_right == o.pad_right && out_rows == o.out_rows && out_cols == o.out_cols;
}

double OneDnnBackwardGeometry::MultiplyAdds() const {
  return static_cast<double>(batch) * out_rows * out_cols * out_depth * in_depth * filter_rows *
         filter_cols;
}

std::optional<OneDnnBackwardGeometry> OneDnnBackwardGeometryIfSupported(
    const OneDnnBackwardGeometry& g) {
  for (int64_t v : {g.batch, g.in_rows, g.in_cols, g.in_depth, g.filter_rows, g.filter_cols,
                    g.out_depth, g.stride_rows, g.stride_cols, g.out_rows, g.out_cols}) {
    if (v <= 0) return std::nullopt;
  }
  if (g.pad_top < 0 || g.pad_bottom < 0 || g.pad_left < 0 || g.pad_right < 0 ||
      g.pad_top >= g.filter_rows || g.pad_bottom >= g.filter_rows || g.pad_left >= g.filter_cols ||
      g.pad_right >= g.filter_cols) {
    return std::nullopt;
  }
  // oneDNN's own rule for the output size (floor division), which
  // TensorFlow's SAME / VALID / EXPLICIT sizes meet; checked here so that a
  // mismatch falls back rather than failing.
  auto out = [](int64_t in, int64_t filter, int64_t stride, int64_t before, int64_t after) {
    const int64_t span = in + before + after - filter;
    return span < 0 ? int64_t{-1} : span / stride + 1;
  };
  if (out(g.in_rows, g.filter_rows, g.stride_rows, g.pad_top, g.pad_bottom) != g.out_rows ||
      out(g.in_cols, g.filter_cols, g.stride_cols, g.pad_left, g.pad_right) != g.out_cols) {
    return std::nullopt;
  }
  return g;
}

// ---------------------------------------------------------------------------
// Backward data.

struct OneDnnConv2DBackpropInput::Cached {
  struct Piece {
    int64_t image = 0, images = 0;
    dnnl::convolution_backward_data::primitive_desc pd;
    dnnl::convolution_backward_data primitive;
  };
  OneDnnBackwardGeometry geometry;
  int threads = 0;
  std::vector<Piece> pieces;
};

OneDnnConv2DBackpropInput::OneDnnConv2DBackpropInput() = default;
OneDnnConv2DBackpropInput::~OneDnnConv2DBackpropInput() = default;

absl::Status OneDnnConv2DBackpropInput::Run(const OneDnnBackwardGeometry& g, const float* filter,
                                            const float* out_grad, float* in_grad,
                                            const Eigen::ThreadPoolDevice& pool) {
  const int threads = ThreadsFor(g, pool);
  std::shared_ptr<const Cached> cached;
  {
    absl::MutexLock lock(&mu_);
    cached = cached_;
  }
  dnnl::engine& engine = Engine();
  // The filter in each layout the pieces want (pieces of equal image counts
  // share one).
  std::vector<dnnl::memory> weights;
  std::vector<int> weights_of;
  try {
    OneOpenMpThread();
    if (cached == nullptr || !(cached->geometry == g) || cached->threads != threads) {
      auto next = std::make_shared<Cached>();
      next->geometry = g;
      next->threads = threads;
      for (const auto& [image, images] : SplitByImage(g, threads)) {
        Cached::Piece p;
        p.image = image;
        p.images = images;
        const dnnl::convolution_backward_data::desc desc(
            dnnl::algorithm::convolution_direct, InputDesc(g, images), AnyWeightsDesc(g),
            OutputDesc(g, images), Strides(g), PadsBefore(g), PadsAfter(g));
        p.pd = dnnl::convolution_backward_data::primitive_desc(desc, UserScratchpad(), engine,
                                                               ForwardHint(g, images));
        p.primitive = dnnl::convolution_backward_data(p.pd);
        next->pieces.push_back(std::move(p));
      }
      cached = std::move(next);
      absl::MutexLock lock(&mu_);
      cached_ = cached;
    }
    dnnl::memory user(UserWeightsDesc(g), engine, const_cast<float*>(filter));
    dnnl::stream stream(engine);
    for (const Cached::Piece& p : cached->pieces) {
      const dnnl::memory::desc want = p.pd.weights_desc();
      size_t i = 0;
      while (i < weights.size() && weights[i].get_desc() != want) ++i;
      if (i == weights.size()) {
        if (want == user.get_desc()) {
          weights.push_back(user);
        } else {
          dnnl::memory reordered(want, engine);
          dnnl::reorder(user, reordered).execute(stream, user, reordered);
          weights.push_back(reordered);
        }
      }
      weights_of.push_back(static_cast<int>(i));
    }
    stream.wait();
  } catch (const dnnl::error& e) {
    return Failure(e);
  }
  const int64_t in_image = g.in_rows * g.in_cols * g.in_depth;
  const int64_t out_image = g.out_rows * g.out_cols * g.out_depth;
  return RunAll(pool, static_cast<int>(cached->pieces.size()), [&](int i) {
    const Cached::Piece& p = cached->pieces[i];
    thread_local dnnl::stream stream(engine);
    char* scratch = ThreadScratch(Aligned(p.pd.scratchpad_desc().get_size()));
    dnnl::memory diff_dst(OutputDesc(g, p.images), engine,
                          const_cast<float*>(out_grad) + p.image * out_image);
    dnnl::memory diff_src(InputDesc(g, p.images), engine, in_grad + p.image * in_image);
    p.primitive.execute(stream,
                        {{DNNL_ARG_DIFF_DST, diff_dst},
                         {DNNL_ARG_WEIGHTS, weights[weights_of[i]]},
                         {DNNL_ARG_DIFF_SRC, diff_src},
                         {DNNL_ARG_SCRATCHPAD, ScratchMemory(scratch, p.pd.scratchpad_desc(), 0)}});
    stream.wait();
  });
}

// ---------------------------------------------------------------------------
// Backward weights.

struct OneDnnConv2DBackpropFilter::Cached {
  struct Piece {
    int64_t image = 0, images = 0;
    dnnl::convolution_backward_weights::primitive_desc pd;
    dnnl::convolution_backward_weights primitive;
    // The primitive's diff weights into TensorFlow's layout, when it writes
    // another.
    bool reorder_out = false;
    dnnl::reorder to_user;
  };
  OneDnnBackwardGeometry geometry;
  int threads = 0;
  std::vector<Piece> pieces;
};

OneDnnConv2DBackpropFilter::OneDnnConv2DBackpropFilter() = default;
OneDnnConv2DBackpropFilter::~OneDnnConv2DBackpropFilter() = default;

absl::Status OneDnnConv2DBackpropFilter::Run(const OneDnnBackwardGeometry& g, const float* in,
                                             const float* out_grad, float* filter_grad,
                                             const Eigen::ThreadPoolDevice& pool) {
  const int threads = ThreadsFor(g, pool);
  std::shared_ptr<const Cached> cached;
  {
    absl::MutexLock lock(&mu_);
    cached = cached_;
  }
  dnnl::engine& engine = Engine();
  const dnnl::memory::desc user_desc = UserWeightsDesc(g);
  try {
    OneOpenMpThread();
    if (cached == nullptr || !(cached->geometry == g) || cached->threads != threads) {
      auto next = std::make_shared<Cached>();
      next->geometry = g;
      next->threads = threads;
      for (const auto& [image, images] : SplitByImage(g, threads)) {
        Cached::Piece p;
        p.image = image;
        p.images = images;
        const dnnl::convolution_backward_weights::desc desc(
            dnnl::algorithm::convolution_direct, InputDesc(g, images), AnyWeightsDesc(g),
            OutputDesc(g, images), Strides(g), PadsBefore(g), PadsAfter(g));
        p.pd = dnnl::convolution_backward_weights::primitive_desc(desc, UserScratchpad(), engine,
                                                                  ForwardHint(g, images));
        p.primitive = dnnl::convolution_backward_weights(p.pd);
        if (p.pd.diff_weights_desc() != user_desc) {
          p.reorder_out = true;
          p.to_user = dnnl::reorder(
              dnnl::reorder::primitive_desc(engine, p.pd.diff_weights_desc(), engine, user_desc));
        }
        next->pieces.push_back(std::move(p));
      }
      cached = std::move(next);
      absl::MutexLock lock(&mu_);
      cached_ = cached;
    }
  } catch (const dnnl::error& e) {
    return Failure(e);
  }
  const int n = static_cast<int>(cached->pieces.size());
  const int64_t filter_size = g.filter_rows * g.filter_cols * g.in_depth * g.out_depth;
  // Piece 0 writes filter_grad, the others a partial each, added after.
  std::vector<float> partials(static_cast<size_t>(n - 1) * filter_size);
  const int64_t in_image = g.in_rows * g.in_cols * g.in_depth;
  const int64_t out_image = g.out_rows * g.out_cols * g.out_depth;
  absl::Status status = RunAll(pool, n, [&](int i) {
    const Cached::Piece& p = cached->pieces[i];
    thread_local dnnl::stream stream(engine);
    // The primitive's scratchpad, then (reordered after) its diff weights.
    const size_t pad_bytes = Aligned(p.pd.scratchpad_desc().get_size());
    const size_t weights_bytes = p.reorder_out ? Aligned(p.pd.diff_weights_desc().get_size()) : 0;
    char* scratch = ThreadScratch(pad_bytes + weights_bytes);
    float* result = i == 0 ? filter_grad : partials.data() + (i - 1) * filter_size;
    dnnl::memory user(user_desc, engine, result);
    dnnl::memory diff_weights =
        p.reorder_out ? ScratchMemory(scratch, p.pd.diff_weights_desc(), pad_bytes) : user;
    dnnl::memory src(InputDesc(g, p.images), engine, const_cast<float*>(in) + p.image * in_image);
    dnnl::memory diff_dst(OutputDesc(g, p.images), engine,
                          const_cast<float*>(out_grad) + p.image * out_image);
    p.primitive.execute(stream,
                        {{DNNL_ARG_SRC, src},
                         {DNNL_ARG_DIFF_DST, diff_dst},
                         {DNNL_ARG_DIFF_WEIGHTS, diff_weights},
                         {DNNL_ARG_SCRATCHPAD, ScratchMemory(scratch, p.pd.scratchpad_desc(), 0)}});
    if (p.reorder_out) p.to_user.execute(stream, diff_weights, user);
    stream.wait();
  });
  if (!status.ok()) return status;
  for (int i = 1; i < n; ++i) {
    const float* partial = partials.data() + (i - 1) * filter_size;
    for (int64_t j = 0; j < filter_size; ++j) filter_grad[j] += partial[j];
  }
  return absl::OkStatus();
}

}  // namespace cpu
}  // namespace graphrun
