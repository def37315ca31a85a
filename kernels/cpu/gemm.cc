#include "kernels/cpu/gemm.h"

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "dnnl.h"
#include "graph/tensor_shape.h"
#include "graph/types.h"
#include "kernels/cpu/onednn_threads.h"
#include "kernels/cpu/pieces.h"
#include "kernels/cpu/skinny_gemm.h"
#include "kernels/eigen.h"

namespace graphrun {
namespace {

template <typename T>
using ConstMatrix = Eigen::TensorMap<Eigen::Tensor<const T, 2, Eigen::RowMajor>>;
template <typename T>
using Matrix = Eigen::TensorMap<Eigen::Tensor<T, 2, Eigen::RowMajor>>;

template <typename T, typename Device>
void Contract(const Device& d, bool transpose_a, bool transpose_b, int64_t m,
              int64_t n, int64_t k, const T* a, const T* b, T* c) {
  ConstMatrix<T> a_map(a, transpose_a ? k : m, transpose_a ? m : k);
  ConstMatrix<T> b_map(b, transpose_b ? n : k, transpose_b ? k : n);
  Matrix<T> c_map(c, m, n);
  // The contracted dimensions are runtime values, so one instantiation per
  // (type, device) covers all four transpose combinations.
  Eigen::array<Eigen::IndexPair<Eigen::Index>, 1> dims;
  dims[0] = Eigen::IndexPair<Eigen::Index>(transpose_a ? 0 : 1,
                                           transpose_b ? 1 : 0);
  c_map.device(d) = a_map.contract(b_map, dims);
}

bool UseThreads(const Eigen::ThreadPoolDevice* device, int64_t m, int64_t n,
                int64_t k) {
  return device != nullptr && device->numThreads() > 1 &&
         static_cast<double>(m) * static_cast<double>(n) *
                 static_cast<double>(k) >
             kGemmThreadedMinWork;
}

// Which library multiplies float matrices, from GRAPHRUN_MATMUL_LIBRARY:
// "eigen", "onednn", or unset / "auto" (oneDNN). Read once.
bool FloatGemmOnOneDnn() {
  static const bool onednn = [] {
    const char* v = std::getenv("GRAPHRUN_MATMUL_LIBRARY");
    if (v != nullptr && std::strcmp(v, "eigen") != 0 && std::strcmp(v, "onednn") != 0 &&
        std::strcmp(v, "auto") != 0) {
      std::fprintf(stderr,
                   "graphrun: GRAPHRUN_MATMUL_LIBRARY='%s' is not eigen, onednn or auto; "
                   "using oneDNN\n",
                   v);
    }
    return v == nullptr || std::strcmp(v, "eigen") != 0;
  }();
  return onednn;
}

// One single-threaded dnnl_sgemm (onednn_threads.h) on rows [m0, m0 + mc)
// and columns [n0, n0 + nc) of C.
bool OneDnnGemmPiece(bool transpose_a, bool transpose_b, int64_t m, int64_t n,
                     int64_t k, const float* a, const float* b, float* c,
                     int64_t m0, int64_t mc, int64_t n0, int64_t nc) {
  cpu::OneOpenMpThread();
  const int64_t lda = transpose_a ? m : k;
  const int64_t ldb = transpose_b ? k : n;
  const float* ap = a + (transpose_a ? m0 : m0 * k);
  const float* bp = b + (transpose_b ? n0 * k : n0);
  return dnnl_sgemm(transpose_a ? 'T' : 'N', transpose_b ? 'T' : 'N', mc, nc,
                    k, 1.0f, ap, lda, bp, ldb, 0.0f, c + m0 * n + n0,
                    n) == dnnl_success;
}

// C = op(A) op(B) on oneDNN: one piece on the calling thread when the
// product is small, else one piece per pool thread, split by columns of C
// (each thread then reads a part of B, which is what limits small-m
// products such as a dense layer at batch 2) or, with few columns, by
// rows. Returns false when oneDNN refused (the caller falls back).
bool OneDnnGemm(const Eigen::ThreadPoolDevice* device, bool transpose_a,
                bool transpose_b, int64_t m, int64_t n, int64_t k,
                const float* a, const float* b, float* c,
                const GemmEpilogue* epilogue) {
  // dnnl_sgemm takes 64-bit sizes but its kernels index with int.
  if (m > INT32_MAX || n > INT32_MAX || k > INT32_MAX) return false;
  const int threads = UseThreads(device, m, n, k) ? device->numThreads() : 1;
  struct Range {
    int64_t m0, mc, n0, nc;
  };
  absl::InlinedVector<Range, 8> pieces;
  if (threads > 1 && n >= 32 * threads) {
    // Columns in multiples of 16 (one AVX-512 vector).
    const int64_t step = (n / threads + 15) / 16 * 16;
    for (int64_t n0 = 0; n0 < n; n0 += step) {
      pieces.push_back({0, m, n0, std::min(step, n - n0)});
    }
  } else if (threads > 1 && m >= 8 * threads) {
    const int64_t step = (m + threads - 1) / threads;
    for (int64_t m0 = 0; m0 < m; m0 += step) {
      pieces.push_back({m0, std::min(step, m - m0), 0, n});
    }
  } else {
    pieces.push_back({0, m, 0, n});
  }
  const int count = static_cast<int>(pieces.size());
  std::atomic<bool> ok{true};
  auto run = [&](int i) {
    const Range& r = pieces[i];
    if (!OneDnnGemmPiece(transpose_a, transpose_b, m, n, k, a, b, c, r.m0,
                         r.mc, r.n0, r.nc)) {
      ok.store(false, std::memory_order_relaxed);
    } else if (epilogue != nullptr) {
      // While the block is still in this core's cache.
      (*epilogue)(r.m0, r.mc, r.n0, r.nc);
    }
  };
  if (count == 1) {
    run(0);
  } else {
    cpu::RunPieces(*device, count, run);
  }
  return ok.load();
}

// Without an epilogue, GemmNative's callers pass nullptr; with one it is run
// once over every block of C after the block is final.
template <typename T>
void GemmNative(const Eigen::ThreadPoolDevice* device, bool transpose_a,
                bool transpose_b, int64_t m, int64_t n, int64_t k, const T* a,
                const T* b, T* c, const GemmEpilogue* epilogue = nullptr) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    std::fill(c, c + m * n, T(0));
    if (epilogue != nullptr) (*epilogue)(0, m, 0, n);
    return;
  }
  if constexpr (std::is_same_v<T, float>) {
    // A few rows against big weights (a dense layer at a small batch):
    // reading b is the cost, and streaming it once beats a library GEMM
    // that packs it first (skinny_gemm.h).
    if (FloatGemmOnOneDnn() && !transpose_a && !transpose_b &&
        cpu::SkinnyWorthIt(m, k, n, 1)) {
      cpu::SkinnyTap tap;
      tap.weights = b;
      for (int64_t p = 0; p < m; ++p) tap.rows.emplace_back(static_cast<int>(p), a + p * k);
      cpu::SkinnyGemm(device, {&tap, 1}, k, n, m, c);
      if (epilogue != nullptr) (*epilogue)(0, m, 0, n);
      return;
    }
    if (FloatGemmOnOneDnn() &&
        OneDnnGemm(device, transpose_a, transpose_b, m, n, k, a, b, c, epilogue)) {
      return;
    }
  }
  if (UseThreads(device, m, n, k)) {
    Contract(*device, transpose_a, transpose_b, m, n, k, a, b, c);
  } else {
    Contract(Eigen::DefaultDevice(), transpose_a, transpose_b, m, n, k, a, b,
             c);
  }
  if constexpr (std::is_same_v<T, float>) {
    if (epilogue != nullptr) (*epilogue)(0, m, 0, n);
  }
}

// Converts n values with Eigen (on the pool when the matrix is big).
template <typename To, typename From>
void Convert(const Eigen::ThreadPoolDevice* device, bool threaded,
             const From* in, int64_t n, To* out) {
  Eigen::TensorMap<Eigen::Tensor<const From, 1, Eigen::RowMajor>> src(in, n);
  Eigen::TensorMap<Eigen::Tensor<To, 1, Eigen::RowMajor>> dst(out, n);
  if (threaded) {
    dst.device(*device) = src.template cast<To>();
  } else {
    dst = src.template cast<To>();
  }
}

// half / bfloat16: widen both operands to float, multiply, round once.
template <typename T>
void GemmViaFloat(const Eigen::ThreadPoolDevice* device, bool transpose_a,
                  bool transpose_b, int64_t m, int64_t n, int64_t k,
                  const T* a, const T* b, T* c) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    std::fill(c, c + m * n, T(0.0f));
    return;
  }
  const bool threaded = UseThreads(device, m, n, k);
  std::unique_ptr<float[]> a32(new float[m * k]);
  std::unique_ptr<float[]> b32(new float[k * n]);
  std::unique_ptr<float[]> c32(new float[m * n]);
  Convert(device, threaded, a, m * k, a32.get());
  Convert(device, threaded, b, k * n, b32.get());
  GemmNative<float>(device, transpose_a, transpose_b, m, n, k, a32.get(),
                    b32.get(), c32.get());
  Convert(device, threaded, c32.get(), m * n, c);
}

}  // namespace

template <typename T>
void Gemm(const Eigen::ThreadPoolDevice* device, bool transpose_a,
          bool transpose_b, int64_t m, int64_t n, int64_t k, const T* a,
          const T* b, T* c) {
  if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>) {
    GemmViaFloat(device, transpose_a, transpose_b, m, n, k, a, b, c);
  } else {
    GemmNative(device, transpose_a, transpose_b, m, n, k, a, b, c);
  }
}

void GemmWithEpilogue(const Eigen::ThreadPoolDevice* device, bool transpose_a,
                      bool transpose_b, int64_t m, int64_t n, int64_t k, const float* a,
                      const float* b, float* c, GemmEpilogue epilogue) {
  GemmNative<float>(device, transpose_a, transpose_b, m, n, k, a, b, c, &epilogue);
}

absl::StatusOr<MatMulBatch> BroadcastMatMulBatch(
    absl::Span<const int64_t> a_dims, absl::Span<const int64_t> b_dims) {
  const int ar = static_cast<int>(a_dims.size());
  const int br = static_cast<int>(b_dims.size());
  const int rank = std::max(ar, br);
  // Batch dims right-aligned and padded with 1s.
  std::vector<int64_t> ad(rank, 1), bd(rank, 1);
  std::copy(a_dims.begin(), a_dims.end(), ad.begin() + (rank - ar));
  std::copy(b_dims.begin(), b_dims.end(), bd.begin() + (rank - br));
  MatMulBatch out;
  out.dims.resize(rank);
  TensorShape shape;
  for (int i = 0; i < rank; ++i) {
    if (ad[i] != bd[i] && ad[i] != 1 && bd[i] != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "batch dimensions [", absl::StrJoin(a_dims, ","), "] and [",
          absl::StrJoin(b_dims, ","), "] do not broadcast"));
    }
    out.dims[i] = ad[i] == 1 ? bd[i] : ad[i];
    // [2^30,1] with [1,2^30] batch dims broadcast past kMaxElements.
    absl::Status s = shape.AddDimWithStatus(out.dims[i]);
    if (!s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "broadcasting batch dimensions [", absl::StrJoin(a_dims, ","),
          "] and [", absl::StrJoin(b_dims, ","), "]: ", s.message()));
    }
  }
  // Strides in matrices; 0 along a broadcast dimension.
  std::vector<int64_t> as(rank), bs(rank);
  int64_t astride = 1, bstride = 1;
  for (int i = rank - 1; i >= 0; --i) {
    as[i] = ad[i] == 1 ? 0 : astride;
    bs[i] = bd[i] == 1 ? 0 : bstride;
    astride *= ad[i];
    bstride *= bd[i];
  }
  const int64_t batch = shape.num_elements();
  out.a_index.assign(batch, 0);
  out.b_index.assign(batch, 0);
  std::vector<int64_t> pos(rank, 0);
  int64_t ai = 0, bi = 0;
  for (int64_t i = 0; i < batch; ++i) {
    out.a_index[i] = ai;
    out.b_index[i] = bi;
    for (int d = rank - 1; d >= 0; --d) {
      ai += as[d];
      bi += bs[d];
      if (++pos[d] < out.dims[d]) break;
      ai -= pos[d] * as[d];
      bi -= pos[d] * bs[d];
      pos[d] = 0;
    }
  }
  return out;
}

template <typename T>
void BatchGemm(const Eigen::ThreadPoolDevice* device, bool transpose_a,
               bool transpose_b, int64_t m, int64_t n, int64_t k, const T* a,
               const T* b, const MatMulBatch& batch, T* c) {
  const int64_t count = batch.size();
  auto multiply = [&](int64_t i, const Eigen::ThreadPoolDevice* d) {
    Gemm<T>(d, transpose_a, transpose_b, m, n, k, a + batch.a_index[i] * m * k,
            b + batch.b_index[i] * k * n, c + i * m * n);
  };
  const double work = static_cast<double>(m) * n * k;
  if (device != nullptr && device->numThreads() > 1 && count > 1 &&
      work <= kGemmThreadedMinWork && work * count > kGemmThreadedMinWork) {
    // Many small products: one single-threaded Gemm per task.
    const Eigen::TensorOpCost cost(
        static_cast<double>(m * k + k * n) * sizeof(T),
        static_cast<double>(m * n) * sizeof(T), 2 * work);
    device->parallelFor(count, cost,
                        [&](Eigen::Index first, Eigen::Index last) {
                          for (Eigen::Index i = first; i < last; ++i) {
                            multiply(i, nullptr);
                          }
                        });
  } else {
    for (int64_t i = 0; i < count; ++i) multiply(i, device);
  }
}

#define GR_INSTANTIATE_GEMM(T)                                             \
  template void Gemm<T>(const Eigen::ThreadPoolDevice*, bool, bool,        \
                        int64_t, int64_t, int64_t, const T*, const T*, T*); \
  template void BatchGemm<T>(const Eigen::ThreadPoolDevice*, bool, bool,   \
                             int64_t, int64_t, int64_t, const T*, const T*, \
                             const MatMulBatch&, T*)
GR_INSTANTIATE_GEMM(float);
GR_INSTANTIATE_GEMM(double);
GR_INSTANTIATE_GEMM(half);
GR_INSTANTIATE_GEMM(bfloat16);
GR_INSTANTIATE_GEMM(int16_t);
GR_INSTANTIATE_GEMM(int32_t);
GR_INSTANTIATE_GEMM(int64_t);
GR_INSTANTIATE_GEMM(complex64);
GR_INSTANTIATE_GEMM(complex128);
#undef GR_INSTANTIATE_GEMM

}  // namespace graphrun
