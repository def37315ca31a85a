// TensorFlow device names: parsing, printing, matching and merging.
//
// A full name is /job:J/replica:R/task:T/device:TYPE:ID. A device spec (the
// `device` attribute of a node) may leave out any field or use `*`; the
// placer matches specs against the full names in a DeviceSet. Parsing
// accepts what TensorFlow's DeviceNameUtils accepts, including the legacy
// forms /cpu:0, /GPU:1 and bare local names (GPU:0, cpu:*, CPU).
//
// Thread-compatible: plain values and pure functions.
#ifndef GRAPHRUN_PLACER_DEVICE_NAME_H_
#define GRAPHRUN_PLACER_DEVICE_NAME_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace graphrun {
namespace placer {

// A parsed name or spec. A field whose has_* is false is absent (or `*`)
// and matches anything. `type` is upper case ("CPU", "GPU", "XLA_GPU").
struct DeviceName {
  bool has_job = false;
  bool has_replica = false;
  bool has_task = false;
  bool has_type = false;
  bool has_id = false;
  std::string job;
  int replica = 0;
  int task = 0;
  std::string type;
  int id = 0;

  // Field-by-field equality that ignores the values of absent fields.
  bool operator==(const DeviceName& other) const;
  bool operator!=(const DeviceName& other) const { return !(*this == other); }
};

// Parses a full name, a partial spec or a legacy/local form. Components may
// come in any order, each at most once; "" and "/" match every device.
//   "/job:localhost/replica:0/task:0/device:GPU:0"   full
//   "/job:worker/task:1", "/device:GPU:*", "/replica:0"   partial
//   "/gpu:0", "/CPU:*", "/device:gpu:0"   legacy / lower case
//   "GPU:0", "gpu:*", "CPU"   local (no leading '/')
// InvalidArgument naming the string and what was expected ("/job:",
// "/task:x", "/device:GPU:-1", "/job:a/job:b", trailing "/").
absl::StatusOr<DeviceName> ParseDeviceName(absl::string_view name);

// Canonical form, fields in the order job, replica, task, device, absent
// ones left out: "/job:localhost/replica:0/task:0/device:GPU:0",
// "/job:worker/device:GPU:*". An absent id prints as `*` when the type is
// present and is left out otherwise; an empty spec prints as "".
std::string DeviceNameToString(const DeviceName& name);

// True when every field present in `spec` is present in `device` with the
// same value.
bool Matches(const DeviceName& spec, const DeviceName& device);

// True when job, replica, task, type and id are all present.
bool IsCompleteDeviceName(const DeviceName& name);

// Combines `other` into `*target` (as for colocated nodes that request
// devices): fields present only in `other` are copied. InvalidArgument
// naming both specs and the field when both have a field with different
// values; `*target` is unchanged then.
absl::Status MergeDeviceNames(DeviceName* target, const DeviceName& other);

// "/job:J/replica:R/task:T" (the address space of a device); absent fields
// are left out.
std::string TaskName(const DeviceName& name);

// True when both names have job, replica and task, all equal.
bool SameTask(const DeviceName& a, const DeviceName& b);

// Parses `full_name` and returns its canonical form ("/gpu:0" style parts
// become "/device:GPU:0"). InvalidArgument when it does not parse or any of
// job, replica, task, type, id is missing (the message lists them).
absl::StatusOr<std::string> CanonicalizeDeviceName(absl::string_view full_name);

}  // namespace placer
}  // namespace graphrun

#endif  // GRAPHRUN_PLACER_DEVICE_NAME_H_
