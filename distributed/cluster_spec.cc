#include "distributed/cluster_spec.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "graph/graph_io.h"
#include "graph/status_macros.h"

namespace graphrun {
namespace distributed {
namespace {

using google::protobuf::Struct;
using google::protobuf::Value;

// Quoted for an error message, bytes outside printable ASCII escaped.
std::string Quote(absl::string_view text) {
  std::string out = "'";
  for (char c : text) {
    if (absl::ascii_isprint(c)) {
      out.push_back(c);
    } else {
      absl::StrAppend(
          &out, "\\x",
          absl::Hex(static_cast<unsigned char>(c), absl::kZeroPad2));
    }
  }
  out.push_back('\'');
  return out;
}

bool IsJobName(absl::string_view name) {
  if (name.empty() || !absl::ascii_isalpha(name[0])) return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(c) && c != '_') return false;
  }
  return true;
}

// Digits only, at most INT_MAX.
std::optional<int> ParseIndex(absl::string_view text) {
  if (text.empty() || text.size() > 10) return std::nullopt;
  for (char c : text) {
    if (!absl::ascii_isdigit(c)) return std::nullopt;
  }
  const long long value = std::stoll(std::string(text));
  if (value > INT_MAX) return std::nullopt;
  return static_cast<int>(value);
}

const char* KindName(const Value& value) {
  switch (value.kind_case()) {
    case Value::kNullValue:
      return "null";
    case Value::kNumberValue:
      return "a number";
    case Value::kStringValue:
      return "a string";
    case Value::kBoolValue:
      return "a boolean";
    case Value::kStructValue:
      return "an object";
    case Value::kListValue:
      return "a list";
    default:
      return "nothing";
  }
}

// Field names in sorted order, so errors name the same field every run.
std::vector<std::string> SortedKeys(const Struct& object) {
  std::vector<std::string> keys;
  for (const auto& field : object.fields()) keys.push_back(field.first);
  std::sort(keys.begin(), keys.end());
  return keys;
}

// Parses any JSON text. Protobuf's message is "what went wrong", then the
// text around the fault and a caret on later lines; they become one line.
absl::StatusOr<Value> ParseJson(absl::string_view json,
                                absl::string_view what) {
  Value value;
  const auto status = google::protobuf::util::JsonStringToMessage(
      std::string(json), &value, google::protobuf::util::JsonParseOptions());
  if (status.ok()) return value;
  const std::string full_message(status.message());
  const std::vector<absl::string_view> lines =
      absl::StrSplit(full_message, '\n');
  std::string message(lines[0]);
  if (lines.size() >= 3) {
    const size_t caret = lines[2].find('^');
    if (caret != absl::string_view::npos && caret <= lines[1].size()) {
      const absl::string_view near = lines[1].substr(caret, 24);
      absl::StrAppend(&message, near.empty()
                                    ? " (at the end of the text)"
                                    : absl::StrCat(" (at ", Quote(near), ")"));
    }
  }
  return absl::InvalidArgumentError(
      absl::StrCat(what, ": malformed JSON: ", message));
}

absl::StatusOr<std::string> AddressFromJson(const Value& value,
                                            absl::string_view context) {
  if (value.kind_case() != Value::kStringValue) {
    return absl::InvalidArgumentError(absl::StrCat(
        context, ": expected a \"host:port\" string, got ", KindName(value)));
  }
  return value.string_value();
}

// A ClusterSpec object: {"job": ["host:port", ...] or {"index": "host:port"}}.
absl::StatusOr<ClusterSpec> ClusterFromJson(const Struct& object,
                                            absl::string_view what) {
  std::map<std::string, ClusterSpec::Tasks> jobs;
  for (const std::string& job : SortedKeys(object)) {
    const Value& tasks = object.fields().at(job);
    const std::string context = absl::StrCat(what, ": job ", Quote(job));
    if (!IsJobName(job)) {
      return absl::InvalidArgumentError(absl::StrCat(
          context, ": not a job name (expected [A-Za-z][A-Za-z0-9_]*)"));
    }
    ClusterSpec::Tasks& out = jobs[job];
    if (tasks.kind_case() == Value::kListValue) {
      const auto& list = tasks.list_value().values();
      for (int i = 0; i < list.size(); ++i) {
        GR_ASSIGN_OR_RETURN(
            out[i],
            AddressFromJson(list[i], absl::StrCat(context, "[", i, "]")));
      }
    } else if (tasks.kind_case() == Value::kStructValue) {
      for (const std::string& key : SortedKeys(tasks.struct_value())) {
        const std::string task_context =
            absl::StrCat(context, " key ", Quote(key));
        const std::optional<int> index = ParseIndex(key);
        if (!index) {
          return absl::InvalidArgumentError(absl::StrCat(
              task_context,
              ": a task index must be a non-negative decimal integer"));
        }
        if (out.count(*index)) {
          return absl::InvalidArgumentError(
              absl::StrCat(task_context, ": task ", *index, " is given twice"));
        }
        GR_ASSIGN_OR_RETURN(
            out[*index], AddressFromJson(tasks.struct_value().fields().at(key),
                                         task_context));
      }
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          context,
          ": expected a list of \"host:port\" or an object of task index -> "
          "\"host:port\", got ",
          KindName(tasks)));
    }
  }
  return ClusterSpec::Create(std::move(jobs), what);
}

absl::StatusOr<int> TaskIndexFromJson(const Value& value,
                                      absl::string_view context) {
  if (value.kind_case() == Value::kNumberValue) {
    const double number = value.number_value();
    if (number >= 0 && number <= INT_MAX && std::floor(number) == number) {
      return static_cast<int>(number);
    }
    return absl::InvalidArgumentError(
        absl::StrCat(context, ": ", number, " is not a non-negative integer"));
  }
  if (value.kind_case() == Value::kStringValue) {
    if (std::optional<int> index = ParseIndex(value.string_value())) {
      return *index;
    }
    return absl::InvalidArgumentError(
        absl::StrCat(context, ": ", Quote(value.string_value()),
                     " is not a non-negative integer"));
  }
  return absl::InvalidArgumentError(absl::StrCat(
      context, ": expected a non-negative integer, got ", KindName(value)));
}

// "0..2" for dense tasks, "0, 3, 7" for sparse ones, "none" for none.
std::string DescribeTasks(const ClusterSpec::Tasks& tasks) {
  if (tasks.empty()) return "no tasks";
  if (tasks.rbegin()->first == static_cast<int>(tasks.size()) - 1) {
    return absl::StrCat(tasks.size(), " tasks (0..", tasks.size() - 1, ")");
  }
  std::vector<int> indices;
  for (const auto& task : tasks) indices.push_back(task.first);
  return absl::StrCat("tasks ", absl::StrJoin(indices, ", "));
}

}  // namespace

std::string TaskDeviceName(const TaskRef& task) {
  return absl::StrCat("/job:", task.job, "/replica:0/task:", task.index);
}

absl::string_view TaskOfDevice(absl::string_view device) {
  const size_t p = device.find("/device:");
  return p == absl::string_view::npos ? device : device.substr(0, p);
}

absl::Status ValidateAddress(absl::string_view address) {
  const std::string quoted = Quote(address);
  absl::string_view host;
  absl::string_view port;
  if (address.empty()) {
    return absl::InvalidArgumentError(
        "address is empty (expected \"host:port\")");
  }
  if (absl::StrContains(address, "://")) {
    return absl::InvalidArgumentError(
        absl::StrCat("address ", quoted,
                     " has a URL scheme (expected \"host:port\" alone)"));
  }
  if (address.front() == '[') {
    const size_t close = address.find(']');
    if (close == absl::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("address ", quoted,
                       " has '[' without ']' (expected \"[IPv6]:port\")"));
    }
    host = address.substr(1, close - 1);
    if (host.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("address ", quoted, " has an empty host"));
    }
    for (char c : host) {
      if (!absl::ascii_isxdigit(c) && c != ':' && c != '.') {
        return absl::InvalidArgumentError(absl::StrCat(
            "address ", quoted, ": ", Quote(host), " is not an IPv6 address"));
      }
    }
    absl::string_view rest = address.substr(close + 1);
    if (!absl::ConsumePrefix(&rest, ":")) {
      return absl::InvalidArgumentError(absl::StrCat(
          "address ", quoted, " has no port (expected \"[IPv6]:port\")"));
    }
    port = rest;
  } else {
    const size_t colon = address.rfind(':');
    if (colon == absl::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat(
          "address ", quoted, " has no port (expected \"host:port\")"));
    }
    host = address.substr(0, colon);
    port = address.substr(colon + 1);
    if (host.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("address ", quoted, " has an empty host"));
    }
    if (host.find(':') != absl::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat(
          "address ", quoted,
          " has more than one ':' (write IPv6 addresses as \"[addr]:port\")"));
    }
    for (char c : host) {
      if (!absl::ascii_isalnum(c) && c != '-' && c != '.' && c != '_') {
        return absl::InvalidArgumentError(
            absl::StrCat("address ", quoted, ": host has character ",
                         Quote(absl::string_view(&c, 1)),
                         " (expected letters, digits, '-', '.', '_')"));
      }
    }
  }
  int port_number = 0;
  const bool digits = !port.empty() && port.size() <= 5 &&
                      std::all_of(port.begin(), port.end(), [](char c) {
                        return absl::ascii_isdigit(c);
                      });
  if (!digits || !absl::SimpleAtoi(port, &port_number) || port_number < 1 ||
      port_number > 65535) {
    return absl::InvalidArgumentError(absl::StrCat(
        "address ", quoted, ": port ", Quote(port), " is not in 1..65535"));
  }
  return absl::OkStatus();
}

absl::StatusOr<ClusterSpec> ClusterSpec::Create(
    std::map<std::string, Tasks> jobs, absl::string_view what) {
  std::map<std::string, TaskRef> owners;  // address -> task
  for (const auto& [job, tasks] : jobs) {
    if (!IsJobName(job)) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": job ", Quote(job),
                       ": not a job name (expected [A-Za-z][A-Za-z0-9_]*)"));
    }
    for (const auto& [index, address] : tasks) {
      const std::string context =
          absl::StrCat(what, ": job ", Quote(job), " task ", index);
      if (index < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat(context, ": negative task index"));
      }
      GR_RETURN_IF_ERROR(WithContext(ValidateAddress(address), context));
      const auto [it, inserted] = owners.emplace(address, TaskRef{job, index});
      if (!inserted) {
        return absl::InvalidArgumentError(
            absl::StrCat(context, ": address ", Quote(address), " is also job ",
                         Quote(it->second.job), " task ", it->second.index,
                         "'s (each task needs its own host:port)"));
      }
    }
  }
  ClusterSpec spec;
  spec.jobs_ = std::move(jobs);
  return spec;
}

absl::StatusOr<ClusterSpec> ClusterSpec::FromLists(
    const std::map<std::string, std::vector<std::string>>& jobs,
    absl::string_view what) {
  std::map<std::string, Tasks> indexed;
  for (const auto& [job, addresses] : jobs) {
    Tasks& tasks = indexed[job];
    for (size_t i = 0; i < addresses.size(); ++i) tasks[i] = addresses[i];
  }
  return Create(std::move(indexed), what);
}

std::vector<std::string> ClusterSpec::JobNames() const {
  std::vector<std::string> names;
  for (const auto& job : jobs_) names.push_back(job.first);
  return names;
}

bool ClusterSpec::HasJob(absl::string_view job) const {
  return jobs_.count(std::string(job)) > 0;
}

int ClusterSpec::NumTasks(absl::string_view job) const {
  const auto it = jobs_.find(std::string(job));
  return it == jobs_.end() ? 0 : static_cast<int>(it->second.size());
}

int ClusterSpec::TotalTasks() const {
  int total = 0;
  for (const auto& job : jobs_) total += job.second.size();
  return total;
}

std::vector<TaskRef> ClusterSpec::AllTasks() const {
  std::vector<TaskRef> tasks;
  for (const auto& [job, job_tasks] : jobs_) {
    for (const auto& task : job_tasks) tasks.push_back({job, task.first});
  }
  return tasks;
}

absl::StatusOr<std::string> ClusterSpec::TaskAddress(
    const TaskRef& task) const {
  const auto job = jobs_.find(task.job);
  if (job == jobs_.end()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "no job ", Quote(task.job), " in the cluster (jobs: ",
        jobs_.empty() ? "none" : absl::StrJoin(JobNames(), ", "), ")"));
  }
  const auto it = job->second.find(task.index);
  if (it == job->second.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("task index ", task.index, " is out of range: job ",
                     Quote(task.job), " has ", DescribeTasks(job->second)));
  }
  return it->second;
}

ClusterSpec ClusterSpec::WithoutJob(absl::string_view job) const {
  ClusterSpec copy = *this;
  copy.jobs_.erase(std::string(job));
  return copy;
}

ClusterSpec ClusterSpec::OnlyJob(absl::string_view job) const {
  ClusterSpec copy;
  const auto it = jobs_.find(std::string(job));
  if (it != jobs_.end()) copy.jobs_.insert(*it);
  return copy;
}

std::string ClusterSpec::ToJson() const {
  std::vector<std::string> jobs;
  for (const auto& [job, tasks] : jobs_) {
    const bool dense = tasks.empty() || tasks.rbegin()->first ==
                                            static_cast<int>(tasks.size()) - 1;
    std::vector<std::string> entries;
    for (const auto& [index, address] : tasks) {
      // Names and addresses are validated: nothing in them needs escaping.
      entries.push_back(
          dense ? absl::StrCat("\"", address, "\"")
                : absl::StrCat("\"", index, "\": \"", address, "\""));
    }
    jobs.push_back(absl::StrCat("\"", job, "\": ", dense ? "[" : "{",
                                absl::StrJoin(entries, ", "),
                                dense ? "]" : "}"));
  }
  return absl::StrCat("{", absl::StrJoin(jobs, ", "), "}");
}

absl::StatusOr<ClusterSpec> ParseClusterSpecJson(absl::string_view json,
                                                 absl::string_view what) {
  GR_ASSIGN_OR_RETURN(Value root, ParseJson(json, what));
  if (root.kind_case() != Value::kStructValue) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": expected an object of job name -> tasks, got ",
                     KindName(root)));
  }
  GR_ASSIGN_OR_RETURN(ClusterSpec cluster,
                      ClusterFromJson(root.struct_value(), what));
  if (cluster.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": the cluster has no tasks"));
  }
  return cluster;
}

absl::StatusOr<ClusterSpec> LoadClusterSpecFile(const std::string& path) {
  GR_ASSIGN_OR_RETURN(std::string json, ReadFileToString(path));
  return ParseClusterSpecJson(json, path);
}

absl::StatusOr<std::string> ResolvedCluster::OwnAddress() const {
  if (!task) {
    return absl::FailedPreconditionError(
        "this process has no task in the cluster");
  }
  absl::StatusOr<std::string> address = cluster.TaskAddress(*task);
  if (!address.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat(TaskDeviceName(*task), ": ", address.status().message()));
  }
  return address;
}

ClusterSpec TaskCluster(const ClusterSpec& cluster, const TaskRef& task) {
  if (task.job == "evaluator") return cluster.OnlyJob("evaluator");
  return cluster.WithoutJob("evaluator");
}

bool IsChief(const ClusterSpec& cluster, const TaskRef& task) {
  if (task.job == "chief" || task.job == "evaluator") return true;
  return task.job == "worker" && task.index == 0 && !cluster.HasJob("chief");
}

absl::StatusOr<ResolvedCluster> ParseTfConfig(absl::string_view json,
                                              absl::string_view what) {
  GR_ASSIGN_OR_RETURN(Value root, ParseJson(json, what));
  if (root.kind_case() != Value::kStructValue) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": expected an object with \"cluster\" and \"task\", got ",
        KindName(root)));
  }
  const auto& fields = root.struct_value().fields();
  ResolvedCluster resolved;

  if (const auto it = fields.find("cluster"); it != fields.end()) {
    const std::string context = absl::StrCat(what, ": cluster");
    if (it->second.kind_case() != Value::kStructValue) {
      return absl::InvalidArgumentError(absl::StrCat(
          context, ": expected an object of job name -> tasks, got ",
          KindName(it->second)));
    }
    GR_ASSIGN_OR_RETURN(resolved.cluster,
                        ClusterFromJson(it->second.struct_value(), context));
    for (const char* job : {"chief", "evaluator"}) {
      if (resolved.cluster.NumTasks(job) > 1) {
        return absl::InvalidArgumentError(absl::StrCat(
            context, ": job '", job, "' has ", resolved.cluster.NumTasks(job),
            " tasks; there is at most one"));
      }
    }
  }

  if (const auto it = fields.find("rpc_layer"); it != fields.end()) {
    if (it->second.kind_case() != Value::kStringValue) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, ": rpc_layer: expected a string, got ", KindName(it->second)));
    }
    resolved.rpc_layer = it->second.string_value();
  }

  const auto task_it = fields.find("task");
  if (task_it == fields.end()) return resolved;
  if (task_it->second.kind_case() != Value::kStructValue) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": task: expected an object with \"type\" and \"index\", got ",
        KindName(task_it->second)));
  }
  const auto& task_fields = task_it->second.struct_value().fields();
  if (task_fields.empty()) return resolved;
  const auto type = task_fields.find("type");
  if (type == task_fields.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": task.type is missing"));
  }
  if (type->second.kind_case() != Value::kStringValue) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": task.type: expected a job name string, got ",
                     KindName(type->second)));
  }
  TaskRef task{type->second.string_value(), 0};
  if (!IsJobName(task.job)) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": task.type ", Quote(task.job),
                     " is not a job name (expected [A-Za-z][A-Za-z0-9_]*)"));
  }
  const auto index = task_fields.find("index");
  if (index == task_fields.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": task.index is missing"));
  }
  GR_ASSIGN_OR_RETURN(
      task.index,
      TaskIndexFromJson(index->second, absl::StrCat(what, ": task.index")));
  if (!resolved.cluster.HasJob(task.job)) {
    // An evaluator may stand outside the training cluster.
    if (task.job != "evaluator") {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": task.type ", Quote(task.job),
                       " is not a job of the cluster (jobs: ",
                       resolved.cluster.jobs().empty()
                           ? "none"
                           : absl::StrJoin(resolved.cluster.JobNames(), ", "),
                       ")"));
    }
  } else if (const auto address = resolved.cluster.TaskAddress(task);
             !address.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": task.index: ", address.status().message()));
  }
  resolved.task = std::move(task);
  return resolved;
}

absl::StatusOr<ResolvedCluster> TfConfigFromEnvironment() {
  const char* value = std::getenv("TF_CONFIG");
  if (value == nullptr) {
    return absl::NotFoundError("TF_CONFIG is not set");
  }
  return ParseTfConfig(value, "TF_CONFIG");
}

}  // namespace distributed
}  // namespace graphrun
