// Expected values: TensorFlow 2.21, checked by make_cwise_math_ops_test_values.py beside this file.
// Tests of the element-wise math kernels: trigonometric, hyperbolic and
// error functions, Log1p/Expm1, rounding, Sign, Reciprocal, the IsNan
// family, TruncateDiv/TruncateMod, SquaredDifference, Atan2, the zero-safe
// products and quotients (DivNoNan, MulNoNan, Xlogy, Xdivy, Xlog1py),
// ClipByValue and AddN's wider dtypes. Expected values come from
// TensorFlow 2.21 (tf.raw_ops, float64 unless noted), Python's math module
// or exact arithmetic.
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/testing/kernel_test_util.h"

namespace graphrun {
namespace {

using testing::ExpectError;
using testing::MakeTensor;
using testing::RunOk;
using testing::RunOp;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// `v` repeated `times` times: long enough for the vectorized loops and
// their tails.
std::vector<double> Tiled(const std::vector<double>& v, int times) {
  std::vector<double> out;
  for (int i = 0; i < times; ++i) out.insert(out.end(), v.begin(), v.end());
  return out;
}

// Each element of `t` within rtol/atol of `want`; NaN and +-Inf must match
// exactly, and so must the sign of a zero when `want` is -0.0.
template <typename T>
void ExpectNear(const Tensor& t, const std::vector<double>& want, double rtol,
                double atol, const std::string& what) {
  ASSERT_EQ(t.dtype(), DataTypeToEnum<T>::value) << what;
  ASSERT_EQ(t.NumElements(), static_cast<int64_t>(want.size())) << what;
  for (size_t i = 0; i < want.size(); ++i) {
    const double got = static_cast<double>(t.flat<T>()[i]);
    const double w = want[i];
    if (std::isnan(w)) {
      EXPECT_TRUE(std::isnan(got)) << what << " element " << i << ": " << got;
    } else if (std::isinf(w) || (w == 0 && std::signbit(w))) {
      EXPECT_EQ(got, w) << what << " element " << i;
      EXPECT_EQ(std::signbit(got), std::signbit(w)) << what << " element " << i;
    } else {
      EXPECT_LE(std::abs(got - w), atol + rtol * std::abs(w))
          << what << " element " << i << ": got " << got << ", want " << w;
    }
  }
}

template <typename T>
void ExpectExact(const Tensor& t, const std::vector<double>& want,
                 const std::string& what = "") {
  ExpectNear<T>(t, want, 0, 0, what);
}

void ExpectInvalid(const absl::StatusOr<std::vector<Tensor>>& out,
                   const std::string& message) {
  ExpectError(out, absl::StatusCode::kInvalidArgument, message);
}

// --- Transcendental unary ops ---

struct UnaryCase {
  const char* op;
  std::vector<double> want;  // TensorFlow, float64
};

template <typename T>
void CheckUnaryCases(const std::vector<double>& x,
                     const std::vector<UnaryCase>& cases, double rtol,
                     double atol) {
  for (const UnaryCase& c : cases) {
    const Tensor got = RunOk(c.op, {MakeTensor<T>(Tiled(x, 5))});
    ExpectNear<T>(
        got, Tiled(c.want, 5), rtol, atol,
        std::string(c.op) + " " + DataTypeString(DataTypeToEnum<T>::value));
  }
}

TEST(UnaryMathTest, TrigonometricHyperbolicAndErrorFunctions) {
  const std::vector<double> x = {-3.0, -1.5, -0.5, 0.0, 0.25, 0.5, 1.0, 2.5};
  const std::vector<UnaryCase> cases = {
      {"Sin",
       {-0.1411200080598672, -0.9974949866040544, -0.479425538604203, 0.0,
        0.24740395925452294, 0.479425538604203, 0.8414709848078965,
        0.5984721441039565}},
      {"Cos",
       {-0.9899924966004454, 0.0707372016677029, 0.8775825618903728, 1.0,
        0.9689124217106447, 0.8775825618903728, 0.5403023058681398,
        -0.8011436155469337}},
      {"Tan",
       {0.1425465430742778, -14.101419947171719, -0.5463024898437905, 0.0,
        0.25534192122103627, 0.5463024898437905, 1.5574077246549023,
        -0.7470222972386603}},
      {"Atan",
       {-1.2490457723982544, -0.9827937232473289, -0.4636476090008061, 0.0,
        0.24497866312686414, 0.4636476090008061, 0.7853981633974484,
        1.1902899496825317}},
      {"Sinh",
       {-10.017874927409903, -2.1292794550948173, -0.5210953054937474, 0.0,
        0.2526123168081683, 0.5210953054937474, 1.1752011936438014,
        6.0502044810397875}},
      {"Cosh",
       {10.067661995777765, 2.352409615243247, 1.1276259652063807, 1.0,
        1.0314130998795732, 1.1276259652063807, 1.5430806348152437,
        6.132289479663686}},
      {"Erf",
       {-0.9999779095030015, -0.9661051464753108, -0.5204998778130466, 0.0,
        0.2763263901682369, 0.5204998778130466, 0.8427007929497148,
        0.999593047982555}},
      {"Erfc",
       {1.9999779095030015, 1.9661051464753108, 1.5204998778130467, 1.0,
        0.7236736098317631, 0.47950012218695337, 0.15729920705028522,
        0.00040695201744495903}},
      {"Expm1",
       {-0.950212931632136, -0.7768698398515702, -0.3934693402873666, 0.0,
        0.28402541668774145, 0.6487212707001282, 1.7182818284590455,
        11.182493960703473}},
  };
  CheckUnaryCases<double>(x, cases, 1e-13, 1e-15);
  CheckUnaryCases<float>(x, cases, 4e-6, 1e-6);

  // Outside [-1, 1] the inverse sine and cosine are NaN.
  const std::vector<double> u = {-1.0, -0.5, 0.0, 0.3, 1.0, 1.5};
  const std::vector<UnaryCase> inverse = {
      {"Asin",
       {-1.5707963267948966, -0.5235987755982989, 0.0, 0.3046926540153975,
        1.5707963267948966, kNaN}},
      {"Acos",
       {3.141592653589793, 2.0943951023931957, 1.5707963267948966,
        1.2661036727794992, 0.0, kNaN}},
  };
  CheckUnaryCases<double>(u, inverse, 1e-13, 1e-15);
  CheckUnaryCases<float>(u, inverse, 4e-6, 1e-6);

  // Log1p keeps tiny arguments exact; -1 is -Inf, below -1 NaN.
  const std::vector<double> lp = {-1.0, -0.5, 0.0, 1e-10, 0.5, 3.0, -2.0};
  const std::vector<UnaryCase> log1p = {
      {"Log1p",
       {-kInf, -0.6931471805599453, 0.0, 9.999999999500001e-11,
        0.4054651081081644, 1.3862943611198906, kNaN}},
  };
  CheckUnaryCases<double>(lp, log1p, 1e-13, 0);
  CheckUnaryCases<float>(lp, log1p, 4e-6, 0);

  ExpectExact<double>(RunOk("Expm1", {MakeTensor<double>({-kInf, kInf, kNaN})}),
                      {-1, kInf, kNaN});
  ExpectExact<float>(RunOk("Erf", {MakeTensor<float>({-kInf, kInf, kNaN})}),
                     {-1, 1, kNaN});
  ExpectExact<double>(RunOk("Erfc", {MakeTensor<double>({-kInf, kInf})}), {2, 0});
  ExpectExact<double>(RunOk("Sin", {MakeTensor<double>({kInf, kNaN})}), {kNaN, kNaN});
}

TEST(UnaryMathTest, ErfInHalfAndBfloat16) {
  const std::vector<double> x = {-2.0, -0.5, 0.0, 0.25, 1.0, 3.0};
  // TensorFlow, float16 and bfloat16.
  ExpectNear<half>(
      RunOk("Erf", {MakeTensor<half>(x)}),
      {-0.9951171875, -0.5205078125, 0.0, 0.2763671875, 0.8427734375, 1.0},
      1e-3, 0, "Erf half");
  ExpectNear<bfloat16>(
      RunOk("Erf", {MakeTensor<bfloat16>(x)}),
      {-0.99609375, -0.51953125, 0.0, 0.275390625, 0.84375, 1.0}, 8e-3, 0,
      "Erf bfloat16");
}

// GELU as Keras writes it: exact with Erf, approximate with Tanh and Pow.
TEST(UnaryMathTest, GeluComposites) {
  const Tensor x = MakeTensor<double>({-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.0});
  const Tensor half_x = RunOk("Mul", {x, Tensor::Scalar<double>(0.5)});
  const Tensor erf = RunOk(
      "Erf", {RunOk("RealDiv", {x, Tensor::Scalar<double>(std::sqrt(2.0))})});
  const Tensor exact =
      RunOk("Mul", {half_x, RunOk("AddV2", {erf, Tensor::Scalar<double>(1)})});
  // 0.5 * x * (1 + erf(x / sqrt(2))) with Python's math module
  // (tf.nn.gelu agrees to about 1e-8).
  ExpectNear<double>(exact,
                     {-0.015524163314440398, -0.10021080190328713,
                      -0.15426876936299344, 0.34573123063700656,
                      1.399789198096713, 2.4844758366855597, 2.99595030590511},
                     1e-12, 1e-15, "exact gelu");
  const Tensor cube = RunOk("Pow", {x, Tensor::Scalar<double>(3)});
  const Tensor inner =
      RunOk("Mul",
            {RunOk("AddV2",
                   {x, RunOk("Mul", {cube, Tensor::Scalar<double>(0.044715)})}),
             Tensor::Scalar<double>(std::sqrt(2 / M_PI))});
  const Tensor approx =
      RunOk("Mul", {half_x, RunOk("AddV2", {RunOk("Tanh", {inner}),
                                            Tensor::Scalar<double>(1)})});
  // 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))), Python.
  ExpectNear<double>(approx,
                     {-0.015084266089998577, -0.10042842301976707,
                      -0.15428599017485606, 0.34571400982514394,
                      1.3995715769802328, 2.484915733910001, 2.996362607918227},
                     1e-12, 1e-15, "approximate gelu");
}

// --- Rounding, Sign, Reciprocal, classification ---

template <typename T>
void CheckRounding() {
  const std::string type = DataTypeString(DataTypeToEnum<T>::value);
  const std::vector<double> x = {0.5,  1.5,  2.5,  -0.5, -1.5, -2.5,
                                 2.25, 2.75, -0.0, kNaN, -kInf};
  // Half to even, keeping the sign of zero.
  ExpectExact<T>(RunOk("Round", {MakeTensor<T>(Tiled(x, 4))}),
                 Tiled({0, 2, 2, -0.0, -2, -2, 2, 3, -0.0, kNaN, -kInf}, 4),
                 "Round " + type);
  ExpectExact<T>(RunOk("Floor", {MakeTensor<T>(x)}),
                 {0, 1, 2, -1, -2, -3, 2, 2, -0.0, kNaN, -kInf},
                 "Floor " + type);
  ExpectExact<T>(RunOk("Ceil", {MakeTensor<T>(x)}),
                 {1, 2, 3, -0.0, -1, -2, 3, 3, -0.0, kNaN, -kInf},
                 "Ceil " + type);
  ExpectExact<T>(
      RunOk("Sign", {MakeTensor<T>({kNaN, -0.0, 0.0, -2.0, 3.0, kInf, -kInf, 0.25})}),
      {kNaN, 0, 0, -1, 1, 1, -1, 1}, "Sign " + type);
  for (const char* op : {"Reciprocal", "Inv"}) {
    ExpectExact<T>(
        RunOk(op, {MakeTensor<T>({0.0, -0.0, 2.0, kInf, -4.0, kNaN, 0.125})}),
        {kInf, -kInf, 0.5, 0, -0.25, kNaN, 8}, op + (" " + type));
  }
  const Tensor special = MakeTensor<T>(Tiled({kNaN, kInf, -kInf, 0.0, -1.5}, 4));
  ExpectExact<bool>(RunOk("IsNan", {special}), Tiled({1, 0, 0, 0, 0}, 4),
                    "IsNan " + type);
  ExpectExact<bool>(RunOk("IsInf", {special}), Tiled({0, 1, 1, 0, 0}, 4),
                    "IsInf " + type);
  ExpectExact<bool>(RunOk("IsFinite", {special}), Tiled({0, 0, 0, 1, 1}, 4),
                    "IsFinite " + type);
}

TEST(RoundingTest, FloatingTypes) {
  CheckRounding<float>();
  CheckRounding<double>();
  CheckRounding<half>();
  CheckRounding<bfloat16>();
  ExpectExact<double>(RunOk("Rint", {MakeTensor<double>({0.5, 1.5, -2.5, 3.7, -0.2})}),
                      {0, 2, -2, 4, -0.0});
  ExpectExact<float>(RunOk("Rint", {MakeTensor<float>({4194305.5, 4194306.5, -0.5})}),
                     {4194306, 4194306, -0.0});
  const double big = 4503599627370497.0;  // 2^52 + 1: already an integer
  ExpectExact<double>(RunOk("Round", {MakeTensor<double>({big, -big})}), {big, -big});
}

TEST(RoundingTest, IntegerTypes) {
  // Integers are already round (tf.round returns them unchanged).
  const Tensor i32 = MakeTensor<int32_t>({-7, 0, 2147483647});
  const Tensor r = RunOk("Round", {i32});
  ExpectExact<int32_t>(r, {-7, 0, 2147483647});
  ExpectExact<int64_t>(RunOk("Round", {MakeTensor<int64_t>({-(1LL << 40), 3})}),
                       {-1099511627776.0, 3});
  ExpectExact<int32_t>(RunOk("Sign", {MakeTensor<int32_t>({-5, 0, 7, -2147483647})}),
                       {-1, 0, 1, -1});
  ExpectExact<int64_t>(
      RunOk("Sign", {MakeTensor<int64_t>({-(1LL << 50), 0, 1LL << 50})}), {-1, 0, 1});
}

// --- Binary ops ---

TEST(BinaryMathTest, Atan2CoversEveryQuadrant) {
  const std::vector<double> y = {1.0, -1.0, 0.0, 0.0, -0.0, 3.0, -2.0};
  const std::vector<double> x = {0.0, 0.0, -1.0, 1.0, -1.0, 4.0, -2.0};
  const std::vector<double> want = {
      1.5707963267948966, -1.5707963267948966, 3.141592653589793, 0.0,
      -3.141592653589793, 0.6435011087932844,  -2.356194490192345};
  ExpectNear<double>(RunOk("Atan2", {MakeTensor<double>(y), MakeTensor<double>(x)}), want,
                     1e-15, 0, "Atan2");
  ExpectNear<float>(RunOk("Atan2", {MakeTensor<float>(y), MakeTensor<float>(x)}), want, 2e-7,
                    0, "Atan2 f");
  // Broadcast: one x for every y.
  ExpectNear<double>(RunOk("Atan2", {MakeTensor<double>({1, -1}, TensorShape({2, 1})),
                                     MakeTensor<double>({1, -1})}),
                     {M_PI / 4, 3 * M_PI / 4, -M_PI / 4, -3 * M_PI / 4}, 1e-15,
                     0, "Atan2 broadcast");
}

TEST(BinaryMathTest, SquaredDifferenceOnEveryType) {
  const std::vector<double> x = {1.5, -2, 0, 3, 4, -5}, y = {0.5, 2, -1};
  const std::vector<double> want = {1, 16, 1, 6.25, 4, 16};
  ExpectExact<double>(
      RunOk("SquaredDifference",
            {MakeTensor<double>(x, TensorShape({2, 3})), MakeTensor<double>(y)}),
      want);
  ExpectExact<float>(RunOk("SquaredDifference",
                           {MakeTensor<float>(x, TensorShape({2, 3})), MakeTensor<float>(y)}),
                     want);
  // Commutative, and the square of a difference needs no overflow here.
  ExpectExact<int64_t>(
      RunOk("SquaredDifference",
            {MakeTensor<int64_t>({7, -40000, -1}),
             MakeTensor<int64_t>({1, -2, 0, 3, 40000, -5}, TensorShape({2, 3}))}),
      {36, 1599840004.0, 1, 16, 6400000000.0, 16});
  ExpectExact<int32_t>(RunOk("SquaredDifference", {MakeTensor<int32_t>({-3, 4, 46340}),
                                                   Tensor::Scalar<int32_t>(0)}),
                       {9, 16, 2147395600.0});
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> dist(-10, 10);
  std::vector<double> a, b, sq;
  for (int i = 0; i < 40000; ++i) {
    a.push_back(std::round(dist(rng) * 8) / 8);
    b.push_back(std::round(dist(rng) * 8) / 8);
    sq.push_back((a.back() - b.back()) * (a.back() - b.back()));
  }
  ExpectExact<float>(RunOk("SquaredDifference", {MakeTensor<float>(a), MakeTensor<float>(b)}),
                     sq);
}

TEST(BinaryMathTest, ZeroSafeProductsAndQuotientsBroadcast) {
  const Tensor x =
      MakeTensor<double>({0.0, 1.0, 2.0, 0.0, -3.0, 0.5}, TensorShape({2, 3}));
  const Tensor y = MakeTensor<double>({0.0, 2.0, 0.5});
  struct Case {
    const char* op;
    std::vector<double> want;
  } cases[] = {
      {"Xlogy",
       {0.0, 0.6931471805599453, -1.3862943611198906, 0.0, -2.0794415416798357,
        -0.34657359027997264}},
      {"Xdivy", {0.0, 0.5, 4.0, 0.0, -1.5, 1.0}},
      {"Xlog1py",
       {0.0, 1.0986122886681096, 0.8109302162163288, 0.0, -3.2958368660043287,
        0.2027325540540822}},
      {"DivNoNan", {0.0, 0.5, 4.0, 0.0, -1.5, 1.0}},
      {"MulNoNan", {0.0, 2.0, 1.0, 0.0, -6.0, 0.25}},
  };
  for (const Case& c : cases) {
    ExpectNear<double>(RunOk(c.op, {x, y}), c.want, 1e-15, 0, c.op);
    const Tensor xf =
        MakeTensor<float>({0.0, 1.0, 2.0, 0.0, -3.0, 0.5}, TensorShape({2, 3}));
    ExpectNear<float>(RunOk(c.op, {xf, MakeTensor<float>({0.0, 2.0, 0.5})}), c.want,
                      4e-7, 0, std::string(c.op) + " float");
  }
}

template <typename T>
void CheckZeroSafeSpecialValues() {
  const std::string type = DataTypeString(DataTypeToEnum<T>::value);
  auto run = [](const char* op, const std::vector<double>& x,
                const std::vector<double>& y) {
    // Tiled, so the vectorized path sees the special values too.
    return RunOk(op, {MakeTensor<T>(Tiled(x, 5)), MakeTensor<T>(Tiled(y, 5))});
  };
  // TensorFlow: x == 0 gives 0 even for y = NaN, Inf or a negative y.
  ExpectExact<T>(run("Xlogy", {0, 0, 0, 0, 1, kNaN}, {0, kNaN, -1, kInf, 0, 0}),
                 Tiled({0, 0, 0, 0, -kInf, kNaN}, 5), "Xlogy " + type);
  ExpectExact<T>(
      run("Xlog1py", {0, 0, 0, 1, 2, kNaN}, {-1, kNaN, -2, -1, -2, 0}),
      Tiled({0, 0, 0, -kInf, kNaN, kNaN}, 5), "Xlog1py " + type);
  ExpectExact<T>(run("Xdivy", {0, 0, 0, 1, -1, kNaN}, {0, kNaN, kInf, 0, 0, 0}),
                 Tiled({0, 0, 0, kInf, -kInf, kNaN}, 5), "Xdivy " + type);
  // y == 0 gives 0 even for x = NaN or Inf.
  ExpectExact<T>(
      run("DivNoNan", {1, 0, kNaN, kInf, -1, -3}, {0, 0, 0, 0, kInf, kNaN}),
      Tiled({0, 0, 0, 0, -0.0, kNaN}, 5), "DivNoNan " + type);
  ExpectExact<T>(
      run("MulNoNan", {kInf, kNaN, 2, kInf, -kInf, 0}, {0, 0, 3, kNaN, 2, -1}),
      Tiled({0, 0, 6, kNaN, -kInf, -0.0}, 5), "MulNoNan " + type);
  // A scalar divisor of zero, either side.
  ExpectExact<T>(RunOk("DivNoNan",
                       {MakeTensor<T>(Tiled({1, kNaN}, 20)), Tensor::Scalar<T>(T(0))}),
                 std::vector<double>(40, 0), "DivNoNan scalar " + type);
  ExpectExact<T>(
      RunOk("Xdivy", {Tensor::Scalar<T>(T(0)), MakeTensor<T>(Tiled({0, kNaN}, 20))}),
      std::vector<double>(40, 0), "Xdivy scalar " + type);
}

TEST(BinaryMathTest, ZeroSafeOpsOnNanAndInf) {
  CheckZeroSafeSpecialValues<float>();
  CheckZeroSafeSpecialValues<double>();
}

TEST(BinaryMathTest, LargeDivNoNanMatchesNaiveReference) {
  std::mt19937 rng(4);
  std::uniform_int_distribution<int> dist(-4, 4);
  std::vector<double> x, row, want;
  for (int i = 0; i < 300 * 130; ++i) x.push_back(dist(rng) * 0.5);
  // Zeros at the start of the row, and wherever dist gives 0.
  for (int j = 0; j < 130; ++j) row.push_back(j < 3 ? 0.0 : dist(rng) * 0.25);
  for (int i = 0; i < 300 * 130; ++i) {
    const double d = row[i % 130];
    want.push_back(d == 0 ? 0
                          : static_cast<double>(static_cast<float>(x[i]) /
                                                static_cast<float>(d)));
  }
  ExpectExact<float>(RunOk("DivNoNan", {MakeTensor<float>(x, TensorShape({300, 130})),
                                        MakeTensor<float>(row)}),
                     want);
}

TEST(TruncateTest, IntegerDivisionAndRemainderRoundTowardZero) {
  const std::vector<double> x = {-7, 7, -7, 7, 0, 6};
  const std::vector<double> y = {2, 2, -2, -2, 3, 3};
  ExpectExact<int32_t>(RunOk("TruncateDiv", {MakeTensor<int32_t>(x), MakeTensor<int32_t>(y)}),
                       {-3, 3, 3, -3, 0, 2});
  ExpectExact<int64_t>(RunOk("TruncateDiv", {MakeTensor<int64_t>(x), MakeTensor<int64_t>(y)}),
                       {-3, 3, 3, -3, 0, 2});
  ExpectExact<int8_t>(RunOk("TruncateDiv", {MakeTensor<int8_t>(x), MakeTensor<int8_t>(y)}),
                      {-3, 3, 3, -3, 0, 2});
  ExpectExact<uint8_t>(
      RunOk("TruncateDiv", {MakeTensor<uint8_t>({255, 7}), MakeTensor<uint8_t>({2})}),
      {127, 3});
  // The remainder takes the dividend's sign (C's %, unlike FloorMod).
  const std::vector<double> m = {3, 3, -3, -3, 3, 3};
  ExpectExact<int32_t>(RunOk("TruncateMod", {MakeTensor<int32_t>(x), MakeTensor<int32_t>(m)}),
                       {-1, 1, -1, 1, 0, 0});
  ExpectExact<int64_t>(RunOk("TruncateMod", {MakeTensor<int64_t>(x), MakeTensor<int64_t>(m)}),
                       {-1, 1, -1, 1, 0, 0});
  ExpectExact<int32_t>(RunOk("FloorMod", {MakeTensor<int32_t>(x), MakeTensor<int32_t>(m)}),
                       {2, 1, -1, -2, 0, 0});
  // Broadcasting (TensorFlow's values).
  ExpectExact<int32_t>(
      RunOk("TruncateMod",
            {MakeTensor<int32_t>({-7, 8, 9, 10, -11, 12}, TensorShape({2, 3})),
             MakeTensor<int32_t>({3, -5, 4})}),
      {-1, 3, 1, 1, -1, 0});
  ExpectExact<int64_t>(
      RunOk("TruncateDiv",
            {MakeTensor<int64_t>({-7, 8, 9, 10, -11, 12}, TensorShape({2, 3})),
             Tensor::Scalar<int64_t>(-4)}),
      {1, -2, -2, -2, 2, -3});
  // INT_MIN / -1 wraps to INT_MIN and INT_MIN % -1 is 0, as TensorFlow's.
  const double min32 = std::numeric_limits<int32_t>::min();
  ExpectExact<int32_t>(
      RunOk("TruncateDiv", {MakeTensor<int32_t>({min32}), MakeTensor<int32_t>({-1})}),
      {min32});
  ExpectExact<int32_t>(
      RunOk("TruncateMod", {MakeTensor<int32_t>({min32}), MakeTensor<int32_t>({-1})}), {0});
  const double min64 = static_cast<double>(std::numeric_limits<int64_t>::min());
  ExpectExact<int64_t>(RunOk("TruncateMod", {MakeTensor<int64_t>({min64, 5}),
                                             Tensor::Scalar<int64_t>(-1)}),
                       {0, 0});
}

TEST(TruncateTest, IntegerDivisionByZeroFails) {
  for (const char* op : {"TruncateDiv", "TruncateMod"}) {
    ExpectInvalid(RunOp(op, {}, {MakeTensor<int32_t>({1, 2}), MakeTensor<int32_t>({1, 0})}),
                  "Integer division by zero");
    ExpectInvalid(
        RunOp(op, {}, {MakeTensor<int64_t>({1}), Tensor::Scalar<int64_t>(0)}),
        "Integer division by zero");
  }
  // Nothing to compute: no error.
  auto empty = RunOp("TruncateMod", {},
                     {Tensor(DT_INT32, TensorShape({0})), MakeTensor<int32_t>({0})});
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ((*empty)[0].shape(), TensorShape({0}));
}

TEST(TruncateTest, FloatingTypes) {
  // TensorFlow: trunc(x / y) and fmod(x, y).
  const std::vector<double> x = {-7.5, 7.5, 1.0, -1.0, 0.0, -7.5, kInf};
  const std::vector<double> y = {2.0, 2.0, 0.0, 0.0, 0.0, -2.0, 2.0};
  ExpectExact<double>(RunOk("TruncateDiv", {MakeTensor<double>(x), MakeTensor<double>(y)}),
                      {-3, 3, kInf, -kInf, kNaN, 3, kInf});
  ExpectExact<float>(RunOk("TruncateDiv", {MakeTensor<float>(x), MakeTensor<float>(y)}),
                     {-3, 3, kInf, -kInf, kNaN, 3, kInf});
  ExpectExact<double>(RunOk("TruncateMod", {MakeTensor<double>(x), MakeTensor<double>(y)}),
                      {-1.5, 1.5, kNaN, kNaN, kNaN, -1.5, kNaN});
  ExpectExact<float>(RunOk("TruncateMod", {MakeTensor<float>(x), MakeTensor<float>(y)}),
                     {-1.5, 1.5, kNaN, kNaN, kNaN, -1.5, kNaN});
  ExpectExact<float>(
      RunOk("TruncateDiv", {MakeTensor<float>({-0.5}), MakeTensor<float>({2})}), {-0.0});
}

// --- ClipByValue ---

TEST(ClipByValueTest, ScalarAndElementwiseBounds) {
  const Tensor t = MakeTensor<float>({1, 5, -3, 0, 2, 9}, TensorShape({2, 3}));
  ExpectExact<float>(RunOk("ClipByValue", {t, Tensor::Scalar<float>(0),
                                           Tensor::Scalar<float>(4)}),
                     {1, 4, 0, 0, 2, 4});
  // TensorFlow's values for a tensor bound on either side.
  ExpectExact<float>(
      RunOk("ClipByValue",
            {t, MakeTensor<float>({0, 0, -1, 1, 3, 3}, TensorShape({2, 3})),
             Tensor::Scalar<float>(4)}),
      {1, 4, -1, 1, 3, 4});
  ExpectExact<float>(RunOk("ClipByValue", {t, Tensor::Scalar<float>(-1),
                                           MakeTensor<float>({0, 0, 2, 1, 3, 10},
                                                      TensorShape({2, 3}))}),
                     {0, 0, -1, 0, 2, 9});
  const Tensor lo = MakeTensor<double>({-1, -2, 0, 5}), hi = MakeTensor<double>({1, 2, 0, 6});
  ExpectExact<double>(
      RunOk("ClipByValue", {MakeTensor<double>({-5, 1.5, 3, 4}), lo, hi}),
      {-1, 1.5, 0, 5});
  ExpectExact<int64_t>(RunOk("ClipByValue", {MakeTensor<int64_t>({-5, 0, 5, 10}),
                                             Tensor::Scalar<int64_t>(-1),
                                             Tensor::Scalar<int64_t>(6)}),
                       {-1, 0, 5, 6});
  ExpectExact<int32_t>(RunOk("ClipByValue", {Tensor::Scalar<int32_t>(7),
                                             Tensor::Scalar<int32_t>(0),
                                             Tensor::Scalar<int32_t>(3)}),
                       {3});
}

TEST(ClipByValueTest, CrossedBoundsNanAndLarge) {
  // min > max: the upper bound applies first, so everything becomes min.
  ExpectExact<float>(RunOk("ClipByValue", {MakeTensor<float>({5, -5, 1, kNaN}),
                                           Tensor::Scalar<float>(3),
                                           Tensor::Scalar<float>(1)}),
                     {3, 3, 3, kNaN});
  // A NaN in t stays; a NaN bound is ignored (TensorFlow's values).
  ExpectExact<float>(RunOk("ClipByValue", {MakeTensor<float>({5, -5, 1, kNaN}),
                                           Tensor::Scalar<float>(0),
                                           Tensor::Scalar<float>(2)}),
                     {2, 0, 1, kNaN});
  ExpectExact<float>(
      RunOk("ClipByValue", {MakeTensor<float>({5, -5, 1}), MakeTensor<float>({kNaN, 0, 0}),
                            Tensor::Scalar<float>(2)}),
      {2, 0, 1});
  std::vector<double> big, want;
  for (int i = 0; i < 50000; ++i) {
    big.push_back((i % 201) - 100.0);
    want.push_back(std::min(std::max(big.back(), -10.0), 25.0));
  }
  ExpectExact<float>(
      RunOk("ClipByValue", {MakeTensor<float>(big), Tensor::Scalar<float>(-10),
                            Tensor::Scalar<float>(25)}),
      want);
  const Tensor empty = RunOk(
      "ClipByValue", {Tensor(DT_FLOAT, TensorShape({0, 4})),
                      Tensor::Scalar<float>(0), Tensor::Scalar<float>(1)});
  EXPECT_EQ(empty.shape(), TensorShape({0, 4}));
}

TEST(ClipByValueTest, BoundsMustBeScalarsOrTShaped) {
  ExpectInvalid(
      RunOp("ClipByValue", {},
            {MakeTensor<float>({5, -5}, TensorShape({1, 2})), MakeTensor<float>({1, 2}),
             Tensor::Scalar<float>(2)}),
      "clip_value_min and clip_value_max must be either of the same shape as "
      "input, or a scalar. input shape: [1,2] clip_value_min shape: [2] "
      "clip_value_max shape: []");
  // A one-element bound that is not a scalar does not broadcast either.
  ExpectInvalid(
      RunOp("ClipByValue", {},
            {MakeTensor<float>({1, 2, 3}), Tensor::Scalar<float>(0), MakeTensor<float>({2})}),
      "clip_value_max shape: [1]");
}

// --- AddN on the wider dtypes ---

TEST(AddNTest, UnsignedAndComplexTypes) {
  auto check = [](auto zero) {
    using T = decltype(zero);
    const Tensor a = MakeTensor<T>({1, 2, 3, 4}, TensorShape({2, 2}));
    const Tensor b = MakeTensor<T>({10, 20, 30, 40}, TensorShape({2, 2}));
    ExpectExact<T>(RunOk("AddN", {a, b, a}), {12, 24, 36, 48},
                   DataTypeString(DataTypeToEnum<T>::value));
  };
  check(uint16_t{});
  check(uint32_t{});
  check(uint64_t{});
  ExpectExact<uint64_t>(
      RunOk("AddN", {MakeTensor<uint64_t>({4e18}), MakeTensor<uint64_t>({1e19})}), {1.4e19});
  const Tensor z = Tensor::FromVector<complex64>({{1, 2}, {-1, 0.5}});
  const Tensor sum =
      RunOk("AddN", {z, z, Tensor::FromVector<complex64>({{0, 1}, {2, 0}})});
  ASSERT_EQ(sum.dtype(), DT_COMPLEX64);
  EXPECT_EQ(sum.flat<complex64>()[0], complex64(2, 5));
  EXPECT_EQ(sum.flat<complex64>()[1], complex64(0, 1));
  const Tensor w = Tensor::FromVector<complex128>({{0.25, -1}});
  const Tensor sum128 = RunOk("AddN", {w, w, w, w});
  ASSERT_EQ(sum128.dtype(), DT_COMPLEX128);
  EXPECT_EQ(sum128.flat<complex128>()[0], complex128(1, -4));
}

}  // namespace
}  // namespace graphrun
