// absl::Status errors for the Python module: thrown as StatusError and
// raised as graphrun.errors' exception for the code, with the message
// decoded leniently (a message quoting non-UTF-8 bytes stays readable).
#ifndef GRAPHRUN_PYTHON_STATUS_H_
#define GRAPHRUN_PYTHON_STATUS_H_

#include <exception>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "pybind11/pybind11.h"

namespace graphrun {
namespace python {

struct StatusError : std::exception {
  explicit StatusError(absl::Status s) : status(std::move(s)) {}
  const char* what() const noexcept override { return "graphrun status"; }
  absl::Status status;
};

inline void Check(const absl::Status& s) {
  if (!s.ok()) throw StatusError(s);
}

template <typename T>
T Unwrap(absl::StatusOr<T> v) {
  if (!v.ok()) throw StatusError(v.status());
  return *std::move(v);
}

// Sets the Python error for `s` (graphrun.errors._from_status); falls back
// to RuntimeError if that module cannot be reached.
void SetPythonError(const absl::Status& s);

// The translator that turns StatusError into SetPythonError.
void RegisterStatusTranslator();

}  // namespace python
}  // namespace graphrun

#endif  // GRAPHRUN_PYTHON_STATUS_H_
