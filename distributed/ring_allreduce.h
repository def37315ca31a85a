// A ring allreduce (sum) between the ranks of a group over TCP: every rank
// sends to the next rank and receives from the previous one. A tensor is cut
// into one segment per rank; n-1 reduce-scatter steps leave each rank with
// one segment summed over the group, n-1 all-gather steps hand the summed
// segments round, so each rank sends and receives 2(n-1)/n of the tensor
// whatever n is. Within a step, the segment is sent from a thread of the
// ring's own while the calling thread receives and adds chunk by chunk, so
// sending, receiving and adding overlap.
//
// float32 tensors may travel as fp16 or bf16 (the wire codec of
// wire_codec.h); sums are always taken in float32 on arrival, so nothing
// overflows that float32 holds (where a sum carried in fp16 would saturate
// at 65504), and every rank ends with bit-identical values: the rank that
// finished a segment keeps the rounded value it sends.
//
//   std::unique_ptr<RingListener> l = RingListener::Listen("127.0.0.1").value();
//   ... exchange l->address() between the ranks (a cluster spec, a file) ...
//   std::unique_ptr<Ring> ring = Ring::Connect(std::move(l), options).value();
//   AllreduceOptions mean_fp16{WIRE_ENCODING_FP16, /*mean=*/true};
//   GR_RETURN_IF_ERROR(ring->Allreduce(grad.data(), grad.size(), DT_FLOAT, mean_fp16));
//
// Failures: a peer that closes its connection or moves no byte for
// stall_timeout fails the call with Unavailable / DeadlineExceeded naming
// the peer's rank and address; the ring is then broken and every later call
// fails at once. Not thread-safe: one Allreduce at a time per ring.
#ifndef GRAPHRUN_DISTRIBUTED_RING_ALLREDUCE_H_
#define GRAPHRUN_DISTRIBUTED_RING_ALLREDUCE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "distributed/protos/worker.pb.h"
#include "graph/types.h"

namespace graphrun {

// A listening socket for the previous rank to connect to.
class RingListener {
 public:
  // Listens on `host`, on a port the system picks.
  static absl::StatusOr<std::unique_ptr<RingListener>> Listen(const std::string& host);
  ~RingListener();
  // "host:port" for the other ranks' RingOptions::addresses.
  const std::string& address() const { return address_; }

 private:
  friend class Ring;
  RingListener() = default;
  int fd_ = -1;
  std::string address_;
};

struct RingOptions {
  int rank = 0;
  // Every rank's RingListener::address(), by rank; its size is the group's.
  std::vector<std::string> addresses;
  // How long Connect waits for the next rank to listen and the previous
  // one to connect.
  absl::Duration connect_timeout = absl::Seconds(30);
  // A transfer in which no byte moves for this long fails.
  absl::Duration stall_timeout = absl::Seconds(30);
  // Segments travel in chunks of this many bytes (on the wire).
  int64_t chunk_bytes = int64_t{1} << 20;
};

struct AllreduceOptions {
  // How float values travel (others always travel as they are).
  WireEncoding encoding = WIRE_ENCODING_NONE;
  // The mean instead of the sum: float values are scaled by 1/n before they
  // are summed, so partial sums stay within the inputs' range on a 16-bit
  // wire (a sum of four gradients of 40,000 would saturate fp16; their mean
  // does not); integers are divided after the sum.
  bool mean = false;
};

struct RingStats {
  int64_t bytes_sent = 0;      // on the wire
  int64_t fp16_saturated = 0;  // values fp16 clamped to +-65504
};

class Ring {
 public:
  // Connects to the next rank and accepts the previous one (each side
  // checks the other's rank). A group of one needs no connection.
  static absl::StatusOr<std::unique_ptr<Ring>> Connect(std::unique_ptr<RingListener> listener,
                                                       const RingOptions& options);
  ~Ring();

  int rank() const { return options_.rank; }
  int size() const { return static_cast<int>(options_.addresses.size()); }

  // Sums (or averages) `count` values of `dtype` (float, double, int32,
  // int64) at `data` over the group, in place. Every rank must call it with
  // the same count, dtype and options.
  absl::Status Allreduce(void* data, int64_t count, DataType dtype,
                         const AllreduceOptions& options = {}, RingStats* stats = nullptr);

  // Shuts both connections at once (a rank that goes away): the
  // neighbours' calls in flight fail, and so do this ring's later calls.
  void Abort();

 private:
  class Sender;
  explicit Ring(const RingOptions& options);
  absl::Status Step(char* base, int64_t elem, int64_t send_off, int64_t send_n,
                    int64_t recv_off, int64_t recv_n, bool accumulate, DataType dtype,
                    WireEncoding encoding, RingStats* stats);
  absl::Status PeerError(int peer, const std::string& what) const;

  RingOptions options_;
  int next_fd_ = -1;  // to rank + 1
  int prev_fd_ = -1;  // from rank - 1
  std::unique_ptr<Sender> sender_;
  absl::Status broken_;
};

}  // namespace graphrun

#endif  // GRAPHRUN_DISTRIBUTED_RING_ALLREDUCE_H_
