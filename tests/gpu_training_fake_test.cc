// Training on the fake GPU (runtime/gpu/testing): variables in its device
// memory and the optimizer updates that change them, every node asked onto
// /device:GPU:0. Two steps of plain SGD, momentum and Adam (with and
// without Nesterov), in the ref form (VariableV2, Assign, Apply*) and the
// resource form (VarHandleOp, AssignVariableOp, ReadVariableOp,
// ResourceApply*), give TensorFlow's values bit for bit
// (fixtures/training/apply_ops_data.h), with the variables, their
// initializers and readers and the update placed on the GPU. A variable
// read before it was assigned fails naming it; the resource variables'
// other kernels (adding, the initialized flag, destroying) run there too.
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "graph/graph_io.h"
#include "gtest/gtest.h"
#include "kernels/kernel_registry.h"
#include "runtime/gpu/gpu_device.h"
#include "runtime/gpu/testing/fake_gpu_platform.h"
#include "runtime/session.h"
#include "tests/apply_case_graph.h"
#include "tests/fake_gpu_session.h"
#include "tests/fixtures/training/apply_ops_data.h"

namespace graphrun {
namespace {

using namespace apply_ops_data;  // NOLINT: the fixture's arrays

SessionOptions WithFakeGpu() {
  SessionOptions options = testing::WithFakeGpu();
  options.allow_soft_placement = true;
  options.optimize = SessionOptions::Optimize::kNone;
  return options;
}

// The dense cases of the optimizers with GPU kernels.
std::vector<ApplyCase> GpuCases() {
  std::vector<ApplyCase> out;
  for (const ApplyCase& c : Cases()) {
    for (const char* name : {"sgd", "momentum", "momentum_nesterov", "adam", "adam_nesterov"}) {
      if (std::string(c.name) == name) out.push_back(c);
    }
  }
  return out;
}

// The case's graph (tests/apply_case_graph.h) with every node asked onto
// the GPU.
GraphDef Graph(const ApplyCase& c, bool resource) {
  absl::StatusOr<GraphDef> graph = ParseGraphDef(
      apply_case_graph::ApplyGraph(c, resource, "/device:GPU:0"), GraphFormat::kText);
  EXPECT_TRUE(graph.ok()) << graph.status();
  return graph.ok() ? *graph : GraphDef();
}

Tensor Values(const float* values) {
  return Tensor::FromVector<float>(std::vector<float>(values, values + kN));
}

// The device each node of the step's partitions ran on.
std::map<std::string, std::string> DevicesOf(const RunMetadata& metadata) {
  std::map<std::string, std::string> out;
  for (const GraphDef& part : metadata.partition_graphs()) {
    for (const NodeDef& n : part.node()) out[n.name()] = n.device();
  }
  return out;
}

void ExpectOnGpu(const std::map<std::string, std::string>& devices,
                 const std::vector<std::string>& nodes) {
  for (const std::string& name : nodes) {
    auto it = devices.find(name);
    ASSERT_NE(it, devices.end()) << name << " is in no partition";
    EXPECT_TRUE(absl::EndsWith(it->second, "/device:GPU:0")) << name << " ran on " << it->second;
  }
}

TEST(GpuTrainingFakeTest, TwoStepsOnTheGpuGiveTensorFlowsValues) {
  const float powers[2][2] = {{kBeta1, kBeta2}, {kBeta1 * kBeta1, kBeta2 * kBeta2}};
  const std::vector<ApplyCase> cases = GpuCases();
  ASSERT_EQ(cases.size(), 5u);
  for (const ApplyCase& c : cases) {
    for (bool resource : {false, true}) {
      SCOPED_TRACE(absl::StrCat(c.name, resource ? " (resource)" : " (ref)"));
      auto session = Session::Create(Graph(c, resource), WithFakeGpu());
      ASSERT_TRUE(session.ok()) << session.status();
      RunOptions run_options;
      run_options.set_output_partition_graphs(true);
      std::vector<std::pair<std::string, Tensor>> feeds;
      std::vector<std::string> inits, reads, vars;
      for (size_t k = 0; k < c.init.size(); ++k) {
        feeds.push_back({absl::StrCat("x", k), Values(c.init[k])});
        inits.push_back(absl::StrCat("init", k));
        reads.push_back(absl::StrCat("read", k));
        vars.push_back(absl::StrCat("s", k));
      }
      std::vector<Tensor> out;
      RunMetadata init_metadata;
      absl::Status s = (*session)->Run(run_options, feeds, {}, inits, &out, &init_metadata);
      ASSERT_TRUE(s.ok()) << s;
      ExpectOnGpu(DevicesOf(init_metadata), inits);
      for (int step = 0; step < 2; ++step) {
        RunMetadata metadata;
        s = (*session)->Run(run_options,
                            {{"grad", Values(step == 0 ? kGrad0 : kGrad1)},
                             {"b1p", Tensor::Scalar<float>(powers[step][0])},
                             {"b2p", Tensor::Scalar<float>(powers[step][1])}},
                            {}, {"apply"}, &out, &metadata);
        ASSERT_TRUE(s.ok()) << s;
        std::vector<std::string> on_gpu = vars;
        on_gpu.push_back("apply");
        ExpectOnGpu(DevicesOf(metadata), on_gpu);
      }
      RunMetadata read_metadata;
      s = (*session)->Run(run_options, {}, reads, {}, &out, &read_metadata);
      ASSERT_TRUE(s.ok()) << s;
      ExpectOnGpu(DevicesOf(read_metadata), reads);
      ASSERT_EQ(out.size(), c.init.size());
      for (size_t k = 0; k < c.init.size(); ++k) {
        ASSERT_EQ(out[k].NumElements(), kN);
        for (int64_t i = 0; i < kN; ++i) {
          const float got = out[k].flat<float>()[i], want = c.want[k][i];
          EXPECT_EQ(std::memcmp(&got, &want, sizeof(float)), 0)
              << "slot " << k << " element " << i << ": " << absl::StrFormat("%.9g", got)
              << " vs TensorFlow's " << absl::StrFormat("%.9g", want);
        }
      }
    }
  }
}

// Reading a variable on the GPU before anything assigned it fails naming
// it, as an update of it does; nothing is left changed.
TEST(GpuTrainingFakeTest, UninitializedVariableOnTheGpuIsNamed) {
  const std::vector<ApplyCase> cases = GpuCases();
  const ApplyCase& adam = cases[3];
  ASSERT_STREQ(adam.name, "adam");
  for (bool resource : {false, true}) {
    SCOPED_TRACE(resource ? "resource" : "ref");
    auto session = Session::Create(Graph(adam, resource), WithFakeGpu());
    ASSERT_TRUE(session.ok()) << session.status();
    std::vector<Tensor> out;
    absl::Status s = (*session)->Run({}, {"read1"}, {}, &out);
    EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
    EXPECT_TRUE(absl::StrContains(s.message(), "s1")) << s;
    EXPECT_TRUE(absl::StrContains(s.message(), resource ? "Error while reading resource variable"
                                                        : "Attempting to use uninitialized value"))
        << s;
    s = (*session)->Run({{"grad", Values(kGrad0)},
                         {"b1p", Tensor::Scalar<float>(kBeta1)},
                         {"b2p", Tensor::Scalar<float>(kBeta2)}},
                        {}, {"apply"}, &out);
    EXPECT_EQ(s.code(), resource ? absl::StatusCode::kInternal
                                 : absl::StatusCode::kFailedPrecondition)
        << s;
    EXPECT_TRUE(absl::StrContains(s.message(), "s0")) << s;
    // A gradient of another shape is refused naming it, the variables kept.
    ASSERT_TRUE((*session)
                    ->Run({{"x0", Values(kVar)}, {"x1", Values(kAcc1)}, {"x2", Values(kAcc2)}}, {},
                          {"init0", "init1", "init2"}, &out)
                    .ok());
    s = (*session)->Run({{"grad", Tensor::FromVector<float>({1, 2})},
                         {"b1p", Tensor::Scalar<float>(kBeta1)},
                         {"b2p", Tensor::Scalar<float>(kBeta2)}},
                        {}, {"apply"}, &out);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_TRUE(absl::StrContains(s.message(), "grad")) << s;
    ASSERT_TRUE((*session)->Run({}, {"read0"}, {}, &out).ok());
    EXPECT_EQ(std::memcmp(out[0].raw_data(), kVar, sizeof(float) * kN), 0);
  }
}

// AssignAddVariableOp, AssignSubVariableOp, VarIsInitializedOp and
// DestroyResourceOp on the GPU; a value fetched before an update keeps the
// value it had.
TEST(GpuTrainingFakeTest, ResourceVariableKernelsRunOnTheGpu) {
  apply_case_graph::GraphText g("/device:GPU:0");
  auto node = [&](const std::string& name, const std::string& op, const std::string& rest) {
    g.Node(name, op, rest);
  };
  const std::string dtype = apply_case_graph::FloatAttr("dtype");
  node("x", "Placeholder", dtype);
  node("d", "Placeholder", dtype);
  node("v", "VarHandleOp", dtype + " attr { key: 'shape' value { shape { dim { size: 3 } } } }");
  node("init", "AssignVariableOp", "input: 'v' input: 'x' " + dtype);
  node("read", "ReadVariableOp", "input: 'v' " + dtype);
  node("add", "AssignAddVariableOp", "input: 'v' input: 'd' " + dtype);
  node("sub", "AssignSubVariableOp", "input: 'v' input: 'd' " + dtype);
  node("inited", "VarIsInitializedOp", "input: 'v'");
  node("destroy", "DestroyResourceOp", "input: 'v'");
  absl::StatusOr<GraphDef> graph = ParseGraphDef(g.Text(), GraphFormat::kText);
  ASSERT_TRUE(graph.ok()) << graph.status();
  auto session = Session::Create(*graph, WithFakeGpu());
  ASSERT_TRUE(session.ok()) << session.status();
  RunOptions run_options;
  run_options.set_output_partition_graphs(true);
  std::vector<Tensor> out;
  RunMetadata metadata;
  ASSERT_TRUE((*session)->Run(run_options, {}, {"inited"}, {}, &out, &metadata).ok());
  EXPECT_FALSE(out[0].scalar<bool>());
  ASSERT_TRUE((*session)->Run({{"x", Tensor::FromVector<float>({1, 2, 3})}}, {}, {"init"}, &out).ok());
  ASSERT_TRUE((*session)->Run({}, {"inited"}, {}, &out).ok());
  EXPECT_TRUE(out[0].scalar<bool>());
  std::vector<Tensor> before;
  ASSERT_TRUE((*session)->Run({}, {"read"}, {}, &before).ok());
  metadata.Clear();
  ASSERT_TRUE((*session)
                  ->Run(run_options, {{"d", Tensor::FromVector<float>({0.5f, 0.25f, -4})}}, {},
                        {"add"}, &out, &metadata)
                  .ok());
  ExpectOnGpu(DevicesOf(metadata), {"v", "add"});
  ASSERT_TRUE((*session)->Run({}, {"read"}, {}, &out).ok());
  EXPECT_EQ(out[0].flat<float>()[0], 1.5f);
  EXPECT_EQ(out[0].flat<float>()[1], 2.25f);
  EXPECT_EQ(out[0].flat<float>()[2], -1.0f);
  EXPECT_EQ(before[0].flat<float>()[2], 3.0f);
  ASSERT_TRUE(
      (*session)->Run({{"d", Tensor::FromVector<float>({1, 1, 1})}}, {}, {"sub"}, &out).ok());
  ASSERT_TRUE((*session)->Run({}, {"read"}, {}, &out).ok());
  EXPECT_EQ(out[0].flat<float>()[0], 0.5f);
  metadata.Clear();
  ASSERT_TRUE((*session)->Run(run_options, {}, {}, {"destroy"}, &out, &metadata).ok());
  ExpectOnGpu(DevicesOf(metadata), {"destroy"});
  const absl::Status s = (*session)->Run({}, {"read"}, {}, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
}

// The GPU's variable and training kernels leave no node to registration
// order (against the CPU's and the other GPU kernels this test links).
TEST(GpuTrainingFakeTest, NoRegistrationOfTheseOpsOverlaps) {
  ASSERT_TRUE(KernelRegistry::Global()->HasKernelForOp("ResourceApplyAdam", kDeviceGpu));
  for (const std::string& overlap : KernelRegistry::Global()->OverlappingRegistrations()) {
    for (const char* op :
         {"VariableV2", "Assign", "AssignAdd", "AssignSub", "IsVariableInitialized",
          "VarHandleOp", "ReadVariableOp", "AssignVariableOp", "AssignAddVariableOp",
          "AssignSubVariableOp", "VarIsInitializedOp", "DestroyResourceOp", "VariableShape",
          "ApplyGradientDescent", "ResourceApplyGradientDescent", "ApplyMomentum",
          "ResourceApplyMomentum", "ApplyAdam", "ResourceApplyAdam", "ReluGrad", "BiasAddGrad"}) {
      EXPECT_FALSE(absl::StartsWith(overlap, absl::StrCat(op, ":"))) << overlap;
    }
  }
}

}  // namespace
}  // namespace graphrun
