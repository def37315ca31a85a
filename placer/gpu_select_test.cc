#include "placer/gpu_select.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace graphrun {
namespace placer {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;

GpuStatus Gpu(int index, double free_gib, int utilization = 0,
              int processes = 0) {
  GpuStatus gpu;
  gpu.index = index;
  gpu.name = "NVIDIA H200";
  gpu.uuid = absl::StrCat("GPU-", index, index, index, "a-0000");
  gpu.total_memory = 80 * kGiB;
  gpu.free_memory = static_cast<int64_t>(free_gib * kGiB);
  gpu.utilization_percent = utilization;
  gpu.other_processes = processes;
  return gpu;
}

std::vector<GpuStatus> ThreeIdleGpus() {
  return {Gpu(0, 79), Gpu(1, 79), Gpu(2, 79)};
}

class FailingGpuInfoSource : public GpuInfoSource {
 public:
  absl::StatusOr<std::vector<GpuStatus>> Query() override {
    ++queries;
    return absl::UnavailableError("no driver here");
  }
  int queries = 0;
};

class GpuSelectTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "/gpu_select_XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern + "/claims";
    claims_ = std::make_unique<GpuClaims>(dir_);
  }

  absl::StatusOr<GpuChoice> Select(const std::vector<GpuStatus>& gpus,
                                   GpuSelectOptions options = {}) {
    FakeGpuInfoSource source(gpus);
    return SelectGpus(options, &source, claims_.get());
  }

  static GpuSelectOptions Visible(std::string cuda_visible_devices,
                                  std::string gpus = "auto") {
    GpuSelectOptions options;
    options.gpus = std::move(gpus);
    options.cuda_visible_devices = std::move(cuda_visible_devices);
    options.has_cuda_visible_devices = true;
    return options;
  }

  std::string dir_;
  std::unique_ptr<GpuClaims> claims_;
};

TEST_F(GpuSelectTest, AutoTakesGpusWithMostFreeMemoryFirstAndSkipsBusyOnes) {
  absl::StatusOr<GpuChoice> choice =
      Select({Gpu(0, 10), Gpu(1, 60), Gpu(2, 75)});
  ASSERT_TRUE(choice.ok()) << choice.status();
  EXPECT_EQ(choice->selected, (std::vector<int>{2, 1}));
  EXPECT_EQ(choice->cuda_ordinals, (std::vector<int>{2, 1}));
  ASSERT_EQ(choice->reasons.size(), 3u);
  EXPECT_EQ(choice->reasons[0],
            "GPU 0 (NVIDIA H200): 10.0 GiB free of 80.0 GiB, 0% busy, no "
            "other process: not chosen (rank 3): busy");
  EXPECT_TRUE(absl::EndsWith(choice->reasons[2], ": chosen (rank 1)"));
}

TEST_F(GpuSelectTest, SmallFreeMemoryDifferencesDoNotReorder) {
  for (double first : {79.0, 79.5}) {
    absl::StatusOr<GpuChoice> choice =
        Select({Gpu(0, first), Gpu(1, 158.5 - first)});
    ASSERT_TRUE(choice.ok()) << choice.status();
    EXPECT_EQ(choice->selected, (std::vector<int>{0, 1}));
  }
}

TEST_F(GpuSelectTest, RanksByOtherProcessesThenUtilization) {
  GpuSelectOptions options;
  options.num_gpus = 3;
  absl::StatusOr<GpuChoice> choice =
      Select({Gpu(0, 79, 40), Gpu(1, 79, 0, 1), Gpu(2, 79, 0)}, options);
  ASSERT_TRUE(choice.ok()) << choice.status();
  EXPECT_EQ(choice->selected, (std::vector<int>{2, 0, 1}));
  // Busy at 50% or more: left out when taking every idle GPU.
  choice = Select({Gpu(0, 79, 90), Gpu(1, 79, 5)});
  ASSERT_TRUE(choice.ok()) << choice.status();
  EXPECT_EQ(choice->selected, (std::vector<int>{1}));
}

TEST_F(GpuSelectTest, AllBusyTakesTheLeastBusyOne) {
  absl::StatusOr<GpuChoice> choice =
      Select({Gpu(0, 79, 90), Gpu(1, 79, 60), Gpu(2, 20, 0)});
  ASSERT_TRUE(choice.ok()) << choice.status();
  EXPECT_EQ(choice->selected, (std::vector<int>{2}));
  EXPECT_TRUE(absl::StrContains(choice->reasons[2], "every GPU is busy"));
}

TEST_F(GpuSelectTest, GpusClaimedByAnotherProcessRankLastAndChosenAreClaimed) {
  GpuClaims other(dir_);
  ASSERT_TRUE(other.Claim(Gpu(0, 79)).ok());
  absl::StatusOr<GpuChoice> choice = Select(ThreeIdleGpus());
  ASSERT_TRUE(choice.ok()) << choice.status();
  EXPECT_EQ(choice->selected, (std::vector<int>{1, 2}));
  EXPECT_TRUE(absl::StrContains(
      choice->reasons[0],
      absl::StrCat("claimed by graphrun pid ", getpid(), ": not chosen")));
  // This selection's claims are visible to others until claims_ goes away.
  EXPECT_EQ(*other.ClaimedByOther(Gpu(1, 79)), true);
  EXPECT_EQ(*other.ClaimedByOther(Gpu(2, 79)), true);
  EXPECT_TRUE(absl::IsUnavailable(other.Claim(Gpu(2, 79))));
}

TEST_F(GpuSelectTest, OneGpuClaimedByAnotherProcessIsSharedSayingSo) {
  GpuClaims other(dir_);
  ASSERT_TRUE(other.Claim(Gpu(0, 79)).ok());
  absl::StatusOr<GpuChoice> choice = Select({Gpu(0, 79)});
  ASSERT_TRUE(choice.ok()) << choice.status();
  EXPECT_EQ(choice->selected, (std::vector<int>{0}));
  EXPECT_EQ(choice->shared, (std::vector<std::string>{
                                absl::StrCat("GPU 0 is shared with graphrun pid ", getpid())}));
  // An idle, unclaimed GPU is not shared.
  claims_ = std::make_unique<GpuClaims>(dir_ + "2");
  choice = Select({Gpu(1, 79)});
  ASSERT_TRUE(choice.ok()) << choice.status();
  EXPECT_TRUE(choice->shared.empty());
  // A busy one taken because every GPU is busy is.
  choice = Select({Gpu(1, 79, 90)});
  ASSERT_TRUE(choice.ok()) << choice.status();
  EXPECT_EQ(choice->shared,
            (std::vector<std::string>{"GPU 1 is shared: it is busy with other work"}));
}

TEST_F(GpuSelectTest, ClaimFalseClaimsNothing) {
  GpuSelectOptions options;
  options.claim = false;
  ASSERT_TRUE(Select(ThreeIdleGpus(), options).ok());
  GpuClaims other(dir_);
  EXPECT_EQ(*other.ClaimedByOther(Gpu(0, 79)), false);
}

TEST_F(GpuSelectTest, NumGpus) {
  GpuSelectOptions options;
  options.num_gpus = 2;
  absl::StatusOr<GpuChoice> choice =
      Select({Gpu(0, 79, 90), Gpu(1, 79), Gpu(2, 79)}, options);
  ASSERT_TRUE(choice.ok()) << choice.status();
  EXPECT_EQ(choice->selected, (std::vector<int>{1, 2}));
  options.num_gpus = 0;
  EXPECT_TRUE(Select(ThreeIdleGpus(), options)->selected.empty());
  options.num_gpus = 3;  // busy ones too, when asked for
  EXPECT_EQ(Select({Gpu(0, 79, 90), Gpu(1, 79), Gpu(2, 79)}, options)->selected,
            (std::vector<int>{1, 2, 0}));
  options.num_gpus = 4;
  choice = Select(ThreeIdleGpus(), options);
  EXPECT_TRUE(absl::IsResourceExhausted(choice.status()));
  EXPECT_TRUE(absl::StrContains(choice.status().message(), "only 3 GPUs"))
      << choice.status();
  options.num_gpus = -2;
  EXPECT_TRUE(
      absl::IsInvalidArgument(Select(ThreeIdleGpus(), options).status()));
  options.num_gpus = 1;
  options.gpus = "all";
  EXPECT_TRUE(
      absl::IsInvalidArgument(Select(ThreeIdleGpus(), options).status()));
}

TEST_F(GpuSelectTest, AllAndNone) {
  GpuSelectOptions options;
  options.gpus = "all";
  absl::StatusOr<GpuChoice> choice =
      Select({Gpu(2, 79), Gpu(0, 10, 99), Gpu(1, 79)}, options);
  ASSERT_TRUE(choice.ok()) << choice.status();
  EXPECT_EQ(choice->selected, (std::vector<int>{0, 1, 2}));
  options.gpus = "none";
  FailingGpuInfoSource source;
  choice = SelectGpus(options, &source, claims_.get());
  ASSERT_TRUE(choice.ok()) << choice.status();
  EXPECT_TRUE(choice->selected.empty());
  EXPECT_EQ(source.queries, 0);
}

TEST_F(GpuSelectTest, CudaVisibleDevicesByIndexRestrictsAndOrders) {
  absl::StatusOr<GpuChoice> choice = Select(ThreeIdleGpus(), Visible("2,0"));
  ASSERT_TRUE(choice.ok()) << choice.status();
  EXPECT_EQ(choice->selected, (std::vector<int>{0, 2}));
  EXPECT_EQ(choice->cuda_ordinals, (std::vector<int>{1, 0}));
  EXPECT_TRUE(
      absl::EndsWith(choice->reasons[1], ": hidden by CUDA_VISIBLE_DEVICES"));
  choice = Select(ThreeIdleGpus(), Visible("2,0", "all"));
  EXPECT_EQ(choice->selected, (std::vector<int>{0, 2}));
  EXPECT_EQ(choice->cuda_ordinals, (std::vector<int>{1, 0}));
}

TEST_F(GpuSelectTest, CudaVisibleDevicesByUuidPrefix) {
  absl::StatusOr<GpuChoice> choice =
      Select(ThreeIdleGpus(), Visible("GPU-222, gpu-000a", "all"));
  ASSERT_TRUE(choice.ok()) << choice.status();
  EXPECT_EQ(choice->selected, (std::vector<int>{0, 2}));
  EXPECT_EQ(choice->cuda_ordinals, (std::vector<int>{1, 0}));
  // An ambiguous prefix names no GPU, so it ends the list.
  EXPECT_TRUE(Select(ThreeIdleGpus(), Visible("GPU-,1"))->selected.empty());
}

TEST_F(GpuSelectTest, CudaVisibleDevicesEmptyOrInvalidEndsTheList) {
  const std::vector<std::pair<std::string, std::vector<int>>> cases = {
      {"", {}},         {"-1", {}},    {"1,7,0", {1}},  {"0,0,2", {0}},
      {"1, x ,0", {1}}, {"1,,2", {1}}, {"MIG-1,0", {}}, {" 2 , 1 ", {1, 2}},
  };
  for (const auto& [visible, expected] : cases) {
    absl::StatusOr<GpuChoice> choice =
        Select(ThreeIdleGpus(), Visible(visible, "all"));
    ASSERT_TRUE(choice.ok()) << choice.status();
    EXPECT_EQ(choice->selected, expected) << "CUDA_VISIBLE_DEVICES=" << visible;
  }
}

TEST_F(GpuSelectTest, ExplicitListKeepsOrderAndIgnoresBusyAndClaims) {
  GpuClaims other(dir_);
  ASSERT_TRUE(other.Claim(Gpu(2, 79)).ok());
  GpuSelectOptions options;
  options.gpus = "2, 0";
  absl::StatusOr<GpuChoice> choice =
      Select({Gpu(0, 1, 100), Gpu(1, 79), Gpu(2, 79)}, options);
  ASSERT_TRUE(choice.ok()) << choice.status();
  EXPECT_EQ(choice->selected, (std::vector<int>{2, 0}));
  EXPECT_TRUE(absl::EndsWith(choice->reasons[0], ": chosen (requested)"));
  EXPECT_TRUE(absl::EndsWith(choice->reasons[1], ": not requested"));
  EXPECT_TRUE(absl::EndsWith(choice->reasons[2],
                             "chosen (requested), although another process "
                             "claims it"));
}

TEST_F(GpuSelectTest, ExplicitListErrors) {
  GpuSelectOptions options;
  options.gpus = "0,5";
  absl::Status status = Select(ThreeIdleGpus(), options).status();
  EXPECT_TRUE(absl::IsInvalidArgument(status));
  EXPECT_TRUE(absl::StrContains(status.message(),
                                "GPU 5 does not exist; visible GPUs: 0, 1, 2"))
      << status;
  status = Select(ThreeIdleGpus(), Visible("0,1", "2")).status();
  EXPECT_TRUE(absl::IsInvalidArgument(status));
  EXPECT_TRUE(absl::StrContains(
      status.message(),
      "GPU 2 is hidden by CUDA_VISIBLE_DEVICES=\"0,1\"; visible GPUs: 0, 1"))
      << status;
  for (const char* bad : {"", "0,x", "0,0", "-1", "1;2", "first"}) {
    options.gpus = bad;
    EXPECT_TRUE(
        absl::IsInvalidArgument(Select(ThreeIdleGpus(), options).status()))
        << "gpus=" << bad;
  }
}

TEST_F(GpuSelectTest, QueryFailure) {
  FailingGpuInfoSource source;
  absl::StatusOr<GpuChoice> choice = SelectGpus({}, &source, claims_.get());
  ASSERT_TRUE(choice.ok()) << choice.status();
  EXPECT_TRUE(choice->selected.empty());
  EXPECT_EQ(choice->reasons,
            std::vector<std::string>{"no GPU query available: no driver here"});
  GpuSelectOptions options;
  options.gpus = "0";
  EXPECT_TRUE(absl::IsUnavailable(
      SelectGpus(options, &source, claims_.get()).status()));
}

TEST_F(GpuSelectTest, DeterministicWhateverTheQueryOrder) {
  std::vector<GpuStatus> gpus = {Gpu(0, 70, 10), Gpu(1, 79), Gpu(2, 79),
                                 Gpu(3, 79, 0, 1), Gpu(4, 30)};
  GpuSelectOptions options;
  options.claim = false;
  absl::StatusOr<GpuChoice> first = Select(gpus, options);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->selected, (std::vector<int>{1, 2, 0, 3}));
  std::reverse(gpus.begin(), gpus.end());
  absl::StatusOr<GpuChoice> second = Select(gpus, options);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(first->selected, second->selected);
  EXPECT_EQ(first->reasons, second->reasons);
}

TEST_F(GpuSelectTest, WorksWithoutClaimsAndWhenClaimsAreBroken) {
  FakeGpuInfoSource source(ThreeIdleGpus());
  absl::StatusOr<GpuChoice> choice = SelectGpus({}, &source, nullptr);
  ASSERT_TRUE(choice.ok()) << choice.status();
  EXPECT_EQ(choice->selected, (std::vector<int>{0, 1, 2}));

  const std::string not_a_dir = dir_ + ".file";
  std::ofstream(not_a_dir) << "x";
  GpuClaims broken(not_a_dir);
  choice = SelectGpus({}, &source, &broken);
  ASSERT_TRUE(choice.ok()) << choice.status();
  EXPECT_EQ(choice->selected, (std::vector<int>{0, 1, 2}));
  EXPECT_TRUE(absl::StartsWith(choice->reasons.back(), "GPU claims ignored"));
}

TEST_F(GpuSelectTest, FormatGpuChoice) {
  GpuChoice choice;
  EXPECT_EQ(FormatGpuChoice(choice), "GPUs selected: none");
  choice.selected = {1, 0};
  choice.reasons = {"GPU 0: a", "GPU 1: b"};
  EXPECT_EQ(FormatGpuChoice(choice),
            "GPUs selected: 1 as GPU:0, 0 as GPU:1\n  GPU 0: a\n  GPU 1: b");
}

TEST_F(GpuSelectTest, ClaimsWithinOneProcess) {
  GpuStatus by_uuid = Gpu(3, 79);
  GpuStatus by_index = Gpu(3, 79);
  by_index.uuid.clear();
  EXPECT_EQ(claims_->LockPath(by_uuid), dir_ + "/GPU-333a-0000.lock");
  EXPECT_EQ(claims_->LockPath(by_index), dir_ + "/gpu-index-3.lock");

  GpuClaims other(dir_);
  EXPECT_EQ(*claims_->ClaimedByOther(by_uuid), false);
  ASSERT_TRUE(claims_->Claim(by_uuid).ok());
  ASSERT_TRUE(claims_->Claim(by_uuid).ok());  // already held: fine
  EXPECT_EQ(*claims_->ClaimedByOther(by_uuid), false);
  EXPECT_EQ(*other.ClaimedByOther(by_uuid), true);
  EXPECT_EQ(*other.ClaimedByOther(by_index), false);
  absl::Status status = other.Claim(by_uuid);
  EXPECT_TRUE(absl::IsUnavailable(status));
  EXPECT_TRUE(absl::StrContains(status.message(),
                                absl::StrCat("graphrun pid ", getpid())))
      << status;
}

TEST_F(GpuSelectTest, ClaimHeldByAnotherProcessEndsWithIt) {
  const GpuStatus gpu = Gpu(1, 79);
  int ready[2], release[2];
  ASSERT_EQ(pipe(ready), 0);
  ASSERT_EQ(pipe(release), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(ready[0]);
    close(release[1]);
    GpuClaims child_claims(dir_);
    const char ok = child_claims.Claim(gpu).ok() ? 'y' : 'n';
    char unused;
    if (write(ready[1], &ok, 1) != 1 || read(release[0], &unused, 1) < 0) {
      _exit(2);
    }
    _exit(0);  // the claim goes with the process
  }
  close(ready[1]);
  close(release[0]);
  char ok = 0;
  ASSERT_EQ(read(ready[0], &ok, 1), 1);
  ASSERT_EQ(ok, 'y');
  EXPECT_EQ(*claims_->ClaimedByOther(gpu), true);
  std::ifstream pid_file(claims_->LockPath(gpu));
  pid_t written = 0;
  pid_file >> written;
  EXPECT_EQ(written, child);

  close(release[1]);  // the child reads EOF and exits
  int wstatus = 0;
  ASSERT_EQ(waitpid(child, &wstatus, 0), child);
  EXPECT_TRUE(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0);
  close(ready[0]);
  EXPECT_EQ(*claims_->ClaimedByOther(gpu), false);
  EXPECT_TRUE(claims_->Claim(gpu).ok());
}

TEST(GpuClaimsTest, DefaultDirectoryIsPerUser) {
  EXPECT_TRUE(absl::EndsWith(GpuClaims::DefaultDirectory(),
                             absl::StrCat("/graphrun-gpu-claims-", getuid())));
}

TEST(NvmlGpuInfoSourceTest, MissingLibraryIsUnavailable) {
  NvmlGpuInfoSource source("libgraphrun-no-such-nvml.so.1");
  absl::StatusOr<std::vector<GpuStatus>> gpus = source.Query();
  EXPECT_TRUE(absl::IsUnavailable(gpus.status())) << gpus.status();
  EXPECT_TRUE(absl::StrContains(gpus.status().message(),
                                "libgraphrun-no-such-nvml.so.1"));
}

TEST(NvmlGpuInfoSourceTest, LibraryWithoutNvmlIsUnavailable) {
  NvmlGpuInfoSource source("libm.so.6");
  absl::StatusOr<std::vector<GpuStatus>> gpus = source.Query();
  EXPECT_TRUE(absl::IsUnavailable(gpus.status())) << gpus.status();
  EXPECT_TRUE(absl::StrContains(gpus.status().message(), "lacks nvml"))
      << gpus.status();
}

}  // namespace
}  // namespace placer
}  // namespace graphrun
