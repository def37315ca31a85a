// Rendezvous: where a _Send and its _Recv meet, by key.
//
// A key names one tensor transfer of one step (TensorFlow's format):
//   send_device;<16 hex digits of incarnation>;recv_device;tensor_name;frame_id:iter_id
// e.g. "/job:localhost/replica:0/task:0/device:CPU:0;0000000000000001;
//       /job:localhost/replica:0/task:0/device:CPU:1;edge_5_mm;0:0".
//
// Send never blocks; RecvAsync calls `done` once, when the value arrives or
// the rendezvous is aborted. StartAbort fails everything pending and every
// later call. One Rendezvous serves one step, so keys need no step id.
// Implementations: LocalRendezvous (runtime/local_rendezvous.h) in one
// process; a remote one comes with the distributed runtime.
// Thread-safe.
#ifndef GRAPHRUN_KERNELS_RENDEZVOUS_H_
#define GRAPHRUN_KERNELS_RENDEZVOUS_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/tensor.h"

namespace graphrun {

class Rendezvous {
 public:
  using DoneCallback =
      std::function<void(const absl::Status& status, const Tensor& value, bool is_dead)>;

  virtual ~Rendezvous() = default;

  // Hands `value` to the matching Recv (now or later). Never blocks. An
  // error if the rendezvous was aborted or the key was already sent.
  virtual absl::Status Send(absl::string_view key, const Tensor& value,
                            bool is_dead) = 0;
  // Calls `done` exactly once: with the value, or with the abort status.
  // `done` may run on the calling thread (value already there) or on the
  // sender's thread.
  virtual void RecvAsync(absl::string_view key, DoneCallback done) = 0;
  // Fails every pending RecvAsync and every later call with `status`
  // (which must not be OK). The first abort's status wins.
  virtual void StartAbort(const absl::Status& status) = 0;
};

// TensorFlow's rendezvous key.
std::string CreateRendezvousKey(absl::string_view send_device, uint64_t incarnation,
                                absl::string_view recv_device,
                                absl::string_view tensor_name, uint64_t frame_id,
                                int64_t iter_id);

struct ParsedRendezvousKey {
  std::string send_device;
  uint64_t incarnation = 0;
  std::string recv_device;
  std::string tensor_name;
  uint64_t frame_id = 0;
  int64_t iter_id = 0;
};
// InvalidArgument naming the key when it does not have the five parts.
absl::StatusOr<ParsedRendezvousKey> ParseRendezvousKey(absl::string_view key);

}  // namespace graphrun

#endif  // GRAPHRUN_KERNELS_RENDEZVOUS_H_
