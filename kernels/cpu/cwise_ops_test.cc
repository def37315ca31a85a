// Tests of the element-wise CPU kernels, part 1: broadcasting plans, the
// binary ops on every registered dtype against naive references, and the
// reuse of input buffers. Unary ops, AddN, Select, SelectV2 and Cast are in
// cwise_unary_select_cast_test.cc.
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "graph/graph.h"
#include "graph/status_macros.h"
#include "kernels/cpu/cwise_common.h"
#include "kernels/kernel_registry.h"
#include "kernels/testing/kernel_test_util.h"

namespace graphrun {
namespace {

using testing::AllClose;
using testing::AttrB;
using testing::AttrI;
using testing::AttrType;
using testing::ExpectValues;
using testing::ForEachArithmeticType;
using testing::ForEachRealNumberType;
using testing::MakeTensor;
using testing::MakeTestCpuDevice;
using testing::RandomQuarters;
using testing::RunOk;
using testing::RunOp;

// NumPy broadcasting, one element at a time: out[i] = f(x[.], y[.]).
template <typename Tin, typename Tout, typename F>
Tensor RefBinary(const Tensor& x, const Tensor& y, F f) {
  const int rank = std::max(x.dims(), y.dims());
  std::vector<int64_t> xd(rank, 1), yd(rank, 1), od(rank);
  for (int i = 0; i < x.dims(); ++i) xd[rank - x.dims() + i] = x.dim_size(i);
  for (int i = 0; i < y.dims(); ++i) yd[rank - y.dims() + i] = y.dim_size(i);
  for (int i = 0; i < rank; ++i) od[i] = xd[i] == 1 ? yd[i] : xd[i];
  Tensor out(DataTypeToEnum<Tout>::value, *TensorShape::FromDims(od));
  for (int64_t i = 0; i < out.NumElements(); ++i) {
    int64_t rem = i, xi = 0, yi = 0, xs = 1, ys = 1;
    for (int d = rank - 1; d >= 0; --d) {
      const int64_t c = rem % od[d];
      rem /= od[d];
      xi += (xd[d] == 1 ? 0 : c) * xs;
      yi += (yd[d] == 1 ? 0 : c) * ys;
      xs *= xd[d];
      ys *= yd[d];
    }
    out.flat<Tout>()[i] = f(x.flat<Tin>()[xi], y.flat<Tin>()[yi]);
  }
  return out;
}

// Two shapes of rank <= max_rank that broadcast together.
std::pair<TensorShape, TensorShape> RandomBroadcastShapes(std::mt19937* rng,
                                                          int max_rank) {
  std::uniform_int_distribution<int> rank_dist(0, max_rank), size(1, 3), coin(0, 2);
  const int rank = rank_dist(*rng);
  std::vector<int64_t> x, y;
  for (int i = 0; i < rank; ++i) {
    const int64_t d = size(*rng);
    x.push_back(coin(*rng) == 0 ? 1 : d);
    y.push_back(coin(*rng) == 0 ? 1 : d);
  }
  // Drop some leading dims of one side (rank difference).
  const int drop = std::uniform_int_distribution<int>(0, rank)(*rng) / 2;
  if (coin(*rng) == 0) {
    x.erase(x.begin(), x.begin() + drop);
  } else {
    y.erase(y.begin(), y.begin() + drop);
  }
  return {*TensorShape::FromDims(x), *TensorShape::FromDims(y)};
}

// --- BroadcastPlan ---

cwise::BroadcastPlan Plan(const TensorShape& a, const TensorShape& b) {
  const TensorShape* shapes[] = {&a, &b};
  return cwise::MakeBroadcastPlan(shapes);
}

TEST(BroadcastPlanTest, SameShapesCollapseToOneDimension) {
  auto p = Plan(TensorShape({2, 3, 4}), TensorShape({2, 3, 4}));
  ASSERT_TRUE(p.valid);
  EXPECT_EQ(std::vector<int64_t>(p.output_dims.begin(), p.output_dims.end()), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(std::vector<int64_t>(p.out_dims.begin(), p.out_dims.end()), (std::vector<int64_t>{24}));
  EXPECT_EQ(std::vector<int64_t>(p.in_bcast[1].begin(), p.in_bcast[1].end()), (std::vector<int64_t>{1}));
}

TEST(BroadcastPlanTest, MergesRunsOfTheSameBroadcastPattern) {
  auto p = Plan(TensorShape({2, 3, 4}), TensorShape({4}));
  ASSERT_TRUE(p.valid);
  EXPECT_EQ(std::vector<int64_t>(p.output_dims.begin(), p.output_dims.end()), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(std::vector<int64_t>(p.out_dims.begin(), p.out_dims.end()), (std::vector<int64_t>{6, 4}));
  EXPECT_EQ(std::vector<int64_t>(p.in_dims[0].begin(), p.in_dims[0].end()), (std::vector<int64_t>{6, 4}));
  EXPECT_EQ(std::vector<int64_t>(p.in_dims[1].begin(), p.in_dims[1].end()), (std::vector<int64_t>{1, 4}));
  EXPECT_EQ(std::vector<int64_t>(p.in_bcast[0].begin(), p.in_bcast[0].end()), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(std::vector<int64_t>(p.in_bcast[1].begin(), p.in_bcast[1].end()), (std::vector<int64_t>{6, 1}));

  auto q = Plan(TensorShape({5, 1, 3, 1}), TensorShape({1, 4, 1, 1}));
  ASSERT_TRUE(q.valid);
  EXPECT_EQ(std::vector<int64_t>(q.output_dims.begin(), q.output_dims.end()), (std::vector<int64_t>{5, 4, 3, 1}));
  EXPECT_EQ(std::vector<int64_t>(q.out_dims.begin(), q.out_dims.end()), (std::vector<int64_t>{5, 4, 3}));
  EXPECT_EQ(std::vector<int64_t>(q.in_bcast[0].begin(), q.in_bcast[0].end()), (std::vector<int64_t>{1, 4, 1}));
  EXPECT_EQ(std::vector<int64_t>(q.in_bcast[1].begin(), q.in_bcast[1].end()), (std::vector<int64_t>{5, 1, 3}));
}

TEST(BroadcastPlanTest, ScalarsOnesZerosAndInvalid) {
  auto s = Plan(TensorShape({}), TensorShape({1, 1}));
  ASSERT_TRUE(s.valid);
  EXPECT_EQ(std::vector<int64_t>(s.output_dims.begin(), s.output_dims.end()), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(std::vector<int64_t>(s.out_dims.begin(), s.out_dims.end()), (std::vector<int64_t>{1}));
  auto z = Plan(TensorShape({0, 3}), TensorShape({1, 3}));
  ASSERT_TRUE(z.valid);
  EXPECT_EQ(std::vector<int64_t>(z.output_dims.begin(), z.output_dims.end()), (std::vector<int64_t>{0, 3}));
  EXPECT_FALSE(Plan(TensorShape({2, 3}), TensorShape({4})).valid);
  EXPECT_FALSE(Plan(TensorShape({0}), TensorShape({2})).valid);
  const TensorShape a({2, 1}), b({1, 3}), c({3});
  const TensorShape* three[] = {&a, &b, &c};
  auto t = cwise::MakeBroadcastPlan(three);
  ASSERT_TRUE(t.valid);
  EXPECT_EQ(std::vector<int64_t>(t.output_dims.begin(), t.output_dims.end()), (std::vector<int64_t>{2, 3}));
}

// --- Binary ops ---

TEST(BinaryOpTest, ArithmeticOnEveryDtypeWithBroadcasting) {
  auto check = [](auto zero) {
    using T = decltype(zero);
    const Tensor x = MakeTensor<T>({3, 4, 5, 6, 7, 8}, TensorShape({2, 3}));
    const Tensor y = MakeTensor<T>({3, 2, 1});
    for (const char* add : {"Add", "AddV2"}) {
      ExpectValues<T>(RunOk(add, {x, y}), {6, 6, 6, 9, 9, 9});
    }
    ExpectValues<T>(RunOk("Sub", {x, y}), {0, 2, 4, 3, 5, 7});
    ExpectValues<T>(RunOk("Mul", {x, y}), {9, 8, 5, 18, 14, 8});
    ExpectValues<T>(RunOk("Maximum", {x, y}), {3, 4, 5, 6, 7, 8});
    ExpectValues<T>(RunOk("Minimum", {x, y}), {3, 2, 1, 3, 2, 1});
    ExpectValues<T>(RunOk("Div", {x, MakeTensor<T>({2})}),
                    std::is_integral_v<T> ? std::vector<double>{1, 2, 2, 3, 3, 4}
                                          : std::vector<double>{1.5, 2, 2.5, 3, 3.5, 4});
    ExpectValues<T>(RunOk("FloorDiv", {MakeTensor<T>({2}), y}), {0, 1, 2});
    const Tensor scalar = Tensor::Scalar<T>(T(2));
    ExpectValues<T>(RunOk("Mul", {scalar, x}), {6, 8, 10, 12, 14, 16});
    ExpectValues<T>(RunOk("Sub", {x, scalar}), {1, 2, 3, 4, 5, 6});
  };
  ForEachArithmeticType(check);
}

// Long enough for the vectorized loops and their tails.
TEST(BinaryOpTest, HalfAndBfloat16VectorsMatchAFloatReference) {
  auto check = [](auto zero, double rtol) {
    using T = decltype(zero);
    std::mt19937 rng(9);
    const Tensor x = RandomQuarters<T>(TensorShape({101}), &rng, -8, 8);
    const Tensor y = RandomQuarters<T>(TensorShape({101}), &rng, 0.5, 4);
    struct Case {
      const char* op;
      float (*f)(float, float);
    } cases[] = {
        {"AddV2", [](float a, float b) { return a + b; }},
        {"Sub", [](float a, float b) { return a - b; }},
        {"Mul", [](float a, float b) { return a * b; }},
        {"RealDiv", [](float a, float b) { return a / b; }},
        {"FloorDiv", [](float a, float b) { return std::floor(float(T(a / b))); }},
        {"Maximum", [](float a, float b) { return std::max(a, b); }},
        {"Minimum", [](float a, float b) { return std::min(a, b); }},
        {"Pow", [](float a, float b) { return std::pow(b, a); }},  // y^x
    };
    for (const Case& c : cases) {
      const bool swap = std::string(c.op) == "Pow";
      Tensor want = RefBinary<T, T>(x, y, [&](T a, T b) { return T(c.f(float(a), float(b))); });
      std::string why;
      EXPECT_TRUE(AllClose(RunOk(c.op, swap ? std::vector<Tensor>{y, x} : std::vector<Tensor>{x, y}),
                           want, rtol, 1e-3, &why))
          << c.op << " " << DataTypeString(DataTypeToEnum<T>::value) << ": " << why;
    }
  };
  check(half{}, 1e-3);
  check(bfloat16{}, 8e-3);
}

TEST(BinaryOpTest, RandomBroadcastsMatchNaiveReference) {
  std::mt19937 rng(7);
  for (int iter = 0; iter < 150; ++iter) {
    auto [xs, ys] = RandomBroadcastShapes(&rng, 8);
    const Tensor x = RandomQuarters<float>(xs, &rng, -4, 4);
    const Tensor y = RandomQuarters<float>(ys, &rng, 0.5, 4);
    const Tensor yi = MakeTensor<int32_t>(std::vector<double>(ys.num_elements(), 3), ys);
    const Tensor xi = RandomQuarters<int32_t>(xs, &rng, -20, 20);
    SCOPED_TRACE(xs.DebugString() + " vs " + ys.DebugString());
    std::string why;
    auto expect = [&](const char* op, const std::vector<Tensor>& in, const Tensor& want) {
      Tensor got = RunOk(op, in);
      EXPECT_TRUE(AllClose(got, want, 1e-6, 1e-6, &why)) << op << ": " << why;
    };
    expect("AddV2", {x, y}, RefBinary<float, float>(x, y, std::plus<float>()));
    expect("Sub", {y, x}, RefBinary<float, float>(y, x, std::minus<float>()));
    expect("Mul", {x, y}, RefBinary<float, float>(x, y, std::multiplies<float>()));
    expect("RealDiv", {x, y}, RefBinary<float, float>(x, y, std::divides<float>()));
    expect("Pow", {y, x}, RefBinary<float, float>(y, x, [](float a, float b) {
             return std::pow(a, b);
           }));
    expect("FloorDiv", {xi, yi}, RefBinary<int32_t, int32_t>(xi, yi, [](int32_t a, int32_t b) {
             return static_cast<int32_t>(std::floor(static_cast<double>(a) / b));
           }));
    expect("Greater", {x, y}, RefBinary<float, bool>(x, y, std::greater<float>()));
    expect("GreaterEqual", {y, x}, RefBinary<float, bool>(y, x, std::greater_equal<float>()));
    expect("Less", {x, y}, RefBinary<float, bool>(x, y, std::less<float>()));
    expect("NotEqual", {xi, yi}, RefBinary<int32_t, bool>(xi, yi, std::not_equal_to<int32_t>()));
  }
}

TEST(BinaryOpTest, LargeInputsUseThePoolAndStayCorrect) {
  std::mt19937 rng(3);
  const Tensor x = RandomQuarters<float>(TensorShape({60, 1, 700}), &rng, -3, 3);
  const Tensor y = RandomQuarters<float>(TensorShape({1, 50, 1}), &rng, -3, 3);
  std::string why;
  EXPECT_TRUE(AllClose(RunOk("Mul", {x, y}),
                       RefBinary<float, float>(x, y, std::multiplies<float>()), 0, 0, &why))
      << why;
  const Tensor z = RandomQuarters<float>(TensorShape({257, 130}), &rng, -3, 3);
  const Tensor b = RandomQuarters<float>(TensorShape({130}), &rng, -3, 3);
  EXPECT_TRUE(AllClose(RunOk("Add", {z, b}),
                       RefBinary<float, float>(z, b, std::plus<float>()), 0, 0, &why))
      << why;
  EXPECT_TRUE(AllClose(RunOk("Maximum", {Tensor::Scalar<float>(0.5f), z}),
                       RefBinary<float, float>(Tensor::Scalar<float>(0.5f), z,
                                               [](float a, float c) { return std::max(a, c); }),
                       0, 0, &why))
      << why;
  Tensor cmp = RunOk("LessEqual", {z, z});
  for (bool v : cmp.flat<bool>()) ASSERT_TRUE(v);
}

TEST(BinaryOpTest, ComparisonsOnEveryRealDtype) {
  auto check = [](auto zero) {
    using T = decltype(zero);
    const Tensor x = MakeTensor<T>({1, 2, 3}), y = MakeTensor<T>({2});
    ExpectValues<bool>(RunOk("Less", {x, y}), {1, 0, 0});
    ExpectValues<bool>(RunOk("LessEqual", {x, y}), {1, 1, 0});
    ExpectValues<bool>(RunOk("Greater", {x, y}), {0, 0, 1});
    ExpectValues<bool>(RunOk("GreaterEqual", {y, x}), {1, 1, 0});
    ExpectValues<bool>(RunOk("Equal", {x, y}), {0, 1, 0});
    ExpectValues<bool>(RunOk("NotEqual", {y, x}), {1, 0, 1});
  };
  ForEachRealNumberType(check);
  // Integer equality on full-width values and bool.
  ExpectValues<bool>(RunOk("Equal", {MakeTensor<int64_t>({-1, 1LL << 40}), MakeTensor<int64_t>({-1, 1})}),
                     {1, 0});
  ExpectValues<bool>(
      RunOk("NotEqual", {MakeTensor<bool>({0, 1, 1}), Tensor::Scalar<bool>(true)}), {1, 0, 0});
  ExpectValues<bool>(RunOk("Equal", {MakeTensor<int8_t>({-128, 127}), MakeTensor<int8_t>({-128, -128})}),
                     {1, 0});
}

TEST(BinaryOpTest, StringsAndComplexNumbers) {
  const Tensor s = Tensor::FromVector<std::string>({"a", "bc"});
  Tensor cat = RunOk("Add", {s, Tensor::Scalar<std::string>("!")});
  ASSERT_EQ(cat.NumElements(), 2);
  EXPECT_EQ(cat.flat<std::string>()[0], "a!");
  EXPECT_EQ(cat.flat<std::string>()[1], "bc!");
  Tensor pre = RunOk("Add", {Tensor::FromVector<std::string>({"x", "y"}, TensorShape({2, 1})), s});
  ASSERT_EQ(pre.shape(), TensorShape({2, 2}));
  EXPECT_EQ(pre.flat<std::string>()[1], "xbc");
  EXPECT_EQ(pre.flat<std::string>()[2], "ya");
  ExpectValues<bool>(RunOk("Equal", {s, Tensor::Scalar<std::string>("bc")}), {0, 1});
  ExpectValues<bool>(RunOk("NotEqual", {s, Tensor::FromVector<std::string>({"a", "b"})}), {0, 1});
  const Tensor z = Tensor::FromVector<complex64>({{1, 2}, {1, -2}});
  ExpectValues<bool>(RunOk("Equal", {z, Tensor::Scalar<complex64>({1, 2})}), {1, 0});
  const Tensor w = Tensor::FromVector<complex128>({{0, 1}});
  ExpectValues<bool>(RunOk("NotEqual", {w, Tensor::FromVector<complex128>({{0, 1}, {1, 0}})}),
                     {0, 1});
}

TEST(BinaryOpTest, NanAndSignedZero) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor x = Tensor::FromVector<float>({nan, 1.f, -0.f});
  const Tensor y = Tensor::FromVector<float>({1.f, nan, 0.f});
  ExpectValues<float>(RunOk("Maximum", {x, y}), {NAN, NAN, 0});
  ExpectValues<float>(RunOk("Minimum", {x, y}), {NAN, NAN, 0});
  ExpectValues<bool>(RunOk("Equal", {x, y}), {0, 0, 1});
  ExpectValues<bool>(RunOk("NotEqual", {x, x}), {1, 0, 0});
  ExpectValues<bool>(RunOk("Less", {x, y}), {0, 0, 0});
  ExpectValues<bool>(RunOk("GreaterEqual", {x, y}), {0, 0, 1});
  const Tensor h = MakeTensor<half>({1, 2});
  ExpectValues<half>(RunOk("Maximum", {h, Tensor::Scalar<half>(half(nan))}), {NAN, NAN});
}

TEST(BinaryOpTest, IntegerDivisionTruncatesOrFloors) {
  const Tensor x = MakeTensor<int32_t>({-7, 7, -7, 7, 0});
  const Tensor y = MakeTensor<int32_t>({2, 2, -2, -2, 3});
  ExpectValues<int32_t>(RunOk("Div", {x, y}), {-3, 3, 3, -3, 0});
  ExpectValues<int32_t>(RunOk("FloorDiv", {x, y}), {-4, 3, 3, -4, 0});
  const int32_t min32 = std::numeric_limits<int32_t>::min();
  const Tensor m = Tensor::FromVector<int32_t>({min32, min32});
  const Tensor neg1 = Tensor::Scalar<int32_t>(-1);
  ExpectValues<int32_t>(RunOk("Div", {m, neg1}), {double(min32), double(min32)});
  ExpectValues<int32_t>(RunOk("FloorDiv", {m, neg1}), {double(min32), double(min32)});
  ExpectValues<int8_t>(RunOk("Div", {MakeTensor<int8_t>({-128, 9}), MakeTensor<int8_t>({-1})}), {-128, -9});
  ExpectValues<int64_t>(RunOk("FloorDiv", {MakeTensor<int64_t>({-1, 1}), MakeTensor<int64_t>({5, -5})}),
                        {-1, -1});
  ExpectValues<uint8_t>(RunOk("FloorDiv", {MakeTensor<uint8_t>({255, 7}), MakeTensor<uint8_t>({2})}),
                        {127, 3});
  ExpectValues<float>(RunOk("FloorDiv", {MakeTensor<float>({-7.5, 7.5}), MakeTensor<float>({2})}), {-4, 3});
  ExpectValues<half>(RunOk("FloorDiv", {MakeTensor<half>({-7.5, 7.5}), MakeTensor<half>({2})}), {-4, 3});
  ExpectValues<double>(RunOk("Div", {MakeTensor<double>({1, -1}), MakeTensor<double>({0})}),
                       {INFINITY, -INFINITY});
}

TEST(BinaryOpTest, IntegerDivisionByZeroFails) {
  for (const char* op : {"Div", "FloorDiv"}) {
    auto out = RunOp(op, {}, {MakeTensor<int32_t>({1, 2}), MakeTensor<int32_t>({1, 0})});
    ASSERT_FALSE(out.ok()) << op;
    EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(out.status().message(), "Integer division by zero");
    EXPECT_FALSE(RunOp(op, {}, {MakeTensor<uint8_t>({1}), MakeTensor<uint8_t>({0})}).ok());
  }
  // Nothing to compute: no error.
  auto empty = RunOp("Div", {}, {Tensor(DT_INT64, TensorShape({0, 2})), MakeTensor<int64_t>({0, 1})});
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ((*empty)[0].shape(), TensorShape({0, 2}));
}

TEST(BinaryOpTest, PowOnIntegersAndFloats) {
  ExpectValues<int32_t>(RunOk("Pow", {MakeTensor<int32_t>({2, -3, 0, 5}), MakeTensor<int32_t>({10, 3, 0, 1})}),
                        {1024, -27, 1, 5});
  ExpectValues<int8_t>(RunOk("Pow", {MakeTensor<int8_t>({2, 3}), MakeTensor<int8_t>({7})}), {-128, -117});
  ExpectValues<int64_t>(RunOk("Pow", {MakeTensor<int64_t>({3}), MakeTensor<int64_t>({39})}),
                        {4052555153018976267.0});
  auto out = RunOp("Pow", {}, {MakeTensor<int16_t>({2}), MakeTensor<int16_t>({-1})});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(), "Integers to negative integer powers are not allowed");
  ExpectValues<double>(RunOk("Pow", {MakeTensor<double>({2, 4}), MakeTensor<double>({-1, 0.5})}), {0.5, 2});
  ExpectValues<bfloat16>(RunOk("Pow", {MakeTensor<bfloat16>({2, 3}), MakeTensor<bfloat16>({3})}), {8, 27});
}

TEST(BinaryOpTest, LogicalOps) {
  const Tensor x = MakeTensor<bool>({0, 1, 0, 1}, TensorShape({2, 2}));
  const Tensor y = MakeTensor<bool>({0, 1}, TensorShape({2, 1}));
  ExpectValues<bool>(RunOk("LogicalAnd", {x, y}), {0, 0, 0, 1});
  ExpectValues<bool>(RunOk("LogicalOr", {x, y}), {0, 1, 1, 1});
  ExpectValues<bool>(RunOk("LogicalOr", {x, Tensor::Scalar<bool>(true)}), {1, 1, 1, 1});
  ExpectValues<bool>(RunOk("LogicalAnd", {MakeTensor<bool>({1, 0, 1}), MakeTensor<bool>({1, 1, 0})}),
                     {1, 0, 0});
  ExpectValues<bool>(RunOk("LogicalNot", {x}), {1, 0, 1, 0});
}

TEST(BinaryOpTest, IncompatibleShapes) {
  auto out = RunOp("Add", {}, {MakeTensor<float>({1, 2, 3, 4, 5, 6}, TensorShape({2, 3})),
                               MakeTensor<float>({1, 2, 3, 4})});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(out.status().message(), "Incompatible shapes: [2,3] vs. [4]");
  // Greater runs swapped, but reports the shapes in the node's order.
  auto g = RunOp("Greater", {}, {MakeTensor<int32_t>({1, 2}), MakeTensor<int32_t>({1, 2, 3})});
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().message(), "Incompatible shapes: [2] vs. [3]");
  EXPECT_FALSE(RunOp("Equal", {}, {MakeTensor<int32_t>({1, 2}), MakeTensor<int32_t>({1, 2, 3})}).ok());
}

TEST(BinaryOpTest, EqualityWithoutShapeErrorGivesAScalar) {
  const std::map<std::string, AttrValue> lax = {{"incompatible_shape_error", AttrB(false)}};
  const Tensor x = MakeTensor<float>({1, 2}), y = MakeTensor<float>({1, 2, 3});
  auto eq = RunOp("Equal", lax, {x, y});
  ASSERT_TRUE(eq.ok()) << eq.status();
  EXPECT_EQ((*eq)[0].shape(), TensorShape({}));
  ExpectValues<bool>((*eq)[0], {0});
  auto ne = RunOp("NotEqual", lax, {x, y});
  ASSERT_TRUE(ne.ok()) << ne.status();
  ExpectValues<bool>((*ne)[0], {1});
  // Shapes that do broadcast still compare elementwise.
  ExpectValues<bool>(RunOk("Equal", {x, MakeTensor<float>({2})}, lax), {0, 1});
}

TEST(BinaryOpTest, EmptyAndScalarShapes) {
  Tensor e = RunOk("Add", {Tensor(DT_FLOAT, TensorShape({0, 3})), MakeTensor<float>({1, 2, 3})});
  EXPECT_EQ(e.shape(), TensorShape({0, 3}));
  Tensor e2 = RunOk("Less", {Tensor::Scalar<float>(1), Tensor(DT_FLOAT, TensorShape({2, 0}))});
  EXPECT_EQ(e2.shape(), TensorShape({2, 0}));
  EXPECT_EQ(e2.dtype(), DT_BOOL);
  Tensor s = RunOk("Sub", {Tensor::Scalar<int64_t>(5), Tensor::Scalar<int64_t>(7)});
  EXPECT_EQ(s.shape(), TensorShape({}));
  ExpectValues<int64_t>(s, {-2});
  Tensor one = RunOk("Mul", {MakeTensor<double>({3}, TensorShape({1, 1})), Tensor::Scalar<double>(2)});
  EXPECT_EQ(one.shape(), TensorShape({1, 1}));
  ExpectValues<double>(one, {6});
}

TEST(BinaryOpTest, RanksBeyondEightAfterCollapsingAreUnimplemented) {
  const TensorShape xs({2, 1, 2, 1, 2, 1, 2, 1, 2}), ys({1, 2, 1, 2, 1, 2, 1, 2, 1});
  auto out = RunOp("Add", {}, {Tensor(DT_FLOAT, xs), Tensor(DT_FLOAT, ys)});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kUnimplemented);
  // Rank 9 that collapses is fine.
  const Tensor x = MakeTensor<float>(std::vector<double>(512, 1), TensorShape({2, 2, 2, 2, 2, 2, 2, 2, 2}));
  const Tensor y = MakeTensor<float>({1, 2}, TensorShape({2, 1, 1, 1, 1, 1, 1, 1, 1}));
  Tensor z = RunOk("Add", {x, y});
  std::string why;
  EXPECT_TRUE(AllClose(z, RefBinary<float, float>(x, y, std::plus<float>()), 0, 0, &why)) << why;
}

// --- Reusing input buffers ---

// The tensors in a vector that holds the only reference to each.
template <typename... Ts>
std::vector<Tensor> Owned(Ts&&... ts) {
  std::vector<Tensor> v;
  (v.push_back(std::move(ts)), ...);
  return v;
}

// Runs `op` with inputs this call owns alone, so the kernel may reuse them.
absl::StatusOr<Tensor> RunOwned(const std::string& op,
                                std::map<std::string, AttrValue> attrs,
                                std::vector<Tensor> inputs) {
  static DeviceBase* const device = MakeTestCpuDevice(2).release();
  GR_ASSIGN_OR_RETURN(const OpDef* op_def, OpRegistry::Global()->LookUp(op));
  NodeDef def;
  def.set_name("owned");
  def.set_op(op);
  for (auto& [k, v] : attrs) (*def.mutable_attr())[k] = v;
  for (size_t i = 0; i < inputs.size(); ++i) def.add_input(absl::StrCat("in", i));
  std::vector<DataType> in_types, out_types;
  GR_RETURN_IF_ERROR(ComputeArgTypes(*op_def, AttrSlice(&def.attr(), op_def),
                                     &in_types, &out_types));
  GR_ASSIGN_OR_RETURN(std::unique_ptr<OpKernel> kernel,
                      KernelRegistry::Global()->CreateKernel(
                          device, def, op_def, in_types, out_types));
  OpKernelContext::Params params;
  params.device = device;
  params.op_kernel = kernel.get();
  params.inputs = inputs.data();
  params.num_inputs = static_cast<int>(inputs.size());
  CancellationManager cancellation;
  params.cancellation = &cancellation;
  OpKernelContext ctx(&params);
  kernel->Compute(&ctx);
  GR_RETURN_IF_ERROR(ctx.status());
  return (*ctx.mutable_outputs())[0];
}

TEST(ForwardingTest, OutputsReuseSoleOwnedInputs) {
  const auto t = [](DataType d) { return std::map<std::string, AttrValue>{{"T", AttrType(d)}}; };
  Tensor x = MakeTensor<float>({1, 2, 3, 4, 5, 6}, TensorShape({2, 3}));
  const void* x_data = x.raw_data();
  auto z = RunOwned("Sub", t(DT_FLOAT), Owned(std::move(x), MakeTensor<float>({1, 2, 3})));
  ASSERT_TRUE(z.ok()) << z.status();
  EXPECT_EQ(z->raw_data(), x_data);
  ExpectValues<float>(*z, {0, 0, 0, 3, 3, 3});

  // Input 1 has the output's shape: it is reused, computing 10 - y.
  Tensor y = MakeTensor<int32_t>({1, 2, 3, 4}, TensorShape({2, 2}));
  const void* y_data = y.raw_data();
  auto w = RunOwned("Sub", t(DT_INT32), Owned(Tensor::Scalar<int32_t>(10), std::move(y)));
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->raw_data(), y_data);
  ExpectValues<int32_t>(*w, {9, 8, 7, 6});

  // Greater(x, y) runs as Less(y, x): the bool output cannot reuse x.
  auto g = RunOwned("Greater", t(DT_FLOAT), Owned(MakeTensor<float>({1, 5}), MakeTensor<float>({2})));
  ASSERT_TRUE(g.ok()) << g.status();
  ExpectValues<bool>(*g, {0, 1});

  Tensor u = MakeTensor<double>({0, 1});
  const void* u_data = u.raw_data();
  auto e = RunOwned("Exp", t(DT_DOUBLE), Owned(std::move(u)));
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->raw_data(), u_data);
  ExpectValues<double>(*e, {1, std::exp(1.0)});

  // AddN reuses the one input nobody else holds.
  const Tensor held = MakeTensor<float>({1, 1});
  Tensor free = MakeTensor<float>({5, 6});
  const void* free_data = free.raw_data();
  auto attrs = t(DT_FLOAT);
  attrs["N"] = AttrI(3);
  auto s = RunOwned("AddN", attrs, Owned(Tensor(held), Tensor(held), std::move(free)));
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->raw_data(), free_data);
  ExpectValues<float>(*s, {7, 8});
  ExpectValues<float>(held, {1, 1});
}

}  // namespace
}  // namespace graphrun
