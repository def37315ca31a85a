// The per-op conformance suite: every case tests/conformance/make_conformance.py
// recorded from TensorFlow (one GraphDef per op, listed in its MANIFEST) runs
// as its own single-op graph in a Session, fed TensorFlow's inputs, and must
// give TensorFlow's outputs (dtype, shape and values; floats within a
// tolerance per dtype, NaN where TensorFlow has NaN) or, where TensorFlow
// refused the inputs, fail with TensorFlow's error code. Outputs TensorFlow
// leaves unspecified have no recorded value and are not compared. Prints a
// per-op table: cases, cases passed, worst error (the largest
// |got - want| / (atol + rtol |want|) of its float outputs), input dtypes.
// A program case (a stateful op in a small graph of its own) runs its
// recorded steps in one session, then fetches the recorded tensors.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "graph/graph_io.h"
#include "graph/tensor.h"
#include "gtest/gtest.h"
#include "runtime/session.h"

namespace graphrun {
namespace {

constexpr char kDir[] = "tests/conformance/";

// Largest |got - want| / (atol + rtol |want|) over the elements (pass: <= 1),
// or a reason they cannot be compared.
struct Comparison {
  double ratio = 0;  // worst normalized error
  std::string mismatch;
};

template <typename T>
void CompareReal(const T* got, const T* want, int64_t n, double rtol, double atol,
                 Comparison* c) {
  for (int64_t i = 0; i < n && c->mismatch.empty(); ++i) {
    const double x = static_cast<double>(got[i]);
    const double y = static_cast<double>(want[i]);
    if (std::isnan(x) || std::isnan(y) || std::isinf(x) || std::isinf(y)) {
      if (!(std::isnan(x) && std::isnan(y)) && x != y) {
        c->mismatch = absl::StrCat("element ", i, ": ", x, " vs TensorFlow's ", y);
      }
      continue;
    }
    const double r = std::abs(x - y) / (atol + rtol * std::abs(y));
    c->ratio = std::max(c->ratio, r);
    if (r > 1) c->mismatch = absl::StrCat("element ", i, ": ", x, " vs TensorFlow's ", y);
  }
}

Comparison Compare(const Tensor& got, const Tensor& want) {
  Comparison c;
  if (got.dtype() != want.dtype()) {
    c.mismatch = absl::StrCat("dtype ", DataTypeString(got.dtype()), " vs TensorFlow's ",
                              DataTypeString(want.dtype()));
    return c;
  }
  if (got.shape() != want.shape()) {
    c.mismatch = absl::StrCat("shape ", got.shape().DebugString(), " vs TensorFlow's ",
                              want.shape().DebugString());
    return c;
  }
  const int64_t n = want.NumElements();
  VisitDataType(want.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* g = got.flat<T>().data();
    const T* w = want.flat<T>().data();
    if constexpr (std::is_same_v<T, float>) {
      CompareReal(g, w, n, 1e-5, 1e-6, &c);
    } else if constexpr (std::is_same_v<T, double>) {
      CompareReal(g, w, n, 1e-12, 1e-13, &c);
    } else if constexpr (std::is_same_v<T, half>) {
      CompareReal(g, w, n, 1e-3, 1e-3, &c);
    } else if constexpr (std::is_same_v<T, bfloat16>) {
      CompareReal(g, w, n, 1e-2, 1e-2, &c);
    } else if constexpr (std::is_same_v<T, complex64> || std::is_same_v<T, complex128>) {
      using R = typename T::value_type;
      const double tol = std::is_same_v<R, float> ? 1e-5 : 1e-12;
      const R* gr = reinterpret_cast<const R*>(g);
      const R* wr = reinterpret_cast<const R*>(w);
      CompareReal(gr, wr, 2 * n, tol, tol / 10, &c);
    } else {
      for (int64_t i = 0; i < n && c.mismatch.empty(); ++i) {
        if (!(g[i] == w[i])) c.mismatch = absl::StrCat("element ", i, " differs");
      }
    }
  });
  return c;
}

struct OpRow {
  int cases = 0, passed = 0;
  double worst = 0;
  std::set<std::string> dtypes;
};

// One recorded case: the nodes under "c<i>/".
struct Case {
  GraphDef graph;                                   // placeholders + op
  std::vector<std::pair<std::string, Tensor>> feeds;
  std::map<int, Tensor> wants;
  std::string error;  // "CODE: message" when TensorFlow refused
  // Program cases: the targets of each run, then the tensors fetched.
  std::map<int, std::vector<std::string>> runs;
  std::vector<std::string> fetch;
};

std::vector<std::string> Strings(const Tensor& t) {
  std::vector<std::string> out;
  for (const std::string& s : t.flat<std::string>()) out.push_back(s);
  return out;
}

// A string Const's paths where this test runs: make_conformance.py writes
// its scratch directory as "@TMP@" (here a directory of the op's own under
// the test's temporary directory) and tests/conformance as "@DIR@".
std::string ScratchDir(const std::string& op) {
  return absl::StrCat(::testing::TempDir(), "/conformance_", op);
}

void PlacePaths(const std::string& op, NodeDef* n) {
  if (n->op() != "Const") return;
  auto it = n->mutable_attr()->find("value");
  if (it == n->mutable_attr()->end() || it->second.tensor().dtype() != DT_STRING) return;
  const std::string tmp = ScratchDir(op);
  for (std::string& v : *it->second.mutable_tensor()->mutable_string_val()) {
    v = absl::StrReplaceAll(v, {{"@TMP@", tmp}, {"@DIR@", "tests/conformance"}});
  }
}

absl::StatusOr<std::map<int, Case>> ReadCases(const std::string& op, const GraphDef& g) {
  std::map<int, Case> cases;
  std::map<std::pair<int, std::string>, Tensor> feed_values;
  for (const NodeDef& n : g.node()) {
    const size_t slash = n.name().find('/');
    if (n.name()[0] != 'c' || slash == std::string::npos) {
      return absl::InvalidArgumentError(absl::StrCat("unexpected node ", n.name()));
    }
    const int i = std::stoi(n.name().substr(1, slash - 1));
    const std::string leaf = n.name().substr(slash + 1);
    Case& c = cases[i];
    if (n.op() == "Const" && (absl::StartsWith(leaf, "feed_") || absl::StartsWith(leaf, "want") ||
                              absl::StartsWith(leaf, "prog_") || leaf == "error")) {
      absl::StatusOr<Tensor> t = Tensor::FromProto(n.attr().at("value").tensor());
      if (!t.ok()) return t.status();
      if (leaf == "prog_fetch") {
        c.fetch = Strings(*t);
      } else if (absl::StartsWith(leaf, "prog_run")) {
        c.runs[std::stoi(leaf.substr(8))] = Strings(*t);
      } else if (leaf == "error") {
        c.error = t->flat<std::string>()[0];
      } else if (absl::StartsWith(leaf, "want")) {
        c.wants[std::stoi(leaf.substr(4))] = *std::move(t);
      } else {
        feed_values[{i, leaf.substr(5)}] = *std::move(t);
      }
    } else {
      NodeDef* copy = c.graph.add_node();
      *copy = n;
      PlacePaths(op, copy);
    }
  }
  for (auto& [i, c] : cases) {
    *c.graph.mutable_library() = g.library();
    if (!c.fetch.empty()) continue;  // a program feeds nothing
    for (const NodeDef& n : c.graph.node()) {
      if (n.op() != "Placeholder") continue;
      const std::string leaf = n.name().substr(n.name().find('/') + 1);
      auto it = feed_values.find({i, leaf});
      if (it == feed_values.end()) {
        return absl::InvalidArgumentError(absl::StrCat("no value for ", n.name()));
      }
      c.feeds.emplace_back(n.name(), it->second);
    }
  }
  return cases;
}

std::vector<std::pair<std::string, int>> ReadManifest() {
  std::vector<std::pair<std::string, int>> ops;
  std::ifstream in(std::string(kDir) + "MANIFEST");
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string op;
    int count = 0;
    fields >> op >> count;
    ops.emplace_back(op, count);
  }
  return ops;
}

TEST(ConformanceTest, EveryCaseMatchesTensorFlow) {
  const std::vector<std::pair<std::string, int>> ops = ReadManifest();
  ASSERT_GE(ops.size(), 80u) << "tests/conformance/MANIFEST is missing or short";
  std::map<std::string, OpRow> table;
  int total = 0, passed = 0;
  for (const auto& [op, count] : ops) {
    SCOPED_TRACE(op);
    absl::StatusOr<GraphDef> g = ReadGraphDefFile(absl::StrCat(kDir, op, ".pb"));
    ASSERT_TRUE(g.ok()) << g.status();
    absl::StatusOr<std::map<int, Case>> cases = ReadCases(op, *g);
    ASSERT_TRUE(cases.ok()) << cases.status();
    ASSERT_EQ(static_cast<int>(cases->size()), count) << "cases in " << op << ".pb";
    std::filesystem::create_directories(ScratchDir(op));  // as the recording's existed
    OpRow& row = table[op];
    for (auto& [i, c] : *cases) {
      const std::string name = absl::StrCat(op, " case ", i);
      for (const auto& [feed, t] : c.feeds) row.dtypes.insert(DataTypeString(t.dtype()));
      ++row.cases;
      ++total;
      std::vector<std::string> fetches;
      if (!c.fetch.empty()) {
        fetches = c.fetch;
        for (const auto& [k, t] : c.wants) row.dtypes.insert(DataTypeString(t.dtype()));
      } else if (c.error.empty()) {
        for (const auto& [k, t] : c.wants) fetches.push_back(absl::StrCat("c", i, "/op:", k));
      } else {
        // Fetch every output the op has: refusing needs running it.
        for (const NodeDef& n : c.graph.node()) {
          if (n.op() == op) fetches.push_back(n.name());
        }
      }
      std::vector<Tensor> outs;
      absl::Status s;
      absl::StatusOr<std::unique_ptr<Session>> session = Session::Create(c.graph);
      s = session.status();
      for (auto it = c.runs.begin(); s.ok() && it != c.runs.end(); ++it) {
        std::vector<Tensor> none;
        s = (*session)->Run({}, {}, it->second, &none);
      }
      if (s.ok()) s = (*session)->Run(c.feeds, fetches, {}, &outs);
      if (!c.error.empty()) {
        const std::string code = c.error.substr(0, c.error.find(':'));
        if (s.ok()) {
          ADD_FAILURE() << name << ": succeeded where TensorFlow failed with " << c.error;
        } else if (absl::StatusCodeToString(s.code()) != code) {
          ADD_FAILURE() << name << ": " << s << "; TensorFlow: " << c.error;
        } else {
          ++row.passed;
          ++passed;
        }
        continue;
      }
      if (!s.ok()) {
        ADD_FAILURE() << name << ": " << s;
        continue;
      }
      bool ok = true;
      size_t f = 0;  // outs follow the wants in output order
      for (const auto& [k, want] : c.wants) {
        const Comparison cmp = Compare(outs[f++], want);
        row.worst = std::max(row.worst, cmp.ratio);
        if (!cmp.mismatch.empty()) {
          ADD_FAILURE() << name << " output " << k << ": " << cmp.mismatch;
          ok = false;
        }
      }
      if (ok) {
        ++row.passed;
        ++passed;
      }
    }
  }
  std::printf("%-34s %6s %7s %12s  %s\n", "op", "cases", "passed", "worst/tol", "input dtypes");
  for (const auto& [op, row] : table) {
    std::printf("%-34s %6d %7d %12.3g  %s\n", op.c_str(), row.cases, row.passed, row.worst,
                absl::StrJoin(row.dtypes, ",").c_str());
  }
  std::printf("%zu ops, %d cases, %d passed\n", table.size(), total, passed);
  EXPECT_EQ(passed, total);
}

}  // namespace
}  // namespace graphrun
