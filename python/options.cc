#include "python/options.h"

#include <algorithm>
#include <functional>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace graphrun {
namespace python {
namespace py = pybind11;

namespace {

using Setter = std::function<void(RunCommandArgs*, py::handle, const std::string&)>;

template <typename T>
T As(py::handle value, const std::string& name, const char* type) {
  // bool is an int in Python: only a real bool counts for a bool option,
  // and no bool for a number.
  const bool is_bool = PyBool_Check(value.ptr());
  if constexpr (std::is_same_v<T, bool>) {
    if (is_bool) return value.cast<bool>();
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (PyUnicode_Check(value.ptr())) return value.cast<std::string>();
    if (py::hasattr(value, "__fspath__")) {
      return py::module_::import("os").attr("fsdecode")(value).cast<std::string>();
    }
  } else if constexpr (std::is_integral_v<T>) {
    if (!is_bool && PyLong_Check(value.ptr())) {
      try {
        return value.cast<T>();
      } catch (const py::cast_error&) {
        throw py::type_error(absl::StrCat("option ", name, " is out of range"));
      }
    }
  } else {
    if (!is_bool && (PyLong_Check(value.ptr()) || PyFloat_Check(value.ptr()))) {
      return value.cast<T>();
    }
  }
  throw py::type_error(absl::StrCat("option ", name, " takes ", type, ", not ",
                                    py::str(py::type::of(value).attr("__name__")).cast<std::string>()));
}

#define GR_OPT(NAME, TYPE, TYPE_NAME)                                                   \
  {                                                                                     \
    #NAME, [](RunCommandArgs* a, py::handle v, const std::string& n) {                  \
      a->NAME = As<TYPE>(v, n, TYPE_NAME);                                              \
    }                                                                                   \
  }

const std::map<std::string, Setter>& Setters() {
  static const auto* setters = new std::map<std::string, Setter>{
      GR_OPT(cpu_devices, int, "an int"),
      GR_OPT(inter_op_threads, int, "an int"),
      GR_OPT(intra_op_threads, int, "an int"),
      GR_OPT(log_device_placement, bool, "a bool"),
      GR_OPT(allow_soft_placement, bool, "a bool"),
      GR_OPT(optimize, bool, "a bool"),
      GR_OPT(log_optimizations, bool, "a bool"),
      GR_OPT(freeze_variables, bool, "a bool"),
      GR_OPT(check_numerics, bool, "a bool"),
      GR_OPT(clear_devices, bool, "a bool"),
      GR_OPT(quiet, bool, "a bool"),
      GR_OPT(costs_file, std::string, "a path"),
      GR_OPT(cluster_file, std::string, "a path"),
      GR_OPT(local_workers, int, "an int"),
      GR_OPT(local_ps, int, "an int"),
      GR_OPT(in_process_worker, bool, "a bool"),
      GR_OPT(slurm_base_port, int, "an int"),
      GR_OPT(client_task, std::string, "a str"),
      GR_OPT(ps_placement, std::string, "a str"),
      GR_OPT(auth_token_file, std::string, "a path"),
      GR_OPT(tls_cert, std::string, "a path"),
      GR_OPT(tls_key, std::string, "a path"),
      GR_OPT(tls_ca, std::string, "a path"),
      GR_OPT(wire_compression, std::string, "a str"),
      GR_OPT(connect_timeout_s, int, "an int"),
      GR_OPT(gpus, std::string, "a str"),
      GR_OPT(num_gpus, int, "an int"),
      GR_OPT(gpu_memory_fraction, double, "a number"),
      GR_OPT(gpu_allow_growth, bool, "a bool"),
  };
  return *setters;
}

#undef GR_OPT

}  // namespace

RunCommandArgs ArgsFromOptions(const py::dict& options) {
  RunCommandArgs args;
  args.quiet = true;
  for (const auto& [key, value] : options) {
    const std::string name = py::str(key).cast<std::string>();
    auto it = Setters().find(name);
    if (it == Setters().end()) {
      throw py::type_error(absl::StrCat("unknown session option '", name, "'; the options are ",
                                        absl::StrJoin(OptionNames(), ", ")));
    }
    if (value.is_none()) continue;  // the default
    it->second(&args, value, name);
  }
  // cluster_file="TF_CONFIG" or "slurm": the launcher's environment.
  const absl::Status cluster = ResolveClusterSource(&args);
  if (!cluster.ok()) throw py::value_error(std::string(cluster.message()));
  return args;
}

std::vector<std::string> OptionNames() {
  std::vector<std::string> names;
  for (const auto& [name, setter] : Setters()) names.push_back(name);
  return names;
}

}  // namespace python
}  // namespace graphrun
