// Test fixtures exported by TensorFlow: a MANIFEST of models (one line
// each: `name feeds=a:0,b:0 fetches=c:0 tol=1e-5 [form=...]`), a graph per
// model (`name.pb`) and one .npy per feed and fetch. RunFixture runs a
// model in a Session and checks every fetch against TensorFlow's answer.
#ifndef GRAPHRUN_TESTS_FIXTURE_MANIFEST_H_
#define GRAPHRUN_TESTS_FIXTURE_MANIFEST_H_

#include <functional>
#include <string>
#include <vector>

#include "runtime/session.h"

namespace graphrun {
namespace testing {

struct FixtureModel {
  std::string dir;   // with a trailing '/'
  std::string name;  // file prefix
  std::vector<std::string> feeds, fetches;
  double tol = 1e-5;
  std::string form;  // "lowered", "functional", "v1" or ""
};

// The models of `dir`/MANIFEST; empty if there is none.
std::vector<FixtureModel> ReadFixtureManifest(const std::string& dir);

// `dir` + model + "." + tensor ('/' -> "__", ':' -> '_') + ".npy".
std::string FixtureNpyPath(const FixtureModel& model, const std::string& tensor);

// Runs `model` twice in a Session made with `options` (the second run
// uses the cached plan) and adds a gtest failure for every fetch that
// differs from TensorFlow's beyond the model's tolerance. Returns the
// first error from creating or running the session.
// `edit`, if set, rewrites the graph first (e.g. pins its nodes).
absl::Status RunFixture(const FixtureModel& model, const SessionOptions& options,
                        RunMetadata* metadata = nullptr,
                        const std::function<void(GraphDef*)>& edit = nullptr);

// Pins the nodes alternately to /device:CPU:0 and CPU:1 (nodes that ask to
// be colocated with another follow it), so a graph is cut in two.
void PinAlternately(GraphDef* graph);

}  // namespace testing
}  // namespace graphrun

#endif  // GRAPHRUN_TESTS_FIXTURE_MANIFEST_H_
