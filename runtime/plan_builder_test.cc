#include "runtime/plan_builder.h"

#include <map>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "graph/graph_io.h"
#include "graph/import.h"
#include "gtest/gtest.h"

namespace graphrun {
namespace {

constexpr char kPrefix[] = "/job:localhost/replica:0/task:0";

std::string Cpu(int i) { return absl::StrCat(kPrefix, "/device:CPU:", i); }

class PlanBuilderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    CpuDeviceOptions cpu;
    cpu.intra_op_threads = 1;
    for (int i = 0; i < 2; ++i) owned_.push_back(NewCpuDevice(kPrefix, i, cpu));
    for (const auto& d : owned_) devices_.push_back(d.get());
    auto set = DescribeDevices(devices_, kPrefix);
    ASSERT_TRUE(set.ok()) << set.status();
    set_ = std::move(set).value();
  }

  // a = Const; b = Neg(a); c = Neg(b), with the devices given ("" = any).
  std::unique_ptr<Graph> Chain(const std::string& a, const std::string& b,
                               const std::string& c) {
    auto def = ParseGraphDef(
        absl::StrCat(R"pb(
          node { name: "a" op: "Const" device: ")pb", a, R"pb("
                 attr { key: "dtype" value { type: DT_FLOAT } }
                 attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 3 } } } }
          node { name: "b" op: "Neg" input: "a" device: ")pb", b, R"pb("
                 attr { key: "T" value { type: DT_FLOAT } } }
          node { name: "c" op: "Neg" input: "b" device: ")pb", c, R"pb("
                 attr { key: "T" value { type: DT_FLOAT } } }
        )pb"),
        GraphFormat::kText);
    EXPECT_TRUE(def.ok()) << def.status();
    auto g = ImportGraphDef(*def);
    EXPECT_TRUE(g.ok()) << g.status();
    return std::move(g).value();
  }

  std::vector<std::unique_ptr<Device>> owned_;
  std::vector<Device*> devices_;
  placer::DeviceSet set_;
  placer::CostModel cost_model_;
};

// Per partition device: node name -> node.
std::map<std::string, std::map<std::string, const NodeDef*>> Nodes(const PartitionedStep& step) {
  std::map<std::string, std::map<std::string, const NodeDef*>> out;
  for (const auto& [device, def] : step.partitions) {
    for (const NodeDef& n : def.node()) out[device][n.name()] = &n;
  }
  return out;
}

TEST_F(PlanBuilderTest, DescribesCpuDevicesUnderTheirOwnNames) {
  ASSERT_EQ(set_.size(), 2);
  EXPECT_EQ(set_.devices()[0].name, Cpu(0));
  EXPECT_EQ(set_.devices()[1].name, Cpu(1));
  EXPECT_GT(set_.devices()[1].peak_flops, 0);
  // Devices named under an incomplete prefix.
  std::unique_ptr<Device> partial = NewCpuDevice("/job:localhost", 0, CpuDeviceOptions());
  auto bad = DescribeDevices({partial.get()}, "/job:localhost");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("SessionOptions.device_prefix '/job:localhost'"),
            std::string::npos)
      << bad.status();
}

TEST_F(PlanBuilderTest, PinnedNodesLandWherePinnedJoinedBySendRecv) {
  auto graph = Chain(Cpu(0), Cpu(1), Cpu(0));
  std::string log;
  PlanOptions options;
  options.placement_log = [&](const std::string& s) { log += s; };
  auto step = PlaceAndPartition(*graph, set_, cost_model_, options);
  ASSERT_TRUE(step.ok()) << step.status();
  ASSERT_EQ(step->partitions.size(), 2u);
  auto nodes = Nodes(*step);
  EXPECT_EQ(nodes[Cpu(0)].count("a"), 1u);
  EXPECT_EQ(nodes[Cpu(1)].count("b"), 1u);
  EXPECT_EQ(nodes[Cpu(0)].count("c"), 1u);
  // a -> b crosses CPU:0 -> CPU:1 and b -> c crosses back: one _Send and
  // one _Recv per crossing, each pair with one tensor name.
  std::multiset<std::string> sends, recvs;
  for (const auto& [device, by_name] : nodes) {
    for (const auto& [name, n] : by_name) {
      EXPECT_EQ(n->device(), device) << name;
      if (n->op() == "_Send") sends.insert(n->attr().at("tensor_name").s());
      if (n->op() == "_Recv") recvs.insert(n->attr().at("tensor_name").s());
    }
  }
  EXPECT_EQ(sends.size(), 2u);
  EXPECT_EQ(sends, recvs);
  EXPECT_EQ(step->summary.devices_size(), 2);
  EXPECT_NE(log.find("b: (Neg): " + Cpu(1)), std::string::npos) << log;

  auto parts = CreatePartitionExecutors(step->partitions, devices_);
  ASSERT_TRUE(parts.ok()) << parts.status();
  ASSERT_EQ(parts->size(), 2u);
  EXPECT_EQ((*parts)[0].executor->device()->name(), Cpu(0));
  EXPECT_EQ((*parts)[1].executor->device()->name(), Cpu(1));
}

TEST_F(PlanBuilderTest, OneDeviceIsOnePartitionWithoutSendRecv) {
  auto graph = Chain(Cpu(1), "", Cpu(1));
  auto step = PlaceAndPartition(*graph, set_, cost_model_, {});
  ASSERT_TRUE(step.ok()) << step.status();
  ASSERT_EQ(step->partitions.size(), 1u);
  const auto& [device, def] = *step->partitions.begin();
  EXPECT_EQ(device, Cpu(1));
  ASSERT_EQ(def.node_size(), 3);
  for (const NodeDef& n : def.node()) EXPECT_EQ(n.device(), Cpu(1)) << n.name();
}

TEST_F(PlanBuilderTest, Errors) {
  // No CPU:5 here; soft placement falls back to a device of the task.
  auto graph = Chain(Cpu(5), "", "");
  auto step = PlaceAndPartition(*graph, set_, cost_model_, {});
  EXPECT_EQ(step.status().code(), absl::StatusCode::kInvalidArgument) << step.status();
  PlanOptions soft;
  soft.placer.allow_soft_placement = true;
  EXPECT_TRUE(PlaceAndPartition(*graph, set_, cost_model_, soft).ok());
  // A partition for a device this process does not have.
  auto one = PlaceAndPartition(*Chain(Cpu(1), Cpu(1), Cpu(1)), set_, cost_model_, {});
  ASSERT_TRUE(one.ok()) << one.status();
  auto parts = CreatePartitionExecutors(one->partitions, {devices_[0]});
  EXPECT_EQ(parts.status().code(), absl::StatusCode::kInvalidArgument) << parts.status();
  EXPECT_NE(parts.status().message().find(Cpu(1)), std::string::npos) << parts.status();
}

TEST_F(PlanBuilderTest, KernelEvaluatorRunsTheNodesKernel) {
  NodeDef node;
  node.set_name("sum");
  node.set_op("AddV2");
  (*node.mutable_attr())["T"].set_type(DT_FLOAT);
  auto op_def = OpRegistry::Global()->LookUp("AddV2");
  ASSERT_TRUE(op_def.ok()) << op_def.status();
  NodeEvaluator evaluate = KernelEvaluator(devices_[0]);
  auto out = evaluate(node, **op_def,
                      {Tensor::FromVector<float>({1, 2}), Tensor::FromVector<float>({3, 4.5})});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 1u);
  EXPECT_EQ((*out)[0].flat<float>()[0], 4.f);
  EXPECT_EQ((*out)[0].flat<float>()[1], 6.5f);
}


// The partitioner writes each sending device's incarnation into the keys
// of its _Send/_Recv pairs.
TEST_F(PlanBuilderTest, SendRecvKeysCarryTheSendingDevicesIncarnation) {
  auto graph = Chain(Cpu(0), Cpu(1), Cpu(0));
  PlanOptions options;
  std::map<std::string, uint64_t> incarnations;
  for (Device* d : devices_) incarnations[d->name()] = d->incarnation();
  options.incarnation = [&](const std::string& device) { return incarnations.at(device); };
  auto step = PlaceAndPartition(*graph, set_, cost_model_, options);
  ASSERT_TRUE(step.ok()) << step.status();
  int checked = 0;
  for (const auto& [device, by_name] : Nodes(*step)) {
    for (const auto& [name, n] : by_name) {
      if (n->op() != "_Send" && n->op() != "_Recv") continue;
      const std::string& sender = n->attr().at("send_device").s();
      EXPECT_EQ(static_cast<uint64_t>(n->attr().at("send_device_incarnation").i()),
                incarnations.at(sender))
          << name;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 4);
}

}  // namespace
}  // namespace graphrun
