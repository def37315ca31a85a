// Status propagation macros (Debian's Abseil has no public equivalents).
//
//   GR_RETURN_IF_ERROR(DoThing());
//   GR_ASSIGN_OR_RETURN(Tensor t, Tensor::FromProto(proto));
#ifndef GRAPHRUN_GRAPH_STATUS_MACROS_H_
#define GRAPHRUN_GRAPH_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

#define GR_RETURN_IF_ERROR(expr)                   \
  do {                                             \
    ::absl::Status gr_status_ = (expr);            \
    if (!gr_status_.ok()) return gr_status_;       \
  } while (0)

#define GR_CONCAT_INNER_(a, b) a##b
#define GR_CONCAT_(a, b) GR_CONCAT_INNER_(a, b)

#define GR_ASSIGN_OR_RETURN(lhs, rexpr) \
  GR_ASSIGN_OR_RETURN_IMPL_(GR_CONCAT_(gr_statusor_, __LINE__), lhs, rexpr)

#define GR_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, rexpr) \
  auto statusor = (rexpr);                              \
  if (!statusor.ok()) return statusor.status();         \
  lhs = std::move(statusor).value()

namespace graphrun {

// Returns `status` with `context` prepended to its message ("context: msg"),
// keeping the code. OK stays OK.
inline absl::Status WithContext(const absl::Status& status,
                                absl::string_view context) {
  if (status.ok()) return status;
  return absl::Status(status.code(),
                      absl::StrCat(context, ": ", status.message()));
}

}  // namespace graphrun

#endif  // GRAPHRUN_GRAPH_STATUS_MACROS_H_
