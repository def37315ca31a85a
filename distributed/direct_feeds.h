// Feeds handed to the task that reads them. A step's feeds arrive as
// client-terminated _Recv nodes on the client's device; a feed read only
// on another task's device then travels a second time, from the client's
// task to that task, as a _Send/_Recv pair. DeliverFeedsToReaders removes
// that hop: when a feed's only reader in the client's partition is one
// _Send to a device of another task, the feed's _Recv and that _Send leave
// the client's partition and the _Recv of the reader's partition becomes a
// client-terminated _Recv of its own device, which the master fills from
// that task's RunGraph call. A data-parallel replica's batch then reaches
// its worker in the same call that starts it.
#ifndef GRAPHRUN_DISTRIBUTED_DIRECT_FEEDS_H_
#define GRAPHRUN_DISTRIBUTED_DIRECT_FEEDS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/protos/graph.pb.h"

namespace graphrun {

// Where one feed goes: the device whose partition now takes it and the
// rendezvous key of its _Recv there. An empty device: the client's device,
// under the key the step graph gave it.
struct FeedDelivery {
  std::string device;
  std::string key;
};

// Rewrites `partitions` (full device name -> partition) as above for each
// of `feed_nodes` (the step graph's feed _Recv nodes, on `client_device`).
// `task_of` gives a device's task ("/job:worker/replica:0/task:1"),
// `incarnation` a device's incarnation. Returns one FeedDelivery per feed.
// InternalError when a partition's _Send has no matching _Recv.
absl::StatusOr<std::vector<FeedDelivery>> DeliverFeedsToReaders(
    const std::vector<std::string>& feed_nodes, const std::string& client_device,
    const std::function<std::string(const std::string&)>& task_of,
    const std::function<uint64_t(const std::string&)>& incarnation,
    std::map<std::string, GraphDef>* partitions);

}  // namespace graphrun

#endif  // GRAPHRUN_DISTRIBUTED_DIRECT_FEEDS_H_
