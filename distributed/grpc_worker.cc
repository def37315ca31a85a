#include "distributed/grpc_worker.h"

#include <fstream>
#include <sstream>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "distributed/protos/worker.grpc.pb.h"
#include "distributed/recv_tensor_wire.h"
#include "grpc/grpc.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/support/proto_buffer_reader.h"
#include "grpcpp/grpcpp.h"

namespace graphrun {
namespace {

constexpr char kAuthHeader[] = "authorization";
constexpr char kBearer[] = "Bearer ";

absl::StatusOr<std::string> ReadFile(const std::string& path, const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::InvalidArgumentError(absl::StrCat("cannot read ", what, " file ", path));
  std::stringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return absl::InvalidArgumentError(absl::StrCat("cannot read ", what, " file ", path));
  return ss.str();
}

// Equal strings, in time that depends only on their lengths.
bool ConstantTimeEquals(absl::string_view a, absl::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

absl::Status FromGrpc(const grpc::Status& s) {
  if (s.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(s.error_code()), s.error_message());
}

grpc::Status ToGrpc(const absl::Status& s) {
  if (s.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(s.code()), std::string(s.message()));
}

// gRPC sizes its socket reads by what it read before and may grow them to
// megabytes; each read then lands in freshly mapped pages, and clearing
// those pages cost most of a small step's time. Tensor bytes go over the
// data plane, so reads stay small.
constexpr int kMaxReadChunkBytes = 256 << 10;

void SetKeepalive(grpc::ChannelArguments* args) {
  args->SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 1000);
  args->SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 2000);
  args->SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  args->SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
}

// gRPC shuts its library down when the last object using it goes; a
// completion still in flight on its callback threads then trips an
// assertion and aborts the process (seen when a session ended while its
// keepalive calls were out). One reference held for the life of the
// process keeps the library up.
void KeepGrpcUp() {
  static const bool initialized = [] {
    grpc_init();
    return true;
  }();
  (void)initialized;
}

// The process's channel to `address` with `security`'s TLS settings, made
// on first use and kept for the life of the process. Sessions come and go;
// their workers' connections stay up for the next one. It also keeps gRPC's
// callback threads up: when the last channel that used them went, their
// shutdown could race completions still being delivered and abort the
// process (an assertion in grpc_cq_internal_unref, seen when sessions
// ended around a killed worker).
std::shared_ptr<grpc::Channel> SharedChannel(const std::string& address,
                                             const GrpcSecurity& security) {
  KeepGrpcUp();
  static absl::Mutex mu(absl::kConstInit);
  static auto* channels = new absl::flat_hash_map<std::string, std::shared_ptr<grpc::Channel>>();
  const std::string key = absl::StrCat(address, "\n", security.tls_cert, "\n",
                                       security.tls_key, "\n", security.tls_ca);
  absl::MutexLock lock(&mu);
  std::shared_ptr<grpc::Channel>& channel = (*channels)[key];
  if (channel != nullptr) return channel;
  grpc::ChannelArguments args;
  SetKeepalive(&args);
  args.SetMaxReceiveMessageSize(-1);
  args.SetMaxSendMessageSize(-1);
  args.SetInt(GRPC_ARG_TCP_MAX_READ_CHUNK_SIZE, kMaxReadChunkBytes);
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  // A connection per peer of its own: tensors between two workers do not
  // queue behind another pair's.
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  std::shared_ptr<grpc::ChannelCredentials> creds;
  if (security.tls()) {
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = security.tls_ca;
    ssl.pem_private_key = security.tls_key;
    ssl.pem_cert_chain = security.tls_cert;
    creds = grpc::SslCredentials(ssl);
  } else {
    creds = grpc::InsecureChannelCredentials();
  }
  channel = grpc::CreateCustomChannel(address, creds, args);
  return channel;
}

class GrpcRemoteWorker : public WorkerInterface {
 public:
  GrpcRemoteWorker(std::string task, std::string address, const GrpcSecurity& security)
      : task_(std::move(task)), address_(std::move(address)), token_(security.auth_token) {
    std::shared_ptr<grpc::Channel> channel = SharedChannel(address_, security);
    stub_ = WorkerService::NewStub(channel);
    generic_stub_ = std::make_unique<grpc::GenericStub>(channel);
  }

  void GetStatusAsync(const GetStatusRequest* request, GetStatusResponse* response,
                      CallOptions* opts, StatusCallback done) override {
    Call("GetStatus", opts, std::move(done), [&](grpc::ClientContext* ctx, auto cb) {
      stub_->async()->GetStatus(ctx, request, response, std::move(cb));
    });
  }
  void RegisterGraphAsync(const RegisterGraphRequest* request, RegisterGraphResponse* response,
                          CallOptions* opts, StatusCallback done) override {
    Call("RegisterGraph", opts, std::move(done), [&](grpc::ClientContext* ctx, auto cb) {
      stub_->async()->RegisterGraph(ctx, request, response, std::move(cb));
    });
  }
  void RunGraphAsync(const RunGraphRequest* request, RunGraphResponse* response,
                     CallOptions* opts, StatusCallback done) override {
    Call("RunGraph", opts, std::move(done), [&](grpc::ClientContext* ctx, auto cb) {
      stub_->async()->RunGraph(ctx, request, response, std::move(cb));
    });
  }
  void CleanupGraphAsync(const CleanupGraphRequest* request, CleanupGraphResponse* response,
                         CallOptions* opts, StatusCallback done) override {
    Call("CleanupGraph", opts, std::move(done), [&](grpc::ClientContext* ctx, auto cb) {
      stub_->async()->CleanupGraph(ctx, request, response, std::move(cb));
    });
  }
  void CleanupStepAsync(const CleanupStepRequest* request, CleanupStepResponse* response,
                        CallOptions* opts, StatusCallback done) override {
    Call("CleanupStep", opts, std::move(done), [&](grpc::ClientContext* ctx, auto cb) {
      stub_->async()->CleanupStep(ctx, request, response, std::move(cb));
    });
  }
  // The response's bytes are read by DecodeRecvTensorReply: a tensor is
  // copied once, out of gRPC's buffers.
  void RecvTensorAsync(const RecvTensorRequest* request, RecvTensorReply* reply,
                       CallOptions* opts, StatusCallback done) override {
    struct Buffers {
      grpc::ByteBuffer request;
      grpc::ByteBuffer response;
    };
    auto buffers = std::make_shared<Buffers>();
    {
      grpc::Slice slice(request->SerializeAsString());
      buffers->request = grpc::ByteBuffer(&slice, 1);
    }
    StatusCallback decode = [buffers, reply, task = task_,
                             done = std::move(done)](const absl::Status& s) {
      if (!s.ok()) {
        done(s);
        return;
      }
      absl::Status decoded = DecodeRecvTensorReply(&buffers->response, reply);
      if (!decoded.ok()) {
        decoded = absl::Status(decoded.code(), absl::StrCat(task, ": ", decoded.message()));
      }
      done(decoded);
    };
    Call("RecvTensor", opts, std::move(decode), [&](grpc::ClientContext* ctx, auto cb) {
      generic_stub_->UnaryCall(ctx, "/graphrun.WorkerService/RecvTensor", grpc::StubOptions(),
                               &buffers->request, &buffers->response, std::move(cb));
    });
  }
  void HealthAsync(const HealthRequest* request, HealthResponse* response, CallOptions* opts,
                   StatusCallback done) override {
    Call("Health", opts, std::move(done), [&](grpc::ClientContext* ctx, auto cb) {
      stub_->async()->Health(ctx, request, response, std::move(cb));
    });
  }
  void CollectiveAsync(const CollectiveRequest* request, CollectiveResponse* response,
                       CallOptions* opts, StatusCallback done) override {
    Call("Collective", opts, std::move(done), [&](grpc::ClientContext* ctx, auto cb) {
      stub_->async()->Collective(ctx, request, response, std::move(cb));
    });
  }

 private:
  template <typename StartFn>
  void Call(const char* method, CallOptions* opts, StatusCallback done, StartFn start) {
    auto ctx = std::make_shared<grpc::ClientContext>();
    if (!token_.empty()) ctx->AddMetadata(kAuthHeader, absl::StrCat(kBearer, token_));
    if (opts != nullptr) {
      const absl::Duration timeout = opts->timeout();
      if (timeout != absl::InfiniteDuration()) {
        ctx->set_deadline(std::chrono::system_clock::now() +
                          absl::ToChronoMilliseconds(timeout));
      }
      ctx->set_wait_for_ready(opts->wait_for_ready());
      opts->SetCancelCallback([ctx] { ctx->TryCancel(); });
    }
    // The callback may run after this client is gone (a call still in
    // flight when its session ends): it holds what it needs.
    start(ctx.get(), [ctx, opts, method, task = task_, address = address_,
                      done = std::move(done)](grpc::Status s) {
      if (opts != nullptr) opts->ClearCancelCallback();
      done(Describe(s, task, address, method));
    });
  }

  // Names the task and address in errors of the transport. An error the
  // worker itself returned names its tasks already and passes unchanged
  // (an Unavailable about another task is not this one being unreachable).
  static absl::Status Describe(const grpc::Status& s, const std::string& task,
                               const std::string& address, const char* method) {
    absl::Status status = FromGrpc(s);
    if (status.ok() || absl::StrContains(status.message(), "/job:")) return status;
    switch (status.code()) {
      case absl::StatusCode::kUnavailable:
        return absl::UnavailableError(absl::StrCat(task, " at ", address, " is unreachable (",
                                                   method, "): ", status.message()));
      case absl::StatusCode::kDeadlineExceeded:
      case absl::StatusCode::kUnauthenticated:
      case absl::StatusCode::kResourceExhausted:
        return absl::Status(status.code(), absl::StrCat(task, " at ", address, " (", method,
                                                        "): ", status.message()));
      default:
        return status;
    }
  }

  const std::string task_;
  const std::string address_;
  const std::string token_;
  std::unique_ptr<WorkerService::Stub> stub_;
  std::unique_ptr<grpc::GenericStub> generic_stub_;
};

}  // namespace

absl::StatusOr<GrpcSecurity> LoadGrpcSecurity(const std::string& auth_token_file,
                                              const std::string& tls_cert_file,
                                              const std::string& tls_key_file,
                                              const std::string& tls_ca_file) {
  GrpcSecurity security;
  if (!auth_token_file.empty()) {
    absl::StatusOr<std::string> token = ReadFile(auth_token_file, "--auth_token_file");
    if (!token.ok()) return token.status();
    security.auth_token = std::string(absl::StripAsciiWhitespace(*token));
    if (security.auth_token.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--auth_token_file ", auth_token_file, " holds no token"));
    }
    for (char c : security.auth_token) {
      if (c < 0x21 || c > 0x7e) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--auth_token_file ", auth_token_file,
            ": the token must be printable ASCII without spaces"));
      }
    }
  }
  if (tls_cert_file.empty() != tls_key_file.empty()) {
    return absl::InvalidArgumentError("--tls_cert and --tls_key go together");
  }
  if (!tls_cert_file.empty() && tls_ca_file.empty()) {
    return absl::InvalidArgumentError(
        "--tls_cert needs --tls_ca (the CA that signed the cluster's certificates)");
  }
  if (!tls_cert_file.empty()) {
    absl::StatusOr<std::string> cert = ReadFile(tls_cert_file, "--tls_cert");
    if (!cert.ok()) return cert.status();
    absl::StatusOr<std::string> key = ReadFile(tls_key_file, "--tls_key");
    if (!key.ok()) return key.status();
    security.tls_cert = *cert;
    security.tls_key = *key;
  }
  if (!tls_ca_file.empty()) {
    absl::StatusOr<std::string> ca = ReadFile(tls_ca_file, "--tls_ca");
    if (!ca.ok()) return ca.status();
    security.tls_ca = *ca;
  }
  return security;
}

std::shared_ptr<WorkerInterface> NewGrpcRemoteWorker(const std::string& task,
                                                     const std::string& address,
                                                     const GrpcSecurity& security) {
  return std::make_shared<GrpcRemoteWorker>(task, address, security);
}

ConnectFn GrpcConnectFn(const GrpcSecurity& security) {
  return [security](const std::string& task, const std::string& address)
             -> absl::StatusOr<std::shared_ptr<WorkerInterface>> {
    return NewGrpcRemoteWorker(task, address, security);
  };
}

// Serves a Worker: each call checks the token, then runs the worker's
// asynchronous method and finishes when its callback runs. A client that
// cancels (or goes away) cancels the worker's call. RecvTensor works on
// the message bytes (EncodeRecvTensorReply), so a tensor's buffer goes to
// gRPC as it is.
class GrpcWorkerServer::Service
    : public WorkerService::WithRawCallbackMethod_RecvTensor<WorkerService::CallbackService> {
 public:
  Service(Worker* worker, std::string token) : worker_(worker), token_(std::move(token)) {}

  grpc::ServerUnaryReactor* GetStatus(grpc::CallbackServerContext* ctx,
                                      const GetStatusRequest* request,
                                      GetStatusResponse* response) override {
    return Serve(ctx, [=](CallOptions* o, StatusCallback d) {
      worker_->GetStatusAsync(request, response, o, std::move(d));
    });
  }
  grpc::ServerUnaryReactor* RegisterGraph(grpc::CallbackServerContext* ctx,
                                          const RegisterGraphRequest* request,
                                          RegisterGraphResponse* response) override {
    return Serve(ctx, [=](CallOptions* o, StatusCallback d) {
      worker_->RegisterGraphAsync(request, response, o, std::move(d));
    });
  }
  grpc::ServerUnaryReactor* RunGraph(grpc::CallbackServerContext* ctx,
                                     const RunGraphRequest* request,
                                     RunGraphResponse* response) override {
    return Serve(ctx, [=](CallOptions* o, StatusCallback d) {
      worker_->RunGraphAsync(request, response, o, std::move(d));
    });
  }
  grpc::ServerUnaryReactor* CleanupGraph(grpc::CallbackServerContext* ctx,
                                         const CleanupGraphRequest* request,
                                         CleanupGraphResponse* response) override {
    return Serve(ctx, [=](CallOptions* o, StatusCallback d) {
      worker_->CleanupGraphAsync(request, response, o, std::move(d));
    });
  }
  grpc::ServerUnaryReactor* CleanupStep(grpc::CallbackServerContext* ctx,
                                        const CleanupStepRequest* request,
                                        CleanupStepResponse* response) override {
    return Serve(ctx, [=](CallOptions* o, StatusCallback d) {
      worker_->CleanupStepAsync(request, response, o, std::move(d));
    });
  }
  grpc::ServerUnaryReactor* RecvTensor(grpc::CallbackServerContext* ctx,
                                       const grpc::ByteBuffer* request,
                                       grpc::ByteBuffer* response) override {
    return Serve(ctx, [=](CallOptions* o, StatusCallback d) {
      struct State {
        RecvTensorRequest request;
        RecvTensorReply reply;
      };
      auto state = std::make_shared<State>();
      grpc::ByteBuffer copy(*request);  // shares the slices
      grpc::ProtoBufferReader reader(&copy);
      if (!reader.status().ok() || !state->request.ParseFromZeroCopyStream(&reader)) {
        d(absl::InvalidArgumentError(absl::StrCat(
            worker_->task_name(), " cannot parse a RecvTensor request")));
        return;
      }
      worker_->RecvTensorAsync(&state->request, &state->reply, o,
                               [state, response, d = std::move(d)](const absl::Status& s) {
                                 if (!s.ok()) {
                                   d(s);
                                   return;
                                 }
                                 absl::StatusOr<grpc::ByteBuffer> bytes =
                                     EncodeRecvTensorReply(state->reply);
                                 if (!bytes.ok()) {
                                   d(bytes.status());
                                   return;
                                 }
                                 *response = *std::move(bytes);
                                 d(absl::OkStatus());
                               });
    });
  }
  grpc::ServerUnaryReactor* Health(grpc::CallbackServerContext* ctx,
                                   const HealthRequest* request,
                                   HealthResponse* response) override {
    return Serve(ctx, [=](CallOptions* o, StatusCallback d) {
      worker_->HealthAsync(request, response, o, std::move(d));
    });
  }
  grpc::ServerUnaryReactor* Collective(grpc::CallbackServerContext* ctx,
                                       const CollectiveRequest* request,
                                       CollectiveResponse* response) override {
    return Serve(ctx, [=](CallOptions* o, StatusCallback d) {
      worker_->CollectiveAsync(request, response, o, std::move(d));
    });
  }

 private:
  // Lives until gRPC is done with the call.
  class Reactor : public grpc::ServerUnaryReactor {
   public:
    CallOptions opts;
    void OnCancel() override { opts.StartCancel(); }
    void OnDone() override { delete this; }
  };

  template <typename Fn>
  grpc::ServerUnaryReactor* Serve(grpc::CallbackServerContext* ctx, Fn run) {
    auto* reactor = new Reactor();
    const absl::Status auth = CheckToken(*ctx);
    if (!auth.ok()) {
      reactor->Finish(ToGrpc(auth));
      return reactor;
    }
    run(&reactor->opts, [reactor](const absl::Status& s) { reactor->Finish(ToGrpc(s)); });
    return reactor;
  }

  absl::Status CheckToken(const grpc::CallbackServerContext& ctx) const {
    if (token_.empty()) return absl::OkStatus();
    const auto& md = ctx.client_metadata();
    auto it = md.find(kAuthHeader);
    if (it == md.end()) {
      return absl::UnauthenticatedError(absl::StrCat(
          worker_->task_name(), " refuses a call without an auth token (",
          "the worker was started with --auth_token_file)"));
    }
    const absl::string_view value(it->second.data(), it->second.size());
    if (!absl::StartsWith(value, kBearer) ||
        !ConstantTimeEquals(value.substr(sizeof(kBearer) - 1), token_)) {
      return absl::UnauthenticatedError(
          absl::StrCat(worker_->task_name(), " refuses a call with a wrong auth token"));
    }
    return absl::OkStatus();
  }

  Worker* const worker_;
  const std::string token_;
};

absl::StatusOr<std::unique_ptr<GrpcWorkerServer>> GrpcWorkerServer::Start(
    Worker* worker, const GrpcWorkerServerOptions& options) {
  KeepGrpcUp();
  std::unique_ptr<GrpcWorkerServer> server(new GrpcWorkerServer());
  server->service_ = std::make_unique<Service>(worker, options.security.auth_token);
  std::shared_ptr<grpc::ServerCredentials> creds;
  if (options.security.tls()) {
    grpc::SslServerCredentialsOptions ssl(
        options.security.tls_ca.empty()
            ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
            : GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
    ssl.pem_root_certs = options.security.tls_ca;
    ssl.pem_key_cert_pairs.push_back({options.security.tls_key, options.security.tls_cert});
    creds = grpc::SslServerCredentials(ssl);
  } else {
    creds = grpc::InsecureServerCredentials();
  }
  grpc::ServerBuilder builder;
  builder.AddListeningPort(options.listen_address, creds, &server->port_);
  builder.RegisterService(server->service_.get());
  builder.SetMaxReceiveMessageSize(options.max_request_bytes);
  builder.SetMaxSendMessageSize(-1);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, 1000);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 2000);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 500);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PING_STRIKES, 0);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  builder.AddChannelArgument(GRPC_ARG_TCP_MAX_READ_CHUNK_SIZE, kMaxReadChunkBytes);
  server->server_ = builder.BuildAndStart();
  if (server->server_ == nullptr || server->port_ == 0) {
    return absl::UnavailableError(absl::StrCat("cannot listen on ", options.listen_address,
                                               " (in use, or not an address of this host)"));
  }
  return server;
}

GrpcWorkerServer::~GrpcWorkerServer() { Shutdown(); }

void GrpcWorkerServer::Wait() {
  if (server_ != nullptr) server_->Wait();
}

void GrpcWorkerServer::Shutdown() {
  if (server_ != nullptr) {
    server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  }
}

}  // namespace graphrun
