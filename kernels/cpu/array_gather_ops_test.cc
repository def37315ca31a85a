// Tests for Gather, GatherV2 and OneHot (array_gather_ops.cc) against
// loop references, for every dtype family and index type, with batch_dims,
// scalars, empty inputs, the threaded path and TensorFlow's errors.
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cpu/array_test_support.h"

namespace graphrun {
namespace array_test {
namespace {

using testing::AttrI;

// GatherV2 by definition: out[p0.., i.., q..] = params[p0.., idx[i..], q..],
// with the first `batch_dims` dims of params and indices shared.
template <typename T>
Tensor RefGather(const Tensor& params, const Tensor& indices_t, int axis,
                 int batch_dims) {
  std::vector<int64_t> idx_values;
  for (int64_t v : indices_t.flat<int32_t>()) idx_values.push_back(v);
  std::vector<int64_t> dims;
  for (int i = 0; i < axis; ++i) dims.push_back(params.dim_size(i));
  for (int i = batch_dims; i < indices_t.dims(); ++i) dims.push_back(indices_t.dim_size(i));
  for (int i = axis + 1; i < params.dims(); ++i) dims.push_back(params.dim_size(i));
  const TensorShape out_shape = Shape(dims);
  const std::vector<int64_t> p_strides = Strides(params.shape());
  const std::vector<int64_t> i_strides = Strides(indices_t.shape());
  const int index_rank = indices_t.dims() - batch_dims;
  return Remap<T>(params, out_shape, [&](int64_t flat) {
    const std::vector<int64_t> o = Unravel(out_shape, flat);
    int64_t index_flat = 0;
    for (int i = 0; i < batch_dims; ++i) index_flat += o[i] * i_strides[i];
    for (int i = 0; i < index_rank; ++i) index_flat += o[axis + i] * i_strides[batch_dims + i];
    int64_t offset = 0;
    for (int i = 0; i < axis; ++i) offset += o[i] * p_strides[i];
    offset += idx_values[index_flat] * p_strides[axis];
    for (int i = axis + 1; i < params.dims(); ++i) {
      offset += o[i - 1 + index_rank] * p_strides[i];
    }
    return offset;
  });
}

template <typename T>
class GatherTypedTest : public ::testing::Test {};
TYPED_TEST_SUITE(GatherTypedTest, AllTypes);

TYPED_TEST(GatherTypedTest, GatherV2AlongEveryAxis) {
  using T = TypeParam;
  const Tensor params = Distinct<T>(Shape({3, 4, 5}));
  const Tensor indices = Mat<int32_t>({2, 0, 1, 2, 2, 0}, Shape({2, 3}));
  for (int axis = -3; axis < 3; ++axis) {
    const int pos = axis < 0 ? axis + 3 : axis;
    ExpectEqual(Run1("GatherV2", {}, {params, indices, Tensor::Scalar<int32_t>(axis)}),
                RefGather<T>(params, indices, pos, 0));
  }
  ExpectEqual(Run1("Gather", {}, {params, indices}), RefGather<T>(params, indices, 0, 0));
}

TYPED_TEST(GatherTypedTest, OneHotOnAndOffValues) {
  using T = TypeParam;
  const Tensor values = Distinct<T>(Shape({3}));  // three distinct values
  const Tensor on = *values.Slice(1, 2).Reshaped(TensorShape());
  const Tensor off = *values.Slice(2, 3).Reshaped(TensorShape());
  const Tensor indices = Vec<int32_t>({0, 2, -1, 1, 3});
  // out[i, d] = indices[i] == d ? on : off
  const Tensor both = Mat<T>({on.scalar<T>(), off.scalar<T>()}, Shape({2}));
  const Tensor want = Remap<T>(both, Shape({5, 3}), [&](int64_t flat) {
    return indices.flat<int32_t>()[flat / 3] == flat % 3 ? 0 : 1;
  });
  ExpectEqual(Run1("OneHot", {}, {indices, Tensor::Scalar<int32_t>(3), on, off}), want);
}

TEST(GatherOpTest, BatchDims) {
  const Tensor params = Iota<float>(Shape({2, 3, 4}));
  const Tensor indices = Mat<int32_t>({2, 0, 1, 1}, Shape({2, 2}));
  ExpectEqual(Run1("GatherV2", {{"batch_dims", AttrI(1)}},
                   {params, indices, Tensor::Scalar<int32_t>(1)}),
              RefGather<float>(params, indices, 1, 1));
  ExpectEqual(Run1("GatherV2", {{"batch_dims", AttrI(-1)}},
                   {params, indices, Tensor::Scalar<int32_t>(1)}),
              RefGather<float>(params, indices, 1, 1));
  const Tensor last = Mat<int32_t>({3, 0, 0, 1, 2, 3, 3, 3, 1, 0}, Shape({2, 5}));
  ExpectEqual(Run1("GatherV2", {{"batch_dims", AttrI(1)}},
                   {params, last, Tensor::Scalar<int64_t>(2)}),
              RefGather<float>(params, last, 2, 1));
  // Hand-checked: out[b, i, :] = params[b, indices[b, i], :].
  const Tensor out = Run1("GatherV2", {{"batch_dims", AttrI(1)}},
                          {params, indices, Tensor::Scalar<int32_t>(1)});
  EXPECT_EQ(out.shape(), Shape({2, 2, 4}));
  EXPECT_EQ(out.flat<float>()[0], 8.f);    // params[0, 2, 0]
  EXPECT_EQ(out.flat<float>()[12], 16.f);  // params[1, 1, 0]
}

TEST(GatherOpTest, IndexTypesScalarsAndEmpty) {
  const Tensor params = Iota<double>(Shape({5, 3}));
  ExpectEqual(Run1("GatherV2", {}, {params, Vec<int16_t>({4, 0}), Tensor::Scalar<int32_t>(0)}),
              Mat<double>({12, 13, 14, 0, 1, 2}, Shape({2, 3})));
  ExpectEqual(Run1("GatherV2", {}, {params, Vec<int64_t>({2}), Tensor::Scalar<int64_t>(1)}),
              Mat<double>({2, 5, 8, 11, 14}, Shape({5, 1})));
  ExpectEqual(Run1("Gather", {}, {params, Tensor::Scalar<int64_t>(3)}),
              Vec<double>({9, 10, 11}));
  ExpectEqual(Run1("Gather", {}, {params, Vec<int32_t>({})}), Mat<double>({}, Shape({0, 3})));
  ExpectEqual(Run1("Gather", {}, {Mat<double>({}, Shape({5, 0})), Vec<int32_t>({1, 9})}),
              Mat<double>({}, Shape({2, 0})));
}

TEST(GatherOpTest, BigGatherOnThePool) {
  const Tensor params = Iota<float>(Shape({1000, 64}));
  std::vector<int32_t> idx;
  for (int i = 0; i < 600; ++i) idx.push_back((i * 37) % 1000);
  const Tensor indices = Vec<int32_t>(idx);
  ExpectEqual(Run1("GatherV2", {}, {params, indices, Tensor::Scalar<int32_t>(0)}),
              RefGather<float>(params, indices, 0, 0));
  const Tensor strings = Distinct<std::string>(Shape({1000, 40}));
  ExpectEqual(Run1("Gather", {}, {strings, indices}),
              RefGather<std::string>(strings, indices, 0, 0));
}

TEST(GatherOpTest, Errors) {
  const Tensor params = Iota<float>(Shape({5}));
  EXPECT_EQ(ErrorOf("Gather", {}, {params, Vec<int32_t>({0, 7})}),
            "indices[1] = 7 is not in [0, 5)");
  EXPECT_EQ(ErrorOf("GatherV2", {}, {params, Mat<int64_t>({0, 1, -1, 2}, Shape({2, 2})),
                                     Tensor::Scalar<int32_t>(0)}),
            "indices[1,0] = -1 is not in [0, 5)");
  EXPECT_EQ(ErrorOf("Gather", {}, {params, Tensor::Scalar<int32_t>(9)}),
            "indices = 9 is not in [0, 5)");
  EXPECT_EQ(ErrorOf("Gather", {}, {Tensor::Scalar<float>(1), Vec<int32_t>({0})}),
            "params must be at least 1 dimensional");
  const Tensor p2 = Iota<float>(Shape({2, 3}));
  EXPECT_EQ(ErrorOf("GatherV2", {}, {p2, Vec<int32_t>({0}), Tensor::Scalar<int32_t>(2)}),
            "Shape must be at least rank 3 but is rank 2");
  EXPECT_EQ(ErrorOf("GatherV2", {}, {p2, Vec<int32_t>({0}), Tensor::Scalar<int32_t>(-3)}),
            "Shape must be at least rank 3 but is rank 2");
  EXPECT_EQ(ErrorOf("GatherV2", {}, {p2, Vec<int32_t>({0}),
                                     Tensor::Scalar<int64_t>(std::numeric_limits<int64_t>::min())}),
            "Shape must be at least rank 9223372036854775808 but is rank 2");
  EXPECT_EQ(ErrorOf("GatherV2", {}, {p2, Vec<int32_t>({0}),
                                     Tensor::Scalar<int64_t>(std::numeric_limits<int64_t>::max())}),
            "Shape must be at least rank 9223372036854775808 but is rank 2");
  EXPECT_EQ(ErrorOf("GatherV2", {}, {p2, Vec<int32_t>({0}), Vec<int32_t>({0})}),
            "axis must be scalar");
  const Tensor idx = Mat<int32_t>({0, 1, 0, 1, 0, 1}, Shape({3, 2}));
  EXPECT_EQ(ErrorOf("GatherV2", {{"batch_dims", AttrI(1)}},
                    {p2, idx, Tensor::Scalar<int32_t>(1)}),
            "params.shape[0]: 2 should be equal to indices.shape[0]: 3");
  EXPECT_EQ(ErrorOf("GatherV2", {{"batch_dims", AttrI(3)}},
                    {p2, idx, Tensor::Scalar<int32_t>(1)}),
            "Expected batch_dims in the range [-2, 2], but got 3");
  EXPECT_EQ(ErrorOf("GatherV2", {{"batch_dims", AttrI(1)}},
                    {p2, Mat<int32_t>({0, 1}, Shape({2, 1})), Tensor::Scalar<int32_t>(0)}),
            "batch_dims (1) must be less than or equal to axis (0).");
}

TEST(OneHotOpTest, AxesAndIndexTypes) {
  const Tensor on = Tensor::Scalar<float>(5), off = Tensor::Scalar<float>(-1);
  // indices [[0, 2], [1, 5]], depth 3.
  const std::vector<int64_t> idx = {0, 2, 1, 5};
  auto want = [&](int axis) {
    // Output dims: indices [2, 2] with depth 3 inserted at `axis`.
    std::vector<int64_t> dims = {2, 2};
    dims.insert(dims.begin() + axis, 3);
    const TensorShape shape = Shape(dims);
    std::vector<float> v(shape.num_elements());
    for (int64_t f = 0; f < shape.num_elements(); ++f) {
      std::vector<int64_t> o = Unravel(shape, f);
      const int64_t d = o[axis];
      o.erase(o.begin() + axis);
      v[f] = idx[o[0] * 2 + o[1]] == d ? 5.f : -1.f;
    }
    return Mat<float>(v, shape);
  };
  const Tensor depth = Tensor::Scalar<int32_t>(3);
  for (int axis : {0, 1, 2}) {
    ExpectEqual(Run1("OneHot", {{"axis", AttrI(axis)}},
                     {Mat<int64_t>(idx, Shape({2, 2})), depth, on, off}),
                want(axis));
  }
  ExpectEqual(Run1("OneHot", {}, {Mat<int64_t>(idx, Shape({2, 2})), depth, on, off}), want(2));
  ExpectEqual(Run1("OneHot", {}, {Mat<int32_t>({0, 2, 1, 5}, Shape({2, 2})), depth, on, off}),
              want(2));
  ExpectEqual(Run1("OneHot", {}, {Mat<uint8_t>({0, 2, 1, 5}, Shape({2, 2})), depth, on, off}),
              want(2));
  ExpectEqual(Run1("OneHot", {}, {Mat<int8_t>({0, 2, 1, 5}, Shape({2, 2})), depth, on, off}),
              want(2));
}

TEST(OneHotOpTest, ScalarsEmptyStringsAndBig) {
  ExpectEqual(Run1("OneHot", {}, {Tensor::Scalar<int32_t>(1), Tensor::Scalar<int32_t>(3),
                                  Tensor::Scalar<std::string>("on"),
                                  Tensor::Scalar<std::string>("")}),
              Vec<std::string>({"", "on", ""}));
  ExpectEqual(Run1("OneHot", {}, {Vec<int64_t>({0, 1}), Tensor::Scalar<int32_t>(0),
                                  Tensor::Scalar<bool>(true), Tensor::Scalar<bool>(false)}),
              Mat<bool>({}, Shape({2, 0})));
  ExpectEqual(Run1("OneHot", {{"axis", AttrI(0)}},
                   {Vec<int64_t>({}), Tensor::Scalar<int32_t>(4),
                    Tensor::Scalar<half>(half(1)), Tensor::Scalar<half>(half(0))}),
              Mat<half>({}, Shape({4, 0})));
  std::vector<int32_t> idx(500);
  for (int i = 0; i < 500; ++i) idx[i] = (i * 7) % 100;
  const Tensor big = Run1("OneHot", {}, {Vec<int32_t>(idx), Tensor::Scalar<int32_t>(100),
                                         Tensor::Scalar<double>(1), Tensor::Scalar<double>(0)});
  ASSERT_EQ(big.shape(), Shape({500, 100}));
  for (int i = 0; i < 500; ++i) {
    for (int d = 0; d < 100; ++d) {
      ASSERT_EQ(big.flat<double>()[i * 100 + d], d == idx[i] ? 1.0 : 0.0);
    }
  }
}

TEST(OneHotOpTest, Errors) {
  const Tensor on = Tensor::Scalar<float>(1), off = Tensor::Scalar<float>(0);
  const Tensor idx = Vec<int64_t>({0, 1});
  EXPECT_EQ(ErrorOf("OneHot", {}, {idx, Tensor::Scalar<int32_t>(-1), on, off}),
            "depth must be non-negative, got: -1");
  EXPECT_EQ(ErrorOf("OneHot", {{"axis", AttrI(3)}}, {idx, Tensor::Scalar<int32_t>(2), on, off}),
            "Expected axis to be -1 or between [0, 2).  But received: 3");
  EXPECT_EQ(ErrorOf("OneHot", {}, {idx, Vec<int32_t>({2}), on, off}),
            "depth must be a scalar, but got: [1]");
  EXPECT_EQ(ErrorOf("OneHot", {}, {idx, Tensor::Scalar<int32_t>(2), Vec<float>({1}), off}),
            "on_value must be a scalar, but got: [1]");
  EXPECT_EQ(ErrorOf("OneHot", {}, {idx, Tensor::Scalar<int32_t>(2), on, Vec<float>({0, 1})}),
            "off_value must be a scalar, but got: [2]");
}

}  // namespace
}  // namespace array_test
}  // namespace graphrun
