#include "python/status.h"

#include <string>

namespace graphrun {
namespace python {
namespace py = pybind11;

void SetPythonError(const absl::Status& s) {
  const std::string message(s.message());
  PyObject* text = PyUnicode_DecodeUTF8(message.data(), static_cast<Py_ssize_t>(message.size()),
                                        "backslashreplace");
  if (text == nullptr) {
    PyErr_SetString(PyExc_RuntimeError, "graphrun error (message not decodable)");
    return;
  }
  py::object msg = py::reinterpret_steal<py::object>(text);
  try {
    py::object exc = py::module_::import("graphrun.errors")
                         .attr("_from_status")(static_cast<int>(s.code()), msg);
    PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc.ptr())), exc.ptr());
  } catch (py::error_already_set& e) {
    e.restore();
    PyErr_Clear();
    PyErr_SetObject(PyExc_RuntimeError, msg.ptr());
  }
}

void RegisterStatusTranslator() {
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const StatusError& e) {
      SetPythonError(e.status);
    }
  });
}

}  // namespace python
}  // namespace graphrun
