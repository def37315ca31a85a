// Expected values: TensorFlow 2.21, checked by make_array_pad_ops_test_values.py beside this file.
// Tests for Pad, PadV2 and MirrorPad: values computed once with
// TensorFlow 2.21 (tf.raw_ops) and written here, every dtype against an
// index-walk reference, zero-size dims, the largest REFLECT padding, and
// bad paddings.
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "kernels/cpu/array_test_support.h"

namespace graphrun {
namespace array_test {
namespace {

using testing::AttrS;

Tensor Paddings(const std::vector<int32_t>& v) {
  return Mat<int32_t>(v, TensorShape({static_cast<int64_t>(v.size() / 2), 2}));
}

TEST(PadTest, MatchesTensorFlow) {
  const Tensor x = Mat<float>({1, 2, 3, 4, 5, 6}, TensorShape({2, 3}));
  ExpectEqual(Run1("Pad", {}, {x, Paddings({1, 0, 2, 1})}),
              Mat<float>({0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 0, 0, 0, 4, 5, 6, 0},
                         TensorShape({3, 6})));
  // Only the middle dim padded: the inner dim moves as one unit.
  ExpectEqual(Run1("PadV2", {},
                   {Iota<int32_t>(TensorShape({2, 2, 2})),
                    Paddings({0, 0, 1, 1, 0, 0}), Tensor::Scalar<int32_t>(7)}),
              Mat<int32_t>({7, 7, 0, 1, 2, 3, 7, 7, 7, 7, 4, 5, 6, 7, 7, 7},
                           TensorShape({2, 4, 2})));
  // int64 paddings.
  ExpectEqual(
      Run1("Pad", {},
           {Vec<int64_t>({5}), Mat<int64_t>({2, 1}, TensorShape({1, 2}))}),
      Vec<int64_t>({0, 0, 5, 0}));
}

TEST(MirrorPadTest, MatchesTensorFlow) {
  const Tensor x = Mat<float>({1, 2, 3, 4, 5, 6}, TensorShape({2, 3}));
  // REFLECT with paddings of dim size - 1 (the largest allowed).
  ExpectEqual(Run1("MirrorPad", {{"mode", AttrS("REFLECT")}},
                   {x, Paddings({1, 1, 2, 2})}),
              Mat<float>({6, 5, 4, 5, 6, 5, 4, 3, 2, 1, 2, 3, 2, 1,
                          6, 5, 4, 5, 6, 5, 4, 3, 2, 1, 2, 3, 2, 1},
                         TensorShape({4, 7})));
  // SYMMETRIC with paddings up to the dim size.
  ExpectEqual(Run1("MirrorPad", {{"mode", AttrS("SYMMETRIC")}},
                   {x, Paddings({1, 2, 3, 0})}),
              Mat<float>({3, 2, 1, 1, 2, 3, 3, 2, 1, 1, 2, 3, 6, 5, 4,
                          4, 5, 6, 6, 5, 4, 4, 5, 6, 3, 2, 1, 1, 2, 3},
                         TensorShape({5, 6})));
  ExpectEqual(
      Run1("MirrorPad", {{"mode", AttrS("REFLECT")}},
           {Iota<int64_t>(TensorShape({2, 3, 4})),
            Mat<int64_t>({1, 0, 0, 2, 0, 0}, TensorShape({3, 2}))}),
      Mat<int64_t>({12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 16, 17, 18,
                    19, 12, 13, 14, 15, 0,  1,  2,  3,  4,  5,  6,  7,  8,  9,
                    10, 11, 4,  5,  6,  7,  0,  1,  2,  3,  12, 13, 14, 15, 16,
                    17, 18, 19, 20, 21, 22, 23, 16, 17, 18, 19, 12, 13, 14, 15},
                   TensorShape({3, 5, 4})));
}

// out[i] = in[source(i)] per dim, or the constant.
template <typename T>
Tensor PadReference(const Tensor& in, const std::vector<int32_t>& pads,
                    const std::string& mode, const T& constant) {
  const TensorShape& s = in.shape();
  std::vector<int64_t> dims;
  for (int d = 0; d < s.dims(); ++d) {
    dims.push_back(s.dim_size(d) + pads[2 * d] + pads[2 * d + 1]);
  }
  const TensorShape out_shape = *TensorShape::FromDims(dims);
  const std::vector<int64_t> strides = Strides(s);
  std::vector<T> v(static_cast<size_t>(out_shape.num_elements()));
  for (size_t i = 0; i < v.size(); ++i) {
    const std::vector<int64_t> idx =
        Unravel(out_shape, static_cast<int64_t>(i));
    int64_t src = 0;
    bool inside = true;
    for (int d = 0; d < s.dims(); ++d) {
      int64_t j = idx[d] - pads[2 * d];
      const int64_t n = s.dim_size(d);
      if (j < 0 || j >= n) {
        if (mode == "REFLECT") {
          j = j < 0 ? -j : 2 * (n - 1) - j;
        } else if (mode == "SYMMETRIC") {
          j = j < 0 ? -1 - j : 2 * n - 1 - j;
        } else {
          inside = false;
        }
      }
      src += j * strides[d];
    }
    v[i] = inside ? in.flat<T>()[src] : constant;
  }
  return Tensor::FromVector<T>(v, out_shape);
}

template <typename T>
class PadTypedTest : public ::testing::Test {};
TYPED_TEST_SUITE(PadTypedTest, AllTypes);

TYPED_TEST(PadTypedTest, EveryDtypeMatchesTheReference) {
  using T = TypeParam;
  const Tensor in = Distinct<T>(TensorShape({3, 4, 2}));
  const std::vector<int32_t> pads = {1, 2, 0, 3, 1, 0};
  ExpectEqual(Run1("Pad", {}, {in, Paddings(pads)}),
              PadReference<T>(in, pads, "", T()));
  const T c = Distinct<T>(TensorShape({5})).template flat<T>()[4];
  ExpectEqual(Run1("PadV2", {}, {in, Paddings(pads), Tensor::Scalar<T>(c)}),
              PadReference<T>(in, pads, "", c));
  const std::vector<int32_t> mirror = {2, 1, 3, 2, 1, 0};
  for (const char* mode : {"REFLECT", "SYMMETRIC"}) {
    ExpectEqual(
        Run1("MirrorPad", {{"mode", AttrS(mode)}}, {in, Paddings(mirror)}),
        PadReference<T>(in, mirror, mode, T()));
  }
}

TEST(PadTest, BigOutputsUseThePool) {
  const Tensor in = Distinct<float>(TensorShape({64, 130, 9}));
  const std::vector<int32_t> pads = {3, 1, 2, 5, 0, 0};
  ExpectEqual(Run1("Pad", {}, {in, Paddings(pads)}),
              PadReference<float>(in, pads, "", 0.f));
  const std::vector<int32_t> mirror = {3, 1, 2, 5, 1, 1};
  ExpectEqual(
      Run1("MirrorPad", {{"mode", AttrS("REFLECT")}}, {in, Paddings(mirror)}),
      PadReference<float>(in, mirror, "REFLECT", 0.f));
}

TEST(PadTest, ZeroSizeDimsAndNoPadding) {
  const Tensor empty(DT_FLOAT, TensorShape({0, 3}));
  ExpectEqual(Run1("Pad", {}, {empty, Paddings({1, 1, 0, 0})}),
              Tensor(DT_FLOAT, TensorShape({2, 3})));
  EXPECT_EQ(Run1("Pad", {}, {empty, Paddings({0, 0, 2, 1})}).shape(),
            TensorShape({0, 6}));
  EXPECT_EQ(Run1("MirrorPad", {{"mode", AttrS("SYMMETRIC")}},
                 {empty, Paddings({0, 0, 1, 1})})
                .shape(),
            TensorShape({0, 5}));
  const Tensor x = Iota<float>(TensorShape({2, 3}));
  ExpectEqual(Run1("Pad", {}, {x, Paddings({0, 0, 0, 0})}), x);
  ExpectEqual(Run1("Pad", {}, {Tensor::Scalar<float>(4), Paddings({})}),
              Tensor::Scalar<float>(4));
}

TEST(PadTest, BadPaddings) {
  const Tensor x = Iota<float>(TensorShape({2, 3}));
  std::string e = ErrorOf("Pad", {}, {x, Paddings({0, 0, -1, 0})});
  EXPECT_TRUE(absl::StrContains(e, "Paddings must be non-negative")) << e;
  e = ErrorOf("Pad", {}, {x, Paddings({0, 0})});
  EXPECT_TRUE(absl::StrContains(e, "must be the rank of the input")) << e;
  e = ErrorOf("Pad", {}, {x, Vec<int32_t>({1, 1, 1, 1})});
  EXPECT_TRUE(absl::StrContains(e, "matrix with 2 columns")) << e;
  e = ErrorOf("PadV2", {}, {x, Paddings({0, 0, 1, 1}), Vec<float>({1, 2})});
  EXPECT_TRUE(absl::StrContains(e, "constant_values must be a scalar")) << e;
  // REFLECT allows at most dim - 1, SYMMETRIC at most dim.
  e = ErrorOf("MirrorPad", {{"mode", AttrS("REFLECT")}},
              {x, Paddings({0, 0, 3, 0})});
  EXPECT_TRUE(absl::StrContains(e,
                                "paddings[1] = [3, 0] must be less than "
                                "the dimension size 3"))
      << e;
  e = ErrorOf("MirrorPad", {{"mode", AttrS("SYMMETRIC")}},
              {x, Paddings({0, 3, 0, 0})});
  EXPECT_TRUE(absl::StrContains(e, "must not exceed the dimension size 2"))
      << e;
  // A zero-size dim cannot be reflected at all.
  e = ErrorOf("MirrorPad", {{"mode", AttrS("REFLECT")}},
              {Tensor(DT_FLOAT, TensorShape({0, 3})), Paddings({0, 0, 1, 1})});
  EXPECT_TRUE(absl::StrContains(e, "must be less than")) << e;
}

}  // namespace
}  // namespace array_test
}  // namespace graphrun
