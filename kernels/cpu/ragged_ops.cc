// CPU kernels of graph/ops/ragged_more_ops.cc, as TensorFlow computes them.
// A ragged tensor is its nested row splits (outermost first; splits[i] has
// one entry more than the rows of level i) and its dense values.
//   RaggedRange            one row per (start, limit, delta), scalars
//                          broadcast; values accumulate start + delta + ...
//   RaggedGather           the rows of params at `indices`; a rank-k index
//                          tensor adds k - 1 uniform outer levels.
//   RaggedTensorToSparse   the [value, position] coordinates of every
//                          element; dense shape from the longest rows.
// The variant pair is in ragged_variant_ops.cc.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "kernels/cpu/array_movement.h"
#include "kernels/cpu/ragged_util.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace {

using ragged::RowElements;
using array_kernels::IntValues;
using ragged::WriteSplits;

// Rows of one range: 0 when the delta points away from the limit.
template <typename T>
absl::StatusOr<int64_t> RangeSize(T start, T limit, T delta) {
  if ((delta > 0 && limit < start) || (delta < 0 && limit > start)) return 0;
  if constexpr (std::is_integral_v<T>) {
    // |limit - start| and |delta| as unsigned: no overflow at the extremes.
    using U = std::make_unsigned_t<T>;
    const U span = delta > 0 ? U(limit) - U(start) : U(start) - U(limit);
    const U step = delta > 0 ? U(delta) : U(0) - U(delta);
    const U n = span / step + (span % step != 0 ? 1 : 0);
    // Compared in 64 bits: kMaxElements does not fit a 32-bit U.
    if (static_cast<uint64_t>(n) > static_cast<uint64_t>(kMaxElements)) {
      return absl::InvalidArgumentError(absl::StrCat("RaggedRange: a row of ", n,
                                                     " values is too large"));
    }
    return static_cast<int64_t>(n);
  } else {
    const T n = std::ceil(std::abs((limit - start) / delta));
    if (!(n <= static_cast<T>(std::numeric_limits<int64_t>::max()))) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Requires ((limit - start) / delta) <= ", std::numeric_limits<int64_t>::max()));
    }
    if (n > static_cast<T>(kMaxElements)) {
      return absl::InvalidArgumentError(absl::StrCat("RaggedRange: a row of ", n,
                                                     " values is too large"));
    }
    return static_cast<int64_t>(n);
  }
}

template <typename T>
class RaggedRangeOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    static constexpr const char* kNames[3] = {"starts", "limits", "deltas"};
    int64_t rows = -1;
    for (int i = 0; i < 3; ++i) {
      const Tensor& t = ctx->input(i);
      OP_REQUIRES(ctx, t.dims() <= 1,
                  absl::InvalidArgumentError(
                      absl::StrCat(kNames[i], " must be a scalar or vector")));
      if (t.dims() == 0) continue;
      OP_REQUIRES(ctx, rows < 0 || rows == t.dim_size(0),
                  absl::InvalidArgumentError(
                      "starts, limits, and deltas must have the same shape"));
      rows = t.dim_size(0);
    }
    if (rows < 0) rows = 1;  // all scalars: one row
    // Element `row` of input i, a scalar serving every row.
    auto at = [&](int i, int64_t row) {
      const Tensor& t = ctx->input(i);
      return t.flat<T>()[t.dims() == 0 ? 0 : row];
    };
    std::vector<int64_t> splits(static_cast<size_t>(rows) + 1, 0);
    for (int64_t r = 0; r < rows; ++r) {
      const T delta = at(2, r);
      OP_REQUIRES(ctx, delta != T(0), absl::InvalidArgumentError("Requires delta != 0"));
      absl::StatusOr<int64_t> size = RangeSize<T>(at(0, r), at(1, r), delta);
      OP_REQUIRES_OK(ctx, size.status());
      splits[r + 1] = splits[r] + *size;
      OP_REQUIRES(ctx, splits[r + 1] <= kMaxElements,
                  absl::InvalidArgumentError(absl::StrCat(
                      "RaggedRange: more than ", kMaxElements, " values in all")));
    }
    OP_REQUIRES_OK(ctx, WriteSplits(ctx, 0, splits));
    Tensor* values = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(1, TensorShape({splits.back()}), &values));
    auto out = values->flat<T>();
    for (int64_t r = 0; r < rows; ++r) {
      T v = at(0, r);
      const T delta = at(2, r);
      for (int64_t k = splits[r]; k < splits[r + 1]; ++k) {
        out[k] = v;
        v += delta;
      }
    }
  }
};

// "[1,0]": the position of flat element `i` in `shape` ("" for a scalar).
std::string IndexString(const TensorShape& shape, int64_t i) {
  if (shape.dims() == 0) return "";
  std::vector<int64_t> pos(shape.dims());
  for (int d = shape.dims() - 1; d >= 0; --d) {
    pos[d] = i % shape.dim_size(d);
    i /= shape.dim_size(d);
  }
  return absl::StrCat("[", absl::StrJoin(pos, ","), "]");
}

// Inputs: PARAMS_RAGGED_RANK splits, the params' values, indices. Outputs:
// OUTPUT_RAGGED_RANK splits (indices.dims() - 1 uniform ones, then those of
// the gathered rows), the gathered values.
class RaggedGatherOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const int levels = ctx->num_inputs() - 2;
    const Tensor& values = ctx->input(levels);
    const Tensor& indices_in = ctx->input(levels + 1);
    std::vector<std::vector<int64_t>> splits(levels);
    for (int i = 0; i < levels; ++i) splits[i] = IntValues(ctx->input(i));
    const std::vector<int64_t> indices = IntValues(indices_in);
    const int64_t num_params = static_cast<int64_t>(splits[0].size()) - 1;
    for (size_t i = 0; i < indices.size(); ++i) {
      OP_REQUIRES(ctx, indices[i] >= 0 && indices[i] < num_params,
                  absl::InvalidArgumentError(absl::StrCat(
                      "indices", IndexString(indices_in.shape(), static_cast<int64_t>(i)),
                      " = ", indices[i], " is not in [0, ", num_params, ")")));
    }
    OP_REQUIRES(ctx, values.dims() > 0, absl::InvalidArgumentError("params.rank must be nonzero"));
    OP_REQUIRES_OK(ctx, CheckSplits(splits, values.dim_size(0)));
    const int out_levels = indices_in.dims() - 1 + levels;
    OP_REQUIRES(ctx, out_levels == ctx->num_outputs() - 1,
                absl::InvalidArgumentError(absl::StrCat(
                    "OUTPUT_RAGGED_RANK is ", ctx->num_outputs() - 1, ", but indices of rank ",
                    indices_in.dims(), " and ", levels, " ragged levels give ", out_levels)));

    // The uniform levels of a rank-k index tensor: rows of its dims.
    std::vector<std::vector<int64_t>> out(out_levels, std::vector<int64_t>{0});
    int64_t rows = 1;
    for (int d = 0; d + 1 < indices_in.dims(); ++d) {
      rows *= indices_in.dim_size(d);
      const int64_t length = indices_in.dim_size(d + 1);
      for (int64_t r = 1; r <= rows; ++r) out[d].push_back(r * length);
    }
    // Each index: its row's splits at every level (shifted to follow what
    // came before), then the range of values it covers.
    std::vector<std::pair<int64_t, int64_t>> slices;
    int64_t num_values = 0;
    for (int64_t index : indices) {
      int64_t start = index, limit = index + 1;
      for (int level = 0; level < levels; ++level) {
        const std::vector<int64_t>& s = splits[level];
        const int o = level + indices_in.dims() - 1;
        if (o >= 0) {
          const int64_t shift = out[o].back() - s[start];
          for (int64_t j = start; j < limit; ++j) out[o].push_back(s[j + 1] + shift);
        }
        start = s[start];
        limit = s[limit];
      }
      if (limit != start) {
        slices.emplace_back(start, limit);
        num_values += limit - start;
        OP_REQUIRES(ctx, num_values <= kMaxElements,
                    absl::InvalidArgumentError("RaggedGather: too many values gathered"));
      }
    }
    for (int o = 0; o < out_levels; ++o) OP_REQUIRES_OK(ctx, WriteSplits(ctx, o, out[o]));
    TensorShape shape = values.shape();
    OP_REQUIRES_OK(ctx, shape.SetDimWithStatus(0, num_values));
    Tensor* gathered = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(out_levels, shape, &gathered));
    const int64_t row = RowElements(values);
    int64_t at = 0;
    for (const auto& [start, limit] : slices) {
      CopyElements(values, start * row, (limit - start) * row, gathered, at * row);
      at += limit - start;
    }
  }

 private:
  // Each level's splits: non-empty, non-negative, sorted, and ending within
  // the next level's rows (the values for the last level).
  static absl::Status CheckSplits(const std::vector<std::vector<int64_t>>& splits,
                                  int64_t num_values) {
    for (size_t level = 0; level < splits.size(); ++level) {
      const std::vector<int64_t>& s = splits[level];
      const int64_t bound = level + 1 == splits.size()
                                ? num_values
                                : static_cast<int64_t>(splits[level + 1].size()) - 1;
      if (s.empty()) return absl::InvalidArgumentError("Ragged splits may not be empty");
      if (s[0] < 0) return absl::InvalidArgumentError("Ragged splits must be non-negative");
      if (s.back() > bound) {
        return absl::InvalidArgumentError("Ragged splits must not point past values");
      }
      for (size_t i = 1; i < s.size(); ++i) {
        if (s[i - 1] > s[i]) return absl::InvalidArgumentError("Ragged splits must be sorted");
      }
    }
    return absl::OkStatus();
  }
};

class RaggedTensorToSparseOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const int levels = ctx->num_inputs() - 1;
    OP_REQUIRES(ctx, levels > 0, absl::InvalidArgumentError("rt_nested_splits must be non empty"));
    const Tensor& values = ctx->input(levels);
    OP_REQUIRES(ctx, values.dims() > 0,
                absl::InvalidArgumentError("rt_dense_values must have rank >= 1"));
    std::vector<std::vector<int64_t>> splits(levels);
    for (int i = 0; i < levels; ++i) splits[i] = IntValues(ctx->input(i));
    OP_REQUIRES_OK(ctx, CheckSplits(splits, values.dim_size(0)));

    // parent[level][e]: the row of level `level` that element e (a row of
    // the next level, or a value) belongs to.
    std::vector<std::vector<int64_t>> parent(levels);
    for (int level = 0; level < levels; ++level) {
      const std::vector<int64_t>& s = splits[level];
      parent[level].resize(static_cast<size_t>(s.back()));
      for (size_t r = 0; r + 1 < s.size(); ++r) {
        std::fill(parent[level].begin() + s[r], parent[level].begin() + s[r + 1],
                  static_cast<int64_t>(r));
      }
    }
    const int rank = levels + values.dims();
    const int64_t inner = RowElements(values);  // elements of one value
    const int64_t n = values.dim_size(0) * inner;
    Tensor* indices = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({n, rank}), &indices));
    auto idx = indices->flat<int64_t>();
    std::vector<int64_t> position(rank);
    for (int64_t k = 0; k < values.dim_size(0); ++k) {
      int64_t e = k;
      for (int level = levels - 1; level >= 0; --level) {
        const int64_t r = parent[level][e];
        position[level + 1] = e - splits[level][r];
        e = r;
      }
      position[0] = e;
      // Row-major positions within the value's dense dims.
      for (int64_t j = 0; j < inner; ++j) {
        int64_t rest = j;
        for (int d = values.dims() - 1; d >= 1; --d) {
          position[levels + d] = rest % values.dim_size(d);
          rest /= values.dim_size(d);
        }
        std::copy(position.begin(), position.end(), idx.begin() + (k * inner + j) * rank);
      }
    }
    absl::StatusOr<Tensor> flat = values.Reshaped(TensorShape({values.NumElements()}));
    OP_REQUIRES_OK(ctx, flat.status());
    ctx->set_output(1, *std::move(flat));
    Tensor* shape = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(2, TensorShape({rank}), &shape));
    auto dense = shape->flat<int64_t>();
    dense[0] = static_cast<int64_t>(splits[0].size()) - 1;
    for (int level = 0; level < levels; ++level) {
      int64_t widest = 0;
      for (size_t r = 1; r < splits[level].size(); ++r) {
        widest = std::max(widest, splits[level][r] - splits[level][r - 1]);
      }
      dense[level + 1] = widest;
    }
    for (int d = 1; d < values.dims(); ++d) dense[levels + d] = values.dim_size(d);
  }

 private:
  // Each level's splits: non-empty, from 0, non-decreasing, ending at the
  // next level's rows (the values for the last level).
  static absl::Status CheckSplits(const std::vector<std::vector<int64_t>>& splits,
                                  int64_t num_values) {
    const char* kLength =
        "Final value of ragged splits must match the length the corresponding ragged values.";
    for (size_t level = 0; level < splits.size(); ++level) {
      const std::vector<int64_t>& s = splits[level];
      if (s.empty()) return absl::InvalidArgumentError("ragged splits may not be empty.");
      if (s[0] != 0) return absl::InvalidArgumentError("First value of ragged splits must be 0.");
      for (size_t i = 1; i < s.size(); ++i) {
        if (s[i] < s[i - 1]) {
          return absl::InvalidArgumentError(absl::StrCat(
              "Ragged splits should be non decreasing, but we got ", s[i - 1], " followed by ",
              s[i]));
        }
      }
      if (level > 0 && static_cast<int64_t>(s.size()) != splits[level - 1].back() + 1) {
        return absl::InvalidArgumentError(kLength);
      }
    }
    if (splits.back().back() != num_values) return absl::InvalidArgumentError(kLength);
    return absl::OkStatus();
  }
};

#define REGISTER_RAGGED_RANGE(T)                                                    \
  REGISTER_KERNEL(KernelDefBuilder("RaggedRange").Device(kDeviceCpu).TypeConstraint<T>("T"), \
                  RaggedRangeOp<T>)
REGISTER_RAGGED_RANGE(float);
REGISTER_RAGGED_RANGE(double);
REGISTER_RAGGED_RANGE(int32_t);
REGISTER_RAGGED_RANGE(int64_t);
#undef REGISTER_RAGGED_RANGE
REGISTER_KERNEL(KernelDefBuilder("RaggedGather").Device(kDeviceCpu), RaggedGatherOp);
REGISTER_KERNEL(KernelDefBuilder("RaggedTensorToSparse").Device(kDeviceCpu),
                RaggedTensorToSparseOp);

}  // namespace
}  // namespace graphrun
