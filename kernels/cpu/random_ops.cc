// CPU kernels of the random ops (graph/ops/random_ops.cc), bit-exact with
// TensorFlow's (core/kernels/random_op.cc, stateless_random_ops_v2.cc).
//
// Stateful ops (RandomUniform, RandomStandardNormal, TruncatedNormal,
// RandomUniformInt) keep one Philox4x32 generator per kernel, i.e. per node
// of a session, seeded from the seed/seed2 attrs (both 0: from the OS), as
// TensorFlow's GuardedPhiloxRandom: each run takes the generator as it
// stands and moves it on by 256 blocks per output value, under a mutex, so
// concurrent runs of one node get disjoint streams and run k of a session
// gives TensorFlow's run k. Stateless ops build the generator from their
// key and counter inputs each run. Outputs are written in groups
// (random_distributions.h) sharded over the device's pool; the bits do not
// depend on the sharding.
#include <cstdint>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "graph/tensor.h"
#include "kernels/cpu/array_movement.h"
#include "kernels/cpu/philox.h"
#include "kernels/cpu/node_generator.h"
#include "kernels/cpu/random_distributions.h"
#include "kernels/eigen.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace {

using random::Philox4x32;

using random::NodeGenerator;

// Fills `out` with `dist`'s groups from `gen`, sharded over the pool.
template <typename Dist, typename T>
void Fill(OpKernelContext* ctx, const Philox4x32& gen, const Dist& dist, Tensor* out) {
  const int64_t size = out->NumElements();
  if (size == 0) return;
  T* data = out->flat<T>().data();
  constexpr int64_t kGroup = Dist::kGroupSize;
  const int64_t groups = (size + kGroup - 1) / kGroup;
  // Rough cycles per group: a Philox block plus the conversions (Box-Muller
  // and rejections cost more).
  const double cycles = Dist::kVariableCost ? 600.0 : std::is_integral_v<T> ? 60.0 : 120.0;
  ctx->eigen_cpu_device().parallelFor(groups, Eigen::TensorOpCost(0, kGroup * sizeof(T), cycles),
                                      [&](Eigen::Index start, Eigen::Index limit) {
                                        random::FillRandomGroups(gen, dist, data, size, start,
                                                                 limit);
                                      });
}

// Calls f(T{}) for the op's real output dtype.
template <typename F>
bool VisitRealType(DataType dtype, F f) {
  switch (dtype) {
    case DT_HALF:
      f(half{});
      return true;
    case DT_BFLOAT16:
      f(bfloat16{});
      return true;
    case DT_FLOAT:
      f(float{});
      return true;
    case DT_DOUBLE:
      f(double{});
      return true;
    default:
      return false;
  }
}

absl::Status ShapeInput(const Tensor& t, TensorShape* shape) {
  absl::StatusOr<TensorShape> s = array_kernels::ShapeFromTensor(t);
  if (!s.ok()) return s.status();
  *shape = *s;
  return absl::OkStatus();
}

// RandomUniform, RandomStandardNormal, TruncatedNormal.
template <template <typename> class Dist>
class StatefulRandomOp : public OpKernel {
 public:
  explicit StatefulRandomOp(OpKernelConstruction* ctx) : OpKernel(ctx), gen_(ctx, name()) {}

  void Compute(OpKernelContext* ctx) override {
    TensorShape shape;
    OP_REQUIRES_OK(ctx, ShapeInput(ctx->input(0), &shape));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, shape, &out));
    absl::StatusOr<Philox4x32> reserved = gen_.Reserve(
        ctx, static_cast<uint64_t>(out->NumElements()) * random::kReservedBlocksPerOutput);
    OP_REQUIRES_OK(ctx, reserved.status());
    const Philox4x32 gen = *reserved;
    const bool known = VisitRealType(output_type(0), [&](auto zero) {
      using T = decltype(zero);
      Fill<Dist<T>, T>(ctx, gen, Dist<T>(), out);
    });
    OP_REQUIRES(ctx, known,
                absl::InvalidArgumentError(absl::StrCat(type_string(), " has no kernel for dtype ",
                                                        DataTypeString(output_type(0)))));
  }

 private:
  NodeGenerator gen_;
};

// Reads a scalar bound of RandomUniformInt.
template <typename T>
absl::Status ScalarBound(const Tensor& t, const char* name, T* value) {
  if (t.dims() != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, " must be 0-D, got shape ", t.shape().DebugString()));
  }
  *value = t.flat<T>()[0];
  return absl::OkStatus();
}

class RandomUniformIntOp : public OpKernel {
 public:
  explicit RandomUniformIntOp(OpKernelConstruction* ctx) : OpKernel(ctx), gen_(ctx, name()) {}

  void Compute(OpKernelContext* ctx) override {
    if (output_type(0) == DT_INT64) {
      Run<int64_t>(ctx);
    } else {
      Run<int32_t>(ctx);
    }
  }

 private:
  template <typename T>
  void Run(OpKernelContext* ctx) {
    TensorShape shape;
    OP_REQUIRES_OK(ctx, ShapeInput(ctx->input(0), &shape));
    T lo = 0, hi = 0;
    OP_REQUIRES_OK(ctx, ScalarBound(ctx->input(1), "minval", &lo));
    OP_REQUIRES_OK(ctx, ScalarBound(ctx->input(2), "maxval", &hi));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, shape, &out));
    // As TensorFlow: an empty output neither checks the bounds nor draws.
    if (out->NumElements() == 0) return;
    OP_REQUIRES(ctx, lo < hi,
                absl::InvalidArgumentError(absl::StrCat("Need minval < maxval: ", lo, " >= ", hi)));
    absl::StatusOr<Philox4x32> reserved = gen_.Reserve(
        ctx, static_cast<uint64_t>(out->NumElements()) * random::kReservedBlocksPerOutput);
    OP_REQUIRES_OK(ctx, reserved.status());
    const Philox4x32 gen = *reserved;
    Fill<random::UniformInt<T>, T>(ctx, gen, random::UniformInt<T>(lo, hi), out);
  }

  NodeGenerator gen_;
};

// Algorithm ids of TensorFlow's stateless ops.
constexpr int32_t kAlgPhilox = 1;
constexpr int32_t kAlgAutoSelect = 3;

// StatelessRandomUniformV2, StatelessRandomNormalV2,
// StatelessTruncatedNormalV2: Philox from the key [1] and counter [2]
// inputs (each uint64 split low word first).
template <template <typename> class Dist>
class StatelessRandomV2Op : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    TensorShape shape;
    OP_REQUIRES_OK(ctx, ShapeInput(ctx->input(0), &shape));
    const Tensor& key = ctx->input(1);
    const Tensor& counter = ctx->input(2);
    const Tensor& alg_t = ctx->input(3);
    OP_REQUIRES(ctx, alg_t.dims() == 0,
                absl::InvalidArgumentError(
                    absl::StrCat("alg must be a scalar, got shape ", alg_t.shape().DebugString())));
    int32_t alg = alg_t.flat<int32_t>()[0];
    if (alg == kAlgAutoSelect) alg = kAlgPhilox;
    OP_REQUIRES(ctx, alg == kAlgPhilox,
                absl::InvalidArgumentError(absl::StrCat("Unsupported algorithm id: ", alg)));
    OP_REQUIRES(ctx, key.dims() == 1 && key.NumElements() == 1,
                absl::InvalidArgumentError(
                    absl::StrCat("key must have shape [1], not ", key.shape().DebugString())));
    OP_REQUIRES(ctx, counter.dims() == 1 && counter.NumElements() >= 2,
                absl::InvalidArgumentError(
                    absl::StrCat("counter must be a vector with at least 2 elements, got shape ",
                                 counter.shape().DebugString())));
    const uint64_t k = key.flat<uint64_t>()[0];
    const uint64_t c0 = counter.flat<uint64_t>()[0], c1 = counter.flat<uint64_t>()[1];
    const Philox4x32 gen({static_cast<uint32_t>(c0), static_cast<uint32_t>(c0 >> 32),
                          static_cast<uint32_t>(c1), static_cast<uint32_t>(c1 >> 32)},
                         {static_cast<uint32_t>(k), static_cast<uint32_t>(k >> 32)});
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, shape, &out));
    const bool known = VisitRealType(output_type(0), [&](auto zero) {
      using T = decltype(zero);
      Fill<Dist<T>, T>(ctx, gen, Dist<T>(), out);
    });
    OP_REQUIRES(ctx, known,
                absl::InvalidArgumentError(absl::StrCat(type_string(), " has no kernel for dtype ",
                                                        DataTypeString(output_type(0)))));
  }
};

// StatelessRandomGetKeyCounter(Alg): a seed pair scrambled by one Philox
// block under a fixed key into the key and counter the V2 ops take.
class GetKeyCounterOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& seed = ctx->input(0);
    OP_REQUIRES(ctx, seed.dims() == 1 && seed.NumElements() == 2,
                absl::InvalidArgumentError(
                    absl::StrCat("seed must have shape [2], not ", seed.shape().DebugString())));
    uint64_t s0, s1;  // int32 seeds are sign-extended, as TensorFlow does
    if (seed.dtype() == DT_INT32) {
      s0 = static_cast<uint64_t>(static_cast<int64_t>(seed.flat<int32_t>()[0]));
      s1 = static_cast<uint64_t>(static_cast<int64_t>(seed.flat<int32_t>()[1]));
    } else {
      s0 = static_cast<uint64_t>(seed.flat<int64_t>()[0]);
      s1 = static_cast<uint64_t>(seed.flat<int64_t>()[1]);
    }
    Philox4x32 scramble({static_cast<uint32_t>(s0), static_cast<uint32_t>(s0 >> 32),
                         static_cast<uint32_t>(s1), static_cast<uint32_t>(s1 >> 32)},
                        {0x3ec8f720u, 0x02461e29u});
    const Philox4x32::Result mix = scramble();
    Tensor* key = nullptr;
    Tensor* counter = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({1}), &key));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(1, TensorShape({2}), &counter));
    key->flat<uint64_t>()[0] = mix[0] | (static_cast<uint64_t>(mix[1]) << 32);
    counter->flat<uint64_t>()[0] = 0;
    counter->flat<uint64_t>()[1] = mix[2] | (static_cast<uint64_t>(mix[3]) << 32);
    if (num_outputs() > 2) {
      Tensor* alg = nullptr;
      OP_REQUIRES_OK(ctx, ctx->allocate_output(2, TensorShape(), &alg));
      alg->flat<int32_t>()[0] = kAlgPhilox;
    }
  }
};

class GetAlgOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    Tensor* alg = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape(), &alg));
    alg->flat<int32_t>()[0] = kAlgPhilox;
  }
};

const std::vector<DataType> kRealTypes = {DT_HALF, DT_BFLOAT16, DT_FLOAT, DT_DOUBLE};

REGISTER_KERNEL(
    KernelDefBuilder("RandomUniform").Device(kDeviceCpu).TypeConstraint("dtype", kRealTypes),
    StatefulRandomOp<random::UniformReal>);
REGISTER_KERNEL(
    KernelDefBuilder("RandomStandardNormal").Device(kDeviceCpu).TypeConstraint("dtype", kRealTypes),
    StatefulRandomOp<random::Normal>);
REGISTER_KERNEL(
    KernelDefBuilder("TruncatedNormal").Device(kDeviceCpu).TypeConstraint("dtype", kRealTypes),
    StatefulRandomOp<random::TruncatedNormal>);
REGISTER_KERNEL(KernelDefBuilder("RandomUniformInt")
                    .Device(kDeviceCpu)
                    .TypeConstraint("Tout", {DT_INT32, DT_INT64}),
                RandomUniformIntOp);
REGISTER_KERNEL(KernelDefBuilder("StatelessRandomUniformV2")
                    .Device(kDeviceCpu)
                    .TypeConstraint("dtype", kRealTypes),
                StatelessRandomV2Op<random::UniformReal>);
REGISTER_KERNEL(KernelDefBuilder("StatelessRandomNormalV2")
                    .Device(kDeviceCpu)
                    .TypeConstraint("dtype", kRealTypes),
                StatelessRandomV2Op<random::Normal>);
REGISTER_KERNEL(KernelDefBuilder("StatelessTruncatedNormalV2")
                    .Device(kDeviceCpu)
                    .TypeConstraint("dtype", kRealTypes),
                StatelessRandomV2Op<random::TruncatedNormal>);
REGISTER_KERNEL(KernelDefBuilder("StatelessRandomGetKeyCounter").Device(kDeviceCpu),
                GetKeyCounterOp);
REGISTER_KERNEL(KernelDefBuilder("StatelessRandomGetKeyCounterAlg").Device(kDeviceCpu),
                GetKeyCounterOp);
REGISTER_KERNEL(KernelDefBuilder("StatelessRandomGetAlg").Device(kDeviceCpu), GetAlgOp);

}  // namespace
}  // namespace graphrun
