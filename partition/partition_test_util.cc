#include "partition/partition_test_util.h"

#include "absl/strings/match.h"
#include "graph/import.h"
#include "gtest/gtest.h"

namespace graphrun {
namespace partition_testing {

NodeDef* AddConst(GraphDef* g, const std::string& name,
                  const std::string& device, float value, DataType dtype) {
  NodeDef* n = g->add_node();
  n->set_name(name);
  n->set_op("Const");
  n->set_device(device);
  (*n->mutable_attr())["dtype"].set_type(dtype);
  TensorProto* t = (*n->mutable_attr())["value"].mutable_tensor();
  t->set_dtype(dtype);
  if (dtype == DT_FLOAT) {
    t->add_float_val(value);
  } else {
    t->add_int_val(static_cast<int>(value));
  }
  return n;
}

NodeDef* AddOp(GraphDef* g, const std::string& name, const std::string& op,
               const std::vector<std::string>& inputs,
               const std::string& device, DataType type) {
  NodeDef* n = g->add_node();
  n->set_name(name);
  n->set_op(op);
  n->set_device(device);
  for (const std::string& in : inputs) n->add_input(in);
  (*n->mutable_attr())["T"].set_type(type);
  return n;
}

std::unique_ptr<Graph> Import(const GraphDef& def) {
  ImportOptions options;
  options.allow_internal_names = true;
  auto graph = ImportGraphDef(def, options);
  EXPECT_TRUE(graph.ok()) << graph.status();
  return graph.ok() ? *std::move(graph) : nullptr;
}

std::map<std::string, GraphDef> PartitionOk(const GraphDef& def,
                                            const PartitionOptions& options,
                                            PartitionStats* stats) {
  std::unique_ptr<Graph> graph = Import(def);
  if (graph == nullptr) return {};
  auto parts = Partition(*graph, options, stats);
  EXPECT_TRUE(parts.ok()) << parts.status();
  if (!parts.ok()) return {};
  std::map<std::string, int> sends, recvs;  // by rendezvous key
  for (const auto& [loc, part] : *parts) {
    ImportOptions import_options;
    import_options.allow_internal_names = true;
    auto reimported = ImportGraphDef(part, import_options);
    EXPECT_TRUE(reimported.ok()) << loc << ": " << reimported.status();
    for (const NodeDef& n : part.node()) {
      EXPECT_EQ(n.device(), loc) << n.name();
      const bool send = n.op() == "_Send" || n.op() == "_HostSend";
      const bool recv = n.op() == "_Recv" || n.op() == "_HostRecv";
      if (!send && !recv) continue;
      const auto& a = n.attr();
      const std::string key = RendezvousKey(
          a.at("send_device").s(), a.at("send_device_incarnation").i(),
          a.at("recv_device").s(), a.at("tensor_name").s(), 0, 0);
      EXPECT_EQ(loc, send ? a.at("send_device").s() : a.at("recv_device").s());
      EXPECT_FALSE(a.at("client_terminated").b());
      ++(send ? sends : recvs)[key];
    }
  }
  EXPECT_EQ(sends, recvs);
  for (const auto& [key, count] : sends) EXPECT_EQ(count, 1) << key;
  return *std::move(parts);
}

const NodeDef* Find(const GraphDef& g, const std::string& name) {
  for (const NodeDef& n : g.node()) {
    if (n.name() == name) return &n;
  }
  return nullptr;
}

std::vector<const NodeDef*> WithOp(const GraphDef& g, const std::string& op) {
  std::vector<const NodeDef*> out;
  for (const NodeDef& n : g.node()) {
    if (n.op() == op) out.push_back(&n);
  }
  return out;
}

std::vector<std::string> Inputs(const NodeDef* n) {
  return n == nullptr
             ? std::vector<std::string>()
             : std::vector<std::string>(n->input().begin(), n->input().end());
}

std::map<std::string, float> Evaluate(const std::vector<const GraphDef*>& gs) {
  std::map<std::string, float> value;
  std::map<std::string, float> rendezvous;
  for (bool progress = true; progress;) {
    progress = false;
    for (const GraphDef* g : gs) {
      for (const NodeDef& n : g->node()) {
        if (value.count(n.name())) continue;
        std::vector<float> in;
        bool ready = true;
        for (const std::string& i : n.input()) {
          const std::string src = i[0] == '^' ? i.substr(1) : i;
          auto it = value.find(src);
          if (it == value.end()) {
            ready = false;
            break;
          }
          if (i[0] != '^') in.push_back(it->second);
        }
        if (!ready) continue;
        const auto& a = n.attr();
        std::string key;
        if (absl::StartsWith(n.op(), "_")) {
          key = RendezvousKey(
              a.at("send_device").s(), a.at("send_device_incarnation").i(),
              a.at("recv_device").s(), a.at("tensor_name").s(), 0, 0);
        }
        if (n.op() == "Const") {
          const TensorProto& t = a.at("value").tensor();
          value[n.name()] = t.float_val_size() ? t.float_val(0) : 0;
        } else if (n.op() == "Identity" || n.op() == "Cast") {
          value[n.name()] = in.at(0);
        } else if (n.op() == "AddV2") {
          value[n.name()] = in.at(0) + in.at(1);
        } else if (n.op() == "_Send") {
          rendezvous[key] = in.at(0);
          value[n.name()] = 0;
        } else if (n.op() == "_Recv" && rendezvous.count(key)) {
          value[n.name()] = rendezvous[key];
        } else {
          continue;
        }
        progress = true;
      }
    }
  }
  return value;
}

}  // namespace partition_testing
}  // namespace graphrun
