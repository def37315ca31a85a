#include "distributed/direct_feeds.h"

#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "graph/import.h"
#include "graph/rendezvous_key.h"

namespace graphrun {
namespace {

std::string StringAttr(const NodeDef& n, const std::string& name) {
  auto it = n.attr().find(name);
  return it == n.attr().end() ? "" : it->second.s();
}

// Indices of the nodes of `g` with an input from `name`.
std::vector<int> Readers(const GraphDef& g, absl::string_view name) {
  std::vector<int> out;
  for (int i = 0; i < g.node_size(); ++i) {
    for (const std::string& in : g.node(i).input()) {
      if (InputNodeName(in) == name) {
        out.push_back(i);
        break;
      }
    }
  }
  return out;
}

void RemoveNodes(const absl::flat_hash_set<std::string>& names, GraphDef* g) {
  GraphDef kept;
  for (NodeDef& n : *g->mutable_node()) {
    if (!names.contains(n.name())) *kept.add_node() = std::move(n);
  }
  g->mutable_node()->Swap(kept.mutable_node());
}

}  // namespace

absl::StatusOr<std::vector<FeedDelivery>> DeliverFeedsToReaders(
    const std::vector<std::string>& feed_nodes, const std::string& client_device,
    const std::function<std::string(const std::string&)>& task_of,
    const std::function<uint64_t(const std::string&)>& incarnation,
    std::map<std::string, GraphDef>* partitions) {
  std::vector<FeedDelivery> out(feed_nodes.size());
  auto client = partitions->find(client_device);
  if (client == partitions->end()) return out;
  GraphDef& from = client->second;
  const std::string client_task = task_of(client_device);
  for (size_t f = 0; f < feed_nodes.size(); ++f) {
    const std::string& feed = feed_nodes[f];
    int feed_index = -1;
    for (int i = 0; i < from.node_size(); ++i) {
      if (from.node(i).name() == feed && from.node(i).op() == "_Recv") feed_index = i;
    }
    if (feed_index < 0) continue;
    const std::vector<int> readers = Readers(from, feed);
    if (readers.size() != 1) continue;
    const NodeDef& send = from.node(readers[0]);
    if (send.op() != "_Send" || send.input_size() < 1 || send.input(0) != feed) continue;
    const std::string device = StringAttr(send, "recv_device");
    if (device.empty() || task_of(device) == client_task) continue;
    if (!Readers(from, send.name()).empty()) continue;  // something waits on the send
    if (from.node_size() <= 2) continue;  // the client's partition would be left empty
    auto to = partitions->find(device);
    if (to == partitions->end()) {
      return absl::InternalError(absl::StrCat("feed ", feed, " is sent to ", device,
                                              ", which has no partition"));
    }
    const std::string sent = StringAttr(send, "tensor_name");
    NodeDef* recv = nullptr;
    for (NodeDef& n : *to->second.mutable_node()) {
      if (n.op() == "_Recv" && StringAttr(n, "tensor_name") == sent &&
          StringAttr(n, "send_device") == client_device) {
        if (recv != nullptr) {
          recv = nullptr;  // two receives of one send: left as it is
          break;
        }
        recv = &n;
      }
    }
    if (recv == nullptr) continue;
    // The reader's _Recv becomes a client-terminated feed of its own device,
    // under the feed's own tensor name.
    const std::string tensor = StringAttr(from.node(feed_index), "tensor_name");
    const uint64_t inc = incarnation(device);
    auto& attr = *recv->mutable_attr();
    attr["tensor_name"].set_s(tensor);
    attr["send_device"].set_s(device);
    attr["recv_device"].set_s(device);
    attr["send_device_incarnation"].set_i(static_cast<int64_t>(inc));
    attr["client_terminated"].set_b(true);
    out[f].device = device;
    out[f].key = CreateRendezvousKey(device, inc, device, tensor, 0, 0);
    RemoveNodes({feed, send.name()}, &from);
  }
  return out;
}

}  // namespace graphrun
