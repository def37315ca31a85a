#include "kernels/cpu/conv_onednn.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
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
  static dnnl::engine* const engine =
      new dnnl::engine(dnnl::engine::kind::cpu, 0);
  return *engine;
}

}  // namespace

Conv2DLibrary Conv2DLibraryFromEnv() {
  const char* v = std::getenv("GRAPHRUN_CONV2D_LIBRARY");
  if (v == nullptr) return Conv2DLibrary::kAuto;
  if (std::strcmp(v, "onednn") == 0) return Conv2DLibrary::kOneDnn;
  if (std::strcmp(v, "eigen") == 0) return Conv2DLibrary::kEigen;
  if (std::strcmp(v, "auto") != 0) {
    // Said once per process, however many convolutions read it.
    static std::atomic<bool> warned{false};
    if (!warned.exchange(true)) {
      std::fprintf(stderr,
                   "graphrun: GRAPHRUN_CONV2D_LIBRARY='%s' is not eigen, onednn or auto; "
                   "choosing by size\n",
                   v);
    }
  }
  return Conv2DLibrary::kAuto;
}

ConvAlgorithm ConvAlgorithmFromEnv() {
  const char* v = std::getenv("GRAPHRUN_CONV2D_ALGORITHM");
  if (v == nullptr) return ConvAlgorithm::kAuto;
  if (std::strcmp(v, "direct") == 0) return ConvAlgorithm::kDirect;
  if (std::strcmp(v, "winograd") == 0) return ConvAlgorithm::kWinograd;
  if (std::strcmp(v, "auto") != 0) {
    static std::atomic<bool> warned{false};
    if (!warned.exchange(true)) {
      std::fprintf(stderr,
                   "graphrun: GRAPHRUN_CONV2D_ALGORITHM='%s' is not direct, winograd or auto; "
                   "choosing by size\n",
                   v);
    }
  }
  return ConvAlgorithm::kAuto;
}

bool OneDnnHasWinograd() {
  static const bool has = [] {
    try {
      const dnnl::memory::desc src({1, 16, 8, 8}, Dt::f32, Tag::any);
      const dnnl::memory::desc weights({16, 16, 3, 3}, Dt::f32, Tag::any);
      const dnnl::convolution_forward::desc desc(
          dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_winograd, src, weights,
          dnnl::memory::desc(), src, {1, 1}, {1, 1}, {1, 1});
      dnnl::convolution_forward::primitive_desc pd(desc, Engine());
      return true;
    } catch (const dnnl::error&) {
      return false;
    }
  }();
  return has;
}

bool OneDnnConvGeometry::operator==(const OneDnnConvGeometry& o) const {
  return batch == o.batch && in_rows == o.in_rows && in_cols == o.in_cols &&
         in_depth == o.in_depth && filter_rows == o.filter_rows &&
         filter_cols == o.filter_cols && out_depth == o.out_depth &&
         stride_rows == o.stride_rows && stride_cols == o.stride_cols &&
         pad_top == o.pad_top && pad_bottom == o.pad_bottom &&
         pad_left == o.pad_left && pad_right == o.pad_right &&
         out_rows == o.out_rows && out_cols == o.out_cols && multiplier == o.multiplier;
}

// One piece: images [image, + piece.batch), output rows [out_row, +
// piece.out_rows) from input rows [in_row, + piece.in_rows), output
// channels [out_channel, + piece.out_depth).
struct Piece {
  OneDnnConvGeometry geometry;
  int64_t image = 0, out_row = 0, in_row = 0, out_channel = 0;
  dnnl::convolution_forward::primitive_desc pd;
  dnnl::convolution_forward primitive;
  // The piece's input and output as they lie in memory (NHWC); the
  // primitive's own descs differ from these under Winograd.
  dnnl::memory::desc src_nhwc, dst_nhwc;
  int weights = 0;  // index into Cached::weights
  // Winograd: the primitive takes and gives blocked layouts; these reorder
  // the piece's NHWC input into pd.src_desc() and its output back.
  bool winograd = false;
  dnnl::reorder to_blocked, from_blocked;
};

struct OneDnnConv2D::Cached {
  OneDnnConvGeometry asked;     // the convolution as Run was given it
  OneDnnConvGeometry geometry;  // as run: its filter cropped (CropToInput)
  int threads = 0;
  // The primitives add a bias and apply epilogue.activation (fused).
  bool fused = false;
  BiasActivation epilogue;
  std::vector<Piece> pieces;
  Tensor filter;                      // keeps the filter's buffer alive
  std::vector<dnnl::memory> weights;  // the filter in each layout wanted
};

namespace {

bool SameEpilogue(const OneDnnConv2D::Cached& c, const OneDnnConvBias* bias) {
  if (bias == nullptr) return !c.fused;
  return c.fused && c.epilogue.activation == bias->epilogue.activation &&
         c.epilogue.leakyrelu_alpha == bias->epilogue.leakyrelu_alpha;
}

// The activation as oneDNN's eltwise post-op (none for kNone).
dnnl::post_ops PostOps(const BiasActivation& e) {
  dnnl::post_ops ops;
  auto add = [&ops](dnnl::algorithm a, float alpha, float beta) {
    ops.append_eltwise(1.f, a, alpha, beta);
  };
  switch (e.activation) {
    case FusedActivation::kNone:
      break;
    case FusedActivation::kRelu:
      add(dnnl::algorithm::eltwise_relu, 0.f, 0.f);
      break;
    case FusedActivation::kRelu6:
      add(dnnl::algorithm::eltwise_clip, 0.f, 6.f);
      break;
    case FusedActivation::kElu:
      add(dnnl::algorithm::eltwise_elu, 1.f, 0.f);
      break;
    case FusedActivation::kLeakyRelu:
      // relu's alpha is the slope below zero.
      add(dnnl::algorithm::eltwise_relu, e.leakyrelu_alpha, 0.f);
      break;
    case FusedActivation::kTanh:
      add(dnnl::algorithm::eltwise_tanh, 0.f, 0.f);
      break;
    case FusedActivation::kSigmoid:
      add(dnnl::algorithm::eltwise_logistic, 0.f, 0.f);
      break;
  }
  return ops;
}

// Output pixels per thread below which Split cuts output channels: a
// convolution over a few pixels (a 1x1 on a 5x5 map) is a small-m GEMM
// whose cost is reading the filter, which a cut by channels shares out.
constexpr int64_t kFewPixelsPerThread = 64;

// Floating-point operations below which a piece is not worth a thread
// (about 30 us of one core's work on an AVX-512 machine): the text CNN's
// 5 MFLOP Conv1D took 0.06 ms cut in two and 0.03 whole there, and the
// model's step went 0.079 -> 0.044 ms when this went from 1e6 to 5e6.
constexpr double kMinFlopsPerPiece = 5e6;
// Filter bytes below which a piece is not worth a thread (about 10 us of
// reading from memory).
constexpr double kMinFilterBytesPerPiece = 128 * 1024;

// Splits `g` into at most `threads` pieces: by output channels (in
// multiples of 16, one AVX-512 vector) when there are few output pixels
// and enough channels, else by image when there are enough images, else
// each image by output rows.
std::vector<Piece> Split(const OneDnnConvGeometry& g, int threads) {
  std::vector<Piece> pieces;
  const int64_t pixels = g.batch * g.out_rows * g.out_cols;
  // (A depthwise filter is small whatever the pixels: never cut by channels.)
  if (threads > 1 && pixels < kFewPixelsPerThread * threads && g.multiplier == 0 &&
      g.out_depth >= 32 * threads) {
    const int64_t step = (g.out_depth / threads + 15) / 16 * 16;
    for (int64_t c = 0; c < g.out_depth; c += step) {
      Piece p;
      p.geometry = g;
      p.geometry.out_depth = std::min(step, g.out_depth - c);
      p.out_channel = c;
      pieces.push_back(p);
    }
    return pieces;
  }
  if (g.batch >= threads || g.out_rows < 2) {
    const int64_t n = std::min<int64_t>(threads, g.batch);
    for (int64_t i = 0, image = 0; i < n; ++i) {
      Piece p;
      p.geometry = g;
      p.geometry.batch = g.batch / n + (i < g.batch % n ? 1 : 0);
      p.image = image;
      image += p.geometry.batch;
      pieces.push_back(p);
    }
    return pieces;
  }
  const int64_t blocks =
      std::min<int64_t>((threads + g.batch - 1) / g.batch, g.out_rows);
  for (int64_t image = 0; image < g.batch; ++image) {
    for (int64_t i = 0, row = 0; i < blocks; ++i) {
      Piece p;
      p.geometry = g;
      p.geometry.batch = 1;
      p.image = image;
      p.out_row = row;
      p.geometry.out_rows = g.out_rows / blocks + (i < g.out_rows % blocks);
      row += p.geometry.out_rows;
      // Input rows the piece's windows touch, the rest padding.
      const int64_t first = p.out_row * g.stride_rows - g.pad_top;
      const int64_t end = (p.out_row + p.geometry.out_rows - 1) *
                              g.stride_rows - g.pad_top + g.filter_rows;
      p.in_row = std::max<int64_t>(0, first);
      p.geometry.in_rows = std::min(g.in_rows, end) - p.in_row;
      p.geometry.pad_top = p.in_row - first;
      p.geometry.pad_bottom = std::max<int64_t>(0, end - g.in_rows);
      pieces.push_back(p);
    }
  }
  return pieces;
}

// Where a map is smaller than the window (a 3x3 over a 1x1 map, the last
// stage of a CNN on small images), some of the filter's taps only ever
// meet padding. Returns `g` with the filter cut to the taps that meet the
// input, and the first row and column kept. Along one dimension tap k
// meets input row o * stride - pad_before + k for some output row o; those
// taps form the range [lo, hi] below, and the padding shrinks with them.
OneDnnConvGeometry CropToInput(const OneDnnConvGeometry& g, int64_t* row0, int64_t* col0) {
  OneDnnConvGeometry c = g;
  auto crop = [](int64_t in, int64_t stride, int64_t out, int64_t* filter, int64_t* pad_before,
                 int64_t* pad_after, int64_t* first) {
    *first = 0;
    const int64_t lo = std::max<int64_t>(0, *pad_before - (out - 1) * stride);
    const int64_t hi = std::min<int64_t>(*filter - 1, in - 1 + *pad_before);
    if (in <= 0 || out <= 0 || hi < lo || (lo == 0 && hi == *filter - 1)) return;
    *first = lo;
    *filter = hi - lo + 1;
    *pad_before -= lo;
    *pad_after = std::max<int64_t>(0, (out - 1) * stride + *filter - in - *pad_before);
  };
  crop(g.in_rows, g.stride_rows, g.out_rows, &c.filter_rows, &c.pad_top, &c.pad_bottom, row0);
  crop(g.in_cols, g.stride_cols, g.out_cols, &c.filter_cols, &c.pad_left, &c.pad_right, col0);
  return c;
}

// Whether a piece asks oneDNN for Winograd first. Measured here, one
// piece on one core, Winograd with both reorders against the direct
// convolution in NHWC: 0.51-0.66x at depths 32-128 on maps of 12x12 to
// 112x112 (0.78-0.80x for 32 channels at 64x64 and 96x96), but 1.1-1.4x
// with 16 channels and 1.3-1.6x on 6x6 and 3x3 maps.
// Pieces cut by output channels never do: their filter is a strided view
// of the whole one, which oneDNN's Winograd weights reorder does not take.
bool TryWinograd(const OneDnnConvGeometry& pg, const OneDnnConvGeometry& g,
                 ConvAlgorithm algorithm) {
  if (algorithm == ConvAlgorithm::kDirect || pg.out_depth != g.out_depth ||
      pg.multiplier > 0 || pg.filter_rows != 3 ||
      pg.filter_cols != 3 || pg.stride_rows != 1 || pg.stride_cols != 1) {
    return false;
  }
  if (algorithm == ConvAlgorithm::kWinograd) return true;
  return pg.in_depth >= 32 && pg.out_depth >= 32 && pg.out_rows >= 12 && pg.out_cols >= 12;
}

absl::StatusOr<std::shared_ptr<const OneDnnConv2D::Cached>> Build(
    const OneDnnConvGeometry& asked, int threads, ConvAlgorithm algorithm,
    const Tensor& filter, const OneDnnConvBias* bias, const OneDnnConv2D::Cached* previous) {
  auto next = std::make_shared<OneDnnConv2D::Cached>();
  int64_t row0 = 0, col0 = 0;
  const OneDnnConvGeometry g = CropToInput(asked, &row0, &col0);
  next->asked = asked;
  next->geometry = g;
  next->threads = threads;
  next->fused = bias != nullptr;
  if (bias != nullptr) next->epilogue = bias->epilogue;
  dnnl::engine& engine = Engine();
  if (previous != nullptr && previous->asked == asked &&
      previous->threads == threads && SameEpilogue(*previous, bias)) {
    next->pieces = previous->pieces;
  } else {
    next->pieces = Split(g, threads);
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    if (bias != nullptr) attr.set_post_ops(PostOps(bias->epilogue));
    for (Piece& p : next->pieces) {
      const OneDnnConvGeometry& pg = p.geometry;
      // oneDNN names dimensions N, C, H, W whatever the memory layout.
      dnnl::memory::desc src({pg.batch, pg.in_depth, pg.in_rows, pg.in_cols},
                             Dt::f32, Tag::nhwc);
      // Dense nhwc: with a strided destination (a piece's channels of the
      // whole output) oneDNN falls back to its reference kernel, so a
      // piece cut by channels writes a buffer of its own (RunPiece).
      dnnl::memory::desc dst(
          {pg.batch, pg.out_depth, pg.out_rows, pg.out_cols}, Dt::f32,
          Tag::nhwc);
      // Depthwise: in_depth groups of [multiplier, 1] filters.
      const dnnl::memory::desc weights =
          pg.multiplier > 0
              ? dnnl::memory::desc({pg.in_depth, pg.multiplier, 1, pg.filter_rows, pg.filter_cols},
                                   Dt::f32, Tag::any)
              : dnnl::memory::desc({pg.out_depth, pg.in_depth, pg.filter_rows, pg.filter_cols},
                                   Dt::f32, Tag::any);
      // A zero bias desc is a convolution without bias.
      const dnnl::memory::desc bias_desc =
          bias != nullptr
              ? dnnl::memory::desc({pg.out_depth}, Dt::f32, Tag::x)
              : dnnl::memory::desc();
      p.src_nhwc = src;
      p.dst_nhwc = dst;
      if (TryWinograd(pg, g, algorithm)) {
        // Blocked layouts of oneDNN's choosing in and out.
        const dnnl::memory::desc any_src(src.dims(), Dt::f32, Tag::any);
        const dnnl::memory::desc any_dst(dst.dims(), Dt::f32, Tag::any);
        try {
          dnnl::convolution_forward::desc desc(
              dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_winograd, any_src,
              weights, bias_desc, any_dst, {pg.stride_rows, pg.stride_cols},
              {pg.pad_top, pg.pad_left}, {pg.pad_bottom, pg.pad_right});
          p.pd = dnnl::convolution_forward::primitive_desc(desc, attr, engine);
          dnnl::primitive_attr reorder_attr;
          reorder_attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
          const dnnl::reorder::primitive_desc in(engine, src, engine, p.pd.src_desc(),
                                                 reorder_attr);
          const dnnl::reorder::primitive_desc out(engine, p.pd.dst_desc(), engine, dst,
                                                  reorder_attr);
          if (in.scratchpad_desc().get_size() == 0 && out.scratchpad_desc().get_size() == 0) {
            p.to_blocked = dnnl::reorder(in);
            p.from_blocked = dnnl::reorder(out);
            p.winograd = true;
          }
        } catch (const dnnl::error& e) {
          // No Winograd for this piece (post-op, padding, ISA): direct.
          if (e.status != dnnl_unimplemented) throw;
        }
      }
      if (!p.winograd) {
        dnnl::convolution_forward::desc desc(
            dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src, weights,
            bias_desc, dst, {pg.stride_rows, pg.stride_cols}, {pg.pad_top, pg.pad_left},
            {pg.pad_bottom, pg.pad_right});
        p.pd = dnnl::convolution_forward::primitive_desc(desc, attr, engine);
      }
      p.primitive = dnnl::convolution_forward(p.pd);
    }
  }
  dnnl::stream stream(engine);
  std::vector<int64_t> weights_channel;  // first output channel of each
  for (Piece& p : next->pieces) {
    const OneDnnConvGeometry& pg = p.geometry;
    // TensorFlow's filter layout [rows, cols, in, out] is oneDNN's hwio;
    // the piece's output channels of it, within the taps kept.
    // A depthwise filter [rows, cols, in, multiplier] is goihw with one
    // input channel per group.
    const int64_t tap = g.multiplier > 0 ? g.out_depth : g.in_depth * g.out_depth;
    const dnnl::memory::desc user_desc =
        g.multiplier > 0
            ? dnnl::memory::desc({pg.in_depth, pg.multiplier, 1, pg.filter_rows, pg.filter_cols},
                                 Dt::f32,
                                 {g.multiplier, 1, 1, asked.filter_cols * tap, tap})
            : dnnl::memory::desc({pg.out_depth, pg.in_depth, pg.filter_rows, pg.filter_cols},
                                 Dt::f32, {1, g.out_depth, asked.filter_cols * tap, tap});
    dnnl::memory user(user_desc, engine,
                      const_cast<float*>(filter.flat<float>().data()) +
                          (row0 * asked.filter_cols + col0) * tap + p.out_channel);
    const dnnl::memory::desc want = p.pd.weights_desc();
    size_t i = 0;
    while (i < next->weights.size() &&
           (next->weights[i].get_desc() != want ||
            weights_channel[i] != p.out_channel)) {
      ++i;
    }
    if (i == next->weights.size()) {
      weights_channel.push_back(p.out_channel);
      if (want == user.get_desc()) {
        next->weights.push_back(user);
      } else {
        dnnl::memory reordered(want, engine);
        dnnl::reorder(user, reordered).execute(stream, user, reordered);
        next->weights.push_back(reordered);
      }
    }
    p.weights = static_cast<int>(i);
  }
  stream.wait();
  next->filter = filter;
  return std::shared_ptr<const OneDnnConv2D::Cached>(std::move(next));
}

void RunPiece(const OneDnnConv2D::Cached& c, const Piece& p, const float* in,
              const float* bias, float* out) {
  OneOpenMpThread();
  const OneDnnConvGeometry& g = c.geometry;
  dnnl::engine& engine = Engine();
  // One stream and one scratchpad per thread, kept (ThreadScratch).
  thread_local dnnl::stream stream(engine);
  // The primitive's scratchpad, then (Winograd) the blocked input and
  // output, each on a 64-byte boundary.
  auto aligned = [](size_t bytes) { return (bytes + 63) / 64 * 64; };
  const size_t pad_bytes = aligned(p.pd.scratchpad_desc().get_size());
  const size_t src_bytes = p.winograd ? aligned(p.pd.src_desc().get_size()) : 0;
  const size_t dst_bytes = p.winograd ? aligned(p.pd.dst_desc().get_size()) : 0;
  const size_t want = pad_bytes + src_bytes + dst_bytes;
  char* const scratch_buffer = want > 0 ? ThreadScratch(want) : nullptr;
  const float* src = in + ((p.image * g.in_rows + p.in_row) * g.in_cols) *
                              g.in_depth;
  float* dst = out +
               ((p.image * g.out_rows + p.out_row) * g.out_cols) * g.out_depth +
               p.out_channel;
  // A piece cut by channels: its own buffer, copied into the output's
  // rows after (few pixels, so little to copy).
  const int64_t piece_depth = p.geometry.out_depth;
  const bool by_channels = piece_depth != g.out_depth;
  thread_local std::vector<float> channels;
  if (by_channels) {
    channels.resize(p.geometry.batch * p.geometry.out_rows *
                    p.geometry.out_cols * piece_depth);
  }
  dnnl::memory src_mem(p.src_nhwc, engine, const_cast<float*>(src));
  dnnl::memory dst_mem(p.dst_nhwc, engine, by_channels ? channels.data() : dst);
  dnnl::memory scratch =
      scratch_buffer != nullptr
          ? dnnl::memory(p.pd.scratchpad_desc(), engine, scratch_buffer)
          : dnnl::memory(p.pd.scratchpad_desc(), engine);
  // Without a thread scratch (memory short), oneDNN allocates these.
  auto blocked = [&](const dnnl::memory::desc& desc, size_t offset) {
    return scratch_buffer != nullptr ? dnnl::memory(desc, engine, scratch_buffer + offset)
                                     : dnnl::memory(desc, engine);
  };
  dnnl::memory src_blocked, dst_blocked;
  if (p.winograd) {
    src_blocked = blocked(p.pd.src_desc(), pad_bytes);
    dst_blocked = blocked(p.pd.dst_desc(), pad_bytes + src_bytes);
    p.to_blocked.execute(stream, src_mem, src_blocked);
  }
  std::unordered_map<int, dnnl::memory> args = {
      {DNNL_ARG_SRC, p.winograd ? src_blocked : src_mem},
      {DNNL_ARG_WEIGHTS, c.weights[p.weights]},
      {DNNL_ARG_DST, p.winograd ? dst_blocked : dst_mem},
      {DNNL_ARG_SCRATCHPAD, scratch}};
  if (c.fused) {
    args[DNNL_ARG_BIAS] =
        dnnl::memory(p.pd.bias_desc(), engine,
                     const_cast<float*>(bias) + p.out_channel);
  }
  p.primitive.execute(stream, args);
  if (p.winograd) p.from_blocked.execute(stream, dst_blocked, dst_mem);
  stream.wait();
  if (by_channels) {
    const int64_t pixels =
        p.geometry.batch * p.geometry.out_rows * p.geometry.out_cols;
    for (int64_t i = 0; i < pixels; ++i) {
      std::memcpy(dst + i * g.out_depth, channels.data() + i * piece_depth,
                  piece_depth * sizeof(float));
    }
  }
}

}  // namespace

OneDnnConv2D::OneDnnConv2D() : algorithm_(ConvAlgorithmFromEnv()) {}
OneDnnConv2D::~OneDnnConv2D() = default;

OneDnnConv2D::Plan OneDnnConv2D::LastPlan() const {
  absl::MutexLock lock(&mu_);
  Plan plan;
  if (cached_ == nullptr) return plan;
  plan.pieces = static_cast<int>(cached_->pieces.size());
  for (const Piece& p : cached_->pieces) plan.winograd_pieces += p.winograd ? 1 : 0;
  return plan;
}

absl::Status OneDnnConv2D::Run(const OneDnnConvGeometry& g,
                               const Tensor& filter, const float* in,
                               float* out,
                               const Eigen::ThreadPoolDevice& pool,
                               const OneDnnConvBias* bias) {
  // A piece on another thread costs a wake-up of some microseconds: a
  // small convolution runs whole on the calling thread. Small is counted
  // in arithmetic and in filter bytes read (a few-pixel convolution is
  // the reading of its filter), over the taps that run.
  int64_t row0 = 0, col0 = 0;
  const OneDnnConvGeometry run = CropToInput(g, &row0, &col0);
  const double filter_values = static_cast<double>(run.out_depth) *
                              (run.multiplier > 0 ? 1 : run.in_depth) * run.filter_rows *
                              run.filter_cols;
  const double flops = 2.0 * run.batch * run.out_rows * run.out_cols * filter_values;
  const double work = std::max(flops / kMinFlopsPerPiece,
                               filter_values * sizeof(float) / kMinFilterBytesPerPiece);
  const int threads = std::max(1, std::min<int>(pool.numThreads(), static_cast<int>(work)));
  std::shared_ptr<const Cached> cached;
  {
    absl::MutexLock lock(&mu_);
    cached = cached_;
  }
  const bool hit = cached != nullptr && cached->asked == g &&
                   cached->threads == threads && SameEpilogue(*cached, bias) &&
                   cached->filter.SharesBufferWith(filter) &&
                   cached->filter.flat<float>().data() ==
                       filter.flat<float>().data();
  auto failure = [](const dnnl::error& e) {
    if (e.status == dnnl_unimplemented) {
      return absl::UnimplementedError(
          absl::StrCat("oneDNN has no convolution for this geometry: ",
                       e.what()));
    }
    return absl::InternalError(absl::StrCat("oneDNN convolution: ", e.what()));
  };
  try {
    OneOpenMpThread();
    if (!hit) {
      auto built = Build(g, threads, algorithm_, filter, bias, cached.get());
      if (!built.ok()) return built.status();
      cached = *std::move(built);
      absl::MutexLock lock(&mu_);
      cached_ = cached;
    }
  } catch (const dnnl::error& e) {
    return failure(e);
  }
  const std::vector<Piece>& pieces = cached->pieces;
  const float* b = bias != nullptr ? bias->bias : nullptr;
  // Pieces run on pool threads too: an exception must not leave them.
  absl::Mutex status_mu;
  absl::Status status;
  RunPieces(pool, static_cast<int>(pieces.size()), [&](int i) {
    try {
      RunPiece(*cached, pieces[i], in, b, out);
    } catch (const dnnl::error& e) {
      absl::MutexLock lock(&status_mu);
      if (status.ok()) status = failure(e);
    }
  });
  return status;
}

}  // namespace cpu
}  // namespace graphrun
