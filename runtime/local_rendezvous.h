// LocalRendezvous: the Rendezvous of one step inside one process.
//
// A table from key to either a sent value waiting for its Recv, or a Recv
// waiting for its value. When both ends keep the tensor in one memory space
// (host memory: CPU devices, the client, _HostSend/_HostRecv on other
// devices; or one GPU's own) it is handed over by reference (the buffer is
// shared, never copied), so a transfer between two CPU devices of one
// process costs a hash lookup and a callback. Otherwise it is copied into
// the receiver's memory on the devices' streams (runtime/copy_tensor.h),
// and the Recv's callback runs when the copy is done. Made with the incarnations of the worker's devices, it refuses a
// key whose sending device is one of them but whose incarnation is not the
// live device's (FailedPrecondition naming the device: the key was made for
// an earlier instance, a restarted worker's); keys naming other devices
// are not checked. Callbacks run outside the lock. Thread-safe.
#ifndef GRAPHRUN_RUNTIME_LOCAL_RENDEZVOUS_H_
#define GRAPHRUN_RUNTIME_LOCAL_RENDEZVOUS_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "kernels/rendezvous.h"

namespace graphrun {

// Full device name -> Device::incarnation(), of one worker's devices.
using DeviceIncarnations = absl::flat_hash_map<std::string, uint64_t>;

// Without `incarnations` (null) keys are only matched, never parsed.
std::shared_ptr<Rendezvous> NewLocalRendezvous(
    std::shared_ptr<const DeviceIncarnations> incarnations = nullptr);

// Test hook: called with the rendezvous and the key each time a RecvAsync
// finds no value yet and starts waiting (after it is registered, outside
// the lock). Lets a test act once a partition is blocked in a Recv instead
// of sleeping and hoping. Process-wide; nullptr (the default) removes it.
using RecvWaitingHook = void (*)(const Rendezvous* rendezvous, absl::string_view key);
void SetRecvWaitingHookForTest(RecvWaitingHook hook);

}  // namespace graphrun

#endif  // GRAPHRUN_RUNTIME_LOCAL_RENDEZVOUS_H_
