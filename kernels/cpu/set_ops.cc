// Set operations on CPU with TensorFlow's semantics and messages
// (set_kernels.cc): the last dimension of each input holds a set (duplicates
// count once), the leading dims name its group. SetSize counts each group's
// distinct values; Dense/Sparse...SetOperation apply "a-b", "b-a",
// "intersection" or "union" group by group and return a SparseTensor whose
// rows hold each non-empty result in ascending order; its last dim is the
// largest result's size.
//
// A SparseTensor input's entries are grouped in runs of consecutive entries
// with equal leading coordinates, as TensorFlow's group iterator does, so
// unsorted input with validate_indices=false behaves as it does there.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/tensor.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace {

enum class SetOp { kAMinusB, kBMinusA, kIntersection, kUnion };
enum class Inputs { kDenseDense, kDenseSparse, kSparseSparse };

// "[2,3]" for a list of dims.
std::string DimsString(const std::vector<int64_t>& dims) {
  return absl::StrCat("[", absl::StrJoin(dims, ","), "]");
}

// A SparseTensor read from three consecutive inputs (indices, values,
// shape), checked as TensorFlow checks it before a set op uses it.
struct SparseInput {
  const int64_t* ix = nullptr;  // [n, rank], row-major
  int64_t n = 0;
  int rank = 0;
  std::vector<int64_t> shape;
  const Tensor* values = nullptr;
  bool validated = false;  // CheckIndices passed
};

// The position of the first bad index (out of bounds, out of order or
// repeated) as an InvalidArgument; OK when every index is in bounds and the
// indices increase strictly in row-major order.
absl::Status CheckIndices(const SparseInput& st) {
  for (int64_t i = 0; i < st.n; ++i) {
    const int64_t* row = st.ix + i * st.rank;
    bool in_bounds = true, different = i == 0, increasing = true;
    for (int d = 0; d < st.rank; ++d) {
      if (row[d] < 0 || row[d] >= st.shape[d]) in_bounds = false;
      if (i == 0) continue;
      const int64_t diff = row[d] - row[d - st.rank];
      if (diff > 0) different = true;
      if (!different && diff < 0) increasing = false;
    }
    if (in_bounds && increasing && different) continue;
    const std::string where = absl::StrCat(
        "indices[", i, "] = [", absl::StrJoin(row, row + st.rank, ","), "]");
    if (!in_bounds) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, " is out of bounds: need 0 <= index < ", DimsString(st.shape)));
    }
    if (!increasing) {
      return absl::InvalidArgumentError(absl::StrCat(
          where,
          " is out of order. Many sparse ops require sorted indices.\n"
          "    Use `tf.sparse.reorder` to create a correctly ordered copy.\n\n"));
    }
    return absl::InvalidArgumentError(absl::StrCat(where, " is repeated"));
  }
  return absl::OkStatus();
}

absl::StatusOr<SparseInput> ReadSparse(OpKernelContext* ctx, int first, bool validate) {
  const Tensor& indices = ctx->input(first);
  const Tensor& values = ctx->input(first + 1);
  const Tensor& shape_t = ctx->input(first + 2);
  if (shape_t.dims() != 1) return absl::InvalidArgumentError("Shape must be a 1D tensor.");
  SparseInput st;
  st.shape.assign(shape_t.flat<int64_t>().begin(), shape_t.flat<int64_t>().end());
  for (int64_t d : st.shape) {
    if (d < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("Expected shape dimensions to be non-negative, got ", d));
    }
  }
  absl::StatusOr<TensorShape> dense = TensorShape::FromDims(st.shape);
  if (!dense.ok()) return dense.status();
  st.rank = static_cast<int>(st.shape.size());
  if (st.rank < 2) return absl::InvalidArgumentError(absl::StrCat("Invalid rank ", st.rank, "."));
  if (values.dims() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("vals must be a vec, but got: ", values.shape().DebugString()));
  }
  if (indices.dims() != 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("indices must be a matrix, but got: ", indices.shape().DebugString()));
  }
  if (indices.dim_size(0) != values.dim_size(0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "indices and values rows (indexing dimension) must match. (indices = ",
        indices.dim_size(0), ", values = ", values.dim_size(0), ")"));
  }
  if (indices.dim_size(1) != st.rank) {
    return absl::InvalidArgumentError("Order length must be SparseTensor rank.");
  }
  st.ix = indices.flat<int64_t>().data();
  st.n = indices.dim_size(0);
  st.values = &values;
  if (validate) {
    absl::Status s = CheckIndices(st);
    if (!s.ok()) return s;
    st.validated = true;
  }
  return st;
}

// A run of consecutive entries [begin, end) of a SparseInput sharing their
// leading rank-1 coordinates.
struct Run {
  int64_t begin = 0, end = 0;
  std::vector<int64_t> key;  // empty once past the last entry
};

// The run starting at entry `begin`.
Run RunAt(const SparseInput& st, int64_t begin) {
  Run r;
  r.begin = r.end = begin;
  if (begin >= st.n) return r;
  const int g = st.rank - 1;
  const int64_t* first = st.ix + begin * st.rank;
  r.key.assign(first, first + g);
  while (++r.end < st.n) {
    const int64_t* row = st.ix + r.end * st.rank;
    if (!std::equal(first, first + g, row)) break;
  }
  return r;
}

// Every coordinate of a run must lie inside the dense shape (Internal
// otherwise: only reachable with validate_indices=false; validated indices
// are known to).
absl::Status CheckRun(const SparseInput& st, const Run& r) {
  if (st.validated) return absl::OkStatus();
  for (int d = 0; d < st.rank; ++d) {
    const int64_t size = st.shape[d];
    if (size <= 0) {
      return absl::InternalError(absl::StrCat("Invalid dim_size[", d, "] = ", size, "."));
    }
    for (int64_t i = r.begin; i < r.end; ++i) {
      const int64_t index = st.ix[i * st.rank + d];
      if (index >= size) {
        return absl::InternalError(absl::StrCat("indices[", i - r.begin, ", ", d,
                                                "] expected < ", size, ", got ", index, "."));
      }
    }
  }
  return absl::OkStatus();
}

// Sorts `v` and drops duplicates.
template <typename T>
void MakeSet(std::vector<T>* v) {
  std::sort(v->begin(), v->end());
  v->erase(std::unique(v->begin(), v->end()), v->end());
}

// The distinct values of a run, ascending.
template <typename T>
absl::Status RunSet(const SparseInput& st, const Run& r, std::vector<T>* out) {
  absl::Status s = CheckRun(st, r);
  if (!s.ok()) return s;
  const T* v = st.values->flat<T>().data();
  out->assign(v + r.begin, v + r.end);
  MakeSet(out);
  return absl::OkStatus();
}

template <typename T>
class SetSizeOp : public OpKernel {
 public:
  explicit SetSizeOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    OP_REQUIRES_OK(ctx, ctx->GetAttr("validate_indices", &validate_));
  }

  void Compute(OpKernelContext* ctx) override {
    absl::StatusOr<SparseInput> st = ReadSparse(ctx, 0, validate_);
    OP_REQUIRES_OK(ctx, st.status());
    const std::vector<int64_t> group(st->shape.begin(), st->shape.end() - 1);
    absl::StatusOr<TensorShape> out_shape = TensorShape::FromDims(group);
    OP_REQUIRES_OK(ctx, out_shape.status());
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *out_shape, &out));
    absl::Span<int32_t> sizes = out->flat<int32_t>();
    std::fill(sizes.begin(), sizes.end(), 0);
    std::vector<T> set;
    for (Run r = RunAt(*st, 0); !r.key.empty(); r = RunAt(*st, r.end)) {
      OP_REQUIRES_OK(ctx, RunSet(*st, r, &set));
      int64_t at = 0;
      for (size_t d = 0; d < group.size(); ++d) at = at * group[d] + r.key[d];
      OP_REQUIRES(ctx, at >= 0 && at < static_cast<int64_t>(sizes.size()),
                  absl::InvalidArgumentError(absl::StrCat(
                      "Index out of range, ", DimsString(r.key), " vs ",
                      out_shape->DebugString())));
      sizes[at] = static_cast<int32_t>(set.size());
    }
  }

 private:
  bool validate_ = true;
};

template <typename T>
class SetOperationOp : public OpKernel {
 public:
  SetOperationOp(OpKernelConstruction* ctx, Inputs inputs) : OpKernel(ctx), inputs_(inputs) {
    std::string name;
    OP_REQUIRES_OK(ctx, ctx->GetAttr("set_operation", &name));
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
    if (name == "a-b") {
      op_ = SetOp::kAMinusB;
    } else if (name == "b-a") {
      op_ = SetOp::kBMinusA;
    } else if (name == "intersection") {
      op_ = SetOp::kIntersection;
    } else {
      OP_REQUIRES(ctx, name == "union",
                  absl::InvalidArgumentError(absl::StrCat("Invalid set_operation ", name, ".")));
      op_ = SetOp::kUnion;
    }
    OP_REQUIRES_OK(ctx, ctx->GetAttr("validate_indices", &validate_));
  }

  void Compute(OpKernelContext* ctx) override {
    switch (inputs_) {
      case Inputs::kDenseDense:
        DenseDense(ctx);
        break;
      case Inputs::kDenseSparse:
        DenseSparse(ctx);
        break;
      case Inputs::kSparseSparse:
        SparseSparse(ctx);
        break;
    }
  }

 private:
  // One non-empty result: its group coordinates and its values, ascending.
  struct Result {
    std::vector<int64_t> key;
    std::vector<T> values;
  };

  // The result of the set operation on two sorted, duplicate-free sets.
  std::vector<T> Apply(const std::vector<T>& a, const std::vector<T>& b) const {
    std::vector<T> out;
    auto sink = std::back_inserter(out);
    switch (op_) {
      case SetOp::kAMinusB:
        std::set_difference(a.begin(), a.end(), b.begin(), b.end(), sink);
        break;
      case SetOp::kBMinusA:
        std::set_difference(b.begin(), b.end(), a.begin(), a.end(), sink);
        break;
      case SetOp::kIntersection:
        std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), sink);
        break;
      case SetOp::kUnion:
        std::set_union(a.begin(), a.end(), b.begin(), b.end(), sink);
        break;
    }
    return out;
  }

  // The group shape both inputs share: all dims but the last; each input
  // must have rank >= 2.
  static absl::StatusOr<std::vector<int64_t>> GroupShape(const std::vector<int64_t>& a,
                                                         const std::vector<int64_t>& b) {
    for (const std::vector<int64_t>* s : {&a, &b}) {
      if (s->size() < 2) {
        return absl::InvalidArgumentError(absl::StrCat("Shape ", DimsString(*s), " has rank ",
                                                       s->size(), " < 2"));
      }
    }
    std::vector<int64_t> ga(a.begin(), a.end() - 1), gb(b.begin(), b.end() - 1);
    if (ga != gb) {
      return absl::InvalidArgumentError(
          absl::StrCat("Mismatched shapes ", DimsString(ga), " vs ", DimsString(gb)));
    }
    return ga;
  }

  static std::vector<int64_t> DimsOf(const Tensor& t) {
    return std::vector<int64_t>(t.shape().dim_sizes().begin(), t.shape().dim_sizes().end());
  }

  // The distinct values of dense group `flat` (row-major over the group
  // shape).
  static void DenseSet(const Tensor& t, int64_t flat, std::vector<T>* out) {
    const int64_t width = t.dim_size(t.dims() - 1);
    const T* v = t.flat<T>().data() + flat * width;
    out->assign(v, v + width);
    MakeSet(out);
  }

  // The coordinates of group `flat` in `group`.
  static std::vector<int64_t> Unravel(int64_t flat, const std::vector<int64_t>& group) {
    std::vector<int64_t> key(group.size());
    for (size_t d = group.size(); d-- > 0;) {
      key[d] = flat % group[d];
      flat /= group[d];
    }
    return key;
  }

  void Keep(std::vector<int64_t> key, const std::vector<T>& a, const std::vector<T>& b,
            std::vector<Result>* results) const {
    std::vector<T> out = Apply(a, b);
    if (!out.empty()) results->push_back({std::move(key), std::move(out)});
  }

  void DenseDense(OpKernelContext* ctx) const {
    const Tensor& set1 = ctx->input(0);
    const Tensor& set2 = ctx->input(1);
    absl::StatusOr<std::vector<int64_t>> group = GroupShape(DimsOf(set1), DimsOf(set2));
    OP_REQUIRES_OK(ctx, group.status());
    std::vector<Result> results;
    std::vector<T> a, b;
    const int64_t groups = GroupCount(*group);
    for (int64_t flat = 0; flat < groups; ++flat) {
      DenseSet(set1, flat, &a);
      DenseSet(set2, flat, &b);
      Keep(Unravel(flat, *group), a, b, &results);
    }
    Output(ctx, *group, results);
  }

  void DenseSparse(OpKernelContext* ctx) const {
    const Tensor& set1 = ctx->input(0);
    absl::StatusOr<SparseInput> set2 = ReadSparse(ctx, 1, validate_);
    OP_REQUIRES_OK(ctx, set2.status());
    absl::StatusOr<std::vector<int64_t>> group = GroupShape(DimsOf(set1), set2->shape);
    OP_REQUIRES_OK(ctx, group.status());
    std::vector<Result> results;
    std::vector<T> a, b;
    Run run = RunAt(*set2, 0);
    const int64_t groups = GroupCount(*group);
    for (int64_t flat = 0; flat < groups; ++flat) {
      std::vector<int64_t> key = Unravel(flat, *group);
      DenseSet(set1, flat, &a);
      b.clear();
      // The sparse side moves on only when its current run is this group.
      if (!run.key.empty() && run.key == key) {
        OP_REQUIRES_OK(ctx, RunSet(*set2, run, &b));
        run = RunAt(*set2, run.end);
      }
      Keep(std::move(key), a, b, &results);
    }
    Output(ctx, *group, results);
  }

  void SparseSparse(OpKernelContext* ctx) const {
    absl::StatusOr<SparseInput> set1 = ReadSparse(ctx, 0, validate_);
    OP_REQUIRES_OK(ctx, set1.status());
    absl::StatusOr<SparseInput> set2 = ReadSparse(ctx, 3, validate_);
    OP_REQUIRES_OK(ctx, set2.status());
    absl::StatusOr<std::vector<int64_t>> group = GroupShape(set1->shape, set2->shape);
    OP_REQUIRES_OK(ctx, group.status());
    std::vector<Result> results;
    std::vector<T> a, b;
    Run r1 = RunAt(*set1, 0), r2 = RunAt(*set2, 0);
    // Walk both run lists together; an exhausted side sorts after the other.
    while (!r1.key.empty() || !r2.key.empty()) {
      int64_t order = 0;
      if (r1.key.empty()) {
        order = 1;
      } else if (r2.key.empty()) {
        order = -1;
      } else {
        for (size_t d = 0; d < r1.key.size() && order == 0; ++d) order = r1.key[d] - r2.key[d];
      }
      std::vector<int64_t> key;
      a.clear();
      b.clear();
      if (order <= 0) {
        OP_REQUIRES_OK(ctx, RunSet(*set1, r1, &a));
        key = r1.key;
        r1 = RunAt(*set1, r1.end);
      }
      if (order >= 0) {
        OP_REQUIRES_OK(ctx, RunSet(*set2, r2, &b));
        key = r2.key;
        r2 = RunAt(*set2, r2.end);
      }
      Keep(std::move(key), a, b, &results);
    }
    Output(ctx, *group, results);
  }

  static int64_t GroupCount(const std::vector<int64_t>& group) {
    int64_t count = 1;
    for (int64_t d : group) count *= d;
    return count;
  }

  // Writes the results as a SparseTensor of shape group + [largest result].
  static void Output(OpKernelContext* ctx, const std::vector<int64_t>& group,
                     const std::vector<Result>& results) {
    int64_t total = 0, widest = 0;
    for (const Result& r : results) {
      const int64_t size = static_cast<int64_t>(r.values.size());
      total += size;
      widest = std::max(widest, size);
    }
    std::vector<int64_t> dims = group;
    dims.push_back(widest);
    absl::StatusOr<TensorShape> dense = TensorShape::FromDims(dims);
    OP_REQUIRES_OK(ctx, dense.status());
    const int64_t rank = static_cast<int64_t>(dims.size());
    Tensor *indices = nullptr, *values = nullptr, *shape = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({total, rank}), &indices));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(1, TensorShape({total}), &values));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(2, TensorShape({rank}), &shape));
    std::copy(dims.begin(), dims.end(), shape->flat<int64_t>().begin());
    int64_t* ix = indices->flat<int64_t>().data();
    T* v = values->flat<T>().data();
    for (const Result& r : results) {
      for (size_t j = 0; j < r.values.size(); ++j) {
        ix = std::copy(r.key.begin(), r.key.end(), ix);
        *ix++ = static_cast<int64_t>(j);
        *v++ = r.values[j];
      }
    }
  }

  Inputs inputs_;
  SetOp op_ = SetOp::kUnion;
  bool validate_ = true;
};

template <typename T>
class DenseToDenseSetOperationOp : public SetOperationOp<T> {
 public:
  explicit DenseToDenseSetOperationOp(OpKernelConstruction* ctx)
      : SetOperationOp<T>(ctx, Inputs::kDenseDense) {}
};

template <typename T>
class DenseToSparseSetOperationOp : public SetOperationOp<T> {
 public:
  explicit DenseToSparseSetOperationOp(OpKernelConstruction* ctx)
      : SetOperationOp<T>(ctx, Inputs::kDenseSparse) {}
};

template <typename T>
class SparseToSparseSetOperationOp : public SetOperationOp<T> {
 public:
  explicit SparseToSparseSetOperationOp(OpKernelConstruction* ctx)
      : SetOperationOp<T>(ctx, Inputs::kSparseSparse) {}
};

#define GR_REGISTER_SET_KERNELS(T)                                                       \
  REGISTER_KERNEL(KernelDefBuilder("SetSize").Device(kDeviceCpu).TypeConstraint<T>("T"), \
                  SetSizeOp<T>);                                                         \
  REGISTER_KERNEL(KernelDefBuilder("DenseToDenseSetOperation")                           \
                      .Device(kDeviceCpu)                                                \
                      .TypeConstraint<T>("T"),                                           \
                  DenseToDenseSetOperationOp<T>);                                        \
  REGISTER_KERNEL(KernelDefBuilder("DenseToSparseSetOperation")                          \
                      .Device(kDeviceCpu)                                                \
                      .TypeConstraint<T>("T"),                                           \
                  DenseToSparseSetOperationOp<T>);                                       \
  REGISTER_KERNEL(KernelDefBuilder("SparseToSparseSetOperation")                         \
                      .Device(kDeviceCpu)                                                \
                      .TypeConstraint<T>("T"),                                           \
                  SparseToSparseSetOperationOp<T>)
GR_REGISTER_SET_KERNELS(int8_t);
GR_REGISTER_SET_KERNELS(int16_t);
GR_REGISTER_SET_KERNELS(int32_t);
GR_REGISTER_SET_KERNELS(int64_t);
GR_REGISTER_SET_KERNELS(uint8_t);
GR_REGISTER_SET_KERNELS(uint16_t);
GR_REGISTER_SET_KERNELS(std::string);
#undef GR_REGISTER_SET_KERNELS

}  // namespace
}  // namespace graphrun
