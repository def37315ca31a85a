// A stateful random node's generator, shared by the random kernels.
//
// GuardedPhilox is TensorFlow's GuardedPhiloxRandom: a Philox4x32 stream
// handed out in reserved stretches under a mutex, so concurrent runs of one
// node draw disjoint numbers. NodeGenerator keeps one per node and session
// (a NodeResource, resource_mgr.h), so every plan that runs the node (other
// fetches, other feeds) carries on one stream. Seeds come from the node's
// seed/seed2 attrs; both 0 seeds from the OS.
#ifndef GRAPHRUN_KERNELS_CPU_NODE_GENERATOR_H_
#define GRAPHRUN_KERNELS_CPU_NODE_GENERATOR_H_

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "kernels/cpu/philox.h"
#include "kernels/op_kernel.h"
#include "kernels/resource_mgr.h"

namespace graphrun {
namespace random {

class GuardedPhilox : public ResourceBase {
 public:
  GuardedPhilox(int64_t seed, int64_t seed2) : gen_(Seeded(seed, seed2)) {}
  std::string DebugString() const override { return "random generator"; }

  // The generator where it stands; it then moves on by `blocks`.
  Philox4x32 Reserve(uint64_t blocks) {
    absl::MutexLock lock(&mu_);
    Philox4x32 reserved = gen_;
    gen_.Skip(blocks);
    return reserved;
  }

 private:
  static Philox4x32 Seeded(int64_t seed, int64_t seed2) {
    if (seed == 0 && seed2 == 0) {
      std::random_device os;
      auto word64 = [&os] { return (static_cast<uint64_t>(os()) << 32) | os(); };
      const uint64_t s = word64();
      return Philox4x32(s, word64());
    }
    return Philox4x32(static_cast<uint64_t>(seed), static_cast<uint64_t>(seed2));
  }

  absl::Mutex mu_;
  Philox4x32 gen_ ABSL_GUARDED_BY(mu_);
};

class NodeGenerator {
 public:
  NodeGenerator(OpKernelConstruction* ctx, const std::string& node)
      : seed_(Attr(ctx, "seed")), seed2_(Attr(ctx, "seed2")), gen_("graphrun_random", node) {}

  // Reserves `blocks` of the node's stream for this run.
  absl::StatusOr<Philox4x32> Reserve(OpKernelContext* ctx, uint64_t blocks) {
    absl::StatusOr<std::shared_ptr<GuardedPhilox>> gen =
        gen_.Get(ctx->device()->resource_manager(),
                 [this]() -> absl::StatusOr<std::shared_ptr<GuardedPhilox>> {
                   return std::make_shared<GuardedPhilox>(seed_, seed2_);
                 });
    if (!gen.ok()) return gen.status();
    return (*gen)->Reserve(blocks);
  }

 private:
  static int64_t Attr(OpKernelConstruction* ctx, const char* name) {
    int64_t value = 0;
    ctx->SetStatus(ctx->GetAttr(name, &value));
    return value;
  }

  const int64_t seed_, seed2_;
  NodeResource<GuardedPhilox> gen_;
};

}  // namespace random
}  // namespace graphrun

#endif  // GRAPHRUN_KERNELS_CPU_NODE_GENERATOR_H_
