// Expected clusters, tasks and chiefs are TensorFlow's (2.21): ClusterSpec,
// TFConfigClusterResolver, multi_worker_util.is_chief, and
// SlurmClusterResolver / expand_hostlist / expand_tasks_per_node run on the
// same inputs.
#include "distributed/cluster_spec.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace graphrun {
namespace distributed {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

MATCHER_P(IsInvalid, substring, "") {
  if (arg.status().code() != absl::StatusCode::kInvalidArgument) {
    *result_listener << "status is " << arg.status();
    return false;
  }
  if (!absl::StrContains(arg.status().message(), substring)) {
    *result_listener << "message is: " << arg.status().message();
    return false;
  }
  return true;
}

TEST(ClusterSpecTest, ParsesListAndSparseJobs) {
  absl::StatusOr<ClusterSpec> cluster = ParseClusterSpecJson(R"({
      "worker": ["w0.example.com:2222", "w1.example.com:2222"],
      "ps": {"0": "10.0.0.5:2222", "3": "[::1]:2223"}})");
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  EXPECT_THAT(cluster->JobNames(), ElementsAre("ps", "worker"));
  EXPECT_EQ(cluster->NumTasks("ps"), 2);
  EXPECT_EQ(cluster->NumTasks("chief"), 0);
  EXPECT_EQ(cluster->TotalTasks(), 4);
  EXPECT_EQ(*cluster->TaskAddress({"ps", 3}), "[::1]:2223");
  EXPECT_EQ(*cluster->TaskAddress({"worker", 1}), "w1.example.com:2222");
  EXPECT_THAT(
      cluster->TaskAddress({"ps", 1}),
      IsInvalid("task index 1 is out of range: job 'ps' has tasks 0, 3"));
  EXPECT_THAT(cluster->TaskAddress({"worker", 2}),
              IsInvalid("job 'worker' has 2 tasks (0..1)"));
  EXPECT_THAT(cluster->TaskAddress({"chief", 0}),
              IsInvalid("no job 'chief' in the cluster (jobs: ps, worker)"));
  const std::vector<TaskRef> tasks = cluster->AllTasks();
  ASSERT_EQ(tasks.size(), 4u);
  EXPECT_EQ(tasks[1], (TaskRef{"ps", 3}));
  EXPECT_EQ(tasks[2], (TaskRef{"worker", 0}));
}

TEST(ClusterSpecTest, JsonRoundTrips) {
  absl::StatusOr<ClusterSpec> cluster =
      ParseClusterSpecJson(R"({"worker": ["a:1", "b:2"], "ps": {"1": "c:3"}})");
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  EXPECT_EQ(cluster->ToJson(),
            R"({"ps": {"1": "c:3"}, "worker": ["a:1", "b:2"]})");
  absl::StatusOr<ClusterSpec> again = ParseClusterSpecJson(cluster->ToJson());
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, *cluster);
}

TEST(ClusterSpecTest, DeviceNames) {
  EXPECT_EQ(TaskDeviceName({"worker", 1}), "/job:worker/replica:0/task:1");
  EXPECT_EQ(TaskDeviceName({"ps", 0}), "/job:ps/replica:0/task:0");
  EXPECT_EQ(TaskOfDevice("/job:ps/replica:0/task:2/device:CPU:0"), "/job:ps/replica:0/task:2");
  EXPECT_EQ(TaskOfDevice("/job:ps/replica:0/task:2"), "/job:ps/replica:0/task:2");
}

TEST(ClusterSpecTest, Addresses) {
  for (const char* good :
       {"localhost:2222", "10.1.2.3:1", "w-0.svc.cluster.local:65535",
        "tf_worker:80", "[::1]:2222", "[fe80::1:2]:7"}) {
    EXPECT_TRUE(ValidateAddress(good).ok()) << good;
  }
  const std::map<std::string, std::string> bad = {
      {"", "address is empty"},
      {"localhost", "has no port"},
      {":2222", "has an empty host"},
      {"host:", "port '' is not in 1..65535"},
      {"host:0", "port '0' is not in 1..65535"},
      {"host:65536", "port '65536' is not in 1..65535"},
      {"host:22a", "port '22a'"},
      {"::1:2222", "write IPv6 addresses as"},
      {"[::1]", "has no port"},
      {"[::1:2222", "'[' without ']'"},
      {"[nothex]:1", "is not an IPv6 address"},
      {"grpc://host:1", "has a URL scheme"},
      {"a/b:1", "host has character '/'"},
      {"my host:1", "host has character ' '"},
  };
  for (const auto& [address, message] : bad) {
    const absl::Status status = ValidateAddress(address);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << address;
    EXPECT_THAT(std::string(status.message()), HasSubstr(message)) << address;
  }
}

TEST(ClusterSpecTest, JsonErrorsNameTheFileAndField) {
  EXPECT_THAT(ParseClusterSpecJson(R"({"worker": ["a:1",})", "c.json"),
              IsInvalid("c.json: malformed JSON: "));
  EXPECT_THAT(ParseClusterSpecJson("", "c.json"),
              IsInvalid("c.json: malformed JSON"));
  EXPECT_THAT(ParseClusterSpecJson(R"(["a:1"])", "c.json"),
              IsInvalid("c.json: expected an object of job name -> tasks, got "
                        "a list"));
  EXPECT_THAT(ParseClusterSpecJson("{}", "c.json"),
              IsInvalid("c.json: the cluster has no tasks"));
  EXPECT_THAT(ParseClusterSpecJson(R"({"worker": "a:1"})", "c.json"),
              IsInvalid("c.json: job 'worker': expected a list"));
  EXPECT_THAT(ParseClusterSpecJson(R"({"worker": ["a:1", 7]})", "c.json"),
              IsInvalid("c.json: job 'worker'[1]: expected a \"host:port\" "
                        "string, got a number"));
  EXPECT_THAT(ParseClusterSpecJson(R"({"worker": {"x": "a:1"}})", "c.json"),
              IsInvalid("c.json: job 'worker' key 'x': a task index must be"));
  EXPECT_THAT(ParseClusterSpecJson(R"({"worker": {"-1": "a:1"}})", "c.json"),
              IsInvalid("key '-1': a task index must be"));
  EXPECT_THAT(ParseClusterSpecJson(R"({"worker": {"1": "a:1", "01": "b:1"}})",
                                   "c.json"),
              IsInvalid("job 'worker' key '1': task 1 is given twice"));
  EXPECT_THAT(ParseClusterSpecJson(R"({"worker": ["a:1"], "worker": ["b:1"]})",
                                   "c.json"),
              IsInvalid("c.json: malformed JSON"));
  EXPECT_THAT(ParseClusterSpecJson(R"({"my-job": ["a:1"]})", "c.json"),
              IsInvalid("c.json: job 'my-job': not a job name"));
  EXPECT_THAT(
      ParseClusterSpecJson(R"({"worker": ["a:1", "b"]})", "c.json"),
      IsInvalid("c.json: job 'worker' task 1: address 'b' has no port"));
  EXPECT_THAT(
      ParseClusterSpecJson(R"({"ps": ["a:1"], "worker": ["b:1", "a:1"]})",
                           "c.json"),
      IsInvalid("c.json: job 'worker' task 1: address 'a:1' is also job 'ps' "
                "task 0's"));
}

TEST(ClusterSpecTest, MalformedJsonSaysWhere) {
  const absl::Status status =
      ParseClusterSpecJson("{\"worker\": [\"a:1\" \"b:1\"]}", "c.json")
          .status();
  EXPECT_THAT(std::string(status.message()), HasSubstr("(at '\"b:1\"]}')"));
  EXPECT_THAT(std::string(status.message()), Not(HasSubstr("\n")));
}

TEST(ClusterSpecTest, LoadsFiles) {
  const std::string dir = std::getenv("TEST_TMPDIR");
  const std::string path = dir + "/cluster.json";
  std::ofstream(path) << R"({"worker": ["localhost:2222", "localhost:2223"]})";
  absl::StatusOr<ClusterSpec> cluster = LoadClusterSpecFile(path);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  EXPECT_EQ(*cluster->TaskAddress({"worker", 1}), "localhost:2223");

  std::ofstream(path) << R"({"worker": ["localhost:2222", "localhost"]})";
  EXPECT_THAT(LoadClusterSpecFile(path),
              IsInvalid(path + ": job 'worker' task 1: address 'localhost'"));
  EXPECT_EQ(LoadClusterSpecFile(dir + "/missing.json").status().code(),
            absl::StatusCode::kNotFound);
}

TEST(TfConfigTest, ResolvesTaskInSparseCluster) {
  absl::StatusOr<ResolvedCluster> config = ParseTfConfig(R"({
      "cluster": {"chief": ["c:2222"], "worker": {"0": "w0:2222", "3": "w3:2222"},
                  "ps": ["p:1"]},
      "task": {"type": "worker", "index": "3"},
      "rpc_layer": "grpc", "environment": "cloud"})");
  ASSERT_TRUE(config.ok()) << config.status();
  ASSERT_TRUE(config->task.has_value());
  EXPECT_EQ(*config->task, (TaskRef{"worker", 3}));
  EXPECT_EQ(*config->OwnAddress(), "w3:2222");
  EXPECT_EQ(config->rpc_layer, "grpc");
  EXPECT_EQ(config->cluster.NumTasks("worker"), 2);
  EXPECT_EQ(TaskDeviceName(*config->task), "/job:worker/replica:0/task:3");
}

TEST(TfConfigTest, ChiefAndEvaluator) {
  absl::StatusOr<ClusterSpec> with_chief =
      ClusterSpec::FromLists({{"chief", {"c:1"}},
                              {"worker", {"w0:1", "w1:1"}},
                              {"ps", {"p:1"}},
                              {"evaluator", {"e:1"}}});
  ASSERT_TRUE(with_chief.ok()) << with_chief.status();
  EXPECT_TRUE(IsChief(*with_chief, {"chief", 0}));
  EXPECT_FALSE(IsChief(*with_chief, {"worker", 0}));
  EXPECT_FALSE(IsChief(*with_chief, {"ps", 0}));
  EXPECT_TRUE(IsChief(*with_chief, {"evaluator", 0}));
  absl::StatusOr<ClusterSpec> workers =
      ClusterSpec::FromLists({{"worker", {"a:1", "b:1"}}});
  ASSERT_TRUE(workers.ok());
  EXPECT_TRUE(IsChief(*workers, {"worker", 0}));
  EXPECT_FALSE(IsChief(*workers, {"worker", 1}));

  // The evaluator works alone; everyone else without it.
  EXPECT_THAT(TaskCluster(*with_chief, {"evaluator", 0}).JobNames(),
              ElementsAre("evaluator"));
  EXPECT_THAT(TaskCluster(*with_chief, {"worker", 1}).JobNames(),
              ElementsAre("chief", "ps", "worker"));

  // An evaluator need not be in the cluster; it then has no address.
  absl::StatusOr<ResolvedCluster> outside = ParseTfConfig(
      R"({"cluster": {"worker": ["w:1"]}, "task": {"type": "evaluator",
          "index": 0}})");
  ASSERT_TRUE(outside.ok()) << outside.status();
  EXPECT_EQ(*outside->task, (TaskRef{"evaluator", 0}));
  EXPECT_EQ(outside->OwnAddress().status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(TfConfigTest, NoClusterOrNoTask) {
  absl::StatusOr<ResolvedCluster> empty = ParseTfConfig("{}");
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_TRUE(empty->cluster.empty());
  EXPECT_FALSE(empty->task.has_value());
  absl::StatusOr<ResolvedCluster> client =
      ParseTfConfig(R"({"cluster": {"worker": ["w:1"]}, "task": {}})");
  ASSERT_TRUE(client.ok()) << client.status();
  EXPECT_FALSE(client->task.has_value());
  EXPECT_EQ(client->OwnAddress().status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(TfConfigTest, ErrorsNameTheVariableAndKey) {
  const auto parse = [](const char* json) { return ParseTfConfig(json); };
  EXPECT_THAT(parse("{\"cluster\": "), IsInvalid("TF_CONFIG: malformed JSON"));
  EXPECT_THAT(parse("7"), IsInvalid("TF_CONFIG: expected an object"));
  EXPECT_THAT(parse(R"({"cluster": ["w:1"]})"),
              IsInvalid("TF_CONFIG: cluster: expected an object"));
  EXPECT_THAT(
      parse(R"({"cluster": {"worker": ["w:1", "w"]}})"),
      IsInvalid("TF_CONFIG: cluster: job 'worker' task 1: address 'w'"));
  EXPECT_THAT(parse(R"({"cluster": {"chief": ["a:1", "b:1"]}})"),
              IsInvalid("TF_CONFIG: cluster: job 'chief' has 2 tasks; there "
                        "is at most one"));
  EXPECT_THAT(parse(R"({"cluster": {"evaluator": ["a:1", "b:1"]}})"),
              IsInvalid("job 'evaluator' has 2 tasks"));
  EXPECT_THAT(parse(R"({"cluster": {"worker": ["w:1"]},
                        "task": {"type": "ps", "index": 0}})"),
              IsInvalid("TF_CONFIG: task.type 'ps' is not a job of the "
                        "cluster (jobs: worker)"));
  EXPECT_THAT(parse(R"({"cluster": {"worker": ["w:1"]},
                        "task": {"type": "worker", "index": 2}})"),
              IsInvalid("TF_CONFIG: task.index: task index 2 is out of "
                        "range: job 'worker' has 1 tasks (0..0)"));
  EXPECT_THAT(parse(R"({"cluster": {"worker": ["w:1"]},
                        "task": {"type": "worker", "index": 0.5}})"),
              IsInvalid("TF_CONFIG: task.index: 0.5 is not a non-negative"));
  EXPECT_THAT(parse(R"({"cluster": {"worker": ["w:1"]},
                        "task": {"type": "worker", "index": -1}})"),
              IsInvalid("TF_CONFIG: task.index: -1 is not a non-negative"));
  EXPECT_THAT(parse(R"({"cluster": {"worker": ["w:1"]},
                        "task": {"type": "worker"}})"),
              IsInvalid("TF_CONFIG: task.index is missing"));
  EXPECT_THAT(
      parse(R"({"cluster": {"worker": ["w:1"]}, "task": {"index": 0}})"),
      IsInvalid("TF_CONFIG: task.type is missing"));
  EXPECT_THAT(parse(R"({"task": {"type": 3, "index": 0}})"),
              IsInvalid("TF_CONFIG: task.type: expected a job name string, "
                        "got a number"));
  EXPECT_THAT(parse(R"({"rpc_layer": 1})"),
              IsInvalid("TF_CONFIG: rpc_layer: expected a string"));
}

TEST(TfConfigTest, ReadsTheEnvironment) {
  ASSERT_EQ(unsetenv("TF_CONFIG"), 0);
  EXPECT_EQ(TfConfigFromEnvironment().status().code(),
            absl::StatusCode::kNotFound);
  ASSERT_EQ(setenv("TF_CONFIG",
                   R"({"cluster": {"worker": ["localhost:5000"]},
                       "task": {"type": "worker", "index": 0}})",
                   1),
            0);
  absl::StatusOr<ResolvedCluster> config = TfConfigFromEnvironment();
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(*config->OwnAddress(), "localhost:5000");
  ASSERT_EQ(setenv("TF_CONFIG", "not json", 1), 0);
  EXPECT_THAT(TfConfigFromEnvironment(), IsInvalid("TF_CONFIG: malformed"));
  ASSERT_EQ(unsetenv("TF_CONFIG"), 0);
}

TEST(SlurmTest, ExpandsHostlists) {
  EXPECT_THAT(*ExpandSlurmHostlist("node[01-03,7],gpu5"),
              ElementsAre("node01", "node02", "node03", "node7", "gpu5"));
  EXPECT_THAT(*ExpandSlurmHostlist("n[8-10]"), ElementsAre("n8", "n9", "n10"));
  EXPECT_THAT(*ExpandSlurmHostlist("x,[1-2]"), ElementsAre("x", "1", "2"));
  // Slurm also takes text after a range and several ranges in one name
  // (TensorFlow's resolver does not): expanded as a product, left to right.
  EXPECT_THAT(*ExpandSlurmHostlist("r[1-2]n[08-09].ib"),
              ElementsAre("r1n08.ib", "r1n09.ib", "r2n08.ib", "r2n09.ib"));
  for (const char* bad : {"", "a,,b", "a,", "n[1-2", "n1-2]", "n[[1]]", "n[]",
                          "n[3-1]", "n[a-b]", "n[1-2-3]", "n[0-999999999]"}) {
    EXPECT_EQ(ExpandSlurmHostlist(bad).status().code(),
              absl::StatusCode::kInvalidArgument)
        << bad;
  }
  EXPECT_THAT(ExpandSlurmHostlist("n[3-1]"),
              IsInvalid("hostlist 'n[3-1]': range '3-1' goes backwards"));
}

TEST(SlurmTest, ExpandsTasksPerNode) {
  EXPECT_THAT(*ExpandSlurmTasksPerNode("2(x3),1"), ElementsAre(2, 2, 2, 1));
  EXPECT_THAT(*ExpandSlurmTasksPerNode("4"), ElementsAre(4));
  for (const char* bad : {"", "2(x0)", "2(3)", "x", "2(x3", "-1", "2,,1"}) {
    EXPECT_EQ(ExpandSlurmTasksPerNode(bad).status().code(),
              absl::StatusCode::kInvalidArgument)
        << bad;
  }
}

// A fake environment.
EnvironmentLookup Environment(std::map<std::string, std::string> variables) {
  return [variables](const std::string& name) -> std::optional<std::string> {
    const auto it = variables.find(name);
    if (it == variables.end()) return std::nullopt;
    return it->second;
  };
}

const std::map<std::string, std::string> kStep = {
    {"SLURM_PROCID", "4"},
    {"SLURM_STEP_NUM_TASKS", "7"},
    {"SLURM_STEP_NODELIST", "node[01-03,07]"},
    {"SLURM_STEP_TASKS_PER_NODE", "2(x3),1"},
};

TEST(SlurmTest, OneWorkerJob) {
  SlurmOptions options;
  options.base_port = 9000;
  absl::StatusOr<ResolvedCluster> resolved =
      ResolveSlurmCluster(options, Environment(kStep));
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  EXPECT_EQ(resolved->cluster.ToJson(),
            R"({"worker": ["node01:9000", "node01:9001", "node02:9000", )"
            R"("node02:9001", "node03:9000", "node03:9001", "node07:9000"]})");
  EXPECT_EQ(*resolved->task, (TaskRef{"worker", 4}));
  EXPECT_EQ(*resolved->OwnAddress(), "node03:9000");
}

TEST(SlurmTest, JobsTakeRanksInNameOrder) {
  SlurmOptions options;
  options.base_port = 9000;
  options.jobs = {{"worker", 5}, {"ps", 2}};
  absl::StatusOr<ResolvedCluster> resolved =
      ResolveSlurmCluster(options, Environment(kStep));
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  EXPECT_EQ(resolved->cluster.ToJson(),
            R"({"ps": ["node01:9000", "node01:9001"], "worker": )"
            R"(["node02:9000", "node02:9001", "node03:9000", "node03:9001", )"
            R"("node07:9000"]})");
  EXPECT_EQ(*resolved->task, (TaskRef{"worker", 2}));

  std::map<std::string, std::string> rank1 = kStep;
  rank1["SLURM_PROCID"] = "1";
  resolved = ResolveSlurmCluster(options, Environment(rank1));
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  EXPECT_EQ(*resolved->task, (TaskRef{"ps", 1}));
}

TEST(SlurmTest, AllocationVariablesAndFixedTasksPerNode) {
  SlurmOptions options;
  options.tasks_per_node = 1;
  absl::StatusOr<ResolvedCluster> resolved = ResolveSlurmCluster(
      options,
      Environment({{"SLURM_PROCID", "1"}, {"SLURM_JOB_NODELIST", "gpu[1-2]"}}));
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  EXPECT_EQ(resolved->cluster.ToJson(),
            R"({"worker": ["gpu1:8888", "gpu2:8888"]})");
  EXPECT_EQ(*resolved->OwnAddress(), "gpu2:8888");
}

TEST(SlurmTest, ErrorsNameTheVariable) {
  SlurmOptions options;
  const auto resolve = [&](std::map<std::string, std::string> changes,
                           std::vector<std::string> removals = {}) {
    std::map<std::string, std::string> env = kStep;
    for (auto& [name, value] : changes) env[name] = value;
    for (const std::string& name : removals) env.erase(name);
    return ResolveSlurmCluster(options, Environment(env));
  };
  EXPECT_EQ(resolve({}, {"SLURM_PROCID"}).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_THAT(resolve({}, {"SLURM_PROCID"}).status().message(),
              HasSubstr("SLURM_PROCID is not set"));
  EXPECT_EQ(resolve({}, {"SLURM_STEP_NODELIST"}).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(resolve({}, {"SLURM_STEP_TASKS_PER_NODE"}).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_THAT(resolve({{"SLURM_PROCID", "x"}}),
              IsInvalid("SLURM_PROCID='x' is not a non-negative integer"));
  EXPECT_THAT(resolve({{"SLURM_PROCID", "7"}}),
              IsInvalid("SLURM_PROCID=7 is out of range: the step has 7 "
                        "tasks"));
  EXPECT_THAT(resolve({{"SLURM_STEP_NODELIST", "node[01-03"}}),
              IsInvalid("SLURM_STEP_NODELIST: hostlist 'node[01-03'"));
  EXPECT_THAT(resolve({{"SLURM_STEP_NODELIST", "a,b,c,a"}}),
              IsInvalid("SLURM_STEP_NODELIST='a,b,c,a' lists node 'a' twice"));
  EXPECT_THAT(resolve({{"SLURM_STEP_TASKS_PER_NODE", "2(x3)"}}),
              IsInvalid("SLURM_STEP_TASKS_PER_NODE='2(x3)' describes 3 nodes "
                        "but SLURM_STEP_NODELIST='node[01-03,07]' lists 4"));
  EXPECT_THAT(resolve({{"SLURM_STEP_TASKS_PER_NODE", "2(y3),1"}}),
              IsInvalid("SLURM_STEP_TASKS_PER_NODE: tasks per node"));
  EXPECT_THAT(resolve({{"SLURM_STEP_NUM_TASKS", "8"}}),
              IsInvalid("SLURM_STEP_NUM_TASKS='8' but "
                        "SLURM_STEP_TASKS_PER_NODE='2(x3),1' adds up to 7"));
  EXPECT_THAT(resolve({{"SLURM_STEP_NODELIST", "node[01-03],bad host"}}),
              IsInvalid("address 'bad host:8888'"));
  options.jobs = {{"worker", 4}, {"ps", 2}};
  EXPECT_THAT(resolve({}), IsInvalid("SlurmOptions.jobs ask for 6 tasks"));
  options.jobs = {};
  options.base_port = 65535;
  EXPECT_THAT(resolve({}), IsInvalid("SlurmOptions.base_port 65535"));
}

}  // namespace
}  // namespace distributed
}  // namespace graphrun
