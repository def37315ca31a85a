#include "placer/placer.h"

#include <algorithm>
#include <numeric>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/numbers.h"
#include "graph/control_flow.h"
#include "graph/status_macros.h"
#include "graph/types.h"
#include "placer/device_name.h"
#include "placer/placement_format.h"

namespace graphrun {
namespace placer {

std::string KernelAvailability::WhyNot(const Node& node,
                                       absl::string_view device_type) const {
  return absl::StrCat("no ", device_type, " kernel for '", node.op(), "'");
}

namespace {

class FnAvailability : public KernelAvailability {
 public:
  FnAvailability(std::function<bool(const Node&, absl::string_view)> fn,
                 std::function<bool(const Node&, int, absl::string_view)> host)
      : fn_(std::move(fn)), host_(std::move(host)) {}
  bool Supports(const Node& node, absl::string_view type) const override {
    return fn_(node, type);
  }
  bool InputInHostMemory(const Node& node, int input,
                         absl::string_view type) const override {
    return host_ != nullptr && host_(node, input, type);
  }

 private:
  std::function<bool(const Node&, absl::string_view)> fn_;
  std::function<bool(const Node&, int, absl::string_view)> host_;
};

class UnionFind {
 public:
  explicit UnionFind(int n) : parent_(n) {
    std::iota(parent_.begin(), parent_.end(), 0);
  }
  int Find(int x) {
    while (parent_[x] != x) {
      parent_[x] = parent_[parent_[x]];
      x = parent_[x];
    }
    return x;
  }
  // The smaller id becomes the root, so roots are deterministic.
  void Union(int a, int b) {
    a = Find(a);
    b = Find(b);
    if (a == b) return;
    if (a < b) std::swap(a, b);
    parent_[a] = b;
  }

 private:
  std::vector<int> parent_;
};

struct Group {
  std::vector<int> members;  // node ids, ascending
  DeviceName spec;           // merged request
  std::string spec_source;   // node whose request set it, for messages
  std::vector<int> feasible; // device indices
  bool explicit_request = false;
  bool no_kernel_somewhere = false;
  std::string kernel_note;   // "no GPU kernel for 'X'"
};

// Colocation groups from `_class` attrs and edges into reference or
// resource inputs. As in TensorFlow, it is the consuming input's type that
// counts: a MatMul reading a VariableV2's ref output takes it by value and
// may run on another task; an Assign (a ref input) runs with its variable.
std::vector<int> GroupOf(const Graph& graph) {
  const int n = graph.num_nodes();
  UnionFind uf(n);
  for (const auto& node : graph.nodes()) {
    auto it = node->def().attr().find("_class");
    if (it != node->def().attr().end() && it->second.has_list()) {
      for (const std::string& s : it->second.list().s()) {
        if (!absl::StartsWith(s, "loc:@")) continue;
        const Node* other = graph.FindNode(s.substr(5));
        if (other != nullptr) uf.Union(node->id(), other->id());
      }
    }
    for (const Edge* e : node->in_edges()) {
      if (e->IsControl()) continue;
      const DataType t = e->dst_input < node->num_inputs() ? node->input_type(e->dst_input)
                                                           : e->src->output_type(e->src_output);
      if (IsRefType(t) || t == DT_RESOURCE) uf.Union(e->src->id(), node->id());
    }
  }
  std::vector<int> root(n);
  for (int i = 0; i < n; ++i) root[i] = uf.Find(i);
  return root;
}

}  // namespace

std::unique_ptr<KernelAvailability> FunctionAvailability(
    std::function<bool(const Node&, absl::string_view)> fn,
    std::function<bool(const Node&, int, absl::string_view)> host_memory) {
  return std::make_unique<FnAvailability>(std::move(fn), std::move(host_memory));
}

namespace {

// Merges the device requests of a group's members and finds the devices
// that satisfy the merged request and have kernels for every member.
absl::Status SolveGroup(const Graph& graph, const DeviceSet& devices,
                        const KernelAvailability& avail, const CostModel& costs,
                        const PlacerOptions& options, Group* g,
                        std::vector<std::string>* warnings) {
  const auto member_names = [&]() {
    std::vector<std::string> names;
    for (int id : g->members) {
      if (names.size() == 8) {
        names.push_back(absl::StrCat("... (", g->members.size(), " nodes)"));
        break;
      }
      names.push_back(graph.node(id)->name());
    }
    return absl::StrJoin(names, ", ");
  };
  // A member that takes a reference or resource from another member (an
  // Assign, a ReadVariableOp, VarIsInitializedOp) yields to the variable's
  // request, as in TensorFlow, where a replica_device_setter pins the
  // variable to /job:ps and the reads its initializer checks made under
  // /job:worker. So the other members' requests are merged first.
  const auto ref_source = [&](const Node& node) -> const Node* {
    for (const Edge* e : node.in_edges()) {
      if (e->IsControl() || e->dst_input >= node.num_inputs()) continue;
      const DataType t = node.input_type(e->dst_input);
      if (IsRefType(t) || t == DT_RESOURCE) return e->src;
    }
    return nullptr;
  };
  std::vector<int> order;
  for (int id : g->members) {
    if (ref_source(*graph.node(id)) == nullptr) order.push_back(id);
  }
  for (int id : g->members) {
    if (ref_source(*graph.node(id)) != nullptr) order.push_back(id);
  }
  for (int id : order) {
    const Node& node = *graph.node(id);
    if (node.requested_device().empty()) continue;
    auto parsed = ParseDeviceName(node.requested_device());
    if (!parsed.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "node '", node.name(), "' (", node.op(), ") requests device '",
          node.requested_device(), "': ", parsed.status().message()));
    }
    DeviceName merged = g->spec;
    absl::Status s = MergeDeviceNames(&merged, *parsed);
    const Node* source = ref_source(node);
    if (!s.ok() && source != nullptr && !g->spec_source.empty()) {
      warnings->push_back(absl::StrCat(
          "node '", node.name(), "' requests '", node.requested_device(),
          "' but takes a reference or resource from '", source->name(),
          "'; it runs with it on '", DeviceNameToString(g->spec), "' (requested by '",
          g->spec_source, "')"));
      continue;
    }
    if (!s.ok()) {
      // Job, replica and task conflicts are errors even with soft placement
      // (TensorFlow's MergeDevNames).
      const bool task_conflict =
          (g->spec.has_job && parsed->has_job && g->spec.job != parsed->job) ||
          (g->spec.has_task && parsed->has_task && g->spec.task != parsed->task) ||
          (g->spec.has_replica && parsed->has_replica &&
           g->spec.replica != parsed->replica);
      if (!options.allow_soft_placement || task_conflict) {
        return absl::InvalidArgumentError(absl::StrCat(
            "cannot colocate node '", node.name(), "' (", node.op(),
            ", requests '", node.requested_device(), "') with node '",
            g->spec_source, "' (requests '", DeviceNameToString(g->spec),
            "') in colocation group [", member_names(), "]: ", s.message()));
      }
      // Soft placement: keep job/replica/task, drop the device type and id.
      warnings->push_back(absl::StrCat(
          "soft placement: node '", node.name(), "' requests '",
          node.requested_device(), "', which conflicts with '",
          DeviceNameToString(g->spec), "' requested by '", g->spec_source,
          "' in its colocation group [", member_names(),
          "]; dropped the device type and id"));
      g->spec.has_type = g->spec.has_id = false;
      continue;
    }
    if (g->spec_source.empty()) g->spec_source = node.name();
    g->spec = merged;
  }

  // Which device types can run every member.
  absl::flat_hash_map<std::string, std::string> type_blocker;  // type -> why not
  for (const std::string& type : devices.DeviceTypes()) {
    for (int id : g->members) {
      const Node& node = *graph.node(id);
      if (!avail.Supports(node, type)) {
        type_blocker[type] = absl::StrCat("node '", node.name(), "': ",
                                          avail.WhyNot(node, type));
        break;
      }
    }
  }
  // Devices a cost profile rules out ("unsupported": true) for a member.
  std::vector<std::string> profile_blocker(devices.size());
  std::vector<std::string> profile_types;
  for (int d = 0; d < devices.size(); ++d) {
    for (int id : g->members) {
      const Node& node = *graph.node(id);
      if (costs.Unsupported(node, devices.devices()[d])) {
        profile_blocker[d] = absl::StrCat("node '", node.name(),
                                          "': the cost profile marks it unsupported there");
        if (std::find(profile_types.begin(), profile_types.end(),
                      devices.devices()[d].type) == profile_types.end()) {
          profile_types.push_back(devices.devices()[d].type);
        }
        break;
      }
    }
  }
  auto collect = [&](const DeviceName& spec) {
    std::vector<int> out;
    for (int d = 0; d < devices.size(); ++d) {
      if (!Matches(spec, devices.devices()[d].parsed)) continue;
      if (type_blocker.contains(devices.devices()[d].type)) continue;
      if (!profile_blocker[d].empty()) continue;
      out.push_back(d);
    }
    return out;
  };
  g->feasible = collect(g->spec);
  g->explicit_request = g->spec.has_type || g->spec.has_job || g->spec.has_task ||
                        g->spec.has_replica;
  if (!type_blocker.empty()) {
    g->no_kernel_somewhere = true;
    std::vector<std::string> types;
    for (const auto& kv : type_blocker) types.push_back(kv.first);
    std::sort(types.begin(), types.end());
    g->kernel_note = absl::StrCat("no ", absl::StrJoin(types, "/"), " kernel");
  }
  if (!profile_types.empty()) {
    g->no_kernel_somewhere = true;
    std::sort(profile_types.begin(), profile_types.end());
    absl::StrAppend(&g->kernel_note, g->kernel_note.empty() ? "" : "; ",
                    "unsupported on ", absl::StrJoin(profile_types, "/"),
                    " in the cost profile");
  }
  if (g->feasible.empty() && options.allow_soft_placement && g->explicit_request) {
    DeviceName relaxed = g->spec;
    relaxed.has_type = relaxed.has_id = false;
    g->feasible = collect(relaxed);
    if (!g->feasible.empty()) {
      warnings->push_back(absl::StrCat(
          "soft placement: node '", g->spec_source, "' requests '",
          DeviceNameToString(g->spec),
          "', which no device with kernels for its group satisfies; placing it "
          "on any device of ",
          relaxed.has_job || relaxed.has_task ? DeviceNameToString(relaxed)
                                              : std::string("this cluster")));
      g->spec = relaxed;
    }
  }
  if (g->feasible.empty()) {
    std::vector<std::string> tried;
    for (int d = 0; d < devices.size(); ++d) {
      const DeviceInfo& info = devices.devices()[d];
      std::string why;
      if (!Matches(g->spec, info.parsed)) {
        why = absl::StrCat("does not match the request '",
                           DeviceNameToString(g->spec), "'");
      } else if (type_blocker.contains(info.type)) {
        why = type_blocker[info.type];
      } else {
        why = profile_blocker[d];
      }
      tried.push_back(absl::StrCat(info.name, " (", why, ")"));
    }
    const Node& blocker = *graph.node(g->members.front());
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot place node '", blocker.name(), "' (", blocker.op(),
        "): no device satisfies its colocation group [", member_names(), "]",
        g->spec_source.empty() ? ""
                               : absl::StrCat(" requesting '",
                                              DeviceNameToString(g->spec),
                                              "' (from node '", g->spec_source, "')"),
        ". Devices tried: ",
        tried.empty() ? std::string("none") : absl::StrJoin(tried, "; "),
        options.allow_soft_placement ? ""
                                     : ". Set allow_soft_placement to let "
                                       "graphrun fall back"));
  }
  return absl::OkStatus();
}

// Constraints solved and the scheduling problem built: everything Place()
// decides before costs.
struct Built {
  std::vector<Group> groups;
  std::vector<int> group_of;  // node id -> index into groups
  SchedProblem problem;
  std::vector<char> measured;  // node id -> a profile gave its time
  std::vector<std::string> warnings;
};

absl::StatusOr<Built> Build(const Graph& graph, const DeviceSet& devices,
                            const CostModel& costs, const PlacerOptions& options) {
  if (devices.size() == 0) {
    return absl::InvalidArgumentError("no devices to place the graph on");
  }
  std::unique_ptr<KernelAvailability> default_avail;
  const KernelAvailability* avail = options.availability;
  if (avail == nullptr) {
    default_avail = FunctionAvailability([](const Node&, absl::string_view) { return true; });
    avail = default_avail.get();
  }
  const int n = graph.num_nodes();
  const int q = devices.size();
  Built b;
  std::vector<Group>& groups = b.groups;
  std::vector<int>& group_of = b.group_of;
  SchedProblem& problem = b.problem;
  std::vector<char>& measured = b.measured;

  // 1. Constraints, per colocation group.
  const std::vector<int> root = GroupOf(graph);
  absl::flat_hash_map<int, int> group_index;  // root node id -> group
  group_of.resize(n);
  for (int i = 0; i < n; ++i) {
    auto [it, inserted] = group_index.emplace(root[i], static_cast<int>(groups.size()));
    if (inserted) groups.emplace_back();
    groups[it->second].members.push_back(i);
    group_of[i] = it->second;
  }
  for (Group& g : groups) {
    GR_RETURN_IF_ERROR(SolveGroup(graph, devices, *avail, costs, options, &g,
                                  &b.warnings));
  }

  // 2. The scheduling problem.
  problem.num_devices = q;
  problem.tasks.resize(n);
  problem.memory_capacity.assign(q, 0);
  if (options.respect_memory) {
    for (int d = 0; d < q; ++d) {
      problem.memory_capacity[d] = devices.devices()[d].memory_bytes;
    }
  }
  problem.links.resize(static_cast<size_t>(q) * q);
  for (int a = 0; a < q; ++a) {
    for (int b = 0; b < q; ++b) {
      const LinkInfo l = devices.Link(a, b);
      problem.links[a * q + b] = SchedLink{l.latency_s, l.bandwidth, l.compresses};
    }
  }
  // Host memory: each device's host CPU (a CPU device of the same task).
  problem.host_device.assign(q, -1);
  std::vector<std::string> non_cpu_types;
  for (int d = 0; d < q; ++d) {
    const DeviceInfo& info = devices.devices()[d];
    if (info.type == "CPU") {
      problem.host_device[d] = d;
      continue;
    }
    if (std::find(non_cpu_types.begin(), non_cpu_types.end(), info.type) ==
        non_cpu_types.end()) {
      non_cpu_types.push_back(info.type);
    }
    for (int c = 0; c < q; ++c) {
      if (devices.devices()[c].type == "CPU" && devices.SameTask(c, d)) {
        problem.host_device[d] = c;
        break;
      }
    }
  }
  measured.assign(n, 0);
  for (int i = 0; i < n; ++i) {
    const Node& node = *graph.node(i);
    const Group& g = groups[group_of[i]];
    SchedTask& t = problem.tasks[i];
    t.cost.assign(q, kInfeasible);
    for (int d : g.feasible) {
      bool m = false;
      t.cost[d] = costs.ComputeTime(node, devices.devices()[d], &m);
      measured[i] |= m;
    }
    // A Const's output is its persistent buffer; a profile's
    // persistent_bytes (weights, variables) are held for the whole step on
    // top of the outputs.
    const int64_t bytes = costs.TotalOutputBytes(node);
    const int64_t persistent = costs.PersistentBytes(node);
    if (node.op() == "Const") {
      t.persistent_bytes = persistent >= 0 ? persistent : bytes;
    } else {
      t.output_bytes = bytes;
      t.persistent_bytes = std::max<int64_t>(persistent, 0);
    }
    if (g.members.size() > 1) t.group = group_of[i];
    for (const Edge* e : node.out_edges()) {
      // A loop's back edge orders nothing within a step's schedule.
      if (IsNextIteration(node)) break;
      SchedEdge se;
      se.src = i;
      se.dst = e->dst->id();
      if (!e->IsControl()) {
        se.bytes = costs.OutputBytes(node, e->src_output);
        se.compressible = node.output_type(e->src_output) == DT_FLOAT;
        se.tensor = (static_cast<int64_t>(i) << 20) | e->src_output;
        // Host-memory argument on every non-CPU type the consumer may use.
        bool host = !non_cpu_types.empty();
        for (const std::string& type : non_cpu_types) {
          host = host && avail->InputInHostMemory(*e->dst, e->dst_input, type);
        }
        se.dst_host_memory = host;
      }
      problem.edges.push_back(se);
    }
  }

  return b;
}

}  // namespace

absl::StatusOr<SchedProblem> PlacementProblem(const Graph& graph, const DeviceSet& devices,
                                              const CostModel& costs,
                                              const PlacerOptions& options) {
  GR_ASSIGN_OR_RETURN(Built b, Build(graph, devices, costs, options));
  return std::move(b.problem);
}

absl::StatusOr<Placement> Place(const Graph& graph, const DeviceSet& devices,
                                const CostModel& costs,
                                const PlacerOptions& options) {
  GR_ASSIGN_OR_RETURN(Built b, Build(graph, devices, costs, options));
  const int n = graph.num_nodes();
  const int q = devices.size();
  const std::vector<Group>& groups = b.groups;
  const std::vector<int>& group_of = b.group_of;
  const SchedProblem& problem = b.problem;
  const std::vector<char>& measured = b.measured;
  Placement placement;
  placement.warnings = std::move(b.warnings);

  // 3. Costs.
  SchedOptions sched;
  sched.respect_memory = options.respect_memory;
  sched.single_device_candidates = options.single_device_candidates;
  sched.min_spread_gain = options.min_spread_gain;
  sched.record_candidate_finish = true;
  absl::StatusOr<Schedule> schedule = ScheduleTasks(problem, sched);
  if (!schedule.ok()) {
    const std::string msg = NameTasksAndDevices(
        std::string(schedule.status().message()), graph, devices, /*full_names=*/true);
    return absl::Status(schedule.status().code(), absl::StrCat("placement: ", msg));
  }
  placement.schedule = *std::move(schedule);
  placement.device = placement.schedule.device;
  placement.predicted_step_time = placement.schedule.makespan;
  placement.lower_bound = ComputeLowerBounds(problem);
  const SingleDevicePlan single = BestSingleDevice(problem, options.respect_memory);
  placement.best_single_device = single.device;
  placement.best_single_device_time = single.time;
  placement.fastest_device_too_small = single.too_small;
  placement.fastest_device_too_small_time = single.too_small_time;
  placement.fastest_device_too_small_needs = single.too_small_needs;

  // 4. Reasons.
  for (PlanOutcome& o : placement.schedule.plans) {
    o.name = NameTasksAndDevices(o.name, graph, devices, /*full_names=*/false);
    o.failure = NameTasksAndDevices(o.failure, graph, devices, /*full_names=*/false);
  }
  const std::string plan_note =
      PlanNote(placement.schedule.plan, placement.predicted_step_time,
               placement.schedule.plans, options.min_spread_gain);
  const std::vector<int>& follows = placement.schedule.follows;
  const std::vector<char>& searched = placement.schedule.searched;
  placement.reason.resize(n);
  const bool one_task = devices.size() <= 1 || [&] {
    for (int d = 1; d < q; ++d) {
      if (!devices.SameTask(0, d)) return false;
    }
    return true;
  }();
  auto short_name = [&](int d) {
    return ShortDeviceName(devices.devices()[d], one_task);
  };
  for (int i = 0; i < n; ++i) {
    const Group& g = groups[group_of[i]];
    std::vector<std::string> parts;
    const int leader = g.members.front();
    if (g.members.size() > 1 && leader != i) {
      parts.push_back(absl::StrCat("colocated with '", graph.node(leader)->name(), "'"));
    }
    if (g.explicit_request) {
      parts.push_back(absl::StrCat("requested '", DeviceNameToString(g.spec), "'",
                                   g.spec_source.empty() || g.spec_source ==
                                           graph.node(i)->name()
                                       ? ""
                                       : absl::StrCat(" by '", g.spec_source, "'")));
    }
    if (g.no_kernel_somewhere) parts.push_back(g.kernel_note);
    if (g.feasible.size() == 1) {
      if (parts.empty()) parts.push_back("only device");
    } else if (g.members.size() > 1 && leader != i) {
      // The group's first member made the choice.
    } else if (!searched.empty() && searched[i]) {
      parts.push_back(absl::StrCat("moved to ", short_name(placement.device[i]),
                                   " by local search"));
      if (!plan_note.empty()) parts.push_back(plan_note);
    } else if (!follows.empty() && follows[i] >= 0) {
      // A free source (weight, constant) goes with its first consumer.
      const Node& consumer = *graph.node(follows[i]);
      parts.push_back(
          placement.device[i] == placement.device[follows[i]]
              ? absl::StrCat("placed with its consumer '", consumer.name(), "'")
              : absl::StrCat("its consumer '", consumer.name(),
                             "' had no memory left for it on ",
                             short_name(placement.device[follows[i]])));
      if (!plan_note.empty()) parts.push_back(plan_note);
    } else {
      std::vector<std::pair<double, int>> finish;
      const auto& cf = placement.schedule.candidate_finish;
      if (!cf.empty()) {
        for (int d : g.feasible) {
          if (cf[i][d] < kInfeasible) finish.emplace_back(cf[i][d], d);
        }
      }
      std::sort(finish.begin(), finish.end());
      std::vector<std::string> cands;
      for (size_t k = 0; k < finish.size() && k < 4; ++k) {
        cands.push_back(absl::StrCat(short_name(finish[k].second), " ",
                                     FormatSeconds(finish[k].first)));
      }
      if (finish.size() > 4) cands.push_back("...");
      std::string cost = absl::StrCat(measured[i] ? "measured " : "", "cost: ",
                                      "est. finish ", absl::StrJoin(cands, ", "));
      if (cands.empty()) {
        // No finish times recorded (a source placed by a one-device plan).
        cost = plan_note;
      } else if (!plan_note.empty()) {
        cost = absl::StrCat(plan_note, "; ", cost);
      }
      if (!cost.empty()) parts.push_back(cost);
    }
    placement.reason[i] = absl::StrJoin(parts, "; ");
  }
  return placement;
}

}  // namespace placer
}  // namespace graphrun
