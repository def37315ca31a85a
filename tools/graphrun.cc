// graphrun: the command-line front end.
//
//   graphrun inspect GRAPH [--format=text|binary --out=PATH]
//
// Exit status: 0 on success, 1 on a bad graph or failed command, 2 on a
// usage error.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "graph/graph_io.h"
#include "graph/import.h"
#include "tools/inspect.h"

ABSL_FLAG(std::string, format, "",
          "inspect: convert the graph to this format (text or binary) "
          "instead of printing a summary");
ABSL_FLAG(std::string, out, "",
          "inspect --format: where to write the converted graph "
          "(default: stdout for text)");
ABSL_FLAG(std::string, input_format, "auto",
          "format of GRAPH: auto (by extension, then content), text or binary");

namespace graphrun {
namespace {

constexpr char kUsage[] = R"(graphrun: run TensorFlow-compatible dataflow graphs.

Usage:
  graphrun inspect GRAPH                 summary: ops, inputs, outputs, devices,
                                         ops this build cannot run, validation
  graphrun inspect GRAPH --format=text|binary [--out=PATH]
                                         convert between GraphDef formats

GRAPH is a GraphDef in binary (.pb) or text (.pbtxt) format.
)";

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "graphrun: %s\n", status.ToString().c_str());
  return 1;
}

int Inspect(const std::vector<std::string>& args) {
  if (args.size() != 1) {
    std::fprintf(stderr, "graphrun inspect: expected one GRAPH argument\n\n%s",
                 kUsage);
    return 2;
  }
  const std::string& path = args[0];
  auto in_format = ParseGraphFormat(absl::GetFlag(FLAGS_input_format));
  if (!in_format.ok()) return Fail(in_format.status());
  auto graph_def = ReadGraphDefFile(path, *in_format);
  if (!graph_def.ok()) return Fail(graph_def.status());

  const std::string format = absl::GetFlag(FLAGS_format);
  if (format.empty()) {
    InspectOptions options;
    options.source = path;
    std::cout << InspectGraph(*graph_def, options);
    return 0;
  }
  auto out_format = ParseGraphFormat(format);
  if (!out_format.ok()) return Fail(out_format.status());
  if (*out_format == GraphFormat::kAuto) {
    return Fail(absl::InvalidArgumentError("--format must be text or binary"));
  }
  const std::string out = absl::GetFlag(FLAGS_out);
  if (out.empty() && *out_format == GraphFormat::kBinary) {
    return Fail(absl::InvalidArgumentError(
        "--format=binary needs --out=PATH (binary is not written to a terminal)"));
  }
  if (out.empty()) {
    auto text = SerializeGraphDef(*graph_def, GraphFormat::kText);
    if (!text.ok()) return Fail(text.status());
    std::cout << *text;
    return 0;
  }
  absl::Status s = WriteGraphDefFile(out, *graph_def, *out_format);
  if (!s.ok()) return Fail(s);
  std::fprintf(stderr, "wrote %s (%d nodes, %s)\n", out.c_str(),
               graph_def->node_size(),
               *out_format == GraphFormat::kText ? "text" : "binary");
  return 0;
}

}  // namespace
}  // namespace graphrun

int main(int argc, char** argv) {
  // Under `bazel run`, paths on the command line are relative to where the
  // user typed the command, not to the runfiles tree.
  if (const char* dir = std::getenv("BUILD_WORKING_DIRECTORY")) {
    if (chdir(dir) != 0) std::perror("graphrun: chdir");
  }
  absl::SetProgramUsageMessage(graphrun::kUsage);
  std::vector<char*> positional = absl::ParseCommandLine(argc, argv);
  if (positional.size() < 2) {
    std::fputs(graphrun::kUsage, stderr);
    return 2;
  }
  const std::string command = positional[1];
  std::vector<std::string> args(positional.begin() + 2, positional.end());
  if (command == "inspect") return graphrun::Inspect(args);
  if (command == "help") {
    std::fputs(graphrun::kUsage, stdout);
    return 0;
  }
  std::fprintf(stderr, "graphrun: unknown command '%s'\n\n%s", command.c_str(),
               graphrun::kUsage);
  return 2;
}
