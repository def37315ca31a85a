// Tests for MatMul, BatchMatMulV2 and Gemm against a naive triple loop in
// double precision on random inputs.
#include <complex>
#include <cstdint>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cpu/gemm.h"
#include "kernels/device_base.h"
#include "kernels/testing/kernel_test_util.h"

namespace graphrun {
namespace {

using testing::AttrB;
using testing::RunOp;

template <typename T>
constexpr bool kIsComplex =
    std::is_same_v<T, complex64> || std::is_same_v<T, complex128>;

// Double-precision twin of T (complex stays complex).
template <typename T>
using Wide = std::conditional_t<kIsComplex<T>, complex128, double>;

template <typename T>
Wide<T> ToWide(T x) {
  if constexpr (kIsComplex<T>) {
    return complex128(x.real(), x.imag());
  } else {
    return static_cast<double>(x);
  }
}

template <typename T>
T RandomValue(std::mt19937* rng) {
  std::uniform_int_distribution<int> ints(-10, 10);
  std::uniform_real_distribution<double> reals(-1.0, 1.0);
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(ints(*rng));
  } else if constexpr (kIsComplex<T>) {
    using R = typename T::value_type;
    return T(static_cast<R>(reals(*rng)), static_cast<R>(reals(*rng)));
  } else {
    return static_cast<T>(reals(*rng));
  }
}

template <typename T>
Tensor RandomTensor(const TensorShape& shape, std::mt19937* rng) {
  std::vector<T> v(shape.num_elements());
  for (T& x : v) x = RandomValue<T>(rng);
  return Tensor::FromVector(v, shape);
}

// Relative tolerance per element type, scaled by sum_k |a||b|.
template <typename T>
double Tolerance() {
  if constexpr (std::is_integral_v<T>) return 0;
  if constexpr (std::is_same_v<T, half>) return 2e-3;
  if constexpr (std::is_same_v<T, bfloat16>) return 1.6e-2;
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, complex64>)
    return 1e-5;
  return 1e-12;
}

// Reference: C = op(A) op(B) for row-major A, B; op conjugates too when
// `conjugate` (adjoint) and T is complex.
template <typename T>
void ExpectMatchesNaive(const T* a, const T* b, const T* c, bool ta, bool tb,
                        int64_t m, int64_t n, int64_t k, bool conjugate,
                        const std::string& what) {
  int failures = 0;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      Wide<T> sum = 0;
      double scale = 0;
      for (int64_t p = 0; p < k; ++p) {
        Wide<T> x = ToWide(ta ? a[p * m + i] : a[i * k + p]);
        Wide<T> y = ToWide(tb ? b[j * k + p] : b[p * n + j]);
        if constexpr (kIsComplex<T>) {
          if (conjugate && ta) x = std::conj(x);
          if (conjugate && tb) y = std::conj(y);
        }
        sum += x * y;
        scale += std::abs(x) * std::abs(y);
      }
      const double err = std::abs(ToWide(c[i * n + j]) - sum);
      if (err > Tolerance<T>() * scale + 1e-30 && ++failures <= 5) {
        ADD_FAILURE() << what << " at (" << i << "," << j << "): got "
                      << ToWide(c[i * n + j]) << ", want " << sum;
      }
    }
  }
  EXPECT_EQ(failures, 0) << what;
}

template <typename T>
class MatMulTypedTest : public ::testing::Test {};
using MatMulTypes = ::testing::Types<float, double, half, bfloat16, int32_t,
                                     int64_t, complex64, complex128>;
TYPED_TEST_SUITE(MatMulTypedTest, MatMulTypes);

TYPED_TEST(MatMulTypedTest, MatchesNaiveForAllTransposes) {
  using T = TypeParam;
  std::mt19937 rng(42);
  struct Size { int64_t m, n, k; };
  // 65x67x66 exceeds 64^3 and takes the threaded contraction.
  for (Size s : {Size{1, 1, 1}, Size{3, 5, 7}, Size{65, 67, 66}}) {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        for (int threads : {1, 4}) {
          Tensor a = RandomTensor<T>(
              ta ? TensorShape({s.k, s.m}) : TensorShape({s.m, s.k}), &rng);
          Tensor b = RandomTensor<T>(
              tb ? TensorShape({s.n, s.k}) : TensorShape({s.k, s.n}), &rng);
          auto out = RunOp("MatMul",
                           {{"transpose_a", AttrB(ta)}, {"transpose_b", AttrB(tb)}},
                           {a, b}, threads);
          ASSERT_TRUE(out.ok()) << out.status();
          const Tensor& c = (*out)[0];
          ASSERT_EQ(c.shape(), TensorShape({s.m, s.n}));
          ExpectMatchesNaive<T>(a.flat<T>().data(), b.flat<T>().data(),
                                c.flat<T>().data(), ta, tb, s.m, s.n, s.k,
                                /*conjugate=*/false,
                                ::testing::PrintToString(std::vector<int64_t>{
                                    s.m, s.n, s.k, ta, tb, threads}));
        }
      }
    }
  }
}

TYPED_TEST(MatMulTypedTest, GemmLibraryPathMatchesNaive) {
  using T = TypeParam;
  std::mt19937 rng(7);
  auto device = testing::MakeTestCpuDevice(4);
  const int64_t m = 70, n = 66, k = 65;
  Tensor a = RandomTensor<T>(TensorShape({k, m}), &rng);
  Tensor b = RandomTensor<T>(TensorShape({k, n}), &rng);
  Tensor c(DataTypeToEnum<T>::value, TensorShape({m, n}));
  for (const Eigen::ThreadPoolDevice* d :
       {device->eigen_cpu_device(),
        static_cast<const Eigen::ThreadPoolDevice*>(nullptr)}) {
    Gemm<T>(d, /*transpose_a=*/true, /*transpose_b=*/false, m, n, k,
            a.flat<T>().data(), b.flat<T>().data(), c.flat<T>().data());
    ExpectMatchesNaive<T>(a.flat<T>().data(), b.flat<T>().data(),
                          c.flat<T>().data(), true, false, m, n, k, false,
                          d ? "pool" : "no pool");
  }
}

// float runs on oneDNN in pieces: by columns of C when there are enough,
// by rows otherwise, one piece when small; a few rows against 128 KB of b
// or more (a dense layer at batch 2) stream b once (skinny_gemm.h) when
// neither operand is transposed.
TEST(MatMulTest, FloatPiecesMatchNaive) {
  std::mt19937 rng(11);
  auto device = testing::MakeTestCpuDevice(4);
  struct Size { int64_t m, n, k; };
  for (Size s : {Size{2, 300, 513}, Size{2, 131, 2049}, Size{97, 40, 200},
                 Size{9, 9, 9}, Size{1, 1000, 300}, Size{8, 517, 160},
                 Size{5, 64, 1024}, Size{9, 300, 513}}) {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        Tensor a = RandomTensor<float>(
            ta ? TensorShape({s.k, s.m}) : TensorShape({s.m, s.k}), &rng);
        Tensor b = RandomTensor<float>(
            tb ? TensorShape({s.n, s.k}) : TensorShape({s.k, s.n}), &rng);
        Tensor c(DT_FLOAT, TensorShape({s.m, s.n}));
        Gemm<float>(device->eigen_cpu_device(), ta, tb, s.m, s.n, s.k,
                    a.flat<float>().data(), b.flat<float>().data(),
                    c.flat<float>().data());
        ExpectMatchesNaive<float>(a.flat<float>().data(), b.flat<float>().data(),
                                  c.flat<float>().data(), ta, tb, s.m, s.n, s.k,
                                  false,
                                  ::testing::PrintToString(std::vector<int64_t>{
                                      s.m, s.n, s.k, ta, tb}));
      }
    }
  }
}

TEST(MatMulTest, HandValues) {
  Tensor a = Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, TensorShape({2, 3}));
  Tensor b = Tensor::FromVector<float>({7, 8, 9, 10, 11, 12}, TensorShape({3, 2}));
  auto out = RunOp("MatMul", {}, {a, b});
  ASSERT_TRUE(out.ok()) << out.status();
  Tensor want = Tensor::FromVector<float>({58, 64, 139, 154}, TensorShape({2, 2}));
  std::string why;
  EXPECT_TRUE(testing::AllClose((*out)[0], want, 0, 0, &why)) << why;
  // transpose_a of the same buffer reads it as [3,2]^T.
  out = RunOp("MatMul", {{"transpose_a", AttrB(true)}, {"transpose_b", AttrB(true)}},
              {b, a});
  ASSERT_TRUE(out.ok()) << out.status();
  // b^T (2x3) * a^T (3x2) = (a b)^T
  want = Tensor::FromVector<float>({58, 139, 64, 154}, TensorShape({2, 2}));
  EXPECT_TRUE(testing::AllClose((*out)[0], want, 0, 0, &why)) << why;
}

TEST(MatMulTest, ComplexTransposeDoesNotConjugate) {
  Tensor a = Tensor::FromVector<complex64>({{1, 2}}, TensorShape({1, 1}));
  Tensor b = Tensor::FromVector<complex64>({{3, -1}}, TensorShape({1, 1}));
  auto out = RunOp("MatMul", {{"transpose_a", AttrB(true)}}, {a, b});
  ASSERT_TRUE(out.ok()) << out.status();
  // (1+2i)(3-i) = 5+5i
  EXPECT_EQ((*out)[0].flat<complex64>()[0], complex64(5, 5));
}

TEST(MatMulTest, EmptyInnerDimensionGivesZeros) {
  Tensor a(DT_FLOAT, TensorShape({2, 0}));
  Tensor b(DT_FLOAT, TensorShape({0, 3}));
  for (int threads : {1, 4}) {
    auto out = RunOp("MatMul", {}, {a, b}, threads);
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ((*out)[0].shape(), TensorShape({2, 3}));
    for (float v : (*out)[0].flat<float>()) EXPECT_EQ(v, 0.f);
  }
  // Garbage in a reused output buffer must not leak: int64 too.
  Tensor ai(DT_INT64, TensorShape({0, 4}));
  Tensor bi(DT_INT64, TensorShape({0, 2}));
  auto out = RunOp("MatMul", {{"transpose_a", AttrB(true)}}, {ai, bi});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ((*out)[0].shape(), TensorShape({4, 2}));
  for (int64_t v : (*out)[0].flat<int64_t>()) EXPECT_EQ(v, 0);
}

TEST(MatMulTest, EmptyOuterDimensions) {
  Tensor a(DT_DOUBLE, TensorShape({0, 3}));
  Tensor b(DT_DOUBLE, TensorShape({3, 5}));
  auto out = RunOp("MatMul", {}, {a, b});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), TensorShape({0, 5}));
  out = RunOp("MatMul", {{"transpose_b", AttrB(true)}},
              {Tensor(DT_DOUBLE, TensorShape({2, 3})),
               Tensor(DT_DOUBLE, TensorShape({0, 3}))});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), TensorShape({2, 0}));
}

TEST(MatMulTest, Errors) {
  auto out = RunOp("MatMul", {},
                   {Tensor(DT_FLOAT, TensorShape({2, 3})),
                    Tensor(DT_FLOAT, TensorShape({4, 5}))});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(out.status().message(),
            "Matrix size-incompatible: In[0]: [2,3], In[1]: [4,5]");
  // With transpose_b the inner dims are 3 and 5.
  out = RunOp("MatMul", {{"transpose_b", AttrB(true)}},
              {Tensor(DT_FLOAT, TensorShape({2, 3})),
               Tensor(DT_FLOAT, TensorShape({3, 5}))});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(),
            "Matrix size-incompatible: In[0]: [2,3], In[1]: [3,5]");
  out = RunOp("MatMul", {},
              {Tensor(DT_FLOAT, TensorShape({2, 3, 1})),
               Tensor(DT_FLOAT, TensorShape({3, 5}))});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(),
            "In[0] is not a matrix. Instead it has shape [2,3,1]");
  out = RunOp("MatMul", {},
              {Tensor(DT_FLOAT, TensorShape({2, 3})), Tensor::Scalar<float>(1)});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(),
            "In[1] is not a matrix. Instead it has shape []");
}

// --- BatchMatMulV2 ---

// Checks out[b] = op(x[bx]) op(y[by]) for every broadcast batch index.
template <typename T>
void CheckBatchMatMul(const TensorShape& xs, const TensorShape& ys, bool adj_x,
                      bool adj_y, const TensorShape& want_shape, int threads,
                      std::mt19937* rng) {
  Tensor x = RandomTensor<T>(xs, rng);
  Tensor y = RandomTensor<T>(ys, rng);
  auto out = RunOp("BatchMatMulV2", {{"adj_x", AttrB(adj_x)}, {"adj_y", AttrB(adj_y)}},
                   {x, y}, threads);
  ASSERT_TRUE(out.ok()) << out.status();
  const Tensor& z = (*out)[0];
  ASSERT_EQ(z.shape(), want_shape);
  const int xr = xs.dims(), yr = ys.dims(), zr = want_shape.dims();
  const int64_t m = want_shape.dim_size(zr - 2), n = want_shape.dim_size(zr - 1);
  const int64_t k = adj_x ? xs.dim_size(xr - 2) : xs.dim_size(xr - 1);
  const int64_t batch = want_shape.num_elements() / std::max<int64_t>(m * n, 1);
  for (int64_t b = 0; b < batch; ++b) {
    // Unravel b over the output batch dims, then index x and y with
    // broadcasting (size-1 dims read index 0).
    int64_t rem = b, xi = 0, yi = 0, xstride = 1, ystride = 1;
    for (int d = zr - 3; d >= 0; --d) {
      const int64_t pos = rem % want_shape.dim_size(d);
      rem /= want_shape.dim_size(d);
      const int xd = d - (zr - xr), yd = d - (zr - yr);
      if (xd >= 0) {
        if (xs.dim_size(xd) != 1) xi += pos * xstride;
        xstride *= xs.dim_size(xd);
      }
      if (yd >= 0) {
        if (ys.dim_size(yd) != 1) yi += pos * ystride;
        ystride *= ys.dim_size(yd);
      }
    }
    ExpectMatchesNaive<T>(x.flat<T>().data() + xi * m * k,
                          y.flat<T>().data() + yi * k * n,
                          z.flat<T>().data() + b * m * n, adj_x, adj_y, m, n, k,
                          /*conjugate=*/true,
                          "batch " + std::to_string(b) + " " + xs.DebugString() +
                              " x " + ys.DebugString());
  }
}

template <typename T>
class BatchMatMulTypedTest : public ::testing::Test {};
using BatchMatMulTypes = ::testing::Types<float, double, half, bfloat16, int16_t,
                                          int32_t, int64_t, complex64, complex128>;
TYPED_TEST_SUITE(BatchMatMulTypedTest, BatchMatMulTypes);

TYPED_TEST(BatchMatMulTypedTest, BroadcastsAndAdjoints) {
  using T = TypeParam;
  std::mt19937 rng(3);
  for (bool adj_x : {false, true}) {
    for (bool adj_y : {false, true}) {
      const TensorShape xs = adj_x ? TensorShape({2, 1, 4, 3}) : TensorShape({2, 1, 3, 4});
      const TensorShape ys = adj_y ? TensorShape({3, 5, 4}) : TensorShape({3, 4, 5});
      CheckBatchMatMul<T>(xs, ys, adj_x, adj_y, TensorShape({2, 3, 3, 5}), 1, &rng);
    }
  }
  // Rank-2 against batched; batch dims of 1 on both sides.
  CheckBatchMatMul<T>(TensorShape({3, 4}), TensorShape({2, 4, 2}), false, false,
                      TensorShape({2, 3, 2}), 1, &rng);
  CheckBatchMatMul<T>(TensorShape({1, 2, 3, 4}), TensorShape({3, 1, 4, 2}), false,
                      false, TensorShape({3, 2, 3, 2}), 4, &rng);
}

TYPED_TEST(BatchMatMulTypedTest, ThreadedPaths) {
  using T = TypeParam;
  std::mt19937 rng(5);
  // Many small products: spread over the pool one matrix per task.
  CheckBatchMatMul<T>(TensorShape({100, 16, 16}), TensorShape({100, 16, 16}),
                      false, true, TensorShape({100, 16, 16}), 4, &rng);
  // Few big products: threaded Gemm inside.
  CheckBatchMatMul<T>(TensorShape({2, 66, 65}), TensorShape({66, 67}), true,
                      false, TensorShape({2, 65, 67}), 4, &rng);
}

TEST(BatchMatMulTest, ComplexAdjointConjugates) {
  Tensor x = Tensor::FromVector<complex64>({{1, 2}}, TensorShape({1, 1, 1}));
  Tensor y = Tensor::FromVector<complex64>({{3, -1}}, TensorShape({1, 1}));
  auto out = RunOp("BatchMatMulV2", {{"adj_x", AttrB(true)}}, {x, y});
  ASSERT_TRUE(out.ok()) << out.status();
  // conj(1+2i)(3-i) = (1-2i)(3-i) = 1-7i
  EXPECT_EQ((*out)[0].flat<complex64>()[0], complex64(1, -7));
  EXPECT_EQ((*out)[0].shape(), TensorShape({1, 1, 1}));
  out = RunOp("BatchMatMulV2", {{"adj_x", AttrB(true)}, {"adj_y", AttrB(true)}},
              {x, y});
  ASSERT_TRUE(out.ok()) << out.status();
  // (1-2i)(3+i) = 5-5i
  EXPECT_EQ((*out)[0].flat<complex64>()[0], complex64(5, -5));
}

TEST(BatchMatMulTest, Empty) {
  // k = 0: zeros.
  auto out = RunOp("BatchMatMulV2", {},
                   {Tensor(DT_FLOAT, TensorShape({2, 3, 0})),
                    Tensor(DT_FLOAT, TensorShape({0, 4}))});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ((*out)[0].shape(), TensorShape({2, 3, 4}));
  for (float v : (*out)[0].flat<float>()) EXPECT_EQ(v, 0.f);
  // Empty batch broadcast against 1.
  out = RunOp("BatchMatMulV2", {},
              {Tensor(DT_FLOAT, TensorShape({0, 3, 2})),
               Tensor(DT_FLOAT, TensorShape({1, 2, 4}))});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), TensorShape({0, 3, 4}));
}

TEST(BatchMatMulTest, Errors) {
  auto out = RunOp("BatchMatMulV2", {},
                   {Tensor(DT_FLOAT, TensorShape({2, 2, 3})),
                    Tensor(DT_FLOAT, TensorShape({2, 4, 5}))});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(out.status().message(),
            "Matrix size-incompatible: In[0]: [2,2,3], In[1]: [2,4,5]");
  out = RunOp("BatchMatMulV2", {},
              {Tensor(DT_FLOAT, TensorShape({2, 2, 3})),
               Tensor(DT_FLOAT, TensorShape({3, 3, 5}))});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(),
            "In[0] and In[1] must have compatible batch dimensions: [2,2,3] vs. "
            "[3,3,5]");
  out = RunOp("BatchMatMulV2", {},
              {Tensor(DT_FLOAT, TensorShape({3})),
               Tensor(DT_FLOAT, TensorShape({3, 5}))});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(), "In[0] ndims must be >= 2: 1");
  out = RunOp("BatchMatMulV2", {},
              {Tensor(DT_FLOAT, TensorShape({3, 3})), Tensor::Scalar<float>(2)});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(), "In[1] ndims must be >= 2: 0");
}

}  // namespace
}  // namespace graphrun
