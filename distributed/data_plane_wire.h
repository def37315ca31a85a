// The data plane's frames and socket plumbing, shared by its server and
// client (distributed/data_plane.h documents the protocol). Internal to
// //distributed:data_plane. Thread-compatible: free functions over caller
// buffers and descriptors.
#ifndef GRAPHRUN_DISTRIBUTED_DATA_PLANE_WIRE_H_
#define GRAPHRUN_DISTRIBUTED_DATA_PLANE_WIRE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace graphrun {
namespace data_plane_internal {

constexpr int kTokenBytes = 16;
constexpr int kRequestBytes = 32;
constexpr int kReplyBytes = 16;

// Uncompressed payloads go to and come from the kernel at most this much per
// call, as iperf3 writes: system calls then cost nothing, and a plain TCP
// stream with calls of the whole tensor (one send, one receive) ran at about
// 2/3 of its rate with 1 MB calls between two processes here.
constexpr int64_t kRawChunkBytes = int64_t{1} << 20;
// Encoded payloads are narrowed (sender) or widened (receiver) through a
// buffer of this many 16-bit words, which stays in the core's L2 cache.
// Measured between two processes on loopback, fp16 of 64 MB against
// uncompressed in paired runs: 256Ki words 1.5-2.3x the rate, 64Ki words
// 1.3-1.8x, 1Mi words 1.6-2.2x.
constexpr int64_t kCodecChunkWords = int64_t{256} << 10;

struct Request {
  uint16_t encoding = 0;  // a WireEncoding value
  uint8_t token[kTokenBytes] = {};
  uint64_t num_bytes = 0;  // on the wire
};

enum class ReplyStatus : uint8_t { kOk = 0, kNoSuchOffer = 1, kMismatch = 2 };

struct Reply {
  ReplyStatus status = ReplyStatus::kOk;
  uint64_t num_bytes = 0;  // payload that follows; 0 unless kOk
};

void EncodeRequest(const Request& request, uint8_t out[kRequestBytes]);
// False when `in` is not a version-2 request of a known encoding.
bool ParseRequest(const uint8_t in[kRequestBytes], Request* request);
void EncodeReply(const Reply& reply, uint8_t out[kReplyBytes]);
// False when `in` is not a well-formed reply.
bool ParseReply(const uint8_t in[kReplyBytes], Reply* reply);

// 16 bytes from the kernel's CSPRNG (getrandom, or /dev/urandom where the
// system call is missing).
std::string RandomToken();
// Compares every byte whatever the first difference, so that how long a
// rejected guess took says nothing about how close it was.
bool TokensEqual(const uint8_t* a, const uint8_t* b);

std::string ErrnoText(int err);

// SO_RCVTIMEO / SO_SNDTIMEO: a blocking call that makes no progress for `d`
// fails with EAGAIN. InfiniteDuration: no limit.
void SetTimeout(int fd, int option, absl::Duration d);
// TCP_NODELAY: small frames (requests, replies) go out at once.
void SetNoDelay(int fd);

// Sends all of [p, p+n) with MSG_NOSIGNAL (and `flags`, e.g. MSG_MORE). 0,
// or the errno that stopped it (EAGAIN: the send timeout passed without
// progress).
int SendAll(int fd, const void* p, int64_t n, int flags = 0);

enum class RecvResult { kData, kClosed, kTimeout, kError };
// One recv of at most n bytes (and kRawChunkBytes). kData: *got bytes came;
// kError: *err is the errno.
RecvResult RecvSome(int fd, void* p, int64_t n, int64_t* got, int* err);

struct Listener {
  int fd = -1;
  std::string address;  // "host:port" as peers dial it
};
// A listening TCP socket on host:port (port 0: any free one). "" or a
// wildcard host binds every interface and advertises the host name.
absl::StatusOr<Listener> ListenTcp(const std::string& host, int port);

// A connected blocking TCP socket to "host:port" / "[v6]:port", with
// TCP_NODELAY; Unavailable naming the address when it cannot connect within
// `timeout`, InvalidArgument when the address is malformed.
absl::StatusOr<int> DialTcp(const std::string& address, absl::Duration timeout);

}  // namespace data_plane_internal
}  // namespace graphrun

#endif  // GRAPHRUN_DISTRIBUTED_DATA_PLANE_WIRE_H_
