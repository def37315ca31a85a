"""cc_proto: C++ (and optionally gRPC) code from .proto files with the system protoc.

Bazel's native proto rules need a @com_google_protobuf repository; the
machine's protoc and libprotobuf (Debian) are used instead, so the build stays
offline and the generated code matches the runtime library exactly.
"""

def _source_root():
    """Where this repository's sources are, relative to the execution root.

    "." in graphrun's own workspace; "external/graphrun" when another
    workspace uses graphrun as an external repository (its generated files
    then go to $(GENDIR)/external/graphrun as well).
    """
    repo = native.repository_name()  # "@" in the main workspace
    return "." if repo == "@" else "external/" + repo[1:]

def cc_proto(name, srcs, deps = [], grpc = False, visibility = None):
    hdrs = [s.replace(".proto", ".pb.h") for s in srcs]
    ccs = [s.replace(".proto", ".pb.cc") for s in srcs]
    outs = hdrs + ccs
    root = _source_root()
    out_dir = "$(GENDIR)" if root == "." else "$(GENDIR)/" + root
    grpc_flags = ""
    if grpc:
        outs += [s.replace(".proto", ".grpc.pb.h") for s in srcs]
        outs += [s.replace(".proto", ".grpc.pb.cc") for s in srcs]
        grpc_flags = "--grpc_out=%s --plugin=protoc-gen-grpc=$$(command -v grpc_cpp_plugin) " % out_dir
    native.genrule(
        name = name + "_gen",
        srcs = srcs + [d + "_srcs" for d in deps],
        outs = outs,
        cmd = "protoc -I%s --cpp_out=%s " % (root, out_dir) + grpc_flags +
              " ".join(["$(location %s)" % s for s in srcs]),
    )
    native.filegroup(
        name = name + "_srcs",
        srcs = srcs,
        visibility = visibility,
    )
    native.cc_library(
        name = name,
        srcs = [c for c in outs if c.endswith(".cc")],
        hdrs = [h for h in outs if h.endswith(".h")],
        deps = deps + ["@system//:protobuf"] + (["@system//:grpc"] if grpc else []),
        visibility = visibility,
    )
