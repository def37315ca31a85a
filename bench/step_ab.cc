// step_ab: one graph's step time under two settings, A and B, in one
// process, steps alternating A, B, A, B, ... so that the load other users
// put on a shared machine falls on both alike. A setting is a list of
// environment variables (the kernels read theirs, e.g.
// GRAPHRUN_CONV2D_LIBRARY, when the session builds them at its first step)
// and optionally --optimize=none.
//
//   bazel-bin/bench/step_ab GRAPH --feed NAME=FILE.npy ... --fetch NAME ...
//       --a=GRAPHRUN_CONV2D_LIBRARY=auto --b=GRAPHRUN_CONV2D_LIBRARY=onednn
//       [--a_optimize=none] [--b_optimize=none] [--steps=200]
//
// Prints each side's median and 10th/90th percentile step and the median
// of the per-pair ratios A/B. Fetched values of A and B are compared too
// (largest absolute difference), since a faster path must give the same
// answer.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_split.h"
#include "graph/graph_io.h"
#include "graph/npy.h"
#include "runtime/session.h"

ABSL_FLAG(std::vector<std::string>, feed, {}, "NAME=FILE.npy (repeat or comma-separate)");
ABSL_FLAG(std::vector<std::string>, fetch, {}, "tensors to fetch");
ABSL_FLAG(std::string, a, "", "setting A: VAR=VALUE[;VAR=VALUE...]");
ABSL_FLAG(std::string, b, "", "setting B: VAR=VALUE[;VAR=VALUE...]");
ABSL_FLAG(std::string, a_optimize, "default", "graph optimizer for A: default|none");
ABSL_FLAG(std::string, b_optimize, "default", "graph optimizer for B: default|none");
ABSL_FLAG(int, steps, 200, "steps of each side, after one warm-up step each");

namespace graphrun {
namespace {

std::vector<std::pair<std::string, std::string>> ParseSetting(const std::string& s) {
  std::vector<std::pair<std::string, std::string>> out;
  for (absl::string_view item : absl::StrSplit(s, ';', absl::SkipEmpty())) {
    std::pair<std::string, std::string> kv = absl::StrSplit(item, absl::MaxSplits('=', 1));
    out.push_back(std::move(kv));
  }
  return out;
}

double Percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(q * (v.size() - 1) + 0.5)];
}

struct Side {
  std::string name;
  std::unique_ptr<Session> session;
  std::vector<double> ms;
  std::vector<Tensor> out;
};

int Main(int argc, char** argv) {
  std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  if (args.size() != 2) {
    std::fprintf(stderr, "usage: step_ab GRAPH --feed ... --fetch ... --a=... --b=...\n");
    return 2;
  }
  if (absl::GetFlag(FLAGS_steps) < 1) {
    std::fprintf(stderr, "step_ab: --steps must be at least 1\n");
    return 2;
  }
  auto graph = ReadGraphDefFile(args[1]);
  if (!graph.ok()) {
    std::fprintf(stderr, "%s\n", graph.status().ToString().c_str());
    return 1;
  }
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (const std::string& f : absl::GetFlag(FLAGS_feed)) {
    std::pair<std::string, std::string> kv = absl::StrSplit(f, absl::MaxSplits('=', 1));
    auto t = ReadNpyFile(kv.second);
    if (!t.ok()) {
      std::fprintf(stderr, "%s: %s\n", kv.second.c_str(), t.status().ToString().c_str());
      return 1;
    }
    feeds.emplace_back(kv.first, *std::move(t));
  }
  const std::vector<std::string> fetches = absl::GetFlag(FLAGS_fetch);
  Side sides[2];
  const std::string settings[2] = {absl::GetFlag(FLAGS_a), absl::GetFlag(FLAGS_b)};
  const std::string optimize[2] = {absl::GetFlag(FLAGS_a_optimize),
                                   absl::GetFlag(FLAGS_b_optimize)};
  for (int i = 0; i < 2; ++i) {
    sides[i].name = std::string(i == 0 ? "A" : "B") + " (" + settings[i] +
                    (optimize[i] == "none" ? " --optimize=none" : "") + ")";
    const auto vars = ParseSetting(settings[i]);
    for (const auto& [k, v] : vars) setenv(k.c_str(), v.c_str(), 1);
    SessionOptions options;
    options.optimize = optimize[i] == "none" ? SessionOptions::Optimize::kNone
                                             : SessionOptions::Optimize::kDefault;
    auto session = Session::Create(*graph, options);
    absl::Status s = session.ok() ? (*session)->Run(feeds, fetches, {}, &sides[i].out)
                                  : session.status();
    for (const auto& [k, v] : vars) unsetenv(k.c_str());
    if (!s.ok()) {
      std::fprintf(stderr, "%s: %s\n", sides[i].name.c_str(), s.ToString().c_str());
      return 1;
    }
    sides[i].session = *std::move(session);
  }
  const int steps = absl::GetFlag(FLAGS_steps);
  for (int step = 0; step < steps; ++step) {
    for (Side& side : sides) {
      const auto t0 = std::chrono::steady_clock::now();
      absl::Status s = side.session->Run(feeds, fetches, {}, &side.out);
      const auto t1 = std::chrono::steady_clock::now();
      if (!s.ok()) {
        std::fprintf(stderr, "%s: %s\n", side.name.c_str(), s.ToString().c_str());
        return 1;
      }
      side.ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    }
  }
  std::vector<double> ratios;
  for (int i = 0; i < steps; ++i) ratios.push_back(sides[0].ms[i] / sides[1].ms[i]);
  for (const Side& side : sides) {
    std::printf("%-60s median %.3f ms  p10 %.3f  p90 %.3f\n", side.name.c_str(),
                Percentile(side.ms, 0.5), Percentile(side.ms, 0.1), Percentile(side.ms, 0.9));
  }
  double diff = 0;
  for (size_t f = 0; f < sides[0].out.size(); ++f) {
    const Tensor& x = sides[0].out[f];
    const Tensor& y = sides[1].out[f];
    if (x.dtype() != DT_FLOAT || y.dtype() != DT_FLOAT || x.NumElements() != y.NumElements()) {
      continue;
    }
    for (int64_t i = 0; i < x.NumElements(); ++i) {
      diff = std::max<double>(diff, std::fabs(x.flat<float>()[i] - y.flat<float>()[i]));
    }
  }
  std::printf("A/B: ratio of medians %.3f, median of pair ratios %.3f; largest |A - B| %.3g\n",
              Percentile(sides[0].ms, 0.5) / Percentile(sides[1].ms, 0.5),
              Percentile(ratios, 0.5), diff);
  return 0;
}

}  // namespace
}  // namespace graphrun

int main(int argc, char** argv) { return graphrun::Main(argc, argv); }
