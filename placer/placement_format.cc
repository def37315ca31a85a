#include "placer/placement_format.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "placer/placer.h"

namespace graphrun {
namespace placer {

std::string FormatSeconds(double s) {
  if (!(s < kInfeasible)) return "inf";
  if (s < 1e-6) return absl::StrFormat("%.0f ns", s * 1e9);
  if (s < 1e-3) return absl::StrFormat("%.1f us", s * 1e6);
  if (s < 1) return absl::StrFormat("%.2f ms", s * 1e3);
  return absl::StrFormat("%.2f s", s);
}

std::string FormatBytes(int64_t b) {
  const double x = static_cast<double>(b);
  if (b < 1024) return absl::StrCat(b, " B");
  if (b < (int64_t{1} << 20)) return absl::StrFormat("%.1f KiB", x / 1024);
  if (b < (int64_t{1} << 30)) return absl::StrFormat("%.1f MiB", x / (1 << 20));
  return absl::StrFormat("%.2f GiB", x / (1 << 30));
}

std::string ShortDeviceName(const DeviceInfo& device, bool one_task) {
  if (!one_task) return device.name;
  return absl::StrCat(device.type, ":", device.parsed.id);
}

namespace {

bool IsSpreadPlan(const std::string& name) {
  return name == "heft" || name == "peft" || name == "lookahead";
}

}  // namespace

std::string NameTasksAndDevices(const std::string& msg, const Graph& graph,
                                const DeviceSet& devices, bool full_names) {
  std::string out;
  size_t i = 0;
  while (i < msg.size()) {
    const bool task = msg.compare(i, 5, "task ") == 0;
    const bool device = msg.compare(i, 7, "device ") == 0;
    if (task || device) {
      const size_t digits = i + (task ? 5 : 7);
      size_t end = digits;
      while (end < msg.size() && isdigit(static_cast<unsigned char>(msg[end]))) ++end;
      int id = -1;
      if (end > digits && absl::SimpleAtoi(msg.substr(digits, end - digits), &id)) {
        if (task && id >= 0 && id < graph.num_nodes()) {
          absl::StrAppend(&out, "node '", graph.node(id)->name(), "' (",
                          graph.node(id)->op(), ")");
          i = end;
          continue;
        }
        if (device && id >= 0 && id < devices.size()) {
          const DeviceInfo& info = devices.devices()[id];
          absl::StrAppend(&out, full_names ? info.name
                                           : absl::StrCat(info.type, ":", info.parsed.id));
          i = end;
          continue;
        }
      }
    }
    out += msg[i++];
  }
  return out;
}

std::string PlanNote(const std::string& plan, double predicted_step_time,
                     const std::vector<PlanOutcome>& plans, double min_spread_gain) {
  if (plan == "heft") return "";
  double best_spread = kInfeasible;
  std::vector<std::string> failed;
  std::string first_failure;
  for (const PlanOutcome& o : plans) {
    if (!IsSpreadPlan(o.name)) continue;
    if (o.failure.empty()) {
      best_spread = std::min(best_spread, o.makespan);
    } else {
      failed.push_back(o.name);
      if (first_failure.empty()) first_failure = o.failure;
    }
  }
  const std::string what = plan == "single-device"       ? "the one-device plan"
                           : plan == "mostly-one-device" ? "the mostly-one-device plan"
                           : plan == "split"             ? "the contiguous split"
                                                         : absl::StrCat("the ", plan, " plan");
  if (best_spread < kInfeasible && plan == "split") {
    return absl::StrCat(what, " (", FormatSeconds(predicted_step_time),
                        ") beats list scheduling (", FormatSeconds(best_spread), ")");
  }
  if (best_spread < kInfeasible) {
    return absl::StrCat(
        what, " (", FormatSeconds(predicted_step_time), ") beats spreading the graph",
        min_spread_gain > 0
            ? absl::StrCat(" by the required margin (", min_spread_gain * 100, "%)")
            : std::string(),
        " (best spread plan ", FormatSeconds(best_spread), ")");
  }
  if (failed.empty()) {
    return absl::StrCat(what, " (", FormatSeconds(predicted_step_time), ")");
  }
  return absl::StrCat("no spread plan fits (", absl::StrJoin(failed, ", "), ": ",
                      first_failure, "); ", what, " (",
                      FormatSeconds(predicted_step_time), ") does");
}

namespace {

bool OneTask(const DeviceSet& devices) {
  for (int d = 1; d < devices.size(); ++d) {
    if (!devices.SameTask(0, d)) return false;
  }
  return true;
}

}  // namespace

std::string FormatPlacementLog(const Graph& graph, const DeviceSet& devices,
                               const Placement& placement,
                               const absl::flat_hash_map<std::string, LogName>* rename,
                               const std::vector<RemovedNode>* removed) {
  auto line = [&](const Node& node, absl::string_view name, absl::string_view op,
                  absl::string_view note) {
    const int d = placement.device[node.id()];
    std::string s = absl::StrCat(name, ": (", op, "): ", devices.devices()[d].name);
    std::string why = placement.reason[node.id()];
    if (!note.empty()) why = why.empty() ? std::string(note) : absl::StrCat(note, "; ", why);
    if (!why.empty()) absl::StrAppend(&s, " # ", why);
    s += "\n";
    return s;
  };
  std::string out, added;
  for (const auto& node : graph.nodes()) {
    const LogName* as = nullptr;
    if (rename != nullptr) {
      auto it = rename->find(node->name());
      if (it != rename->end()) as = &it->second;
    }
    if (as == nullptr) {
      out += line(*node, node->name(), node->op(), "");
    } else if (!as->name.empty()) {
      out += line(*node, as->name, as->op, "");
    } else {
      added += line(*node, node->name(), node->op(), as->note);
    }
  }
  if (removed != nullptr) {
    for (const RemovedNode& r : *removed) {
      const Node* carrier = r.carrier.empty() ? nullptr : graph.FindNode(r.carrier);
      if (carrier != nullptr) {
        absl::StrAppend(&out, r.name, ": (", r.op, "): ",
                        devices.devices()[placement.device[carrier->id()]].name,
                        " # optimizer: runs as part of '", carrier->name(), "' (",
                        carrier->op(), ")\n");
      } else {
        absl::StrAppend(&out, r.name, ": (", r.op,
                        "): (not run) # optimizer: folded into a constant or unused\n");
      }
    }
  }
  return out + added;
}

std::string FormatPlacementSummary(const Graph& graph, const DeviceSet& devices,
                                   const Placement& placement) {
  const int q = devices.size();
  const bool one_task = OneTask(devices);
  std::vector<int> nodes(q, 0);
  for (int d : placement.device) ++nodes[d];
  // Cross-device tensors: one per (producer output, destination device).
  int64_t edges = 0, bytes = 0;
  for (const auto& node : graph.nodes()) {
    std::vector<std::pair<int, int>> seen;  // (output, device)
    for (const Edge* e : node->out_edges()) {
      const int src = placement.device[node->id()];
      const int dst = placement.device[e->dst->id()];
      if (src == dst) continue;
      const std::pair<int, int> key(e->src_output, dst);
      if (std::find(seen.begin(), seen.end(), key) != seen.end()) continue;
      seen.push_back(key);
      ++edges;
    }
  }
  bytes = placement.schedule.transfer_bytes;
  std::string out;
  absl::StrAppend(&out, "placement of ", graph.num_nodes(), " nodes on ", q,
                  " device", q == 1 ? "" : "s", " (plan: ",
                  placement.schedule.plan, ")\n");
  size_t width = 6;
  for (int d = 0; d < q; ++d) {
    width = std::max(width, ShortDeviceName(devices.devices()[d], one_task).size());
  }
  absl::StrAppend(&out, absl::StrFormat("  %-*s %8s %12s %12s %12s\n",
                                        static_cast<int>(width), "device",
                                        "nodes", "busy", "peak mem", "capacity"));
  for (int d = 0; d < q; ++d) {
    const DeviceInfo& info = devices.devices()[d];
    absl::StrAppend(
        &out, absl::StrFormat(
                  "  %-*s %8d %12s %12s %12s\n", static_cast<int>(width),
                  ShortDeviceName(info, one_task), nodes[d],
                  FormatSeconds(placement.schedule.busy[d]),
                  FormatBytes(placement.schedule.peak_memory[d]),
                  info.memory_bytes > 0 ? FormatBytes(info.memory_bytes) : "-"));
  }
  absl::StrAppend(&out, "cross-device tensors per step: ", edges, " (",
                  FormatBytes(bytes), " on the wire)\n");
  const double lb = placement.lower_bound.best();
  absl::StrAppend(&out, "predicted step time: ",
                  FormatSeconds(placement.predicted_step_time), "\n");
  absl::StrAppend(
      &out, "lower bound: ", FormatSeconds(lb), " (critical path ",
      FormatSeconds(placement.lower_bound.critical_path), ", work/devices ",
      FormatSeconds(placement.lower_bound.area), "); predicted/bound = ",
      lb > 0 ? absl::StrFormat("%.2f", placement.predicted_step_time / lb)
             : std::string("n/a"),
      "\n");
  std::string too_small;
  if (placement.fastest_device_too_small >= 0) {
    const DeviceInfo& info = devices.devices()[placement.fastest_device_too_small];
    too_small = absl::StrCat(
        ShortDeviceName(info, one_task), " would take ",
        FormatSeconds(placement.fastest_device_too_small_time),
        " but cannot hold the graph: needs ",
        FormatBytes(placement.fastest_device_too_small_needs), " of ",
        FormatBytes(info.memory_bytes));
  }
  if (placement.best_single_device >= 0 &&
      placement.best_single_device_time < kInfeasible) {
    absl::StrAppend(
        &out, "best single device: ",
        ShortDeviceName(devices.devices()[placement.best_single_device], one_task),
        " at ", FormatSeconds(placement.best_single_device_time), "; speedup ",
        placement.predicted_step_time > 0
            ? absl::StrFormat("%.2fx", placement.best_single_device_time /
                                           placement.predicted_step_time)
            : std::string("n/a"),
        too_small.empty() ? "" : absl::StrCat(" (", too_small, ")"), "\n");
  } else if (!too_small.empty()) {
    absl::StrAppend(&out, "no single device can hold the graph (", too_small, ")\n");
  } else {
    absl::StrAppend(&out, "no single device can run the whole graph\n");
  }
  bool any_failed = false;
  for (const PlanOutcome& o : placement.schedule.plans) any_failed |= !o.failure.empty();
  if (any_failed) {
    absl::StrAppend(&out, "plans tried:\n");
    for (const PlanOutcome& o : placement.schedule.plans) {
      absl::StrAppend(&out, "  ", o.name, ": ",
                      o.failure.empty() ? FormatSeconds(o.makespan)
                                        : absl::StrCat("failed: ", o.failure),
                      "\n");
    }
  }
  for (const std::string& w : placement.warnings) absl::StrAppend(&out, "note: ", w, "\n");
  return out;
}

std::string PlacementToDot(const Graph& graph, const DeviceSet& devices,
                           const Placement& placement, const CostModel& costs) {
  static const char* kColours[] = {"#8dd3c7", "#ffffb3", "#bebada", "#fb8072",
                                   "#80b1d3", "#fdb462", "#b3de69", "#fccde5",
                                   "#d9d9d9", "#bc80bd", "#ccebc5", "#ffed6f"};
  const bool one_task = OneTask(devices);
  auto quote = [](const std::string& s) {
    return absl::StrCat("\"", absl::StrReplaceAll(s, {{"\\", "\\\\"}, {"\"", "\\\""}}),
                        "\"");
  };
  std::string out = "digraph placement {\n  rankdir=TB;\n  node [shape=box, style=filled, fontname=\"Helvetica\"];\n";
  absl::StrAppend(&out, "  subgraph cluster_legend {\n    label=\"devices\";\n");
  for (int d = 0; d < devices.size(); ++d) {
    absl::StrAppend(&out, "    ", quote(absl::StrCat("legend_", d)), " [label=",
                    quote(ShortDeviceName(devices.devices()[d], one_task)),
                    ", fillcolor=\"", kColours[d % 12], "\"];\n");
  }
  absl::StrAppend(&out, "  }\n");
  for (const auto& node : graph.nodes()) {
    const int d = placement.device[node->id()];
    const std::string name = quote(node->name()), op = quote(node->op());
    absl::StrAppend(&out, "  ", name, " [label=",
                    absl::StrCat(name.substr(0, name.size() - 1), "\\n", op.substr(1)),
                    ", fillcolor=\"", kColours[d % 12], "\"];\n");
  }
  for (const auto& node : graph.nodes()) {
    for (const Edge* e : node->out_edges()) {
      const bool cross = placement.device[node->id()] != placement.device[e->dst->id()];
      absl::StrAppend(&out, "  ", quote(node->name()), " -> ", quote(e->dst->name()));
      std::vector<std::string> attrs;
      if (e->IsControl()) attrs.push_back("style=dashed");
      if (cross) {
        attrs.push_back("color=red");
        attrs.push_back("penwidth=2");
        if (!e->IsControl()) {
          attrs.push_back(absl::StrCat(
              "label=", quote(FormatBytes(costs.OutputBytes(*node, e->src_output)))));
        }
      }
      if (!attrs.empty()) absl::StrAppend(&out, " [", absl::StrJoin(attrs, ", "), "]");
      out += ";\n";
    }
  }
  out += "}\n";
  return out;
}

}  // namespace placer
}  // namespace graphrun
