// Rendezvous: where a _Send and its _Recv meet, by key.
//
// A key names one tensor transfer of one step (graph/rendezvous_key.h:
// TensorFlow's format, shared with the partitioner). Each end passes Args
// saying which device it is on and in which memory its tensor is (Send) or
// is wanted (RecvAsync); the Recv's callback gets both ends' Args. An
// implementation that joins different memory spaces (a GPU's, another
// worker's) copies there; one that cannot refuses the transfer.
//
// Send never blocks; RecvAsync calls `done` once, when the value arrives or
// the rendezvous is aborted. StartAbort fails everything pending and every
// later call. One Rendezvous serves one step, so keys need no step id.
// Implementations: LocalRendezvous (runtime/local_rendezvous.h) in one
// process, made per step by RendezvousMgr (runtime/rendezvous_mgr.h); a
// remote one comes with the distributed runtime.
// Thread-safe.
#ifndef GRAPHRUN_KERNELS_RENDEZVOUS_H_
#define GRAPHRUN_KERNELS_RENDEZVOUS_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/rendezvous_key.h"
#include "graph/tensor.h"
#include "kernels/device_base.h"

namespace graphrun {

class Rendezvous {
 public:
  // One end of a transfer.
  struct Args {
    // The device of this end: the sender's in Send, the receiver's in
    // RecvAsync (borrowed). Null for the client of a session.
    const DeviceBase* device = nullptr;
    // The tensor is (Send) or must be (RecvAsync) in host memory even if
    // the device has memory of its own (_HostSend, _HostRecv).
    bool host_memory = false;
  };
  // True when `args`' tensor is in host memory: a CPU device's, the
  // client's, or host memory asked for.
  static bool InHostMemory(const Args& args) {
    return args.host_memory || args.device == nullptr || args.device->device_type() == kDeviceCpu;
  }

  using DoneCallback =
      std::function<void(const absl::Status& status, const Args& send_args, const Args& recv_args,
                         const Tensor& value, bool is_dead)>;

  virtual ~Rendezvous() = default;

  // Hands `value` to the matching Recv (now or later). Never blocks. An
  // error if the rendezvous was aborted or the key was already sent.
  virtual absl::Status Send(absl::string_view key, const Args& args, const Tensor& value,
                            bool is_dead) = 0;
  // Calls `done` exactly once: with the value and the sender's Args, or
  // with the abort status (then `send_args` is empty). `done` may run on
  // the calling thread (value already there) or on the sender's thread.
  virtual void RecvAsync(absl::string_view key, const Args& args, DoneCallback done) = 0;
  // Fails every pending RecvAsync and every later call with `status`
  // (which must not be OK). The first abort's status wins.
  virtual void StartAbort(const absl::Status& status) = 0;
};

}  // namespace graphrun

#endif  // GRAPHRUN_KERNELS_RENDEZVOUS_H_
