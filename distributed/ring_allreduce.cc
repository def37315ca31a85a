#include "distributed/ring_allreduce.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "distributed/wire_codec.h"
#include "graph/status_macros.h"

namespace graphrun {
namespace {

constexpr char kMagic[4] = {'G', 'R', 'R', 'G'};

int PollMs(absl::Time deadline) {
  const absl::Duration left = deadline - absl::Now();
  if (left <= absl::ZeroDuration()) return 0;
  return static_cast<int>(std::min<int64_t>(absl::ToInt64Milliseconds(left) + 1, 1 << 30));
}

// Waits for `events` on fd; false when the stall timeout passed first.
bool WaitFor(int fd, short events, absl::Duration stall) {
  const absl::Time deadline = absl::Now() + stall;
  while (true) {
    pollfd p{fd, events, 0};
    const int r = poll(&p, 1, PollMs(deadline));
    if (r > 0) return true;
    if (r < 0 && errno == EINTR) continue;
    if (r == 0 && absl::Now() >= deadline) return false;
  }
}

// 0 ok; EPIPE-like errno on a closed peer; ETIMEDOUT on a stall.
int WriteAll(int fd, const char* p, int64_t n, absl::Duration stall) {
  while (n > 0) {
    const ssize_t w = send(fd, p, static_cast<size_t>(std::min<int64_t>(n, 1 << 30)),
                           MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w > 0) {
      p += w;
      n -= w;
      continue;
    }
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!WaitFor(fd, POLLOUT, stall)) return ETIMEDOUT;
      continue;
    }
    return w < 0 ? errno : EPIPE;
  }
  return 0;
}

int ReadAll(int fd, char* p, int64_t n, absl::Duration stall) {
  while (n > 0) {
    const ssize_t r = recv(fd, p, static_cast<size_t>(std::min<int64_t>(n, 1 << 30)),
                           MSG_DONTWAIT);
    if (r > 0) {
      p += r;
      n -= r;
      continue;
    }
    if (r == 0) return ECONNRESET;  // the peer closed
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (!WaitFor(fd, POLLIN, stall)) return ETIMEDOUT;
      continue;
    }
    return errno;
  }
  return 0;
}

// The IPv4 address of `host`: dotted, or a name the resolver knows
// ("localhost", a node's name under Slurm).
bool ResolveIpv4(const std::string& host, in_addr* out) {
  if (inet_pton(AF_INET, host.c_str(), out) == 1) return true;
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* info = nullptr;
  if (getaddrinfo(host.c_str(), nullptr, &hints, &info) != 0 || info == nullptr) return false;
  *out = reinterpret_cast<sockaddr_in*>(info->ai_addr)->sin_addr;
  freeaddrinfo(info);
  return true;
}

absl::StatusOr<sockaddr_in> ParseAddress(const std::string& address) {
  const size_t colon = address.rfind(':');
  int port = 0;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  if (colon == std::string::npos || !absl::SimpleAtoi(address.substr(colon + 1), &port) ||
      port <= 0 || port > 65535 || !ResolveIpv4(address.substr(0, colon), &a.sin_addr)) {
    return absl::InvalidArgumentError(
        absl::StrCat("ring address '", address, "' is not host:port of an IPv4 host"));
  }
  a.sin_port = htons(static_cast<uint16_t>(port));
  return a;
}

void NoDelay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

int64_t ElementSize(DataType dtype) {
  switch (dtype) {
    case DT_FLOAT:
    case DT_INT32:
      return 4;
    case DT_DOUBLE:
    case DT_INT64:
      return 8;
    default:
      return 0;
  }
}

template <typename T>
void AddInto(T* dst, const T* src, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] += src[i];
}

void Decode(const uint16_t* src, int64_t n, float* dst, WireEncoding e) {
  if (e == WIRE_ENCODING_BF16) {
    DecodeBf16(src, n, dst);
  } else {
    DecodeFp16(src, n, dst);
  }
}

int64_t Encode(const float* src, int64_t n, uint16_t* dst, WireEncoding e) {
  if (e == WIRE_ENCODING_BF16) {
    EncodeBf16(src, n, dst);
    return 0;
  }
  return EncodeFp16(src, n, dst);
}

}  // namespace

// Sends one segment at a time from a thread of its own, encoding it chunk
// by chunk when it travels as fp16/bf16.
class Ring::Sender {
 public:
  Sender(int fd, const RingOptions& options) : fd_(fd), options_(options) {
    thread_ = std::thread([this] { Loop(); });
  }
  ~Sender() {
    {
      absl::MutexLock lock(&mu_);
      stop_ = true;
    }
    thread_.join();
  }
  void Start(const char* data, int64_t count, int64_t elem, WireEncoding encoding) {
    absl::MutexLock lock(&mu_);
    data_ = data;
    count_ = count;
    elem_ = elem;
    encoding_ = encoding;
    busy_ = true;
  }
  // The errno of the send (0 ok), bytes on the wire, values saturated.
  int Wait(int64_t* bytes, int64_t* saturated) {
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(+[](bool* busy) { return !*busy; }, &busy_));
    *bytes = bytes_;
    *saturated = saturated_;
    return error_;
  }

 private:
  void Loop() {
    std::vector<uint16_t> scratch;
    while (true) {
      const char* data;
      int64_t count, elem;
      WireEncoding encoding;
      {
        absl::MutexLock lock(&mu_);
        mu_.Await(absl::Condition(
            +[](Sender* s) { return s->stop_ || s->busy_; }, this));
        if (stop_) return;
        data = data_;
        count = count_;
        elem = elem_;
        encoding = encoding_;
      }
      int error = 0;
      int64_t bytes = 0, saturated = 0;
      if (encoding == WIRE_ENCODING_NONE) {
        bytes = count * elem;
        error = WriteAll(fd_, data, bytes, options_.stall_timeout);
      } else {
        const int64_t per_chunk = std::max<int64_t>(1, options_.chunk_bytes / 2);
        scratch.resize(static_cast<size_t>(std::min(count, per_chunk)));
        const float* src = reinterpret_cast<const float*>(data);
        for (int64_t at = 0; at < count && error == 0; at += per_chunk) {
          const int64_t n = std::min(per_chunk, count - at);
          saturated += Encode(src + at, n, scratch.data(), encoding);
          error = WriteAll(fd_, reinterpret_cast<const char*>(scratch.data()), n * 2,
                           options_.stall_timeout);
          bytes += n * 2;
        }
      }
      absl::MutexLock lock(&mu_);
      error_ = error;
      bytes_ = bytes;
      saturated_ = saturated;
      busy_ = false;
    }
  }

  const int fd_;
  const RingOptions options_;
  std::thread thread_;
  absl::Mutex mu_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  bool busy_ ABSL_GUARDED_BY(mu_) = false;
  const char* data_ ABSL_GUARDED_BY(mu_) = nullptr;
  int64_t count_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t elem_ ABSL_GUARDED_BY(mu_) = 0;
  WireEncoding encoding_ ABSL_GUARDED_BY(mu_) = WIRE_ENCODING_NONE;
  int error_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t saturated_ ABSL_GUARDED_BY(mu_) = 0;
};

absl::StatusOr<std::unique_ptr<RingListener>> RingListener::Listen(const std::string& host) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  std::string advertised = host;
  if (host.empty() || host == "0.0.0.0" || host == "::" || host == "[::]") {
    // A task bound to every interface: the ring listens on all of them and
    // tells the peers the machine's name.
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    char name[256] = {};
    if (gethostname(name, sizeof(name) - 1) != 0) {
      return absl::UnavailableError(absl::StrCat("ring: gethostname: ", std::strerror(errno)));
    }
    advertised = name;
  } else {
    absl::StatusOr<sockaddr_in> parsed = ParseAddress(absl::StrCat(host, ":1"));
    if (!parsed.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("ring: cannot listen on '", host, "': not an IPv4 host"));
    }
    a = *parsed;
  }
  a.sin_port = 0;
  std::unique_ptr<RingListener> l(new RingListener());
  l->fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (l->fd_ < 0 || bind(l->fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 ||
      listen(l->fd_, 16) != 0) {
    return absl::UnavailableError(
        absl::StrCat("ring: cannot listen on ", host, ": ", std::strerror(errno)));
  }
  socklen_t len = sizeof(a);
  getsockname(l->fd_, reinterpret_cast<sockaddr*>(&a), &len);
  l->address_ = absl::StrCat(advertised, ":", ntohs(a.sin_port));
  return l;
}

RingListener::~RingListener() {
  if (fd_ >= 0) close(fd_);
}

Ring::Ring(const RingOptions& options) : options_(options) {}

Ring::~Ring() {
  Abort();
  sender_.reset();
  if (next_fd_ >= 0) close(next_fd_);
  if (prev_fd_ >= 0) close(prev_fd_);
}

void Ring::Abort() {
  if (next_fd_ >= 0) shutdown(next_fd_, SHUT_RDWR);
  if (prev_fd_ >= 0) shutdown(prev_fd_, SHUT_RDWR);
}

absl::Status Ring::PeerError(int peer, const std::string& what) const {
  return absl::UnavailableError(absl::StrCat("ring rank ", rank(), ": ", what, " rank ", peer,
                                             " at ", options_.addresses[peer]));
}

absl::StatusOr<std::unique_ptr<Ring>> Ring::Connect(std::unique_ptr<RingListener> listener,
                                                    const RingOptions& options) {
  const int n = static_cast<int>(options.addresses.size());
  if (n < 1 || options.rank < 0 || options.rank >= n) {
    return absl::InvalidArgumentError(
        absl::StrCat("ring rank ", options.rank, " is not in a group of ", n));
  }
  std::unique_ptr<Ring> ring(new Ring(options));
  if (n == 1) return ring;
  const int next = (options.rank + 1) % n, prev = (options.rank + n - 1) % n;
  GR_ASSIGN_OR_RETURN(sockaddr_in to, ParseAddress(options.addresses[next]));
  const absl::Time deadline = absl::Now() + options.connect_timeout;
  // Connect to the next rank (it may not listen yet), then say who we are.
  while (true) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 && connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof(to)) == 0) {
      ring->next_fd_ = fd;
      break;
    }
    if (fd >= 0) close(fd);
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(absl::StrCat(
          "ring rank ", options.rank, ": rank ", next, " at ", options.addresses[next],
          " did not accept within ", absl::FormatDuration(options.connect_timeout)));
    }
    absl::SleepFor(absl::Milliseconds(10));
  }
  NoDelay(ring->next_fd_);
  char hello[8];
  std::memcpy(hello, kMagic, 4);
  const int32_t me = options.rank;
  std::memcpy(hello + 4, &me, 4);
  if (WriteAll(ring->next_fd_, hello, 8, options.stall_timeout) != 0) {
    return ring->PeerError(next, "cannot greet");
  }
  // Accept the previous rank: the first connection that greets as it.
  while (ring->prev_fd_ < 0) {
    pollfd p{listener->fd_, POLLIN, 0};
    const int r = poll(&p, 1, PollMs(deadline));
    if (r == 0 && absl::Now() >= deadline) {
      return absl::DeadlineExceededError(absl::StrCat(
          "ring rank ", options.rank, ": rank ", prev, " did not connect within ",
          absl::FormatDuration(options.connect_timeout)));
    }
    if (r <= 0) continue;
    const int fd = accept4(listener->fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    char got[8];
    int32_t who = -1;
    if (ReadAll(fd, got, 8, absl::Seconds(5)) == 0 && std::memcmp(got, kMagic, 4) == 0) {
      std::memcpy(&who, got + 4, 4);
    }
    if (who != prev) {
      close(fd);
      continue;
    }
    NoDelay(fd);
    ring->prev_fd_ = fd;
  }
  ring->sender_ = std::make_unique<Sender>(ring->next_fd_, options);
  return ring;
}

absl::Status Ring::Step(char* base, int64_t elem, int64_t send_off, int64_t send_n,
                        int64_t recv_off, int64_t recv_n, bool accumulate, DataType dtype,
                        WireEncoding encoding, RingStats* stats) {
  const int n = size();
  const int next = (rank() + 1) % n, prev = (rank() + n - 1) % n;
  sender_->Start(base + send_off * elem, send_n, elem, encoding);
  const int64_t wire_elem = encoding == WIRE_ENCODING_NONE ? elem : 2;
  const int64_t per_chunk = std::max<int64_t>(1, options_.chunk_bytes / wire_elem);
  std::vector<char> scratch;
  std::vector<float> decoded;
  int error = 0;
  for (int64_t at = 0; at < recv_n && error == 0; at += per_chunk) {
    const int64_t k = std::min(per_chunk, recv_n - at);
    char* dst = base + (recv_off + at) * elem;
    if (encoding == WIRE_ENCODING_NONE && !accumulate) {
      error = ReadAll(prev_fd_, dst, k * elem, options_.stall_timeout);
      continue;
    }
    scratch.resize(static_cast<size_t>(k * wire_elem));
    error = ReadAll(prev_fd_, scratch.data(), k * wire_elem, options_.stall_timeout);
    if (error != 0) break;
    const char* src = scratch.data();
    if (encoding != WIRE_ENCODING_NONE) {
      decoded.resize(static_cast<size_t>(k));
      Decode(reinterpret_cast<const uint16_t*>(src), k, decoded.data(), encoding);
      src = reinterpret_cast<const char*>(decoded.data());
    }
    if (!accumulate) {
      std::memcpy(dst, src, static_cast<size_t>(k * elem));
      continue;
    }
    switch (dtype) {
      case DT_FLOAT:
        AddInto(reinterpret_cast<float*>(dst), reinterpret_cast<const float*>(src), k);
        break;
      case DT_DOUBLE:
        AddInto(reinterpret_cast<double*>(dst), reinterpret_cast<const double*>(src), k);
        break;
      case DT_INT32:
        AddInto(reinterpret_cast<int32_t*>(dst), reinterpret_cast<const int32_t*>(src), k);
        break;
      default:
        AddInto(reinterpret_cast<int64_t*>(dst), reinterpret_cast<const int64_t*>(src), k);
        break;
    }
  }
  if (error != 0) shutdown(next_fd_, SHUT_RDWR);  // releases the sender
  int64_t bytes = 0, saturated = 0;
  const int send_error = sender_->Wait(&bytes, &saturated);
  if (stats != nullptr) {
    stats->bytes_sent += bytes;
    stats->fp16_saturated += saturated;
  }
  if (error == ETIMEDOUT) {
    return absl::DeadlineExceededError(absl::StrCat(
        "ring rank ", rank(), ": nothing arrived from rank ", prev, " at ",
        options_.addresses[prev], " for ", absl::FormatDuration(options_.stall_timeout)));
  }
  if (error != 0) return PeerError(prev, "lost the connection from");
  if (send_error == ETIMEDOUT) {
    return absl::DeadlineExceededError(absl::StrCat(
        "ring rank ", rank(), ": rank ", next, " at ", options_.addresses[next],
        " took nothing for ", absl::FormatDuration(options_.stall_timeout)));
  }
  if (send_error != 0) return PeerError(next, "lost the connection to");
  return absl::OkStatus();
}

absl::Status Ring::Allreduce(void* data, int64_t count, DataType dtype,
                             const AllreduceOptions& options, RingStats* stats) {
  GR_RETURN_IF_ERROR(broken_);
  WireEncoding encoding = options.encoding;
  const int64_t elem = ElementSize(dtype);
  if (elem == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("ring allreduce of ", DataTypeString(dtype), " (float, double, int32 or "
                     "int64 only)"));
  }
  if (dtype != DT_FLOAT) encoding = WIRE_ENCODING_NONE;
  const int n = size();
  if (n == 1 || count == 0) return absl::OkStatus();
  if (options.mean && dtype == DT_FLOAT) {
    float* v = static_cast<float*>(data);
    const float scale = 1.0f / static_cast<float>(n);
    for (int64_t i = 0; i < count; ++i) v[i] *= scale;
  } else if (options.mean && dtype == DT_DOUBLE) {
    double* v = static_cast<double*>(data);
    for (int64_t i = 0; i < count; ++i) v[i] /= n;
  }
  // Segment i: [off[i], off[i+1]).
  std::vector<int64_t> off(n + 1, 0);
  for (int i = 0; i < n; ++i) off[i + 1] = off[i] + count / n + (i < count % n ? 1 : 0);
  char* base = static_cast<char*>(data);
  const int r = rank();
  auto seg = [&](int i) { return ((i % n) + n) % n; };
  absl::Status s;
  for (int step = 0; step < n - 1 && s.ok(); ++step) {
    const int out = seg(r - step), in = seg(r - step - 1);
    s = Step(base, elem, off[out], off[out + 1] - off[out], off[in], off[in + 1] - off[in],
             /*accumulate=*/true, dtype, encoding, stats);
  }
  if (s.ok() && encoding != WIRE_ENCODING_NONE) {
    // The summed segment this rank owns travels rounded: keep it rounded
    // here too, so that every rank holds the same values.
    const int own = seg(r + 1);
    float* v = reinterpret_cast<float*>(base) + off[own];
    const int64_t k = off[own + 1] - off[own];
    std::vector<uint16_t> wire(static_cast<size_t>(k));
    Encode(v, k, wire.data(), encoding);
    Decode(wire.data(), k, v, encoding);
  }
  for (int step = 0; step < n - 1 && s.ok(); ++step) {
    const int out = seg(r + 1 - step), in = seg(r - step);
    s = Step(base, elem, off[out], off[out + 1] - off[out], off[in], off[in + 1] - off[in],
             /*accumulate=*/false, dtype, encoding, stats);
  }
  if (!s.ok()) {
    broken_ = s;
    Abort();
    return s;
  }
  if (options.mean && dtype == DT_INT32) {
    int32_t* v = static_cast<int32_t*>(data);
    for (int64_t i = 0; i < count; ++i) v[i] /= n;
  } else if (options.mean && dtype == DT_INT64) {
    int64_t* v = static_cast<int64_t*>(data);
    for (int64_t i = 0; i < count; ++i) v[i] /= n;
  }
  return s;
}

}  // namespace graphrun
