// The worker service over gRPC: a server that serves a Worker
// (distributed/worker.h) on a task's address, and the client a master or
// another worker uses to reach it (a WorkerInterface).
//
// Calls carry an auth token when the cluster has one ("authorization:
// Bearer <token>" metadata; the server refuses a call without it, or with
// another, with Unauthenticated saying which) and run over TLS when given
// a certificate, key and CA (then the client checks the server's
// certificate against the CA and, with a CA on the server, the server the
// client's). Connections are kept alive with 1 s HTTP/2 pings, so a peer
// that vanishes without closing its socket fails the calls in flight with
// Unavailable within seconds instead of hanging them. Requests above the
// server's size limit are refused (ResourceExhausted) without harm.
#ifndef GRAPHRUN_DISTRIBUTED_GRPC_WORKER_H_
#define GRAPHRUN_DISTRIBUTED_GRPC_WORKER_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "distributed/worker.h"
#include "distributed/worker_interface.h"

namespace grpc {
class Server;
}  // namespace grpc

namespace graphrun {

// Credentials shared by the servers and clients of one cluster.
struct GrpcSecurity {
  // Every call must carry it; empty: no token.
  std::string auth_token;
  // PEM contents. With cert and key, servers speak TLS; with a CA, peers
  // are verified against it. All empty: plaintext.
  std::string tls_cert;
  std::string tls_key;
  std::string tls_ca;
  bool tls() const { return !tls_cert.empty() || !tls_ca.empty(); }
};

// Reads the files behind the command-line flags (empty paths: not used).
// InvalidArgument naming the file: unreadable, an empty token, a
// certificate without its key (or the reverse), TLS without a CA.
absl::StatusOr<GrpcSecurity> LoadGrpcSecurity(const std::string& auth_token_file,
                                              const std::string& tls_cert_file,
                                              const std::string& tls_key_file,
                                              const std::string& tls_ca_file);

// The client of the worker of `task` at `address` ("host:port").
std::shared_ptr<WorkerInterface> NewGrpcRemoteWorker(const std::string& task,
                                                     const std::string& address,
                                                     const GrpcSecurity& security);

// A ConnectFn making gRPC clients with `security`.
ConnectFn GrpcConnectFn(const GrpcSecurity& security);

struct GrpcWorkerServerOptions {
  // "host:port" to listen on; port 0: one the system picks.
  std::string listen_address = "127.0.0.1:0";
  GrpcSecurity security;
  // Requests larger than this are refused.
  int max_request_bytes = 1 << 30;
};

class GrpcWorkerServer {
 public:
  // Starts serving `worker` (borrowed; outlives the server). Unavailable
  // naming the address when it cannot listen there.
  static absl::StatusOr<std::unique_ptr<GrpcWorkerServer>> Start(
      Worker* worker, const GrpcWorkerServerOptions& options);
  // Stops: calls in flight are cancelled, new ones refused.
  ~GrpcWorkerServer();
  // The port it listens on (the system's choice for port 0).
  int port() const { return port_; }
  // Blocks until Shutdown (from another thread or a signal handler's
  // thread).
  void Wait();
  void Shutdown();

 private:
  GrpcWorkerServer() = default;
  class Service;
  std::unique_ptr<Service> service_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
};

}  // namespace graphrun

#endif  // GRAPHRUN_DISTRIBUTED_GRPC_WORKER_H_
