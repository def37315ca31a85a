#include "graph/control_flow.h"

#include <deque>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "graph/import.h"

namespace graphrun {
namespace {

bool OpIs(const Node& node, absl::string_view op) {
  const std::string& o = node.op();
  return o == op || (o.size() == op.size() + 3 && absl::StartsWith(o, "Ref") &&
                     absl::string_view(o).substr(3) == op);
}

std::string FrameLabel(const std::string& frame_name) {
  return frame_name.empty() ? "the root frame" : absl::StrCat("frame '", frame_name, "'");
}

absl::Status FrameError(const Node& node, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat(NodeLabel(node), ": ", message));
}

}  // namespace

bool IsEnter(const Node& node) { return OpIs(node, "Enter"); }
bool IsExit(const Node& node) { return OpIs(node, "Exit"); }
bool IsNextIteration(const Node& node) { return OpIs(node, "NextIteration"); }
bool IsMerge(const Node& node) { return OpIs(node, "Merge"); }
bool IsSwitch(const Node& node) { return OpIs(node, "Switch"); }
bool IsLoopCond(const Node& node) { return node.op() == "LoopCond"; }
bool IsControlTrigger(const Node& node) { return node.op() == "ControlTrigger"; }

bool HasLoops(const Graph& graph) {
  for (const auto& node : graph.nodes()) {
    if (IsEnter(*node) || IsExit(*node) || IsNextIteration(*node) || IsLoopCond(*node)) {
      return true;
    }
  }
  return false;
}

absl::StatusOr<std::vector<ControlFlowInfo>> BuildControlFlowInfo(const Graph& graph) {
  const int n = graph.num_nodes();
  std::vector<ControlFlowInfo> info(n);
  std::vector<const Node*> reached_from(n, nullptr);
  std::vector<bool> visited(n, false);
  std::deque<const Node*> queue;
  for (const auto& node : graph.nodes()) {
    if (node->in_edges().empty()) {
      visited[node->id()] = true;
      queue.push_back(node.get());
    }
  }
  // The parent frame of each frame name, to check that every Enter of a
  // frame opens it from the same place.
  absl::flat_hash_map<std::string, std::pair<std::string, const Node*>> parent_of;

  while (!queue.empty()) {
    const Node* cur = queue.front();
    queue.pop_front();
    const ControlFlowInfo& ci = info[cur->id()];
    ControlFlowInfo out = ci;  // the frame cur's consumers run in
    if (IsEnter(*cur)) {
      std::string name;
      absl::Status s = cur->attrs().Get("frame_name", &name);
      if (!s.ok()) return FrameError(*cur, s.message());
      if (name.empty()) return FrameError(*cur, "attr 'frame_name' is empty");
      auto [it, inserted] = parent_of.emplace(name, std::make_pair(ci.frame_name, cur));
      if (!inserted && it->second.first != ci.frame_name) {
        return FrameError(*cur, absl::StrCat(
            "enters frame '", name, "' from ", FrameLabel(ci.frame_name), ", but '",
            it->second.second->name(), "' enters it from ",
            FrameLabel(it->second.first)));
      }
      out.frame = cur;
      out.parent_frame = ci.frame;
      out.frame_name = std::move(name);
    } else if (IsExit(*cur)) {
      if (ci.frame == nullptr) {
        return FrameError(*cur, "is not inside a while loop: no Enter opens its frame");
      }
      out = info[ci.frame->id()];  // where the frame's Enter runs
    } else if (IsNextIteration(*cur) && ci.frame == nullptr) {
      return FrameError(*cur, "closes no loop: it is not inside a while-loop frame");
    } else if (IsLoopCond(*cur) && ci.frame == nullptr) {
      return FrameError(*cur, "is not inside a while loop: no Enter opens its frame");
    }
    for (const Edge* e : cur->out_edges()) {
      const Node* dst = e->dst;
      if (IsNextIteration(*cur) && !e->IsControl() && !IsMerge(*dst)) {
        return FrameError(*cur, absl::StrCat("feeds ", NodeLabel(*dst),
                                             "; a NextIteration must feed a Merge"));
      }
      if (!visited[dst->id()]) {
        visited[dst->id()] = true;
        info[dst->id()] = out;
        reached_from[dst->id()] = cur;
        queue.push_back(dst);
      } else if (info[dst->id()].frame_name != out.frame_name) {
        return FrameError(*dst, absl::StrCat(
            "has inputs from different frames: '", reached_from[dst->id()]->name(),
            "' is in ", FrameLabel(info[dst->id()].frame_name), ", '", cur->name(),
            "' is in ", FrameLabel(out.frame_name)));
      }
    }
  }
  for (const auto& node : graph.nodes()) {
    if (!visited[node->id()]) {
      return FrameError(*node, "is fed only by a loop's back edge: no input reaches it "
                               "from outside the loop");
    }
  }
  return info;
}

}  // namespace graphrun
