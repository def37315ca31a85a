// The graphrun Python module's native half (`graphrun._graphrun`): sessions
// made as `graphrun run` makes them (devices, GPU choice, worker processes),
// SavedModel signatures, checkpoints beside a session, the GPU inventory and
// claims. The Python package (python/graphrun) gives these TensorFlow's
// shapes: fetch structures, errors as exception classes, train().
//
// Every absl::Status error becomes graphrun.errors' exception for its code,
// with the message the CLI prints. A step runs with the GIL released.
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/synchronization/mutex.h"
#include "absl/strings/str_cat.h"
#include "graph/graph_io.h"
#include "graph/import.h"
#include "graph/meta_graph_io.h"
#include "graph/attr_slice.h"
#include "graph/graph.h"
#include "graph/status_macros.h"
#include "graph/types.h"
#include "graph/op_registry.h"
#include "pybind11/stl.h"
#include "python/numpy_tensor.h"
#include "python/options.h"
#include "python/status.h"
#include "runtime/saved_model.h"
#include "runtime/saver.h"
#include "runtime/trace.h"
#include "tools/local_workers.h"
#include "tools/run_command.h"

namespace graphrun {
namespace python {
namespace py = pybind11;

namespace {

// "x:0" -> "x"; "x" -> "x" (the name as given when it does not parse).
std::string NodeOf(const std::string& tensor) {
  absl::StatusOr<TensorId> id = ParseTensorId(tensor, /*allow_internal_names=*/true);
  return id.ok() ? id->node : tensor;
}

py::dict MetadataDict(const RunMetadata& md) {
  py::dict out;
  out["serialized"] = py::bytes(md.SerializeAsString());
  out["chrome_trace"] = StepStatsToChromeTrace(md.step_stats());
  py::list devices;
  for (const DeviceStepStats& dev : md.step_stats().dev_stats()) {
    py::list nodes;
    for (const NodeExecStats& n : dev.node_stats()) {
      py::dict node;
      node["name"] = n.node_name();
      node["label"] = n.timeline_label();
      node["start_us"] = n.all_start_micros();
      node["duration_us"] = n.all_end_rel_micros();
      node["thread_id"] = n.thread_id();
      nodes.append(std::move(node));
    }
    py::dict d;
    d["device"] = dev.device();
    d["nodes"] = std::move(nodes);
    devices.append(std::move(d));
  }
  out["step_stats"] = std::move(devices);
  py::list partitions;
  for (const GraphDef& g : md.partition_graphs()) partitions.append(py::bytes(g.SerializeAsString()));
  out["partition_graphs"] = std::move(partitions);
  py::dict placement;
  placement["predicted_step_seconds"] = md.placement().predicted_step_seconds();
  placement["devices"] = std::vector<std::string>(md.placement().devices().begin(),
                                                  md.placement().devices().end());
  placement["cross_device_tensors"] = md.placement().cross_device_tensors();
  placement["cross_device_bytes"] = md.placement().cross_device_bytes();
  out["placement"] = std::move(placement);
  return out;
}

// Runs one step with the GIL released; the feeds' Python references are
// dropped before returning.
std::vector<Tensor> RunStep(Session* session, std::vector<std::pair<std::string, Tensor>> feeds,
                            const std::vector<std::string>& fetches,
                            const std::vector<std::string>& targets, bool trace,
                            int64_t timeout_ms, py::object* metadata) {
  RunOptions options;
  options.set_timeout_in_ms(timeout_ms);
  if (trace) {
    options.set_trace_level(RunOptions::FULL_TRACE);
    options.set_output_partition_graphs(true);
  }
  RunMetadata md;
  std::vector<Tensor> outputs;
  absl::Status s;
  {
    py::gil_scoped_release release;
    s = session->Run(options, feeds, fetches, targets, &outputs, trace ? &md : nullptr);
  }
  feeds.clear();
  ReleasePending();
  Check(s);
  if (trace && metadata != nullptr) *metadata = MetadataDict(md);
  return outputs;
}

// A session made as `graphrun run` makes it. Calls may come from several
// Python threads; close() waits for none of them: the session goes when the
// last call holding it returns, and calls after close() fail.
class PySession {
 public:
  // `graph`: a file path (GraphDef .pb/.pbtxt, or a .meta MetaGraphDef) or,
  // with `is_bytes`, a serialized GraphDef.
  PySession(const std::string& graph, bool is_bytes, const py::dict& options) {
    RunCommandArgs args = ArgsFromOptions(options);
    args.graph = is_bytes ? "the graph given" : graph;
    absl::StatusOr<RunSession> made;
    {
      // Reading the graph, starting worker processes, connecting to a
      // cluster and CUDA can take seconds: other threads go on meanwhile.
      py::gil_scoped_release release;
      made = Make(graph, is_bytes, args);
    }
    run_ = std::make_shared<RunSession>(Unwrap(std::move(made)));
    for (const NodeDef& n : run_->graph.node()) nodes_[n.name()] = &n;
  }

  py::tuple Run(const std::vector<std::pair<std::string, py::object>>& feeds,
                const std::vector<std::string>& fetches, const std::vector<std::string>& targets,
                bool trace, int64_t timeout_ms) {
    std::shared_ptr<RunSession> run = Get();
    std::vector<std::pair<std::string, Tensor>> in;
    for (const auto& [name, value] : feeds) {
      in.emplace_back(name, Unwrap(ToTensor(value, FedDtype(name),
                                            absl::StrCat("feed '", name, "'"))));
    }
    py::object metadata = py::none();
    std::vector<Tensor> out = RunStep(run->session.get(), std::move(in), fetches, targets, trace,
                                      timeout_ms, &metadata);
    py::list arrays;
    for (size_t i = 0; i < out.size(); ++i) {
      arrays.append(ToArray(std::move(out[i]), absl::StrCat("fetch '", fetches[i], "'")));
    }
    return py::make_tuple(arrays, metadata);
  }

  // The NumPy dtype name a feed of `name` is converted to, or None.
  py::object FeedDtype(const std::string& name) const {
    std::shared_ptr<RunSession> run = Get();  // keeps the graph nodes_ points into
    const DataType dtype = FedDtype(name);
    if (dtype == DT_INVALID) return py::none();
    return py::str(NumpyDtypeName(dtype));
  }

  std::vector<std::string> Devices() const {
    std::shared_ptr<RunSession> run = Get();
    std::vector<std::string> names;
    for (Device* d : run->session->devices()) names.push_back(d->name());
    return names;
  }

  // Writes the variables to a V2 checkpoint at `prefix` (the graph's own
  // Saver when it came with one), and names it in the directory's
  // `checkpoint` file less `dropped`.
  void Save(const std::string& prefix, const std::vector<std::string>& dropped) {
    std::shared_ptr<RunSession> run = Get();
    if (saver_.has_value()) {
      try {
        RunStep(run->session.get(),
                {{saver_->filename_tensor_name(), Tensor::Scalar<std::string>(prefix)}},
                {saver_->save_tensor_name()}, {}, false, 0, nullptr);
      } catch (const StatusError& e) {
        throw StatusError(absl::Status(e.status.code(),
                                       absl::StrCat("saving ", prefix, ": ", e.status.message())));
      }
    } else {
      absl::StatusOr<int> saved;
      {
        py::gil_scoped_release release;
        saved = SaveVariables(run->graph, run->session.get(), prefix);
      }
      Unwrap(std::move(saved));
    }
    Check(UpdateCheckpointState(prefix, dropped));
  }

  void Restore(const std::string& prefix_or_dir) {
    std::shared_ptr<RunSession> run = Get();
    if (saver_.has_value()) {
      const std::string prefix = Unwrap(ResolveCheckpointPrefix(prefix_or_dir));
      try {
        RunStep(run->session.get(),
                {{saver_->filename_tensor_name(), Tensor::Scalar<std::string>(prefix)}}, {},
                {saver_->restore_op_name()}, false, 0, nullptr);
      } catch (const StatusError& e) {
        throw StatusError(absl::Status(
            e.status.code(), absl::StrCat("restoring ", prefix, ": ", e.status.message())));
      }
      return;
    }
    absl::StatusOr<int> restored;
    {
      py::gil_scoped_release release;
      restored = RestoreVariables(run->graph, run->session.get(), prefix_or_dir);
    }
    Unwrap(std::move(restored));
  }

  py::dict MetaInfo() const {
    py::dict info;
    info["train_ops"] = train_ops_;
    info["init_ops"] = init_ops_;
    info["has_saver"] = saver_.has_value();
    return info;
  }

  bool HasNode(const std::string& name) const { return nodes_.contains(name); }

  void Close() {
    std::shared_ptr<RunSession> old;
    {
      absl::MutexLock lock(&mu_);
      old.swap(run_);
    }
    {
      py::gil_scoped_release release;
      old.reset();  // the last call still running it, if any, ends it
    }
    ReleasePending();
  }

 private:
  absl::StatusOr<RunSession> Make(const std::string& graph, bool is_bytes,
                                  const RunCommandArgs& args) {
    GraphDef graph_def;
    if (is_bytes) {
      GR_ASSIGN_OR_RETURN(graph_def, ParseGraphDef(graph, GraphFormat::kAuto, "the graph given"));
    } else if (absl::EndsWith(graph, ".meta")) {
      GR_ASSIGN_OR_RETURN(MetaGraphDef meta_def, ReadMetaGraphFile(graph));
      GR_ASSIGN_OR_RETURN(TrainingMetaGraph meta, ExtractTrainingMetaGraph(meta_def));
      graph_def = std::move(meta.graph_def);
      if (meta.has_saver_def) saver_ = meta.saver_def;
      train_ops_ = meta.train_op_names;
      for (const MetaGraphVariable& v : meta.variables) {
        init_ops_.push_back(NodeOf(v.initializer_name));
      }
    } else {
      GR_ASSIGN_OR_RETURN(graph_def, ReadGraphDefFile(graph));
    }
    return NewRunSession(args, graph_def);
  }

  std::shared_ptr<RunSession> Get() const {
    absl::MutexLock lock(&mu_);
    if (run_ == nullptr) throw StatusError(absl::FailedPreconditionError("the session is closed"));
    return run_;
  }

  // The dtype of the tensor `name` names (a fed placeholder's, or any
  // node's output as its op declares it), DT_INVALID when unknown.
  DataType FedDtype(const std::string& tensor) const {
    // Every run asks for each feed: the answer is worked out once per name.
    {
      absl::MutexLock lock(&dtypes_mu_);
      auto known = fed_dtypes_.find(tensor);
      if (known != fed_dtypes_.end()) return known->second;
    }
    const DataType dtype = ComputeFedDtype(tensor);
    absl::MutexLock lock(&dtypes_mu_);
    fed_dtypes_.emplace(tensor, dtype);
    return dtype;
  }

  DataType ComputeFedDtype(const std::string& tensor) const {
    absl::StatusOr<TensorId> id = ParseTensorId(tensor, /*allow_internal_names=*/true);
    if (!id.ok() || id->IsControl()) return DT_INVALID;
    auto it = nodes_.find(id->node);
    if (it == nodes_.end()) return DT_INVALID;
    const int index = id->index;
    const NodeDef& n = *it->second;
    const OpDef* op = OpRegistry::Global()->Find(n.op());
    if (op == nullptr) return DT_INVALID;
    std::vector<DataType> inputs, outputs;
    if (!ComputeArgTypes(*op, AttrSlice(&n.attr(), op), &inputs, &outputs).ok()) return DT_INVALID;
    if (index < 0 || index >= static_cast<int>(outputs.size())) return DT_INVALID;
    return BaseType(outputs[index]);
  }

  mutable absl::Mutex mu_;
  std::shared_ptr<RunSession> run_;
  mutable absl::Mutex dtypes_mu_;
  mutable absl::flat_hash_map<std::string, DataType> fed_dtypes_ ABSL_GUARDED_BY(dtypes_mu_);
  // The session's graph by node name: pointers into run_->graph, used only
  // while a call holds run_.
  absl::flat_hash_map<std::string, const NodeDef*> nodes_;
  std::optional<SaverDef> saver_;
  std::vector<std::string> train_ops_, init_ops_;
};

class PySavedModel {
 public:
  PySavedModel(const std::string& dir, const std::vector<std::string>& tags,
               const py::dict& options)
      : dir_(dir) {
    saved_ = Unwrap(ReadSavedModelDir(dir));
    meta_ = Unwrap(FindMetaGraph(saved_, tags, dir));
    RunCommandArgs args = ArgsFromOptions(options);
    args.graph = dir;
    absl::Status s;
    {
      py::gil_scoped_release release;
      absl::StatusOr<RunSession> made = NewRunSession(args, meta_->graph_def());
      if (made.ok()) {
        run_ = *std::move(made);
        s = RestoreAndInitialize(run_.session.get(), *meta_, dir);
      } else {
        s = made.status();
      }
    }
    Check(s);
  }

  // key -> {"inputs": {key: (dtype, shape or None)}, "outputs": {...}}.
  py::dict Signatures() const {
    auto describe = [](const google::protobuf::Map<std::string, TensorInfo>& infos) {
      py::dict out;
      for (const auto& [key, info] : infos) {
        py::object shape = py::none();
        if (info.has_tensor_shape() && !info.tensor_shape().unknown_rank()) {
          std::vector<int64_t> dims;
          for (const auto& d : info.tensor_shape().dim()) dims.push_back(d.size());
          shape = py::cast(dims);
        }
        out[py::str(key)] = py::make_tuple(DataTypeString(info.dtype()), shape);
      }
      return out;
    };
    py::dict out;
    for (const auto& [key, sig] : CallableSignatures(*meta_)) {
      py::dict d;
      d["inputs"] = describe(sig->inputs());
      d["outputs"] = describe(sig->outputs());
      d["method_name"] = sig->method_name();
      out[py::str(key)] = d;
    }
    return out;
  }

  py::dict Call(const std::string& key, const std::vector<std::pair<std::string, py::object>>& inputs,
                const std::vector<std::string>& output_keys) {
    const SignatureDef* sig = Unwrap(FindSignature(*meta_, key));
    std::vector<std::pair<std::string, Tensor>> in;
    for (const auto& [name, value] : inputs) {
      auto info = sig->inputs().find(name);
      const DataType want = info == sig->inputs().end() ? DT_INVALID : info->second.dtype();
      in.emplace_back(name, Unwrap(ToTensor(value, want, absl::StrCat("input '", name, "'"))));
    }
    SignatureCall call = Unwrap(MakeSignatureCall(*sig, key, in, output_keys));
    in.clear();
    std::vector<Tensor> out = RunStep(run_.session.get(), std::move(call.feeds), call.fetches, {},
                                      false, 0, nullptr);
    py::dict result;
    for (size_t i = 0; i < out.size(); ++i) {
      result[py::str(call.output_keys[i])] =
          ToArray(std::move(out[i]), absl::StrCat("output '", call.output_keys[i], "'"));
    }
    return result;
  }

  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
  SavedModel saved_;
  const MetaGraphDef* meta_ = nullptr;  // in saved_
  RunSession run_;
};

}  // namespace

void RegisterGpus(py::module_& m);  // gpus.cc

void RegisterModule(py::module_& m) {
  m.doc() = "graphrun's native module; use the graphrun package.";
  RegisterStatusTranslator();
  py::class_<PySession>(m, "Session")
      .def(py::init<const std::string&, bool, const py::dict&>(), py::arg("graph"),
           py::arg("is_bytes"), py::arg("options"))
      .def("run", &PySession::Run, py::arg("feeds"), py::arg("fetches"), py::arg("targets"),
           py::arg("trace") = false, py::arg("timeout_ms") = 0)
      .def("feed_dtype", &PySession::FeedDtype)
      .def("devices", &PySession::Devices)
      .def("save", &PySession::Save, py::arg("prefix"),
           py::arg("dropped") = std::vector<std::string>())
      .def("restore", &PySession::Restore)
      .def("meta_info", &PySession::MetaInfo)
      .def("has_node", &PySession::HasNode)
      .def("close", &PySession::Close);
  py::class_<PySavedModel>(m, "SavedModel")
      .def(py::init<const std::string&, const std::vector<std::string>&, const py::dict&>())
      .def("signatures", &PySavedModel::Signatures)
      .def("call", &PySavedModel::Call)
      .def_property_readonly("dir", &PySavedModel::dir);
  m.def("set_worker_program", &SetLocalWorkerProgram);
  m.def("resolve_checkpoint", [](const std::string& p) { return Unwrap(ResolveCheckpointPrefix(p)); });
  m.def("remove_checkpoint", &RemoveCheckpoint);
  m.def("checkpoint_directory", &CheckpointDirectory);
  m.def("option_names", &OptionNames);
  RegisterGpus(m);
}

}  // namespace python
}  // namespace graphrun

PYBIND11_MODULE(_graphrun, m) { graphrun::python::RegisterModule(m); }
