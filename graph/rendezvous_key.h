// TensorFlow's rendezvous key: the name of one tensor transfer of one step,
// shared by the partitioner (which writes it into _Send/_Recv attrs) and the
// runtime's rendezvous (which matches sends and receives by it):
//   send_device;<16 hex digits of incarnation>;recv_device;tensor_name;frame_id:iter_id
// e.g. "/job:localhost/replica:0/task:0/device:CPU:0;0000000000000001;
//       /job:localhost/replica:0/task:0/device:CPU:1;edge_5_mm;0:0".
#ifndef GRAPHRUN_GRAPH_RENDEZVOUS_KEY_H_
#define GRAPHRUN_GRAPH_RENDEZVOUS_KEY_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace graphrun {

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

#endif  // GRAPHRUN_GRAPH_RENDEZVOUS_KEY_H_
