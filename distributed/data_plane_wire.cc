#include "distributed/data_plane_wire.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "distributed/protos/worker.pb.h"
#include "graph/check.h"

namespace graphrun {
namespace data_plane_internal {
namespace {

constexpr char kRequestMagic[4] = {'G', 'R', 'D', 'Q'};
constexpr char kReplyMagic[4] = {'G', 'R', 'D', 'R'};
constexpr uint16_t kVersion = 2;

void PutU16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
}
void PutU64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
uint16_t GetU16(const uint8_t* p) { return p[0] | (uint16_t{p[1]} << 8); }
uint64_t GetU64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t{p[i]} << (8 * i);
  return v;
}

// "host:port" or "[v6]:port" -> parts. False when malformed.
bool SplitAddress(const std::string& address, std::string* host,
                  std::string* port) {
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon + 1 == address.size()) return false;
  *host = address.substr(0, colon);
  *port = address.substr(colon + 1);
  if (host->size() >= 2 && host->front() == '[' && host->back() == ']') {
    *host = host->substr(1, host->size() - 2);
  }
  return !host->empty();
}

// Connects non-blocking socket `fd` to `a` within `timeout`: 0 or an errno.
int ConnectWithin(int fd, const addrinfo* a, absl::Duration timeout) {
  if (connect(fd, a->ai_addr, a->ai_addrlen) == 0) return 0;
  if (errno != EINPROGRESS) return errno;
  pollfd p = {fd, POLLOUT, 0};
  const int64_t ms = absl::ToInt64Milliseconds(timeout);
  if (poll(&p, 1, static_cast<int>(std::clamp<int64_t>(ms, 1, 1 << 30))) != 1) {
    return ETIMEDOUT;
  }
  int err = 0;
  socklen_t len = sizeof(err);
  getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
  return err;
}

}  // namespace

void EncodeRequest(const Request& request, uint8_t out[kRequestBytes]) {
  std::memcpy(out, kRequestMagic, 4);
  PutU16(out + 4, kVersion);
  PutU16(out + 6, request.encoding);
  std::memcpy(out + 8, request.token, kTokenBytes);
  PutU64(out + 24, request.num_bytes);
}

bool ParseRequest(const uint8_t in[kRequestBytes], Request* request) {
  if (std::memcmp(in, kRequestMagic, 4) != 0 || GetU16(in + 4) != kVersion) {
    return false;
  }
  request->encoding = GetU16(in + 6);
  if (!WireEncoding_IsValid(request->encoding)) return false;
  std::memcpy(request->token, in + 8, kTokenBytes);
  request->num_bytes = GetU64(in + 24);
  return true;
}

void EncodeReply(const Reply& reply, uint8_t out[kReplyBytes]) {
  std::memset(out, 0, kReplyBytes);
  std::memcpy(out, kReplyMagic, 4);
  out[4] = static_cast<uint8_t>(reply.status);
  PutU64(out + 8, reply.num_bytes);
}

bool ParseReply(const uint8_t in[kReplyBytes], Reply* reply) {
  if (std::memcmp(in, kReplyMagic, 4) != 0 || in[4] > 2 || in[5] != 0 ||
      in[6] != 0 || in[7] != 0) {
    return false;
  }
  reply->status = static_cast<ReplyStatus>(in[4]);
  reply->num_bytes = GetU64(in + 8);
  return reply->status == ReplyStatus::kOk || reply->num_bytes == 0;
}

std::string RandomToken() {
  std::string token(kTokenBytes, '\0');
  size_t got = 0;
  while (got < token.size()) {
    const ssize_t n = getrandom(&token[got], token.size() - got, 0);
    if (n > 0) {
      got += n;
    } else if (n < 0 && errno == ENOSYS) {
      const int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
      GR_CHECK(fd >= 0);
      while (got < token.size()) {
        const ssize_t r = read(fd, &token[got], token.size() - got);
        GR_CHECK(r > 0 || (r < 0 && errno == EINTR));
        if (r > 0) got += r;
      }
      close(fd);
    } else {
      GR_CHECK(n < 0 && errno == EINTR);
    }
  }
  return token;
}

bool TokensEqual(const uint8_t* a, const uint8_t* b) {
  uint8_t diff = 0;
  for (int i = 0; i < kTokenBytes; ++i) diff |= a[i] ^ b[i];
  return diff == 0;
}

std::string ErrnoText(int err) { return std::strerror(err); }

void SetTimeout(int fd, int option, absl::Duration d) {
  timeval tv = {0, 0};  // no limit
  if (d != absl::InfiniteDuration()) {
    tv = absl::ToTimeval(std::max(d, absl::Milliseconds(1)));
  }
  setsockopt(fd, SOL_SOCKET, option, &tv, sizeof(tv));
}

void SetNoDelay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

int SendAll(int fd, const void* p, int64_t n, int flags) {
  const char* c = static_cast<const char*>(p);
  while (n > 0) {
    const ssize_t k =
        send(fd, c, std::min(n, kRawChunkBytes), MSG_NOSIGNAL | flags);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) return errno == EWOULDBLOCK ? EAGAIN : errno;
    c += k;
    n -= k;
  }
  return 0;
}

RecvResult RecvSome(int fd, void* p, int64_t n, int64_t* got, int* err) {
  while (true) {
    const ssize_t k = recv(fd, p, std::min(n, kRawChunkBytes), 0);
    if (k > 0) {
      *got = k;
      return RecvResult::kData;
    }
    if (k == 0) return RecvResult::kClosed;
    if (errno == EINTR) continue;
    *err = errno;
    return errno == EAGAIN || errno == EWOULDBLOCK ? RecvResult::kTimeout
                                                   : RecvResult::kError;
  }
}

absl::StatusOr<Listener> ListenTcp(const std::string& host, int port) {
  const std::string what =
      absl::StrCat("data plane: listening on ", host, ":", port);
  if (port < 0 || port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": bad port"));
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* info = nullptr;
  const std::string port_text = std::to_string(port);
  const int rc = getaddrinfo(host.empty() ? nullptr : host.c_str(),
                             port_text.c_str(), &hints, &info);
  if (rc != 0) {
    return absl::UnavailableError(absl::StrCat(what, ": ", gai_strerror(rc)));
  }
  int fd = -1;
  int last_errno = 0;
  for (addrinfo* a = info; a != nullptr && fd < 0; a = a->ai_next) {
    fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      last_errno = errno;
      continue;
    }
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, a->ai_addr, a->ai_addrlen) != 0 || listen(fd, 128) != 0) {
      last_errno = errno;
      close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(info);
  if (fd < 0) {
    return absl::UnavailableError(
        absl::StrCat(what, ": ", ErrnoText(last_errno)));
  }
  sockaddr_storage bound{};
  socklen_t len = sizeof(bound);
  getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
  const int bound_port =
      ntohs(bound.ss_family == AF_INET6
                ? reinterpret_cast<const sockaddr_in6*>(&bound)->sin6_port
                : reinterpret_cast<const sockaddr_in*>(&bound)->sin_port);
  std::string advertised = host;
  if (host.empty() || host == "0.0.0.0" || host == "::") {
    char name[256] = {};
    gethostname(name, sizeof(name) - 1);
    advertised = name;
  }
  if (advertised.find(':') != std::string::npos) {
    advertised = absl::StrCat("[", advertised, "]");
  }
  return Listener{fd, absl::StrCat(advertised, ":", bound_port)};
}

absl::StatusOr<int> DialTcp(const std::string& address,
                            absl::Duration timeout) {
  std::string host, port;
  if (!SplitAddress(address, &host, &port)) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad address '", address, "'"));
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* info = nullptr;
  const int rc = getaddrinfo(host.c_str(), port.c_str(), &hints, &info);
  if (rc != 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot resolve ", address, ": ", gai_strerror(rc)));
  }
  std::string error = "no address";
  int fd = -1;
  for (addrinfo* a = info; a != nullptr && fd < 0; a = a->ai_next) {
    fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
                a->ai_protocol);
    if (fd < 0) {
      error = ErrnoText(errno);
      continue;
    }
    if (const int err = ConnectWithin(fd, a, timeout); err != 0) {
      error = ErrnoText(err);
      close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(info);
  if (fd < 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot connect to ", address, ": ", error));
  }
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  SetNoDelay(fd);
  return fd;
}

}  // namespace data_plane_internal
}  // namespace graphrun
