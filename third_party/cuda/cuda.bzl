"""cuda_library: compiles .cu files with nvcc (when the toolkit is present)."""

load("@local_cuda//:defs.bzl", "cuda_enabled", "cuda_root")

# Hopper (H100/H200) natively, plus PTX for newer GPUs to JIT from.
_GENCODE = [
    "-gencode=arch=compute_90,code=sm_90",
    "-gencode=arch=compute_90,code=compute_90",
]

def _source_root():
    """"." in graphrun's own workspace, "external/graphrun" when external."""
    repo = native.repository_name()  # "@" in the main workspace
    return "." if repo == "@" else "external/" + repo[1:]

def cuda_library(name, cu_srcs, hdrs = [], deps = [], cpu_srcs = [], nvcc_hdrs = [], **kwargs):
    """A cc_library whose .cu sources are compiled by nvcc.

    Without CUDA the library has only `cpu_srcs` (fallbacks that say no GPU is
    available), so dependents build either way. `nvcc_hdrs`: headers of
    other targets (in `deps`) that the .cu files include.
    """
    if not cuda_enabled:
        native.cc_library(
            name = name,
            srcs = cpu_srcs,
            hdrs = hdrs,
            deps = deps,
            **kwargs
        )
        return
    root = _source_root()
    includes = "-I. -I$(GENDIR)" if root == "." else "-I%s -I$(GENDIR)/%s" % (root, root)
    objs = []
    for src in cu_srcs:
        obj = name + "_" + src.replace("/", "_").replace(".cu", ".o")
        native.genrule(
            name = obj + "_nvcc",
            srcs = [src] + hdrs + nvcc_hdrs,
            outs = [obj],
            # 2810: nvcc takes `status = f()` for a discarded [[nodiscard]] value.
            cmd = (cuda_root + "/bin/nvcc -std=c++17 -O3 -Xcompiler -fPIC -diag-suppress 2810 " +
                   " ".join(_GENCODE) +
                   " %s -c $(location %s) -o $@" % (includes, src)),
        )
        objs.append(obj)
    native.cc_library(
        name = name,
        srcs = objs,
        hdrs = hdrs,
        deps = deps + ["@local_cuda//:cudart"],
        **kwargs
    )
