// Workers served over real gRPC on loopback, in this process: a master
// session over them, the auth token, TLS, oversized and malformed
// requests, and workers that never answer.
#include "distributed/grpc_worker.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "distributed/master_session.h"
#include "distributed/protos/worker.grpc.pb.h"
#include "distributed/served_worker.h"
#include "distributed/worker.h"
#include "graph/allocator.h"
#include "graph/graph_io.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"

namespace graphrun {
namespace {

std::string TaskName(int i) { return absl::StrCat("/job:worker/replica:0/task:", i); }

std::string ReadTestFile(const std::string& name) {
  std::ifstream in("distributed/testdata/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_FALSE(ss.str().empty()) << name;
  return ss.str();
}

GrpcSecurity Tls() {
  GrpcSecurity s;
  s.tls_cert = ReadTestFile("node.pem");
  s.tls_key = ReadTestFile("node.key");
  s.tls_ca = ReadTestFile("ca.pem");
  return s;
}

// Workers in this process, each behind its own gRPC server on loopback.
struct GrpcCluster {
  GrpcCluster(int n, const GrpcSecurity& security, int max_request_bytes = 1 << 30) {
    for (int i = 0; i < n; ++i) {
      WorkerOptions o;
      o.task_name = TaskName(i);
      o.connect = GrpcConnectFn(security);
      o.data_plane = !security.tls();
      auto w = Worker::Create(o);
      EXPECT_TRUE(w.ok()) << w.status();
      GrpcWorkerServerOptions so;
      so.security = security;
      so.max_request_bytes = max_request_bytes;
      auto server = GrpcWorkerServer::Start(w->get(), so);
      EXPECT_TRUE(server.ok()) << server.status();
      cluster[TaskName(i)] = absl::StrCat("127.0.0.1:", (*server)->port());
      workers.push_back(std::move(*w));
      servers.push_back(std::move(*server));
    }
  }
  ~GrpcCluster() {
    servers.clear();
    workers.clear();
  }

  absl::StatusOr<std::unique_ptr<Session>> NewSession(const GraphDef& graph,
                                                      const GrpcSecurity& client) {
    MasterSessionOptions o;
    o.cluster = cluster;
    o.connect = GrpcConnectFn(client);
    o.connect_timeout = absl::Seconds(10);
    o.wire_encoding = WIRE_ENCODING_NONE;
    return NewMasterSession(graph, o);
  }

  std::map<std::string, std::string> cluster;
  std::vector<std::unique_ptr<Worker>> workers;
  std::vector<std::unique_ptr<GrpcWorkerServer>> servers;
};

// y = x * 2 on task 1, z = y + 1 on task 0.
GraphDef AffineGraph() {
  auto g = ParseGraphDef(R"(
    node { name: "x" op: "Placeholder" device: "/job:worker/task:0"
           attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "two" op: "Const" device: "/job:worker/task:1"
           attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 2 } } } }
    node { name: "y" op: "Mul" input: "x" input: "two" device: "/job:worker/task:1"
           attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "one" op: "Const" device: "/job:worker/task:0"
           attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 1 } } } }
    node { name: "z" op: "AddV2" input: "y" input: "one" device: "/job:worker/task:0"
           attr { key: "T" value { type: DT_FLOAT } } }
  )",
                         GraphFormat::kText);
  EXPECT_TRUE(g.ok()) << g.status();
  return *g;
}

// Runs AffineGraph on `n` values and checks z = 2x + 1 exactly.
absl::Status RunAffine(Session* session, int n) {
  std::vector<float> x(n);
  for (int i = 0; i < n; ++i) x[i] = static_cast<float>(i % 1000) - 500.0f;
  std::vector<Tensor> out;
  absl::Status s = session->Run({{"x", Tensor::FromVector(x)}}, {"z"}, {}, &out);
  if (!s.ok()) return s;
  EXPECT_EQ(out[0].NumElements(), n);
  const auto z = out[0].flat<float>();
  for (int i = 0; i < n; ++i) {
    if (z[i] != 2 * x[i] + 1) {
      return absl::InternalError(absl::StrCat("z[", i, "] = ", z[i], ", want ", 2 * x[i] + 1));
    }
  }
  return absl::OkStatus();
}

TEST(GrpcWorkerTest, AMasterRunsAGraphOverTwoWorkers) {
  GrpcCluster cluster(2, GrpcSecurity());
  auto session = cluster.NewSession(AffineGraph(), GrpcSecurity());
  ASSERT_TRUE(session.ok()) << session.status();
  // Small tensors inline in RecvTensor and in the RunGraph response.
  EXPECT_TRUE(RunAffine(session->get(), 10).ok());
  EXPECT_EQ(cluster.workers[0]->DataPlaneTransfers(), 0);
  EXPECT_EQ(cluster.workers[1]->DataPlaneTransfers(), 0);
  // 4 MB: x, read only on task 1, goes in task 1's own RunGraph call
  // (direct_feeds.h), not through task 0; y comes back to task 0 and the
  // fetch z goes to the master over the data plane.
  EXPECT_TRUE(RunAffine(session->get(), 1 << 20).ok());
  EXPECT_EQ(cluster.workers[0]->DataPlaneTransfers(), 1);
  EXPECT_EQ(cluster.workers[1]->DataPlaneTransfers(), 1);
  session->reset();
  for (auto& w : cluster.workers) {
    EXPECT_EQ(w->NumSteps(), 0);
    EXPECT_EQ(w->NumGraphs(), 0);
  }
}

// The client serves task 0 itself (ServedWorker, `--in_process_worker`):
// the master reaches it without a socket and takes its fetches inline,
// while task 1 still reaches it over gRPC and its data plane.
TEST(GrpcWorkerTest, AMasterReachesItsOwnServedTaskInProcess) {
  std::map<std::string, std::string> cluster;
  std::vector<std::shared_ptr<ServedWorker>> served;
  for (int i = 0; i < 2; ++i) {
    WorkerOptions o;
    o.task_name = TaskName(i);
    o.connect = GrpcConnectFn(GrpcSecurity());
    auto s = ServedWorker::Start(o, GrpcWorkerServerOptions());
    ASSERT_TRUE(s.ok()) << s.status();
    cluster[TaskName(i)] = absl::StrCat("127.0.0.1:", (*s)->port());
    served.push_back(*s);
  }
  Worker* w0 = served[0]->worker();
  MasterSessionOptions o;
  o.cluster = cluster;
  o.connect = served[0]->ConnectWithSelf(GrpcConnectFn(GrpcSecurity()));
  o.connect_timeout = absl::Seconds(10);
  o.wire_encoding = WIRE_ENCODING_NONE;
  auto self = o.connect(TaskName(0), cluster[TaskName(0)]);
  ASSERT_TRUE(self.ok());
  EXPECT_EQ(self->get(), static_cast<WorkerInterface*>(w0));
  auto other = o.connect(TaskName(1), cluster[TaskName(1)]);
  ASSERT_TRUE(other.ok());
  EXPECT_FALSE((*other)->in_process());
  // What the connection returned keeps the worker alive.
  std::weak_ptr<ServedWorker> weak = served[0];
  served[0].reset();
  EXPECT_FALSE(weak.expired());

  auto session = NewMasterSession(AffineGraph(), o);
  ASSERT_TRUE(session.ok()) << session.status();
  // 4 MB: x goes straight to task 1 in its RunGraph call, y comes back
  // over task 1's data plane, and the fetch z is handed over in memory
  // (over gRPC it would be a transfer from task 0's data plane).
  EXPECT_TRUE(RunAffine(session->get(), 1 << 20).ok());
  EXPECT_EQ(w0->DataPlaneTransfers(), 0);
  EXPECT_EQ(served[1]->worker()->DataPlaneTransfers(), 1);
  session->reset();
  EXPECT_EQ(w0->NumGraphs(), 0);
  self->reset();
  o.connect = nullptr;
  EXPECT_TRUE(weak.expired());
}

TEST(GrpcWorkerTest, FeedsOverTwoGigabytesAreRefusedBeforeTheyTravel) {
  GrpcCluster cluster(2, GrpcSecurity());
  auto session = cluster.NewSession(AffineGraph(), GrpcSecurity());
  ASSERT_TRUE(session.ok()) << session.status();
  // 2 GiB, never touched: the master refuses it before serializing.
  absl::StatusOr<Tensor> x = Tensor::Allocate(HostAllocator(), DT_FLOAT,
                                              TensorShape({int64_t{1} << 29}),
                                              TensorBuffer::Init::kUninitialized);
  ASSERT_TRUE(x.ok()) << x.status();
  std::vector<Tensor> out;
  const absl::Status s = (*session)->Run({{"x", *x}}, {"z"}, {}, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("feed 'x'"), std::string::npos) << s;
  EXPECT_NE(s.message().find("at most"), std::string::npos) << s;
  // The session still runs.
  EXPECT_TRUE(RunAffine(session->get(), 10).ok());
}

TEST(GrpcWorkerTest, CallsWithoutTheTokenAreRefused) {
  GrpcSecurity with_token;
  with_token.auth_token = "s3cret-token";
  GrpcCluster cluster(2, with_token);

  auto none = cluster.NewSession(AffineGraph(), GrpcSecurity());
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), absl::StatusCode::kUnauthenticated) << none.status();
  EXPECT_NE(none.status().message().find("without an auth token"), std::string::npos)
      << none.status();

  GrpcSecurity wrong;
  wrong.auth_token = "s3cret-tokem";
  auto bad = cluster.NewSession(AffineGraph(), wrong);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kUnauthenticated) << bad.status();
  EXPECT_NE(bad.status().message().find("wrong auth token"), std::string::npos) << bad.status();

  // Workers carry the token to each other too (task 0 pulls from task 1).
  auto good = cluster.NewSession(AffineGraph(), with_token);
  ASSERT_TRUE(good.ok()) << good.status();
  EXPECT_TRUE(RunAffine(good->get(), 100).ok());

  // A direct call to a worker without the token is refused as well.
  auto raw = NewGrpcRemoteWorker(TaskName(1), cluster.cluster[TaskName(1)], GrpcSecurity());
  RecvTensorRequest req;
  RecvTensorReply resp;
  absl::Status status;
  absl::Notification done;
  raw->RecvTensorAsync(&req, &resp, nullptr, [&](const absl::Status& s) {
    status = s;
    done.Notify();
  });
  done.WaitForNotification();
  EXPECT_EQ(status.code(), absl::StatusCode::kUnauthenticated) << status;
}

TEST(GrpcWorkerTest, TlsWithTheClustersCa) {
  const GrpcSecurity tls = Tls();
  GrpcCluster cluster(2, tls);
  auto session = cluster.NewSession(AffineGraph(), tls);
  ASSERT_TRUE(session.ok()) << session.status();
  // Without the data plane, large tensors stay inside TLS.
  EXPECT_TRUE(RunAffine(session->get(), 1 << 18).ok());

  MasterSessionOptions o;
  o.cluster = cluster.cluster;
  o.connect_timeout = absl::Milliseconds(1500);
  o.connect = GrpcConnectFn(GrpcSecurity());  // plaintext
  auto plain = NewMasterSession(AffineGraph(), o);
  // A handshake that cannot succeed looks like silent tasks: the session
  // gives up at its deadline naming each task it could not reach.
  auto expect_unreached = [&](const absl::Status& s) {
    EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
    for (int i = 0; i < 2; ++i) {
      EXPECT_NE(s.message().find(absl::StrCat(TaskName(i), " at ", cluster.cluster[TaskName(i)])),
                std::string::npos)
          << s;
    }
  };
  ASSERT_FALSE(plain.ok());
  expect_unreached(plain.status());

  GrpcSecurity other = tls;
  other.tls_ca = ReadTestFile("other_ca.pem");  // does not vouch for the servers
  o.connect = GrpcConnectFn(other);
  auto stranger = NewMasterSession(AffineGraph(), o);
  ASSERT_FALSE(stranger.ok());
  expect_unreached(stranger.status());
}

TEST(GrpcWorkerTest, OversizedAndMalformedRequestsLeaveTheWorkerServing) {
  GrpcCluster cluster(2, GrpcSecurity(), /*max_request_bytes=*/1 << 20);
  auto session = cluster.NewSession(AffineGraph(), GrpcSecurity());
  ASSERT_TRUE(session.ok()) << session.status();
  // 2 MB of feed in one RunGraph request.
  absl::Status big = RunAffine(session->get(), 1 << 19);
  EXPECT_EQ(big.code(), absl::StatusCode::kResourceExhausted) << big;

  // Random bytes to every method.
  auto channel = grpc::CreateChannel(cluster.cluster[TaskName(0)],
                                     grpc::InsecureChannelCredentials());
  grpc::GenericStub stub(channel);
  std::mt19937 rng(3);
  const char* methods[] = {"GetStatus",    "RegisterGraph", "RunGraph", "CleanupGraph",
                           "CleanupStep", "RecvTensor",    "Health"};
  int refused = 0;
  for (int round = 0; round < 40; ++round) {
    for (const char* m : methods) {
      std::string bytes(rng() % 300, '\0');
      for (char& c : bytes) c = static_cast<char>(rng());
      grpc::Slice slice(bytes);
      grpc::ByteBuffer request(&slice, 1);
      grpc::ByteBuffer response;
      grpc::ClientContext ctx;
      ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
      absl::Notification done;
      grpc::Status status;
      stub.UnaryCall(&ctx, absl::StrCat("/graphrun.WorkerService/", m), grpc::StubOptions(),
                     &request, &response, [&](grpc::Status s) {
                       status = s;
                       done.Notify();
                     });
      done.WaitForNotification();
      // Garbage either fails to parse or parses into a request the worker
      // refuses or answers; it never takes the worker down.
      refused += !status.ok();
      EXPECT_NE(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << m;
    }
  }
  EXPECT_GT(refused, 0);
  // Still serving.
  EXPECT_TRUE(RunAffine(session->get(), 1000).ok());
}

TEST(GrpcWorkerTest, SessionCreationGivesUpNamingTheSilentTask) {
  GrpcCluster cluster(1, GrpcSecurity());
  // A port nothing listens on: bind one, note it, close it.
  int port = 0;
  {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_GE(fd, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    socklen_t len = sizeof(addr);
    ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
    port = ntohs(addr.sin_port);
    close(fd);
  }
  MasterSessionOptions o;
  o.cluster = cluster.cluster;
  o.cluster[TaskName(1)] = absl::StrCat("127.0.0.1:", port);
  o.connect = GrpcConnectFn(GrpcSecurity());
  // Long enough for the live task to answer on a loaded machine (the check
  // below is that only the silent one is named); the test waits it out.
  o.connect_timeout = absl::Seconds(10);
  auto session = NewMasterSession(AffineGraph(), o);
  ASSERT_FALSE(session.ok());
  EXPECT_EQ(session.status().code(), absl::StatusCode::kDeadlineExceeded) << session.status();
  EXPECT_NE(session.status().message().find(
                absl::StrCat(TaskName(1), " at 127.0.0.1:", port)),
            std::string::npos)
      << session.status();
  EXPECT_EQ(session.status().message().find(TaskName(0) + " at"), std::string::npos)
      << session.status();
}

TEST(GrpcWorkerTest, LoadGrpcSecurityChecksItsFiles) {
  // Each refusal is InvalidArgument and names the flag and, for a file, it.
  auto expect_refused = [](const absl::StatusOr<GrpcSecurity>& got,
                           std::initializer_list<const char*> words) {
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument) << got.status();
    for (const char* w : words) EXPECT_NE(got.status().message().find(w), std::string::npos) << w;
  };
  expect_refused(LoadGrpcSecurity("/nonexistent/token", "", "", ""),
                 {"--auth_token_file", "/nonexistent/token"});
  expect_refused(LoadGrpcSecurity("", "distributed/testdata/node.pem", "", ""),
                 {"--tls_cert", "--tls_key"});
  expect_refused(
      LoadGrpcSecurity("", "distributed/testdata/node.pem", "distributed/testdata/node.key", ""),
      {"--tls_ca"});
  expect_refused(LoadGrpcSecurity("", "/nonexistent/cert.pem", "distributed/testdata/node.key",
                                  "distributed/testdata/ca.pem"),
                 {"--tls_cert", "/nonexistent/cert.pem"});
  expect_refused(LoadGrpcSecurity("", "distributed/testdata/node.pem", "distributed/testdata/node.key",
                                  "/nonexistent/ca.pem"),
                 {"--tls_ca", "/nonexistent/ca.pem"});
  auto ok = LoadGrpcSecurity("", "distributed/testdata/node.pem", "distributed/testdata/node.key",
                             "distributed/testdata/ca.pem");
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_TRUE(ok->tls());
}

}  // namespace
}  // namespace graphrun
