// CPU kernels of the hash-bucket ops (graph/ops/string_more_ops.cc): each
// string's 64-bit hash modulo num_buckets, as an int64, with TensorFlow's
// hashes bit for bit (core/kernels/string_to_hash_bucket_op.cc):
//   StringToHashBucketFast    FarmHash Fingerprint64 (libfarmhash).
//   StringToHashBucketStrong  SipHash-2-4 keyed by the two int64s of `key`
//                             (k0 = key[0], k1 = key[1]).
//   StringToHashBucket        TensorFlow's Hash64 (graph/hash.h).
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "farmhash.h"
#include "graph/hash.h"
#include "graph/tensor.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace {

// Little-endian 64-bit load.
uint64_t Load64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

uint64_t Rotl(uint64_t v, int bits) { return (v << bits) | (v >> (64 - bits)); }

// SipHash-2-4 of `s` under the key (k0, k1): 8-byte little-endian blocks,
// the last one holding the tail bytes and the length's low byte at the top.
uint64_t SipHash24(uint64_t k0, uint64_t k1, absl::string_view s) {
  uint64_t v0 = 0x736f6d6570736575ULL ^ k0;
  uint64_t v1 = 0x646f72616e646f6dULL ^ k1;
  uint64_t v2 = 0x6c7967656e657261ULL ^ k0;
  uint64_t v3 = 0x7465646279746573ULL ^ k1;
  auto rounds = [&](int n) {
    for (int r = 0; r < n; ++r) {
      v0 += v1;
      v2 += v3;
      v1 = Rotl(v1, 13) ^ v0;
      v3 = Rotl(v3, 16) ^ v2;
      v0 = Rotl(v0, 32);
      v2 += v1;
      v0 += v3;
      v1 = Rotl(v1, 17) ^ v2;
      v3 = Rotl(v3, 21) ^ v0;
      v2 = Rotl(v2, 32);
    }
  };
  auto absorb = [&](uint64_t m) {
    v3 ^= m;
    rounds(2);
    v0 ^= m;
  };
  const size_t n = s.size();
  const size_t whole = n - n % 8;
  for (size_t k = 0; k < whole; k += 8) absorb(Load64(s.data() + k));
  char last[8] = {0};
  std::memcpy(last, s.data() + whole, n - whole);
  last[7] = static_cast<char>(n & 0xff);
  absorb(Load64(last));
  v2 ^= 0xff;
  rounds(4);
  return v0 ^ v1 ^ v2 ^ v3;
}

// Applies `hash` to every string; the bucket is the hash modulo num_buckets.
template <typename Hash>
void HashToBuckets(OpKernelContext* ctx, int64_t num_buckets, const Hash& hash) {
  const Tensor& in = ctx->input(0);
  Tensor* out = nullptr;
  OP_REQUIRES_OK(ctx, ctx->allocate_output(0, in.shape(), &out));
  const auto s = in.flat<std::string>();
  auto o = out->flat<int64_t>();
  const uint64_t buckets = static_cast<uint64_t>(num_buckets);
  for (size_t k = 0; k < s.size(); ++k) {
    o[k] = static_cast<int64_t>(hash(s[k]) % buckets);
  }
}

class StringToHashBucketFastOp : public OpKernel {
 public:
  explicit StringToHashBucketFastOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("num_buckets", &num_buckets_));
  }
  void Compute(OpKernelContext* ctx) override {
    HashToBuckets(ctx, num_buckets_, [](const std::string& s) {
      return static_cast<uint64_t>(util::Fingerprint64(s.data(), s.size()));
    });
  }

 private:
  int64_t num_buckets_ = 1;
};

class StringToHashBucketStrongOp : public OpKernel {
 public:
  explicit StringToHashBucketStrongOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("num_buckets", &num_buckets_));
    std::vector<int64_t> key;
    OP_REQUIRES_OK(c, c->GetAttr("key", &key));
    OP_REQUIRES(c, key.size() == 2, absl::InvalidArgumentError("Key must have 2 elements"));
    k0_ = static_cast<uint64_t>(key[0]);
    k1_ = static_cast<uint64_t>(key[1]);
  }
  void Compute(OpKernelContext* ctx) override {
    const uint64_t k0 = k0_, k1 = k1_;
    HashToBuckets(ctx, num_buckets_,
                  [k0, k1](const std::string& s) { return SipHash24(k0, k1, s); });
  }

 private:
  int64_t num_buckets_ = 1;
  uint64_t k0_ = 0, k1_ = 0;
};

class StringToHashBucketOp : public OpKernel {
 public:
  explicit StringToHashBucketOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("num_buckets", &num_buckets_));
  }
  void Compute(OpKernelContext* ctx) override {
    HashToBuckets(ctx, num_buckets_, [](const std::string& s) { return Hash64(s); });
  }

 private:
  int64_t num_buckets_ = 1;
};

REGISTER_KERNEL(KernelDefBuilder("StringToHashBucketFast").Device(kDeviceCpu),
                StringToHashBucketFastOp);
REGISTER_KERNEL(KernelDefBuilder("StringToHashBucketStrong").Device(kDeviceCpu),
                StringToHashBucketStrongOp);
REGISTER_KERNEL(KernelDefBuilder("StringToHashBucket").Device(kDeviceCpu),
                StringToHashBucketOp);

}  // namespace
}  // namespace graphrun
