"""Data-parallel training at scale, from a cost model: parameter servers,
a flat ring allreduce and a hierarchical one (a ring inside each host, then
rings across the hosts), for 8-1024 workers on 10, 25 and 100 Gbit/s, with
ResNet-50- and BERT-base-sized gradients; then the same model set beside
Horovod's published scaling (ResNet-101 90 %, VGG-16 68 % on 128 servers
of 4 GPUs, 25 Gbit/s RoCE).

W workers, G per host (H = W/G hosts), S gradient bytes per step (c = 0.5
with fp16 on the wire, 1 exact), alpha the cost of one message between
hosts, B a host's network bandwidth, alpha_h and B_h the same inside a host,
gamma the optimizer's cost per byte, o the share of the exchange hidden
behind the backward pass:

  flat ring:    2(W-1) alpha + 2(W-1)/W S c / B
  hierarchical: 2(G-1) alpha_h + 2(G-1)/G S c / B_h      (reduce-scatter and
                + 2(H-1) alpha + 2(H-1)/H S c / B          all-gather in the
                                                           host, G rings of
                                                           S/G across hosts)
  step:         T_compute + (1 - o) T_exchange + S gamma

and parameter servers (bench/ps_scale_model.py's model, synchronous, one
ps task per host, the bytes balanced: f_max = 1/P). A host's G workers
share its network interface, so its crossing traffic counts once per host
in the rings (ordered host by host) and G times for the ps pulls and pushes.

Costs: alpha = 50 us and gamma from ApplyAdam on this machine, as
bench/ps_scale_model.py; inside a host alpha_h = 10 us, B_h = 10 GB/s (a
PCIe 3 x16 link); o = 0 and o = 0.7, the overlap bench/replicas_overlap.py
measured for the CNN with small buckets (67-75 %). T_compute per step is an
assumption (a batch of 64 on one Pascal-class GPU), not a measurement here:
ResNet-50 250 ms, ResNet-101 460 ms, VGG-16 490 ms, BERT-base (batch 32,
sequence 128) 350 ms. Scaling efficiency is one worker's step (T_compute +
S gamma, no exchange) over the step.

  python3 bench/allreduce_scale_model.py [--gpus_per_host 4]
"""
import argparse

ALPHA, ALPHA_HOST, B_HOST = 50e-6, 10e-6, 10e9
GAMMA = 276e-6 / (784 * 256 * 4)  # ApplyAdam per byte (bench/ps_scale_model.py)
MODELS = {  # parameters, T_compute (s)
    "ResNet-50": (25.6e6, 0.25),
    "BERT-base": (110e6, 0.35),
    "ResNet-101": (44.5e6, 0.46),
    "VGG-16": (138e6, 0.49),
}


def flat_ring(W, S, c, B):
    return 2 * (W - 1) * ALPHA + 2 * (W - 1) / W * S * c / B


def hierarchical(W, G, S, c, B):
    H = max(1, W // G)
    inside = 2 * (G - 1) * ALPHA_HOST + 2 * (G - 1) / G * S * c / B_HOST
    across = 2 * (H - 1) * ALPHA + 2 * (H - 1) / H * S * c / B if H > 1 else 0.0
    return inside + across


def parameter_servers(W, G, S, c, B):
    """Synchronous: every worker pulls S and pushes S*c; P = H ps tasks
    (one per host) hold 1/P of the bytes each; a host's G workers share
    its interface, which also carries its ps task's share of all workers'
    traffic; one averaged update per step."""
    H = max(1, W // G)
    per_host_out = G * S * c + W * S / H  # pushes out, the ps share's pulls out
    per_host_in = G * S + W * S * c / H
    return 2 * ALPHA + max(per_host_out, per_host_in) / B


def step(t_compute, exchange, o, S):
    return t_compute + (1 - o) * exchange + S * GAMMA


def efficiency(t_compute, exchange, o, S):
    return 100 * step(t_compute, 0.0, 0.0, S) / step(t_compute, exchange, o, S)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpus_per_host", type=int, default=4)
    args = ap.parse_args()
    G = args.gpus_per_host
    for name in ("ResNet-50", "BERT-base"):
        params, t_c = MODELS[name]
        S = params * 4
        print("%s (%.1f M parameters, T_compute %.0f ms), fp16 gradients, %d workers a host: "
              "scaling efficiency, no overlap / 70 %% overlap" % (name, params / 1e6, t_c * 1e3, G))
        print()
        print("| Gbit/s | workers | parameter servers | flat ring | hierarchical ring |")
        print("| --- | --- | --- | --- | --- |")
        for gbit in (10, 25, 100):
            B = gbit * 1e9 / 8
            for W in (8, 32, 128, 512, 1024):
                cells = []
                for ex in (parameter_servers(W, G, S, 0.5, B), flat_ring(W, S, 0.5, B),
                           hierarchical(W, G, S, 0.5, B)):
                    cells.append("%.0f / %.0f %%" % tuple(
                        efficiency(t_c, ex, o, S) for o in (0.0, 0.7)))
                print("| %d | %d | %s |" % (gbit, W, " | ".join(cells)))
        print()
    print("Beside Horovod's published figures (512 GPUs: 128 servers x 4 Pascal GPUs, "
          "25 Gbit/s RoCE, float32 gradients):")
    print()
    print("| model | Horovod | flat ring, no overlap / 70 % | hierarchical, no overlap / 70 % |")
    print("| --- | --- | --- | --- |")
    B = 25e9 / 8
    for name, published in (("ResNet-101", 90), ("VGG-16", 68)):
        params, t_c = MODELS[name]
        S = params * 4
        cells = []
        for ex in (flat_ring(512, S, 1.0, B), hierarchical(512, 4, S, 1.0, B)):
            cells.append("%.0f / %.0f %%" % tuple(efficiency(t_c, ex, o, S)
                                                   for o in (0.0, 0.7)))
        print("| %s | %d %% | %s |" % (name, published, " | ".join(cells)))


if __name__ == "__main__":
    main()
