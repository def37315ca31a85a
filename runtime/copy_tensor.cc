#include "runtime/copy_tensor.h"

#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "graph/allocator.h"
#include "graph/types.h"
#include "kernels/device_context.h"

namespace graphrun {
namespace {

std::string EndName(const Rendezvous::Args& args) {
  return args.device == nullptr ? std::string("the client") : args.device->name();
}

std::string Describe(absl::string_view key, const Rendezvous::Args& send,
                     const Rendezvous::Args& recv) {
  return absl::StrCat("copying rendezvous key '", key, "' from ", EndName(send),
                      Rendezvous::InHostMemory(send) ? " (host memory)" : " (device memory)",
                      " to ", EndName(recv),
                      Rendezvous::InHostMemory(recv) ? " (host memory)" : " (device memory)");
}

absl::Status WithContext(const absl::Status& s, const std::string& what) {
  if (s.ok()) return s;
  return absl::Status(s.code(), absl::StrCat(what, ": ", s.message()));
}

// The context that copies in and out of `end`'s device memory.
absl::StatusOr<DeviceContext*> ContextOf(const Rendezvous::Args& end) {
  DeviceContext* ctx = end.device == nullptr ? nullptr : end.device->device_context();
  if (ctx == nullptr) {
    return absl::UnimplementedError(absl::StrCat(
        EndName(end), " keeps the tensor in memory of its own but has no device context "
                      "to copy it with"));
  }
  return ctx;
}

absl::StatusOr<std::shared_ptr<Tensor>> AllocateLike(Allocator* allocator, const Tensor& value) {
  absl::StatusOr<Tensor> t = Tensor::Allocate(allocator, value.dtype(), value.shape(),
                                              TensorBuffer::Init::kUninitialized);
  if (!t.ok()) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "cannot allocate ", value.TotalBytes(), " bytes for a ", DataTypeString(value.dtype()),
        " ", value.shape().DebugString(), " tensor on ", allocator->Name()));
  }
  return std::make_shared<Tensor>(*std::move(t));
}

// Host memory of an end: its device's host allocator (pinned memory on a
// GPU), the plain host allocator for the client.
Allocator* HostMemoryOf(const Rendezvous::Args& end) {
  if (end.device == nullptr) return HostAllocator();
  AllocatorAttributes host;
  host.on_host = true;
  return end.device->GetAllocator(host);
}

}  // namespace

bool SameMemorySpace(const Rendezvous::Args& send, const Rendezvous::Args& recv) {
  const bool send_host = Rendezvous::InHostMemory(send);
  const bool recv_host = Rendezvous::InHostMemory(recv);
  if (send_host && recv_host) return true;
  return !send_host && !recv_host && send.device == recv.device;
}

void CopyTensorBetweenEnds(absl::string_view key, const Rendezvous::Args& send,
                           const Rendezvous::Args& recv, const Tensor& value,
                           CopyTensorDone done) {
  if (SameMemorySpace(send, recv)) {
    done(absl::OkStatus(), value);
    return;
  }
  const std::string what = Describe(key, send, recv);
  if (DataTypeSize(value.dtype()) == 0) {
    done(absl::InvalidArgumentError(absl::StrCat(what, ": ", DataTypeString(value.dtype()),
                                                 " tensors stay in host memory")),
         Tensor());
    return;
  }
  const bool send_host = Rendezvous::InHostMemory(send);
  const bool recv_host = Rendezvous::InHostMemory(recv);

  if (!send_host && recv_host) {  // device -> host
    // Into the sending device's host memory (pinned on a GPU): a copy into
    // pageable memory would hold the calling thread until the device's
    // queued work is done.
    absl::StatusOr<DeviceContext*> ctx = ContextOf(send);
    absl::StatusOr<std::shared_ptr<Tensor>> dst =
        ctx.ok() ? AllocateLike(HostMemoryOf(send), value)
                 : absl::StatusOr<std::shared_ptr<Tensor>>(ctx.status());
    if (!dst.ok()) {
      done(WithContext(dst.status(), what), Tensor());
      return;
    }
    std::shared_ptr<Tensor> out = *dst;
    (*ctx)->CopyDeviceTensorToCpu(value, out.get(),
                                  [out, value, what, done](const absl::Status& s) {
                                    done(WithContext(s, what), s.ok() ? *out : Tensor());
                                  });
    return;
  }
  if (send_host && !recv_host) {  // host -> device
    absl::StatusOr<DeviceContext*> ctx = ContextOf(recv);
    absl::StatusOr<std::shared_ptr<Tensor>> dst =
        ctx.ok() ? AllocateLike(recv.device->allocator(), value)
                 : absl::StatusOr<std::shared_ptr<Tensor>>(ctx.status());
    if (!dst.ok()) {
      done(WithContext(dst.status(), what), Tensor());
      return;
    }
    std::shared_ptr<Tensor> out = *dst;
    (*ctx)->CopyCpuTensorToDevice(value, out.get(),
                                  [out, value, what, done](const absl::Status& s) {
                                    done(WithContext(s, what), s.ok() ? *out : Tensor());
                                  });
    return;
  }
  // One device's memory to another's, through host memory.
  absl::StatusOr<DeviceContext*> from = ContextOf(send);
  absl::StatusOr<DeviceContext*> to =
      from.ok() ? ContextOf(recv) : absl::StatusOr<DeviceContext*>(from.status());
  absl::StatusOr<std::shared_ptr<Tensor>> staging =
      to.ok() ? AllocateLike(HostMemoryOf(recv), value)
              : absl::StatusOr<std::shared_ptr<Tensor>>(to.status());
  absl::StatusOr<std::shared_ptr<Tensor>> dst =
      staging.ok() ? AllocateLike(recv.device->allocator(), value) : staging;
  if (!dst.ok()) {
    done(WithContext(dst.status(), what), Tensor());
    return;
  }
  std::shared_ptr<Tensor> host = *staging;
  std::shared_ptr<Tensor> out = *dst;
  DeviceContext* to_ctx = *to;
  (*from)->CopyDeviceTensorToCpu(
      value, host.get(), [host, out, value, to_ctx, what, done](const absl::Status& s) {
        if (!s.ok()) {
          done(WithContext(s, what), Tensor());
          return;
        }
        to_ctx->CopyCpuTensorToDevice(*host, out.get(),
                                      [host, out, what, done](const absl::Status& s2) {
                                        done(WithContext(s2, what), s2.ok() ? *out : Tensor());
                                      });
      });
}

}  // namespace graphrun
