// Tests for Sum, Mean, Prod, Max, Min, ArgMax and ArgMin against a naive
// reference reduction in double and hand-computed values.
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/testing/kernel_test_util.h"

namespace graphrun {
namespace {

using testing::AttrB;
using testing::AttrType;
using testing::ExpectAllNear;
using testing::MakeTensor;
using testing::RandomDoubles;
using testing::RunOp;
using testing::ToDoubles;

Tensor Axes(const std::vector<int32_t>& axes) { return Tensor::FromVector(axes); }

absl::StatusOr<Tensor> Reduce(const std::string& op, const Tensor& x,
                              const Tensor& axes, bool keep_dims = false,
                              int threads = 1) {
  auto out = RunOp(op, {{"keep_dims", AttrB(keep_dims)}}, {x, axes}, threads);
  if (!out.ok()) return out.status();
  return (*out)[0];
}

// Reference reduction of `x` (row-major `dims`) over the axes in `reduced`.
std::vector<double> NaiveReduce(const std::string& op, const std::vector<double>& x,
                                const std::vector<int64_t>& dims,
                                const std::vector<bool>& reduced) {
  int64_t out_size = 1, count = 1;
  for (size_t d = 0; d < dims.size(); ++d) (reduced[d] ? count : out_size) *= dims[d];
  double init = 0;
  if (op == "Prod") init = 1;
  if (op == "Max") init = -std::numeric_limits<double>::infinity();
  if (op == "Min") init = std::numeric_limits<double>::infinity();
  std::vector<double> acc(out_size, init);
  std::vector<int64_t> pos(dims.size(), 0);
  for (size_t i = 0; i < x.size(); ++i) {
    int64_t o = 0;
    for (size_t d = 0; d < dims.size(); ++d) {
      if (!reduced[d]) o = o * dims[d] + pos[d];
    }
    if (op == "Sum" || op == "Mean") acc[o] += x[i];
    if (op == "Prod") acc[o] *= x[i];
    if (op == "Max") acc[o] = std::max(acc[o], x[i]);
    if (op == "Min") acc[o] = std::min(acc[o], x[i]);
    for (int d = static_cast<int>(dims.size()) - 1; d >= 0; --d) {
      if (++pos[d] < dims[d]) break;
      pos[d] = 0;
    }
  }
  if (op == "Mean") {
    for (double& v : acc) v /= count;
  }
  return acc;
}

const char* const kOps[] = {"Sum", "Mean", "Prod", "Max", "Min"};

TEST(ReductionTest, AllAxisSubsetsMatchNaive) {
  const std::vector<int64_t> dims = {3, 4, 5, 2};
  // Values near 1 keep Prod of 120 elements in range.
  const std::vector<double> x = RandomDoubles(120, 0.5, 1.5, 1);
  const Tensor xd = MakeTensor<double>(x, TensorShape({3, 4, 5, 2}));
  for (int mask = 0; mask < 16; ++mask) {
    std::vector<int32_t> axes;
    std::vector<bool> reduced(4);
    TensorShape kept, keep_dims_shape;
    for (int d = 0; d < 4; ++d) {
      reduced[d] = mask & (1 << d);
      if (reduced[d]) {
        axes.push_back(d % 2 ? d - 4 : d);  // mix negative axes in
        keep_dims_shape.AddDim(1);
      } else {
        kept.AddDim(dims[d]);
        keep_dims_shape.AddDim(dims[d]);
      }
    }
    for (const char* op : kOps) {
      const std::string what = std::string(op) + " mask " + std::to_string(mask);
      auto out = Reduce(op, xd, Axes(axes));
      ASSERT_TRUE(out.ok()) << what << ": " << out.status();
      EXPECT_EQ(out->shape(), kept) << what;
      ExpectAllNear(ToDoubles<double>(*out), NaiveReduce(op, x, dims, reduced), 1e-12, what);
      out = Reduce(op, xd, Axes(axes), /*keep_dims=*/true, /*threads=*/4);
      ASSERT_TRUE(out.ok()) << what << ": " << out.status();
      EXPECT_EQ(out->shape(), keep_dims_shape) << what;
      ExpectAllNear(ToDoubles<double>(*out), NaiveReduce(op, x, dims, reduced), 1e-12, what);
    }
  }
}

TEST(ReductionTest, SizeOneDimsAndLargeThreaded) {
  struct Case {
    std::vector<int64_t> dims;
    std::vector<int32_t> axes;
  };
  const std::vector<Case> cases = {
      {{2, 1, 3, 1, 5}, {1, 4}},
      {{2, 1, 3, 1, 5}, {1, 3}},  // only size-1 axes: no reduction at all
      {{1, 1}, {0, 1}},
      {{40, 50, 30}, {0}},
      {{40, 50, 30}, {1}},
      {{40, 50, 30}, {2}},
      {{40, 50, 30}, {0, 2}},
      {{40, 50, 30}, {0, 1, 2}},
      {{6, 7, 8, 9, 10}, {0, 2, 4}},
      {{6, 7, 8, 9, 10}, {1, 3}},
  };
  for (const Case& c : cases) {
    int64_t n = 1;
    for (int64_t d : c.dims) n *= d;
    std::vector<bool> reduced(c.dims.size(), false);
    for (int32_t a : c.axes) reduced[a] = true;
    const std::vector<double> x = RandomDoubles(n, -1, 1, 2);
    Tensor xf = MakeTensor<float>(x, TensorShape::FromDims(c.dims).value());
    const std::vector<double> xr = ToDoubles<float>(xf);
    for (const char* op : {"Sum", "Mean", "Max", "Min"}) {
      const std::string what = std::string(op) + " " + xf.shape().DebugString() +
                               " axes " + ::testing::PrintToString(c.axes);
      auto out = Reduce(op, xf, Axes(c.axes), false, 4);
      ASSERT_TRUE(out.ok()) << what << ": " << out.status();
      ExpectAllNear(ToDoubles<float>(*out), NaiveReduce(op, xr, c.dims, reduced), 2e-5,
                 what);
    }
  }
}

template <typename T>
class ReductionTypedTest : public ::testing::Test {};
using RealTypes = ::testing::Types<float, double, half, bfloat16, int8_t, uint8_t,
                                   int16_t, uint16_t, int32_t, uint32_t, int64_t,
                                   uint64_t>;
TYPED_TEST_SUITE(ReductionTypedTest, RealTypes);

TYPED_TEST(ReductionTypedTest, HandValues) {
  using T = TypeParam;
  // [[1, 5, 3], [4, 2, 6]]
  const Tensor x = MakeTensor<T>({1, 5, 3, 4, 2, 6}, TensorShape({2, 3}));
  struct Case {
    const char* op;
    std::vector<int32_t> axes;
    std::vector<double> want;
  };
  const bool is_int = std::is_integral_v<T>;
  const std::vector<Case> cases = {
      {"Sum", {0}, {5, 7, 9}},
      {"Sum", {1}, {9, 12}},
      {"Sum", {-1, 0}, {21}},
      {"Prod", {1}, {15, 48}},
      {"Prod", {0}, {4, 10, 18}},
      {"Max", {0}, {4, 5, 6}},
      {"Max", {1}, {5, 6}},
      {"Min", {-2}, {1, 2, 3}},
      {"Min", {1}, {1, 2}},
      {"Mean", {0}, {2.5, 3.5, 4.5}},
      {"Mean", {1}, {3, 4}},
      {"Mean", {0, 1}, {3.5}},
  };
  for (const Case& c : cases) {
    auto out = Reduce(c.op, x, Axes(c.axes));
    ASSERT_TRUE(out.ok()) << c.op << ": " << out.status();
    std::vector<double> want = c.want;
    // Integer Mean truncates.
    if (is_int && std::string(c.op) == "Mean") {
      for (double& v : want) v = std::trunc(v);
    }
    EXPECT_EQ(ToDoubles<T>(*out), want) << c.op << " " << ::testing::PrintToString(c.axes);
  }
  // int64 reduction_indices, keep_dims, scalar axis.
  auto out = RunOp("Sum", {{"keep_dims", AttrB(true)}},
                   {x, Tensor::FromVector<int64_t>({1})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), TensorShape({2, 1}));
  EXPECT_EQ(ToDoubles<T>((*out)[0]), (std::vector<double>{9, 12}));
  out = RunOp("Max", {}, {x, Tensor::Scalar<int32_t>(-1)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), TensorShape({2}));
  EXPECT_EQ(ToDoubles<T>((*out)[0]), (std::vector<double>{5, 6}));
}

TYPED_TEST(ReductionTypedTest, EmptyReductionsGiveIdentity) {
  using T = TypeParam;
  const Tensor x(DataTypeToEnum<T>::value, TensorShape({2, 0}));
  const double lowest = std::is_integral_v<T>
                            ? static_cast<double>(std::numeric_limits<T>::lowest())
                            : -std::numeric_limits<double>::infinity();
  const double highest = std::is_integral_v<T>
                             ? static_cast<double>(std::numeric_limits<T>::max())
                             : std::numeric_limits<double>::infinity();
  struct Case { const char* op; double want; };
  for (Case c : {Case{"Sum", 0}, Case{"Prod", 1}, Case{"Max", lowest},
                 Case{"Min", highest}}) {
    auto out = Reduce(c.op, x, Axes({1}));
    ASSERT_TRUE(out.ok()) << c.op << ": " << out.status();
    EXPECT_EQ(out->shape(), TensorShape({2}));
    EXPECT_EQ(ToDoubles<T>(*out), (std::vector<double>{c.want, c.want})) << c.op;
  }
  auto out = Reduce("Mean", x, Axes({0, 1}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->shape(), TensorShape());
  const double mean = ToDoubles<T>(*out)[0];
  if (std::is_integral_v<T>) {
    EXPECT_EQ(mean, 0);
  } else {
    EXPECT_TRUE(std::isnan(mean)) << mean;
  }
  // Empty output: nothing to compute.
  out = Reduce("Sum", x, Axes({0}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->shape(), TensorShape({0}));
}

TEST(ReductionTest, ComplexSumMeanProd) {
  for (DataType dt : {DT_COMPLEX64, DT_COMPLEX128}) {
    auto check = [&](auto zero) {
      using T = decltype(zero);
      const Tensor x = Tensor::FromVector<T>({{1, 2}, {3, -1}, {0, 1}, {2, 2}},
                                             TensorShape({2, 2}));
      auto out = Reduce("Sum", x, Axes({0}));
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_EQ(out->flat<T>()[0], T(1, 3));
      EXPECT_EQ(out->flat<T>()[1], T(5, 1));
      out = Reduce("Mean", x, Axes({1}));
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_EQ(out->flat<T>()[0], T(2, 0.5));
      EXPECT_EQ(out->flat<T>()[1], T(1, 1.5));
      out = Reduce("Prod", x, Axes({1}));
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_EQ(out->flat<T>()[0], T(5, 5));    // (1+2i)(3-i)
      EXPECT_EQ(out->flat<T>()[1], T(-2, 2));   // i(2+2i)
      out = Reduce("Mean", Tensor(dt, TensorShape({0})), Axes({0}));
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_EQ(out->flat<T>()[0], T(0, 0));
    };
    if (dt == DT_COMPLEX64) check(complex64{}); else check(complex128{});
  }
}

TEST(ReductionTest, IntegerMeanAccumulatesWide) {
  // TensorFlow sums int32 in int64 for Mean; no overflow, truncation to 0.
  const Tensor x = Tensor::FromVector<int32_t>({1 << 30, 1 << 30, 1 << 30, -3});
  auto out = Reduce("Mean", x, Axes({0}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->scalar<int32_t>(), static_cast<int32_t>((3LL * (1 << 30) - 3) / 4));
  out = Reduce("Mean", Tensor::FromVector<int8_t>({-1, -2}), Axes({0}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->scalar<int8_t>(), -1);
  out = Reduce("Mean", Tensor::FromVector<uint8_t>({200, 250}), Axes({0}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->scalar<uint8_t>(), 225);
}

TEST(ReductionTest, HalfSumAccumulatesInFloat) {
  // 4096 ones: a half accumulator would stall at 2048.
  const Tensor x = MakeTensor<half>(std::vector<double>(4096, 1.0), TensorShape({4096}));
  auto out = Reduce("Sum", x, Axes({0}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(static_cast<float>(out->scalar<half>()), 4096.f);
  out = Reduce("Mean", x, Axes({0}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(static_cast<float>(out->scalar<half>()), 1.f);
}

TEST(ReductionTest, MaxMinPropagateNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor x = Tensor::FromVector<float>({1, nan, 3, 4}, TensorShape({2, 2}));
  for (const char* op : {"Max", "Min"}) {
    auto out = Reduce(op, x, Axes({1}));
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_TRUE(std::isnan(out->flat<float>()[0])) << op;
    EXPECT_EQ(out->flat<float>()[1], std::string(op) == "Max" ? 4.f : 3.f);
  }
}

TEST(ReductionTest, ScalarsAndEmptyAxes) {
  auto out = Reduce("Sum", Tensor::Scalar<float>(3), Axes({}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->shape(), TensorShape());
  EXPECT_EQ(out->scalar<float>(), 3.f);
  // No axes: identity with the same shape.
  const Tensor x = Tensor::FromVector<int32_t>({1, 2, 3, 4}, TensorShape({2, 2}));
  out = Reduce("Prod", x, Axes({}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->shape(), TensorShape({2, 2}));
  EXPECT_EQ(ToDoubles<int32_t>(*out), (std::vector<double>{1, 2, 3, 4}));
  out = Reduce("Sum", Tensor::Scalar<float>(3), Axes({0}));
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(),
            "Invalid reduction dimension 0 for input with 0 dimensions.");
}

TEST(ReductionTest, Errors) {
  const Tensor x(DT_FLOAT, TensorShape({2, 3}));
  auto out = Reduce("Sum", x, Axes({3}));
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(out.status().message(),
            "Invalid reduction dimension 3 for input with 2 dimensions.");
  out = Reduce("Max", x, Axes({-3}));
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(),
            "Invalid reduction dimension -3 for input with 2 dimensions.");
  out = Reduce("Mean", x, Axes({0, -2}));
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(),
            "Invalid reduction arguments: Axes contains duplicate dimension: 0");
}

// --- ArgMax / ArgMin ---

absl::StatusOr<Tensor> Arg(const std::string& op, const Tensor& x,
                           const Tensor& dim, DataType out_type = DT_INT64,
                           int threads = 1) {
  auto out = RunOp(op, {{"output_type", AttrType(out_type)}}, {x, dim}, threads);
  if (!out.ok()) return out.status();
  return (*out)[0];
}

std::vector<int64_t> Int64s(const Tensor& t) {
  auto v = t.flat<int64_t>();
  return std::vector<int64_t>(v.begin(), v.end());
}

template <typename T>
class ArgTypedTest : public ::testing::Test {};
TYPED_TEST_SUITE(ArgTypedTest, RealTypes);

TYPED_TEST(ArgTypedTest, HandValuesAndTies) {
  using T = TypeParam;
  // [[1, 5, 5], [6, 2, 6]]
  const Tensor x = MakeTensor<T>({1, 5, 5, 6, 2, 6}, TensorShape({2, 3}));
  struct Case { const char* op; int32_t dim; std::vector<int64_t> want; };
  for (const Case& c : {Case{"ArgMax", 0, {1, 0, 1}}, Case{"ArgMax", 1, {1, 0}},
                        Case{"ArgMax", -1, {1, 0}}, Case{"ArgMin", 0, {0, 1, 0}},
                        Case{"ArgMin", -2, {0, 1, 0}}, Case{"ArgMin", 1, {0, 1}}}) {
    auto out = Arg(c.op, x, Tensor::Scalar<int32_t>(c.dim));
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ(out->dtype(), DT_INT64);
    EXPECT_EQ(Int64s(*out), c.want)
        << c.op << " " << c.dim;
  }
}

TEST(ArgTest, OutputTypesIndexTypesAndRanks) {
  const Tensor x = Tensor::FromVector<float>({3, 9, 9, 1});
  auto out = Arg("ArgMax", x, Tensor::Scalar<int64_t>(0), DT_INT32);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->shape(), TensorShape());
  EXPECT_EQ(out->scalar<int32_t>(), 1);
  out = Arg("ArgMin", x, Tensor::Scalar<int16_t>(-1), DT_INT16);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->scalar<int16_t>(), 3);
  out = Arg("ArgMin", x, Tensor::Scalar<int32_t>(0), DT_UINT16);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->scalar<uint16_t>(), 3);

  const Tensor b = Tensor::FromVector<bool>({false, true, true, false},
                                            TensorShape({2, 2}));
  out = Arg("ArgMax", b, Tensor::Scalar<int32_t>(1));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->flat<int64_t>()[0], 1);
  EXPECT_EQ(out->flat<int64_t>()[1], 0);

  // Rank 4, middle axis, over the threading threshold.
  const std::vector<int64_t> dims = {7, 30, 11, 13};
  const std::vector<double> v = RandomDoubles(7 * 30 * 11 * 13, -1, 1, 9);
  const Tensor big = MakeTensor<double>(v, TensorShape({7, 30, 11, 13}));
  for (const char* op : {"ArgMax", "ArgMin"}) {
    out = Arg(op, big, Tensor::Scalar<int32_t>(1), DT_INT32, 4);
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ(out->shape(), TensorShape({7, 11, 13}));
    int failures = 0;
    for (int64_t o = 0; o < 7; ++o) {
      for (int64_t i = 0; i < 11 * 13; ++i) {
        int64_t best = 0;
        for (int64_t j = 1; j < 30; ++j) {
          const double cand = v[(o * 30 + j) * 143 + i];
          const double cur = v[(o * 30 + best) * 143 + i];
          if (std::string(op) == "ArgMax" ? cand > cur : cand < cur) best = j;
        }
        if (out->flat<int32_t>()[o * 143 + i] != best) ++failures;
      }
    }
    EXPECT_EQ(failures, 0) << op;
  }
}

TEST(ArgTest, EmptyAndErrors) {
  auto out = Arg("ArgMax", Tensor(DT_FLOAT, TensorShape({0, 3})),
                 Tensor::Scalar<int32_t>(1));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->shape(), TensorShape({0}));

  out = Arg("ArgMax", Tensor(DT_FLOAT, TensorShape({2, 0})),
            Tensor::Scalar<int32_t>(1));
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(out.status().message(), "Reduction axis 1 is empty in shape [2,0]");
  out = Arg("ArgMin", Tensor(DT_FLOAT, TensorShape({2, 3})),
            Tensor::Scalar<int32_t>(2));
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(),
            "Expected dimension in the range [-2, 2), but got 2");
  out = Arg("ArgMin", Tensor::Scalar<float>(1), Tensor::Scalar<int32_t>(0));
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(),
            "Expected dimension in the range [0, 0), but got 0");
  out = Arg("ArgMax", Tensor(DT_FLOAT, TensorShape({2, 3})),
            Tensor::FromVector<int32_t>({0}));
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(),
            "dim must be a scalar, but received tensor of shape: [1]");
}

TEST(ReductionTest, AllAndAny) {
  // [[T, F, T], [T, T, T]]
  const Tensor x = Tensor::FromVector<bool>({true, false, true, true, true, true},
                                            TensorShape({2, 3}));
  auto bools = [](const Tensor& t) {
    return std::vector<bool>(t.flat<bool>().begin(), t.flat<bool>().end());
  };
  auto all_rows = Reduce("All", x, Axes({1}));
  ASSERT_TRUE(all_rows.ok()) << all_rows.status();
  EXPECT_EQ(bools(*all_rows), (std::vector<bool>{false, true}));
  auto all_cols = Reduce("All", x, Axes({0}), /*keep_dims=*/true);
  ASSERT_TRUE(all_cols.ok()) << all_cols.status();
  EXPECT_EQ(all_cols->shape(), TensorShape({1, 3}));
  EXPECT_EQ(bools(*all_cols), (std::vector<bool>{true, false, true}));
  auto any_all = Reduce("Any", x, Axes({0, 1}));
  ASSERT_TRUE(any_all.ok()) << any_all.status();
  EXPECT_EQ(bools(*any_all), (std::vector<bool>{true}));
  const Tensor f = Tensor::FromVector<bool>({false, false});
  EXPECT_EQ(bools(*Reduce("Any", f, Axes({0}))), (std::vector<bool>{false}));
  EXPECT_EQ(bools(*Reduce("All", f, Axes({0}))), (std::vector<bool>{false}));
  // Empty reductions give the identities: All true, Any false.
  const Tensor empty(DT_BOOL, TensorShape({0, 2}));
  EXPECT_EQ(bools(*Reduce("All", empty, Axes({0}))), (std::vector<bool>{true, true}));
  EXPECT_EQ(bools(*Reduce("Any", empty, Axes({0}))), (std::vector<bool>{false, false}));
}

}  // namespace
}  // namespace graphrun
