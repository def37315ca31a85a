// Tests for KernelRegistry: type constraints, priorities, ambiguity (several
// kernels matching at one priority is an error), device-type queries, and
// that the CPU kernels this build links never overlap.
#include "kernels/kernel_registry.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "kernels/testing/kernel_test_util.h"

namespace graphrun {
namespace {

// A kernel that records nothing; tests tell kernels apart by their KernelDef.
class NoopKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext*) override {}
};

// A kernel whose construction fails, as a bad attr would make it.
class FailingKernel : public OpKernel {
 public:
  explicit FailingKernel(OpKernelConstruction* ctx) : OpKernel(ctx) {
    ctx->SetStatus(absl::InvalidArgumentError("attr 'k' must be positive"));
  }
  void Compute(OpKernelContext*) override {}
};

KernelDef Kernel(KernelDefBuilder builder) {
  return builder.Build([](OpKernelConstruction* ctx) -> OpKernel* {
    return new NoopKernel(ctx);
  });
}

// A private op registry with the ops these tests use, so nothing here
// depends on the real op set.
class KernelRegistryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const OpDefBuilder& b :
         {OpDefBuilder("KrUnary").Input("x: T").Output("y: T").Attr("T: type"),
          OpDefBuilder("KrTwoTypes")
              .Input("x: T")
              .Input("i: Tidx")
              .Output("y: T")
              .Attr("T: type")
              .Attr("Tidx: {int32, int64} = DT_INT32"),
          OpDefBuilder("KrList")
              .Input("xs: Tlist")
              .Output("ys: Tlist")
              .Attr("Tlist: list(type) >= 0"),
          OpDefBuilder("KrNonEmptyList")
              .Input("xs: Tlist")
              .Output("ys: Tlist")
              .Attr("Tlist: list(type) >= 1")}) {
      absl::StatusOr<OpDef> def = b.Build();
      ASSERT_TRUE(def.ok()) << def.status();
      ASSERT_TRUE(ops_.Register(*std::move(def)).ok());
    }
  }

  NodeDef Node(const std::string& op,
               std::vector<std::pair<std::string, DataType>> types) {
    NodeDef n;
    n.set_name("n");
    n.set_op(op);
    for (const auto& [attr, t] : types) (*n.mutable_attr())[attr].set_type(t);
    return n;
  }

  absl::StatusOr<const KernelDef*> Find(const NodeDef& node,
                                        const std::string& device = "CPU") {
    return registry_.FindKernel(node, ops_.Find(node.op()), device);
  }

  OpRegistry ops_;
  KernelRegistry registry_;
};

TEST_F(KernelRegistryTest, TypeConstraintsSelectTheKernel) {
  registry_.Register(Kernel(KernelDefBuilder("KrUnary").Device("CPU")
                                .TypeConstraint("T", {DT_FLOAT, DT_DOUBLE})));
  registry_.Register(Kernel(KernelDefBuilder("KrUnary").Device("CPU")
                                .TypeConstraint<int32_t>("T")));
  auto f = Find(Node("KrUnary", {{"T", DT_DOUBLE}}));
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ((*f)->type_constraints[0].second,
            (std::vector<DataType>{DT_FLOAT, DT_DOUBLE}));
  auto i = Find(Node("KrUnary", {{"T", DT_INT32}}));
  ASSERT_TRUE(i.ok()) << i.status();
  EXPECT_EQ((*i)->type_constraints[0].second, std::vector<DataType>{DT_INT32});

  auto none = Find(Node("KrUnary", {{"T", DT_INT8}}));
  EXPECT_EQ(none.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StrContains(
      none.status().message(),
      "No registered 'KrUnary' OpKernel for 'CPU' devices compatible with "
      "node 'n' (T=int8). Registered:"))
      << none.status();
  EXPECT_TRUE(absl::StrContains(none.status().message(), "T in [int32]"));
  // A node without the constrained attr matches nothing.
  EXPECT_EQ(Find(Node("KrUnary", {})).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(KernelRegistryTest, EveryConstraintMustHoldAndDefaultsCount) {
  registry_.Register(Kernel(KernelDefBuilder("KrTwoTypes").Device("CPU")
                                .TypeConstraint<float>("T")
                                .TypeConstraint<int64_t>("Tidx")));
  EXPECT_TRUE(Find(Node("KrTwoTypes", {{"T", DT_FLOAT}, {"Tidx", DT_INT64}})).ok());
  EXPECT_FALSE(Find(Node("KrTwoTypes", {{"T", DT_FLOAT}, {"Tidx", DT_INT32}})).ok());
  EXPECT_FALSE(Find(Node("KrTwoTypes", {{"T", DT_HALF}, {"Tidx", DT_INT64}})).ok());
  // Tidx left out takes the op's default, int32: no match either.
  EXPECT_FALSE(Find(Node("KrTwoTypes", {{"T", DT_FLOAT}})).ok());
}

TEST_F(KernelRegistryTest, ListTypeConstraintCoversEveryElement) {
  registry_.Register(Kernel(KernelDefBuilder("KrList").Device("CPU")
                                .TypeConstraint("Tlist", {DT_FLOAT, DT_INT32})));
  NodeDef n = Node("KrList", {});
  auto* list = (*n.mutable_attr())["Tlist"].mutable_list();
  list->add_type(DT_FLOAT);
  list->add_type(DT_INT32);
  EXPECT_TRUE(Find(n).ok());
  list->add_type(DT_DOUBLE);
  EXPECT_EQ(Find(n).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(KernelRegistryTest, HigherPriorityWinsInEitherRegistrationOrder) {
  for (bool high_first : {true, false}) {
    KernelRegistry registry;
    KernelDef low = Kernel(KernelDefBuilder("KrUnary").Device("CPU")
                               .TypeConstraint("T", {DT_FLOAT, DT_DOUBLE}));
    KernelDef high = Kernel(KernelDefBuilder("KrUnary").Device("CPU")
                                .TypeConstraint<float>("T").Priority(1));
    if (high_first) {
      registry.Register(std::move(high));
      registry.Register(std::move(low));
    } else {
      registry.Register(std::move(low));
      registry.Register(std::move(high));
    }
    NodeDef n = Node("KrUnary", {{"T", DT_FLOAT}});
    auto k = registry.FindKernel(n, ops_.Find("KrUnary"), "CPU");
    ASSERT_TRUE(k.ok()) << k.status();
    EXPECT_EQ((*k)->priority, 1) << "high_first=" << high_first;
    // double only matches the low-priority kernel.
    n = Node("KrUnary", {{"T", DT_DOUBLE}});
    k = registry.FindKernel(n, ops_.Find("KrUnary"), "CPU");
    ASSERT_TRUE(k.ok()) << k.status();
    EXPECT_EQ((*k)->priority, 0);
  }
}

TEST_F(KernelRegistryTest, EqualPriorityMatchesAreAnError) {
  registry_.Register(Kernel(KernelDefBuilder("KrUnary").Device("CPU")
                                .TypeConstraint("T", {DT_FLOAT, DT_DOUBLE})));
  registry_.Register(Kernel(KernelDefBuilder("KrUnary").Device("CPU")
                                .TypeConstraint("T", {DT_FLOAT, DT_INT32})));
  auto k = Find(Node("KrUnary", {{"T", DT_FLOAT}}));
  EXPECT_EQ(k.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(k.status().message(),
            "Multiple OpKernel registrations match NodeDef 'n' (KrUnary) on "
            "'CPU' devices at the same priority 0: 'device='CPU'; T in [float, "
            "double]' and 'device='CPU'; T in [float, int32]'");
  // Types only one of them takes are not ambiguous.
  EXPECT_TRUE(Find(Node("KrUnary", {{"T", DT_DOUBLE}})).ok());
  EXPECT_TRUE(Find(Node("KrUnary", {{"T", DT_INT32}})).ok());
  // Another device type's kernels do not take part.
  registry_.Register(Kernel(KernelDefBuilder("KrUnary").Device("GPU")
                                .TypeConstraint<float>("T")));
  EXPECT_TRUE(Find(Node("KrUnary", {{"T", DT_FLOAT}}), "GPU").ok());
  // A third kernel above both settles it.
  registry_.Register(Kernel(KernelDefBuilder("KrUnary").Device("CPU")
                                .TypeConstraint<float>("T").Priority(2)));
  auto settled = Find(Node("KrUnary", {{"T", DT_FLOAT}}));
  ASSERT_TRUE(settled.ok()) << settled.status();
  EXPECT_EQ((*settled)->priority, 2);
}

TEST_F(KernelRegistryTest, OverlappingRegistrationsAreListed) {
  registry_.Register(Kernel(KernelDefBuilder("KrUnary").Device("CPU")
                                .TypeConstraint("T", {DT_FLOAT, DT_DOUBLE})));
  registry_.Register(Kernel(KernelDefBuilder("KrUnary").Device("CPU")
                                .TypeConstraint<int32_t>("T")));
  registry_.Register(Kernel(KernelDefBuilder("KrUnary").Device("GPU")
                                .TypeConstraint<float>("T")));
  registry_.Register(Kernel(KernelDefBuilder("KrUnary").Device("CPU")
                                .TypeConstraint<double>("T").Priority(1)));
  EXPECT_TRUE(registry_.OverlappingRegistrations(ops_).empty());

  // Constrained on different attrs: a node can satisfy both.
  registry_.Register(Kernel(KernelDefBuilder("KrTwoTypes").Device("CPU")
                                .TypeConstraint<float>("T")));
  registry_.Register(Kernel(KernelDefBuilder("KrTwoTypes").Device("CPU")
                                .TypeConstraint<int64_t>("Tidx")));
  // An empty type list satisfies any constraint; a non-empty one does not.
  registry_.Register(Kernel(KernelDefBuilder("KrList").Device("CPU")
                                .TypeConstraint<float>("Tlist")));
  registry_.Register(Kernel(KernelDefBuilder("KrList").Device("CPU")
                                .TypeConstraint<int32_t>("Tlist")));
  registry_.Register(Kernel(KernelDefBuilder("KrNonEmptyList").Device("CPU")
                                .TypeConstraint<float>("Tlist")));
  registry_.Register(Kernel(KernelDefBuilder("KrNonEmptyList").Device("CPU")
                                .TypeConstraint<int32_t>("Tlist")));
  EXPECT_EQ(registry_.OverlappingRegistrations(ops_),
            (std::vector<std::string>{
                "KrList: device='CPU'; Tlist in [float] and device='CPU'; "
                "Tlist in [int32]",
                "KrTwoTypes: device='CPU'; T in [float] and device='CPU'; "
                "Tidx in [int64]"}));
  NodeDef n = Node("KrTwoTypes", {{"T", DT_FLOAT}, {"Tidx", DT_INT64}});
  EXPECT_EQ(Find(n).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(KernelRegistryTest, DeviceTypeQueries) {
  registry_.Register(Kernel(KernelDefBuilder("KrUnary").Device("CPU")
                                .TypeConstraint("T", {DT_FLOAT, DT_INT32})));
  registry_.Register(Kernel(KernelDefBuilder("KrUnary").Device("GPU")
                                .TypeConstraint<float>("T")));
  const OpDef* op = ops_.Find("KrUnary");
  EXPECT_EQ(registry_.SupportedDeviceTypes(Node("KrUnary", {{"T", DT_FLOAT}}), op),
            (std::vector<std::string>{"CPU", "GPU"}));
  EXPECT_EQ(registry_.SupportedDeviceTypes(Node("KrUnary", {{"T", DT_INT32}}), op),
            std::vector<std::string>{"CPU"});
  EXPECT_TRUE(registry_.SupportedDeviceTypes(Node("KrUnary", {{"T", DT_INT8}}), op)
                  .empty());
  EXPECT_TRUE(registry_.HasKernelForOp("KrUnary", "GPU"));
  EXPECT_FALSE(registry_.HasKernelForOp("KrUnary", "TPU"));
  EXPECT_FALSE(registry_.HasKernelForOp("KrList", "CPU"));
  EXPECT_TRUE(registry_.HasKernelsForDeviceType("CPU"));
  EXPECT_TRUE(registry_.HasKernelsForDeviceType("GPU"));
  EXPECT_FALSE(registry_.HasKernelsForDeviceType("TPU"));
  EXPECT_FALSE(KernelRegistry().HasKernelsForDeviceType("CPU"));
  EXPECT_EQ(registry_.KernelsForOp("KrUnary").size(), 2u);
  EXPECT_TRUE(registry_.KernelsForOp("KrList").empty());
}

TEST_F(KernelRegistryTest, CreateKernelBuildsOrNamesTheNode) {
  registry_.Register(Kernel(KernelDefBuilder("KrUnary").Device("CPU")
                                .TypeConstraint<float>("T")));
  registry_.Register(KernelDefBuilder("KrUnary").Device("CPU")
                         .TypeConstraint<int32_t>("T")
                         .Build([](OpKernelConstruction* ctx) -> OpKernel* {
                           return new FailingKernel(ctx);
                         }));
  std::unique_ptr<DeviceBase> device = testing::MakeTestCpuDevice(1);
  const OpDef* op = ops_.Find("KrUnary");
  auto ok = registry_.CreateKernel(device.get(), Node("KrUnary", {{"T", DT_FLOAT}}),
                                   op, {DT_FLOAT}, {DT_FLOAT});
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ((*ok)->name(), "n");
  auto bad = registry_.CreateKernel(device.get(), Node("KrUnary", {{"T", DT_INT32}}),
                                    op, {DT_INT32}, {DT_INT32});
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(bad.status().message(), "node 'n' (KrUnary) on "))
      << bad.status();
  EXPECT_TRUE(absl::StrContains(bad.status().message(), "attr 'k' must be positive"));
}

// The kernels this build links (the global registry) never leave a node
// to registration order.
TEST(GlobalKernelRegistryTest, NoTwoRegistrationsOverlap) {
  ASSERT_TRUE(KernelRegistry::Global()->HasKernelsForDeviceType("CPU"));
  std::vector<std::string> overlaps = KernelRegistry::Global()->OverlappingRegistrations();
  EXPECT_TRUE(overlaps.empty()) << "overlapping kernels:\n"
                                << absl::StrJoin(overlaps, "\n");
}

}  // namespace
}  // namespace graphrun
