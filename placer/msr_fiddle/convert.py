#!/usr/bin/env python3
"""Converts msr-fiddle/dnn-partitioning inputs into graphrun's formats.

The inputs (github.com/msr-fiddle/dnn-partitioning, MIT licence, see
LICENSE in this directory) describe DNN operator or layer graphs for device
placement: per node a CPU and an accelerator time (ms), whether the
accelerator supports it, the bytes it takes on an accelerator, and a
colocation class; per edge the time (ms) to move the producer's output
between an accelerator and CPU memory; an accelerator memory limit and the
numbers of accelerators and CPUs.

For each input NAME=PATH this writes, into --out:
  NAME.pbtxt         GraphDef: node "n<id>"; a node without inputs is a
                     scalar Const, any other an AddN over its inputs (only
                     the structure matters); colocation classes become
                     `_class: "loc:@n<first id of the class>"`.
  NAME.costs.json    cost profile (placer/COST_PROFILE.md): compute_us on
                     "CPU" and "GPU" (1000 x the ms figures); output_bytes
                     from the edge time at 2 GiB/s (the inputs' transfer
                     rate); persistent_bytes = the node's accelerator size
                     (the placer adds live outputs on top of it);
                     "unsupported": true on GPU where the accelerator
                     cannot run the node.
  NAME.cluster.json  cluster (placer/CLUSTER_FORMAT.md): maxCPUs CPU
                     devices with unlimited memory sharing memory with
                     each other, maxFPGAs GPU devices with maxSizePerFPGA
                     bytes; GPU<->CPU 2 GiB/s, GPU<->GPU 1 GiB/s (through
                     host memory: out of one, into the other).
and updates manifest.json with per-model figures computed here from the
input (node and edge counts, the memory limit, the sums of CPU and GPU
times, the total size) that the tests check the converted files against.

Usage:
  convert.py --out placer/msr_fiddle \\
      bert3_inference=latency-inputs/OperatorGraphs/bert_l-3_inference.json ...
  convert.py --out placer/msr_fiddle --git-dir /path/to/dnn-partitioning/.git \\
      bert3_inference=latency-inputs/OperatorGraphs/bert_l-3_inference.json ...
"""
import argparse
import collections
import json
import os
import subprocess
import sys

# Transfer rate implied by every edge of the operator-level inputs
# (cost ms = bytes / 2^31 * 1000).
BYTES_PER_SECOND = float(1 << 31)
DEVICE_PREFIX = "/job:localhost/replica:0/task:0/device:"


def load(path, git_dir):
    if git_dir:
        text = subprocess.run(["git", "--git-dir", git_dir, "show", "HEAD:" + path],
                              check=True, capture_output=True, text=True).stdout
    else:
        with open(path) as f:
            text = f.read()
    return json.loads(text)


def number(x):
    """Compact JSON number: integers without a fraction, else 9 digits."""
    if float(x) == int(x):
        return str(int(x))
    return "%.9g" % x


def convert(name, source, data, out_dir):
    nodes = sorted(data["nodes"], key=lambda n: n["id"])
    ids = {n["id"] for n in nodes}
    inputs = collections.defaultdict(list)
    out_cost = collections.defaultdict(float)
    for e in data["edges"]:
        u, v = e["sourceId"], e["destId"]
        if u not in ids or v not in ids:
            sys.exit("%s: edge %d -> %d names a missing node" % (source, u, v))
        inputs[v].append(u)
        out_cost[u] = max(out_cost[u], float(e["cost"]))
    classes = collections.defaultdict(list)
    for n in nodes:
        if "colorClass" in n:
            classes[n["colorClass"]].append(n["id"])
    leader = {}
    for members in classes.values():
        if len(members) > 1:
            for m in members:
                leader[m] = min(members)

    graph = []
    for n in nodes:
        nid = n["id"]
        attrs = ""
        if nid in leader and leader[nid] != nid:
            attrs = ' attr{key:"_class" value{list{s:"loc:@n%d"}}}' % leader[nid]
        if not inputs[nid]:
            graph.append(
                'node{name:"n%d" op:"Const"%s attr{key:"dtype" value{type:DT_FLOAT}} '
                'attr{key:"value" value{tensor{dtype:DT_FLOAT tensor_shape{} '
                'float_val:0}}}}' % (nid, attrs))
        else:
            ins = " ".join('input:"n%d"' % u for u in inputs[nid])
            graph.append(
                'node{name:"n%d" op:"AddN" %s%s attr{key:"N" value{i:%d}} '
                'attr{key:"T" value{type:DT_FLOAT}}}' % (nid, ins, attrs, len(inputs[nid])))
    with open(os.path.join(out_dir, name + ".pbtxt"), "w") as f:
        f.write("# %s from msr-fiddle/dnn-partitioning %s (MIT licence, see LICENSE);\n"
                "# converted by placer/msr_fiddle/convert.py.\n" % (name, source))
        f.write("\n".join(graph) + "\n")

    entries = []
    for n in nodes:
        nid = n["id"]
        out_bytes = int(round(out_cost[nid] / 1000.0 * BYTES_PER_SECOND))
        size = int(round(float(n.get("size", 0))))
        # The inputs' memory model: a node takes `size` bytes on an
        # accelerator for the whole step. The placer counts outputs while
        # they are live on top of that, so a plan that fits here fits the
        # inputs' limit too.
        held = size
        cpu = '{"node":"n%d","device":"CPU","compute_us":%s,"output_bytes":[%d]' % (
            nid, number(float(n["cpuLatency"]) * 1000), out_bytes)
        if held:
            cpu += ',"persistent_bytes":%d' % held
        entries.append(cpu + "}")
        if n["supportedOnFpga"]:
            entries.append('{"node":"n%d","device":"GPU","compute_us":%s}' % (
                nid, number(float(n["fpgaLatency"]) * 1000)))
        else:
            entries.append('{"node":"n%d","device":"GPU","unsupported":true}' % nid)
    with open(os.path.join(out_dir, name + ".costs.json"), "w") as f:
        f.write('{"description":"%s from msr-fiddle/dnn-partitioning %s (MIT licence, '
                'see LICENSE); times in us, bytes from edge times at 2 GiB/s",\n'
                '"nodes":[\n' % (name, source))
        f.write(",\n".join(entries) + "]}\n")

    gpus, cpus = int(data["maxFPGAs"]), max(1, int(data["maxCPUs"]))
    limit = int(data["maxSizePerFPGA"])
    devices = ['{"name": "%sCPU:%d", "memory_bytes": 0}' % (DEVICE_PREFIX, i)
               for i in range(cpus)]
    devices += ['{"name": "%sGPU:%d", "memory_bytes": %d}' % (DEVICE_PREFIX, i, limit)
                for i in range(gpus)]
    with open(os.path.join(out_dir, name + ".cluster.json"), "w") as f:
        f.write('{"devices": [\n  %s\n],\n' % ",\n  ".join(devices))
        f.write(' "links": [\n'
                '  {"src": "GPU", "dst": "CPU", "latency_us": 0, "bandwidth": %d},\n'
                '  {"src": "GPU", "dst": "GPU", "latency_us": 0, "bandwidth": %d}\n'
                ']}\n' % (int(BYTES_PER_SECOND), int(BYTES_PER_SECOND) // 2))

    return {
        "source": source,
        "nodes": len(nodes),
        "edges": len(data["edges"]),
        "gpus": gpus,
        "cpus": cpus,
        "memory_limit_bytes": limit,
        "sum_cpu_ms": round(sum(float(n["cpuLatency"]) for n in nodes), 6),
        "sum_gpu_ms": round(sum(float(n["fpgaLatency"]) for n in nodes
                                if n["supportedOnFpga"]), 6),
        "total_size_bytes": sum(int(round(float(n.get("size", 0)))) for n in nodes),
        "colocation_groups": sum(1 for m in classes.values() if len(m) > 1),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True, help="output directory")
    parser.add_argument("--git-dir", help="read inputs from HEAD of this git directory")
    parser.add_argument("inputs", nargs="+", help="NAME=PATH")
    args = parser.parse_args()
    manifest_path = os.path.join(args.out, "manifest.json")
    manifest = {}
    if os.path.exists(manifest_path):
        with open(manifest_path) as f:
            manifest = json.load(f)
    for item in args.inputs:
        name, _, path = item.partition("=")
        if not name or not path:
            sys.exit("inputs are NAME=PATH, got %r" % item)
        manifest[name] = convert(name, path, load(path, args.git_dir), args.out)
        print("%s: %d nodes, %d GPUs of %.0f MiB" % (
            name, manifest[name]["nodes"], manifest[name]["gpus"],
            manifest[name]["memory_limit_bytes"] / 2**20))
    with open(manifest_path, "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
