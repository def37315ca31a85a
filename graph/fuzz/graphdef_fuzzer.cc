// libFuzzer target: arbitrary bytes -> GraphDef parse (binary and text) ->
// import with validation and shape inference -> export. Must never crash,
// hang or leak, whatever the input.
//
// Build and run with clang (libFuzzer + ASan): tools/fuzz.sh
// The same entry point runs under gcc in the regression test over a corpus.
#include <cstddef>
#include <cstdint>
#include <string>

#include "google/protobuf/stubs/logging.h"
#include "graph/graph_io.h"
#include "graph/import.h"

// Protobuf logs every invalid-UTF-8 string it rejects; the parse failure
// itself is what the fuzzer checks, so keep its output readable.
static const bool kQuietProtobuf = [] {
  google::protobuf::SetLogHandler(nullptr);
  return true;
}();

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  for (graphrun::GraphFormat format :
       {graphrun::GraphFormat::kBinary, graphrun::GraphFormat::kText}) {
    auto def = graphrun::ParseGraphDef(bytes, format);
    if (!def.ok()) continue;
    graphrun::ImportOptions options;
    // Keep the fuzzer's memory bounded: constants up to 1 MiB.
    options.max_constant_bytes = 1 << 20;
    auto graph = graphrun::ImportGraphDef(*def, options);
    if (graph.ok()) {
      graphrun::GraphDef out = (*graph)->ToGraphDef();
      (void)graphrun::SerializeDeterministically(out);
    }
    options.allow_unknown_ops = true;
    (void)graphrun::ImportGraphDef(*def, options);
  }
  return 0;
}
