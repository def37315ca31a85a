// The random ops against TensorFlow's outputs (random_ops_test_data.h, made
// by make_random_ops_test_data.py): uniform floats and integers bit for bit,
// normals and truncated normals within one ulp (the C library's logf and
// sincosf; in practice exact with glibc); two runs of one kernel as two
// Session runs; the same bits on one thread or several; the seed attrs a
// graph-level seed gives; the stateless key/counter chain; the errors.
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cpu/philox.h"
#include "kernels/cpu/random_ops_test_data.h"
#include "kernels/testing/kernel_test_util.h"

namespace graphrun {
namespace {

using ::graphrun::testing::AttrI;
using ::graphrun::testing::AttrType;
using ::graphrun::testing::ExpectError;
using ::graphrun::testing::RunOp;
using ::graphrun::testing::RunOpSteps;
namespace data = ::graphrun::random_ops_test;

Tensor ShapeTensor(const std::vector<int64_t>& dims) {
  std::vector<int32_t> d(dims.begin(), dims.end());
  return Tensor::FromVector<int32_t>(d);
}

// The elements' bit patterns, widened to 64 bits.
std::vector<uint64_t> Bits(const Tensor& t) {
  std::vector<uint64_t> out;
  const int64_t n = t.NumElements();
  const size_t width = DataTypeSize(t.dtype());
  const auto* bytes = static_cast<const unsigned char*>(t.raw_data());
  for (int64_t i = 0; i < n; ++i) {
    uint64_t v = 0;
    for (size_t b = 0; b < width; ++b) v |= static_cast<uint64_t>(bytes[i * width + b]) << (8 * b);
    out.push_back(v);
  }
  return out;
}

// Distance in units in the last place between two floats of `width` bytes
// given as bit patterns (sign-magnitude mapped onto a line).
int64_t UlpDistance(uint64_t a, uint64_t b, size_t width) {
  const int bits = static_cast<int>(8 * width);
  const uint64_t sign = uint64_t{1} << (bits - 1);
  auto line = [&](uint64_t x) -> __int128 {
    const __int128 mag = static_cast<__int128>(x & (sign - 1));
    return (x & sign) ? -mag : mag;
  };
  const __int128 d = line(a) - line(b);
  return static_cast<int64_t>(d < 0 ? -d : d);
}

// Exact for uniform draws; within one ulp for the normal ones.
void ExpectBits(const Tensor& got, const std::vector<uint64_t>& want, bool exact) {
  const std::vector<uint64_t> bits = Bits(got);
  ASSERT_EQ(bits.size(), want.size());
  for (size_t i = 0; i < bits.size(); ++i) {
    if (exact) {
      EXPECT_EQ(bits[i], want[i]) << "element " << i;
    } else {
      EXPECT_LE(UlpDistance(bits[i], want[i], DataTypeSize(got.dtype())), 1)
          << "element " << i << ": " << std::hex << bits[i] << " vs " << want[i];
    }
  }
}

bool IsExact(const std::string& op) { return op.find("Uniform") != std::string::npos; }

uint64_t Fnv1a(const std::vector<uint64_t>& bits) {
  uint64_t h = 0xcbf29ce484222325u;
  for (uint64_t x : bits) h = (h ^ x) * 0x100000001b3u;
  return h;
}

TEST(Philox4x32Test, SkipCarriesIntoTheHighWords) {
  random::Philox4x32 a({0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu, 0}, {1, 2});
  a.Skip(1);
  EXPECT_EQ(a.counter(), (random::Philox4x32::Counter{0, 0, 0, 1}));
  random::Philox4x32 b({5, 0, 0, 0}, {1, 2});
  b.Skip(uint64_t{3} << 32 | 0xFFFFFFFFu);
  EXPECT_EQ(b.counter(), (random::Philox4x32::Counter{4, 4, 0, 0}));
}

TEST(RandomOpsTest, StatefulOpsMatchTensorFlowOverTwoRuns) {
  for (const data::StatefulCase& c : data::kStatefulCases) {
    const std::string op = c.op;
    SCOPED_TRACE(op + " " + DataTypeString(c.dtype) + " seed " + std::to_string(c.seed) + "," +
                 std::to_string(c.seed2));
    std::map<std::string, AttrValue> attrs = {{"seed", AttrI(c.seed)}, {"seed2", AttrI(c.seed2)}};
    std::vector<Tensor> inputs = {ShapeTensor(c.shape)};
    if (op == "RandomUniformInt") {
      if (c.dtype == DT_INT64) {
        inputs.push_back(Tensor::FromVector<int64_t>({c.minval}, TensorShape()));
        inputs.push_back(Tensor::FromVector<int64_t>({c.maxval}, TensorShape()));
      } else {
        inputs.push_back(
            Tensor::FromVector<int32_t>({static_cast<int32_t>(c.minval)}, TensorShape()));
        inputs.push_back(
            Tensor::FromVector<int32_t>({static_cast<int32_t>(c.maxval)}, TensorShape()));
      }
    } else {
      attrs["dtype"] = AttrType(c.dtype);
    }
    auto runs = RunOpSteps(op, attrs, {inputs, inputs});
    ASSERT_TRUE(runs.ok()) << runs.status();
    ASSERT_EQ(runs->size(), 2u);
    EXPECT_EQ((*runs)[0][0].shape(), testing::ShapeOf(c.shape));
    ExpectBits((*runs)[0][0], c.run1, IsExact(op));
    ExpectBits((*runs)[1][0], c.run2, IsExact(op));
  }
}

TEST(RandomOpsTest, LargeOutputsMatchTensorFlowOnAnyThreadCount) {
  for (const data::LargeCase& c : data::kLargeCases) {
    for (int threads : {1, 4}) {
      SCOPED_TRACE(std::string(c.op) + " " + DataTypeString(c.dtype) + " threads " +
                   std::to_string(threads));
      auto out = RunOp(
          c.op, {{"seed", AttrI(c.seed)}, {"seed2", AttrI(c.seed2)}, {"dtype", AttrType(c.dtype)}},
          {ShapeTensor(c.shape)}, threads);
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_EQ(Fnv1a(Bits((*out)[0])), c.hash);
    }
  }
}

TEST(RandomOpsTest, NormalsAreTheSameBitsOnAnyThreadCount) {
  for (const char* op : {"RandomStandardNormal", "TruncatedNormal"}) {
    for (DataType dtype : {DT_FLOAT, DT_DOUBLE, DT_HALF}) {
      SCOPED_TRACE(std::string(op) + " " + DataTypeString(dtype));
      std::vector<uint64_t> first;
      for (int threads : {1, 3, 8}) {
        auto out = RunOp(op, {{"seed", AttrI(5)}, {"seed2", AttrI(9)}, {"dtype", AttrType(dtype)}},
                         {ShapeTensor({517, 131})}, threads);
        ASSERT_TRUE(out.ok()) << out.status();
        if (first.empty()) {
          first = Bits((*out)[0]);
        } else {
          EXPECT_TRUE(Bits((*out)[0]) == first) << "threads " << threads;
        }
      }
    }
  }
}

TEST(RandomOpsTest, GraphSeedAttrsReproduceTheGraphsOutput) {
  for (const data::GraphSeedCase& c : data::kGraphSeedCases) {
    SCOPED_TRACE(c.op);
    auto out = RunOp(
        c.op, {{"seed", AttrI(c.seed)}, {"seed2", AttrI(c.seed2)}, {"dtype", AttrType(c.dtype)}},
        {ShapeTensor(c.shape)});
    ASSERT_TRUE(out.ok()) << out.status();
    ExpectBits((*out)[0], c.bits, IsExact(c.op));
  }
}

TEST(RandomOpsTest, UnseededKernelsDrawDifferentStreams) {
  std::set<std::vector<uint64_t>> seen;
  for (int i = 0; i < 3; ++i) {
    auto out = RunOp("RandomUniform", {{"dtype", AttrType(DT_FLOAT)}}, {ShapeTensor({16})});
    ASSERT_TRUE(out.ok()) << out.status();
    seen.insert(Bits((*out)[0]));
  }
  EXPECT_EQ(seen.size(), 3u);
}

TEST(RandomOpsTest, GetKeyCounterMatchesTensorFlow) {
  for (const data::KeyCounterCase& c : data::kKeyCounterCases) {
    SCOPED_TRACE(std::to_string(c.seed0) + "," + std::to_string(c.seed1));
    Tensor seed = c.tseed == DT_INT64
                      ? Tensor::FromVector<int64_t>({c.seed0, c.seed1})
                      : Tensor::FromVector<int32_t>(
                            {static_cast<int32_t>(c.seed0), static_cast<int32_t>(c.seed1)});
    for (const char* op : {"StatelessRandomGetKeyCounter", "StatelessRandomGetKeyCounterAlg"}) {
      auto out = RunOp(op, {}, {seed});
      ASSERT_TRUE(out.ok()) << out.status();
      ASSERT_EQ((*out)[0].NumElements(), 1);
      ASSERT_EQ((*out)[1].NumElements(), 2);
      EXPECT_EQ((*out)[0].flat<uint64_t>()[0], c.key);
      EXPECT_EQ((*out)[1].flat<uint64_t>()[0], c.counter0);
      EXPECT_EQ((*out)[1].flat<uint64_t>()[1], c.counter1);
    }
  }
}

TEST(RandomOpsTest, StatelessV2OpsMatchTensorFlow) {
  for (const data::StatelessCase& c : data::kStatelessCases) {
    SCOPED_TRACE(std::string(c.op) + " " + DataTypeString(c.dtype) + " alg " +
                 std::to_string(c.alg));
    const std::vector<Tensor> inputs = {ShapeTensor(c.shape), Tensor::FromVector<uint64_t>({c.key}),
                                        Tensor::FromVector<uint64_t>({c.counter0, c.counter1}),
                                        Tensor::FromVector<int32_t>({c.alg}, TensorShape())};
    // Stateless: the same bits on every run.
    auto runs = RunOpSteps(c.op, {{"dtype", AttrType(c.dtype)}}, {inputs, inputs});
    ASSERT_TRUE(runs.ok()) << runs.status();
    ExpectBits((*runs)[0][0], c.bits, IsExact(c.op));
    ExpectBits((*runs)[1][0], c.bits, IsExact(c.op));
  }
}

TEST(RandomOpsTest, KerasInitializerChainMatchesTensorFlow) {
  for (const data::KerasCase& c : data::kKerasCases) {
    SCOPED_TRACE(c.op);
    auto key_counter = RunOp("StatelessRandomGetKeyCounter", {},
                             {Tensor::FromVector<int32_t>({c.seed0, c.seed1})});
    ASSERT_TRUE(key_counter.ok()) << key_counter.status();
    auto out = RunOp(c.op, {{"dtype", AttrType(c.dtype)}},
                     {ShapeTensor(c.shape), (*key_counter)[0], (*key_counter)[1],
                      Tensor::FromVector<int32_t>({c.alg}, TensorShape())});
    ASSERT_TRUE(out.ok()) << out.status();
    ExpectBits((*out)[0], c.bits, IsExact(c.op));
  }
}

TEST(RandomOpsTest, ShapeFunctions) {
  using ::graphrun::testing::ShapeRun;
  const Tensor dims = ShapeTensor({2, 3});
  EXPECT_EQ(ShapeRun("RandomUniform").In(dims).Attr("dtype", AttrType(DT_FLOAT)).Str(), "[2,3]");
  EXPECT_EQ(
      ShapeRun("TruncatedNormal").In(PartialShape({3})).Attr("dtype", AttrType(DT_HALF)).Str(),
      "[?,?,?]");
  const Tensor scalar = Tensor::FromVector<int32_t>({1}, TensorShape());
  EXPECT_EQ(ShapeRun("RandomUniformInt").In(dims).In(scalar).In(scalar).Str(), "[2,3]");
  EXPECT_NE(ShapeRun("RandomUniformInt").In(dims).In(PartialShape({2})).In(scalar).Error(), "");
  EXPECT_EQ(ShapeRun("StatelessRandomNormalV2")
                .In(dims)
                .In(PartialShape({1}))
                .In(PartialShape({2}))
                .In(PartialShape::Scalar())
                .Str(),
            "[2,3]");
  EXPECT_EQ(ShapeRun("StatelessRandomGetKeyCounter").In(PartialShape({2})).Str(), "[1];[2]");
  EXPECT_EQ(ShapeRun("StatelessRandomGetKeyCounterAlg").In(PartialShape({-1})).Str(), "[1];[2];[]");
  EXPECT_NE(ShapeRun("StatelessRandomGetKeyCounter").In(PartialShape({3})).Error(), "");
}

TEST(RandomOpsTest, ErrorsNameTheProblem) {
  const Tensor shape = ShapeTensor({3});
  ExpectError(RunOp("RandomUniformInt", {},
                    {shape, Tensor::FromVector<int32_t>({4}, TensorShape()),
                     Tensor::FromVector<int32_t>({4}, TensorShape())}),
              absl::StatusCode::kInvalidArgument, "Need minval < maxval: 4 >= 4");
  ExpectError(RunOp("RandomUniformInt", {},
                    {shape, Tensor::FromVector<int32_t>({1, 2}),
                     Tensor::FromVector<int32_t>({4}, TensorShape())}),
              absl::StatusCode::kInvalidArgument, "minval must be 0-D");
  // An empty output neither checks the bounds nor fails.
  auto empty = RunOp("RandomUniformInt", {},
                     {ShapeTensor({0}), Tensor::FromVector<int32_t>({4}, TensorShape()),
                      Tensor::FromVector<int32_t>({4}, TensorShape())});
  EXPECT_TRUE(empty.ok()) << empty.status();
  const std::vector<Tensor> three_fry = {shape, Tensor::FromVector<uint64_t>({1}),
                                         Tensor::FromVector<uint64_t>({0, 0}),
                                         Tensor::FromVector<int32_t>({2}, TensorShape())};
  ExpectError(RunOp("StatelessRandomUniformV2", {{"dtype", AttrType(DT_FLOAT)}}, three_fry),
              absl::StatusCode::kInvalidArgument, "Unsupported algorithm id: 2");
  const std::vector<Tensor> bad_key = {shape, Tensor::FromVector<uint64_t>({1, 2}),
                                       Tensor::FromVector<uint64_t>({0, 0}),
                                       Tensor::FromVector<int32_t>({1}, TensorShape())};
  ExpectError(RunOp("StatelessRandomNormalV2", {{"dtype", AttrType(DT_FLOAT)}}, bad_key),
              absl::StatusCode::kInvalidArgument, "key must have shape [1]");
  ExpectError(RunOp("StatelessRandomGetKeyCounter", {}, {Tensor::FromVector<int64_t>({1, 2, 3})}),
              absl::StatusCode::kInvalidArgument, "seed must have shape [2]");
}

}  // namespace
}  // namespace graphrun
