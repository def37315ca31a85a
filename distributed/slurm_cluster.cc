// The Slurm resolver of cluster_spec.h: hostlist and tasks-per-node
// expansion, and the layout of a job step's ranks over its nodes.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <set>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "distributed/cluster_spec.h"
#include "graph/status_macros.h"

namespace graphrun {
namespace distributed {
namespace {

constexpr size_t kMaxHosts = 1000000;

std::string Quote(absl::string_view text) {
  return absl::StrCat("'", absl::CHexEscape(text), "'");
}

bool AllDigits(absl::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return absl::ascii_isdigit(c);
  });
}

// Non-negative, at most 9 digits (so sums and products stay in range).
std::optional<int> SmallNumber(absl::string_view text) {
  int value = 0;
  if (!AllDigits(text) || text.size() > 9 || !absl::SimpleAtoi(text, &value)) {
    return std::nullopt;
  }
  return value;
}

// "01-03,7" -> 01 02 03 7.
absl::StatusOr<std::vector<std::string>> ExpandRanges(
    absl::string_view ranges) {
  std::vector<std::string> out;
  for (absl::string_view range : absl::StrSplit(ranges, ',')) {
    const std::vector<absl::string_view> bounds = absl::StrSplit(range, '-');
    const std::optional<int> low = SmallNumber(bounds[0]);
    const std::optional<int> high =
        bounds.size() == 2 ? SmallNumber(bounds[1]) : low;
    if (bounds.size() > 2 || !low || !high) {
      return absl::InvalidArgumentError(
          absl::StrCat("range ", Quote(range),
                       " is not a number or two numbers joined by '-'"));
    }
    if (*low > *high) {
      return absl::InvalidArgumentError(
          absl::StrCat("range ", Quote(range), " goes backwards"));
    }
    if (out.size() + (*high - *low) >= kMaxHosts) {
      return absl::InvalidArgumentError(
          absl::StrCat("more than ", kMaxHosts, " names"));
    }
    const size_t width = bounds[0].size();
    for (int i = *low; i <= *high; ++i) {
      std::string number = absl::StrCat(i);
      if (number.size() < width) number.insert(0, width - number.size(), '0');
      out.push_back(std::move(number));
    }
  }
  return out;
}

// One name of a hostlist: literal text and bracketed ranges, expanded as a
// product in order ("a[1-2]b[3-4]" -> a1b3 a1b4 a2b3 a2b4).
absl::Status ExpandName(absl::string_view name, std::vector<std::string>* out) {
  std::vector<std::string> names = {""};
  while (!name.empty()) {
    const size_t open = name.find('[');
    const absl::string_view literal = name.substr(0, open);
    for (std::string& partial : names) absl::StrAppend(&partial, literal);
    if (open == absl::string_view::npos) break;
    const size_t close = name.find(']', open);
    GR_ASSIGN_OR_RETURN(std::vector<std::string> numbers,
                        ExpandRanges(name.substr(open + 1, close - open - 1)));
    if (names.size() * numbers.size() + out->size() > kMaxHosts) {
      return absl::InvalidArgumentError(
          absl::StrCat("more than ", kMaxHosts, " names"));
    }
    std::vector<std::string> product;
    for (const std::string& partial : names) {
      for (const std::string& number : numbers) {
        product.push_back(absl::StrCat(partial, number));
      }
    }
    names = std::move(product);
    name.remove_prefix(close + 1);
  }
  for (std::string& expanded : names) out->push_back(std::move(expanded));
  return absl::OkStatus();
}

// The first of `names` that is set, as (name, value).
std::optional<std::pair<std::string, std::string>> FirstSet(
    const EnvironmentLookup& environment,
    std::initializer_list<const char*> names) {
  for (const char* name : names) {
    if (std::optional<std::string> value = environment(name)) {
      return std::make_pair(std::string(name), *std::move(value));
    }
  }
  return std::nullopt;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ExpandSlurmHostlist(
    absl::string_view hostlist) {
  std::vector<std::string> hosts;
  // Split at commas outside brackets, checking the brackets on the way.
  size_t start = 0;
  bool in_brackets = false;
  for (size_t i = 0; i <= hostlist.size(); ++i) {
    const char c = i < hostlist.size() ? hostlist[i] : ',';
    if (c == '[' || c == ']') {
      if (in_brackets == (c == '[')) {
        return absl::InvalidArgumentError(
            absl::StrCat("hostlist ", Quote(hostlist), ": unbalanced '",
                         std::string(1, c), "' at offset ", i));
      }
      in_brackets = c == '[';
    } else if (c == ',' && (!in_brackets || i == hostlist.size())) {
      if (in_brackets) {
        return absl::InvalidArgumentError(
            absl::StrCat("hostlist ", Quote(hostlist), ": '[' without ']'"));
      }
      const absl::string_view name = hostlist.substr(start, i - start);
      if (name.empty()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "hostlist ", Quote(hostlist), ": empty name at offset ", start));
      }
      absl::Status status = ExpandName(name, &hosts);
      if (!status.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("hostlist ", Quote(hostlist), ": ", status.message()));
      }
      start = i + 1;
    }
  }
  return hosts;
}

absl::StatusOr<std::vector<int>> ExpandSlurmTasksPerNode(
    absl::string_view tasks_per_node) {
  std::vector<int> counts;
  for (absl::string_view part : absl::StrSplit(tasks_per_node, ',')) {
    absl::string_view count_text = part;
    int repeat = 1;
    if (const size_t paren = part.find('('); paren != absl::string_view::npos) {
      count_text = part.substr(0, paren);
      absl::string_view times = part.substr(paren);
      const std::optional<int> parsed =
          absl::ConsumePrefix(&times, "(x") && absl::ConsumeSuffix(&times, ")")
              ? SmallNumber(times)
              : std::nullopt;
      if (!parsed || *parsed < 1) {
        return absl::InvalidArgumentError(
            absl::StrCat("tasks per node ", Quote(tasks_per_node), ": ",
                         Quote(part), " is not N or N(xM) with M >= 1"));
      }
      repeat = *parsed;
    }
    const std::optional<int> count = SmallNumber(count_text);
    if (!count) {
      return absl::InvalidArgumentError(
          absl::StrCat("tasks per node ", Quote(tasks_per_node), ": ",
                       Quote(part), " is not N or N(xM)"));
    }
    if (counts.size() + repeat > kMaxHosts) {
      return absl::InvalidArgumentError(
          absl::StrCat("tasks per node ", Quote(tasks_per_node), ": more than ",
                       kMaxHosts, " nodes"));
    }
    counts.insert(counts.end(), repeat, *count);
  }
  return counts;
}

absl::StatusOr<ResolvedCluster> ResolveSlurmCluster(
    const SlurmOptions& options, const EnvironmentLookup& environment) {
  // This process's rank.
  const std::optional<std::string> procid = environment("SLURM_PROCID");
  if (!procid) {
    return absl::NotFoundError(
        "SLURM_PROCID is not set (not running as a task of a Slurm step?)");
  }
  const std::optional<int> rank = SmallNumber(*procid);
  if (!rank) {
    return absl::InvalidArgumentError(absl::StrCat(
        "SLURM_PROCID=", Quote(*procid), " is not a non-negative integer"));
  }

  // The nodes, each once.
  const auto nodelist =
      FirstSet(environment,
               {"SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST", "SLURM_NODELIST"});
  if (!nodelist) {
    return absl::NotFoundError(
        "none of SLURM_STEP_NODELIST, SLURM_JOB_NODELIST, SLURM_NODELIST is "
        "set");
  }
  absl::StatusOr<std::vector<std::string>> hosts =
      ExpandSlurmHostlist(nodelist->second);
  if (!hosts.ok()) return WithContext(hosts.status(), nodelist->first);
  std::set<absl::string_view> seen;
  for (const std::string& host : *hosts) {
    if (!seen.insert(host).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(nodelist->first, "=", Quote(nodelist->second),
                       " lists node ", Quote(host), " twice"));
    }
  }

  // Tasks on each node.
  std::vector<int> per_node;
  std::string per_node_source = "SlurmOptions.tasks_per_node";
  if (options.tasks_per_node > 0) {
    per_node.assign(hosts->size(), options.tasks_per_node);
  } else {
    const auto variable = FirstSet(
        environment, {"SLURM_STEP_TASKS_PER_NODE", "SLURM_TASKS_PER_NODE"});
    if (!variable) {
      return absl::NotFoundError(
          "neither SLURM_STEP_TASKS_PER_NODE nor SLURM_TASKS_PER_NODE is set "
          "(or set SlurmOptions.tasks_per_node)");
    }
    absl::StatusOr<std::vector<int>> counts =
        ExpandSlurmTasksPerNode(variable->second);
    if (!counts.ok()) return WithContext(counts.status(), variable->first);
    per_node = *std::move(counts);
    per_node_source =
        absl::StrCat(variable->first, "=", Quote(variable->second));
    if (per_node.size() != hosts->size()) {
      return absl::InvalidArgumentError(
          absl::StrCat(per_node_source, " describes ", per_node.size(),
                       " nodes but ", nodelist->first, "=",
                       Quote(nodelist->second), " lists ", hosts->size()));
    }
  }
  int64_t total = 0;
  int most_on_a_node = 0;
  for (int count : per_node) {
    total += count;
    most_on_a_node = std::max(most_on_a_node, count);
  }
  if (total > static_cast<int64_t>(kMaxHosts)) {
    return absl::InvalidArgumentError(absl::StrCat(
        per_node_source, " adds up to ", total, " tasks; at most ", kMaxHosts));
  }
  if (const auto ntasks =
          FirstSet(environment, {"SLURM_STEP_NUM_TASKS", "SLURM_NTASKS"})) {
    const std::optional<int> declared = SmallNumber(ntasks->second);
    if (!declared || *declared != total) {
      return absl::InvalidArgumentError(
          absl::StrCat(ntasks->first, "=", Quote(ntasks->second), " but ",
                       per_node_source, " adds up to ", total, " tasks"));
    }
  }
  if (*rank >= total) {
    return absl::InvalidArgumentError(
        absl::StrCat("SLURM_PROCID=", *rank, " is out of range: the step has ",
                     total, " tasks"));
  }
  if (options.base_port < 1 ||
      static_cast<int64_t>(options.base_port) + most_on_a_node - 1 > 65535) {
    return absl::InvalidArgumentError(absl::StrCat(
        "SlurmOptions.base_port ", options.base_port, " with up to ",
        most_on_a_node, " tasks on a node leaves ports 1..65535"));
  }

  // Addresses in rank order: each node's tasks on consecutive ports.
  std::vector<std::string> addresses;
  for (size_t node = 0; node < hosts->size(); ++node) {
    for (int local = 0; local < per_node[node]; ++local) {
      addresses.push_back(
          absl::StrCat((*hosts)[node], ":", options.base_port + local));
    }
  }

  // Ranks to jobs, in job-name order.
  std::map<std::string, int> jobs = options.jobs;
  if (jobs.empty()) jobs["worker"] = static_cast<int>(total);
  int64_t wanted = 0;
  for (const auto& [job, count] : jobs) {
    if (count < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "SlurmOptions.jobs: job ", Quote(job), " has ", count, " tasks"));
    }
    wanted += count;
  }
  if (wanted != total) {
    return absl::InvalidArgumentError(
        absl::StrCat("SlurmOptions.jobs ask for ", wanted, " tasks but ",
                     per_node_source, " gives the step ", total));
  }
  ResolvedCluster resolved;
  std::map<std::string, ClusterSpec::Tasks> cluster_jobs;
  int next = 0;
  for (const auto& [job, count] : jobs) {
    ClusterSpec::Tasks& tasks = cluster_jobs[job];
    for (int i = 0; i < count; ++i, ++next) {
      tasks[i] = addresses[next];
      if (next == *rank) resolved.task = TaskRef{job, i};
    }
  }
  GR_ASSIGN_OR_RETURN(resolved.cluster,
                      ClusterSpec::Create(std::move(cluster_jobs),
                                          absl::StrCat("Slurm cluster from ",
                                                       nodelist->first)));
  return resolved;
}

absl::StatusOr<ResolvedCluster> SlurmClusterFromEnvironment(
    const SlurmOptions& options) {
  return ResolveSlurmCluster(
      options, [](const std::string& name) -> std::optional<std::string> {
        const char* value = std::getenv(name.c_str());
        if (value == nullptr) return std::nullopt;
        return std::string(value);
      });
}

}  // namespace distributed
}  // namespace graphrun
