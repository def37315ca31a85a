#include "placer/device_name.h"

#include <climits>
#include <cstdint>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"

namespace graphrun {
namespace placer {
namespace {

bool IsAlpha(char c) {
  return absl::ascii_isalpha(static_cast<unsigned char>(c));
}
bool IsIdentifierChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// Parses one name; holds the original text for error messages.
class NameParser {
 public:
  explicit NameParser(absl::string_view name) : name_(name), rest_(name) {}

  absl::StatusOr<DeviceName> Parse() {
    if (name_.empty() || name_ == "/") return out_;
    if (name_[0] != '/') return ParseLocal();
    while (!rest_.empty()) {
      if (absl::ConsumePrefix(&rest_, "/job:")) {
        if (!FirstTime(&seen_job_, "/job:")) return error_;
        if (!ConsumeStar(&out_.has_job) && !ConsumeIdentifier("/", &out_.job)) {
          return Error(
              "expected a job name ([A-Za-z][A-Za-z0-9_]*) or '*' "
              "after '/job:'");
        }
      } else if (absl::ConsumePrefix(&rest_, "/replica:")) {
        if (!FirstTime(&seen_replica_, "/replica:")) return error_;
        if (!ConsumeStar(&out_.has_replica) && !ConsumeNumber(&out_.replica)) {
          return Error(
              "expected a replica number (non-negative integer) or "
              "'*' after '/replica:'");
        }
      } else if (absl::ConsumePrefix(&rest_, "/task:")) {
        if (!FirstTime(&seen_task_, "/task:")) return error_;
        if (!ConsumeStar(&out_.has_task) && !ConsumeNumber(&out_.task)) {
          return Error(
              "expected a task number (non-negative integer) or '*' "
              "after '/task:'");
        }
      } else if (absl::ConsumePrefix(&rest_, "/device:")) {
        if (!FirstTime(&seen_device_, "/device:")) return error_;
        if (!ConsumeStar(&out_.has_type) &&
            !ConsumeIdentifier("/:", &out_.type)) {
          return Error(
              "expected a device type ([A-Za-z][A-Za-z0-9_]*) or "
              "'*' after '/device:'");
        }
        if (absl::ConsumePrefix(&rest_, ":") && !ConsumeId()) {
          return Error(absl::StrCat(
              "expected a device id (non-negative integer) or '*' after "
              "'/device:",
              out_.has_type ? out_.type : "*", ":'"));
        }
      } else if (ConsumeLegacyPrefix()) {
        if (!FirstTime(&seen_device_, "/device:")) return error_;
        if (!ConsumeId()) {
          return Error(
              absl::StrCat("expected a device id (non-negative "
                           "integer) or '*' after '/",
                           out_.type, ":'"));
        }
      } else {
        return Error(absl::StrCat(
            "expected /job:, /replica:, /task:, /device: (or legacy /cpu:, "
            "/gpu:) at '",
            rest_, "'"));
      }
    }
    return out_;
  }

 private:
  // TYPE[:ID|:*], e.g. "GPU:0", "gpu:*", "CPU".
  absl::StatusOr<DeviceName> ParseLocal() {
    const char* kExpected =
        "expected a local device name TYPE[:ID] such as 'GPU:0' or 'CPU', "
        "or a name starting with '/'";
    if (!ConsumeIdentifier(":", &out_.type)) return Error(kExpected);
    out_.has_type = true;
    if (absl::ConsumePrefix(&rest_, ":") && !ConsumeId()) {
      return Error(kExpected);
    }
    if (!rest_.empty()) return Error(kExpected);
    return out_;
  }

  bool ConsumeLegacyPrefix() {
    for (absl::string_view type : {"cpu", "CPU", "gpu", "GPU"}) {
      if (absl::ConsumePrefix(&rest_, absl::StrCat("/", type, ":"))) {
        out_.has_type = true;
        out_.type = absl::AsciiStrToUpper(type);
        return true;
      }
    }
    return false;
  }

  bool FirstTime(bool* seen, absl::string_view component) {
    if (*seen) {
      error_ = Error(absl::StrCat("'", component,
                                  "' given twice; each component may "
                                  "appear at most once"));
      return false;
    }
    *seen = true;
    return true;
  }

  // A "*" wildcard (followed by '/', ':' or the end) sets *has = false and
  // returns true; otherwise sets *has = true and returns false, and the
  // caller parses a value.
  bool ConsumeStar(bool* has) {
    const bool star = !rest_.empty() && rest_[0] == '*' &&
                      (rest_.size() == 1 || rest_[1] == '/' || rest_[1] == ':');
    if (star) rest_.remove_prefix(1);
    *has = !star;
    return star;
  }

  // [A-Za-z][A-Za-z0-9_]* up to one of `terminators` or the end.
  bool ConsumeIdentifier(absl::string_view terminators, std::string* out) {
    size_t end = rest_.find_first_of(terminators);
    if (end == absl::string_view::npos) end = rest_.size();
    absl::string_view word = rest_.substr(0, end);
    if (word.empty() || !IsAlpha(word[0])) return false;
    for (char c : word) {
      if (!IsIdentifierChar(c)) return false;
    }
    *out = std::string(word);
    rest_.remove_prefix(end);
    return true;
  }

  // Digits that fit in an int, followed by '/' or the end.
  bool ConsumeNumber(int* out) {
    size_t end = 0;
    int64_t value = 0;
    while (end < rest_.size() &&
           absl::ascii_isdigit(static_cast<unsigned char>(rest_[end]))) {
      value = value * 10 + (rest_[end] - '0');
      if (value > INT_MAX) return false;
      ++end;
    }
    if (end == 0 || (end < rest_.size() && rest_[end] != '/')) return false;
    *out = static_cast<int>(value);
    rest_.remove_prefix(end);
    return true;
  }

  // A device id or "*", after the ':' that follows the type.
  bool ConsumeId() {
    if (ConsumeStar(&out_.has_id)) return true;
    return ConsumeNumber(&out_.id);
  }

  absl::Status Error(absl::string_view expected) const {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid device name '", name_, "': ", expected));
  }

  const absl::string_view name_;
  absl::string_view rest_;
  DeviceName out_;
  bool seen_job_ = false;
  bool seen_replica_ = false;
  bool seen_task_ = false;
  bool seen_device_ = false;
  absl::Status error_;
};

}  // namespace

bool DeviceName::operator==(const DeviceName& other) const {
  return has_job == other.has_job && has_replica == other.has_replica &&
         has_task == other.has_task && has_type == other.has_type &&
         has_id == other.has_id && (!has_job || job == other.job) &&
         (!has_replica || replica == other.replica) &&
         (!has_task || task == other.task) &&
         (!has_type || type == other.type) && (!has_id || id == other.id);
}

absl::StatusOr<DeviceName> ParseDeviceName(absl::string_view name) {
  absl::StatusOr<DeviceName> parsed = NameParser(name).Parse();
  if (parsed.ok()) absl::AsciiStrToUpper(&parsed->type);
  return parsed;
}

std::string DeviceNameToString(const DeviceName& name) {
  std::string out;
  if (name.has_job) absl::StrAppend(&out, "/job:", name.job);
  if (name.has_replica) absl::StrAppend(&out, "/replica:", name.replica);
  if (name.has_task) absl::StrAppend(&out, "/task:", name.task);
  if (name.has_type || name.has_id) {
    absl::StrAppend(&out, "/device:", name.has_type ? name.type : "*", ":",
                    name.has_id ? absl::StrCat(name.id) : "*");
  }
  return out;
}

bool Matches(const DeviceName& spec, const DeviceName& device) {
  if (spec.has_job && (!device.has_job || spec.job != device.job)) {
    return false;
  }
  if (spec.has_replica &&
      (!device.has_replica || spec.replica != device.replica)) {
    return false;
  }
  if (spec.has_task && (!device.has_task || spec.task != device.task)) {
    return false;
  }
  if (spec.has_type && (!device.has_type || spec.type != device.type)) {
    return false;
  }
  if (spec.has_id && (!device.has_id || spec.id != device.id)) return false;
  return true;
}

bool IsCompleteDeviceName(const DeviceName& name) {
  return name.has_job && name.has_replica && name.has_task && name.has_type &&
         name.has_id;
}

absl::Status MergeDeviceNames(DeviceName* target, const DeviceName& other) {
  DeviceName merged = *target;
  std::vector<absl::string_view> conflicts;
  auto merge = [&conflicts](bool* has, auto* value, bool other_has,
                            const auto& other_value, absl::string_view field) {
    if (!other_has) return;
    if (*has && *value != other_value) {
      conflicts.push_back(field);
      return;
    }
    *has = true;
    *value = other_value;
  };
  merge(&merged.has_job, &merged.job, other.has_job, other.job, "job");
  merge(&merged.has_replica, &merged.replica, other.has_replica, other.replica,
        "replica");
  merge(&merged.has_task, &merged.task, other.has_task, other.task, "task");
  merge(&merged.has_type, &merged.type, other.has_type, other.type,
        "device type");
  merge(&merged.has_id, &merged.id, other.has_id, other.id, "device id");
  if (!conflicts.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot merge device specs '", DeviceNameToString(*target),
                     "' and '", DeviceNameToString(other), "': conflicting ",
                     absl::StrJoin(conflicts, ", ")));
  }
  *target = std::move(merged);
  return absl::OkStatus();
}

std::string TaskName(const DeviceName& name) {
  DeviceName task = name;
  task.has_type = false;
  task.has_id = false;
  return DeviceNameToString(task);
}

bool SameTask(const DeviceName& a, const DeviceName& b) {
  return a.has_job && a.has_replica && a.has_task && b.has_job &&
         b.has_replica && b.has_task && a.job == b.job &&
         a.replica == b.replica && a.task == b.task;
}

absl::StatusOr<std::string> CanonicalizeDeviceName(
    absl::string_view full_name) {
  absl::StatusOr<DeviceName> parsed = ParseDeviceName(full_name);
  if (!parsed.ok()) return parsed.status();
  std::vector<absl::string_view> missing;
  if (!parsed->has_job) missing.push_back("job");
  if (!parsed->has_replica) missing.push_back("replica");
  if (!parsed->has_task) missing.push_back("task");
  if (!parsed->has_type) missing.push_back("device type");
  if (!parsed->has_id) missing.push_back("device id");
  if (!missing.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", full_name, "' is not a complete device name (missing ",
        absl::StrJoin(missing, ", "),
        "); expected /job:J/replica:R/task:T/device:TYPE:ID"));
  }
  return DeviceNameToString(*parsed);
}

}  // namespace placer
}  // namespace graphrun
