// The collective ops as kernels: each member hands its part to its
// device's CollectiveExecutor (kernels/collective.h) and waits for the
// meeting's answer. Keys come from the V2 forms' inputs and the v1 forms'
// attrs; ordering tokens are not read (a member's data and control inputs
// order it already).
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "graph/lower_collectives.h"
#include "graph/tensor.h"
#include "graph/tensor_shape.h"
#include "kernels/cpu/array_movement.h"
#include "kernels/collective.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"
#include "kernels/resource_mgr.h"

namespace graphrun {
namespace {

class CollectiveOp : public AsyncOpKernel {
 public:
  explicit CollectiveOp(OpKernelConstruction* c) : AsyncOpKernel(c) {
    const std::string& op = type_string();
    v2_ = absl::EndsWith(op, "V2");
    if (absl::StartsWith(op, "CollectiveReduce")) {
      kind_ = CollectiveKind::kReduce;
      OP_REQUIRES_OK(c, c->GetAttr("merge_op", &merge_op_));
      OP_REQUIRES_OK(c, c->GetAttr("final_op", &final_op_));
    } else if (absl::StartsWith(op, "CollectiveGather")) {
      kind_ = CollectiveKind::kGather;
    } else if (absl::StartsWith(op, "CollectiveBcastSend")) {
      kind_ = CollectiveKind::kBcastSend;
    } else {
      kind_ = CollectiveKind::kBcastRecv;
    }
    OP_REQUIRES_OK(c, c->GetAttr("T", &dtype_));
    OP_REQUIRES_OK(c, c->GetAttr("communication_hint", &hint_));
    session_scoped_ = c->def().attr().contains(kRunTimeCollectiveAttr);
    if (c->def().attr().contains(kCollectiveWireFloatAttr)) {
      OP_REQUIRES_OK(c, c->GetAttr(kCollectiveWireFloatAttr, &wire_float_));
    }
    float timeout_s = 0;
    OP_REQUIRES_OK(c, c->GetAttr("timeout_seconds", &timeout_s));
    if (timeout_s > 0) timeout_ = absl::Seconds(timeout_s);
    if (!v2_) {
      OP_REQUIRES_OK(c, c->GetAttr("group_size", &group_size_));
      OP_REQUIRES_OK(c, c->GetAttr("group_key", &group_key_));
      OP_REQUIRES_OK(c, c->GetAttr("instance_key", &instance_key_));
      if (kind_ == CollectiveKind::kBcastRecv) {
        PartialShape shape;
        OP_REQUIRES_OK(c, c->GetAttr("shape", &shape));
        absl::StatusOr<TensorShape> full = TensorShape::FromDims(shape.dims());
        OP_REQUIRES(c, shape.IsFullyDefined() && full.ok(),
                    absl::InvalidArgumentError(absl::StrCat(
                        "CollectiveBcastRecv '", name(), "' needs a fully defined shape, not ",
                        shape.DebugString())));
        recv_shape_ = *full;
      }
    }
  }

  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    CollectiveCall call;
    call.kind = kind_;
    call.node = name();
    call.device = ctx->device()->name();
    call.dtype = dtype_;
    call.merge_op = merge_op_;
    call.final_op = final_op_;
    call.timeout = timeout_;
    call.group_size = group_size_;
    call.group_key = group_key_;
    call.instance_key = instance_key_;
    call.shape = recv_shape_;
    call.communication_hint = hint_;
    if (session_scoped_) call.scope = std::string(ctx->params().session_handle);
    call.wire_float = wire_float_;
    if (v2_) {
      // The keys follow the data input, which a broadcast receive lacks.
      const int k = kind_ == CollectiveKind::kBcastRecv ? 0 : 1;
      OP_REQUIRES_OK_ASYNC(ctx, ScalarKey(ctx, k, "group_size", &call.group_size), done);
      OP_REQUIRES_OK_ASYNC(ctx, ScalarKey(ctx, k + 1, "group_key", &call.group_key), done);
      OP_REQUIRES_OK_ASYNC(ctx, ScalarKey(ctx, k + 2, "instance_key", &call.instance_key), done);
      if (kind_ == CollectiveKind::kBcastRecv) {
        absl::StatusOr<TensorShape> shape = array_kernels::ShapeFromTensor(ctx->input(3));
        OP_REQUIRES_ASYNC(ctx, shape.ok(),
                          absl::InvalidArgumentError(absl::StrCat(
                              "node '", name(), "': bad shape to receive: ",
                              shape.status().message())),
                          done);
        call.shape = *shape;
      }
    }
    OP_REQUIRES_ASYNC(ctx, call.group_size >= 1,
                      absl::InvalidArgumentError(absl::StrCat(
                          call.Describe(), ": group_size must be positive, not ",
                          call.group_size)),
                      done);
    Tensor input;
    if (kind_ != CollectiveKind::kBcastRecv) input = ctx->input(0);
    ResourceMgr* rm = ctx->device()->resource_manager();
    absl::StatusOr<std::shared_ptr<CollectiveExecutor>> executor =
        rm == nullptr ? absl::NotFoundError("no resources")
                      : rm->Lookup<CollectiveExecutor>(kCollectiveContainer, kCollectiveExecutor);
    OP_REQUIRES_ASYNC(
        ctx, executor.ok(),
        absl::FailedPreconditionError(absl::StrCat(
            call.Describe(), ": the graph holds only some of the instance's ", call.group_size,
            " members, and members in other clients' graphs meet only on the worker tasks of a "
            "cluster (graphrun train --cluster with --task, and graphrun worker)")),
        done);
    (*executor)->Run(std::move(call), std::move(input), ctx->cancellation(),
                     [ctx, done](absl::StatusOr<Tensor> result) {
                       if (!result.ok()) {
                         ctx->SetStatus(result.status());
                       } else {
                         ctx->set_output(0, *std::move(result));
                       }
                       done();
                     });
  }

 private:
  absl::Status ScalarKey(OpKernelContext* ctx, int i, absl::string_view what,
                         int64_t* value) const {
    const Tensor& t = ctx->input(i);
    if (t.dtype() != DT_INT32 || t.NumElements() != 1) {
      return absl::InvalidArgumentError(absl::StrCat("node '", name(), "': ", what,
                                                     " must be an int32 scalar, not ",
                                                     t.shape().DebugString()));
    }
    *value = t.flat<int32_t>()[0];
    return absl::OkStatus();
  }

  bool v2_ = true;
  bool session_scoped_ = false;
  CollectiveKind kind_ = CollectiveKind::kReduce;
  DataType dtype_ = DT_FLOAT;
  std::string merge_op_, final_op_, hint_;
  DataType wire_float_ = DT_FLOAT;
  absl::Duration timeout_ = absl::ZeroDuration();
  int64_t group_size_ = 0, group_key_ = 0, instance_key_ = 0;
  TensorShape recv_shape_;
};

#define GR_REGISTER_COLLECTIVE(op) \
  REGISTER_KERNEL(KernelDefBuilder(op).Device(kDeviceCpu), CollectiveOp)
GR_REGISTER_COLLECTIVE("CollectiveReduceV2");
GR_REGISTER_COLLECTIVE("CollectiveGatherV2");
GR_REGISTER_COLLECTIVE("CollectiveBcastSendV2");
GR_REGISTER_COLLECTIVE("CollectiveBcastRecvV2");
GR_REGISTER_COLLECTIVE("CollectiveReduce");
GR_REGISTER_COLLECTIVE("CollectiveGather");
GR_REGISTER_COLLECTIVE("CollectiveBcastSend");
GR_REGISTER_COLLECTIVE("CollectiveBcastRecv");
#undef GR_REGISTER_COLLECTIVE

}  // namespace
}  // namespace graphrun
