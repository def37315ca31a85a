// Runs graphs that TensorFlow exported (tests/fixtures, made by
// make_fixtures.py) and compares graphrun's results with TensorFlow's.
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/fixture_manifest.h"

namespace graphrun {
namespace {

constexpr char kDir[] = "tests/fixtures/";

TEST(TfFixturesTest, OutputsMatchTensorFlow) {
  std::vector<testing::FixtureModel> models = testing::ReadFixtureManifest(kDir);
  ASSERT_GE(models.size(), 3u) << "tests/fixtures/MANIFEST is missing";
  for (const testing::FixtureModel& m : models) {
    SCOPED_TRACE(m.name);
    for (int cpu_devices : {1, 2}) {
      SCOPED_TRACE(absl::StrCat(cpu_devices, " CPU devices"));
      SessionOptions options;
      options.cpu_devices = cpu_devices;
      // Two devices: pin the nodes alternately, so the graph is cut into
      // two partitions joined by Send/Recv (the placer alone keeps a graph
      // this small on one device).
      RunMetadata metadata;
      absl::Status s = testing::RunFixture(
          m, options, &metadata, cpu_devices == 1 ? nullptr : testing::PinAlternately);
      ASSERT_TRUE(s.ok()) << s;
      // It was cut: one partition per device, tensors crossing between them.
      ASSERT_EQ(metadata.partition_graphs_size(), cpu_devices);
      int sends = 0;
      for (const GraphDef& part : metadata.partition_graphs()) {
        for (const NodeDef& n : part.node()) sends += n.op() == "_Send";
      }
      if (cpu_devices == 1) {
        EXPECT_EQ(sends, 0);
      } else {
        EXPECT_GT(sends, 0);
        EXPECT_NE(metadata.partition_graphs(0).node(0).device(),
                  metadata.partition_graphs(1).node(0).device());
      }
    }
  }
}

}  // namespace
}  // namespace graphrun
