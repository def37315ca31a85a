// libFuzzer target for the shape functions: the bytes choose an op (Tile,
// Range, Fill, Reshape, Slice, StridedSlice, ConcatV2, Pack, Transpose,
// ExpandDims, Split, BroadcastTo, OneHot, GatherV2, Squeeze, Sum, AddV2,
// MatMul, BatchMatMulV2, Conv2D, MaxPool), the shapes of its Placeholder
// inputs (unknown, empty, huge dims), its constant int32/int64 inputs (edge
// values such as INT64_MIN, 2^48, 2^62, or raw bytes) and its int attrs.
// The graph is imported with shape inference, as `graphrun inspect` would.
//
// Checked: no crash, no undefined behaviour (run under UBSan by
// tools/fuzz.sh), and an import that fails says which node and op failed
// (InvalidArgument "node '...' (Op)"). Decoding never fails: short inputs
// read zeros, so every byte string is a graph.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "graph/import.h"
#include "graph/protos/graph.pb.h"

namespace graphrun {
namespace {

// Reads the fuzzer's bytes front to back; zeros once they run out.
class ByteReader {
 public:
  ByteReader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint8_t Byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  uint64_t Raw64() {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = (v << 8) | Byte();
    return v;
  }
  bool Bit() { return (Byte() & 1) != 0; }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

constexpr int64_t kInt64Min = INT64_MIN;
constexpr int64_t kInt64Max = INT64_MAX;

// Values shape functions must survive: edges of int32/int64, the 2^48
// element limit and its neighbours, small values.
constexpr int64_t kEdgeValues[] = {
    0, 1, 2, 3, 4, -1, -2, 5, 7, 8, 16, 255,
    INT32_MAX, INT32_MIN, int64_t{1} << 31, int64_t{1} << 32,
    (int64_t{1} << 47), (int64_t{1} << 48), (int64_t{1} << 48) + 1,
    int64_t{1} << 62, kInt64Max, kInt64Min, kInt64Max - 1, kInt64Min + 1,
    -(int64_t{1} << 48), int64_t{1} << 24, int64_t{1} << 30, 1000000007};

int64_t Value(ByteReader& r) {
  const uint8_t b = r.Byte();
  if (b < 200) return kEdgeValues[b % (sizeof(kEdgeValues) / sizeof(int64_t))];
  return static_cast<int64_t>(r.Raw64());
}

// A dim for a Placeholder shape: mostly unknown or small, now and then huge
// (a shape whose dims multiply past 2^48 is refused at the Placeholder).
int64_t Dim(ByteReader& r) {
  static constexpr int64_t kSmall[] = {-1, 0, 1, 2, 3, 4, 5, 8};
  static constexpr int64_t kHuge[] = {int64_t{1} << 24, int64_t{1} << 31,
                                      int64_t{1} << 40, int64_t{1} << 47,
                                      int64_t{1} << 48};
  const uint8_t b = r.Byte();
  if (b < 224) return kSmall[b % 8];
  return kHuge[b % 5];
}

class GraphBuilder {
 public:
  explicit GraphBuilder(ByteReader& r) : r_(r) {}

  // A Placeholder of a fuzzed shape: unknown rank, or rank 0..5.
  std::string Placeholder(const char* dtype = "DT_FLOAT") {
    NodeDef* n = NewNode("Placeholder");
    SetType(n, "dtype", dtype);
    const int rank = r_.Byte() % 7 - 1;
    if (rank >= 0) {
      TensorShapeProto* s = (*n->mutable_attr())["shape"].mutable_shape();
      for (int i = 0; i < rank; ++i) s->add_dim()->set_size(Dim(r_));
    }
    return n->name();
  }

  // A constant int32 or int64 vector of 0..5 edge values (a scalar when
  // `scalar`), or now and then a Placeholder of that type instead, so the
  // non-constant paths run too. The type is *dtype when that is set (inputs
  // that share a type attr), else chosen and stored there.
  std::string IntInput(bool scalar, std::string* dtype) {
    const uint8_t mode = r_.Byte();
    if (dtype->empty()) *dtype = (mode & 1) ? "DT_INT64" : "DT_INT32";
    if ((mode & 0x0e) == 0x0e) return Placeholder(dtype->c_str());
    NodeDef* n = NewNode("Const");
    SetType(n, "dtype", *dtype);
    TensorProto* t = (*n->mutable_attr())["value"].mutable_tensor();
    t->set_dtype(*dtype == "DT_INT64" ? DT_INT64 : DT_INT32);
    const int len = scalar ? 1 : r_.Byte() % 6;
    if (!scalar) t->mutable_tensor_shape()->add_dim()->set_size(len);
    for (int i = 0; i < len; ++i) {
      const int64_t v = Value(r_);
      if (*dtype == "DT_INT64") {
        t->add_int64_val(v);
      } else {
        t->add_int_val(static_cast<int32_t>(static_cast<uint32_t>(v)));
      }
    }
    return n->name();
  }

  std::string FloatScalar() {
    NodeDef* n = NewNode("Const");
    SetType(n, "dtype", "DT_FLOAT");
    TensorProto* t = (*n->mutable_attr())["value"].mutable_tensor();
    t->set_dtype(DT_FLOAT);
    t->add_float_val(1.0f);
    return n->name();
  }

  // The node under test, named "op" so errors can be checked for it.
  NodeDef* Op(const std::string& op, const std::vector<std::string>& inputs) {
    NodeDef* n = graph_.add_node();
    n->set_name("op");
    n->set_op(op);
    for (const auto& in : inputs) n->add_input(in);
    return n;
  }

  void SetType(NodeDef* n, const std::string& attr, const std::string& dtype) {
    DataType t = DT_FLOAT;
    DataType_Parse(dtype, &t);
    (*n->mutable_attr())[attr].set_type(t);
  }
  void SetInt(NodeDef* n, const std::string& attr) {
    (*n->mutable_attr())[attr].set_i(Value(r_));
  }
  void SetInts(NodeDef* n, const std::string& attr, int count) {
    auto* list = (*n->mutable_attr())[attr].mutable_list();
    for (int i = 0; i < count; ++i) list->add_i(Value(r_));
  }

  const GraphDef& graph() const { return graph_; }

 private:
  NodeDef* NewNode(const std::string& op) {
    NodeDef* n = graph_.add_node();
    n->set_name(absl::StrCat("in", graph_.node_size()));
    n->set_op(op);
    return n;
  }

  ByteReader& r_;
  GraphDef graph_;
};

enum Op {
  kTile, kRange, kFill, kReshape, kSlice, kStridedSlice, kConcatV2, kPack,
  kTranspose, kExpandDims, kSplit, kBroadcastTo, kOneHot, kGatherV2,
  kSqueeze, kSum, kAddV2, kMatMul, kBatchMatMulV2, kConv2D, kMaxPool,
  kNumOps
};

// Builds the graph for op `which` from the remaining bytes.
void BuildGraph(int which, ByteReader& r, GraphBuilder& g) {
  std::string t1;  // the type of the int inputs
  switch (which) {
    case kTile: {
      const std::string x = g.Placeholder();
      NodeDef* n = g.Op("Tile", {x, g.IntInput(false, &t1)});
      g.SetType(n, "T", "DT_FLOAT");
      g.SetType(n, "Tmultiples", t1);
      break;
    }
    case kRange: {
      const std::string s = g.IntInput(true, &t1);
      const std::string l = g.IntInput(true, &t1);
      const std::string d = g.IntInput(true, &t1);
      g.SetType(g.Op("Range", {s, l, d}), "Tidx", t1);
      break;
    }
    case kFill: {
      const std::string dims = g.IntInput(false, &t1);
      NodeDef* n = g.Op("Fill", {dims, g.FloatScalar()});
      g.SetType(n, "T", "DT_FLOAT");
      g.SetType(n, "index_type", t1);
      break;
    }
    case kReshape: {
      const std::string x = g.Placeholder();
      NodeDef* n = g.Op("Reshape", {x, g.IntInput(false, &t1)});
      g.SetType(n, "T", "DT_FLOAT");
      g.SetType(n, "Tshape", t1);
      break;
    }
    case kSlice: {
      const std::string x = g.Placeholder();
      const std::string b = g.IntInput(false, &t1);
      const std::string s = g.IntInput(false, &t1);
      NodeDef* n = g.Op("Slice", {x, b, s});
      g.SetType(n, "T", "DT_FLOAT");
      g.SetType(n, "Index", t1);
      break;
    }
    case kStridedSlice: {
      const std::string x = g.Placeholder();
      const std::string b = g.IntInput(false, &t1);
      const std::string e = g.IntInput(false, &t1);
      const std::string s = g.IntInput(false, &t1);
      NodeDef* n = g.Op("StridedSlice", {x, b, e, s});
      g.SetType(n, "T", "DT_FLOAT");
      g.SetType(n, "Index", t1);
      for (const char* mask : {"begin_mask", "end_mask", "ellipsis_mask",
                               "new_axis_mask", "shrink_axis_mask"}) {
        if (r.Bit()) g.SetInt(n, mask);
      }
      break;
    }
    case kConcatV2:
    case kPack: {
      const int count = 1 + r.Byte() % 4;
      std::vector<std::string> inputs;
      for (int i = 0; i < count; ++i) inputs.push_back(g.Placeholder());
      if (which == kConcatV2) inputs.push_back(g.IntInput(true, &t1));
      NodeDef* n = g.Op(which == kConcatV2 ? "ConcatV2" : "Pack", inputs);
      g.SetType(n, "T", "DT_FLOAT");
      (*n->mutable_attr())["N"].set_i(count);
      if (which == kConcatV2) {
        g.SetType(n, "Tidx", t1);
      } else {
        g.SetInt(n, "axis");
      }
      break;
    }
    case kTranspose:
    case kExpandDims:
    case kBroadcastTo: {
      const std::string x = g.Placeholder();
      const bool scalar = which == kExpandDims && r.Bit();
      const std::string y = g.IntInput(scalar, &t1);
      const char* op = which == kTranspose    ? "Transpose"
                       : which == kExpandDims ? "ExpandDims"
                                              : "BroadcastTo";
      NodeDef* n = g.Op(op, {x, y});
      g.SetType(n, "T", "DT_FLOAT");
      g.SetType(n, which == kTranspose ? "Tperm"
                   : which == kExpandDims ? "Tdim" : "Tidx", t1);
      break;
    }
    case kSplit: {
      t1 = "DT_INT32";
      const std::string dim = g.IntInput(true, &t1);
      NodeDef* n = g.Op("Split", {dim, g.Placeholder()});
      g.SetType(n, "T", "DT_FLOAT");
      (*n->mutable_attr())["num_split"].set_i(1 + r.Byte() % 5);
      break;
    }
    case kOneHot: {
      const std::string indices = g.Placeholder("DT_INT64");
      t1 = "DT_INT32";
      std::string depth = g.IntInput(true, &t1);
      NodeDef* n = g.Op("OneHot", {indices, depth, g.FloatScalar(), g.FloatScalar()});
      g.SetType(n, "T", "DT_FLOAT");
      g.SetType(n, "TI", "DT_INT64");
      if (r.Bit()) g.SetInt(n, "axis");
      break;
    }
    case kGatherV2: {
      const std::string params = g.Placeholder();
      const std::string indices = g.Placeholder("DT_INT64");
      NodeDef* n = g.Op("GatherV2", {params, indices, g.IntInput(true, &t1)});
      g.SetType(n, "Tparams", "DT_FLOAT");
      g.SetType(n, "Tindices", "DT_INT64");
      g.SetType(n, "Taxis", t1);
      if (r.Bit()) g.SetInt(n, "batch_dims");
      break;
    }
    case kSqueeze: {
      NodeDef* n = g.Op("Squeeze", {g.Placeholder()});
      g.SetType(n, "T", "DT_FLOAT");
      g.SetInts(n, "squeeze_dims", r.Byte() % 4);
      break;
    }
    case kSum: {
      const std::string x = g.Placeholder();
      NodeDef* n = g.Op("Sum", {x, g.IntInput(false, &t1)});
      g.SetType(n, "T", "DT_FLOAT");
      g.SetType(n, "Tidx", t1);
      (*n->mutable_attr())["keep_dims"].set_b(r.Bit());
      break;
    }
    case kAddV2:
    case kMatMul:
    case kBatchMatMulV2: {
      const std::string a = g.Placeholder();
      const std::string b = g.Placeholder();
      NodeDef* n = g.Op(which == kAddV2    ? "AddV2"
                        : which == kMatMul ? "MatMul"
                                           : "BatchMatMulV2",
                        {a, b});
      g.SetType(n, "T", "DT_FLOAT");
      break;
    }
    case kConv2D:
    case kMaxPool: {
      const std::string x = g.Placeholder();
      NodeDef* n = which == kConv2D ? g.Op("Conv2D", {x, g.Placeholder()})
                                    : g.Op("MaxPool", {x});
      g.SetType(n, "T", "DT_FLOAT");
      static const char* const kPaddings[] = {"SAME", "VALID", "EXPLICIT"};
      const int padding = r.Byte() % 3;
      (*n->mutable_attr())["padding"].set_s(kPaddings[padding]);
      g.SetInts(n, "strides", 4);
      if (which == kConv2D) {
        g.SetInts(n, "dilations", 4);
      } else {
        g.SetInts(n, "ksize", 4);
      }
      if (padding == 2) g.SetInts(n, "explicit_paddings", 8);
      if (r.Bit()) (*n->mutable_attr())["data_format"].set_s("NCHW");
      break;
    }
  }
}

}  // namespace
}  // namespace graphrun

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace graphrun;  // NOLINT: one entry point
  ByteReader r(data, size);
  GraphBuilder g(r);
  BuildGraph(r.Byte() % kNumOps, r, g);
  ImportOptions options;
  options.max_constant_bytes = 1 << 20;
  absl::StatusOr<std::unique_ptr<Graph>> graph = ImportGraphDef(g.graph(), options);
  // SHAPE_FUZZER_VERBOSE=1: each graph's op and verdict, to triage a corpus.
  static const bool verbose = std::getenv("SHAPE_FUZZER_VERBOSE") != nullptr;
  if (verbose) {
    const NodeDef& op = g.graph().node(g.graph().node_size() - 1);
    const std::string verdict =
        graph.ok()
            ? absl::StrCat("OK ", (*graph)->FindNode("op")->output_shape(0).DebugString())
            : std::string(graph.status().message());
    std::fprintf(stderr, "%s: %s\n", op.op().c_str(), verdict.c_str());
  }
  if (!graph.ok()) {
    // Every failure here is about one node: it must say which.
    const absl::Status& s = graph.status();
    if (s.code() != absl::StatusCode::kInvalidArgument ||
        !absl::StrContains(s.message(), "node '")) {
      std::fprintf(stderr, "shape_fuzzer: error without a node: %s\n",
                   s.ToString().c_str());
      std::abort();
    }
  }
  return 0;
}
