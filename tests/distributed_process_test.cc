// Real worker processes (`graphrun worker`) on loopback, driven by a
// MasterSession in this process over gRPC: TensorFlow's models give
// TensorFlow's answers with their nodes pinned to random tasks of 2 and 3
// workers, and a worker killed in the middle of a step fails that step
// with Unavailable naming the task instead of hanging it.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "distributed/grpc_worker.h"
#include "distributed/master_session.h"
#include "graph/graph_io.h"
#include "graph/npy.h"
#include "gtest/gtest.h"
#include "runtime/testing/loop_graphs.h"
#include "tests/fixture_manifest.h"

namespace graphrun {
namespace {

std::string TaskName(int i) { return absl::StrCat("/job:worker/replica:0/task:", i); }

// One `graphrun worker` process; killed when the object goes.
class WorkerProcess {
 public:
  explicit WorkerProcess(int task) {
    int out[2], err[2];
    EXPECT_EQ(pipe2(out, O_CLOEXEC), 0);
    EXPECT_EQ(pipe2(err, O_CLOEXEC), 0);
    std::vector<std::string> args = {"tools/graphrun", "worker", "--listen=127.0.0.1:0",
                                     "--job=worker", absl::StrCat("--task=", task),
                                     "--log_steps"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_ = fork();
    if (pid_ == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      dup2(out[1], STDOUT_FILENO);
      dup2(err[1], STDERR_FILENO);
      execv(argv[0], argv.data());
      _exit(127);
    }
    close(out[1]);
    close(err[1]);
    out_ = out[0];
    err_ = err[0];
    const std::string line = ReadLine(out_);
    const size_t at = line.find(" serving on ");
    EXPECT_NE(at, std::string::npos) << "worker " << task << " said: " << line;
    if (at != std::string::npos) {
      address_ = line.substr(at + 12);
      address_ = address_.substr(0, address_.find(' '));
    }
  }
  ~WorkerProcess() {
    Kill();
    close(out_);
    close(err_);
  }
  void Kill() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  const std::string& address() const { return address_; }
  // Blocks until the worker writes a line to stderr containing `text`;
  // returns the line ("" if the worker's stderr closed first).
  std::string AwaitStderr(const std::string& text) {
    while (true) {
      const std::string line = ReadLine(err_);
      if (line.empty() || line.find(text) != std::string::npos) return line;
    }
  }

 private:
  // A line, or "" at end of file or after 60 s of silence (then the test
  // fails instead of hanging).
  static std::string ReadLine(int fd) {
    std::string line;
    while (true) {
      pollfd p{fd, POLLIN, 0};
      const int r = poll(&p, 1, 60000);
      if (r == 0) {
        ADD_FAILURE() << "no output from the worker for 60 s";
        return "";
      }
      if (r < 0) continue;
      char c;
      if (read(fd, &c, 1) != 1) return line;
      if (c == '\n') return line;
      line.push_back(c);
    }
  }

  pid_t pid_ = -1;
  int out_ = -1, err_ = -1;
  std::string address_;
};

struct ProcessCluster {
  explicit ProcessCluster(int n) {
    for (int i = 0; i < n; ++i) {
      workers.push_back(std::make_unique<WorkerProcess>(i));
      cluster[TaskName(i)] = workers.back()->address();
    }
  }
  absl::StatusOr<std::unique_ptr<Session>> NewSession(const GraphDef& graph,
                                                      WireEncoding wire = WIRE_ENCODING_NONE) {
    MasterSessionOptions o;
    o.cluster = cluster;
    o.connect = GrpcConnectFn(GrpcSecurity());
    o.wire_encoding = wire;
    o.connect_timeout = absl::Seconds(20);
    return NewMasterSession(graph, o);
  }
  std::vector<std::unique_ptr<WorkerProcess>> workers;
  std::map<std::string, std::string> cluster;
};

TEST(DistributedProcessTest, TensorFlowModelsOverTwoAndThreeWorkerProcesses) {
  const auto models = testing::ReadFixtureManifest("tests/fixtures/");
  for (int n : {2, 3}) {
    ProcessCluster cluster(n);
    ASSERT_EQ(cluster.cluster.size(), static_cast<size_t>(n));
    int ran = 0;  // the MLP and the CNN, each once: an empty manifest fails
    for (const auto& m : models) {
      if (m.name != "mlp" && m.name != "cnn") continue;
      ++ran;
      SCOPED_TRACE(absl::StrCat(m.name, " over ", n, " processes"));
      RunMetadata metadata;
      absl::Status s = testing::RunFixtureIn(
          m, [&](const GraphDef& g) { return cluster.NewSession(g); }, &metadata,
          testing::PinToRandomTasks(n, 11 + n));
      ASSERT_TRUE(s.ok()) << s;
      std::map<std::string, int> tasks;
      for (const std::string& d : metadata.placement().devices()) {
        tasks[d.substr(0, d.find("/device:"))]++;
      }
      EXPECT_EQ(tasks.size(), static_cast<size_t>(n));
    }
    EXPECT_EQ(ran, 2) << "tests/fixtures/MANIFEST lists the MLP and the CNN";
  }
}

// A loop on task 1 counting to the fed n, whose count task 0 waits for.
GraphDef LoopOnTask1() {
  std::string text = testing::IntConst("start", 0) + testing::Placeholder("n", "DT_INT32") +
                     testing::CountingLoop("loop", "start", "n", 1) +
                     "node { name: 'count' op: 'Identity' input: 'loop/exit_i' "
                     "attr { key: 'T' value { type: DT_INT32 } } }\n";
  auto graph = testing::LoopGraphDef(text);
  EXPECT_TRUE(graph.ok()) << graph.status();
  for (NodeDef& node : *graph->mutable_node()) {
    node.set_device(node.name() == "count" ? "/job:worker/task:0" : "/job:worker/task:1");
  }
  return *graph;
}

TEST(DistributedProcessTest, AWorkerKilledMidStepFailsTheStepNamingIt) {
  ProcessCluster cluster(2);
  auto session = cluster.NewSession(LoopOnTask1());
  ASSERT_TRUE(session.ok()) << session.status();

  absl::Status status;
  std::chrono::steady_clock::time_point failed;
  std::thread run([&] {
    std::vector<Tensor> out;
    status = (*session)->Run({{"n", Tensor::Scalar<int32_t>(INT_MAX)}}, {"count"}, {}, &out);
    failed = std::chrono::steady_clock::now();
  });
  // Task 1 has started the step: kill it.
  cluster.workers[1]->AwaitStderr("started");
  const auto killed = std::chrono::steady_clock::now();
  cluster.workers[1]->Kill();
  run.join();
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable) << status;
  EXPECT_NE(status.message().find("/job:worker/replica:0/task:1"), std::string::npos) << status;
  std::printf("dead worker detected after %.1f ms: %s\n",
              std::chrono::duration<double, std::milli>(failed - killed).count(),
              status.ToString().c_str());
}

TEST(DistributedProcessTest, AClientKilledMidStepEndsTheStepOnTheWorkers) {
  ProcessCluster cluster(2);
  const std::string dir = std::getenv("TEST_TMPDIR") ? std::getenv("TEST_TMPDIR") : "/tmp";
  ASSERT_TRUE(WriteGraphDefFile(dir + "/loop.pb", LoopOnTask1(), GraphFormat::kBinary).ok());
  ASSERT_TRUE(WriteNpyFile(dir + "/n.npy", Tensor::Scalar<int32_t>(INT_MAX)).ok());
  {
    std::FILE* f = std::fopen((dir + "/cluster.json").c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fprintf(f, "{\"worker\": [\"%s\", \"%s\"]}\n",
                 cluster.cluster[TaskName(0)].c_str(), cluster.cluster[TaskName(1)].c_str());
    std::fclose(f);
  }
  // `graphrun run --cluster` as a user runs it, killed once the step runs.
  const pid_t client = fork();
  if (client == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    const std::string graph = dir + "/loop.pb", feed = "--feed=n=" + dir + "/n.npy",
                      flag = "--cluster=" + dir + "/cluster.json";
    execl("tools/graphrun", "tools/graphrun", "run", graph.c_str(), feed.c_str(), "--fetch=count",
          flag.c_str(), "--quiet", static_cast<char*>(nullptr));
    _exit(127);
  }
  cluster.workers[1]->AwaitStderr("started");
  kill(client, SIGKILL);
  waitpid(client, nullptr, 0);
  // The workers see the master's calls cancelled and end the step.
  const std::string ended = cluster.workers[1]->AwaitStderr("ended");
  EXPECT_NE(ended.find("CANCELLED"), std::string::npos) << ended;
}

}  // namespace
}  // namespace graphrun
