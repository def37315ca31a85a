#include "runtime/trace.h"

#include <algorithm>
#include <map>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace graphrun {
namespace {

std::string Json(absl::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += absl::StrFormat("\\u%04x", c);
        } else {
          out.push_back(c);
        }
    }
  }
  return out + "\"";
}

// "name = Op(a, b)" -> op, inputs.
void ParseLabel(const std::string& label, std::string* op, std::vector<std::string>* inputs) {
  const size_t eq = label.find(" = ");
  const size_t open = label.find('(', eq == std::string::npos ? 0 : eq);
  if (eq == std::string::npos || open == std::string::npos) {
    *op = "unknown";
    return;
  }
  *op = label.substr(eq + 3, open - eq - 3);
  std::string args = label.substr(open + 1);
  if (!args.empty() && args.back() == ')') args.pop_back();
  size_t start = 0;
  while (start < args.size()) {
    size_t comma = args.find(", ", start);
    if (comma == std::string::npos) comma = args.size();
    inputs->push_back(args.substr(start, comma - start));
    start = comma + 2;
  }
}

}  // namespace

std::string StepStatsToChromeTrace(const StepStats& stats) {
  std::vector<std::string> events;
  int64_t origin = INT64_MAX;
  for (const auto& dev : stats.dev_stats()) {
    for (const auto& n : dev.node_stats()) origin = std::min(origin, n.all_start_nanos());
  }
  if (origin == INT64_MAX) origin = 0;

  struct Produced {
    int pid, tid;
    double end_us;
  };
  std::map<std::string, Produced> producers;  // node name -> where it ran
  struct Slice {
    const NodeExecStats* n;
    int pid, tid;
    double ts, dur;
    std::vector<std::string> inputs;
  };
  std::vector<Slice> slices;
  int pid = 0;
  for (const auto& dev : stats.dev_stats()) {
    ++pid;
    events.push_back(absl::StrCat(R"({"name":"process_name","ph":"M","pid":)", pid,
                                  R"(,"args":{"name":)", Json(dev.device() + " Compute"), "}}"));
    events.push_back(absl::StrCat(R"({"name":"process_sort_index","ph":"M","pid":)", pid,
                                  R"(,"args":{"sort_index":)", pid, "}}"));
    std::vector<const NodeExecStats*> nodes;
    for (const auto& n : dev.node_stats()) nodes.push_back(&n);
    std::sort(nodes.begin(), nodes.end(), [](const NodeExecStats* a, const NodeExecStats* b) {
      return a->all_start_nanos() < b->all_start_nanos();
    });
    // Greedy lanes: first lane free when this node starts.
    std::vector<int64_t> lane_end;
    for (const NodeExecStats* n : nodes) {
      const int64_t start = n->all_start_nanos();
      const int64_t end = start + n->all_end_rel_nanos();
      int lane = 0;
      while (lane < static_cast<int>(lane_end.size()) && lane_end[lane] > start) ++lane;
      if (lane == static_cast<int>(lane_end.size())) lane_end.push_back(0);
      lane_end[lane] = end;
      Slice s{n, pid, lane, (start - origin) / 1000.0, n->all_end_rel_nanos() / 1000.0, {}};
      std::string op;
      ParseLabel(n->timeline_label(), &op, &s.inputs);
      std::string args = absl::StrCat(R"("name":)", Json(n->node_name()), R"(,"op":)", Json(op));
      for (size_t i = 0; i < s.inputs.size(); ++i) {
        absl::StrAppend(&args, ",\"input", i, "\":", Json(s.inputs[i]));
      }
      events.push_back(absl::StrFormat(
          R"({"ph":"X","cat":"Op","name":%s,"pid":%d,"tid":%d,"ts":%.3f,"dur":%.3f,"args":{%s}})",
          Json(op), pid, lane, s.ts, s.dur, args));
      producers[n->node_name()] = {pid, lane, s.ts + s.dur};
      slices.push_back(std::move(s));
    }
    // The device's memory at the end of the step: a counter track per
    // allocator (MiB in use, peak, reserved).
    double end_us = 0;
    for (const NodeExecStats* n : nodes) {
      end_us = std::max(end_us, (n->all_start_nanos() + n->all_end_rel_nanos() - origin) / 1000.0);
    }
    for (const AllocatorStepStats& a : dev.allocators()) {
      constexpr double kMiB = 1 << 20;
      events.push_back(absl::StrFormat(
          R"({"ph":"C","cat":"Memory","name":%s,"pid":%d,"ts":%.3f,"args":{"in use MiB":%.3f,"peak MiB":%.3f,"reserved MiB":%.3f}})",
          Json(absl::StrCat("memory ", a.allocator_name())), pid, end_us,
          a.bytes_in_use() / kMiB, a.peak_bytes_in_use() / kMiB, a.bytes_reserved() / kMiB));
    }
  }
  // Flow arrows for inputs produced on another device.
  int flow_id = 0;
  for (const Slice& s : slices) {
    for (const std::string& in : s.inputs) {
      if (in.empty() || in[0] == '^') continue;
      std::string node = in.substr(0, in.rfind(':') == std::string::npos ? in.size() : in.rfind(':'));
      auto it = producers.find(node);
      if (it == producers.end() || it->second.pid == s.pid) continue;
      ++flow_id;
      events.push_back(absl::StrFormat(
          R"({"ph":"s","cat":"DataFlow","name":%s,"pid":%d,"tid":%d,"ts":%.3f,"id":%d})",
          Json(in), it->second.pid, it->second.tid, it->second.end_us, flow_id));
      events.push_back(absl::StrFormat(
          R"({"ph":"t","cat":"DataFlow","name":%s,"pid":%d,"tid":%d,"ts":%.3f,"id":%d})",
          Json(in), s.pid, s.tid, s.ts, flow_id));
    }
  }
  std::string out = "{\"traceEvents\":[\n";
  for (size_t i = 0; i < events.size(); ++i) {
    absl::StrAppend(&out, events[i], i + 1 < events.size() ? ",\n" : "\n");
  }
  out += "]}\n";
  return out;
}

}  // namespace graphrun
