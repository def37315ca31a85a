// NumPy .npy files <-> Tensors (format versions 1.0, 2.0 and 3.0).
//
// Reads little- and big-endian bool, int8..int64, uint8..uint64, float16/32/64,
// complex64/128 and fixed-width bytes ('S') / unicode ('U') arrays, in C or
// Fortran order (a Fortran-order array, as NumPy saves a transposed one,
// comes back row-major).
// 'S' and 'U' arrays become DT_STRING tensors: 'S' elements as their bytes,
// 'U' elements (UTF-32) as UTF-8; as NumPy does, trailing NULs are padding
// and dropped, NULs inside an element kept. Object ('O', pickled) arrays
// and other dtypes are clear InvalidArgument errors,
// as are truncated or corrupt files. Writes are atomic (temporary file, then
// rename). Stateless; thread-safe.
#ifndef GRAPHRUN_GRAPH_NPY_H_
#define GRAPHRUN_GRAPH_NPY_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/tensor.h"

namespace graphrun {

// `what` names the source in errors (a path).
absl::StatusOr<Tensor> ParseNpy(absl::string_view data,
                                absl::string_view what = "npy data");
absl::StatusOr<Tensor> ReadNpyFile(const std::string& path);

// bfloat16 has no NumPy dtype: it is written as float32 (exact).
// Strings are written as fixed-width bytes ('S', as wide as the longest
// element): NumPy reads back each element's bytes, UTF-8 or not, as
// TensorFlow's bytes objects, except trailing NULs, which no NumPy string
// dtype keeps.
absl::StatusOr<std::string> SerializeNpy(const Tensor& tensor);
absl::Status WriteNpyFile(const std::string& path, const Tensor& tensor);

// The NumPy descr for a dtype ("<f4"), or "" if it has none.
std::string NpyDescr(DataType dtype);

}  // namespace graphrun

#endif  // GRAPHRUN_GRAPH_NPY_H_
