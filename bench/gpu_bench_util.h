// What the GPU benchmarks share: GPU 0 as a device, made once per process.
#ifndef GRAPHRUN_BENCH_GPU_BENCH_UTIL_H_
#define GRAPHRUN_BENCH_GPU_BENCH_UTIL_H_

#include <string>

#include "runtime/gpu/gpu_device.h"

namespace graphrun {
namespace bench {

// GPU 0 as /job:localhost/replica:0/task:0/device:GPU:0, made at the first
// call; null, with the reason in *why, where no GPU can be used.
Device* Gpu(std::string* why);

}  // namespace bench
}  // namespace graphrun

#endif  // GRAPHRUN_BENCH_GPU_BENCH_UTIL_H_
