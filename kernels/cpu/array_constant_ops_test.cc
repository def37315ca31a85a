// Tests for Const, Placeholder*, Identity*, StopGradient, NoOp, Shape, Size,
// Rank, Fill, ZerosLike, OnesLike and Range (array_constant_ops.cc).
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "graph/graph.h"
#include "graph/op_registry.h"
#include "kernels/kernel_registry.h"
#include "kernels/cpu/array_test_support.h"
#include "kernels/testing/kernel_test_util.h"

namespace graphrun {
namespace array_test {
namespace {

using testing::AttrShape;
using testing::AttrTensor;
using testing::AttrType;
using testing::RunOp;

// A kernel built once, for tests that run it for several steps.
struct BuiltKernel {
  std::unique_ptr<DeviceBase> device = testing::MakeTestCpuDevice(1);
  NodeDef def;
  std::unique_ptr<OpKernel> kernel;

  // The kernel may take (forward) inputs the caller passes by move.
  absl::StatusOr<std::vector<Tensor>> Run(std::vector<Tensor> inputs) {
    OpKernelContext::Params params;
    params.device = device.get();
    params.op_kernel = kernel.get();
    params.inputs = inputs.data();
    params.num_inputs = static_cast<int>(inputs.size());
    OpKernelContext ctx(&params);
    kernel->Compute(&ctx);
    if (!ctx.status().ok()) return ctx.status();
    return std::vector<Tensor>(ctx.mutable_outputs()->begin(),
                               ctx.mutable_outputs()->end());
  }
};

absl::StatusOr<std::unique_ptr<BuiltKernel>> Build(
    const std::string& op, const std::map<std::string, AttrValue>& attrs,
    const std::string& name = "node") {
  auto b = std::make_unique<BuiltKernel>();
  b->def.set_name(name);
  b->def.set_op(op);
  for (const auto& [k, v] : attrs) (*b->def.mutable_attr())[k] = v;
  absl::StatusOr<const OpDef*> op_def = OpRegistry::Global()->LookUp(op);
  if (!op_def.ok()) return op_def.status();
  std::vector<DataType> in_types, out_types;
  absl::Status s = ComputeArgTypes(**op_def, AttrSlice(&b->def.attr(), *op_def),
                                   &in_types, &out_types);
  if (!s.ok()) return s;
  absl::StatusOr<std::unique_ptr<OpKernel>> k =
      KernelRegistry::Global()->CreateKernel(b->device.get(), b->def, *op_def,
                                             in_types, out_types);
  if (!k.ok()) return k.status();
  b->kernel = *std::move(k);
  return b;
}

TEST(ConstOpTest, OutputsTheValueAndTheSameBufferEveryStep) {
  const Tensor value = Mat<float>({1, 2, 3, 4, 5, 6}, TensorShape({2, 3}));
  auto k = Build("Const", {{"value", AttrTensor(value)}, {"dtype", AttrType(DT_FLOAT)}});
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_FALSE((*k)->kernel->IsExpensive());
  auto a = (*k)->Run({});
  auto b = (*k)->Run({});
  ASSERT_TRUE(a.ok() && b.ok());
  ExpectEqual((*a)[0], value);
  EXPECT_TRUE((*a)[0].SharesBufferWith((*b)[0]));
}

TEST(ConstOpTest, StringHalfAndEmptyValues) {
  for (const Tensor& value :
       {Vec<std::string>({"a", "", "xyz"}), Vec<half>({half(1.5f), half(-2.f)}),
        Mat<int64_t>({}, TensorShape({0, 3})), Tensor::Scalar<bool>(true)}) {
    auto out = RunOp("Const", {{"value", AttrTensor(value)},
                               {"dtype", AttrType(value.dtype())}}, {});
    ASSERT_TRUE(out.ok()) << out.status();
    ExpectEqual((*out)[0], value);
  }
}

TEST(ConstOpTest, DtypeMismatchFailsAtConstruction) {
  auto k = Build("Const", {{"value", AttrTensor(Vec<float>({1}))},
                           {"dtype", AttrType(DT_INT32)}});
  ASSERT_FALSE(k.ok());
  EXPECT_NE(k.status().message().find(
                "Type mismatch between value (float) and dtype (int32)"),
            std::string::npos)
      << k.status();
}

TEST(CheapKernelsTest, AreNotExpensive) {
  const std::map<std::string, std::map<std::string, AttrValue>> cheap = {
      {"Const", {{"value", AttrTensor(Tensor::Scalar<float>(1))}, {"dtype", AttrType(DT_FLOAT)}}},
      {"Placeholder", {{"dtype", AttrType(DT_FLOAT)}}},
      {"PlaceholderWithDefault", {{"dtype", AttrType(DT_FLOAT)}, {"shape", AttrShape({})}}},
      {"Identity", {{"T", AttrType(DT_FLOAT)}}},
      {"IdentityN", {{"T", testing::AttrTypes({DT_FLOAT, DT_STRING})}}},
      {"StopGradient", {{"T", AttrType(DT_FLOAT)}}},
      {"NoOp", {}},
      {"Shape", {{"T", AttrType(DT_FLOAT)}}},
      {"Size", {{"T", AttrType(DT_FLOAT)}}},
      {"Rank", {{"T", AttrType(DT_FLOAT)}}},
      {"Reshape", {{"T", AttrType(DT_FLOAT)}}},
      {"ExpandDims", {{"T", AttrType(DT_FLOAT)}}},
      {"Squeeze", {{"T", AttrType(DT_FLOAT)}}},
  };
  for (const auto& [op, attrs] : cheap) {
    auto k = Build(op, attrs);
    ASSERT_TRUE(k.ok()) << op << ": " << k.status();
    EXPECT_FALSE((*k)->kernel->IsExpensive()) << op;
  }
  auto fill = Build("Fill", {{"T", AttrType(DT_FLOAT)}});
  ASSERT_TRUE(fill.ok()) << fill.status();
  EXPECT_TRUE((*fill)->kernel->IsExpensive());
}

TEST(PlaceholderOpTest, ComputeFailsWithTensorFlowsMessage) {
  auto k = Build("Placeholder",
                 {{"dtype", AttrType(DT_FLOAT)}, {"shape", AttrShape({-1, 4})}},
                 "input_x");
  ASSERT_TRUE(k.ok()) << k.status();
  auto out = (*k)->Run({});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(out.status().message(),
            "You must feed a value for placeholder tensor 'input_x' with dtype "
            "float and shape [?,4]");
}

TEST(PlaceholderOpTest, UnknownRankLeavesOutTheShape) {
  auto out = RunOp("Placeholder", {{"dtype", AttrType(DT_INT64)}}, {});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(),
            "You must feed a value for placeholder tensor 'test_node' with "
            "dtype int64");
}

TEST(ForwardingOpsTest, ShareTheInputBufferForEveryType) {
  const std::vector<Tensor> inputs = {
      Vec<float>({1, 2}), Vec<std::string>({"s"}), Vec<bool>({true, false}),
      Vec<bfloat16>({bfloat16(3.f)}), Vec<complex128>({{1, 2}}),
      Mat<int8_t>({}, TensorShape({0}))};
  for (const char* op : {"Identity", "StopGradient"}) {
    for (const Tensor& in : inputs) {
      auto out = RunOp(op, {}, {in});
      ASSERT_TRUE(out.ok()) << op << ": " << out.status();
      ExpectEqual((*out)[0], in);
      if (in.NumElements() > 0) {
        EXPECT_TRUE((*out)[0].SharesBufferWith(in)) << op;
      }
    }
  }
  auto k = Build("Identity", {{"T", AttrType(DT_FLOAT)}});
  ASSERT_TRUE(k.ok());
  EXPECT_FALSE((*k)->kernel->IsExpensive());
}

TEST(ForwardingOpsTest, PlaceholderWithDefaultForwardsItsInput) {
  const Tensor in = Mat<int32_t>({1, 2, 3, 4}, TensorShape({2, 2}));
  auto out = RunOp("PlaceholderWithDefault",
                   {{"dtype", AttrType(DT_INT32)}, {"shape", AttrShape({-1, 2})}},
                   {in});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectEqual((*out)[0], in);
  EXPECT_TRUE((*out)[0].SharesBufferWith(in));
}

TEST(ForwardingOpsTest, IdentityNForwardsEachInput) {
  const Tensor a = Vec<float>({1.5f}), b = Vec<std::string>({"x", "y"}),
               c = Tensor::Scalar<int64_t>(7);
  auto out = RunOp("IdentityN", {}, {a, b, c});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 3u);
  ExpectEqual((*out)[0], a);
  ExpectEqual((*out)[1], b);
  ExpectEqual((*out)[2], c);
  EXPECT_TRUE((*out)[1].SharesBufferWith(b));
}

TEST(NoOpTest, HasNoOutputs) {
  auto out = RunOp("NoOp", {}, {});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(out->empty());
}

TEST(ShapeOpsTest, ShapeSizeRank) {
  const Tensor x = Mat<float>(std::vector<float>(24), TensorShape({2, 3, 4}));
  auto shape = RunOp("Shape", {}, {x});
  ASSERT_TRUE(shape.ok()) << shape.status();
  ExpectEqual((*shape)[0], Vec<int32_t>({2, 3, 4}));
  auto shape64 = RunOp("Shape", {{"out_type", AttrType(DT_INT64)}}, {x});
  ASSERT_TRUE(shape64.ok()) << shape64.status();
  ExpectEqual((*shape64)[0], Vec<int64_t>({2, 3, 4}));
  ExpectEqual(Run1("Size", {}, {x}), Tensor::Scalar<int32_t>(24));
  ExpectEqual(Run1("Size", {{"out_type", AttrType(DT_INT64)}}, {x}),
              Tensor::Scalar<int64_t>(24));
  ExpectEqual(Run1("Rank", {}, {x}), Tensor::Scalar<int32_t>(3));
}

TEST(ShapeOpsTest, ScalarsAndEmptyTensors) {
  const Tensor scalar = Tensor::Scalar<std::string>("s");
  ExpectEqual(Run1("Shape", {}, {scalar}), Vec<int32_t>({}));
  ExpectEqual(Run1("Size", {}, {scalar}), Tensor::Scalar<int32_t>(1));
  ExpectEqual(Run1("Rank", {}, {scalar}), Tensor::Scalar<int32_t>(0));
  const Tensor empty = Mat<bool>({}, TensorShape({3, 0}));
  ExpectEqual(Run1("Shape", {}, {empty}), Vec<int32_t>({3, 0}));
  ExpectEqual(Run1("Size", {}, {empty}), Tensor::Scalar<int32_t>(0));
}

TEST(FillOpTest, FillsEveryDtype) {
  ExpectEqual(Run1("Fill", {}, {Vec<int32_t>({2, 3}), Tensor::Scalar<float>(2.5f)}),
              Mat<float>(std::vector<float>(6, 2.5f), TensorShape({2, 3})));
  ExpectEqual(Run1("Fill", {}, {Vec<int64_t>({3}), Tensor::Scalar<std::string>("ab")}),
              Vec<std::string>({"ab", "ab", "ab"}));
  ExpectEqual(Run1("Fill", {}, {Vec<int32_t>({2}), Tensor::Scalar<bool>(true)}),
              Vec<bool>({true, true}));
  ExpectEqual(Run1("Fill", {}, {Vec<int32_t>({1, 2}), Tensor::Scalar<half>(half(-1.5f))}),
              Mat<half>({half(-1.5f), half(-1.5f)}, TensorShape({1, 2})));
  ExpectEqual(Run1("Fill", {}, {Vec<int32_t>({2}), Tensor::Scalar<complex128>({1, -2})}),
              Vec<complex128>({{1, -2}, {1, -2}}));
  ExpectEqual(Run1("Fill", {}, {Vec<int32_t>({}), Tensor::Scalar<int8_t>(-3)}),
              Tensor::Scalar<int8_t>(-3));
  ExpectEqual(Run1("Fill", {}, {Vec<int32_t>({4, 0}), Tensor::Scalar<double>(1)}),
              Mat<double>({}, TensorShape({4, 0})));
}

TEST(FillOpTest, BigFillUsesThePoolAndFillsEverything) {
  auto f = RunOp("Fill", {}, {Vec<int32_t>({300, 1000}), Tensor::Scalar<int64_t>(-7)});
  ASSERT_TRUE(f.ok()) << f.status();
  for (int64_t v : (*f)[0].flat<int64_t>()) ASSERT_EQ(v, -7);
}

TEST(FillOpTest, Errors) {
  EXPECT_EQ(ErrorOf("Fill", {}, {Vec<int32_t>({2, -1}), Tensor::Scalar<float>(0)}),
            "Dimension -1 must be >= 0");
  EXPECT_EQ(ErrorOf("Fill", {}, {Tensor::Scalar<int32_t>(2), Tensor::Scalar<float>(0)}),
            "dims must be a vector, got shape []");
  EXPECT_EQ(ErrorOf("Fill", {}, {Vec<int32_t>({2}), Vec<float>({1, 2})}),
            "value must be a scalar, got shape [2]");
}

TEST(ZerosOnesLikeTest, EveryFamily) {
  ExpectEqual(Run1("ZerosLike", {}, {Vec<float>({1, -2, 3})}),
              Vec<float>({0, 0, 0}));
  ExpectEqual(Run1("ZerosLike", {}, {Vec<std::string>({"a", "b"})}),
              Vec<std::string>({"", ""}));
  ExpectEqual(Run1("ZerosLike", {}, {Vec<complex64>({{1, 2}})}),
              Vec<complex64>({{0, 0}}));
  ExpectEqual(Run1("ZerosLike", {}, {Tensor::Scalar<int64_t>(5)}),
              Tensor::Scalar<int64_t>(0));
  ExpectEqual(Run1("OnesLike", {}, {Mat<double>({5, 6, 7, 8}, TensorShape({2, 2}))}),
              Mat<double>({1, 1, 1, 1}, TensorShape({2, 2})));
  ExpectEqual(Run1("OnesLike", {}, {Vec<int32_t>({0, 9})}),
              Vec<int32_t>({1, 1}));
  ExpectEqual(Run1("OnesLike", {}, {Vec<bool>({false})}), Vec<bool>({true}));
  ExpectEqual(Run1("OnesLike", {}, {Vec<half>({half(3.f)})}),
              Vec<half>({half(1.f)}));
  ExpectEqual(Run1("OnesLike", {}, {Vec<bfloat16>({bfloat16(3.f)})}),
              Vec<bfloat16>({bfloat16(1.f)}));
  ExpectEqual(Run1("OnesLike", {}, {Vec<complex64>({{3, 4}})}),
              Vec<complex64>({{1, 0}}));
  ExpectEqual(Run1("OnesLike", {}, {Vec<uint8_t>({})}), Vec<uint8_t>({}));
}

TEST(ZerosOnesLikeTest, ReuseASoleOwnedInputBuffer) {
  for (const char* op : {"ZerosLike", "OnesLike"}) {
    auto k = Build(op, {{"T", AttrType(DT_FLOAT)}});
    ASSERT_TRUE(k.ok()) << k.status();
    Tensor x = Mat<float>({3, 4, 5, 6}, TensorShape({2, 2}));
    const void* buffer = x.raw_data();
    std::vector<Tensor> inputs;  // not an initializer list: that would copy
    inputs.push_back(std::move(x));
    auto out = (*k)->Run(std::move(inputs));
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].raw_data(), buffer) << op;
    const float want = std::string(op) == "ZerosLike" ? 0.f : 1.f;
    ExpectEqual((*out)[0], Mat<float>(std::vector<float>(4, want), TensorShape({2, 2})));
  }
}

TEST(ZerosOnesLikeTest, StringOnesLikeHasNoKernel) {
  auto out = RunOp("OnesLike", {}, {Vec<std::string>({"a"})});
  EXPECT_FALSE(out.ok());
}

TEST(RangeOpTest, IntegerRanges) {
  auto up = RunOp("Range", {}, {Tensor::Scalar<int32_t>(0), Tensor::Scalar<int32_t>(10),
                                Tensor::Scalar<int32_t>(3)});
  ASSERT_TRUE(up.ok()) << up.status();
  ExpectEqual((*up)[0], Vec<int32_t>({0, 3, 6, 9}));
  auto down = RunOp("Range", {}, {Tensor::Scalar<int64_t>(5), Tensor::Scalar<int64_t>(-1),
                                  Tensor::Scalar<int64_t>(-2)});
  ASSERT_TRUE(down.ok()) << down.status();
  ExpectEqual((*down)[0], Vec<int64_t>({5, 3, 1}));
  auto empty = RunOp("Range", {}, {Tensor::Scalar<int32_t>(4), Tensor::Scalar<int32_t>(4),
                                   Tensor::Scalar<int32_t>(1)});
  ASSERT_TRUE(empty.ok()) << empty.status();
  ExpectEqual((*empty)[0], Vec<int32_t>({}));
  // Extremes of int32 do not overflow the size computation.
  auto wide = RunOp("Range", {}, {Tensor::Scalar<int32_t>(-2147483647 - 1),
                                  Tensor::Scalar<int32_t>(2147483647),
                                  Tensor::Scalar<int32_t>(1073741824)});
  ASSERT_TRUE(wide.ok()) << wide.status();
  ExpectEqual((*wide)[0], Vec<int32_t>({-2147483647 - 1, -1073741824, 0, 1073741824}));
}

TEST(RangeOpTest, FloatingRanges) {
  auto f = RunOp("Range", {}, {Tensor::Scalar<float>(0), Tensor::Scalar<float>(1),
                               Tensor::Scalar<float>(0.25f)});
  ASSERT_TRUE(f.ok()) << f.status();
  ExpectEqual((*f)[0], Vec<float>({0, 0.25f, 0.5f, 0.75f}));
  auto d = RunOp("Range", {}, {Tensor::Scalar<double>(1), Tensor::Scalar<double>(-0.5),
                               Tensor::Scalar<double>(-0.7)});
  ASSERT_TRUE(d.ok()) << d.status();
  ExpectEqual((*d)[0], Vec<double>({1, 1 - 0.7, 1 - 1.4}));
  // One-element vectors are accepted as scalars.
  auto v = RunOp("Range", {}, {Vec<float>({2}), Vec<float>({3.5f}), Vec<float>({1})});
  ASSERT_TRUE(v.ok()) << v.status();
  ExpectEqual((*v)[0], Vec<float>({2, 3}));
}

TEST(RangeOpTest, Errors) {
  EXPECT_EQ(ErrorOf("Range", {}, {Tensor::Scalar<int32_t>(0), Tensor::Scalar<int32_t>(5),
                                  Tensor::Scalar<int32_t>(0)}),
            "Requires delta != 0: 0");
  EXPECT_EQ(ErrorOf("Range", {}, {Tensor::Scalar<int32_t>(5), Tensor::Scalar<int32_t>(1),
                                  Tensor::Scalar<int32_t>(1)}),
            "Requires start <= limit when delta > 0: 5/1");
  EXPECT_EQ(ErrorOf("Range", {}, {Tensor::Scalar<float>(1), Tensor::Scalar<float>(5),
                                  Tensor::Scalar<float>(-1)}),
            "Requires start >= limit when delta < 0: 1/5");
  EXPECT_EQ(ErrorOf("Range", {}, {Vec<int32_t>({1, 2}), Tensor::Scalar<int32_t>(5),
                                  Tensor::Scalar<int32_t>(1)}),
            "start must be a scalar, not shape [2]");
}

// Fed at run time (no constant for shape inference to see), a Range too
// large to exist is an error, not a wrapped size or an undefined cast.
TEST(RangeOpTest, TooLargeIsAnError) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(ErrorOf("Range", {}, {Tensor::Scalar<int64_t>(kMin), Tensor::Scalar<int64_t>(kMax),
                                  Tensor::Scalar<int64_t>(1)}),
            "Range from -9223372036854775808 to 9223372036854775807 by 1 is too "
            "large: 18446744073709551615 elements (more than 2^48)");
  EXPECT_NE(ErrorOf("Range", {}, {Tensor::Scalar<int64_t>(0),
                                  Tensor::Scalar<int64_t>((int64_t{1} << 48) + 1),
                                  Tensor::Scalar<int64_t>(1)})
                .find("is too large"),
            std::string::npos);
  for (double limit : {1e300, std::numeric_limits<double>::infinity()}) {
    EXPECT_NE(ErrorOf("Range", {}, {Tensor::Scalar<double>(0), Tensor::Scalar<double>(limit),
                                    Tensor::Scalar<double>(1e-300)})
                  .find("is too large"),
              std::string::npos)
        << limit;
  }
  EXPECT_EQ(ErrorOf("Range", {}, {Tensor::Scalar<double>(0),
                                  Tensor::Scalar<double>(std::nan("")),
                                  Tensor::Scalar<double>(1)}),
            "Requires start <= limit when delta > 0: 0/nan");
  // Steps of INT64_MIN from INT64_MAX: INT64_MAX, -1.
  auto two = RunOp("Range", {}, {Tensor::Scalar<int64_t>(kMax), Tensor::Scalar<int64_t>(kMin),
                                  Tensor::Scalar<int64_t>(kMin)});
  ASSERT_TRUE(two.ok()) << two.status();
  ExpectEqual((*two)[0], Vec<int64_t>({kMax, -1}));
}

}  // namespace
}  // namespace array_test
}  // namespace graphrun
