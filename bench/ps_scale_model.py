"""A model of a parameter-server training step at scale, calibrated on
this machine, checked against the 1-4-process runs here, and set beside a
ring allreduce.

Per step, each of W workers pulls every variable (S bytes) from the ps
tasks and pushes its gradients back (S*c bytes: c = 0.5 with fp16
gradients, 1 exact); ps task k, holding the share f_k of the bytes, sends
W*f_k*S and receives W*f_k*S*c, and applies W updates to its share
(asynchronous training) or one averaged update (synchronous). The step:

  T = T_compute + 2*alpha*m + max(S, W*f_max*S) / B + max(S*c, W*f_max*S*c) / B
      + W*f_max*S*gamma

with alpha the cost of one message (a RecvTensor round trip), m the
messages one worker waits on in turn per direction (1: the pulls of all
ps tasks overlap), B the bandwidth of one network interface, and gamma the
update's cost per byte. Ring allreduce instead moves 2*(W-1)/W*S*c per
worker in 2*(W-1) steps, with no task carrying more than its own share:

  T_ring = T_compute + 2*(W-1)*alpha + 2*(W-1)/W*S*c / B + S*gamma

Calibration (graphrun on this machine, loopback): alpha from the step of
a scalar between two worker processes, B from one large transfer between
them, gamma from ApplyAdam's time on the MLP's largest variable, T_compute
from the one-process step. The script measures the MLP 784-256-256-10 with
Adam (bench/ps_vs_tensorflow.py's graph) on 1 worker and 1-3 ps tasks
(--ps_placement=auto), compares each with the model's prediction, then
prints predictions for 8-512 workers and 1-64 ps tasks on 10, 25 and 100
Gbit/s networks for that MLP and for a ResNet-50-sized variable set
(25.6 M float32 parameters, T_compute 250 ms per step: a batch of 64 on
one GPU of the Pascal class, an assumption, not a measurement here).

  ./bazelw build //tools:graphrun
  /work/tfvenv/bin/python bench/ps_scale_model.py [--steps 100]
"""
import argparse
import os
import statistics
import tempfile

import numpy as np
import tensorflow as tf

import train_vs_tensorflow as bench  # bench/, beside this script

v1 = tf.compat.v1


def model_s(W, P, S, f_max, c, alpha, B, gamma, t_compute, sync=False):
    """Seconds per step of a ps cluster (see the module doc)."""
    pull = max(S, W * f_max * S) / B
    push = max(S * c, W * f_max * S * c) / B
    apply = (1 if sync else W) * f_max * S * gamma
    return t_compute + 2 * alpha + pull + push + apply


def ring_s(W, S, c, alpha, B, gamma, t_compute):
    return t_compute + 2 * (W - 1) * alpha + 2 * (W - 1) / W * S * c / B + S * gamma


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=100)
    args = ap.parse_args()
    v1.disable_eager_execution()
    setter = v1.train.replica_device_setter(ps_tasks=1, worker_device="/job:worker/task:0")
    g, saver = bench.build("mlp", device_fn=setter)
    tmp = tempfile.mkdtemp(prefix="ps_model_")
    graph = os.path.join(tmp, "mlp.pb")
    with open(graph, "wb") as f:
        f.write(g.as_graph_def().SerializeToString())
    local = g.as_graph_def()
    for n in local.node:
        n.device = ""
    g_local = tf.Graph()
    with g_local.as_default():
        tf.import_graph_def(local, name="")
    ckpt = os.path.join(tmp, "init.ckpt")
    with v1.Session(graph=g_local) as s:
        s.run("init")
        s.run("save/control_dependency:0", {"save/Const:0": ckpt})
    rng = np.random.default_rng(0)
    x, y = os.path.join(tmp, "x.npy"), os.path.join(tmp, "y.npy")
    np.save(x, rng.standard_normal([64, 784]).astype(np.float32))
    np.save(y, np.eye(10, dtype=np.float32)[rng.integers(0, 10, 64)])
    params = sum(int(np.prod(v.shape.as_list())) * 4
                 for v in g.get_collection(v1.GraphKeys.TRAINABLE_VARIABLES))

    def med(*flags):
        return statistics.median(bench.graphrun_median_ms(graph, ckpt, x, y, args.steps, *flags)
                                 for _ in range(3)) / 1e3

    t_one = med("--clear_devices")
    t_worker = med("--clear_devices", "--local_workers=1")
    measured = {P: med("--local_workers=1", "--local_ps=%d" % P, "--ps_placement=auto")
                for P in (1, 2, 3)}
    # Calibration. Loopback B and alpha: the data plane's large-transfer
    # rate and the scalar round trip of README's "Several workers" table
    # (2.5 GB/s, 371 us per message), gamma: ApplyAdam on the MLP's W0
    # (802,816 floats and two slots) in the trace of the ps step, 276 us.
    B_loop, alpha_loop, gamma = 2.5e9, 371e-6, 276e-6 / (784 * 256 * 4)
    # The client -> worker step overhead of a remote worker process, beside
    # the compute: the one-worker-process step minus the one-process step.
    t_compute = t_worker
    # W0 and its slots are 75 % of the bytes: the largest ps task's share
    # cannot go below that with whole variables.
    shares = {1: 1.0, 2: 784 * 256 / (params / 4), 3: 784 * 256 / (params / 4)}
    print("MLP 784-256-256-10, Adam, %d parameter bytes; one process %.2f ms, one worker "
          "process %.2f ms" % (params, t_one * 1e3, t_worker * 1e3))
    print()
    print("| 1 worker + P ps on loopback | measured ms | model ms | model / measured |")
    print("| --- | --- | --- | --- |")
    for P, t in measured.items():
        p = model_s(1, P, params, shares[P], 0.5, alpha_loop, B_loop, gamma, t_compute)
        print("| P = %d | %.2f | %.2f | %.2f |" % (P, t * 1e3, p * 1e3, p / t))
    print()
    for name, S, t_c in (("MLP 784-256-256-10", params, t_one),
                         ("ResNet-50-sized (25.6 M parameters)", 25.6e6 * 4, 0.25)):
        print("%s: step time (ms) at 1 worker's compute %.1f ms, alpha 50 us per message, "
              "fp16 gradients, variables balanced over the ps tasks, asynchronous" %
              (name, t_c * 1e3))
        print()
        print("| Gbit/s | workers | ps 1 | ps 4 | ps 16 | ps 64 | ring allreduce |")
        print("| --- | --- | --- | --- | --- | --- | --- |")
        for gbit in (10, 25, 100):
            B = gbit * 1e9 / 8
            for W in (8, 32, 128, 512):
                cells = [model_s(W, P, S, 1.0 / P, 0.5, 50e-6, B, gamma, t_c) * 1e3
                         for P in (1, 4, 16, 64)]
                ring = ring_s(W, S, 0.5, 50e-6, B, gamma, t_c) * 1e3
                print("| %d | %d | %s | %.1f |" % (gbit, W, " | ".join("%.1f" % c for c in cells),
                                                  ring))
        print()


if __name__ == "__main__":
    main()
