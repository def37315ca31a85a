// Tests for the TensorList kernels: values worked out by hand (or by plain
// loops over the inputs), TensorFlow's errors for bad indices, dtypes and
// shapes, and copy-on-write: a list is written in place only by the sole
// holder of its handle, so other holders never see the write.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "graph/op_registry.h"
#include "kernels/cpu/tensor_list.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"
#include "kernels/testing/kernel_test_util.h"

namespace graphrun {
namespace {

using testing::AttrB;
using testing::AttrI;
using testing::AttrShape;
using testing::AttrType;
using testing::RunOp;
using Attrs = std::map<std::string, AttrValue>;

Tensor I32(int32_t v) { return Tensor::Scalar<int32_t>(v); }
Tensor Shape(const std::vector<int32_t>& dims) { return Tensor::FromVector(dims); }
Tensor F32(const std::vector<float>& v, const TensorShape& s) {
  return Tensor::FromVector(v, s);
}
std::vector<float> Values(const Tensor& t) {
  return std::vector<float>(t.flat<float>().begin(), t.flat<float>().end());
}
const Attrs kFloat = {{"element_dtype", AttrType(DT_FLOAT)}};

const TensorList& ListOf(const Tensor& handle) {
  const TensorList* l = handle.scalar<Variant>().get<TensorList>();
  EXPECT_NE(l, nullptr);
  return *l;
}

Tensor Run1(const std::string& op, const Attrs& attrs, const std::vector<Tensor>& in) {
  auto out = RunOp(op, attrs, in);
  EXPECT_TRUE(out.ok()) << op << ": " << out.status();
  return out.ok() ? (*out)[0] : Tensor();
}

absl::Status RunError(const std::string& op, const Attrs& attrs,
                      const std::vector<Tensor>& in) {
  return RunOp(op, attrs, in).status();
}

Tensor Reserve(const std::vector<int32_t>& shape, int32_t n) {
  return Run1("TensorListReserve", kFloat, {Shape(shape), I32(n)});
}

Tensor SetItem(const Tensor& list, int32_t i, const Tensor& item, bool resize = false) {
  Attrs attrs = kFloat;
  attrs["resize_if_index_out_of_bounds"] = AttrB(resize);
  return Run1("TensorListSetItem", attrs, {list, I32(i), item});
}

TEST(TensorListTest, ReserveMakesUnsetElements) {
  Tensor l = Reserve({2}, 3);
  EXPECT_EQ(l.dtype(), DT_VARIANT);
  EXPECT_EQ(l.dims(), 0);
  const TensorList& list = ListOf(l);
  EXPECT_EQ(list.element_dtype, DT_FLOAT);
  EXPECT_EQ(list.element_shape, PartialShape({2}));
  ASSERT_EQ(list.tensors.size(), 3u);
  for (const Tensor& t : list.tensors) EXPECT_FALSE(t.IsInitialized());
  EXPECT_EQ(Run1("TensorListLength", {}, {l}).scalar<int32_t>(), 3);
  EXPECT_EQ(l.DebugString(),
            "Tensor<type: variant shape: [] values: TensorList<float, [2], 0 of 3 "
            "elements set>>");
  // A scalar -1 is an unknown element shape; other scalars are refused.
  Tensor unknown = Run1("TensorListReserve", kFloat, {I32(-1), I32(0)});
  EXPECT_TRUE(ListOf(unknown).element_shape.unknown_rank());
  EXPECT_FALSE(RunError("TensorListReserve", kFloat, {I32(3), I32(0)}).ok());
  EXPECT_FALSE(RunError("TensorListReserve", kFloat, {Shape({2}), I32(-1)}).ok());
}

TEST(TensorListTest, SetThenGetAndUnsetReadsAsZeros) {
  Tensor l = Reserve({2}, 3);
  Tensor l2 = SetItem(l, 1, F32({5, 6}, TensorShape({2})));
  EXPECT_EQ(Values(Run1("TensorListGetItem", kFloat, {l2, I32(1), Shape({2})})),
            (std::vector<float>{5, 6}));
  // Index 0 was never set: zeros of the element shape.
  EXPECT_EQ(Values(Run1("TensorListGetItem", kFloat, {l2, I32(0), I32(-1)})),
            (std::vector<float>{0, 0}));
  // The input list (held by the test) is unchanged: the kernel copied it.
  EXPECT_FALSE(ListOf(l).tensors[1].IsInitialized());
  absl::Status s = RunError("TensorListGetItem", kFloat, {l2, I32(3), Shape({2})});
  EXPECT_TRUE(absl::StrContains(s.message(), "Trying to access element 3 in a list with 3"))
      << s;
  s = RunError("TensorListGetItem", kFloat, {l2, I32(-1), Shape({2})});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  s = RunError("TensorListSetItem", kFloat, {l, I32(3), F32({1, 2}, TensorShape({2}))});
  EXPECT_TRUE(absl::StrContains(s.message(), "Trying to modify element 3")) << s;
  // Wrong shape and wrong dtype.
  s = RunError("TensorListSetItem", kFloat, {l, I32(0), F32({1, 2, 3}, TensorShape({3}))});
  EXPECT_TRUE(absl::StrContains(s.message(), "incompatible shape")) << s;
  s = RunError("TensorListGetItem", {{"element_dtype", AttrType(DT_INT32)}},
               {l2, I32(1), Shape({2})});
  EXPECT_TRUE(absl::StrContains(s.message(), "Invalid data types")) << s;
}

TEST(TensorListTest, UnsetElementShapeComesFromSetElements) {
  Tensor l = Run1("TensorListReserve", kFloat, {I32(-1), I32(2)});
  // Nothing set and no shape: an error.
  EXPECT_FALSE(RunError("TensorListGetItem", kFloat, {l, I32(0), I32(-1)}).ok());
  Tensor l2 = SetItem(l, 1, F32({1, 2, 3}, TensorShape({3})));
  EXPECT_EQ(Values(Run1("TensorListGetItem", kFloat, {l2, I32(0), I32(-1)})),
            (std::vector<float>{0, 0, 0}));
}

TEST(TensorListTest, SetItemCanGrowTheList) {
  Tensor l = Reserve({1}, 1);
  Tensor l2 = SetItem(l, 3, F32({7}, TensorShape({1})), /*resize=*/true);
  ASSERT_EQ(ListOf(l2).tensors.size(), 4u);
  EXPECT_EQ(Values(Run1("TensorListStack", kFloat, {l2, Shape({1})})),
            (std::vector<float>{0, 0, 0, 7}));
}

TEST(TensorListTest, FromTensorStackRoundTrip) {
  const Tensor x = F32({1, 2, 3, 4, 5, 6}, TensorShape({3, 2}));
  Tensor l = Run1("TensorListFromTensor", kFloat, {x, Shape({2})});
  ASSERT_EQ(ListOf(l).tensors.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    Tensor row = Run1("TensorListGetItem", kFloat, {l, I32(i), Shape({2})});
    EXPECT_EQ(row.shape(), TensorShape({2}));
    EXPECT_EQ(Values(row), (std::vector<float>{1.f + 2 * i, 2.f + 2 * i}));
  }
  Attrs stack = kFloat;
  stack["num_elements"] = AttrI(3);
  Tensor y = Run1("TensorListStack", stack, {l, Shape({2})});
  EXPECT_EQ(y.shape(), TensorShape({3, 2}));
  EXPECT_EQ(Values(y), Values(x));
  stack["num_elements"] = AttrI(2);
  absl::Status s = RunError("TensorListStack", stack, {l, Shape({2})});
  EXPECT_TRUE(absl::StrContains(s.message(), "expected a list with 2 elements")) << s;
  // The element shape must fit the tensor's rows.
  s = RunError("TensorListFromTensor", kFloat, {x, Shape({3})});
  EXPECT_TRUE(absl::StrContains(s.message(), "Specified a list with shape [3]")) << s;
}

TEST(TensorListTest, StackOfUnsetElementsNeedsAShape) {
  Tensor l = Run1("TensorListReserve", kFloat, {I32(-1), I32(2)});
  EXPECT_FALSE(RunError("TensorListStack", kFloat, {l, I32(-1)}).ok());
  Tensor y = Run1("TensorListStack", kFloat, {l, Shape({1, 2})});
  EXPECT_EQ(y.shape(), TensorShape({2, 1, 2}));
  EXPECT_EQ(Values(y), (std::vector<float>(4, 0.f)));
  // An empty list stacks to [0] + element shape.
  Tensor empty = Reserve({3}, 0);
  EXPECT_EQ(Run1("TensorListStack", kFloat, {empty, I32(-1)}).shape(), TensorShape({0, 3}));
}

TEST(TensorListTest, PushBackPopBackLengthElementShape) {
  Tensor l = Run1("EmptyTensorList", kFloat, {Shape({-1}), I32(2)});
  Tensor a = Run1("TensorListPushBack", kFloat, {l, F32({1, 2}, TensorShape({2}))});
  Tensor b = Run1("TensorListPushBack", kFloat, {a, F32({3}, TensorShape({1}))});
  EXPECT_EQ(Run1("TensorListLength", {}, {b}).scalar<int32_t>(), 2);
  EXPECT_EQ(Run1("TensorListLength", {}, {a}).scalar<int32_t>(), 1);
  // max_num_elements is 2.
  absl::Status s =
      RunError("TensorListPushBack", kFloat, {b, F32({4}, TensorShape({1}))});
  EXPECT_TRUE(absl::StrContains(s.message(), "Tried to push item into a full list")) << s;
  auto popped = RunOp("TensorListPopBack", kFloat, {b, Shape({-1})});
  ASSERT_TRUE(popped.ok()) << popped.status();
  EXPECT_EQ(Values((*popped)[1]), (std::vector<float>{3}));
  EXPECT_EQ(ListOf((*popped)[0]).tensors.size(), 1u);
  Tensor shape = Run1("TensorListElementShape", {{"shape_type", AttrType(DT_INT32)}}, {b});
  EXPECT_EQ(shape.shape(), TensorShape({1}));
  EXPECT_EQ(shape.flat<int32_t>()[0], -1);
  Tensor unknown = Run1("TensorListReserve", kFloat, {I32(-1), I32(0)});
  shape = Run1("TensorListElementShape", {{"shape_type", AttrType(DT_INT64)}}, {unknown});
  EXPECT_EQ(shape.dims(), 0);
  EXPECT_EQ(shape.scalar<int64_t>(), -1);
  s = RunError("TensorListPopBack", kFloat, {unknown, Shape({-1})});
  EXPECT_TRUE(absl::StrContains(s.message(), "Trying to pop from an empty list.")) << s;
}

TEST(TensorListTest, GatherScatterSplitConcatResize) {
  const Tensor x = F32({0, 1, 2, 3, 4, 5, 6, 7}, TensorShape({4, 2}));
  Tensor l = Run1("TensorListFromTensor", kFloat, {x, Shape({2})});
  Tensor g = Run1("TensorListGather", kFloat, {l, Tensor::FromVector<int32_t>({3, 0, 3}), Shape({2})});
  EXPECT_EQ(g.shape(), TensorShape({3, 2}));
  EXPECT_EQ(Values(g), (std::vector<float>{6, 7, 0, 1, 6, 7}));

  // Scatter rows 0 and 1 of x to indices 2 and 0: a list of 3, index 1 unset.
  const Tensor rows = F32({0, 1, 2, 3}, TensorShape({2, 2}));
  Tensor s1 = Run1("TensorListScatter", kFloat,
                   {rows, Tensor::FromVector<int32_t>({2, 0}), Shape({2})});
  EXPECT_EQ(Values(Run1("TensorListStack", kFloat, {s1, Shape({2})})),
            (std::vector<float>{2, 3, 0, 0, 0, 1}));
  Tensor s2 = Run1("TensorListScatterV2", kFloat,
                   {rows, Tensor::FromVector<int32_t>({2, 0}), Shape({2}), I32(5)});
  EXPECT_EQ(ListOf(s2).tensors.size(), 5u);
  EXPECT_FALSE(RunError("TensorListScatterV2", kFloat,
                        {rows, Tensor::FromVector<int32_t>({2, 0}), Shape({2}), I32(2)})
                   .ok());

  // Split x's 4 rows into pieces of 1 and 3 rows, then concat back.
  Tensor sp = Run1("TensorListSplit", kFloat,
                   {x, Shape({-1, 2}), Tensor::FromVector<int64_t>({1, 3})});
  ASSERT_EQ(ListOf(sp).tensors.size(), 2u);
  EXPECT_EQ(ListOf(sp).tensors[1].shape(), TensorShape({3, 2}));
  auto cat = RunOp("TensorListConcatV2", kFloat,
                   {sp, Shape({-1, 2}), Tensor::FromVector<int64_t>({})});
  ASSERT_TRUE(cat.ok()) << cat.status();
  EXPECT_EQ(Values((*cat)[0]), Values(x));
  EXPECT_EQ((*cat)[1].flat<int64_t>()[0], 1);
  EXPECT_EQ((*cat)[1].flat<int64_t>()[1], 3);
  EXPECT_FALSE(RunError("TensorListSplit", kFloat,
                        {x, Shape({-1, 2}), Tensor::FromVector<int64_t>({1, 2})})
                   .ok());

  Tensor r = Run1("TensorListResize", {}, {l, I32(6)});
  EXPECT_EQ(ListOf(r).tensors.size(), 6u);
  EXPECT_EQ(Values(Run1("TensorListStack", kFloat, {r, Shape({2})})),
            (std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7, 0, 0, 0, 0}));
  EXPECT_EQ(ListOf(Run1("TensorListResize", {}, {l, I32(1)})).tensors.size(), 1u);
}

TEST(TensorListTest, StringElements) {
  Attrs str = {{"element_dtype", AttrType(DT_STRING)}};
  Tensor x = Tensor::FromVector<std::string>({"a", "bc", "def"});
  Tensor l = Run1("TensorListFromTensor", str, {x, I32(-1)});
  Tensor item = Run1("TensorListGetItem", str, {l, I32(2), I32(-1)});
  EXPECT_EQ(item.scalar<std::string>(), "def");
  Tensor y = Run1("TensorListStack", str, {l, I32(-1)});
  EXPECT_EQ(y.flat<std::string>()[1], "bc");
}

// Runs one kernel the way the executor does: the kernel gets the only
// reference to its inputs (the caller gives them up).
absl::StatusOr<std::vector<Tensor>> RunOwning(const std::string& op, const Attrs& attrs,
                                              std::vector<Tensor> inputs) {
  static std::unique_ptr<DeviceBase> device = testing::MakeTestCpuDevice(1);
  const OpDef* op_def = OpRegistry::Global()->Find(op);
  NodeDef def;
  def.set_name("n");
  def.set_op(op);
  for (const auto& [k, v] : attrs) (*def.mutable_attr())[k] = v;
  std::vector<DataType> in_types, out_types;
  for (const Tensor& t : inputs) in_types.push_back(t.dtype());
  out_types.push_back(DT_VARIANT);
  auto kernel = KernelRegistry::Global()->CreateKernel(device.get(), def, op_def,
                                                      in_types, out_types);
  if (!kernel.ok()) return kernel.status();
  OpKernelContext::Params params;
  params.device = device.get();
  params.op_kernel = kernel->get();
  params.inputs = inputs.data();
  params.num_inputs = static_cast<int>(inputs.size());
  OpKernelContext ctx(&params);
  (*kernel)->Compute(&ctx);
  if (!ctx.status().ok()) return ctx.status();
  return std::vector<Tensor>(ctx.mutable_outputs()->begin(), ctx.mutable_outputs()->end());
}

TEST(TensorListTest, SoleHolderWritesInPlace) {
  Attrs attrs = kFloat;
  attrs["resize_if_index_out_of_bounds"] = AttrB(false);
  Tensor list = Reserve({1}, 1000);
  const TensorList* first = &ListOf(list);
  // A loop's worth of SetItems, each handed the only reference: the same
  // list object all along, never copied.
  for (int i = 0; i < 1000; ++i) {
    std::vector<Tensor> in = {std::move(list), I32(i), F32({float(i)}, TensorShape({1}))};
    auto out = RunOwning("TensorListSetItem", attrs, std::move(in));
    ASSERT_TRUE(out.ok()) << out.status();
    list = (*out)[0];
    ASSERT_EQ(&ListOf(list), first) << "copied at step " << i;
  }
  Tensor stacked = Run1("TensorListStack", kFloat, {list, Shape({1})});
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(stacked.flat<float>()[i], float(i));

  // Another handle tensor shares the list: the write copies, the other
  // holder keeps what it saw.
  Tensor other = list;
  auto out = RunOwning("TensorListSetItem", attrs,
                       {std::move(list), I32(0), F32({-1}, TensorShape({1}))});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_NE(&ListOf((*out)[0]), first);
  EXPECT_EQ(ListOf(other).tensors[0].flat<float>()[0], 0.f);
  EXPECT_EQ(ListOf((*out)[0]).tensors[0].flat<float>()[0], -1.f);

  // A second Variant holding the same list (a different handle buffer):
  // the handle is forwarded but the list is shared, so it is copied too.
  Tensor a = Reserve({1}, 1);
  Tensor b(DT_VARIANT, TensorShape());
  b.scalar<Variant>() = a.scalar<Variant>();
  const TensorList* shared = &ListOf(a);
  out = RunOwning("TensorListSetItem", attrs, {std::move(a), I32(0), F32({2}, TensorShape({1}))});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_NE(&ListOf((*out)[0]), shared);
  EXPECT_FALSE(ListOf(b).tensors[0].IsInitialized());
}

TEST(TensorListTest, NotAListIsAnError) {
  Tensor empty(DT_VARIANT, TensorShape());
  absl::Status s = RunError("TensorListLength", {}, {empty});
  EXPECT_TRUE(absl::StrContains(s.message(), "Input handle is not a list")) << s;
}

}  // namespace
}  // namespace graphrun
