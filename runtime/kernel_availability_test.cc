// The runtime's kernel availability for the placer, from the registry of
// this binary: it links no kernels, so every device type is "unbuilt".
#include "runtime/kernel_availability.h"

#include "graph/graph_io.h"
#include "graph/import.h"
#include "gtest/gtest.h"
#include "placer/cost_model.h"
#include "placer/device_set.h"

namespace graphrun {
namespace {

constexpr char kConst[] = R"(
  node { name: "a" op: "Const"
         attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "value" value { tensor { dtype: DT_FLOAT
           tensor_shape { dim { size: 4 } dim { size: 4 } } float_val: 1 } } } })";

TEST(KernelAvailabilityTest, UnbuiltDeviceTypesAreAssumedOnlyWhenAsked) {
  auto def = ParseGraphDef(kConst, GraphFormat::kText);
  ASSERT_TRUE(def.ok()) << def.status();
  auto g = ImportGraphDef(*def);
  ASSERT_TRUE(g.ok()) << g.status();
  const placer::DeviceSet d = placer::LocalDeviceSet(0, 1);  // one GPU
  placer::CostModel costs;

  auto strict = RegistryAvailability();
  placer::PlacerOptions po;
  po.availability = strict.get();
  auto refused = placer::Place(**g, d, costs, po);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("GPU"), std::string::npos) << refused.status();

  RegistryAvailabilityOptions o;
  o.assume_unbuilt_types_run_everything = true;
  auto assumed = RegistryAvailability(o);
  po.availability = assumed.get();
  auto planned = placer::Place(**g, d, costs, po);
  ASSERT_TRUE(planned.ok()) << planned.status();
  EXPECT_EQ(d.devices()[planned->device[0]].type, "GPU");

  // Ops named CPU-only have no kernel elsewhere, assumed or not.
  o.cpu_only_ops = {"Const"};
  auto cpu_only = RegistryAvailability(o);
  po.availability = cpu_only.get();
  EXPECT_FALSE(placer::Place(**g, d, costs, po).ok());
}

}  // namespace
}  // namespace graphrun
