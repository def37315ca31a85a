// NumPy arrays <-> graphrun Tensors for the Python module.
//
// Feeds: a C-contiguous, native-order, 64-byte-aligned array of a numeric
// dtype becomes a Tensor over the array's own memory (the Tensor holds a
// reference to the array; no copy); any other array is copied once. Bytes,
// str and object arrays become DT_STRING (str as UTF-8).
// Fetches: a Tensor whose buffer nothing else holds (a kernel's fresh
// output) becomes an array over that buffer (no copy); one that shares its
// buffer (a constant, a variable's value) is copied, so writing into the
// array never changes graph state. DT_STRING comes back as an object array
// of bytes, as TensorFlow returns it.
//
// The GIL must be held by the caller of every function here. Buffers a
// Tensor holds on a Python object are released from any thread: without the
// GIL the reference is queued and dropped by the next ReleasePending().
#ifndef GRAPHRUN_PYTHON_NUMPY_TENSOR_H_
#define GRAPHRUN_PYTHON_NUMPY_TENSOR_H_

#include <string>

#include "absl/status/statusor.h"
#include "graph/tensor.h"
#include "pybind11/numpy.h"
#include "pybind11/pybind11.h"

namespace graphrun {
namespace python {

// The Tensor for `value` (an array, or anything np.asarray takes). `want`
// (DT_INVALID: the array's own dtype) is the dtype the graph expects: the
// value is converted as np.asarray(value, dtype) would, bfloat16 included
// (from float32, rounding to nearest even). `what` names the feed in errors.
absl::StatusOr<Tensor> ToTensor(pybind11::handle value, DataType want, const std::string& what);

// The array for `t` (moved in: if it is the buffer's last holder the array
// takes the buffer over). bfloat16 comes back as ml_dtypes.bfloat16 where
// that package is installed, else as float32 (every bfloat16 is exact in
// float32).
pybind11::object ToArray(Tensor t, const std::string& what);

// The NumPy dtype name of `dtype` ("float32", "bfloat16", "object" for
// strings), or "" when NumPy has none.
std::string NumpyDtypeName(DataType dtype);

// Drops the Python references that buffers released without the GIL.
void ReleasePending();

}  // namespace python
}  // namespace graphrun

#endif  // GRAPHRUN_PYTHON_NUMPY_TENSOR_H_
