// graphrun.gpus() and graphrun.select_gpus(): the GPU inventory (NVML, else
// the CUDA runtime) with each GPU's claim, and the idle-GPU choice of
// placer/gpu_select.h, claimed for the life of the process.
#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "placer/gpu_select.h"
#include "pybind11/pybind11.h"
#include "pybind11/stl.h"
#include "python/status.h"
#include "runtime/gpu/gpu_info_source.h"

namespace graphrun {
namespace python {
namespace py = pybind11;

namespace {

// A fake inventory from Python: a list of dicts with GpuStatus's fields.
std::unique_ptr<placer::GpuInfoSource> Source(const py::object& fake) {
  if (fake.is_none()) return DefaultGpuInfoSource();
  std::vector<placer::GpuStatus> gpus;
  for (py::handle item : fake) {
    py::dict d = py::reinterpret_borrow<py::dict>(item);
    placer::GpuStatus g;
    g.index = d["index"].cast<int>();
    g.name = d.contains("name") ? d["name"].cast<std::string>() : "fake GPU";
    g.uuid = d.contains("uuid") ? d["uuid"].cast<std::string>() : "";
    g.total_memory = d["total_memory"].cast<int64_t>();
    g.free_memory = d["free_memory"].cast<int64_t>();
    g.utilization_percent = d.contains("utilization_percent") ? d["utilization_percent"].cast<int>() : -1;
    g.other_processes = d.contains("other_processes") ? d["other_processes"].cast<int>() : -1;
    gpus.push_back(std::move(g));
  }
  return std::make_unique<placer::FakeGpuInfoSource>(std::move(gpus));
}

std::unique_ptr<placer::GpuClaims> Claims(const std::string& dir) {
  return dir.empty() ? std::make_unique<placer::GpuClaims>()
                     : std::make_unique<placer::GpuClaims>(dir);
}

// The chosen GPUs' claims, held while the object lives.
struct GpuSelection {
  std::unique_ptr<placer::GpuClaims> claims;
  std::vector<int> selected;
  std::vector<std::string> reasons;
};

}  // namespace

void RegisterGpus(py::module_& m) {
  // (list of dicts, why none): every GPU of the host, sorted by index.
  m.def(
      "gpus",
      [](const py::object& fake, const std::string& claims_dir) {
        std::unique_ptr<placer::GpuInfoSource> source = Source(fake);
        absl::StatusOr<std::vector<placer::GpuStatus>> found;
        std::vector<absl::StatusOr<bool>> claimed;
        {
          // NVML or CUDA may take a while to answer.
          py::gil_scoped_release release;
          found = source->Query();
          if (found.ok()) {
            std::sort(found->begin(), found->end(),
                      [](const auto& a, const auto& b) { return a.index < b.index; });
            std::unique_ptr<placer::GpuClaims> claims = Claims(claims_dir);
            for (const placer::GpuStatus& g : *found) claimed.push_back(claims->ClaimedByOther(g));
          }
        }
        py::list out;
        if (!found.ok()) return py::make_tuple(out, std::string(found.status().message()));
        for (size_t i = 0; i < found->size(); ++i) {
          const placer::GpuStatus& g = (*found)[i];
          py::dict d;
          d["index"] = g.index;
          d["name"] = g.name;
          d["uuid"] = g.uuid;
          d["total_memory"] = g.total_memory;
          d["free_memory"] = g.free_memory;
          d["utilization_percent"] =
              g.utilization_percent < 0 ? py::object(py::none()) : py::cast(g.utilization_percent);
          d["other_processes"] =
              g.other_processes < 0 ? py::object(py::none()) : py::cast(g.other_processes);
          d["claimed"] = claimed[i].ok() ? py::cast(*claimed[i]) : py::object(py::none());
          out.append(std::move(d));
        }
        return py::make_tuple(out, std::string());
      },
      py::arg("fake") = py::none(), py::arg("claims_dir") = "");

  py::class_<GpuSelection>(m, "GpuSelection")
      .def_readonly("selected", &GpuSelection::selected)
      .def_readonly("reasons", &GpuSelection::reasons)
      .def("release", [](GpuSelection& s) { s.claims.reset(); });

  m.def(
      "select_gpus",
      [](int n, const std::string& gpus, const py::object& fake, const std::string& claims_dir) {
        placer::GpuSelectOptions options;
        options.gpus = gpus;
        options.num_gpus = gpus == "auto" ? n : -1;  // a count only picks among idle GPUs
        if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES")) {
          options.has_cuda_visible_devices = true;
          options.cuda_visible_devices = v;
        }
        auto selection = std::make_unique<GpuSelection>();
        selection->claims = Claims(claims_dir);
        std::unique_ptr<placer::GpuInfoSource> source = Source(fake);
        absl::StatusOr<placer::GpuChoice> choice;
        {
          py::gil_scoped_release release;
          choice = placer::SelectGpus(options, source.get(), selection->claims.get());
        }
        Check(choice.status());
        selection->selected = choice->selected;
        selection->reasons = choice->reasons;
        return selection;
      },
      py::arg("n"), py::arg("gpus") = "auto", py::arg("fake") = py::none(),
      py::arg("claims_dir") = "");
}

}  // namespace python
}  // namespace graphrun
