// The data plane: tensor bytes between workers over plain TCP, beside the
// gRPC control channel (which moves bulk bytes at a tenth of what a TCP
// stream does). A worker answering RecvTensor for a large tensor offers its
// bytes on its DataPlaneServer and returns the DataPlaneTicket; the
// receiving worker's DataPlaneClient pulls them straight into the
// destination buffer. Tickets are one-use: a 16-byte random token.
//
// Wire protocol (version 2, integers little-endian). The receiver opens a
// TCP connection (or reuses an idle one) and sends a 32-byte request:
//
//   offset size
//        0    4  magic "GRDQ"
//        4    2  version (2)
//        6    2  encoding (WireEncoding value: 0 none, 1 fp16, 2 bf16)
//        8   16  token
//       24    8  num_bytes: the ticket's byte count (after encoding)
//
// The sender answers with a 16-byte reply:
//
//        0    4  magic "GRDR"
//        4    1  status: 0 ok, 1 no such offer (unknown, expired or already
//                pulled), 2 mismatch (the request's encoding or num_bytes is
//                not the offer's)
//        5    3  zero
//        8    8  num_bytes that follow (0 unless status is ok)
//
// and, when ok, exactly num_bytes of payload (16-bit words for fp16/bf16,
// encoded chunk by chunk as they are sent), then for fp16 an 8-byte trailer:
// how many finite values the encoding saturated to +-65504. The connection
// then waits for the next request. A request whose magic, version or encoding is wrong is
// not answered: the sender closes that connection and keeps serving others. A
// token is spent when a request presents it, whatever the reply. Either side
// closes a connection that stalls (no byte moves for the stall timeout); a
// receiver never reuses a connection on which anything failed.
//
// Thread-safety: both classes are thread-safe.
#ifndef GRAPHRUN_DISTRIBUTED_DATA_PLANE_H_
#define GRAPHRUN_DISTRIBUTED_DATA_PLANE_H_

#include <atomic>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "distributed/protos/worker.pb.h"
#include "graph/tensor.h"

namespace graphrun {
namespace data_plane_internal {
struct Reply;
}  // namespace data_plane_internal

// Bytes the receiver writes for a ticket of `wire_bytes` carried with
// `encoding`: wire_bytes for NONE, twice that for FP16/BF16. -1 when
// wire_bytes is negative, odd for a 16-bit encoding, or the encoding unknown.
int64_t DecodedBytes(WireEncoding encoding, int64_t wire_bytes);

// Sender side: one listening socket, one thread that accepts connections and
// drops expired offers, and one thread per connection (connections are few:
// one per peer per concurrent transfer, reused across transfers).
class DataPlaneServer {
 public:
  // Binds host:port (port 0: any free port) and starts serving. `host` should
  // be what the worker's gRPC server binds (loopback by default); "" or a
  // wildcard ("0.0.0.0", "::") binds every interface and advertises the
  // machine's host name. Unavailable naming the address when it cannot bind.
  static absl::StatusOr<std::unique_ptr<DataPlaneServer>> Start(
      const std::string& host, int port);

  // Stops accepting, closes every connection (a transfer in flight ends
  // early, which its receiver sees as Unavailable), joins the threads and
  // drops the offers still pending (releasing their keepalives).
  ~DataPlaneServer();

  DataPlaneServer(const DataPlaneServer&) = delete;
  DataPlaneServer& operator=(const DataPlaneServer&) = delete;

  // "host:port" as peers dial it ("[::1]:port" for IPv6 literals).
  std::string address() const { return address_; }

  // Offers `num_bytes` at `data` for one pull. `keepalive` keeps the bytes
  // alive and is released when the pull ends, when the offer expires (`ttl`
  // after this call, if never pulled) or with the server. With FP16/BF16 the
  // data is float32 (num_bytes a multiple of 4) encoded on the fly while it
  // is sent; the ticket's num_bytes is then num_bytes / 2, and for FP16 the
  // number of values saturated to +-65504 is added to `*saturated` (which
  // may be null, and must outlive the offer) as the pull encodes them.
  // CHECK-fails on a negative or misaligned num_bytes or an unknown encoding
  // (programmer errors).
  DataPlaneTicket Offer(std::shared_ptr<const void> keepalive, const char* data,
                        int64_t num_bytes, WireEncoding encoding,
                        absl::Duration ttl, std::atomic<int64_t>* saturated);

  // Offers not yet pulled nor expired.
  int NumPendingOffers() const;

  // Drops the offers whose ttl ends at or before `now`, returning how many.
  // The server calls it itself as deadlines pass; tests call it with a time
  // in the future to expire offers deterministically.
  int DropExpiredOffers(absl::Time now);

  // Connections accepted since Start (for tests of connection reuse).
  int64_t connections_accepted() const {
    return connections_accepted_.load(std::memory_order_relaxed);
  }
  // Offers pulled since Start.
  int64_t offers_taken() const { return offers_taken_.load(std::memory_order_relaxed); }

 private:
  struct PendingOffer;
  struct Connection;

  DataPlaneServer(int listen_fd, int wake_fd, std::string address);
  void AcceptLoop();
  void Serve(Connection* connection);
  // Removes and returns the offer matching `token` (16 bytes), comparing
  // every pending token in constant time; null when none matches.
  std::unique_ptr<PendingOffer> TakeOffer(const uint8_t* token);
  void JoinFinishedConnections() ABSL_LOCKS_EXCLUDED(mu_);
  void Wake();

  const int listen_fd_;
  // eventfd: wakes AcceptLoop to stop, to expire a new offer sooner, or to
  // join a finished connection's thread.
  const int wake_fd_;
  const std::string address_;
  std::thread accept_thread_;
  std::atomic<int64_t> connections_accepted_{0};
  std::atomic<int64_t> offers_taken_{0};

  mutable absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  // When the accept loop will next wake to drop expired offers.
  absl::Time next_expiry_ ABSL_GUARDED_BY(mu_) = absl::InfiniteFuture();
  std::vector<std::unique_ptr<PendingOffer>> offers_ ABSL_GUARDED_BY(mu_);
  std::list<std::unique_ptr<Connection>> connections_ ABSL_GUARDED_BY(mu_);
};

// Receiver side: pulls tickets' bytes, keeping a pool of idle connections
// per peer address for the next pulls.
class DataPlaneClient {
 public:
  DataPlaneClient() = default;
  ~DataPlaneClient();  // closes the idle connections

  DataPlaneClient(const DataPlaneClient&) = delete;
  DataPlaneClient& operator=(const DataPlaneClient&) = delete;

  // Pulls the ticket's bytes into `dst`, which holds `dst_bytes` =
  // DecodedBytes(encoding, ticket.num_bytes()); FP16/BF16 are decoded into
  // float32 chunk by chunk as they arrive (no copy of the whole tensor is
  // staged). Blocks the calling thread. Errors:
  //   InvalidArgument  dst_bytes or the token's size does not fit the
  //                    ticket, dst is not 4-byte aligned for FP16/BF16, or
  //                    the sender says the ticket's encoding or size is not
  //                    its offer's;
  //   NotFound         the sender has no offer for the token (unknown,
  //                    expired, already pulled);
  //   Unavailable      naming the peer's address: it cannot be reached, the
  //                    connection breaks or closes early, or no byte arrives
  //                    for `stall_timeout`.
  // On error dst may hold part of the bytes. An idle connection found broken
  // before the peer answered is replaced by a new one once.
  // With FP16, *fp16_saturated (when not null) gets the sender's count of
  // values saturated to +-65504 in this transfer.
  absl::Status Fetch(const DataPlaneTicket& ticket, WireEncoding encoding,
                     char* dst, int64_t dst_bytes,
                     absl::Duration stall_timeout = absl::Seconds(5),
                     int64_t* fp16_saturated = nullptr);

  // Fetch into a new host tensor of `dtype` and `shape` (what the ticket's
  // sender said it offers); InvalidArgument for a dtype without fixed-size
  // elements or a shape that does not decode.
  absl::StatusOr<Tensor> FetchTensor(const DataPlaneTicket& ticket, WireEncoding encoding,
                                     DataType dtype, const TensorShapeProto& shape,
                                     absl::Duration stall_timeout = absl::Seconds(5),
                                     int64_t* fp16_saturated = nullptr);

  // Connections opened since construction (for tests of connection reuse).
  int64_t connections_opened() const {
    return connections_opened_.load(std::memory_order_relaxed);
  }

 private:
  // A connection to one peer, with its buffer for decoding (made when first
  // needed, kept with the connection) and the send and receive timeouts
  // its socket has.
  struct PeerConnection {
    int fd = -1;
    std::unique_ptr<uint16_t[]> words;
    absl::Duration timeout = absl::InfiniteDuration();  // none set
  };

  // An idle connection to `address` (*reused), or a new one.
  absl::StatusOr<PeerConnection> Acquire(const std::string& address,
                                         absl::Duration timeout, bool* reused);
  void Release(const std::string& address, PeerConnection c);
  // Sends `request` and reads the reply into *reply; returns the connection
  // ready for the payload. A reused connection found closed before the peer
  // could read the request is replaced once.
  absl::StatusOr<PeerConnection> Ask(const std::string& address,
                                     const uint8_t* request,
                                     absl::Duration stall_timeout,
                                     data_plane_internal::Reply* reply);
  // Receives wire_bytes into dst, decoding as they come; an error text
  // (empty on success).
  std::string ReceivePayload(PeerConnection& c, WireEncoding encoding,
                             char* dst, int64_t wire_bytes,
                             absl::Duration stall_timeout);

  std::atomic<int64_t> connections_opened_{0};
  absl::Mutex mu_;
  std::map<std::string, std::vector<PeerConnection>> idle_ ABSL_GUARDED_BY(mu_);
};

}  // namespace graphrun

#endif  // GRAPHRUN_DISTRIBUTED_DATA_PLANE_H_
