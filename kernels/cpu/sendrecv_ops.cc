// _Send / _Recv (and the _Host variants): the two ends of a cross-device
// edge that the partitioner inserted. Send hands its input to the step's
// Rendezvous and never blocks; Recv is asynchronous and finishes when the
// value arrives, or fails when the step is aborted or cancelled.
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "kernels/cpu/sendrecv_ops.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"
#include "kernels/rendezvous.h"

namespace graphrun {
namespace {

// "send_device;incarnation;recv_device;tensor_name" from the node's attrs.
absl::StatusOr<std::string> KeyPrefix(OpKernelConstruction* c) {
  std::string send_device, recv_device, tensor_name;
  int64_t incarnation = 0;
  absl::Status s = c->GetAttr("send_device", &send_device);
  if (s.ok()) s = c->GetAttr("recv_device", &recv_device);
  if (s.ok()) s = c->GetAttr("tensor_name", &tensor_name);
  if (s.ok()) s = c->GetAttr("send_device_incarnation", &incarnation);
  if (!s.ok()) return s;
  // The frame part is appended per execution.
  std::string key = CreateRendezvousKey(send_device, static_cast<uint64_t>(incarnation),
                                        recv_device, tensor_name, 0, 0);
  key.resize(key.size() - 4);  // drop ";0:0"
  return key;
}

// The key prefix, or "" with the error recorded on `c`.
std::string KeyPrefixOrError(OpKernelConstruction* c) {
  auto prefix = KeyPrefix(c);
  if (!prefix.ok()) {
    c->SetStatus(prefix.status());
    return "";
  }
  return *std::move(prefix);
}

std::string FullKey(const std::string& prefix, const OpKernelContext& ctx) {
  return absl::StrCat(prefix, ";", static_cast<uint64_t>(ctx.params().frame_id), ":",
                      ctx.params().iter_id);
}

// This end's Args: the kernel's device, and host memory for the _Host
// variants.
Rendezvous::Args EndArgs(OpKernelContext* ctx, bool host_memory) {
  Rendezvous::Args args;
  args.device = ctx->device();
  args.host_memory = host_memory;
  return args;
}

bool IsHostVariant(const OpKernelConstruction& c) {
  return c.def().op() == "_HostSend" || c.def().op() == "_HostRecv";
}

class SendOp : public OpKernel {
 public:
  explicit SendOp(OpKernelConstruction* c) : OpKernel(c) {
    set_expensive(false);
    prefix_ = KeyPrefixOrError(c);
    host_memory_ = IsHostVariant(*c);
  }

  // A dead input is sent as deadness, so the Recv side does not wait.
  bool RunsOnDeadInput() const override { return true; }

  void Compute(OpKernelContext* ctx) override {
    Rendezvous* rendezvous = ctx->params().rendezvous;
    OP_REQUIRES(ctx, rendezvous != nullptr,
                absl::FailedPreconditionError("the step has no rendezvous"));
    if (ctx->is_input_dead()) {
      OP_REQUIRES_OK(ctx,
                     rendezvous->Send(FullKey(prefix_, *ctx), EndArgs(ctx, host_memory_), Tensor(),
                                      /*is_dead=*/true));
      return;
    }
    OP_REQUIRES_OK(
        ctx, rendezvous->Send(FullKey(prefix_, *ctx), EndArgs(ctx, host_memory_), ctx->input(0),
                              /*is_dead=*/false));
  }

 private:
  std::string prefix_;
  bool host_memory_ = false;
};

class RecvOp : public AsyncOpKernel {
 public:
  explicit RecvOp(OpKernelConstruction* c) : AsyncOpKernel(c) {
    // ComputeAsync only registers a callback: not worth a thread hop.
    set_expensive(false);
    prefix_ = KeyPrefixOrError(c);
    host_memory_ = IsHostVariant(*c);
  }

  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    Rendezvous* rendezvous = ctx->params().rendezvous;
    OP_REQUIRES_ASYNC(ctx, rendezvous != nullptr,
                      absl::FailedPreconditionError("the step has no rendezvous"), done);
    // Cancelling the step aborts the rendezvous, which fails this Recv.
    CancellationManager* cm = ctx->cancellation();
    const int64_t token = cm->NewToken();
    if (!cm->Register(token, [rendezvous] {
          rendezvous->StartAbort(absl::CancelledError("the step was cancelled"));
        })) {
      ctx->SetStatus(absl::CancelledError("the step was cancelled"));
      done();
      return;
    }
    const DataType expected = ctx->expected_output_dtype(0);
    rendezvous->RecvAsync(
        FullKey(prefix_, *ctx), EndArgs(ctx, host_memory_),
        [ctx, done, cm, token, expected](const absl::Status& s, const Rendezvous::Args&,
                                         const Rendezvous::Args&, const Tensor& value,
                                         bool is_dead) {
          // Never waits: the abort callback only touches the rendezvous,
          // which outlives the step.
          cm->TryDeregister(token);
          if (!s.ok()) {
            ctx->SetStatus(s);
          } else if (is_dead) {
            ctx->set_outputs_dead();
          } else if (value.dtype() != expected) {
            ctx->SetStatus(absl::InternalError(absl::StrCat(
                "received a ", DataTypeString(value.dtype()), " tensor, expected ",
                DataTypeString(expected))));
          } else {
            ctx->set_output(0, value);
          }
          done();
        });
  }

 private:
  std::string prefix_;
  bool host_memory_ = false;
};

REGISTER_KERNEL(KernelDefBuilder("_Send").Device(kDeviceCpu), SendOp);
REGISTER_KERNEL(KernelDefBuilder("_HostSend").Device(kDeviceCpu), SendOp);
REGISTER_KERNEL(KernelDefBuilder("_Recv").Device(kDeviceCpu), RecvOp);
REGISTER_KERNEL(KernelDefBuilder("_HostRecv").Device(kDeviceCpu), RecvOp);

}  // namespace

OpKernel* NewSendOp(OpKernelConstruction* c) { return new SendOp(c); }
OpKernel* NewRecvOp(OpKernelConstruction* c) { return new RecvOp(c); }

}  // namespace graphrun
