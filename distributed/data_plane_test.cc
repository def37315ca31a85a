// The data plane over real loopback sockets, in one process: payloads
// arrive bit-exact (fp16/bf16 exactly as the codec's own encode+decode),
// tokens are single-use, offers expire, broken or silent peers end a Fetch
// with Unavailable, garbage does not hurt the server, connections are
// reused. Raw sockets stand in for misbehaving peers.
#include "distributed/data_plane.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/synchronization/notification.h"
#include "distributed/wire_codec.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace graphrun {
namespace {

using ::testing::HasSubstr;

std::vector<char> RandomBytes(int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<char> bytes(n);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t v = rng();
    std::memcpy(&bytes[i], &v, 8);
  }
  for (; i < n; ++i) bytes[i] = static_cast<char>(rng());
  return bytes;
}

// Shares `bytes` as an offer's keepalive.
std::shared_ptr<const void> Keep(std::shared_ptr<std::vector<char>> bytes) {
  return bytes;
}

std::unique_ptr<DataPlaneServer> StartServer() {
  absl::StatusOr<std::unique_ptr<DataPlaneServer>> server =
      DataPlaneServer::Start("127.0.0.1", 0);
  EXPECT_TRUE(server.ok()) << server.status();
  return server.ok() ? std::move(*server) : nullptr;
}

int PortOf(const std::string& address) {
  int port = 0;
  EXPECT_TRUE(absl::SimpleAtoi(address.substr(address.rfind(':') + 1), &port));
  return port;
}

// A raw TCP connection to 127.0.0.1:port.
int Dial(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  return fd;
}

// Reads until the peer closes or resets; the number of bytes read.
int64_t DrainUntilClosed(int fd) {
  std::vector<char> buf(1 << 20);
  int64_t total = 0;
  while (true) {
    ssize_t n = recv(fd, buf.data(), buf.size(), 0);
    if (n <= 0) return total;
    total += n;
  }
}

// A 32-byte version-2 request for `ticket` (see the header's protocol).
std::string RequestFor(const DataPlaneTicket& ticket, uint16_t encoding) {
  std::string r = "GRDQ";
  r += '\x02';
  r += '\x00';
  r += static_cast<char>(encoding);
  r += '\x00';
  r += ticket.token();
  uint64_t n = ticket.num_bytes();
  for (int i = 0; i < 8; ++i) r += static_cast<char>(n >> (8 * i));
  return r;
}

struct FetchResult {
  absl::Status status;
  std::vector<char> bytes;
};

FetchResult FetchAll(DataPlaneClient& client, const DataPlaneTicket& ticket,
                     WireEncoding encoding,
                     absl::Duration stall = absl::Seconds(5)) {
  FetchResult r;
  r.bytes.resize(DecodedBytes(encoding, ticket.num_bytes()));
  r.status =
      client.Fetch(ticket, encoding, r.bytes.data(), r.bytes.size(), stall);
  return r;
}

TEST(DataPlaneTest, DecodedBytes) {
  EXPECT_EQ(DecodedBytes(WIRE_ENCODING_NONE, 7), 7);
  EXPECT_EQ(DecodedBytes(WIRE_ENCODING_FP16, 8), 16);
  EXPECT_EQ(DecodedBytes(WIRE_ENCODING_BF16, 0), 0);
  EXPECT_EQ(DecodedBytes(WIRE_ENCODING_FP16, 7), -1);
  EXPECT_EQ(DecodedBytes(WIRE_ENCODING_NONE, -1), -1);
  EXPECT_EQ(DecodedBytes(static_cast<WireEncoding>(9), 8), -1);
}

TEST(DataPlaneTest, RoundTripIsBitExact) {
  auto server = StartServer();
  DataPlaneClient client;
  for (int64_t size : {int64_t{0}, int64_t{1}, int64_t{4095}, int64_t{1} << 20,
                       int64_t{64} << 20}) {
    SCOPED_TRACE(size);
    auto bytes = std::make_shared<std::vector<char>>(RandomBytes(size, size));
    DataPlaneTicket ticket =
        server->Offer(Keep(bytes), bytes->data(), size, WIRE_ENCODING_NONE,
                      absl::Minutes(1), nullptr);
    EXPECT_EQ(ticket.address(), server->address());
    EXPECT_EQ(ticket.num_bytes(), size);
    EXPECT_EQ(ticket.token().size(), 16);
    FetchResult r = FetchAll(client, ticket, WIRE_ENCODING_NONE);
    ASSERT_TRUE(r.status.ok()) << r.status;
    EXPECT_TRUE(r.bytes == *bytes);
  }
  EXPECT_EQ(server->NumPendingOffers(), 0);
}

// Floats of every kind the codecs treat specially, then random ones.
std::vector<float> CodecInput(int64_t n) {
  std::vector<float> v = {0.0f,     -0.0f,    1.0f,      -2.5f, 65504.0f,
                          65519.0f, 65520.0f, -1e6f,     3e38f, 1e-8f,
                          6e-5f,    INFINITY, -INFINITY, NAN,   -NAN};
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 100.0f);
  while (static_cast<int64_t>(v.size()) < n) v.push_back(normal(rng));
  v.resize(n);
  return v;
}

TEST(DataPlaneTest, Fp16AndBf16MatchTheCodec) {
  auto server = StartServer();
  DataPlaneClient client;
  // Not a multiple of the transfer's chunks; spans several.
  const int64_t n = 1'000'003;
  for (WireEncoding encoding : {WIRE_ENCODING_FP16, WIRE_ENCODING_BF16}) {
    SCOPED_TRACE(WireEncoding_Name(encoding));
    auto floats = std::make_shared<std::vector<float>>(CodecInput(n));
    std::vector<uint16_t> words(n);
    std::vector<float> expected(n);
    int64_t expected_saturated = 0;
    if (encoding == WIRE_ENCODING_FP16) {
      expected_saturated = EncodeFp16(floats->data(), n, words.data());
      DecodeFp16(words.data(), n, expected.data());
    } else {
      EncodeBf16(floats->data(), n, words.data());
      DecodeBf16(words.data(), n, expected.data());
    }
    std::atomic<int64_t> saturated{0};
    DataPlaneTicket ticket =
        server->Offer(std::shared_ptr<const void>(floats),
                      reinterpret_cast<const char*>(floats->data()), n * 4,
                      encoding, absl::Minutes(1), &saturated);
    EXPECT_EQ(ticket.num_bytes(), n * 2);
    std::vector<float> got(n);
    int64_t told = -1;
    absl::Status s = client.Fetch(ticket, encoding,
                                  reinterpret_cast<char*>(got.data()), n * 4,
                                  absl::Seconds(5), &told);
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_EQ(std::memcmp(got.data(), expected.data(), n * 4), 0);
    // The receiver learns the count from the transfer's trailer.
    if (encoding == WIRE_ENCODING_FP16) {
      EXPECT_EQ(told, expected_saturated);
    }
    // Counted before the last chunk was sent, so before Fetch returned.
    EXPECT_EQ(saturated.load(), expected_saturated);
    if (encoding == WIRE_ENCODING_FP16) {
      EXPECT_EQ(expected_saturated, 3);  // 65520, -1e6, 3e38
    }
  }
}

TEST(DataPlaneTest, TokenIsSingleUse) {
  auto server = StartServer();
  DataPlaneClient client;
  auto bytes = std::make_shared<std::vector<char>>(RandomBytes(1000, 1));
  DataPlaneTicket ticket =
      server->Offer(Keep(bytes), bytes->data(), 1000, WIRE_ENCODING_NONE,
                    absl::Minutes(1), nullptr);
  EXPECT_EQ(server->NumPendingOffers(), 1);
  EXPECT_TRUE(FetchAll(client, ticket, WIRE_ENCODING_NONE).status.ok());
  absl::Status second = FetchAll(client, ticket, WIRE_ENCODING_NONE).status;
  EXPECT_EQ(second.code(), absl::StatusCode::kNotFound) << second;
  EXPECT_THAT(second.message(), HasSubstr(server->address()));
}

TEST(DataPlaneTest, WrongTokenFailsAndLeavesTheOfferAlone) {
  auto server = StartServer();
  DataPlaneClient client;
  auto bytes = std::make_shared<std::vector<char>>(RandomBytes(1000, 2));
  DataPlaneTicket ticket =
      server->Offer(Keep(bytes), bytes->data(), 1000, WIRE_ENCODING_NONE,
                    absl::Minutes(1), nullptr);
  DataPlaneTicket forged = ticket;
  forged.mutable_token()->back() ^= 1;
  EXPECT_EQ(FetchAll(client, forged, WIRE_ENCODING_NONE).status.code(),
            absl::StatusCode::kNotFound);
  forged.set_token("short");
  EXPECT_EQ(FetchAll(client, forged, WIRE_ENCODING_NONE).status.code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(server->NumPendingOffers(), 1);
  FetchResult r = FetchAll(client, ticket, WIRE_ENCODING_NONE);
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_TRUE(r.bytes == *bytes);
}

TEST(DataPlaneTest, SizeAndEncodingMismatches) {
  auto server = StartServer();
  DataPlaneClient client;
  auto bytes = std::make_shared<std::vector<char>>(RandomBytes(1024, 3));
  DataPlaneTicket ticket =
      server->Offer(Keep(bytes), bytes->data(), 1024, WIRE_ENCODING_NONE,
                    absl::Minutes(1), nullptr);
  // Checked before anything is sent: the token stays good.
  std::vector<char> small(1000);
  absl::Status s =
      client.Fetch(ticket, WIRE_ENCODING_NONE, small.data(), small.size());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_EQ(server->NumPendingOffers(), 1);
  EXPECT_EQ(client.connections_opened(), 0);
  // The sender knows the offer is not fp16; presenting the token spends it.
  FetchResult r = FetchAll(client, ticket, WIRE_ENCODING_FP16);
  EXPECT_EQ(r.status.code(), absl::StatusCode::kInvalidArgument) << r.status;
  EXPECT_EQ(server->NumPendingOffers(), 0);
}

TEST(DataPlaneTest, ExpiredOfferIsDroppedAndFails) {
  auto server = StartServer();
  DataPlaneClient client;
  absl::Notification released;
  std::shared_ptr<const void> keepalive(new char[8],
                                        [&released](const char* p) {
                                          delete[] p;
                                          released.Notify();
                                        });
  const char* data = static_cast<const char*>(keepalive.get());
  DataPlaneTicket lasting =
      server->Offer(std::make_shared<int>(0), "abcd", 4, WIRE_ENCODING_NONE,
                    absl::Hours(1), nullptr);
  DataPlaneTicket brief =
      server->Offer(std::move(keepalive), data, 8, WIRE_ENCODING_NONE,
                    absl::Nanoseconds(1), nullptr);
  // The 1 ns offer may already have been dropped by the server itself.
  EXPECT_LE(server->DropExpiredOffers(absl::Now() + absl::Minutes(1)), 1);
  EXPECT_TRUE(released.WaitForNotificationWithTimeout(absl::Seconds(60)));
  EXPECT_EQ(server->NumPendingOffers(), 1);
  absl::Status s = FetchAll(client, brief, WIRE_ENCODING_NONE).status;
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound) << s;
  FetchResult r = FetchAll(client, lasting, WIRE_ENCODING_NONE);
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_EQ(std::string(r.bytes.begin(), r.bytes.end()), "abcd");
}

TEST(DataPlaneTest, ServerDropsExpiredOffersByItself) {
  auto server = StartServer();
  absl::Notification released;
  std::shared_ptr<const void> keepalive(new char[8],
                                        [&released](const char* p) {
                                          delete[] p;
                                          released.Notify();
                                        });
  const char* data = static_cast<const char*>(keepalive.get());
  server->Offer(std::move(keepalive), data, 8, WIRE_ENCODING_NONE,
                absl::Milliseconds(1), nullptr);
  // Waits for the event (the keepalive's release), not for a time.
  EXPECT_TRUE(released.WaitForNotificationWithTimeout(absl::Seconds(60)));
  EXPECT_EQ(server->NumPendingOffers(), 0);
}

TEST(DataPlaneTest, DestroyedServerEndsTransfersAndReleasesOffers) {
  auto server = StartServer();
  // Larger than all the socket buffers between the two ends can hold.
  const int64_t size = int64_t{128} << 20;
  absl::Notification released;
  std::shared_ptr<const void> keepalive(new char[size](),
                                        [&released](const char* p) {
                                          delete[] p;
                                          released.Notify();
                                        });
  const char* data = static_cast<const char*>(keepalive.get());
  DataPlaneTicket ticket =
      server->Offer(std::move(keepalive), data, size, WIRE_ENCODING_NONE,
                    absl::Minutes(1), nullptr);
  server->Offer(std::make_shared<int>(0), "x", 1, WIRE_ENCODING_NONE,
                absl::Minutes(1), nullptr);
  // A peer that asks for the bytes and takes only the reply.
  int fd = Dial(PortOf(server->address()));
  std::string request = RequestFor(ticket, WIRE_ENCODING_NONE);
  ASSERT_EQ(send(fd, request.data(), request.size(), 0), 32);
  char reply[16];
  ASSERT_EQ(recv(fd, reply, 16, MSG_WAITALL), 16);
  EXPECT_EQ(reply[4], 0);
  server.reset();  // the sending thread is blocked on a full socket
  EXPECT_TRUE(released.HasBeenNotified());
  EXPECT_LT(DrainUntilClosed(fd), size);
  close(fd);
}

// A peer that answers "ok, 1 MB follows", sends `sent` bytes, then closes
// (close_after) or goes silent until the test ends.
class FakePeer {
 public:
  FakePeer(int64_t sent, bool close_after) {
    listen_fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
    EXPECT_EQ(listen(listen_fd_, 4), 0);
    socklen_t len = sizeof(a);
    getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len);
    address_ = "127.0.0.1:" + std::to_string(ntohs(a.sin_port));
    thread_ = std::thread([this, sent, close_after] {
      int fd = accept(listen_fd_, nullptr, nullptr);
      char request[32];
      recv(fd, request, 32, MSG_WAITALL);
      std::string reply = "GRDR";
      reply.append(4, '\0');
      const uint64_t n = 1 << 20;
      for (int i = 0; i < 8; ++i) reply += static_cast<char>(n >> (8 * i));
      reply.append(sent, 'z');
      send(fd, reply.data(), reply.size(), MSG_NOSIGNAL);
      if (!close_after) done_.WaitForNotification();
      close(fd);
    });
  }
  ~FakePeer() {
    done_.Notify();
    thread_.join();
    close(listen_fd_);
  }
  DataPlaneTicket Ticket() const {
    DataPlaneTicket t;
    t.set_address(address_);
    t.set_token(std::string(16, 'k'));
    t.set_num_bytes(1 << 20);
    return t;
  }
  const std::string& address() const { return address_; }

 private:
  int listen_fd_;
  std::string address_;
  absl::Notification done_;
  std::thread thread_;
};

TEST(DataPlaneTest, PeerClosingMidTransferIsUnavailable) {
  FakePeer peer(/*sent=*/1000, /*close_after=*/true);
  DataPlaneClient client;
  absl::Status s = FetchAll(client, peer.Ticket(), WIRE_ENCODING_NONE).status;
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
  EXPECT_THAT(s.message(), HasSubstr(peer.address()));
  EXPECT_THAT(s.message(), HasSubstr("closed"));
}

TEST(DataPlaneTest, SilentPeerIsUnavailableAfterTheStallTimeout) {
  FakePeer peer(/*sent=*/1000, /*close_after=*/false);
  DataPlaneClient client;
  absl::Status s = FetchAll(client, peer.Ticket(), WIRE_ENCODING_FP16,
                            absl::Milliseconds(100))
                       .status;
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
  EXPECT_THAT(s.message(), HasSubstr(peer.address()));
  EXPECT_THAT(s.message(), HasSubstr("no byte for"));
}

TEST(DataPlaneTest, GoneServerIsUnavailable) {
  auto server = StartServer();
  DataPlaneClient client;
  DataPlaneTicket first =
      server->Offer(std::make_shared<int>(0), "a", 1, WIRE_ENCODING_NONE,
                    absl::Minutes(1), nullptr);
  ASSERT_TRUE(FetchAll(client, first, WIRE_ENCODING_NONE).status.ok());
  DataPlaneTicket second =
      server->Offer(std::make_shared<int>(0), "b", 1, WIRE_ENCODING_NONE,
                    absl::Minutes(1), nullptr);
  server.reset();
  // The pooled connection is closed; the new one is refused.
  absl::Status s = FetchAll(client, second, WIRE_ENCODING_NONE).status;
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
  EXPECT_THAT(s.message(), HasSubstr(second.address()));
  EXPECT_EQ(client.connections_opened(), 1);
}

TEST(DataPlaneTest, MalformedRequestsCloseOnlyTheirConnection) {
  auto server = StartServer();
  DataPlaneClient client;
  auto bytes = std::make_shared<std::vector<char>>(RandomBytes(5000, 4));
  DataPlaneTicket ticket =
      server->Offer(Keep(bytes), bytes->data(), 5000, WIRE_ENCODING_NONE,
                    absl::Minutes(1), nullptr);
  std::string bad_version = RequestFor(ticket, WIRE_ENCODING_NONE);
  bad_version[4] = 1;  // the version before the fp16 trailer
  std::string bad_encoding = RequestFor(ticket, WIRE_ENCODING_NONE);
  bad_encoding[6] = 7;
  const std::vector<char> noise = RandomBytes(64 << 10, 5);
  for (const std::string& garbage :
       {std::string(noise.begin(), noise.begin() + 32),
        std::string(noise.begin(), noise.end()), bad_version, bad_encoding}) {
    int fd = Dial(PortOf(server->address()));
    send(fd, garbage.data(), garbage.size(), MSG_NOSIGNAL);
    EXPECT_EQ(DrainUntilClosed(fd), 0);  // no reply, just closed
    close(fd);
  }
  // A half-sent request, then the peer goes away.
  int fd = Dial(PortOf(server->address()));
  send(fd, "GRDQ", 4, MSG_NOSIGNAL);
  close(fd);

  EXPECT_EQ(server->NumPendingOffers(), 1);  // no garbage spent the token
  FetchResult r = FetchAll(client, ticket, WIRE_ENCODING_NONE);
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_TRUE(r.bytes == *bytes);
}

TEST(DataPlaneTest, ConcurrentFetchesFromSeveralThreads) {
  auto server = StartServer();
  DataPlaneClient client;
  constexpr int kThreads = 6;
  constexpr int kFetchesEach = 5;
  std::vector<std::thread> threads;
  std::vector<int> failures(kThreads, 0);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kFetchesEach; ++i) {
        const int64_t size = (256 << 10) + 4 * (t * kFetchesEach + i);
        auto floats = std::make_shared<std::vector<char>>(
            RandomBytes(size, 100 + t * kFetchesEach + i));
        const WireEncoding encoding =
            i % 2 == 0 ? WIRE_ENCODING_NONE : WIRE_ENCODING_BF16;
        DataPlaneTicket ticket =
            server->Offer(Keep(floats), floats->data(), size, encoding,
                          absl::Minutes(1), nullptr);
        FetchResult r = FetchAll(client, ticket, encoding);
        std::vector<char> expected = *floats;
        if (encoding == WIRE_ENCODING_BF16) {
          const int64_t n = size / 4;
          std::vector<uint16_t> words(n);
          EncodeBf16(reinterpret_cast<const float*>(floats->data()), n,
                     words.data());
          DecodeBf16(words.data(), n,
                     reinterpret_cast<float*>(expected.data()));
        }
        const bool same = r.bytes == expected;
        if (!r.status.ok() || !same) ++failures[t];
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[t], 0) << t;
  EXPECT_LE(client.connections_opened(), kThreads);
  EXPECT_EQ(server->connections_accepted(), client.connections_opened());
  EXPECT_EQ(server->NumPendingOffers(), 0);
}

TEST(DataPlaneTest, ConnectionsAreReused) {
  auto server = StartServer();
  DataPlaneClient client;
  for (int i = 0; i < 5; ++i) {
    auto bytes = std::make_shared<std::vector<char>>(RandomBytes(100000, i));
    DataPlaneTicket ticket =
        server->Offer(Keep(bytes), bytes->data(), 100000, WIRE_ENCODING_NONE,
                      absl::Minutes(1), nullptr);
    ASSERT_TRUE(FetchAll(client, ticket, WIRE_ENCODING_NONE).status.ok());
  }
  // A refused token leaves the connection usable too.
  DataPlaneTicket unknown;
  unknown.set_address(server->address());
  unknown.set_token(std::string(16, '\0'));
  unknown.set_num_bytes(4);
  EXPECT_EQ(FetchAll(client, unknown, WIRE_ENCODING_NONE).status.code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(client.connections_opened(), 1);
  EXPECT_EQ(server->connections_accepted(), 1);
}

TEST(DataPlaneTest, Ipv6LoopbackAddressIsBracketed) {
  absl::StatusOr<std::unique_ptr<DataPlaneServer>> server =
      DataPlaneServer::Start("::1", 0);
  if (!server.ok()) GTEST_SKIP() << "no IPv6 loopback: " << server.status();
  EXPECT_TRUE(absl::StartsWith((*server)->address(), "[::1]:"));
  DataPlaneClient client;
  DataPlaneTicket ticket =
      (*server)->Offer(std::make_shared<int>(0), "v6", 2, WIRE_ENCODING_NONE,
                       absl::Minutes(1), nullptr);
  FetchResult r = FetchAll(client, ticket, WIRE_ENCODING_NONE);
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_EQ(std::string(r.bytes.begin(), r.bytes.end()), "v6");
}

TEST(DataPlaneTest, UnboundPortIsUnavailable) {
  std::string address = StartServer()->address();  // destroyed at once
  DataPlaneTicket ticket;
  ticket.set_address(address);
  ticket.set_token(std::string(16, '\0'));
  ticket.set_num_bytes(4);
  DataPlaneClient client;
  absl::Status s = FetchAll(client, ticket, WIRE_ENCODING_NONE).status;
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
  EXPECT_THAT(s.message(), HasSubstr(address));
}

}  // namespace
}  // namespace graphrun
