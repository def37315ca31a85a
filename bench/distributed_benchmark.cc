// The distributed runtime measured through its whole stack: `graphrun
// worker` processes on loopback (spawned here) driven by a MasterSession in
// this process over gRPC.
//
//   bazel-bin/bench/distributed_benchmark --graphrun=bazel-bin/tools/graphrun
//       [--reps=5] [--max_mb=1024] [--sizes_mb=1,16,64,256,1024]
//       [--methods=plain,base,none,fp16,nodp] [--nodp_max_mb=256]
//       [--only=transfer,rtt,trivial,detect] [--detect_reps=5]
//       [--freeze_reps=0] [--json=FILE]
//
// transfer  A float32 tensor of S bytes made on task 0 (Fill of a shape fed
//           as an int32 vector, so no optimizer folds it) and averaged on
//           task 1 (Mean), the scalar fetched; minus the same graph with
//           every node on task 0 (same work, no transfer), per repetition:
//           the time the bytes took. Effective GB/s = S / that time, for
//           wire encodings none and fp16 and for workers started with
//           --data_plane=false (bytes inside gRPC), next to a plain TCP
//           stream between this process and a forked child (1 MB calls,
//           request to last byte).
// rtt       A scalar float task 0 -> task 1 -> task 0 per step (x fed on
//           task 0, x * 2 on task 1, + 1 on task 0, fetched), minus the same
//           graph on task 0 alone.
// trivial   One Const per task, both fetched, vs both Consts on task 0.
// detect    An endless loop on task 1 whose count task 0 waits for (after
//           one short step, so the tasks are connected); task 1 is killed
//           with SIGKILL once its stderr says the step started;
//           the time until Run returns Unavailable. --freeze_reps adds the
//           same with SIGSTOP (a host that vanished without closing its
//           sockets: only keepalive notices).
//
// Sizes run one after another (all repetitions of a size, then the next);
// each repetition runs every method once, in a rotating order; a small
// size's sample is the median of several steps. "base" (the 1-task step)
// must be among --methods for the transfer figures. The printed figures
// are medians over repetitions with their range; --json writes every
// sample for bench/distributed_side_by_side.sh.
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "distributed/grpc_worker.h"
#include "distributed/master_session.h"
#include "graph/graph_io.h"
#include "runtime/session.h"

namespace graphrun {
namespace {

using Clock = std::chrono::steady_clock;

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "distributed_benchmark: %s\n", what.c_str());
  std::exit(1);
}

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

double Median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string TaskName(int i) { return absl::StrCat("/job:worker/replica:0/task:", i); }

// ---------------------------------------------------------------------------
// Worker processes.

// One `graphrun worker` process on loopback; SIGKILLed when the object goes
// (and when this process dies).
class WorkerProcess {
 public:
  struct Options {
    bool data_plane = true;
    // --log_steps, with stderr on a pipe read by AwaitStderr; otherwise
    // the worker's stderr is this process's.
    bool log_steps = false;
  };
  WorkerProcess(const std::string& binary, int task, const Options& options) {
    int out[2], err[2] = {-1, -1};
    if (pipe2(out, O_CLOEXEC) != 0) Die("pipe");
    if (options.log_steps && pipe2(err, O_CLOEXEC) != 0) Die("pipe");
    std::vector<std::string> args = {binary, "worker", "--listen=127.0.0.1:0",
                                     absl::StrCat("--task=", task)};
    if (!options.data_plane) args.push_back("--data_plane=false");
    if (options.log_steps) args.push_back("--log_steps");
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_ = fork();
    if (pid_ < 0) Die("fork");
    if (pid_ == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      dup2(out[1], STDOUT_FILENO);
      if (err[1] >= 0) dup2(err[1], STDERR_FILENO);
      execv(argv[0], argv.data());
      _exit(127);
    }
    close(out[1]);
    if (err[1] >= 0) close(err[1]);
    out_ = out[0];
    err_ = err[0];
    const std::string line = ReadLine(out_);
    const size_t at = line.find(" serving on ");
    if (at == std::string::npos) {
      Die(absl::StrCat("worker ", task, " (", binary, ") said: '", line, "'"));
    }
    address_ = line.substr(at + 12);
    address_ = address_.substr(0, address_.find(' '));
  }
  ~WorkerProcess() {
    Kill();
    close(out_);
    if (err_ >= 0) close(err_);
  }
  void Kill() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  void Signal(int sig) {
    if (pid_ > 0) kill(pid_, sig);
  }
  const std::string& address() const { return address_; }
  // Blocks until the worker writes a line to stderr containing `text`
  // (false at end of file or after 60 s of silence).
  bool AwaitStderr(const std::string& text) {
    while (true) {
      const std::string line = ReadLine(err_);
      if (line.empty()) return false;
      if (line.find(text) != std::string::npos) return true;
    }
  }

 private:
  static std::string ReadLine(int fd) {
    std::string line;
    while (true) {
      pollfd p{fd, POLLIN, 0};
      const int r = poll(&p, 1, 60000);
      if (r == 0) return line;
      if (r < 0) continue;
      char c;
      if (read(fd, &c, 1) != 1 || c == '\n') return line;
      line.push_back(c);
    }
  }

  pid_t pid_ = -1;
  int out_ = -1, err_ = -1;
  std::string address_;
};

struct Cluster {
  Cluster(const std::string& binary, int n, const WorkerProcess::Options& options,
          const WorkerProcess::Options& last_options) {
    for (int i = 0; i < n; ++i) {
      workers.push_back(
          std::make_unique<WorkerProcess>(binary, i, i + 1 == n ? last_options : options));
      addresses[TaskName(i)] = workers.back()->address();
    }
  }
  Cluster(const std::string& binary, int n, const WorkerProcess::Options& options)
      : Cluster(binary, n, options, options) {}

  std::unique_ptr<Session> NewSession(const GraphDef& graph, WireEncoding wire) {
    MasterSessionOptions o;
    o.cluster = addresses;
    o.connect = GrpcConnectFn(GrpcSecurity());
    o.wire_encoding = wire;
    o.connect_timeout = absl::Seconds(30);
    absl::StatusOr<std::unique_ptr<Session>> s = NewMasterSession(graph, o);
    if (!s.ok()) Die(absl::StrCat("creating a session: ", s.status().ToString()));
    return std::move(*s);
  }

  std::vector<std::unique_ptr<WorkerProcess>> workers;
  std::map<std::string, std::string> addresses;
};

// ---------------------------------------------------------------------------
// Plain TCP: a forked child writes N bytes from one buffer on request.

// Calls of at most 1 MB, as iperf3 makes them: a stream moved by one call of
// the whole buffer on each side runs at about 2/3 of that rate here.
constexpr size_t kPlainCallBytes = size_t{1} << 20;

void WriteFull(int fd, const void* p, size_t n) {
  const char* c = static_cast<const char*>(p);
  while (n > 0) {
    ssize_t k = send(fd, c, std::min(n, kPlainCallBytes), MSG_NOSIGNAL);
    if (k <= 0) Die("plain TCP: send failed");
    c += k;
    n -= k;
  }
}

void ReadFull(int fd, void* p, size_t n) {
  char* c = static_cast<char*>(p);
  while (n > 0) {
    ssize_t k = recv(fd, c, std::min(n, kPlainCallBytes), 0);
    if (k <= 0) Die("plain TCP: recv failed");
    c += k;
    n -= k;
  }
}

class PlainTcp {
 public:
  // Forks the sender; call before any thread exists (before gRPC).
  explicit PlainTcp(int64_t max_bytes) : max_bytes_(max_bytes) {
    int listener = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(listener, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 ||
        listen(listener, 1) != 0) {
      Die("plain TCP: bind/listen failed");
    }
    socklen_t len = sizeof(a);
    getsockname(listener, reinterpret_cast<sockaddr*>(&a), &len);
    child_ = fork();
    if (child_ < 0) Die("fork");
    if (child_ == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      char* source = static_cast<char*>(std::aligned_alloc(64, max_bytes));
      std::memset(source, 7, max_bytes);
      int fd = accept(listener, nullptr, nullptr);
      int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      uint64_t n;
      while (recv(fd, &n, 8, MSG_WAITALL) == 8) WriteFull(fd, source, n);
      std::_Exit(0);
    }
    close(listener);
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
      Die("plain TCP: connect failed");
    }
    int one = 1;
    setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    dst_ = static_cast<char*>(std::aligned_alloc(64, max_bytes));
    std::memset(dst_, 1, max_bytes);
  }
  ~PlainTcp() {
    close(fd_);
    waitpid(child_, nullptr, 0);
    std::free(dst_);
  }
  // Seconds from the request to the last byte of `bytes`.
  double Transfer(int64_t bytes) {
    uint64_t n = bytes;
    const auto start = Clock::now();
    WriteFull(fd_, &n, 8);
    ReadFull(fd_, dst_, n);
    return Seconds(start, Clock::now());
  }

 private:
  int64_t max_bytes_;
  pid_t child_ = -1;
  int fd_ = -1;
  char* dst_ = nullptr;
};

// ---------------------------------------------------------------------------
// Graphs (text GraphDefs, single quotes turned into double ones).

GraphDef ParseGraph(const std::string& text) {
  absl::StatusOr<GraphDef> g =
      ParseGraphDef(absl::StrReplaceAll(text, {{"'", "\""}}), GraphFormat::kText);
  if (!g.ok()) Die(g.status().ToString());
  return *g;
}

std::string Device(int task) { return absl::StrCat("device: '/job:worker/task:", task, "' "); }

std::string FloatConst(const std::string& name, float v, int task) {
  return absl::StrCat("node { name: '", name, "' op: 'Const' ", Device(task),
                      "attr { key: 'dtype' value { type: DT_FLOAT } } "
                      "attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape {} "
                      "float_val: ",
                      v, " } } } }\n");
}

std::string IntConst(const std::string& name, int v, int task, const std::string& control = "") {
  return absl::StrCat("node { name: '", name, "' op: 'Const' ",
                      control.empty() ? "" : absl::StrCat("input: '^", control, "' "),
                      Device(task),
                      "attr { key: 'dtype' value { type: DT_INT32 } } "
                      "attr { key: 'value' value { tensor { dtype: DT_INT32 tensor_shape {} "
                      "int_val: ",
                      v, " } } } }\n");
}

std::string Placeholder(const std::string& name, const std::string& type, int task) {
  return absl::StrCat("node { name: '", name, "' op: 'Placeholder' ", Device(task),
                      "attr { key: 'dtype' value { type: ", type, " } } }\n");
}

// A node with inputs and attr T (none when `type` is empty); extra attrs
// appended verbatim.
std::string Op(const std::string& name, const std::string& op, std::vector<std::string> inputs,
               int task, const std::string& type = "DT_FLOAT", const std::string& extra = "") {
  std::string s = absl::StrCat("node { name: '", name, "' op: '", op, "' ");
  for (const std::string& in : inputs) absl::StrAppend(&s, "input: '", in, "' ");
  s += Device(task);
  if (!type.empty()) absl::StrAppend(&s, "attr { key: 'T' value { type: ", type, " } } ");
  return s + extra + "}\n";
}

// dims (fed, int32 [1]) -> big = Fill(dims, 0.5) on `maker`; total =
// Mean(big, 0) on `reducer` (a mean, not a sum: the fetched scalar travels
// back to task 0 in the session's wire encoding, and fp16 would saturate a
// large sum).
GraphDef TransferGraph(int maker, int reducer) {
  return ParseGraph(
      Placeholder("dims", "DT_INT32", maker) + FloatConst("value", 0.5f, maker) +
      Op("big", "Fill", {"dims", "value"}, maker, "DT_FLOAT",
         "attr { key: 'index_type' value { type: DT_INT32 } } ") +
      IntConst("axis", 0, reducer) +
      Op("total", "Mean", {"big", "axis"}, reducer, "DT_FLOAT",
         "attr { key: 'Tidx' value { type: DT_INT32 } } "
         "attr { key: 'keep_dims' value { b: false } } "));
}

// x (fed) on task 0 -> x * 2 on `middle` -> + 1 on task 0.
GraphDef RoundTripGraph(int middle) {
  return ParseGraph(Placeholder("x", "DT_FLOAT", 0) + FloatConst("two", 2, middle) +
                    Op("doubled", "Mul", {"x", "two"}, middle) + FloatConst("one", 1, 0) +
                    Op("y", "AddV2", {"doubled", "one"}, 0));
}

// a on task 0, b on `other`; both fetched.
GraphDef TrivialGraph(int other) {
  return ParseGraph(FloatConst("a", 1, 0) + FloatConst("b", 2, other));
}

// An endless loop (i < n, n fed as INT_MAX) on task 1; count, on task 0,
// waits for its exit value.
GraphDef EndlessLoopGraph() {
  auto enter = [](const std::string& name, const std::string& input, bool constant) {
    return absl::StrCat("node { name: '", name, "' op: 'Enter' input: '", input, "' ", Device(1),
                        "attr { key: 'T' value { type: DT_INT32 } } "
                        "attr { key: 'frame_name' value { s: 'loop' } } "
                        "attr { key: 'is_constant' value { b: ",
                        constant ? "true" : "false",
                        " } } attr { key: 'parallel_iterations' value { i: 1 } } }\n");
  };
  std::string s = IntConst("start", 0, 1) + Placeholder("n", "DT_INT32", 1) +
                  enter("loop/enter_i", "start", false) + enter("loop/enter_n", "n", true) +
                  Op("loop/merge_i", "Merge", {"loop/enter_i", "loop/next_i"}, 1, "DT_INT32",
                     "attr { key: 'N' value { i: 2 } } ") +
                  Op("loop/less", "Less", {"loop/merge_i", "loop/enter_n"}, 1, "DT_INT32") +
                  Op("loop/cond", "LoopCond", {"loop/less"}, 1, "") +
                  Op("loop/switch_i", "Switch", {"loop/merge_i", "loop/cond"}, 1, "DT_INT32") +
                  Op("loop/id_i", "Identity", {"loop/switch_i:1"}, 1, "DT_INT32") +
                  IntConst("loop/one", 1, 1, "loop/id_i") +
                  Op("loop/add_i", "AddV2", {"loop/id_i", "loop/one"}, 1, "DT_INT32") +
                  Op("loop/next_i", "NextIteration", {"loop/add_i"}, 1, "DT_INT32") +
                  Op("loop/exit_i", "Exit", {"loop/switch_i"}, 1, "DT_INT32") +
                  Op("count", "Identity", {"loop/exit_i"}, 0, "DT_INT32");
  return ParseGraph(s);
}

// ---------------------------------------------------------------------------
// Measurements.

struct Flags {
  std::string graphrun;
  int reps = 5;
  int64_t max_mb = 1024;
  std::vector<int64_t> sizes_mb;  // empty: 1, 16, 64, 256, 1024 up to max_mb
  std::set<std::string> methods = {"plain", "base", "none", "fp16", "nodp"};
  int64_t nodp_max_mb = 256;
  std::set<std::string> only = {"transfer", "rtt", "trivial", "detect"};
  int detect_reps = 5;
  int freeze_reps = 0;
  std::string json;
};

// Seconds of one step; dies on an error.
double TimeStep(Session* s, const std::vector<std::pair<std::string, Tensor>>& feeds,
                const std::vector<std::string>& fetches, std::vector<Tensor>* out) {
  const auto start = Clock::now();
  absl::Status st = s->Run(feeds, fetches, {}, out);
  const double t = Seconds(start, Clock::now());
  if (!st.ok()) Die(st.ToString());
  return t;
}

std::string JsonList(const std::vector<double>& v) {
  std::vector<std::string> parts;
  for (double x : v) parts.push_back(absl::StrCat(x));
  return absl::StrCat("[", absl::StrJoin(parts, ", "), "]");
}

std::string Range(const std::vector<double>& v, const char* fmt) {
  if (v.empty()) return "-";
  char buf[96];
  const double med = Median(v);
  const double lo = *std::min_element(v.begin(), v.end());
  const double hi = *std::max_element(v.begin(), v.end());
  std::string f = absl::StrCat(fmt, " (", fmt, "-", fmt, ")");
  std::snprintf(buf, sizeof(buf), f.c_str(), med, lo, hi);
  return buf;
}

struct TransferResults {
  std::vector<int64_t> sizes_mb;
  // method -> per size -> per repetition: GB/s of float32 delivered.
  std::map<std::string, std::vector<std::vector<double>>> gbps;
  // method -> per size -> per repetition: step seconds (for "base" and the
  // two-task methods).
  std::map<std::string, std::vector<std::vector<double>>> step_s;
};

TransferResults MeasureTransfer(const Flags& flags, PlainTcp* plain) {
  TransferResults r;
  r.sizes_mb = flags.sizes_mb;
  Cluster with_dp(flags.graphrun, 2, {});
  std::unique_ptr<Cluster> no_dp;
  if (flags.methods.count("nodp")) {
    WorkerProcess::Options no_dp_options;
    no_dp_options.data_plane = false;
    no_dp = std::make_unique<Cluster>(flags.graphrun, 2, no_dp_options);
  }
  std::unique_ptr<Session> base = with_dp.NewSession(TransferGraph(0, 0), WIRE_ENCODING_NONE);
  std::unique_ptr<Session> none = with_dp.NewSession(TransferGraph(0, 1), WIRE_ENCODING_NONE);
  std::unique_ptr<Session> fp16 = with_dp.NewSession(TransferGraph(0, 1), WIRE_ENCODING_FP16);
  std::unique_ptr<Session> nodp;
  if (no_dp != nullptr) nodp = no_dp->NewSession(TransferGraph(0, 1), WIRE_ENCODING_NONE);
  std::vector<std::string> methods;
  for (const char* m : {"plain", "base", "none", "fp16", "nodp"}) {
    if (flags.methods.count(m)) methods.push_back(m);
  }
  std::map<std::string, Session*> sessions = {
      {"base", base.get()}, {"none", none.get()}, {"fp16", fp16.get()}, {"nodp", nodp.get()}};
  for (const char* m : {"plain", "base", "none", "fp16", "nodp"}) {
    r.gbps[m].resize(r.sizes_mb.size());  // every method, so printing may index any
    r.step_s[m].resize(r.sizes_mb.size());
  }
  auto runs = [&](const std::string& m, int64_t mb) {
    return m != "nodp" || mb <= flags.nodp_max_mb;
  };
  // Seconds of one step (or plain transfer) of `bytes`, checking the mean.
  auto once = [&](const std::string& m, int64_t bytes) {
    if (m == "plain") return plain->Transfer(bytes);
    const int64_t n = bytes / 4;
    std::vector<Tensor> out;
    const double t = TimeStep(sessions[m], {{"dims", Tensor::FromVector<int32_t>({int32_t(n)})}},
                              {"total"}, &out);
    const double got = out[0].scalar<float>();
    if (std::fabs(got - 0.5) > 1e-3) {
      Die(absl::StrCat(m, ": the mean of ", n, " halves came back as ", got));
    }
    return t;
  };
  // Size by size (as a training loop repeats its sizes, so that allocators
  // may reuse their blocks), every repetition running every method once in
  // a rotating order.
  for (size_t z = 0; z < r.sizes_mb.size(); ++z) {
    const int64_t mb = r.sizes_mb[z], bytes = mb << 20;
    for (const std::string& m : methods) {
      if (runs(m, mb)) once(m, bytes);  // plans, connections, allocators
    }
    const int inner = static_cast<int>(std::clamp<int64_t>(64 / mb, 1, 15));
    for (int rep = 0; rep < flags.reps; ++rep) {
      std::map<std::string, double> t;
      for (size_t i = 0; i < methods.size(); ++i) {
        const std::string& m = methods[(rep + i) % methods.size()];
        if (!runs(m, mb)) continue;
        std::vector<double> seconds;
        for (int k = 0; k < inner; ++k) seconds.push_back(once(m, bytes));
        t[m] = Median(seconds);
      }
      if (t.count("plain")) r.gbps["plain"][z].push_back(bytes / t["plain"] / 1e9);
      if (t.count("base") == 0) continue;
      r.step_s["base"][z].push_back(t["base"]);
      for (const char* m : {"none", "fp16", "nodp"}) {
        if (t.count(m) == 0) continue;
        r.step_s[m][z].push_back(t[m]);
        r.gbps[m][z].push_back(bytes / (t[m] - t["base"]) / 1e9);
      }
    }
    std::fprintf(stderr, "transfer: %lld MB done\n", static_cast<long long>(mb));
  }
  return r;
}

struct PairTimes {
  std::vector<double> two_task_us, one_task_us, diff_us;
};

// Per repetition: the median of `steps` steps of each session (alternating
// blocks, rotating which goes first).
PairTimes MeasurePair(const Flags& flags, Session* two, Session* one,
                      const std::vector<std::pair<std::string, Tensor>>& feeds,
                      const std::vector<std::string>& fetches, int steps) {
  PairTimes p;
  std::vector<Tensor> out;
  for (int i = 0; i < 50; ++i) {
    TimeStep(two, feeds, fetches, &out);
    TimeStep(one, feeds, fetches, &out);
  }
  for (int rep = 0; rep < flags.reps; ++rep) {
    std::vector<double> a, b;
    for (int block = 0; block < 2; ++block) {
      const bool two_first = (rep + block) % 2 == 0;
      for (int k = 0; k < 2; ++k) {
        Session* s = (k == 0) == two_first ? two : one;
        std::vector<double>& v = s == two ? a : b;
        for (int i = 0; i < steps / 2; ++i) v.push_back(TimeStep(s, feeds, fetches, &out) * 1e6);
      }
    }
    p.two_task_us.push_back(Median(a));
    p.one_task_us.push_back(Median(b));
    p.diff_us.push_back(Median(a) - Median(b));
  }
  return p;
}

// Seconds from the signal to Run's return, per repetition; each
// repetition starts a fresh pair of workers.
std::vector<double> MeasureDetection(const Flags& flags, int sig, int reps) {
  std::vector<double> seconds;
  const GraphDef graph = EndlessLoopGraph();
  for (int rep = 0; rep < reps; ++rep) {
    WorkerProcess::Options plain, logging;
    logging.log_steps = true;
    Cluster cluster(flags.graphrun, 2, plain, logging);
    std::unique_ptr<Session> session = cluster.NewSession(graph, WIRE_ENCODING_NONE);
    // One short step first, so that task 0 is connected to task 1 (as in
    // the middle of a training loop) when task 1 goes.
    std::vector<Tensor> warm;
    TimeStep(session.get(), {{"n", Tensor::Scalar<int32_t>(1)}}, {"count"}, &warm);
    if (warm[0].scalar<int32_t>() != 1) Die("the loop counted wrong");
    if (!cluster.workers[1]->AwaitStderr("started")) Die("task 1 never started a step");
    absl::Status status;
    Clock::time_point returned;
    std::thread run([&] {
      std::vector<Tensor> out;
      status = session->Run({{"n", Tensor::Scalar<int32_t>(INT_MAX)}}, {"count"}, {}, &out);
      returned = Clock::now();
    });
    if (!cluster.workers[1]->AwaitStderr("started")) Die("task 1 never started the step");
    const Clock::time_point signalled = Clock::now();
    cluster.workers[1]->Signal(sig);
    run.join();
    cluster.workers[1]->Kill();
    if (status.code() != absl::StatusCode::kUnavailable ||
        status.message().find(TaskName(1)) == std::string::npos) {
      Die(absl::StrCat("expected Unavailable naming task 1, got ", status.ToString()));
    }
    seconds.push_back(Seconds(signalled, returned));
    std::fprintf(stderr, "%s: %.1f ms: %s\n", sig == SIGKILL ? "SIGKILL" : "SIGSTOP",
                 seconds.back() * 1e3, status.ToString().c_str());
  }
  return seconds;
}

int Main(int argc, char** argv) {
  Flags flags;
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (absl::ConsumePrefix(&arg, "--graphrun=")) {
      flags.graphrun = std::string(arg);
    } else if (absl::ConsumePrefix(&arg, "--reps=") && absl::SimpleAtoi(arg, &flags.reps)) {
    } else if (absl::ConsumePrefix(&arg, "--max_mb=") && absl::SimpleAtoi(arg, &flags.max_mb)) {
    } else if (absl::ConsumePrefix(&arg, "--sizes_mb=")) {
      for (absl::string_view part : absl::StrSplit(arg, ',')) {
        int64_t mb = 0;
        if (!absl::SimpleAtoi(part, &mb) || mb < 1 || mb > 2047) Die("bad --sizes_mb");
        flags.sizes_mb.push_back(mb);
      }
    } else if (absl::ConsumePrefix(&arg, "--methods=")) {
      flags.methods.clear();
      for (absl::string_view part : absl::StrSplit(arg, ',')) {
        flags.methods.insert(std::string(part));
      }
    } else if (absl::ConsumePrefix(&arg, "--nodp_max_mb=") &&
               absl::SimpleAtoi(arg, &flags.nodp_max_mb)) {
    } else if (absl::ConsumePrefix(&arg, "--only=")) {
      flags.only.clear();
      for (absl::string_view part : absl::StrSplit(arg, ',')) flags.only.insert(std::string(part));
    } else if (absl::ConsumePrefix(&arg, "--detect_reps=") &&
               absl::SimpleAtoi(arg, &flags.detect_reps)) {
    } else if (absl::ConsumePrefix(&arg, "--freeze_reps=") &&
               absl::SimpleAtoi(arg, &flags.freeze_reps)) {
    } else if (absl::ConsumePrefix(&arg, "--json=")) {
      flags.json = std::string(arg);
    } else {
      std::fprintf(stderr,
                   "usage: %s --graphrun=bazel-bin/tools/graphrun [--reps=5] [--max_mb=1024] "
                   "[--sizes_mb=1,16,...] [--methods=plain,base,none,fp16,nodp] "
                   "[--nodp_max_mb=256] "
                   "[--only=transfer,rtt,trivial,detect] "
                   "[--detect_reps=5] [--freeze_reps=0] [--json=FILE]\n",
                   argv[0]);
      return 2;
    }
  }
  if (flags.graphrun.empty() || access(flags.graphrun.c_str(), X_OK) != 0) {
    Die(absl::StrCat("--graphrun='", flags.graphrun, "' is not an executable"));
  }
  if (flags.reps < 1) Die("--reps must be at least 1");
  if (flags.sizes_mb.empty()) {
    for (int64_t mb : {1, 16, 64, 256, 1024}) {
      if (mb <= flags.max_mb) flags.sizes_mb.push_back(mb);
    }
  }
  flags.max_mb = *std::max_element(flags.sizes_mb.begin(), flags.sizes_mb.end());
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  // Forked before any thread exists.
  std::unique_ptr<PlainTcp> plain;
  if (flags.only.count("transfer")) plain = std::make_unique<PlainTcp>(flags.max_mb << 20);

  std::vector<std::string> json;
  if (flags.only.count("transfer")) {
    TransferResults r = MeasureTransfer(flags, plain.get());
    std::printf(
        "float32 tensor made on task 0, averaged on task 1 (2 graphrun worker processes, "
        "loopback); GB/s of float32 delivered = size / (2-task step - 1-task step), median "
        "(min-max) of %d repetitions\n\n",
        flags.reps);
    std::printf("| size | plain TCP | none | fp16 | no data plane | 1-task step ms | none / TCP "
                "| fp16 / none |\n|---|---:|---:|---:|---:|---:|---:|---:|\n");
    std::vector<std::string> per_size;
    for (size_t z = 0; z < r.sizes_mb.size(); ++z) {
      auto ratio = [&](const char* a, const char* b) {
        std::vector<double> v;
        for (size_t i = 0; i < r.gbps[a][z].size() && i < r.gbps[b][z].size(); ++i) {
          v.push_back(r.gbps[a][z][i] / r.gbps[b][z][i]);
        }
        return Median(v);
      };
      std::vector<double> base_ms;
      for (double s : r.step_s["base"][z]) base_ms.push_back(s * 1e3);
      std::printf("| %lld MB | %s | %s | %s | %s | %s | %.2f | %.2f |\n",
                  static_cast<long long>(r.sizes_mb[z]), Range(r.gbps["plain"][z], "%.2f").c_str(),
                  Range(r.gbps["none"][z], "%.2f").c_str(),
                  Range(r.gbps["fp16"][z], "%.2f").c_str(),
                  Range(r.gbps["nodp"][z], "%.3f").c_str(), Range(base_ms, "%.1f").c_str(),
                  ratio("none", "plain"), ratio("fp16", "none"));
      std::vector<std::string> fields;
      for (const auto& [m, v] : r.gbps) {
        fields.push_back(absl::StrCat("\"", m, "_gbps\": ", JsonList(v[z])));
      }
      for (const auto& [m, v] : r.step_s) {
        fields.push_back(absl::StrCat("\"", m, "_step_s\": ", JsonList(v[z])));
      }
      per_size.push_back(absl::StrCat("\"", r.sizes_mb[z], "\": {", absl::StrJoin(fields, ", "),
                                      "}"));
    }
    std::printf("\n");
    json.push_back(absl::StrCat("\"transfer\": {", absl::StrJoin(per_size, ", "), "}"));
  }
  plain.reset();

  if (flags.only.count("rtt") || flags.only.count("trivial")) {
    Cluster cluster(flags.graphrun, 2, {});
    if (flags.only.count("rtt")) {
      auto two = cluster.NewSession(RoundTripGraph(1), WIRE_ENCODING_NONE);
      auto one = cluster.NewSession(RoundTripGraph(0), WIRE_ENCODING_NONE);
      std::vector<Tensor> out;
      TimeStep(two.get(), {{"x", Tensor::Scalar<float>(3)}}, {"y"}, &out);
      if (out[0].scalar<float>() != 7) Die("round trip: 3 * 2 + 1 came back wrong");
      PairTimes p =
          MeasurePair(flags, two.get(), one.get(), {{"x", Tensor::Scalar<float>(3)}}, {"y"}, 400);
      std::printf("scalar task 0 -> 1 -> 0: 2-task step %s us, 1-task step %s us, round trip %s "
                  "us\n",
                  Range(p.two_task_us, "%.0f").c_str(), Range(p.one_task_us, "%.0f").c_str(),
                  Range(p.diff_us, "%.0f").c_str());
      json.push_back(absl::StrCat("\"rtt\": {\"two_task_us\": ", JsonList(p.two_task_us),
                                  ", \"one_task_us\": ", JsonList(p.one_task_us),
                                  ", \"diff_us\": ", JsonList(p.diff_us), "}"));
    }
    if (flags.only.count("trivial")) {
      auto two = cluster.NewSession(TrivialGraph(1), WIRE_ENCODING_NONE);
      auto one = cluster.NewSession(TrivialGraph(0), WIRE_ENCODING_NONE);
      PairTimes p = MeasurePair(flags, two.get(), one.get(), {}, {"a", "b"}, 400);
      std::printf("trivial step (one Const per task, both fetched): 2 workers %s us, 1 worker %s "
                  "us, difference %s us\n",
                  Range(p.two_task_us, "%.0f").c_str(), Range(p.one_task_us, "%.0f").c_str(),
                  Range(p.diff_us, "%.0f").c_str());
      json.push_back(absl::StrCat("\"trivial\": {\"two_task_us\": ", JsonList(p.two_task_us),
                                  ", \"one_task_us\": ", JsonList(p.one_task_us),
                                  ", \"diff_us\": ", JsonList(p.diff_us), "}"));
    }
  }

  if (flags.only.count("detect")) {
    std::vector<double> killed = MeasureDetection(flags, SIGKILL, flags.detect_reps);
    std::vector<double> killed_ms;
    for (double s : killed) killed_ms.push_back(s * 1e3);
    std::printf("dead worker (SIGKILL) detected after %s ms, max %.1f ms (%d repetitions)\n",
                Range(killed_ms, "%.1f").c_str(),
                *std::max_element(killed_ms.begin(), killed_ms.end()), flags.detect_reps);
    std::string j = absl::StrCat("\"detect\": {\"sigkill_ms\": ", JsonList(killed_ms));
    if (flags.freeze_reps > 0) {
      std::vector<double> frozen = MeasureDetection(flags, SIGSTOP, flags.freeze_reps);
      std::vector<double> frozen_ms;
      for (double s : frozen) frozen_ms.push_back(s * 1e3);
      std::printf("frozen worker (SIGSTOP) detected after %s ms (%d repetitions)\n",
                  Range(frozen_ms, "%.0f").c_str(), flags.freeze_reps);
      absl::StrAppend(&j, ", \"sigstop_ms\": ", JsonList(frozen_ms));
    }
    json.push_back(j + "}");
  }

  if (!flags.json.empty()) {
    absl::Status s = WriteFileAtomically(
        flags.json, absl::StrCat("{", absl::StrJoin(json, ",\n"), "}\n"));
    if (!s.ok()) Die(s.ToString());
  }
  return 0;
}

}  // namespace
}  // namespace graphrun

int main(int argc, char** argv) { return graphrun::Main(argc, argv); }
