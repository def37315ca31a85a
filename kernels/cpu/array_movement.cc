#include "kernels/cpu/array_movement.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "absl/strings/str_cat.h"

namespace graphrun {
namespace array_kernels {
namespace {

// Parallel copies start at this many bytes (kParallelMinElements floats).
constexpr int64_t kParallelMinBytes = kParallelMinElements * 4;

enum class Direction { kPiecesToWhole, kWholeToPieces };

// `whole` is [rows, total] with total = sum(cols); piece p is [rows,
// cols[p]]. Copies every element between them in `direction`. T is char
// (POD types, counted in bytes) or std::string.
template <typename T>
void BlockCopy(OpKernelContext* ctx, Direction direction, T* whole,
               const std::vector<T*>& pieces, const std::vector<int64_t>& cols,
               int64_t rows) {
  std::vector<int64_t> offsets(cols.size() + 1, 0);
  for (size_t p = 0; p < cols.size(); ++p) offsets[p + 1] = offsets[p] + cols[p];
  const int64_t total = offsets.back();
  if (rows == 0 || total == 0) return;
  const size_t num_pieces = cols.size();
  auto copy_range = [&](int64_t begin, int64_t end) {
    int64_t r = begin / total;
    int64_t c = begin % total;
    size_t p = 0;
    while (c >= offsets[p + 1]) ++p;
    while (begin < end) {
      const int64_t in_piece = c - offsets[p];
      const int64_t n = std::min(cols[p] - in_piece, end - begin);
      T* piece = pieces[p] + r * cols[p] + in_piece;
      if (direction == Direction::kPiecesToWhole) {
        CopyN<T>(piece, n, whole + begin);
      } else {
        CopyN<T>(whole + begin, n, piece);
      }
      begin += n;
      c += n;
      if (c == total) {
        c = 0;
        ++r;
        p = 0;
      }
      while (p < num_pieces && c >= offsets[p + 1]) ++p;
    }
  };
  const int64_t unit_bytes =
      std::is_same_v<T, std::string> ? int64_t{32} : int64_t{1};
  ParallelForRange(ctx, rows * total, unit_bytes, copy_range);
}

template <typename T>
void BlockCopyTensors(OpKernelContext* ctx, Direction direction,
                      const Tensor& whole, absl::Span<const Tensor* const> parts,
                      int64_t rows) {
  const int64_t scale =
      std::is_same_v<T, std::string> ? 1 : DataTypeSize(whole.dtype());
  std::vector<T*> pieces;
  std::vector<int64_t> cols;
  pieces.reserve(parts.size());
  cols.reserve(parts.size());
  for (const Tensor* t : parts) {
    pieces.push_back(static_cast<T*>(t->raw_data()));
    cols.push_back(rows == 0 ? 0 : t->NumElements() / rows * scale);
  }
  BlockCopy<T>(ctx, direction, static_cast<T*>(whole.raw_data()), pieces, cols,
               rows);
}

void BlockCopyAnyType(OpKernelContext* ctx, Direction direction,
                      const Tensor& whole, absl::Span<const Tensor* const> parts,
                      int64_t rows) {
  if (whole.dtype() == DT_STRING) {
    BlockCopyTensors<std::string>(ctx, direction, whole, parts, rows);
  } else {
    BlockCopyTensors<char>(ctx, direction, whole, parts, rows);
  }
}

}  // namespace

const std::vector<DataType>& AllTensorTypes() {
  static const std::vector<DataType>* const types = new std::vector<DataType>{
      DT_FLOAT,  DT_DOUBLE, DT_HALF,   DT_BFLOAT16,  DT_INT8,       DT_INT16,
      DT_INT32,  DT_INT64,  DT_UINT8,  DT_UINT16,    DT_UINT32,     DT_UINT64,
      DT_BOOL,   DT_COMPLEX64, DT_COMPLEX128, DT_STRING};
  return *types;
}

const std::vector<DataType>& PodTensorTypes() {
  static const std::vector<DataType>* const types = [] {
    auto* v = new std::vector<DataType>(AllTensorTypes());
    v->erase(std::remove(v->begin(), v->end(), DT_STRING), v->end());
    return v;
  }();
  return *types;
}

void ParallelForRange(OpKernelContext* ctx, int64_t n, int64_t bytes_per_unit,
                      const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  const Eigen::ThreadPoolDevice* pool = ctx->device()->eigen_cpu_device();
  if (pool == nullptr || ctx->device()->intra_op_threads() <= 1 ||
      n * bytes_per_unit < kParallelMinBytes) {
    fn(0, n);
    return;
  }
  const Eigen::TensorOpCost cost(static_cast<double>(bytes_per_unit),
                                 static_cast<double>(bytes_per_unit), 0);
  pool->parallelFor(static_cast<Eigen::Index>(n), cost,
                    [&fn](Eigen::Index begin, Eigen::Index end) {
                      fn(static_cast<int64_t>(begin), static_cast<int64_t>(end));
                    });
}

std::vector<int64_t> IntValues(const Tensor& t) {
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(t.NumElements()));
  switch (t.dtype()) {
    case DT_INT16:
      for (int16_t v : t.flat<int16_t>()) out.push_back(v);
      break;
    case DT_INT32:
      for (int32_t v : t.flat<int32_t>()) out.push_back(v);
      break;
    case DT_INT64:
      for (int64_t v : t.flat<int64_t>()) out.push_back(v);
      break;
    default:
      GR_CHECK(false && "IntValues needs an int16, int32 or int64 tensor");
  }
  return out;
}

int64_t IntScalar(const Tensor& t) {
  GR_CHECK(t.NumElements() == 1);
  return IntValues(t)[0];
}

absl::StatusOr<TensorShape> ShapeFromDims(absl::Span<const int64_t> dims) {
  for (int64_t d : dims) {
    if (d < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("Dimension ", d, " must be >= 0"));
    }
  }
  return TensorShape::FromDims(dims);
}

absl::StatusOr<TensorShape> ShapeFromTensor(const Tensor& t) {
  if (t.dims() != 1 || (t.dtype() != DT_INT32 && t.dtype() != DT_INT64)) {
    return absl::InvalidArgumentError(
        absl::StrCat("shape must be a vector of {int32,int64}, got shape ",
                     t.shape().DebugString()));
  }
  return ShapeFromDims(IntValues(t));
}

std::vector<int64_t> InsertDim(const TensorShape& shape, int axis,
                               int64_t dim) {
  std::vector<int64_t> dims(shape.dim_sizes().begin(), shape.dim_sizes().end());
  dims.insert(dims.begin() + axis, dim);
  return dims;
}

int64_t DimProduct(const TensorShape& shape, int begin, int end) {
  int64_t n = 1;
  for (int i = begin; i < end; ++i) n *= shape.dim_size(i);
  return n;
}

bool IsAligned(const Tensor& t) {
  return t.NumElements() == 0 ||
         reinterpret_cast<uintptr_t>(t.raw_data()) % kTensorAlignment == 0;
}

void ConcatRows(OpKernelContext* ctx, absl::Span<const Tensor* const> inputs,
                int64_t rows, Tensor* out) {
  BlockCopyAnyType(ctx, Direction::kPiecesToWhole, *out, inputs, rows);
}

void SplitRows(OpKernelContext* ctx, const Tensor& in, int64_t rows,
               absl::Span<Tensor* const> outs) {
  std::vector<const Tensor*> parts(outs.begin(), outs.end());
  BlockCopyAnyType(ctx, Direction::kWholeToPieces, in, parts, rows);
}

}  // namespace array_kernels
}  // namespace graphrun
