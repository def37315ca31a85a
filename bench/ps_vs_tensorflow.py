"""Parameter-server training step time, graphrun next to TensorFlow's own
cluster, in one run.

The MLP 784-256-256-10 with Adam of bench/train_vs_tensorflow.py (ref
variables, a global step, batch 64) built inside TensorFlow's
replica_device_setter(ps_tasks=2): variables and slots round-robin on
/job:ps/task:0 and 1, the rest on /job:worker/task:0. Rounds alternate:

  - TensorFlow: three tf.distribute.Server on loopback (ps 0, ps 1, worker
    0, in this process, as TensorFlow's own tests do), a Session on the
    worker's target, sess.run(["train", "loss:0"]) per step;
  - TensorFlow in one process (the same graph, devices cleared);
  - graphrun: `graphrun train --local_workers=1 --local_ps=2` (three
    worker processes on loopback; gradients fp16, the default, and
    --wire_compression=none);
  - graphrun with --in_process_worker (worker 0 served from the client's
    process, as TensorFlow's session on its worker's target: two ps
    processes beside it);
  - graphrun with --ps_placement=auto (variables by bytes instead of the
    graph's round-robin pins, W0 split in parts), alone and with
    --in_process_worker;
  - graphrun in one process (--clear_devices).

Prints each round and the medians, the ratios the README quotes, and the
bytes of variables (with slots) per ps task under the graph's round-robin
pins (max/mean).

  ./bazelw build //tools:graphrun
  /work/tfvenv/bin/python bench/ps_vs_tensorflow.py [--rounds 3] [--steps 60]
"""
import argparse
import os
import re
import socket
import statistics
import subprocess
import tempfile

import numpy as np
import tensorflow as tf

import train_vs_tensorflow as bench  # bench/, beside this script

v1 = tf.compat.v1
GRAPHRUN = bench.GRAPHRUN
PS_TASKS = 2


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tf_cluster():
    spec = {"ps": ["127.0.0.1:%d" % free_port() for _ in range(PS_TASKS)],
            "worker": ["127.0.0.1:%d" % free_port()]}
    cluster = tf.train.ClusterSpec(spec)
    servers = [tf.distribute.Server(cluster, job_name=job, task_index=i, start=True)
               for job in ("ps", "worker") for i in range(len(spec[job]))]
    return servers


def bytes_per_ps_task(g):
    load = [0] * PS_TASKS
    for v in g.get_collection(v1.GraphKeys.GLOBAL_VARIABLES):
        m = re.search(r"/job:ps/task:(\d+)", v.op.device)
        if m:
            load[int(m.group(1))] += v.dtype.base_dtype.size * int(np.prod(v.shape.as_list()))
    return load


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=60)
    args = ap.parse_args()
    v1.disable_eager_execution()
    setter = v1.train.replica_device_setter(ps_tasks=PS_TASKS,
                                            worker_device="/job:worker/task:0")
    g, saver = bench.build("mlp", device_fn=setter)
    servers = tf_cluster()
    worker = servers[-1]
    tmp = tempfile.mkdtemp(prefix="ps_bench_")
    graph_path = os.path.join(tmp, "mlp_ps.pb")
    with open(graph_path, "wb") as f:
        f.write(g.as_graph_def().SerializeToString())
    # The same graph without device pins, for TensorFlow in one process.
    local_def = g.as_graph_def()
    for n in local_def.node:
        n.device = ""
    g_local = tf.Graph()
    with g_local.as_default():
        tf.import_graph_def(local_def, name="")
    ckpt = os.path.join(tmp, "mlp_init.ckpt")
    with v1.Session(worker.target, graph=g) as s:
        s.run(g.get_operation_by_name("init"))
        saver.save(s, ckpt, write_meta_graph=False, write_state=False)
    rng = np.random.default_rng(0)
    x = rng.standard_normal([64, 784]).astype(np.float32)
    y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 64)]
    x_path, y_path = os.path.join(tmp, "x.npy"), os.path.join(tmp, "y.npy")
    np.save(x_path, x)
    np.save(y_path, y)
    feeds = {"x:0": x, "y:0": y}
    cols = {k: [] for k in ("tf_ps", "tf_one", "gr_ps", "gr_ps_inproc", "gr_ps_none", "gr_ps_auto",
                            "gr_ps_auto_inproc", "gr_one")}
    for r in range(args.rounds):
        cols["gr_ps"].append(bench.graphrun_median_ms(graph_path, ckpt, x_path, y_path, args.steps,
                                                "--local_workers=1", "--local_ps=2"))
        cols["gr_ps_inproc"].append(bench.graphrun_median_ms(
            graph_path, ckpt, x_path, y_path, args.steps, "--local_workers=1", "--local_ps=2",
            "--in_process_worker"))
        cols["gr_ps_none"].append(bench.graphrun_median_ms(
            graph_path, ckpt, x_path, y_path, args.steps, "--local_workers=1", "--local_ps=2",
            "--wire_compression=none"))
        cols["gr_ps_auto"].append(bench.graphrun_median_ms(
            graph_path, ckpt, x_path, y_path, args.steps, "--local_workers=1", "--local_ps=2",
            "--ps_placement=auto"))
        cols["gr_ps_auto_inproc"].append(bench.graphrun_median_ms(
            graph_path, ckpt, x_path, y_path, args.steps, "--local_workers=1", "--local_ps=2",
            "--ps_placement=auto", "--in_process_worker"))
        cols["gr_one"].append(bench.graphrun_median_ms(graph_path, ckpt, x_path, y_path, args.steps,
                                                 "--clear_devices"))
        cols["tf_ps"].append(bench.tf_median_ms(g, ckpt, feeds, args.steps, target=worker.target))
        cols["tf_one"].append(bench.tf_median_ms(g_local, ckpt, feeds, args.steps))
        print("round %d: " % (r + 1) + ", ".join("%s %.3f ms" % (k, v[-1])
                                                  for k, v in cols.items()), flush=True)
    m = {k: statistics.median(v) for k, v in cols.items()}
    load = bytes_per_ps_task(g)
    print()
    print("| MLP 784-256-256-10, Adam, batch 64, 2 ps + 1 worker on loopback | ms/step |")
    print("| --- | --- |")
    print("| TensorFlow, its gRPC cluster (3 servers) | %.3f |" % m["tf_ps"])
    print("| TensorFlow, one process | %.3f |" % m["tf_one"])
    print("| graphrun, 3 worker processes, gradients fp16 (default) | %.3f |" % m["gr_ps"])
    print("| graphrun, worker 0 in the client's process (--in_process_worker) | %.3f |" %
          m["gr_ps_inproc"])
    print("| graphrun, 3 worker processes, --wire_compression=none | %.3f |" % m["gr_ps_none"])
    print("| graphrun, 3 worker processes, --ps_placement=auto | %.3f |" % m["gr_ps_auto"])
    print("| graphrun, --ps_placement=auto --in_process_worker | %.3f |" % m["gr_ps_auto_inproc"])
    print("| graphrun, one process | %.3f |" % m["gr_one"])
    print()
    print("graphrun ps / TensorFlow ps: %.2f (goal <= 0.3)" % (m["gr_ps"] / m["tf_ps"]))
    print("graphrun ps / graphrun one process: %.2f (goal <= 2)" % (m["gr_ps"] / m["gr_one"]))
    print("graphrun ps, in-process worker / TensorFlow ps: %.2f, / graphrun one process: %.2f" %
          (m["gr_ps_inproc"] / m["tf_ps"], m["gr_ps_inproc"] / m["gr_one"]))
    print("variable bytes per ps task (round-robin pins, with slots): %s, max/mean %.2f" %
          (load, max(load) / (sum(load) / len(load))))
    out = subprocess.run(
        [GRAPHRUN, "train", graph_path, "--restore", ckpt, "--train", "train", "--steps", "0",
         "--local_workers=1", "--local_ps=2", "--ps_placement=auto", "--log_device_placement"],
        capture_output=True, text=True, check=True)
    line = [l for l in (out.stdout + out.stderr).splitlines()
            if l.startswith("ps placement: variable bytes per ps task")]
    print("graphrun --ps_placement=auto: " + (line[0] if line else "(no report)"))


if __name__ == "__main__":
    main()
