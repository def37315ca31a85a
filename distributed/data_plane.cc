#include "distributed/data_plane.h"

#include <errno.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "distributed/data_plane_wire.h"
#include "distributed/wire_codec.h"
#include "graph/allocator.h"
#include "graph/check.h"
#include "graph/status_macros.h"

namespace graphrun {

using data_plane_internal::kCodecChunkWords;
using data_plane_internal::kReplyBytes;
using data_plane_internal::kRequestBytes;
using data_plane_internal::kTokenBytes;
using data_plane_internal::RecvResult;
using data_plane_internal::Reply;
using data_plane_internal::ReplyStatus;
using data_plane_internal::Request;

namespace {

// A receiver that takes no byte for this long loses its transfer.
constexpr absl::Duration kSenderStallTimeout = absl::Seconds(10);
// Idle connections a client keeps per peer; more are closed when released.
constexpr size_t kMaxIdlePerPeer = 16;

// Reads exactly n bytes: kData when they all came, else what stopped it
// (*err: the errno of a kError) after *have bytes. With `idle_ok`, timeouts
// before the first byte are waited through (an idle connection between
// requests).
RecvResult RecvExactly(int fd, uint8_t* p, int64_t n, bool idle_ok, int* err,
                       int64_t* have) {
  *have = 0;
  while (*have < n) {
    int64_t got = 0;
    const RecvResult r =
        data_plane_internal::RecvSome(fd, p + *have, n - *have, &got, err);
    if (r == RecvResult::kData) {
      *have += got;
    } else if (r != RecvResult::kTimeout || !idle_ok || *have != 0) {
      return r;
    }
  }
  return RecvResult::kData;
}

// What a failed receive says, as part of an error message.
std::string Describe(RecvResult r, int err, absl::Duration stall_timeout) {
  switch (r) {
    case RecvResult::kClosed:
      return "the peer closed the connection";
    case RecvResult::kTimeout:
      return absl::StrCat("no byte for ", absl::FormatDuration(stall_timeout));
    default:
      return data_plane_internal::ErrnoText(err);
  }
}

}  // namespace

int64_t DecodedBytes(WireEncoding encoding, int64_t wire_bytes) {
  if (wire_bytes < 0) return -1;
  switch (encoding) {
    case WIRE_ENCODING_NONE:
      return wire_bytes;
    case WIRE_ENCODING_FP16:
    case WIRE_ENCODING_BF16:
      if (wire_bytes % 2 != 0 ||
          wire_bytes > std::numeric_limits<int64_t>::max() / 2) {
        return -1;
      }
      return wire_bytes * 2;
    default:
      return -1;
  }
}

// ---------------------------------------------------------------- server

struct DataPlaneServer::PendingOffer {
  uint8_t token[kTokenBytes];
  std::shared_ptr<const void> keepalive;
  const char* data;
  int64_t source_bytes;  // in memory (float32 for FP16/BF16)
  int64_t wire_bytes;    // on the wire
  WireEncoding encoding;
  absl::Time deadline;
  std::atomic<int64_t>* saturated;
};

struct DataPlaneServer::Connection {
  int fd = -1;
  std::thread thread;
  bool done = false;  // guarded by the server's mu_
};

absl::StatusOr<std::unique_ptr<DataPlaneServer>> DataPlaneServer::Start(
    const std::string& host, int port) {
  GR_ASSIGN_OR_RETURN(data_plane_internal::Listener listener,
                      data_plane_internal::ListenTcp(host, port));
  const int wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake < 0) {
    close(listener.fd);
    return absl::UnavailableError(absl::StrCat(
        "data plane: eventfd: ", data_plane_internal::ErrnoText(errno)));
  }
  return std::unique_ptr<DataPlaneServer>(
      new DataPlaneServer(listener.fd, wake, listener.address));
}

DataPlaneServer::DataPlaneServer(int listen_fd, int wake_fd,
                                 std::string address)
    : listen_fd_(listen_fd), wake_fd_(wake_fd), address_(std::move(address)) {
  accept_thread_ = std::thread([this] { AcceptLoop(); });
}

DataPlaneServer::~DataPlaneServer() {
  std::list<std::unique_ptr<Connection>> connections;
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    // Unblocks each connection's thread in recv or send. A descriptor is
    // closed only once its thread is joined, so it cannot be reused under
    // the thread.
    for (auto& c : connections_) shutdown(c->fd, SHUT_RDWR);
  }
  Wake();
  accept_thread_.join();  // no connection is added after this
  {
    absl::MutexLock lock(&mu_);
    connections.swap(connections_);
  }
  for (auto& c : connections) {
    c->thread.join();
    close(c->fd);
  }
  close(listen_fd_);
  close(wake_fd_);
  std::vector<std::unique_ptr<PendingOffer>> offers;
  absl::MutexLock lock(&mu_);
  offers.swap(offers_);  // released after the lock
}

void DataPlaneServer::Wake() {
  const uint64_t one = 1;
  const ssize_t ignored = write(wake_fd_, &one, sizeof(one));
  (void)ignored;  // the counter is already nonzero, or the fd is gone
}

DataPlaneTicket DataPlaneServer::Offer(std::shared_ptr<const void> keepalive,
                                       const char* data, int64_t num_bytes,
                                       WireEncoding encoding,
                                       absl::Duration ttl,
                                       std::atomic<int64_t>* saturated) {
  GR_CHECK(num_bytes >= 0);
  GR_CHECK(DecodedBytes(encoding, 0) == 0);  // a known encoding
  GR_CHECK(encoding == WIRE_ENCODING_NONE || num_bytes % 4 == 0);
  auto offer = std::make_unique<PendingOffer>();
  const std::string token = data_plane_internal::RandomToken();
  std::memcpy(offer->token, token.data(), kTokenBytes);
  offer->keepalive = std::move(keepalive);
  offer->data = data;
  offer->source_bytes = num_bytes;
  offer->wire_bytes =
      encoding == WIRE_ENCODING_NONE ? num_bytes : num_bytes / 2;
  offer->encoding = encoding;
  offer->deadline = absl::Now() + ttl;
  offer->saturated = saturated;
  DataPlaneTicket ticket;
  ticket.set_address(address_);
  ticket.set_token(token);
  ticket.set_num_bytes(offer->wire_bytes);
  bool wake;
  {
    absl::MutexLock lock(&mu_);
    // The accept loop is woken only when it would otherwise drop this offer
    // late: offers made with one ttl expire in the order they came.
    wake = offer->deadline < next_expiry_;
    offers_.push_back(std::move(offer));
  }
  if (wake) Wake();
  return ticket;
}

int DataPlaneServer::NumPendingOffers() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(offers_.size());
}

int DataPlaneServer::DropExpiredOffers(absl::Time now) {
  std::vector<std::unique_ptr<PendingOffer>> expired;  // released unlocked
  absl::MutexLock lock(&mu_);
  auto kept =
      std::stable_partition(offers_.begin(), offers_.end(),
                            [now](const std::unique_ptr<PendingOffer>& o) {
                              return o->deadline > now;
                            });
  std::move(kept, offers_.end(), std::back_inserter(expired));
  offers_.erase(kept, offers_.end());
  return static_cast<int>(expired.size());
}

std::unique_ptr<DataPlaneServer::PendingOffer> DataPlaneServer::TakeOffer(
    const uint8_t* token) {
  absl::MutexLock lock(&mu_);
  // Every pending token is compared, whichever matches.
  size_t found = offers_.size();
  for (size_t i = 0; i < offers_.size(); ++i) {
    if (data_plane_internal::TokensEqual(offers_[i]->token, token)) found = i;
  }
  if (found == offers_.size()) return nullptr;
  std::unique_ptr<PendingOffer> offer = std::move(offers_[found]);
  offers_.erase(offers_.begin() + found);
  offers_taken_.fetch_add(1, std::memory_order_relaxed);
  return offer;
}

void DataPlaneServer::JoinFinishedConnections() {
  std::list<std::unique_ptr<Connection>> finished;
  {
    absl::MutexLock lock(&mu_);
    for (auto it = connections_.begin(); it != connections_.end();) {
      auto next = std::next(it);
      if ((*it)->done) finished.splice(finished.end(), connections_, it);
      it = next;
    }
  }
  for (auto& c : finished) {
    c->thread.join();
    close(c->fd);
  }
}

void DataPlaneServer::AcceptLoop() {
  while (true) {
    JoinFinishedConnections();
    int timeout_ms = -1;
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) return;
      absl::Time next = absl::InfiniteFuture();
      for (const auto& o : offers_) next = std::min(next, o->deadline);
      next_expiry_ = next;
      if (next != absl::InfiniteFuture()) {
        const int64_t ms = absl::ToInt64Milliseconds(
            absl::Ceil(next - absl::Now(), absl::Milliseconds(1)));
        timeout_ms = static_cast<int>(std::clamp<int64_t>(ms, 0, 1 << 30));
      }
    }
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    if (poll(fds, 2, timeout_ms) < 0) continue;  // EINTR
    if (fds[1].revents & POLLIN) {
      uint64_t count;
      const ssize_t ignored = read(wake_fd_, &count, sizeof(count));
      (void)ignored;
    }
    DropExpiredOffers(absl::Now());
    if (!(fds[0].revents & POLLIN)) continue;
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;  // the peer went away, or out of descriptors
    data_plane_internal::SetNoDelay(fd);
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
    data_plane_internal::SetTimeout(fd, SO_SNDTIMEO, kSenderStallTimeout);
    data_plane_internal::SetTimeout(fd, SO_RCVTIMEO, kSenderStallTimeout);
    absl::MutexLock lock(&mu_);
    if (stopping_) {
      close(fd);
      return;
    }
    connections_accepted_.fetch_add(1, std::memory_order_relaxed);
    connections_.push_back(std::make_unique<Connection>());
    Connection* c = connections_.back().get();
    c->fd = fd;
    c->thread = std::thread([this, c] { Serve(c); });
  }
}

void DataPlaneServer::Serve(Connection* connection) {
  const int fd = connection->fd;
  std::unique_ptr<uint16_t[]> words;  // encoding buffer, made on first use
  while (true) {
    // An idle connection waits as long as it takes for a request's first
    // byte; the rest must follow within the stall timeout.
    uint8_t request_bytes[kRequestBytes];
    Request request;
    int err = 0;
    int64_t have = 0;
    if (RecvExactly(fd, request_bytes, kRequestBytes, /*idle_ok=*/true, &err,
                    &have) != RecvResult::kData ||
        !data_plane_internal::ParseRequest(request_bytes, &request)) {
      break;  // gone, or not a data plane peer we understand
    }
    std::unique_ptr<PendingOffer> offer = TakeOffer(request.token);
    Reply reply;
    if (offer == nullptr) {
      reply.status = ReplyStatus::kNoSuchOffer;
    } else if (offer->encoding != request.encoding ||
               static_cast<uint64_t>(offer->wire_bytes) != request.num_bytes) {
      reply.status = ReplyStatus::kMismatch;
    } else {
      reply.num_bytes = offer->wire_bytes;
    }
    uint8_t reply_bytes[kReplyBytes];
    data_plane_internal::EncodeReply(reply, reply_bytes);
    // An ok reply leaves with the payload's first bytes (MSG_MORE), not in a
    // segment of its own.
    const bool more = reply.status == ReplyStatus::kOk && reply.num_bytes > 0;
    if (data_plane_internal::SendAll(fd, reply_bytes, kReplyBytes,
                                     more ? MSG_MORE : 0) != 0) {
      break;
    }
    if (reply.status != ReplyStatus::kOk) continue;
    int error = 0;
    if (offer->encoding == WIRE_ENCODING_NONE) {
      error = data_plane_internal::SendAll(fd, offer->data, offer->wire_bytes);
    } else {
      if (words == nullptr) words.reset(new uint16_t[kCodecChunkWords]);
      const float* src = reinterpret_cast<const float*>(offer->data);
      const int64_t n = offer->source_bytes / 4;
      uint64_t transfer_saturated = 0;
      for (int64_t i = 0; i < n && error == 0; i += kCodecChunkWords) {
        const int64_t m = std::min(kCodecChunkWords, n - i);
        if (offer->encoding == WIRE_ENCODING_FP16) {
          const int64_t saturated = EncodeFp16(src + i, m, words.get());
          transfer_saturated += static_cast<uint64_t>(saturated);
          if (saturated != 0 && offer->saturated != nullptr) {
            offer->saturated->fetch_add(saturated, std::memory_order_relaxed);
          }
        } else {
          EncodeBf16(src + i, m, words.get());
        }
        error = data_plane_internal::SendAll(fd, words.get(), m * 2);
      }
      if (error == 0 && offer->encoding == WIRE_ENCODING_FP16) {
        uint8_t trailer[8];
        for (int b = 0; b < 8; ++b) trailer[b] = static_cast<uint8_t>(transfer_saturated >> (8 * b));
        error = data_plane_internal::SendAll(fd, trailer, sizeof(trailer));
      }
    }
    if (error != 0) break;
  }
  absl::MutexLock lock(&mu_);
  connection->done = true;
  Wake();  // so that the accept loop joins this thread
}

// ---------------------------------------------------------------- client

DataPlaneClient::~DataPlaneClient() {
  absl::MutexLock lock(&mu_);
  for (auto& [address, connections] : idle_) {
    for (PeerConnection& c : connections) close(c.fd);
  }
}

absl::StatusOr<DataPlaneClient::PeerConnection> DataPlaneClient::Acquire(
    const std::string& address, absl::Duration timeout, bool* reused) {
  {
    absl::MutexLock lock(&mu_);
    auto it = idle_.find(address);
    if (it != idle_.end() && !it->second.empty()) {
      PeerConnection c = std::move(it->second.back());
      it->second.pop_back();
      *reused = true;
      return c;
    }
  }
  *reused = false;
  GR_ASSIGN_OR_RETURN(const int fd,
                      data_plane_internal::DialTcp(address, timeout));
  connections_opened_.fetch_add(1, std::memory_order_relaxed);
  PeerConnection c;
  c.fd = fd;
  return c;
}

void DataPlaneClient::Release(const std::string& address, PeerConnection c) {
  absl::MutexLock lock(&mu_);
  std::vector<PeerConnection>& connections = idle_[address];
  if (connections.size() < kMaxIdlePerPeer) {
    connections.push_back(std::move(c));
  } else {
    close(c.fd);
  }
}

absl::StatusOr<DataPlaneClient::PeerConnection> DataPlaneClient::Ask(
    const std::string& address, const uint8_t* request,
    absl::Duration stall_timeout, Reply* reply) {
  for (int attempt = 0;; ++attempt) {
    bool reused = false;
    GR_ASSIGN_OR_RETURN(PeerConnection c,
                        Acquire(address, stall_timeout, &reused));
    if (c.timeout != stall_timeout) {
      data_plane_internal::SetTimeout(c.fd, SO_RCVTIMEO, stall_timeout);
      data_plane_internal::SetTimeout(c.fd, SO_SNDTIMEO, stall_timeout);
      c.timeout = stall_timeout;
    }
    std::string error;
    // Whether the connection was found dead before the peer could have
    // seen the request (an idle one the peer had closed meanwhile).
    bool dead_before_request = false;
    int err = data_plane_internal::SendAll(c.fd, request, kRequestBytes);
    if (err != 0) {
      error = data_plane_internal::ErrnoText(err);
      dead_before_request = err == EPIPE || err == ECONNRESET;
    } else {
      uint8_t bytes[kReplyBytes];
      int64_t have = 0;
      const RecvResult r =
          RecvExactly(c.fd, bytes, kReplyBytes, /*idle_ok=*/false, &err, &have);
      dead_before_request =
          have == 0 && (r == RecvResult::kClosed ||
                        (r == RecvResult::kError && err == ECONNRESET));
      if (r != RecvResult::kData) {
        error = Describe(r, err, stall_timeout);
      } else if (!data_plane_internal::ParseReply(bytes, reply)) {
        error = "the peer's reply is not a data plane reply";
      }
    }
    if (error.empty()) return c;
    close(c.fd);
    if (reused && attempt == 0 && dead_before_request) continue;
    return absl::UnavailableError(error);
  }
}

absl::Status DataPlaneClient::Fetch(const DataPlaneTicket& ticket,
                                    WireEncoding encoding, char* dst,
                                    int64_t dst_bytes,
                                    absl::Duration stall_timeout,
                                    int64_t* fp16_saturated) {
  const std::string& address = ticket.address();
  const int64_t wire_bytes = ticket.num_bytes();
  const std::string what = absl::StrCat("data plane: fetching ", wire_bytes,
                                        " bytes from ", address);
  if (ticket.token().size() != kTokenBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": the token has ", ticket.token().size(),
                     " bytes, not ", kTokenBytes));
  }
  const int64_t decoded = DecodedBytes(encoding, wire_bytes);
  if (decoded < 0 || decoded != dst_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " (", WireEncoding_Name(encoding), "): the destination has ",
        dst_bytes, " bytes, the ticket decodes to ", decoded));
  }
  if (encoding != WIRE_ENCODING_NONE &&
      reinterpret_cast<uintptr_t>(dst) % alignof(float) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": the float32 destination is not aligned"));
  }
  Request request;
  request.encoding = static_cast<uint16_t>(encoding);
  std::memcpy(request.token, ticket.token().data(), kTokenBytes);
  request.num_bytes = static_cast<uint64_t>(wire_bytes);
  uint8_t request_bytes[kRequestBytes];
  data_plane_internal::EncodeRequest(request, request_bytes);

  Reply reply;
  absl::StatusOr<PeerConnection> asked =
      Ask(address, request_bytes, stall_timeout, &reply);
  if (!asked.ok()) return WithContext(asked.status(), what);
  PeerConnection c = std::move(*asked);
  if (reply.status == ReplyStatus::kNoSuchOffer) {
    Release(address, std::move(c));
    return absl::NotFoundError(absl::StrCat(
        what, ": no such offer (unknown or expired token, or already pulled)"));
  }
  if (reply.status == ReplyStatus::kMismatch) {
    Release(address, std::move(c));
    return absl::InvalidArgumentError(
        absl::StrCat(what,
                     ": the offer's encoding or size is not the "
                     "ticket's (",
                     WireEncoding_Name(encoding), ")"));
  }
  if (reply.num_bytes != static_cast<uint64_t>(wire_bytes)) {
    close(c.fd);
    return absl::UnavailableError(
        absl::StrCat(what, ": the peer announced ", reply.num_bytes, " bytes"));
  }
  const std::string error =
      ReceivePayload(c, encoding, dst, wire_bytes, stall_timeout);
  if (!error.empty()) {
    close(c.fd);
    return absl::UnavailableError(absl::StrCat(what, ": ", error));
  }
  if (encoding == WIRE_ENCODING_FP16) {
    uint8_t trailer[8];
    int err = 0;
    int64_t have = 0;
    const RecvResult r =
        RecvExactly(c.fd, trailer, sizeof(trailer), /*idle_ok=*/false, &err, &have);
    if (r != RecvResult::kData) {
      close(c.fd);
      return absl::UnavailableError(absl::StrCat(
          what, ": ", Describe(r, err, stall_timeout), " in the saturation count"));
    }
    uint64_t count = 0;
    for (int b = 0; b < 8; ++b) count |= static_cast<uint64_t>(trailer[b]) << (8 * b);
    if (fp16_saturated != nullptr) *fp16_saturated = static_cast<int64_t>(count);
  }
  Release(address, std::move(c));
  return absl::OkStatus();
}

absl::StatusOr<Tensor> DataPlaneClient::FetchTensor(const DataPlaneTicket& ticket,
                                                    WireEncoding encoding, DataType dtype,
                                                    const TensorShapeProto& shape_proto,
                                                    absl::Duration stall_timeout,
                                                    int64_t* fp16_saturated) {
  GR_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromProto(shape_proto));
  if (DataTypeSize(dtype) == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("a ", DataTypeString(dtype), " tensor offered on the data plane"));
  }
  GR_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(HostAllocator(), dtype, shape,
                                                 TensorBuffer::Init::kUninitialized));
  GR_RETURN_IF_ERROR(Fetch(ticket, encoding, static_cast<char*>(t.raw_data()),
                           static_cast<int64_t>(t.TotalBytes()), stall_timeout, fp16_saturated));
  return t;
}

std::string DataPlaneClient::ReceivePayload(PeerConnection& c,
                                            WireEncoding encoding, char* dst,
                                            int64_t wire_bytes,
                                            absl::Duration stall_timeout) {
  // Uncompressed bytes go straight into dst; encoded ones through an
  // L2-sized buffer of words, decoded as they arrive.
  const bool decode = encoding != WIRE_ENCODING_NONE;
  if (decode && c.words == nullptr) {
    c.words.reset(new uint16_t[kCodecChunkWords]);
  }
  char* const staging = reinterpret_cast<char*>(c.words.get());
  float* out = reinterpret_cast<float*>(dst);
  int64_t received = 0;
  int64_t staged = 0;  // bytes in staging not yet decoded: 0, or 1 after
  while (received < wire_bytes) {
    char* into = decode ? staging + staged : dst + received;
    int64_t room = wire_bytes - received;
    if (decode) room = std::min(room, kCodecChunkWords * 2 - staged);
    int64_t got = 0;
    int err = 0;
    const RecvResult r =
        data_plane_internal::RecvSome(c.fd, into, room, &got, &err);
    if (r != RecvResult::kData) {
      return absl::StrCat(Describe(r, err, stall_timeout), " after ", received,
                          " of ", wire_bytes, " bytes");
    }
    received += got;
    if (!decode) continue;
    staged += got;
    const int64_t n = staged / 2;
    if (encoding == WIRE_ENCODING_FP16) {
      DecodeFp16(c.words.get(), n, out);
    } else {
      DecodeBf16(c.words.get(), n, out);
    }
    out += n;
    if (staged % 2 != 0) staging[0] = staging[staged - 1];
    staged %= 2;
  }
  return "";
}

}  // namespace graphrun
