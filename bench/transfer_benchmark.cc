// Tensor bytes between two processes on loopback, as between two workers on
// one host: a plain TCP stream (one raw socket, big writes, no protocol)
// beside the data plane (distributed/data_plane.h) uncompressed and with
// fp16/bf16 on the wire. A forked child is the sender; this process pulls
// into a float32 buffer. Reports the median GB/s over repetitions per size
// (fp16/bf16: float32 bytes delivered per second) and ratios taken within
// each repetition (medians of them).
//
//   bazel-bin/bench/transfer_benchmark [--max_mb=1024] [--reps_scale=1]
//                                      [--only=plain,none,fp16,bf16]
//
// Plain TCP is timed from the 8-byte request to the last byte received, the
// data plane from Fetch's call to its return; before each, a round trip
// over a socket pair stands in for the RecvTensor RPC (and brings the data
// plane's ticket). Buffers are touched
// before timing. Not a Google Benchmark binary: it needs two processes and
// paired repetitions.
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "distributed/data_plane.h"

namespace graphrun {
namespace {

enum Method { kPlain, kNone, kFp16, kBf16, kNumMethods };
const char* const kMethodNames[] = {"plain TCP", "data plane", "dp fp16",
                                    "dp bf16"};
const char* const kMethodFlags[] = {"plain", "none", "fp16", "bf16"};
// Plain TCP's bytes per send and per receive.
constexpr uint64_t kPlainCallBytes = 1 << 20;

void Die(const char* what) {
  std::perror(what);
  std::exit(1);
}

void WriteFull(int fd, const void* p, size_t n) {
  const char* c = static_cast<const char*>(p);
  while (n > 0) {
    ssize_t k = send(fd, c, n, MSG_NOSIGNAL);
    if (k <= 0) Die("send");
    c += k;
    n -= k;
  }
}

void ReadFull(int fd, void* p, size_t n) {
  char* c = static_cast<char*>(p);
  while (n > 0) {
    ssize_t k = recv(fd, c, n, 0);
    if (k <= 0) Die("recv");
    c += k;
    n -= k;
  }
}

void WriteString(int fd, const std::string& s) {
  uint64_t n = s.size();
  WriteFull(fd, &n, 8);
  WriteFull(fd, s.data(), n);
}

std::string ReadString(int fd) {
  uint64_t n;
  ReadFull(fd, &n, 8);
  std::string s(n, '\0');
  ReadFull(fd, s.data(), n);
  return s;
}

int Listen(int* port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) Die("bind");
  if (listen(fd, 4) != 0) Die("listen");
  socklen_t len = sizeof(a);
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  *port = ntohs(a.sin_port);
  return fd;
}

// Values a float32 tensor might hold, quickly: |x| < 64, no NaN.
void Fill(float* v, int64_t n) {
  uint64_t s = 0x9e3779b97f4a7c15ull;
  for (int64_t i = 0; i < n; ++i) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    v[i] =
        static_cast<float>(static_cast<int32_t>(s >> 32)) * (1.0f / (1 << 25));
  }
}

// The sender: answers "plain" requests on a raw socket and offers on the
// data plane, as the control socket asks.
[[noreturn]] void RunSender(int control, int64_t max_bytes) {
  std::shared_ptr<float> source(
      static_cast<float*>(std::aligned_alloc(64, max_bytes)), std::free);
  Fill(source.get(), max_bytes / 4);
  auto server = DataPlaneServer::Start("127.0.0.1", 0);
  if (!server.ok()) Die("data plane server");
  int raw_port = 0;
  int raw_listen = Listen(&raw_port);
  WriteString(control, (*server)->address());
  WriteString(control, std::to_string(raw_port));
  std::thread raw([&] {
    int fd = accept(raw_listen, nullptr, nullptr);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    uint64_t n;
    while (recv(fd, &n, 8, MSG_WAITALL) == 8) {
      // 1 MB per call, as iperf3 writes.
      const char* p = reinterpret_cast<const char*>(source.get());
      for (uint64_t sent = 0; sent < n; sent += kPlainCallBytes) {
        WriteFull(fd, p + sent, std::min<uint64_t>(kPlainCallBytes, n - sent));
      }
    }
    close(fd);
  });
  while (true) {
    uint64_t command[2];  // method, float32 bytes
    ReadFull(control, command, sizeof(command));
    if (command[0] == kNumMethods) break;
    if (command[0] == kPlain) {  // the same round trip, no offer
      WriteString(control, "");
      continue;
    }
    const WireEncoding encoding = command[0] == kFp16   ? WIRE_ENCODING_FP16
                                  : command[0] == kBf16 ? WIRE_ENCODING_BF16
                                                        : WIRE_ENCODING_NONE;
    DataPlaneTicket ticket =
        (*server)->Offer(source, reinterpret_cast<const char*>(source.get()),
                         command[1], encoding, absl::Minutes(1), nullptr);
    WriteString(control, ticket.SerializeAsString());
  }
  raw.join();
  std::_Exit(0);
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int Main(int argc, char** argv) {
  int64_t max_mb = 1024;
  double reps_scale = 1;
  bool run[kNumMethods] = {true, true, true, true};
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (absl::ConsumePrefix(&arg, "--max_mb=") &&
        absl::SimpleAtoi(arg, &max_mb)) {
    } else if (absl::ConsumePrefix(&arg, "--reps_scale=") &&
               absl::SimpleAtod(arg, &reps_scale)) {
    } else if (absl::ConsumePrefix(&arg, "--only=")) {
      const std::vector<std::string> names = absl::StrSplit(arg, ',');
      for (int m = 0; m < kNumMethods; ++m) {
        run[m] = std::find(names.begin(), names.end(), kMethodFlags[m]) !=
                 names.end();
      }
    } else {
      std::fprintf(stderr,
                   "usage: %s [--max_mb=1024] [--reps_scale=1] "
                   "[--only=plain,none,fp16,bf16]\n",
                   argv[0]);
      return 2;
    }
  }
  const int64_t max_bytes = max_mb << 20;
  int control_pair[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, control_pair) != 0) Die("socketpair");
  pid_t child = fork();
  if (child < 0) Die("fork");
  if (child == 0) {
    close(control_pair[0]);
    RunSender(control_pair[1], max_bytes);
  }
  close(control_pair[1]);
  const int control = control_pair[0];
  const std::string dp_address = ReadString(control);
  int raw_port = 0;
  if (!absl::SimpleAtoi(ReadString(control), &raw_port)) Die("port");
  int raw = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(raw_port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(raw, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
    Die("connect");
  }
  int one = 1;
  setsockopt(raw, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));

  char* dst = static_cast<char*>(std::aligned_alloc(64, max_bytes));
  std::memset(dst, 1, max_bytes);
  DataPlaneClient client;

  // Seconds for one transfer of `bytes` float32 bytes by `method`.
  auto transfer = [&](int method, int64_t bytes) {
    // Every transfer follows a round trip over the control socket, as each
    // follows a RecvTensor call between workers; the data plane's carries
    // its ticket.
    uint64_t command[2] = {static_cast<uint64_t>(method),
                           static_cast<uint64_t>(bytes)};
    WriteFull(control, command, sizeof(command));
    const std::string answer = ReadString(control);
    if (method == kPlain) {
      uint64_t n = bytes;
      const absl::Time start = absl::Now();
      WriteFull(raw, &n, 8);
      for (uint64_t got = 0; got < n; got += kPlainCallBytes) {
        ReadFull(raw, dst + got, std::min<uint64_t>(kPlainCallBytes, n - got));
      }
      return absl::ToDoubleSeconds(absl::Now() - start);
    }
    DataPlaneTicket ticket;
    ticket.ParseFromString(answer);
    const WireEncoding encoding = method == kFp16   ? WIRE_ENCODING_FP16
                                  : method == kBf16 ? WIRE_ENCODING_BF16
                                                    : WIRE_ENCODING_NONE;
    const absl::Time start = absl::Now();
    absl::Status s = client.Fetch(ticket, encoding, dst, bytes);
    const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
    if (!s.ok()) {
      std::fprintf(stderr, "%s\n", s.ToString().c_str());
      std::exit(1);
    }
    return seconds;
  };

  // Every repetition runs every size and method (methods in a rotating
  // order), so that a ratio can be taken within one repetition, when the
  // machine was in one state, and its median over repetitions reported: on
  // a shared machine throughput drifts by 2x over seconds, alike for all
  // methods. A small size's sample is the median of several transfers.
  std::vector<int64_t> sizes_mb;
  for (int64_t mb : {1, 16, 64, 256, 1024}) {
    if (mb <= max_mb) sizes_mb.push_back(mb);
  }
  const int reps = std::max(3, static_cast<int>(9 * reps_scale) | 1);
  // gbps[size][method][rep]
  std::vector<std::vector<std::vector<double>>> gbps(
      sizes_mb.size(), std::vector<std::vector<double>>(kNumMethods));
  for (int64_t mb : sizes_mb) {
    for (int m = 0; m < kNumMethods; ++m) {
      if (run[m]) transfer(m, mb << 20);  // warm up
    }
  }
  for (int r = 0; r < reps; ++r) {
    for (size_t z = 0; z < sizes_mb.size(); ++z) {
      const int64_t bytes = sizes_mb[z] << 20;
      const int inner = static_cast<int>(
          std::clamp<int64_t>((int64_t{64} << 20) / bytes, 1, 15));
      for (int i = 0; i < kNumMethods; ++i) {
        const int m = (r + i) % kNumMethods;
        if (!run[m]) continue;
        std::vector<double> seconds;
        for (int k = 0; k < inner; ++k) seconds.push_back(transfer(m, bytes));
        gbps[z][m].push_back(bytes / Median(seconds) / 1e9);
      }
    }
    std::fprintf(stderr, "repetition %d of %d done\n", r + 1, reps);
  }
  uint64_t stop[2] = {kNumMethods, 0};
  WriteFull(control, stop, sizeof(stop));
  shutdown(raw, SHUT_WR);
  waitpid(child, nullptr, 0);

  // Median over repetitions of a[rep] / b[rep].
  auto paired = [&](const std::vector<double>& a,
                    const std::vector<double>& b) {
    if (a.empty() || b.empty()) return 0.0;
    std::vector<double> ratios;
    for (size_t i = 0; i < a.size(); ++i) ratios.push_back(a[i] / b[i]);
    return Median(ratios);
  };
  std::printf(
      "float32 bytes between two processes over loopback: median GB/s over "
      "%d repetitions (fp16/bf16: float32 bytes delivered per second); "
      "ratios: median of the per-repetition ratios\n\n",
      reps);
  std::printf("| size |");
  for (int m = 0; m < kNumMethods; ++m) std::printf(" %s |", kMethodNames[m]);
  std::printf(" dp / plain | fp16 / dp | bf16 / dp |\n|---|");
  for (int m = 0; m < kNumMethods + 3; ++m) std::printf("---:|");
  std::printf("\n");
  for (size_t z = 0; z < sizes_mb.size(); ++z) {
    std::printf("| %lld MB |", static_cast<long long>(sizes_mb[z]));
    for (int m = 0; m < kNumMethods; ++m) {
      std::printf(" %.2f |", gbps[z][m].empty() ? 0.0 : Median(gbps[z][m]));
    }
    std::printf(" %.2f | %.2f | %.2f |\n",
                paired(gbps[z][kNone], gbps[z][kPlain]),
                paired(gbps[z][kFp16], gbps[z][kNone]),
                paired(gbps[z][kBf16], gbps[z][kNone]));
  }
  auto at = [&](int64_t mb) {
    return std::find(sizes_mb.begin(), sizes_mb.end(), mb) - sizes_mb.begin();
  };
  const size_t z16 = at(16), z1g = at(1024);
  if (z1g < sizes_mb.size()) {
    std::printf("\n1 GB / 16 MB:");
    for (int m = 0; m < kNumMethods; ++m) {
      std::printf(" %s %.2f%s", kMethodNames[m],
                  paired(gbps[z1g][m], gbps[z16][m]),
                  m + 1 < kNumMethods ? "," : "\n");
    }
  }
  std::free(dst);
  return 0;
}

}  // namespace
}  // namespace graphrun

int main(int argc, char** argv) { return graphrun::Main(argc, argv); }
