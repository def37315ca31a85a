#include "kernels/cpu/strided_copy.h"

#include <algorithm>
#include <vector>

#include "kernels/eigen.h"

namespace graphrun {
namespace cpu {
namespace {

// Work over this many elements is split over the intra-op pool.
constexpr double kParallelElements = 32 * 1024;

// Dims and strides with size-1 dims dropped and neighbours that walk
// memory as one dim merged, so the innermost run is as long as it can be.
struct Walk {
  std::vector<int64_t> dims;
  std::vector<int64_t> strides;

  Walk(absl::Span<const int64_t> d, absl::Span<const int64_t> s) {
    for (size_t i = 0; i < d.size(); ++i) {
      if (d[i] == 1) continue;
      if (!dims.empty() && strides.back() == s[i] * d[i]) {
        dims.back() *= d[i];
        strides.back() = s[i];
        continue;
      }
      dims.push_back(d[i]);
      strides.push_back(s[i]);
    }
  }
  int64_t Size() const {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    return n;
  }
  int64_t Inner() const { return dims.empty() ? 1 : dims.back(); }
  int64_t InnerStride() const { return strides.empty() ? 0 : strides.back(); }
  // Product of all dims but the innermost.
  int64_t Rows() const { return dims.empty() ? 1 : Size() / dims.back(); }
};

// Offsets of successive rows (all dims but the innermost) of a walk.
class RowCursor {
 public:
  RowCursor(const Walk& w, int64_t row) : w_(w) {
    const int outer = static_cast<int>(w.dims.size()) - 1;
    index_.assign(std::max(outer, 0), 0);
    for (int k = outer - 1; k >= 0; --k) {
      index_[k] = row % w.dims[k];
      row /= w.dims[k];
      offset_ += index_[k] * w.strides[k];
    }
  }
  int64_t offset() const { return offset_; }
  void Next() {
    for (int k = static_cast<int>(index_.size()) - 1; k >= 0; --k) {
      offset_ += w_.strides[k];
      if (++index_[k] < w_.dims[k]) return;
      offset_ -= index_[k] * w_.strides[k];
      index_[k] = 0;
    }
  }

 private:
  const Walk& w_;
  std::vector<int64_t> index_;
  int64_t offset_ = 0;
};

template <typename T>
void GatherRows(const T* in, const Walk& out_walk, int64_t begin, int64_t end,
                T* out) {
  const int64_t inner = out_walk.Inner();
  const int64_t stride = out_walk.InnerStride();
  RowCursor row(out_walk, begin);
  for (int64_t r = begin; r < end; ++r, row.Next()) {
    const T* src = in + row.offset();
    T* dst = out + r * inner;
    if (stride == 1) {
      std::copy_n(src, inner, dst);
    } else {
      for (int64_t i = 0; i < inner; ++i) dst[i] = src[i * stride];
    }
  }
}

template <typename T>
void SumRows(const T* in, const Walk& out_walk, const Walk& red,
             int64_t begin, int64_t end, T* out) {
  const int64_t inner = out_walk.Inner();
  const int64_t stride = out_walk.InnerStride();
  const int64_t red_inner = red.Inner();
  const int64_t red_stride = red.InnerStride();
  const int64_t red_rows = red.Rows();
  // Contiguous output runs against a strided reduction: add whole rows.
  const bool add_rows = stride == 1 && red_stride != 1;
  RowCursor row(out_walk, begin);
  for (int64_t r = begin; r < end; ++r, row.Next()) {
    const T* src = in + row.offset();
    T* dst = out + r * inner;
    if (add_rows) {
      Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>> acc(dst, inner);
      acc.setZero();
      RowCursor red_row(red, 0);
      for (int64_t rr = 0; rr < red_rows; ++rr, red_row.Next()) {
        for (int64_t j = 0; j < red_inner; ++j) {
          acc += Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>(
              src + red_row.offset() + j * red_stride, inner);
        }
      }
      continue;
    }
    for (int64_t i = 0; i < inner; ++i) {
      const T* base = src + i * stride;
      T sum = T(0);
      RowCursor red_row(red, 0);
      for (int64_t rr = 0; rr < red_rows; ++rr, red_row.Next()) {
        const T* p = base + red_row.offset();
        if (red_stride == 1) {
          sum += Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>(
                     p, red_inner)
                     .sum();
        } else {
          for (int64_t j = 0; j < red_inner; ++j) sum += p[j * red_stride];
        }
      }
      dst[i] = sum;
    }
  }
}

}  // namespace

template <typename T>
void StridedSum(const OpKernelContext* ctx, const T* in,
                absl::Span<const int64_t> dims,
                absl::Span<const int64_t> strides,
                absl::Span<const int64_t> reduce_dims,
                absl::Span<const int64_t> reduce_strides, T* out) {
  const Walk out_walk(dims, strides);
  const Walk red(reduce_dims, reduce_strides);
  const int64_t size = out_walk.Size();
  if (size == 0) return;
  const int64_t red_size = red.Size();
  if (red_size == 0) {
    std::fill_n(out, size, T(0));
    return;
  }
  const bool reduce = !reduce_dims.empty();
  auto run = [&](int64_t begin, int64_t end) {
    if (reduce) {
      SumRows(in, out_walk, red, begin, end, out);
    } else {
      GatherRows(in, out_walk, begin, end, out);
    }
  };
  const int64_t rows = out_walk.Rows();
  const double per_row =
      static_cast<double>(out_walk.Inner()) * static_cast<double>(red_size);
  if (ctx != nullptr && rows > 1 &&
      per_row * static_cast<double>(rows) > kParallelElements) {
    ctx->eigen_cpu_device().parallelFor(
        rows,
        Eigen::TensorOpCost(per_row * sizeof(T),
                            out_walk.Inner() * sizeof(T), per_row),
        [&](Eigen::Index begin, Eigen::Index end) { run(begin, end); });
  } else {
    run(0, rows);
  }
}

template <typename T>
void Permute(const OpKernelContext* ctx, const T* in,
             absl::Span<const int64_t> in_dims, absl::Span<const int> perm,
             T* out) {
  const int rank = static_cast<int>(in_dims.size());
  std::vector<int64_t> in_strides(rank, 1);
  for (int k = rank - 2; k >= 0; --k) {
    in_strides[k] = in_strides[k + 1] * in_dims[k + 1];
  }
  std::vector<int64_t> dims(rank), strides(rank);
  for (int k = 0; k < rank; ++k) {
    dims[k] = in_dims[perm[k]];
    strides[k] = in_strides[perm[k]];
  }
  StridedSum<T>(ctx, in, dims, strides, {}, {}, out);
}

#define GR_INSTANTIATE_STRIDED(T)                                          \
  template void StridedSum<T>(const OpKernelContext*, const T*,            \
                              absl::Span<const int64_t>,                   \
                              absl::Span<const int64_t>,                   \
                              absl::Span<const int64_t>,                   \
                              absl::Span<const int64_t>, T*);              \
  template void Permute<T>(const OpKernelContext*, const T*,               \
                           absl::Span<const int64_t>,                      \
                           absl::Span<const int>, T*)
GR_INSTANTIATE_STRIDED(float);
GR_INSTANTIATE_STRIDED(double);
#undef GR_INSTANTIATE_STRIDED

}  // namespace cpu
}  // namespace graphrun
