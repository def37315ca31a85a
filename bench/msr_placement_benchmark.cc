// The placer on the msr-fiddle/dnn-partitioning inputs (placer/msr_fiddle):
// predicted step time of graphrun's plan with and without the accelerator
// memory limit, next to the naive topological fill (accelerators filled in
// topological order up to the limit, the rest on the CPU), plain HEFT
// (no memory limit), the CPU alone and one accelerator with unlimited
// memory; every plan timed by the same simulation (EvaluateAssignment), and
// the wall time of Place(). Prints a Markdown table.
//
//   bazel run -c opt //bench:msr_placement_benchmark [-- --verbose]
// --verbose also prints graphrun's placement summary per model.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "placer/baselines.h"
#include "placer/msr_fiddle/models.h"
#include "placer/placer.h"
#include "placer/scheduler.h"

namespace graphrun {
namespace placer {
namespace {

std::string Ms(double seconds) { return absl::StrFormat("%.1f", seconds * 1e3); }

int Run(bool verbose) {
  printf("| model | nodes | GPUs x memory | CPU only | one GPU, no limit | fill | "
         "HEFT, no limit | graphrun | lower bound | graphrun, no limit | graphrun plan | "
         "time to place |\n");
  printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  int failures = 0;
  for (const std::string& name : MsrModelNames()) {
    absl::StatusOr<MsrModel> m = LoadMsrModel("placer/msr_fiddle", name);
    if (!m.ok()) {
      fprintf(stderr, "%s: %s\n", name.c_str(), m.status().ToString().c_str());
      return 1;
    }
    PlacerOptions limited;
    limited.availability = &MsrAvailability();
    PlacerOptions unlimited = limited;
    unlimited.respect_memory = false;
    absl::StatusOr<SchedProblem> with_limit =
        PlacementProblem(*m->graph, m->devices, m->costs, limited);
    absl::StatusOr<SchedProblem> no_limit =
        PlacementProblem(*m->graph, m->devices, m->costs, unlimited);
    if (!with_limit.ok() || !no_limit.ok()) {
      fprintf(stderr, "%s: %s\n", name.c_str(), with_limit.status().ToString().c_str());
      return 1;
    }
    double fill = kInfeasible;
    absl::StatusOr<std::vector<int>> fill_plan = TopologicalFill(*with_limit, m->gpus, m->cpu0);
    if (fill_plan.ok()) {
      absl::StatusOr<Schedule> s = EvaluateAssignment(*with_limit, *fill_plan);
      if (s.ok()) fill = s->makespan;
    }
    const HeftPlan heft = PlainHeft(*no_limit);
    absl::StatusOr<Schedule> heft_s = EvaluateAssignment(*no_limit, heft.device);
    const bool heft_fits = EvaluateAssignment(*with_limit, heft.device).ok();

    std::vector<double> seconds;
    absl::StatusOr<Placement> ours;
    for (int rep = 0; rep < 3; ++rep) {
      const auto t0 = std::chrono::steady_clock::now();
      ours = Place(*m->graph, m->devices, m->costs, limited);
      seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(seconds.begin(), seconds.end());
    absl::StatusOr<Placement> free_plan = Place(*m->graph, m->devices, m->costs, unlimited);
    if (!ours.ok() || !free_plan.ok() || !heft_s.ok()) {
      fprintf(stderr, "%s: %s %s\n", name.c_str(), ours.status().ToString().c_str(),
              free_plan.status().ToString().c_str());
      return 1;
    }
    if (verbose) {
      std::vector<int> per_device(m->devices.size(), 0);
      for (int d : heft.device) ++per_device[d];
      fprintf(stderr, "== %s, plain HEFT's nodes per device:", name.c_str());
      for (int d = 0; d < m->devices.size(); ++d) fprintf(stderr, " %d", per_device[d]);
      fprintf(stderr, "\n== %s, memory limit\n%s== %s, no limit\n%s", name.c_str(),
              FormatPlacementSummary(*m->graph, m->devices, *ours).c_str(), name.c_str(),
              FormatPlacementSummary(*m->graph, m->devices, *free_plan).c_str());
    }
    const double mine = ours->predicted_step_time, mine_free = free_plan->predicted_step_time;
    failures += mine > fill * (1 + 1e-9) || mine_free > heft_s->makespan * (1 + 1e-9);
    printf("| %s | %d | %d x %.0f MiB | %s | %s | %s | %s%s | %s | %s | %s | %s | %.0f ms |\n",
           name.c_str(), m->nodes, static_cast<int>(m->gpus.size()),
           m->memory_limit / 1048576.0, Ms(m->sum_cpu_s).c_str(), Ms(m->sum_gpu_s).c_str(),
           fill < kInfeasible ? Ms(fill).c_str() : "-", Ms(heft_s->makespan).c_str(),
           heft_fits ? "" : " (over the limit)", Ms(mine).c_str(),
           Ms(ours->lower_bound.best()).c_str(), Ms(mine_free).c_str(),
           ours->schedule.plan.c_str(), seconds[1] * 1e3);
  }
  printf("\nPredicted step times in ms. %s\n",
         failures == 0 ? "graphrun <= fill (with the limit) and <= HEFT (without) on every model."
                       : "graphrun loses to a baseline on some model.");
  return failures == 0 ? 0 : 1;
}

}  // namespace
}  // namespace placer
}  // namespace graphrun

int main(int argc, char** argv) {
  const bool verbose = argc > 1 && std::string(argv[1]) == "--verbose";
  return graphrun::placer::Run(verbose);
}
