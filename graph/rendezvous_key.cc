#include "graph/rendezvous_key.h"

#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace graphrun {

std::string CreateRendezvousKey(absl::string_view send_device, uint64_t incarnation,
                                absl::string_view recv_device,
                                absl::string_view tensor_name, uint64_t frame_id,
                                int64_t iter_id) {
  return absl::StrCat(send_device, ";", absl::Hex(incarnation, absl::kZeroPad16), ";",
                      recv_device, ";", tensor_name, ";", frame_id, ":", iter_id);
}

absl::StatusOr<ParsedRendezvousKey> ParseRendezvousKey(absl::string_view key) {
  const std::vector<absl::string_view> parts = absl::StrSplit(key, ';');
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid rendezvous key '", key, "': ", why));
  };
  if (parts.size() != 5) return bad("expected 5 parts separated by ';'");
  ParsedRendezvousKey out;
  out.send_device = std::string(parts[0]);
  out.recv_device = std::string(parts[2]);
  out.tensor_name = std::string(parts[3]);
  if (out.send_device.empty() || out.recv_device.empty() || out.tensor_name.empty()) {
    return bad("empty device or tensor name");
  }
  if (parts[1].size() != 16 || !absl::SimpleHexAtoi(parts[1], &out.incarnation)) {
    return bad("the incarnation must be 16 hex digits");
  }
  const std::vector<absl::string_view> fi = absl::StrSplit(parts[4], ':');
  if (fi.size() != 2 || !absl::SimpleAtoi(fi[0], &out.frame_id) ||
      !absl::SimpleAtoi(fi[1], &out.iter_id)) {
    return bad("the last part must be frame_id:iter_id");
  }
  return out;
}

}  // namespace graphrun
