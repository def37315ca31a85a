#include "python/numpy_tensor.h"

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "graph/allocator.h"
#include "graph/types.h"
#include "pybind11/stl.h"
#include "python/status.h"

namespace graphrun {
namespace python {
namespace py = pybind11;

namespace {

absl::Mutex pending_mu;
std::vector<PyObject*>& Pending() {
  static auto* pending = new std::vector<PyObject*>();
  return *pending;
}

// A reference a Tensor held, dropped by the next ReleasePending(): buffers
// go on executor threads without the GIL (and PyGILState_Check() cannot be
// trusted with sub-interpreters), so nothing is dropped here.
void Release(PyObject* object) {
  absl::MutexLock lock(&pending_mu);
  Pending().push_back(object);
}

const py::module_& Numpy() {
  static const auto* np = new py::module_(py::module_::import("numpy"));  // lives with the process
  return *np;
}

// The NumPy dtype of `dtype`, made once per dtype.
py::dtype DtypeOf(DataType dtype) {
  static auto* cache = new absl::flat_hash_map<int, py::dtype>();
  auto it = cache->find(dtype);
  if (it != cache->end()) return it->second;
  py::dtype made(NumpyDtypeName(dtype));
  cache->emplace(dtype, made);
  return made;
}

// ml_dtypes.bfloat16, or None where the package is not installed.
py::object Bfloat16Dtype() {
  try {
    return Numpy().attr("dtype")(py::module_::import("ml_dtypes").attr("bfloat16"));
  } catch (const py::error_already_set&) {
    PyErr_Clear();
    return py::none();
  }
}

// The DataType of a NumPy dtype; DT_INVALID for one graphrun cannot hold.
DataType FromNumpy(const py::dtype& dtype) {
  const char kind = dtype.kind();
  // From Python: pybind11's own itemsize() reads NumPy 1's struct layout,
  // which NumPy 2 changed.
  const ssize_t size = dtype.attr("itemsize").cast<ssize_t>();
  switch (kind) {
    case 'f':
      return size == 2 ? DT_HALF : size == 4 ? DT_FLOAT : size == 8 ? DT_DOUBLE : DT_INVALID;
    case 'i':
      return size == 1 ? DT_INT8 : size == 2 ? DT_INT16 : size == 4 ? DT_INT32
           : size == 8 ? DT_INT64 : DT_INVALID;
    case 'u':
      return size == 1 ? DT_UINT8 : size == 2 ? DT_UINT16 : size == 4 ? DT_UINT32
           : size == 8 ? DT_UINT64 : DT_INVALID;
    case 'b':
      return DT_BOOL;
    case 'c':
      return size == 8 ? DT_COMPLEX64 : size == 16 ? DT_COMPLEX128 : DT_INVALID;
    case 'S':
    case 'U':
    case 'O':
      return DT_STRING;
    default:
      return py::str(dtype.attr("name")).cast<std::string>() == "bfloat16" ? DT_BFLOAT16
                                                                            : DT_INVALID;
  }
}

absl::StatusOr<TensorShape> ShapeOf(const py::array& array, const std::string& what) {
  std::vector<int64_t> dims(array.shape(), array.shape() + array.ndim());
  absl::StatusOr<TensorShape> shape = TensorShape::FromDims(dims);
  if (!shape.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": ", shape.status().message()));
  }
  return shape;
}

absl::StatusOr<Tensor> StringTensor(py::handle value, const std::string& what) {
  // Values that are not arrays yet become object arrays: a bytes array
  // ('S') would drop trailing NUL bytes, as a serialized proto may have.
  py::array array = py::isinstance<py::array>(value) ? py::reinterpret_borrow<py::array>(value)
                                                     : Numpy().attr("asarray")(value, "object");
  const char kind = array.dtype().kind();
  if (kind != 'S' && kind != 'U' && kind != 'O') {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": a string tensor needs bytes or str values, not ",
        py::str(array.dtype()).cast<std::string>()));
  }
  absl::StatusOr<TensorShape> shape = ShapeOf(array, what);
  if (!shape.ok()) return shape.status();
  absl::StatusOr<Tensor> made = Tensor::Allocate(HostAllocator(), DT_STRING, *shape);
  if (!made.ok()) return made.status();
  Tensor t = *std::move(made);
  absl::Span<std::string> out = t.flat<std::string>();
  py::list items = array.attr("reshape")(-1).attr("tolist")();
  for (size_t i = 0; i < items.size(); ++i) {
    py::handle item = items[i];
    if (PyBytes_Check(item.ptr())) {
      out[i] = item.cast<std::string>();
    } else if (PyUnicode_Check(item.ptr())) {
      Py_ssize_t n = 0;
      const char* utf8 = PyUnicode_AsUTF8AndSize(item.ptr(), &n);
      if (utf8 == nullptr) throw py::error_already_set();
      out[i].assign(utf8, n);
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          what, ": element ", i, " of a string feed is ",
          py::str(py::type::of(item).attr("__name__")).cast<std::string>(),
          ", not bytes or str"));
    }
  }
  return t;
}

// float32 values rounded to bfloat16 (nearest even), for a bfloat16 feed
// where ml_dtypes is not installed.
absl::StatusOr<Tensor> Bfloat16FromFloats(py::handle value, const std::string& what) {
  py::array_t<float, py::array::c_style | py::array::forcecast> floats =
      Numpy().attr("asarray")(value, "float32");
  absl::StatusOr<TensorShape> shape = ShapeOf(floats, what);
  if (!shape.ok()) return shape.status();
  absl::StatusOr<Tensor> made = Tensor::Allocate(HostAllocator(), DT_BFLOAT16, *shape,
                                                 TensorBuffer::Init::kUninitialized);
  if (!made.ok()) return made.status();
  Tensor t = *std::move(made);
  absl::Span<bfloat16> out = t.flat<bfloat16>();
  const float* in = floats.data();
  for (size_t i = 0; i < out.size(); ++i) out[i] = bfloat16(in[i]);
  return t;
}

absl::StatusOr<Tensor> ConvertToTensor(py::handle value, DataType want, const std::string& what);

}  // namespace

absl::StatusOr<Tensor> ToTensor(py::handle value, DataType want, const std::string& what) {
  ReleasePending();
  try {
    return ConvertToTensor(value, want, what);
  } catch (py::error_already_set& e) {
    // NumPy could not convert the value (a str fed as a float...).
    if (!e.matches(PyExc_ValueError) && !e.matches(PyExc_TypeError) &&
        !e.matches(PyExc_OverflowError)) {
      throw;
    }
    const std::string why = py::str(e.value()).cast<std::string>();
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": cannot convert the value",
        want == DT_INVALID ? std::string() : absl::StrCat(" to ", DataTypeString(want)), ": ",
        why));
  }
}

namespace {

absl::StatusOr<Tensor> ConvertToTensor(py::handle value, DataType want, const std::string& what) {
  if (want == DT_STRING) return StringTensor(value, what);
  const py::module_& np = Numpy();
  py::array array;
  if (py::isinstance<py::array>(value) &&
      (want == DT_INVALID || FromNumpy(py::reinterpret_borrow<py::array>(value).dtype()) == want)) {
    array = py::reinterpret_borrow<py::array>(value);  // no conversion needed
  } else if (want == DT_BFLOAT16) {
    py::object bf16 = Bfloat16Dtype();
    if (bf16.is_none()) return Bfloat16FromFloats(value, what);
    array = np.attr("asarray")(value, bf16);
  } else if (want != DT_INVALID) {
    const std::string name = NumpyDtypeName(want);
    if (name.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": NumPy has no dtype for ", DataTypeString(want)));
    }
    array = np.attr("asarray")(value, DtypeOf(want));
  } else {
    array = np.attr("asarray")(value);
  }
  const DataType dtype = FromNumpy(array.dtype());
  if (dtype == DT_INVALID) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": graphrun holds no tensor of NumPy dtype ",
        py::str(array.dtype()).cast<std::string>()));
  }
  if (dtype == DT_STRING) return StringTensor(array, what);
  absl::StatusOr<TensorShape> shape = ShapeOf(array, what);
  if (!shape.ok()) return shape.status();
  const bool native = py::detail::array_descriptor_proxy(array.dtype().ptr())->byteorder != '>';
  const bool contiguous = (array.flags() & py::array::c_style) != 0;
  void* data = const_cast<void*>(array.data());
  // Read-only memory (np.frombuffer over bytes, a read-only mmap) is
  // copied: a fetch aliasing the feed would hand it back writable.
  if (native && contiguous && array.writeable() && shape->num_elements() > 0 &&
      reinterpret_cast<uintptr_t>(data) % kTensorAlignment == 0) {
    PyObject* owner = array.ptr();
    Py_INCREF(owner);
    absl::StatusOr<Tensor> wrapped =
        Tensor::WrapHostMemory(dtype, *shape, data, [owner] { Release(owner); });
    if (wrapped.ok()) return wrapped;
    Py_DECREF(owner);  // not wrapped: the release will never run
  }
  absl::StatusOr<Tensor> t =
      Tensor::Allocate(HostAllocator(), dtype, *shape, TensorBuffer::Init::kUninitialized);
  if (!t.ok()) return t.status();
  if (t->NumElements() == 0) return t;
  py::array copy = np.attr("ascontiguousarray")(array, array.dtype().attr("newbyteorder")("="));
  std::memcpy(t->raw_data(), copy.data(), t->TotalBytes());
  return t;
}

// C-order strides in bytes, given explicitly: pybind11 would compute them
// from NumPy 1's dtype layout.
std::vector<ssize_t> RowMajorStrides(const std::vector<ssize_t>& shape, ssize_t itemsize) {
  std::vector<ssize_t> strides(shape.size());
  ssize_t stride = itemsize;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= std::max<ssize_t>(shape[i], 1);
  }
  return strides;
}

}  // namespace

std::string NumpyDtypeName(DataType dtype) {
  switch (dtype) {
    case DT_HALF: return "float16";
    case DT_FLOAT: return "float32";
    case DT_DOUBLE: return "float64";
    case DT_BFLOAT16: return "bfloat16";
    case DT_INT8: return "int8";
    case DT_INT16: return "int16";
    case DT_INT32: return "int32";
    case DT_INT64: return "int64";
    case DT_UINT8: return "uint8";
    case DT_UINT16: return "uint16";
    case DT_UINT32: return "uint32";
    case DT_UINT64: return "uint64";
    case DT_BOOL: return "bool";
    case DT_COMPLEX64: return "complex64";
    case DT_COMPLEX128: return "complex128";
    case DT_STRING: return "object";
    default: return "";
  }
}

py::object ToArray(Tensor t, const std::string& what) {
  ReleasePending();
  const py::module_& np = Numpy();
  std::vector<ssize_t> shape(t.shape().dim_sizes().begin(), t.shape().dim_sizes().end());
  if (t.NumElements() > 0 && t.buffer_allocator() != nullptr &&
      !t.buffer_allocator()->IsHostMemory()) {
    throw StatusError(absl::InternalError(absl::StrCat(what, ": the fetched tensor is in device memory")));
  }
  if (t.dtype() == DT_STRING) {
    py::array out = np.attr("empty")(shape, "object");
    auto** slots = static_cast<PyObject**>(out.mutable_data());
    absl::Span<const std::string> values = t.flat<std::string>();
    for (size_t i = 0; i < values.size(); ++i) {
      PyObject* bytes = PyBytes_FromStringAndSize(values[i].data(), values[i].size());
      if (bytes == nullptr) throw py::error_already_set();
      Py_XDECREF(slots[i]);
      slots[i] = bytes;
    }
    return std::move(out);
  }
  if (t.dtype() == DT_BFLOAT16) {
    py::object bf16 = Bfloat16Dtype();
    if (bf16.is_none()) {
      py::array_t<float> out(shape, RowMajorStrides(shape, sizeof(float)));
      float* dst = out.mutable_data();
      absl::Span<const bfloat16> src = t.flat<bfloat16>();
      for (size_t i = 0; i < src.size(); ++i) dst[i] = static_cast<float>(src[i]);
      return std::move(out);
    }
  }
  const std::string name = NumpyDtypeName(t.dtype());
  if (name.empty()) {
    throw StatusError(absl::InvalidArgumentError(absl::StrCat(
        what, ": a ", DataTypeString(t.dtype()), " tensor has no NumPy value (fetch what it holds)")));
  }
  // bfloat16 travels as uint16 and is viewed as ml_dtypes' type at the end.
  const bool bf16 = t.dtype() == DT_BFLOAT16;
  py::dtype dtype = DtypeOf(bf16 ? DT_UINT16 : t.dtype());
  py::array out;
  if (t.RefCountIsOne() && t.NumElements() > 0) {
    // The array takes the buffer over: the capsule keeps it alive.
    void* data = t.raw_data();
    auto* owner = new Tensor(std::move(t));
    py::capsule keep(owner, [](void* p) {
      delete static_cast<Tensor*>(p);
      ReleasePending();  // the GIL is held here: a fed array it kept goes now
    });
    out = py::array(dtype, shape, RowMajorStrides(shape, DataTypeSize(owner->dtype())), data, keep);
  } else {
    out = py::array(dtype, shape, RowMajorStrides(shape, DataTypeSize(t.dtype())));
    if (t.NumElements() > 0) std::memcpy(out.mutable_data(), t.raw_data(), t.TotalBytes());
  }
  if (bf16) return out.attr("view")(Bfloat16Dtype());
  return std::move(out);
}

void ReleasePending() {
  std::vector<PyObject*> drop;
  {
    absl::MutexLock lock(&pending_mu);
    drop.swap(Pending());
  }
  for (PyObject* object : drop) Py_DECREF(object);
}

}  // namespace python
}  // namespace graphrun
