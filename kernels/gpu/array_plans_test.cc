// The GPU kernels' plans, run on host memory exactly as the CUDA kernels
// read them, must give what the CPU kernels (checked against TensorFlow)
// give on the same inputs; and TensorFlow's errors for bad arguments.
#include "kernels/gpu/array_plans.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/cpu/array_strided_slice.h"
#include "kernels/testing/kernel_test_util.h"

namespace graphrun {
namespace gpu {
namespace {

using ::testing::HasSubstr;
using Attrs = std::map<std::string, AttrValue>;
using testing::AttrB;
using testing::AttrI;
using testing::AttrInts;
using testing::AttrS;
using testing::RunOp;

TensorShape Shape(const std::vector<int64_t>& dims) { return *TensorShape::FromDims(dims); }

Tensor Random(const std::vector<int64_t>& dims, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-2, 2);
  Tensor t(DT_FLOAT, Shape(dims));
  for (int64_t i = 0; i < t.NumElements(); ++i) t.flat<float>()[i] = u(rng);
  return t;
}

// 0, 1, 2, ... as int64 (8-byte elements).
Tensor Iota64(const std::vector<int64_t>& dims) {
  Tensor t(DT_INT64, Shape(dims));
  for (int64_t i = 0; i < t.NumElements(); ++i) t.flat<int64_t>()[i] = i * 7 + 1;
  return t;
}

Tensor Ints(const std::vector<int32_t>& v) { return Tensor::FromVector<int32_t>(v); }

Tensor CpuOp(const std::string& op, const std::vector<Tensor>& inputs, const Attrs& attrs = {}) {
  absl::StatusOr<std::vector<Tensor>> out = RunOp(op, attrs, inputs);
  EXPECT_TRUE(out.ok()) << op << ": " << out.status();
  return out.ok() ? (*out)[0] : Tensor();
}

// `plan` run on `in` into a new tensor of `shape` (filled with `fill`
// first, as the kernels do).
Tensor HostCopy(const Tensor& in, const TensorShape& shape, const StridedCopyPlan& plan,
                uint64_t fill = 0) {
  Tensor out(in.dtype(), shape);
  const int bytes = static_cast<int>(DataTypeSize(in.dtype()));
  char* p = static_cast<char*>(out.raw_data());
  for (int64_t i = 0; i < out.NumElements(); ++i) std::memcpy(p + i * bytes, &fill, bytes);
  StridedCopyOnHost(plan, bytes, in.raw_data(), out.raw_data());
  return out;
}

void ExpectSameBytes(const Tensor& want, const Tensor& got, const std::string& what) {
  ASSERT_EQ(want.shape(), got.shape()) << what;
  ASSERT_EQ(want.dtype(), got.dtype()) << what;
  EXPECT_EQ(std::memcmp(want.raw_data(), got.raw_data(), want.TotalBytes()), 0) << what;
}

void ExpectNear(const Tensor& want, const Tensor& got, double tol, const std::string& what) {
  ASSERT_EQ(want.shape(), got.shape()) << what;
  for (int64_t i = 0; i < want.NumElements(); ++i) {
    const float a = want.flat<float>()[i], b = got.flat<float>()[i];
    if (std::isnan(a) || std::isinf(a)) {
      EXPECT_TRUE(std::isnan(a) ? std::isnan(b) : a == b) << what << " at " << i;
      continue;
    }
    ASSERT_NEAR(a, b, tol * std::max(1.0f, std::fabs(a))) << what << " at " << i;
  }
}

TEST(CopyPlanTest, MergesContiguousDimsAndDropsOnes) {
  // A row-major copy of [2, 1, 3, 4] is one run of 24.
  absl::StatusOr<StridedCopyPlan> p = MakeCopyPlan({2, 1, 3, 4}, {12, 12, 4, 1}, {12, 12, 4, 1});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->rank, 1);
  EXPECT_EQ(p->dims[0], 24);
  // An empty dim: nothing to copy.
  p = MakeCopyPlan({2, 0, 3}, {3, 3, 1}, {3, 3, 1});
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->rank, 1);
  EXPECT_EQ(p->dims[0], 0);
  // Nine dims that cannot merge.
  std::vector<int64_t> dims(9, 2), src(9), dst(9);
  for (int d = 0; d < 9; ++d) {
    src[d] = int64_t{1} << (2 * d);  // no two neighbours contiguous
    dst[d] = int64_t{1} << (8 - d);
  }
  EXPECT_EQ(MakeCopyPlan(dims, src, dst).status().code(), absl::StatusCode::kUnimplemented);
}

TEST(CopyPlanTest, TransposeMatchesTheCpu) {
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int32_t>>> cases = {
      {{2, 3, 4}, {2, 0, 1}},
      {{2, 3, 4}, {1, 0, 2}},
      {{2, 3, 4, 5}, {0, 2, 1, 3}},
      {{3, 1, 4, 2}, {3, 2, 1, 0}},
      {{5}, {0}},
      {{4, 0, 3}, {2, 1, 0}}};
  for (const auto& [dims, perm] : cases) {
    for (const Tensor& x : {Random(dims, 1), Iota64(dims)}) {
      TensorShape shape;
      absl::StatusOr<StridedCopyPlan> plan =
          TransposePlan(x.shape(), std::vector<int64_t>(perm.begin(), perm.end()), &shape);
      ASSERT_TRUE(plan.ok()) << plan.status();
      ExpectSameBytes(CpuOp("Transpose", {x, Ints(perm)}), HostCopy(x, shape, *plan),
                      "Transpose " + x.shape().DebugString());
    }
  }
  TensorShape shape;
  EXPECT_THAT(TransposePlan(Shape({2, 3}), {0, 0}, &shape).status().message(),
              HasSubstr("1 is missing from {0,0}"));
  EXPECT_THAT(TransposePlan(Shape({2, 3}), {0, 2}, &shape).status().message(),
              HasSubstr("2 is out of range [0 .. 2)"));
  EXPECT_THAT(TransposePlan(Shape({2, 3}), {0}, &shape).status().message(),
              HasSubstr("transpose expects a vector of size 2"));
}

TEST(CopyPlanTest, SliceAndStridedSliceMatchTheCpu) {
  const Tensor x = Random({4, 5, 6}, 2);
  TensorShape shape;
  absl::StatusOr<StridedCopyPlan> plan = SlicePlan(x.shape(), {1, 0, 2}, {2, -1, 3}, &shape);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ExpectSameBytes(CpuOp("Slice", {x, Ints({1, 0, 2}), Ints({2, -1, 3})}), HostCopy(x, shape, *plan),
                  "Slice");
  EXPECT_THAT(SlicePlan(x.shape(), {1, 0, 5}, {2, 1, 3}, &shape).status().message(),
              HasSubstr("Expected size[2] in [0, 1], but got 3"));

  struct Spec {
    std::vector<int32_t> begin, end, strides;
    array_kernels::StridedSliceMasks masks;
  };
  std::vector<Spec> specs = {
      {{1, 0, 1}, {3, 5, 6}, {1, 2, 2}, {}},
      {{-1, 4, 5}, {0, 0, 0}, {-1, -2, -1}, {}},                      // backwards
      {{2, 0, 0}, {3, 5, 6}, {1, 1, 3}, {0, 0, 0, 0, /*shrink*/ 1}},  // shrink dim 0
      {{0, 1}, {0, 4}, {1, 1}, {/*begin*/ 0, 0, /*ellipsis*/ 1, /*new*/ 0, 0}},
      {{0, 1, 0}, {0, 3, 0}, {1, -1, 1}, {5, 5, 0, 0, 0}},
      {{0, 0, 0}, {0, 0, 0}, {1, 1, 1}, {0, 0, 0, /*new axis*/ 2, 0}},
  };
  for (const Spec& s : specs) {
    absl::StatusOr<array_kernels::StridedSliceSpec> spec = array_kernels::ValidateStridedSlice(
        x.shape(), Ints(s.begin), Ints(s.end), Ints(s.strides), s.masks);
    ASSERT_TRUE(spec.ok()) << spec.status();
    absl::StatusOr<StridedCopyPlan> p =
        StridedSlicePlan(x.shape(), spec->begin, spec->strides, spec->processing_dims);
    ASSERT_TRUE(p.ok()) << p.status();
    const Attrs attrs = {{"begin_mask", AttrI(s.masks.begin)},
                         {"end_mask", AttrI(s.masks.end)},
                         {"ellipsis_mask", AttrI(s.masks.ellipsis)},
                         {"new_axis_mask", AttrI(s.masks.new_axis)},
                         {"shrink_axis_mask", AttrI(s.masks.shrink_axis)}};
    const Tensor want =
        CpuOp("StridedSlice", {x, Ints(s.begin), Ints(s.end), Ints(s.strides)}, attrs);
    ExpectSameBytes(want, HostCopy(x, spec->final_shape, *p), "StridedSlice");
  }
}

TEST(CopyPlanTest, ConcatAndPadMatchTheCpu) {
  const std::vector<Tensor> parts = {Random({2, 3, 4}, 3), Random({2, 1, 4}, 4),
                                     Random({2, 0, 4}, 5), Random({2, 2, 4}, 6)};
  for (int axis : {1, -2}) {
    TensorShape shape;
    std::vector<TensorShape> shapes;
    for (const Tensor& t : parts) shapes.push_back(t.shape());
    absl::StatusOr<std::vector<StridedCopyPlan>> plans = ConcatPlans(shapes, axis, &shape);
    ASSERT_TRUE(plans.ok()) << plans.status();
    Tensor got(DT_FLOAT, shape);
    size_t next = 0;
    for (const Tensor& t : parts) {
      if (t.NumElements() > 0) StridedCopyOnHost((*plans)[next++], 4, t.raw_data(), got.raw_data());
    }
    std::vector<Tensor> inputs = parts;
    inputs.push_back(Tensor::Scalar<int32_t>(axis));
    ExpectSameBytes(CpuOp("ConcatV2", inputs), got, "ConcatV2");
  }
  TensorShape shape;
  EXPECT_THAT(ConcatPlans({Shape({2, 3}), Shape({3, 3})}, 1, &shape).status().message(),
              HasSubstr("ConcatOp : Dimensions of inputs should match"));

  const Tensor x = Random({2, 3, 2}, 7);
  const std::vector<int32_t> paddings = {1, 2, 0, 3, 2, 0};
  absl::StatusOr<StridedCopyPlan> plan =
      PadPlan(x.shape(), Shape({3, 2}), {1, 2, 0, 3, 2, 0}, &shape);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const Tensor pads = Tensor::FromVector<int32_t>(paddings, Shape({3, 2}));
  ExpectSameBytes(CpuOp("Pad", {x, pads}), HostCopy(x, shape, *plan), "Pad");
  const float c = 1.5f;
  uint32_t bits;
  std::memcpy(&bits, &c, 4);
  ExpectSameBytes(CpuOp("PadV2", {x, pads, Tensor::FromVector<float>({c}, TensorShape())}),
                  HostCopy(x, shape, *plan, bits), "PadV2");
  EXPECT_THAT(PadPlan(x.shape(), Shape({3, 2}), {1, 2, 0, -3, 2, 0}, &shape).status().message(),
              HasSubstr("Paddings must be non-negative"));
}

TEST(GatherPlanTest, MatchesTheCpuAndZeroesIndicesOutOfRange) {
  const Tensor params = Random({4, 5, 3}, 8);
  const std::vector<int64_t> indices = {4, 0, 2, 2, 1, 3};
  const Tensor idx = Tensor::FromVector<int64_t>(indices, Shape({2, 3}));
  for (int axis : {0, 1, -1}) {
    absl::StatusOr<GatherExtent> e = GatherPlan(params.shape(), idx.shape(), axis, 0);
    ASSERT_TRUE(e.ok()) << e.status();
    std::vector<int64_t> in_range = indices;
    for (int64_t& i : in_range) i %= e->limit;
    const Tensor idx_in_range = Tensor::FromVector<int64_t>(in_range, Shape({2, 3}));
    Tensor got(DT_FLOAT, e->output);
    GatherOnHost(*e, 4, params.raw_data(), in_range.data(), got.raw_data());
    ExpectSameBytes(CpuOp("GatherV2", {params, idx_in_range, Tensor::Scalar<int32_t>(axis)}), got,
                    "GatherV2 axis " + std::to_string(axis));
  }
  absl::StatusOr<GatherExtent> e = GatherPlan(params.shape(), Shape({2}), 0, 0);
  ASSERT_TRUE(e.ok());
  const std::vector<int64_t> bad = {7, -1};
  Tensor got(DT_FLOAT, e->output);
  GatherOnHost(*e, 4, params.raw_data(), bad.data(), got.raw_data());
  for (int64_t i = 0; i < got.NumElements(); ++i) EXPECT_EQ(got.flat<float>()[i], 0.0f);
  // batch_dims 1: each of params' first dim gathers with its own indices.
  const std::vector<int64_t> batched = {4, 0, 2, 1, 1, 3, 0, 0};
  const Tensor batched_idx = Tensor::FromVector<int64_t>(batched, Shape({4, 2}));
  for (int axis : {1, 2}) {
    absl::StatusOr<GatherExtent> b = GatherPlan(params.shape(), batched_idx.shape(), axis, 1);
    ASSERT_TRUE(b.ok()) << b.status();
    std::vector<int64_t> in_range = batched;
    for (int64_t& i : in_range) i %= b->limit;
    Tensor out(DT_FLOAT, b->output);
    GatherOnHost(*b, 4, params.raw_data(), in_range.data(), out.raw_data());
    ExpectSameBytes(CpuOp("GatherV2",
                          {params, Tensor::FromVector<int64_t>(in_range, Shape({4, 2})),
                           Tensor::Scalar<int32_t>(axis)},
                          {{"batch_dims", AttrI(1)}}),
                    out, "GatherV2 batch_dims 1 axis " + std::to_string(axis));
  }
  EXPECT_THAT(GatherPlan(params.shape(), Shape({3, 2}), 1, 1).status().message(),
              HasSubstr("should be equal to indices.shape[0]"));
}

TEST(ReducePlanTest, MatchesTheCpuOverEveryAxisPattern) {
  const Tensor x = Random({2, 3, 4, 5}, 9);
  const std::vector<std::vector<int32_t>> axes_cases = {{1}, {0, 2},       {1, 3}, {-1},
                                                        {},  {0, 1, 2, 3}, {3, 0}, {0, 1}};
  const std::vector<std::pair<std::string, ReduceOp>> ops = {{"Sum", ReduceOp::kSum},
                                                             {"Mean", ReduceOp::kMean},
                                                             {"Max", ReduceOp::kMax},
                                                             {"Min", ReduceOp::kMin},
                                                             {"Prod", ReduceOp::kProd}};
  for (const std::vector<int32_t>& axes : axes_cases) {
    for (bool keep : {false, true}) {
      absl::StatusOr<ReducePlan> plan =
          PlanReduce(x.shape(), std::vector<int64_t>(axes.begin(), axes.end()), keep);
      ASSERT_TRUE(plan.ok()) << plan.status();
      Tensor laid_out = x;
      if (plan->needs_transpose) laid_out = HostCopy(x, plan->transposed, plan->transpose);
      for (const auto& [name, op] : ops) {
        Tensor got(DT_FLOAT, plan->output);
        ReduceOnHost(op, static_cast<const float*>(laid_out.raw_data()),
                     static_cast<float*>(got.raw_data()), plan->outer, plan->r, plan->inner);
        const Tensor want = CpuOp(name, {x, Ints(axes)}, {{"keep_dims", AttrB(keep)}});
        ExpectNear(want, got, 1e-5, name + " over " + std::to_string(axes.size()) + " axes");
      }
    }
  }
  // Empty reductions give the identities.
  const Tensor empty(DT_FLOAT, Shape({0, 3}));
  absl::StatusOr<ReducePlan> plan = PlanReduce(empty.shape(), {0}, false);
  ASSERT_TRUE(plan.ok());
  for (const auto& [name, op] : ops) {
    Tensor got(DT_FLOAT, plan->output);
    ReduceOnHost(op, nullptr, static_cast<float*>(got.raw_data()), plan->outer, plan->r,
                 plan->inner);
    ExpectNear(CpuOp(name, {empty, Ints({0})}), got, 0, name + " of nothing");
  }
  EXPECT_THAT(PlanReduce(x.shape(), {1, -3}, false).status().message(),
              HasSubstr("Axes contains duplicate dimension: 1"));
  EXPECT_THAT(PlanReduce(x.shape(), {4}, false).status().message(),
              HasSubstr("Invalid reduction dimension (4 for input with 4 dimension(s)"));
}

TEST(PoolPlanTest, MatchesTheCpu) {
  struct Case {
    std::vector<int64_t> dims;
    std::vector<int64_t> ksize, strides;
    std::string padding;
    bool nchw;
  };
  const std::vector<Case> cases = {
      {{2, 7, 8, 3}, {1, 3, 3, 1}, {1, 2, 2, 1}, "SAME", false},
      {{2, 7, 8, 3}, {1, 3, 2, 1}, {1, 2, 1, 1}, "VALID", false},
      {{1, 6, 6, 2}, {1, 2, 2, 1}, {1, 2, 2, 1}, "SAME", false},
      {{2, 3, 7, 8}, {1, 1, 3, 3}, {1, 1, 2, 2}, "SAME", true},
  };
  for (const Case& c : cases) {
    Tensor x = Random(c.dims, 10);
    x.flat<float>()[5] = std::numeric_limits<float>::quiet_NaN();  // passed over by MaxPool
    for (bool max : {true, false}) {
      TensorShape shape;
      absl::StatusOr<op_shapes::Padding> padding = op_shapes::ParsePadding(c.padding);
      ASSERT_TRUE(padding.ok());
      absl::StatusOr<PoolGeometry> g =
          PoolPlan(x.shape(), c.ksize, c.strides, *padding, {}, c.nchw, &shape);
      ASSERT_TRUE(g.ok()) << g.status();
      Tensor got(DT_FLOAT, shape);
      PoolOnHost(max, static_cast<const float*>(x.raw_data()), static_cast<float*>(got.raw_data()),
                 *g);
      const Tensor want = CpuOp(max ? "MaxPool" : "AvgPool", {x},
                                {{"ksize", AttrInts(c.ksize)},
                                 {"strides", AttrInts(c.strides)},
                                 {"padding", AttrS(c.padding)},
                                 {"data_format", AttrS(c.nchw ? "NCHW" : "NHWC")}});
      ExpectNear(want, got, 1e-6, std::string(max ? "MaxPool " : "AvgPool ") + c.padding);
    }
  }
}

// The whole convolution as the GPU kernel runs it: filter into cuDNN's
// layout, input into its padded copy, then the cross-correlation.
Tensor ConvOnHost(const ConvPlan& plan, const Tensor& input, const Tensor& filter) {
  const Tensor f = HostCopy(filter, plan.filter_layout, plan.filter_copy);
  const Tensor in = plan.pad_input ? HostCopy(input, plan.padded_input, plan.input_copy) : input;
  Tensor out(DT_FLOAT, plan.output);
  Conv2DOnHost(plan.geometry, static_cast<const float*>(in.raw_data()),
               static_cast<const float*>(f.raw_data()), static_cast<float*>(out.raw_data()));
  return out;
}

TEST(ConvPlanTest, MatchesTheCpuUnderEveryPaddingAndLayout) {
  struct Case {
    std::string what;
    std::vector<int64_t> input, filter;
    std::vector<int64_t> strides, dilations;
    std::string padding;
    std::vector<int64_t> explicit_paddings;
    bool nchw = false;
    bool depthwise = false;
    bool padded_copy = false;  // the plan pads the input itself
  };
  const std::vector<Case> cases = {
      {"SAME stride 1", {2, 7, 8, 3}, {3, 3, 3, 4}, {1, 1, 1, 1}, {1, 1, 1, 1}, "SAME", {}},
      {"SAME stride 2 (more padding after)",
       {2, 7, 8, 3},
       {3, 3, 3, 4},
       {1, 2, 2, 1},
       {1, 1, 1, 1},
       "SAME",
       {},
       false,
       false,
       true},
      {"SAME even filter",
       {1, 6, 6, 2},
       {2, 4, 2, 3},
       {1, 1, 1, 1},
       {1, 1, 1, 1},
       "SAME",
       {},
       false,
       false,
       true},
      {"VALID", {2, 7, 8, 3}, {3, 2, 3, 5}, {1, 2, 1, 1}, {1, 1, 1, 1}, "VALID", {}},
      {"dilated", {1, 9, 9, 2}, {3, 3, 2, 2}, {1, 1, 1, 1}, {1, 2, 2, 1}, "SAME", {}},
      {"explicit",
       {1, 6, 7, 2},
       {3, 3, 2, 3},
       {1, 1, 1, 1},
       {1, 1, 1, 1},
       "EXPLICIT",
       {0, 0, 2, 1, 0, 1, 0, 0},
       false,
       false,
       true},
      {"NCHW stride 2",
       {2, 3, 7, 8},
       {3, 3, 3, 4},
       {1, 1, 2, 2},
       {1, 1, 1, 1},
       "SAME",
       {},
       true,
       false,
       true},
      {"grouped", {1, 5, 5, 4}, {3, 3, 2, 6}, {1, 1, 1, 1}, {1, 1, 1, 1}, "SAME", {}},
      {"depthwise x2 stride 2",
       {2, 7, 8, 3},
       {3, 3, 3, 2},
       {1, 2, 2, 1},
       {1, 1, 1, 1},
       "SAME",
       {},
       false,
       true,
       true},
      {"depthwise NCHW",
       {1, 3, 6, 6},
       {3, 3, 3, 1},
       {1, 1, 1, 1},
       {1, 1, 1, 1},
       "SAME",
       {},
       true,
       true},
  };
  for (const Case& c : cases) {
    const Tensor input = Random(c.input, 11);
    const Tensor filter = Random(c.filter, 12);
    ConvAttrs attrs;
    attrs.strides = c.strides;
    attrs.dilations = c.dilations;
    attrs.padding = *op_shapes::ParsePadding(c.padding);
    attrs.explicit_paddings = c.explicit_paddings;
    attrs.nchw = c.nchw;
    absl::StatusOr<ConvPlan> plan = PlanConv2D(input.shape(), filter.shape(), attrs, c.depthwise);
    ASSERT_TRUE(plan.ok()) << c.what << ": " << plan.status();
    EXPECT_EQ(plan->pad_input, c.padded_copy) << c.what;
    Attrs op_attrs = {{"strides", AttrInts(c.strides)},
                      {"dilations", AttrInts(c.dilations)},
                      {"padding", AttrS(c.padding)},
                      {"data_format", AttrS(c.nchw ? "NCHW" : "NHWC")}};
    if (!c.explicit_paddings.empty()) op_attrs["explicit_paddings"] = AttrInts(c.explicit_paddings);
    const Tensor want =
        CpuOp(c.depthwise ? "DepthwiseConv2dNative" : "Conv2D", {input, filter}, op_attrs);
    ExpectNear(want, ConvOnHost(*plan, input, filter), 1e-4, c.what);
  }
  ConvAttrs attrs;
  EXPECT_THAT(PlanConv2D(Shape({1, 5, 5, 3}), Shape({3, 3, 2, 4}), attrs, false).status().message(),
              HasSubstr("input depth must be evenly divisible by filter depth: 3 vs 2"));
  EXPECT_THAT(PlanConv2D(Shape({1, 5, 5, 3}), Shape({3, 3, 4, 1}), attrs, true).status().message(),
              HasSubstr("input and filter must have the same depth: 3 vs 4"));
  attrs.padding = op_shapes::Padding::kExplicit;
  attrs.explicit_paddings = {0, 0, 1, 1, 1, 1, 1, 0};
  EXPECT_THAT(PlanConv2D(Shape({1, 5, 5, 3}), Shape({3, 3, 3, 1}), attrs, false).status().message(),
              HasSubstr("Nonzero explicit padding in the batch or depth dimensions"));
  attrs.explicit_paddings = {0, 0, -1, 1, 1, 1, 0, 0};
  EXPECT_THAT(PlanConv2D(Shape({1, 5, 5, 3}), Shape({3, 3, 3, 1}), attrs, false).status().message(),
              HasSubstr("must be nonnegative"));
}

absl::StatusOr<EinsumPlan> PlanEinsum(const std::string& equation, const TensorShape& x,
                                      const TensorShape& y) {
  absl::StatusOr<EinsumEquation> eq = ParseEinsumEquation(equation, 2);
  if (!eq.ok()) return eq.status();
  return gpu::PlanEinsum(*eq, x, y);
}

TEST(EinsumPlanTest, MatchesTheCpuAndCopiesOnlyWhatItMust) {
  struct Case {
    std::string equation;
    std::vector<int64_t> x, y;
    int max_copies;  // of the two operands and the output
  };
  const std::vector<Case> cases = {
      {"abc,cd->abd", {2, 3, 4}, {4, 5}, 0},               // EinsumDense: one GEMM
      {"aecd,abcd->acbe", {2, 5, 3, 4}, {2, 6, 3, 4}, 3},  // attention scores
      {"acbe,aecd->abcd", {2, 3, 6, 5}, {2, 5, 3, 4}, 3},  // attention output
      {"ij,jk->ik", {3, 4}, {4, 5}, 0},
      {"ij,kj->ik", {3, 4}, {5, 4}, 0},
      {"ji,jk->ik", {4, 3}, {4, 5}, 0},
      {"bij,bjk->bik", {2, 3, 4}, {2, 4, 5}, 0},
      {"...ij,...jk->...ik", {2, 1, 3, 4}, {5, 4, 6}, 3},
      {"i,j->ij", {3}, {4}, 0},
      {"ij,ij->i", {3, 4}, {3, 4}, 0},
      {"abc,abd->acd", {2, 3, 4}, {2, 3, 5}, 0},
      {"ab,ab->", {2, 3}, {2, 3}, 0},
      {"abcd,cde->abe", {2, 3, 4, 5}, {4, 5, 6}, 0},
  };
  for (const Case& c : cases) {
    const Tensor x = Random(c.x, 13), y = Random(c.y, 14);
    absl::StatusOr<EinsumPlan> plan = PlanEinsum(c.equation, x.shape(), y.shape());
    ASSERT_TRUE(plan.ok()) << c.equation << ": " << plan.status();
    EXPECT_LE(int{plan->copy_a} + int{plan->copy_b} + int{plan->copy_out}, c.max_copies)
        << c.equation;
    Tensor got(DT_FLOAT, plan->output);
    EinsumOnHost(*plan, static_cast<const float*>(x.raw_data()),
                 static_cast<const float*>(y.raw_data()), static_cast<float*>(got.raw_data()));
    ExpectNear(CpuOp("Einsum", {x, y}, {{"equation", AttrS(c.equation)}, {"N", AttrI(2)}}), got,
               1e-5, c.equation);
  }
  EXPECT_EQ(PlanEinsum("ii,ij->ij", Shape({3, 3}), Shape({3, 4})).status().code(),
            absl::StatusCode::kUnimplemented);
  EXPECT_EQ(PlanEinsum("ij,kl->ik", Shape({3, 2}), Shape({4, 5})).status().code(),
            absl::StatusCode::kUnimplemented);
  EXPECT_EQ(PlanEinsum("ij,jk->ik", Shape({3, 2}), Shape({4, 5})).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace gpu
}  // namespace graphrun
