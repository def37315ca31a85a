// Tests of the element-wise CPU kernels, part 2: unary ops, AddN, Select,
// SelectV2 and Cast. Broadcasting and binary ops are in cwise_ops_test.cc.
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/testing/kernel_test_util.h"

namespace graphrun {
namespace {

using testing::AllClose;
using testing::AttrB;
using testing::AttrType;
using testing::ExpectError;
using testing::ExpectValues;
using testing::ForEachArithmeticType;
using testing::ForEachRealNumberType;
using testing::MakeTensor;
using testing::RandomQuarters;
using testing::RunOk;
using testing::RunOp;

Tensor Bools(const std::vector<int>& v, const TensorShape& shape) {
  std::vector<bool> b(v.begin(), v.end());
  Tensor t(DT_BOOL, shape);
  for (size_t i = 0; i < b.size(); ++i) t.flat<bool>()[i] = b[i];
  return t;
}
Tensor Bools(const std::vector<int>& v) {
  return Bools(v, TensorShape({static_cast<int64_t>(v.size())}));
}

// c ? t : e, NumPy-broadcast over all three, one element at a time.
template <typename T>
Tensor RefSelectV2(const Tensor& c, const Tensor& t, const Tensor& e) {
  const Tensor* in[] = {&c, &t, &e};
  int rank = 0;
  for (const Tensor* x : in) rank = std::max(rank, x->dims());
  std::vector<std::vector<int64_t>> d(3, std::vector<int64_t>(rank, 1));
  std::vector<int64_t> od(rank, 1);
  for (int k = 0; k < 3; ++k) {
    for (int i = 0; i < in[k]->dims(); ++i) {
      d[k][rank - in[k]->dims() + i] = in[k]->dim_size(i);
    }
    for (int i = 0; i < rank; ++i) if (d[k][i] != 1) od[i] = d[k][i];
  }
  Tensor out(DataTypeToEnum<T>::value, *TensorShape::FromDims(od));
  for (int64_t i = 0; i < out.NumElements(); ++i) {
    int64_t idx[3] = {0, 0, 0}, stride[3] = {1, 1, 1}, rem = i;
    for (int j = rank - 1; j >= 0; --j) {
      const int64_t coord = rem % od[j];
      rem /= od[j];
      for (int k = 0; k < 3; ++k) {
        idx[k] += (d[k][j] == 1 ? 0 : coord) * stride[k];
        stride[k] *= d[k][j];
      }
    }
    out.flat<T>()[i] = c.flat<bool>()[idx[0]] ? t.flat<T>()[idx[1]] : e.flat<T>()[idx[2]];
  }
  return out;
}

// --- Unary ops ---

template <typename T>
void CheckUnaryFloat(double rtol) {
  // 37 values: long enough for the vectorized loops and their tails.
  std::vector<double> v, pos;
  for (int i = 0; i < 37; ++i) {
    v.push_back(-4.5 + 0.25 * i);
    pos.push_back(0.125 * (i + 1) * (i % 3 + 1));
  }
  struct Case {
    const char* op;
    double (*f)(double);
    bool positive;
  } cases[] = {
      {"Neg", [](double x) { return -x; }, false},
      {"Abs", [](double x) { return std::abs(x); }, false},
      {"Square", [](double x) { return x * x; }, false},
      {"Exp", [](double x) { return std::exp(x); }, false},
      {"Tanh", [](double x) { return std::tanh(x); }, false},
      {"Sigmoid", [](double x) { return 1 / (1 + std::exp(-x)); }, false},
      {"Sqrt", [](double x) { return std::sqrt(x); }, true},
      {"Rsqrt", [](double x) { return 1 / std::sqrt(x); }, true},
      {"Log", [](double x) { return std::log(x); }, true},
  };
  for (const Case& c : cases) {
    const std::vector<double>& in = c.positive ? pos : v;
    std::vector<double> want;
    for (double x : in) want.push_back(c.f(static_cast<double>(static_cast<T>(x))));
    std::string why;
    EXPECT_TRUE(AllClose(RunOk(c.op, {MakeTensor<T>(in)}), MakeTensor<T>(want), rtol, 1e-6, &why))
        << c.op << " " << DataTypeString(DataTypeToEnum<T>::value) << ": " << why;
  }
}

TEST(UnaryOpTest, FloatingOpsMatchTheStandardLibrary) {
  CheckUnaryFloat<float>(2e-6);
  CheckUnaryFloat<double>(1e-12);
  CheckUnaryFloat<half>(2e-3);
  CheckUnaryFloat<bfloat16>(1e-2);
}

TEST(UnaryOpTest, SpecialValues) {
  ExpectValues<float>(RunOk("Sqrt", {MakeTensor<float>({-1, 0, INFINITY})}), {NAN, 0, INFINITY});
  ExpectValues<float>(RunOk("Log", {MakeTensor<float>({0, -1})}), {-INFINITY, NAN});
  ExpectValues<float>(RunOk("Rsqrt", {MakeTensor<float>({0})}), {INFINITY});
  // Eigen (and so TensorFlow) saturate these through clamped approximations.
  std::string why;
  EXPECT_TRUE(AllClose(RunOk("Sigmoid", {MakeTensor<float>({-1000, 1000})}), MakeTensor<float>({0, 1}),
                       1e-6, 1e-7, &why)) << why;
  EXPECT_TRUE(AllClose(RunOk("Tanh", {MakeTensor<float>({-1000, 1000})}), MakeTensor<float>({-1, 1}),
                       1e-6, 1e-7, &why)) << why;
}

TEST(UnaryOpTest, IntegerAndBoolOps) {
  auto check = [](auto zero) {
    using T = decltype(zero);
    const Tensor x = MakeTensor<T>({-3, 0, 5});
    ExpectValues<T>(RunOk("Neg", {x}), {3, 0, -5});
    ExpectValues<T>(RunOk("Abs", {x}), {3, 0, 5});
    ExpectValues<T>(RunOk("Square", {x}), {9, 0, 25});
  };
  check(int8_t{});
  check(int16_t{});
  check(int32_t{});
  check(int64_t{});
  ExpectValues<uint8_t>(RunOk("Square", {MakeTensor<uint8_t>({3, 16})}), {9, 0});
}

TEST(UnaryOpTest, EmptyScalarAndLarge) {
  Tensor e = RunOk("Exp", {Tensor(DT_FLOAT, TensorShape({3, 0}))});
  EXPECT_EQ(e.shape(), TensorShape({3, 0}));
  Tensor s = RunOk("Neg", {Tensor::Scalar<double>(2)});
  EXPECT_EQ(s.shape(), TensorShape({}));
  ExpectValues<double>(s, {-2});
  std::mt19937 rng(1);
  const Tensor x = RandomQuarters<float>(TensorShape({200, 300}), &rng, -5, 5);
  Tensor y = RunOk("Tanh", {x});
  ASSERT_EQ(y.shape(), x.shape());
  for (int64_t i = 0; i < x.NumElements(); i += 97) {
    EXPECT_NEAR(y.flat<float>()[i], std::tanh(x.flat<float>()[i]), 1e-6);
  }
}

// --- AddN ---

TEST(AddNTest, SumsEveryDtype) {
  auto check = [](auto zero) {
    using T = decltype(zero);
    const Tensor a = MakeTensor<T>({1, 2, 3, 4}, TensorShape({2, 2}));
    const Tensor b = MakeTensor<T>({10, 20, 30, 40}, TensorShape({2, 2}));
    ExpectValues<T>(RunOk("AddN", {a, b}), {11, 22, 33, 44});
    ExpectValues<T>(RunOk("AddN", {a, b, a}), {12, 24, 36, 48});
    ExpectValues<T>(RunOk("AddN", {a, a, a, a, b}), {14, 28, 42, 56});
  };
  ForEachArithmeticType(check);
}

TEST(AddNTest, OneInputPassesThroughAndShapesMustMatch) {
  const Tensor a = MakeTensor<float>({1, 2});
  Tensor one = RunOk("AddN", {a});
  EXPECT_TRUE(one.SharesBufferWith(a));
  auto bad = RunOp("AddN", {}, {a, a, MakeTensor<float>({1, 2, 3})});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "Inputs to operation test_node of type AddN must have the same size "
            "and shape.  Input 0: [2] != input 2: [3]");
  Tensor empty = RunOk("AddN", {Tensor(DT_INT32, TensorShape({0})), Tensor(DT_INT32, TensorShape({0}))});
  EXPECT_EQ(empty.shape(), TensorShape({0}));
  std::mt19937 rng(5);
  std::vector<Tensor> many;
  for (int i = 0; i < 7; ++i) many.push_back(RandomQuarters<double>(TensorShape({40000}), &rng, -9, 9));
  Tensor sum = RunOk("AddN", many);
  for (int64_t j = 0; j < 40000; j += 101) {
    double want = 0;
    for (const Tensor& t : many) want += t.flat<double>()[j];
    EXPECT_DOUBLE_EQ(sum.flat<double>()[j], want);
  }
}

// --- Select ---

TEST(SelectTest, ScalarConditionPicksAWholeInput) {
  const Tensor t = MakeTensor<float>({1, 2, 3}), e = MakeTensor<float>({4, 5, 6});
  Tensor yes = RunOk("Select", {Tensor::Scalar<bool>(true), t, e});
  EXPECT_TRUE(yes.SharesBufferWith(t));
  ExpectValues<float>(RunOk("Select", {Tensor::Scalar<bool>(false), t, e}), {4, 5, 6});
  ExpectError(RunOp("Select", {}, {Tensor::Scalar<bool>(true), t, MakeTensor<float>({1})}),
              absl::StatusCode::kInvalidArgument,
              "'then' and 'else' must have the same size.  but received: [3] vs. [1]");
}

TEST(SelectTest, VectorConditionPicksRows) {
  const Tensor t = MakeTensor<int32_t>({1, 2, 3, 4, 5, 6}, TensorShape({3, 2}));
  const Tensor e = MakeTensor<int32_t>({-1, -2, -3, -4, -5, -6}, TensorShape({3, 2}));
  Tensor out = RunOk("Select", {Bools({1, 0, 1}), t, e});
  EXPECT_EQ(out.shape(), TensorShape({3, 2}));
  ExpectValues<int32_t>(out, {1, 2, -3, -4, 5, 6});
  ExpectError(RunOp("Select", {}, {Bools({1, 0}), t, e}), absl::StatusCode::kInvalidArgument,
              "Number of batches of 'then' must match size of 'cond', but saw: 3 vs. 2");
  ExpectError(RunOp("Select", {}, {Bools({1}), Tensor::Scalar<int32_t>(1),
                                   Tensor::Scalar<int32_t>(2)}),
              absl::StatusCode::kInvalidArgument,
              "'then' must be at least a vector, but saw shape: []");
  ExpectError(RunOp("Select", {}, {Bools({1, 0, 1}), t, MakeTensor<int32_t>({1, 2, 3}, TensorShape({3, 1}))}),
              absl::StatusCode::kInvalidArgument, "'then' and 'else' must have the same size");
  // Rows of a rank-3 input, and enough of them to use the pool.
  std::vector<int> rows(1000);
  for (int i = 0; i < 1000; ++i) rows[i] = i % 3 == 0;
  Tensor big_t(DT_FLOAT, TensorShape({1000, 10, 5})), big_e(DT_FLOAT, TensorShape({1000, 10, 5}));
  for (int64_t i = 0; i < big_t.NumElements(); ++i) {
    big_t.flat<float>()[i] = i;
    big_e.flat<float>()[i] = -i;
  }
  Tensor big = RunOk("Select", {Bools(rows), big_t, big_e});
  for (int64_t i = 0; i < big.NumElements(); i += 7) {
    const bool c = (i / 50) % 3 == 0;
    ASSERT_EQ(big.flat<float>()[i], c ? i : -i) << i;
  }
}

TEST(SelectTest, ElementwiseConditionNeedsTheSameShape) {
  const Tensor c = Bools({1, 0, 0, 1}, TensorShape({2, 2}));
  const Tensor t = MakeTensor<double>({1, 2, 3, 4}, TensorShape({2, 2}));
  const Tensor e = MakeTensor<double>({5, 6, 7, 8}, TensorShape({2, 2}));
  ExpectValues<double>(RunOk("Select", {c, t, e}), {1, 6, 7, 4});
  // A vector condition with vector inputs is elementwise too.
  ExpectValues<double>(RunOk("Select", {Bools({0, 1}), MakeTensor<double>({1, 2}), MakeTensor<double>({3, 4})}),
                       {3, 2});
  ExpectError(RunOp("Select", {}, {c, MakeTensor<double>({1, 2, 3, 4, 5, 6}, TensorShape({2, 3})),
                                   MakeTensor<double>({1, 2, 3, 4, 5, 6}, TensorShape({2, 3}))}),
              absl::StatusCode::kInvalidArgument,
              "Inputs to operation test_node of type Select must have the same size and "
              "shape.  Input 0: [2,2] != input 1: [2,3]");
  Tensor empty = RunOk("Select", {Bools({}, TensorShape({0, 2})), Tensor(DT_FLOAT, TensorShape({0, 2})),
                                  Tensor(DT_FLOAT, TensorShape({0, 2}))});
  EXPECT_EQ(empty.shape(), TensorShape({0, 2}));
}

TEST(SelectTest, EveryDtype) {
  const Tensor c = Bools({1, 0, 1});
  auto check = [&](auto zero) {
    using T = decltype(zero);
    ExpectValues<T>(RunOk("Select", {c, MakeTensor<T>({1, 2, 3}), MakeTensor<T>({7, 8, 9})}), {1, 8, 3});
    ExpectValues<T>(RunOk("SelectV2", {c, MakeTensor<T>({1, 2, 3}), MakeTensor<T>({9})}), {1, 9, 3});
  };
  ForEachRealNumberType(check);
  ExpectValues<bool>(RunOk("Select", {c, Bools({0, 0, 0}), Bools({1, 1, 1})}), {0, 1, 0});
  ExpectValues<bool>(RunOk("SelectV2", {c, Bools({0, 0, 0}), Tensor::Scalar<bool>(true)}),
                     {0, 1, 0});
  const Tensor s = Tensor::FromVector<std::string>({"a", "bb", "ccc"});
  const Tensor s2 = Tensor::FromVector<std::string>({"x", "y", "z"});
  Tensor so = RunOk("Select", {c, s, s2});
  EXPECT_EQ(so.flat<std::string>()[0], "a");
  EXPECT_EQ(so.flat<std::string>()[1], "y");
  EXPECT_EQ(so.flat<std::string>()[2], "ccc");
  const Tensor z = Tensor::FromVector<complex128>({{1, 2}, {3, 4}, {5, 6}});
  const Tensor z2 = Tensor::FromVector<complex128>({{0, -1}, {0, -2}, {0, -3}});
  Tensor zo = RunOk("SelectV2", {c, z, z2});
  EXPECT_EQ(zo.flat<complex128>()[1], complex128(0, -2));
  EXPECT_EQ(zo.flat<complex128>()[2], complex128(5, 6));
  const Tensor w = Tensor::FromVector<complex64>({{1, 2}, {3, 4}, {5, 6}});
  Tensor wo = RunOk("Select", {c, w, Tensor::FromVector<complex64>({{0, 0}, {9, 9}, {0, 0}})});
  EXPECT_EQ(wo.flat<complex64>()[1], complex64(9, 9));
}

// --- SelectV2 ---

TEST(SelectV2Test, RandomBroadcastsMatchNaiveReference) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> rank_dist(0, 8), size(1, 3), coin(0, 2);
  for (int iter = 0; iter < 150; ++iter) {
    const int rank = rank_dist(rng);
    std::vector<std::vector<int64_t>> dims(3);
    for (int i = 0; i < rank; ++i) {
      const int64_t d = size(rng);
      for (auto& v : dims) v.push_back(coin(rng) == 0 ? 1 : d);
    }
    for (auto& v : dims) {
      const int drop = std::uniform_int_distribution<int>(0, rank)(rng) / 3;
      v.erase(v.begin(), v.begin() + drop);
    }
    Tensor c(DT_BOOL, *TensorShape::FromDims(dims[0]));
    Tensor t(DT_INT64, *TensorShape::FromDims(dims[1]));
    Tensor e(DT_INT64, *TensorShape::FromDims(dims[2]));
    for (auto& v : c.flat<bool>()) v = coin(rng) == 0;
    for (int64_t i = 0; i < t.NumElements(); ++i) t.flat<int64_t>()[i] = i + 1;
    for (int64_t i = 0; i < e.NumElements(); ++i) e.flat<int64_t>()[i] = -i - 1;
    SCOPED_TRACE(c.shape().DebugString() + " " + t.shape().DebugString() + " " +
                 e.shape().DebugString());
    Tensor got = RunOk("SelectV2", {c, t, e});
    Tensor want = RefSelectV2<int64_t>(c, t, e);
    ASSERT_EQ(got.shape(), want.shape());
    for (int64_t i = 0; i < want.NumElements(); ++i) {
      ASSERT_EQ(got.flat<int64_t>()[i], want.flat<int64_t>()[i]) << i;
    }
  }
}

TEST(SelectV2Test, LargeBroadcastsOfStringsAndFloats) {
  // > 32K elements: runs on the pool.
  Tensor c(DT_BOOL, TensorShape({300, 1}));
  for (int i = 0; i < 300; ++i) c.flat<bool>()[i] = i % 2;
  Tensor t(DT_STRING, TensorShape({1, 120}));
  for (int i = 0; i < 120; ++i) t.flat<std::string>()[i] = std::string(40, 'a' + i % 26);
  const Tensor e = Tensor::Scalar<std::string>("else");
  Tensor out = RunOk("SelectV2", {c, t, e});
  ASSERT_EQ(out.shape(), TensorShape({300, 120}));
  Tensor want = RefSelectV2<std::string>(c, t, e);
  for (int64_t i = 0; i < want.NumElements(); ++i) {
    ASSERT_EQ(out.flat<std::string>()[i], want.flat<std::string>()[i]) << i;
  }
  Tensor f(DT_FLOAT, TensorShape({300, 120}));
  for (int64_t i = 0; i < f.NumElements(); ++i) f.flat<float>()[i] = i * 0.5f;
  Tensor fo = RunOk("SelectV2", {c, f, Tensor::Scalar<float>(-1)});
  Tensor fw = RefSelectV2<float>(c, f, Tensor::Scalar<float>(-1));
  for (int64_t i = 0; i < fw.NumElements(); ++i) {
    ASSERT_EQ(fo.flat<float>()[i], fw.flat<float>()[i]) << i;
  }
}

TEST(SelectV2Test, ErrorsEmptyAndScalars) {
  ExpectError(RunOp("SelectV2", {}, {Bools({1, 0}), MakeTensor<float>({1, 2, 3}), MakeTensor<float>({1})}),
              absl::StatusCode::kInvalidArgument,
              "condition [2], then [3], and else [1] must be broadcastable");
  Tensor s = RunOk("SelectV2", {Tensor::Scalar<bool>(false), Tensor::Scalar<int32_t>(1),
                                Tensor::Scalar<int32_t>(2)});
  EXPECT_EQ(s.shape(), TensorShape({}));
  ExpectValues<int32_t>(s, {2});
  Tensor empty = RunOk("SelectV2", {Bools({}, TensorShape({0, 1})), MakeTensor<float>({1, 2}),
                                    Tensor::Scalar<float>(0)});
  EXPECT_EQ(empty.shape(), TensorShape({0, 2}));
  const TensorShape a({2, 1, 2, 1, 2, 1, 2, 1, 2}), b({1, 2, 1, 2, 1, 2, 1, 2, 1});
  ExpectError(RunOp("SelectV2", {}, {Tensor(DT_BOOL, a), Tensor(DT_FLOAT, b), Tensor(DT_FLOAT, a)}),
              absl::StatusCode::kUnimplemented, "is not supported yet");
}

// --- Cast ---

template <typename F>
void ForEachCastType(F f) {
  ForEachRealNumberType(f);
  f(bool{});
}

std::map<std::string, AttrValue> To(DataType dst, bool truncate = false) {
  return {{"DstT", AttrType(dst)}, {"Truncate", AttrB(truncate)}};
}

TEST(CastTest, EveryPairConvertsSmallValues) {
  int pairs = 0;
  ForEachCastType([&](auto from) {
    ForEachCastType([&](auto to) {
      using From = decltype(from);
      using Dst = decltype(to);
      const std::vector<double> v = std::is_same_v<From, bool>
                                        ? std::vector<double>{0, 1, 1, 0}
                                        : std::vector<double>{0, 1, 2, 100};
      std::vector<double> want;
      for (double x : v) want.push_back(std::is_same_v<Dst, bool> ? (x != 0) : x);
      SCOPED_TRACE(DataTypeString(DataTypeToEnum<From>::value) + " -> " +
                   DataTypeString(DataTypeToEnum<Dst>::value));
      ExpectValues<Dst>(RunOk("Cast", {MakeTensor<From>(v, TensorShape({2, 2}))},
                              To(DataTypeToEnum<Dst>::value)),
                        want);
      ++pairs;
    });
  });
  EXPECT_EQ(pairs, 169);
}

TEST(CastTest, FloatingToIntegerTruncatesTowardZero) {
  const Tensor x = MakeTensor<float>({-2.7, 2.7, -0.5, 127.9});
  ExpectValues<int8_t>(RunOk("Cast", {x}, To(DT_INT8)), {-2, 2, 0, 127});
  ExpectValues<int32_t>(RunOk("Cast", {x}, To(DT_INT32)), {-2, 2, 0, 127});
  ExpectValues<int64_t>(RunOk("Cast", {MakeTensor<double>({-1e12 - 0.5, 3.99})}, To(DT_INT64)),
                        {-1e12, 3});
  ExpectValues<uint8_t>(RunOk("Cast", {MakeTensor<half>({2.75, 255})}, To(DT_UINT8)), {2, 255});
  ExpectValues<int16_t>(RunOk("Cast", {MakeTensor<bfloat16>({-3.5, 96})}, To(DT_INT16)), {-3, 96});
}

TEST(CastTest, ToAndFromBool) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor x = Tensor::FromVector<float>({0.f, -0.f, 0.5f, nan, -INFINITY});
  ExpectValues<bool>(RunOk("Cast", {x}, To(DT_BOOL)), {0, 0, 1, 1, 1});
  ExpectValues<bool>(RunOk("Cast", {MakeTensor<half>({0, 0.001, -2})}, To(DT_BOOL)), {0, 1, 1});
  ExpectValues<bool>(RunOk("Cast", {MakeTensor<int64_t>({0, -1, 1LL << 40})}, To(DT_BOOL)), {0, 1, 1});
  ExpectValues<bfloat16>(RunOk("Cast", {Bools({1, 0})}, To(DT_BFLOAT16)), {1, 0});
}

TEST(CastTest, RoundsToNearestUnlessTruncateIsSet) {
  const double f32_ulp = std::ldexp(1.0, -23), f16_ulp = std::ldexp(1.0, -10),
               bf16_ulp = std::ldexp(1.0, -7);
  const Tensor d = MakeTensor<double>({1 + 0.75 * f32_ulp, -(1 + 0.75 * f32_ulp), NAN});
  ExpectValues<float>(RunOk("Cast", {d}, To(DT_FLOAT)), {1 + f32_ulp, -(1 + f32_ulp), NAN});
  ExpectValues<float>(RunOk("Cast", {d}, To(DT_FLOAT, true)), {1, -1, NAN});
  const Tensor h = MakeTensor<float>({1 + 0.75 * f16_ulp, 3});
  ExpectValues<half>(RunOk("Cast", {h}, To(DT_HALF)), {1 + f16_ulp, 3});
  ExpectValues<half>(RunOk("Cast", {h}, To(DT_HALF, true)), {1, 3});
  ExpectValues<half>(RunOk("Cast", {MakeTensor<double>({1 + 0.75 * f16_ulp})}, To(DT_HALF, true)), {1});
  const Tensor b = MakeTensor<float>({1 + 0.75 * bf16_ulp, -(1 + 0.75 * bf16_ulp)});
  ExpectValues<bfloat16>(RunOk("Cast", {b}, To(DT_BFLOAT16)), {1 + bf16_ulp, -(1 + bf16_ulp)});
  ExpectValues<bfloat16>(RunOk("Cast", {b}, To(DT_BFLOAT16, true)), {1, -1});
  // Truncate leaves other pairs alone.
  ExpectValues<float>(RunOk("Cast", {MakeTensor<int32_t>({16777217})}, To(DT_FLOAT, true)), {16777216});
}

TEST(CastTest, SameTypePassesThroughAndUnsupportedPairsFail) {
  const Tensor x = MakeTensor<float>({1, 2});
  EXPECT_TRUE(RunOk("Cast", {x}, To(DT_FLOAT)).SharesBufferWith(x));
  const Tensor s = Tensor::FromVector<std::string>({"a"});
  EXPECT_EQ(RunOk("Cast", {s}, To(DT_STRING)).flat<std::string>()[0], "a");
  ExpectError(RunOp("Cast", To(DT_FLOAT), {s}), absl::StatusCode::kUnimplemented,
              "Cast string to float is not supported");
  ExpectError(RunOp("Cast", To(DT_INT32), {Tensor::FromVector<complex64>({{1, 0}})}),
              absl::StatusCode::kUnimplemented, "Cast complex64 to int32 is not supported");
}

TEST(CastTest, EmptyAndLarge) {
  Tensor e = RunOk("Cast", {Tensor(DT_INT32, TensorShape({0, 2}))}, To(DT_DOUBLE));
  EXPECT_EQ(e.shape(), TensorShape({0, 2}));
  EXPECT_EQ(e.dtype(), DT_DOUBLE);
  Tensor big(DT_INT32, TensorShape({200, 250}));
  for (int64_t i = 0; i < big.NumElements(); ++i) big.flat<int32_t>()[i] = i - 25000;
  Tensor out = RunOk("Cast", {big}, To(DT_HALF));
  ASSERT_EQ(out.shape(), big.shape());
  for (int64_t i = 0; i < big.NumElements(); i += 13) {
    ASSERT_EQ(static_cast<float>(out.flat<half>()[i]),
              static_cast<float>(half(static_cast<float>(i - 25000))))
        << i;
  }
}

}  // namespace
}  // namespace graphrun
