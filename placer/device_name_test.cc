#include "placer/device_name.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace graphrun {
namespace placer {
namespace {

using ::testing::HasSubstr;

DeviceName Parse(absl::string_view name) {
  absl::StatusOr<DeviceName> parsed = ParseDeviceName(name);
  EXPECT_TRUE(parsed.ok()) << name << ": " << parsed.status();
  return parsed.ok() ? *parsed : DeviceName();
}

// Parses and prints: the canonical form of `name`.
std::string Canon(absl::string_view name) {
  return DeviceNameToString(Parse(name));
}

TEST(ParseDeviceNameTest, FullName) {
  DeviceName d = Parse("/job:localhost/replica:0/task:0/device:GPU:0");
  EXPECT_TRUE(IsCompleteDeviceName(d));
  EXPECT_EQ(d.job, "localhost");
  EXPECT_EQ(d.replica, 0);
  EXPECT_EQ(d.task, 0);
  EXPECT_EQ(d.type, "GPU");
  EXPECT_EQ(d.id, 0);

  d = Parse("/job:worker_2/replica:3/task:17/device:XLA_GPU:12");
  EXPECT_EQ(d.job, "worker_2");
  EXPECT_EQ(d.replica, 3);
  EXPECT_EQ(d.task, 17);
  EXPECT_EQ(d.type, "XLA_GPU");
  EXPECT_EQ(d.id, 12);
}

TEST(ParseDeviceNameTest, PartialSpecs) {
  DeviceName d = Parse("/job:worker/task:1");
  EXPECT_TRUE(d.has_job && d.has_task);
  EXPECT_FALSE(d.has_replica || d.has_type || d.has_id);
  EXPECT_EQ(d.task, 1);

  d = Parse("/device:GPU:*");
  EXPECT_TRUE(d.has_type);
  EXPECT_FALSE(d.has_id || d.has_job);

  d = Parse("/device:CPU");
  EXPECT_TRUE(d.has_type);
  EXPECT_FALSE(d.has_id);

  d = Parse("/replica:0");
  EXPECT_TRUE(d.has_replica);
  EXPECT_EQ(d.replica, 0);

  EXPECT_EQ(Parse(""), DeviceName());
  EXPECT_EQ(Parse("/"), DeviceName());
  EXPECT_EQ(Parse("/job:*/replica:*/task:*/device:*:*"), DeviceName());
}

TEST(ParseDeviceNameTest, ComponentsInAnyOrder) {
  EXPECT_EQ(Canon("/task:2/job:ps/device:CPU:0/replica:1"),
            "/job:ps/replica:1/task:2/device:CPU:0");
}

TEST(ParseDeviceNameTest, LegacyAndLowerCase) {
  EXPECT_EQ(Canon("/gpu:0"), "/device:GPU:0");
  EXPECT_EQ(Canon("/GPU:1"), "/device:GPU:1");
  EXPECT_EQ(Canon("/cpu:*"), "/device:CPU:*");
  EXPECT_EQ(Canon("/CPU:3"), "/device:CPU:3");
  EXPECT_EQ(Canon("/device:gpu:0"), "/device:GPU:0");
  EXPECT_EQ(Canon("/job:a/replica:0/task:0/gpu:2"),
            "/job:a/replica:0/task:0/device:GPU:2");
}

TEST(ParseDeviceNameTest, LocalNames) {
  EXPECT_EQ(Canon("GPU:0"), "/device:GPU:0");
  EXPECT_EQ(Canon("gpu:0"), "/device:GPU:0");
  EXPECT_EQ(Canon("CPU"), "/device:CPU:*");
  EXPECT_EQ(Canon("cpu:*"), "/device:CPU:*");
  EXPECT_EQ(Canon("XLA_CPU:4"), "/device:XLA_CPU:4");
}

TEST(ParseDeviceNameTest, Errors) {
  struct Case {
    const char* name;
    const char* message;
  };
  const Case cases[] = {
      {"/job:", "expected a job name"},
      {"/job:1abc", "expected a job name"},
      {"/job:a-b", "expected a job name"},
      {"/job:a:b", "expected a job name"},
      {"/task:x", "expected a task number"},
      {"/task:", "expected a task number"},
      {"/task:-1", "expected a task number"},
      {"/task:0x", "expected a task number"},
      {"/task:99999999999", "expected a task number"},
      {"/task:*x", "expected a task number"},
      {"/replica:a", "expected a replica number"},
      {"/device:GPU:-1", "after '/device:GPU:'"},
      {"/device:GPU:", "expected a device id"},
      {"/device:GPU:0:1", "expected a device id"},
      {"/device:", "expected a device type"},
      {"/device:9", "expected a device type"},
      {"/gpu:x", "after '/GPU:'"},
      {"/gpu:", "expected a device id"},
      {"/job:a/job:b", "'/job:' given twice"},
      {"/task:0/task:0", "'/task:' given twice"},
      {"/device:GPU:0/gpu:1", "'/device:' given twice"},
      {"/job:a/", "expected /job:, /replica:, /task:, /device:"},
      {"/foo:bar", "at '/foo:bar'"},
      {"/Gpu:0", "expected /job:"},
      {"//job:a", "expected /job:"},
      {"job:a", "expected a local device name"},
      {"GPU:", "expected a local device name"},
      {"GPU:0/job:a", "expected a local device name"},
      {"GPU:-1", "expected a local device name"},
      {"1GPU", "expected a local device name"},
      {" /job:a", "expected a local device name"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<DeviceName> parsed = ParseDeviceName(c.name);
    ASSERT_FALSE(parsed.ok()) << c.name;
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(parsed.status().message(),
                HasSubstr(absl::StrCat("'", c.name, "'")));
    EXPECT_THAT(parsed.status().message(), HasSubstr(c.message)) << c.name;
  }
}

TEST(DeviceNameToStringTest, OmitsAbsentFields) {
  DeviceName d;
  EXPECT_EQ(DeviceNameToString(d), "");
  d.has_job = true;
  d.job = "worker";
  EXPECT_EQ(DeviceNameToString(d), "/job:worker");
  d.has_type = true;
  d.type = "GPU";
  EXPECT_EQ(DeviceNameToString(d), "/job:worker/device:GPU:*");
  d.has_id = true;
  d.id = 2;
  EXPECT_EQ(DeviceNameToString(d), "/job:worker/device:GPU:2");
  d.has_type = false;
  EXPECT_EQ(DeviceNameToString(d), "/job:worker/device:*:2");
  EXPECT_EQ(DeviceNameToString(Parse(DeviceNameToString(d))),
            "/job:worker/device:*:2");
}

TEST(MatchesTest, SpecFieldsMustAgree) {
  const DeviceName gpu0 = Parse("/job:localhost/replica:0/task:0/device:GPU:0");
  const DeviceName cpu0 = Parse("/job:localhost/replica:0/task:0/device:CPU:0");
  EXPECT_TRUE(Matches(Parse(""), gpu0));
  EXPECT_TRUE(Matches(Parse("/device:GPU:*"), gpu0));
  EXPECT_FALSE(Matches(Parse("/device:GPU:*"), cpu0));
  EXPECT_TRUE(Matches(Parse("gpu:0"), gpu0));
  EXPECT_FALSE(Matches(Parse("/gpu:1"), gpu0));
  EXPECT_TRUE(Matches(Parse("/job:localhost/task:0"), cpu0));
  EXPECT_FALSE(Matches(Parse("/job:worker"), cpu0));
  EXPECT_FALSE(Matches(Parse("/replica:1"), cpu0));
  EXPECT_TRUE(Matches(gpu0, gpu0));
  // A field the device lacks does not match a spec that requires it.
  EXPECT_FALSE(Matches(Parse("/job:a"), Parse("/device:GPU:0")));
  EXPECT_TRUE(Matches(Parse("/device:GPU:0"), Parse("/job:a/device:GPU:0")));
}

TEST(MergeDeviceNamesTest, CombinesCompatibleSpecs) {
  DeviceName target = Parse("/job:worker/device:GPU:*");
  ASSERT_TRUE(MergeDeviceNames(&target, Parse("/task:1/gpu:0")).ok());
  EXPECT_EQ(DeviceNameToString(target), "/job:worker/task:1/device:GPU:0");
  ASSERT_TRUE(MergeDeviceNames(&target, Parse("")).ok());
  ASSERT_TRUE(MergeDeviceNames(&target, Parse("/job:worker/task:1")).ok());
  EXPECT_EQ(DeviceNameToString(target), "/job:worker/task:1/device:GPU:0");

  DeviceName empty;
  ASSERT_TRUE(MergeDeviceNames(&empty, Parse("/replica:2")).ok());
  EXPECT_EQ(DeviceNameToString(empty), "/replica:2");
}

TEST(MergeDeviceNamesTest, ConflictsNameBothSpecs) {
  struct Case {
    const char* a;
    const char* b;
    const char* field;
  };
  const Case cases[] = {
      {"/job:a", "/job:b", "conflicting job"},
      {"/replica:0", "/replica:1", "conflicting replica"},
      {"/task:0/gpu:0", "/task:3", "conflicting task"},
      {"/device:GPU:0", "/device:CPU:0", "conflicting device type"},
      {"/device:GPU:0", "/device:GPU:1", "conflicting device id"},
      {"/job:a/gpu:0", "/job:b/gpu:1", "conflicting job, device id"},
  };
  for (const Case& c : cases) {
    DeviceName target = Parse(c.a);
    const DeviceName before = target;
    absl::Status status = MergeDeviceNames(&target, Parse(c.b));
    ASSERT_FALSE(status.ok()) << c.a << " + " << c.b;
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(status.message(), HasSubstr(Canon(c.a)));
    EXPECT_THAT(status.message(), HasSubstr(Canon(c.b)));
    EXPECT_THAT(status.message(), HasSubstr(c.field));
    EXPECT_EQ(target, before) << "target changed on a failed merge";
  }
}

TEST(TaskNameTest, TaskPartAndSameTask) {
  const DeviceName gpu = Parse("/job:worker/replica:0/task:1/device:GPU:0");
  const DeviceName cpu = Parse("/job:worker/replica:0/task:1/cpu:0");
  const DeviceName other = Parse("/job:worker/replica:0/task:2/cpu:0");
  EXPECT_EQ(TaskName(gpu), "/job:worker/replica:0/task:1");
  EXPECT_EQ(TaskName(Parse("/job:ps/gpu:0")), "/job:ps");
  EXPECT_TRUE(SameTask(gpu, cpu));
  EXPECT_FALSE(SameTask(gpu, other));
  // Incomplete task parts are never the same task.
  EXPECT_FALSE(
      SameTask(Parse("/job:worker/task:1"), Parse("/job:worker/task:1")));
}

TEST(CanonicalizeDeviceNameTest, RequiresCompleteName) {
  absl::StatusOr<std::string> canon =
      CanonicalizeDeviceName("/job:localhost/replica:0/task:0/gpu:1");
  ASSERT_TRUE(canon.ok()) << canon.status();
  EXPECT_EQ(*canon, "/job:localhost/replica:0/task:0/device:GPU:1");

  canon = CanonicalizeDeviceName("/job:localhost/device:GPU:*");
  ASSERT_FALSE(canon.ok());
  EXPECT_EQ(canon.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(canon.status().message(),
              HasSubstr("missing replica, task, device id"));
  EXPECT_THAT(canon.status().message(),
              HasSubstr("/job:localhost/device:GPU:*"));

  canon = CanonicalizeDeviceName("/job:");
  ASSERT_FALSE(canon.ok());
  EXPECT_THAT(canon.status().message(), HasSubstr("expected a job name"));
}

}  // namespace
}  // namespace placer
}  // namespace graphrun
