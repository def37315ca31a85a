// GlooGroup: an allreduce between the members of a collective group over
// gloo (Debian's libgloo-dev; the library PyTorch's and Horovod's CPU
// collectives use): its TCP transport, a full mesh of connections, and its
// ring allreduce. The alternative to graphrun's own ring
// (distributed/ring_allreduce.h) for reduces whose communication_hint is
// "gloo" (`graphrun train --allreduce=gloo`); bench/replicas_vs_ddp.py
// times both.
//
// gloo's rendezvous writes each rank's connection addresses to a key-value
// store and reads the others'. Here the store is the collective meeting:
// `exchange` takes this rank's (key, value) and returns every rank's, in
// rank order (all ranks write the same number of keys, in the same order).
//
// The caller divides for a mean (distributed/collective_rings.h). float
// values travel and are summed as float32 (gloo sums in the type it
// carries, so an fp16 wire would sum in fp16; graphrun's ring is the one
// with fp16 on the wire). Errors (a peer gone, a timeout) come back as
// Unavailable or DeadlineExceeded, never as exceptions. Not thread-safe:
// one Allreduce at a time.
#ifndef GRAPHRUN_DISTRIBUTED_GLOO_GROUP_H_
#define GRAPHRUN_DISTRIBUTED_GLOO_GROUP_H_

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "graph/types.h"

namespace gloo {
class Context;
}  // namespace gloo

namespace graphrun {

class GlooGroup {
 public:
  // Every rank's (key, value), by rank.
  using Exchange = std::function<absl::StatusOr<std::vector<std::pair<std::string, std::string>>>(
      const std::string& key, const std::string& value)>;

  // Connects rank `rank` of `size` over TCP on `host`; `connect_timeout`
  // bounds the connection, `timeout` every later call.
  static absl::StatusOr<std::unique_ptr<GlooGroup>> Connect(int rank, int size,
                                                            const std::string& host,
                                                            Exchange exchange,
                                                            absl::Duration connect_timeout,
                                                            absl::Duration timeout);
  ~GlooGroup();

  // Sums `count` values of `dtype` (float, double, int32, int64) at
  // `data` over the group, in place.
  absl::Status Allreduce(void* data, int64_t count, DataType dtype);
  int size() const;

 private:
  explicit GlooGroup(std::shared_ptr<gloo::Context> context);
  std::shared_ptr<gloo::Context> context_;
};

}  // namespace graphrun

#endif  // GRAPHRUN_DISTRIBUTED_GLOO_GROUP_H_
