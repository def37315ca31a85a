// Tests for Reshape, ExpandDims and Squeeze (array_shape_ops.cc): shapes,
// shared buffers, every dtype family, and TensorFlow's error messages.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cpu/array_test_support.h"

namespace graphrun {
namespace array_test {
namespace {

using testing::AttrInts;

TEST(ReshapeOpTest, InfersOneDimAndSharesTheBuffer) {
  const Tensor x = Iota<float>(TensorShape({2, 3, 4}));
  const Tensor y = Run1("Reshape", {}, {x, Vec<int32_t>({4, -1})});
  EXPECT_EQ(y.shape(), TensorShape({4, 6}));
  EXPECT_TRUE(y.SharesBufferWith(x));
  ExpectEqual(y, Iota<float>(TensorShape({4, 6})));
  const Tensor z = Run1("Reshape", {}, {x, Vec<int64_t>({-1})});
  ExpectEqual(z, Iota<float>(TensorShape({24})));
}

TEST(ReshapeOpTest, EveryDtypeFamily) {
  ExpectEqual(Run1("Reshape", {}, {Vec<std::string>({"a", "b", "c", "d"}), Vec<int32_t>({2, 2})}),
              Mat<std::string>({"a", "b", "c", "d"}, TensorShape({2, 2})));
  ExpectEqual(Run1("Reshape", {}, {Vec<bool>({true, false}), Vec<int32_t>({2, 1})}),
              Mat<bool>({true, false}, TensorShape({2, 1})));
  ExpectEqual(Run1("Reshape", {}, {Vec<half>({half(1), half(2)}), Vec<int32_t>({1, 2})}),
              Mat<half>({half(1), half(2)}, TensorShape({1, 2})));
  ExpectEqual(Run1("Reshape", {}, {Iota<int64_t>(TensorShape({6})), Vec<int32_t>({3, 2})}),
              Iota<int64_t>(TensorShape({3, 2})));
}

TEST(ReshapeOpTest, ScalarsAndEmptyTensors) {
  // [1] -> scalar, scalar -> [1, 1].
  ExpectEqual(Run1("Reshape", {}, {Vec<double>({7}), Vec<int32_t>({})}),
              Tensor::Scalar<double>(7));
  ExpectEqual(Run1("Reshape", {}, {Tensor::Scalar<int32_t>(3), Vec<int32_t>({1, -1})}),
              Mat<int32_t>({3}, TensorShape({1, 1})));
  // -1 next to a 0: inferred from the non-zero dims, as TensorFlow does.
  EXPECT_EQ(Run1("Reshape", {}, {Mat<float>({}, TensorShape({0, 6})), Vec<int32_t>({0, -1, 3})})
                .shape(),
            TensorShape({0, 2, 3}));
  EXPECT_EQ(Run1("Reshape", {}, {Mat<float>({}, TensorShape({2, 0})), Vec<int32_t>({-1, 4})})
                .shape(),
            TensorShape({0, 4}));
  // A scalar shape is the legacy spelling of a 1-vector.
  ExpectEqual(Run1("Reshape", {}, {Vec<float>({1, 2}), Tensor::Scalar<int32_t>(2)}),
              Vec<float>({1, 2}));
}

TEST(ReshapeOpTest, Errors) {
  const Tensor x = Iota<float>(TensorShape({2, 3}));
  EXPECT_EQ(ErrorOf("Reshape", {}, {x, Vec<int32_t>({2, 4})}),
            "Input to reshape is a tensor with 6 values, but the requested shape "
            "has 8");
  EXPECT_EQ(ErrorOf("Reshape", {}, {x, Vec<int32_t>({4, -1})}),
            "Input to reshape is a tensor with 6 values, but the requested shape "
            "requires a multiple of 4");
  EXPECT_EQ(ErrorOf("Reshape", {}, {x, Vec<int32_t>({-1, -1})}),
            "Only one input size may be -1, not both 0 and 1");
  EXPECT_EQ(ErrorOf("Reshape", {}, {x, Vec<int32_t>({3, -2})}),
            "Size 1 must be non-negative, not -2");
  EXPECT_EQ(ErrorOf("Reshape", {}, {x, Mat<int32_t>({2, 3}, TensorShape({1, 2}))}),
            "sizes input must be 1-D, not [1,2]");
}

TEST(ExpandDimsOpTest, InsertsAOneAnywhere) {
  const Tensor x = Iota<int32_t>(TensorShape({2, 3}));
  const std::vector<std::pair<int, TensorShape>> cases = {
      {0, TensorShape({1, 2, 3})},  {1, TensorShape({2, 1, 3})},
      {2, TensorShape({2, 3, 1})},  {-1, TensorShape({2, 3, 1})},
      {-3, TensorShape({1, 2, 3})}, {-2, TensorShape({2, 1, 3})}};
  for (const auto& [dim, shape] : cases) {
    const Tensor y = Run1("ExpandDims", {}, {x, Tensor::Scalar<int32_t>(dim)});
    EXPECT_EQ(y.shape(), shape) << "dim " << dim;
    EXPECT_TRUE(y.SharesBufferWith(x));
    ExpectEqual(y, Iota<int32_t>(shape));
  }
  ExpectEqual(Run1("ExpandDims", {}, {Tensor::Scalar<std::string>("s"), Vec<int64_t>({0})}),
              Vec<std::string>({"s"}));
}

TEST(ExpandDimsOpTest, Errors) {
  const Tensor x = Iota<float>(TensorShape({2}));
  EXPECT_EQ(ErrorOf("ExpandDims", {}, {x, Tensor::Scalar<int32_t>(2)}),
            "Tried to expand dim index 2 for tensor with 1 dimensions.");
  EXPECT_EQ(ErrorOf("ExpandDims", {}, {x, Tensor::Scalar<int32_t>(-3)}),
            "Tried to expand dim index -3 for tensor with 1 dimensions.");
  EXPECT_EQ(ErrorOf("ExpandDims", {}, {x, Vec<int32_t>({0, 1})}),
            "'dim' must be a tensor with a single value, but has 2");
}

TEST(SqueezeOpTest, AllOnesOrListedDims) {
  const Tensor x = Iota<float>(TensorShape({1, 2, 1, 3, 1}));
  const Tensor all = Run1("Squeeze", {}, {x});
  ExpectEqual(all, Iota<float>(TensorShape({2, 3})));
  EXPECT_TRUE(all.SharesBufferWith(x));
  ExpectEqual(Run1("Squeeze", {{"squeeze_dims", AttrInts({0, -1})}}, {x}),
              Iota<float>(TensorShape({2, 1, 3})));
  ExpectEqual(Run1("Squeeze", {{"squeeze_dims", AttrInts({2})}}, {x}),
              Iota<float>(TensorShape({1, 2, 3, 1})));
  ExpectEqual(Run1("Squeeze", {}, {Mat<bool>({true}, TensorShape({1, 1}))}),
              Tensor::Scalar<bool>(true));
  ExpectEqual(Run1("Squeeze", {}, {Mat<int64_t>({}, TensorShape({1, 0}))}),
              Vec<int64_t>({}));
}

TEST(SqueezeOpTest, Errors) {
  const Tensor x = Iota<float>(TensorShape({1, 2}));
  EXPECT_EQ(ErrorOf("Squeeze", {{"squeeze_dims", AttrInts({1})}}, {x}),
            "Can not squeeze dim[1], expected a dimension of 1, got 2");
  EXPECT_EQ(ErrorOf("Squeeze", {{"squeeze_dims", AttrInts({2})}}, {x}),
            "Tried to squeeze dim index 2 for tensor with 2 dimensions.");
  EXPECT_EQ(ErrorOf("Squeeze", {{"squeeze_dims", AttrInts({-3})}}, {x}),
            "Tried to squeeze dim index -3 for tensor with 2 dimensions.");
}

}  // namespace
}  // namespace array_test
}  // namespace graphrun
