// libFuzzer target for what placement reads from users: device specs,
// cluster description files, cost profiles and rendezvous keys. The first
// byte picks the parser; the rest is its input. Every input must give a
// value or a clean error: no crash, no hang, no unbounded allocation.
//
// Build and run with clang: tools/fuzz.sh SECONDS placer; every CI run
// replays the corpus and deterministic mutations
// (placer_fuzz_regression_test).
#include <cstddef>
#include <cstdint>
#include <string>

#include "google/protobuf/util/json_util.h"
#include "graph/rendezvous_key.h"
#include "placer/cost_model.h"
#include "placer/device_name.h"
#include "placer/device_set.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace graphrun;
  using namespace graphrun::placer;
  if (size == 0) return 0;
  const std::string input(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 4) {
    case 0: {  // device specs: parse, print, re-parse, match, merge
      const size_t cut = input.find('\n');
      auto a = ParseDeviceName(input.substr(0, cut));
      if (!a.ok()) return 0;
      auto again = ParseDeviceName(DeviceNameToString(*a));
      if (!again.ok() || !(*again == *a)) __builtin_trap();  // round trip
      if (cut != std::string::npos) {
        auto b = ParseDeviceName(input.substr(cut + 1));
        if (b.ok()) {
          (void)Matches(*a, *b);
          DeviceName merged = *a;
          (void)MergeDeviceNames(&merged, *b);
        }
      }
      (void)CanonicalizeDeviceName(input);
      return 0;
    }
    case 1: {  // cluster description JSON
      auto set = ParseClusterDescription(input, "fuzz input");
      if (!set.ok()) return 0;
      for (int a = 0; a < set->size() && a < 16; ++a) {
        for (int b = 0; b < set->size() && b < 16; ++b) (void)set->Link(a, b);
      }
      return 0;
    }
    case 2: {  // cost profile JSON
      CostProfile profile;
      if (!google::protobuf::util::JsonStringToMessage(input, &profile).ok()) return 0;
      CostModel costs;
      (void)costs.AddProfile(profile);
      (void)costs.ToProfile();
      return 0;
    }
    default: {  // rendezvous keys round trip
      auto key = ParseRendezvousKey(input);
      if (!key.ok()) return 0;
      auto again = ParseRendezvousKey(CreateRendezvousKey(
          key->send_device, key->incarnation, key->recv_device, key->tensor_name,
          key->frame_id, key->iter_id));
      if (!again.ok() || again->tensor_name != key->tensor_name) __builtin_trap();
      return 0;
    }
  }
}
