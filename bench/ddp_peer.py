"""PyTorch DistributedDataParallel peer of bench/replicas_vs_ddp.py: the MLP
784-256-256-10 (or the small CNN) with Adam(lr=1e-3), 2 processes on
loopback (gloo, torch.set_num_threads(1) each), each fed its half of the
batch; a step is zero_grad, forward, cross-entropy, backward (DDP's
bucketed allreduce of the gradients), step, loss.item(). Prints the median
step time in ms of the slower rank over STEPS timed steps after 10
warm-up steps; exits 1 when PyTorch is not installed.

  python bench/ddp_peer.py mlp|cnn X.npy Y.npy STEPS [RANKS]
"""
import os
import socket
import statistics
import sys
import time

import numpy as np

try:
    import torch
    import torch.distributed as dist
    import torch.multiprocessing as mp
except ImportError:
    sys.exit(1)


def net_for(model):
    nn = torch.nn
    if model == "mlp":
        return nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                             nn.Linear(256, 10))
    return nn.Sequential(nn.Conv2d(1, 8, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(8, 16, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(784, 10))


def rank_main(rank, ranks, port, model, x_path, y_path, steps, queue, warmup=10):
    torch.set_num_threads(1)
    os.environ["GLOO_SOCKET_IFNAME"] = "lo"
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" % port, rank=rank,
                            world_size=ranks)
    torch.manual_seed(0)
    x, y = np.load(x_path), np.load(y_path)
    if model == "cnn":
        x = np.ascontiguousarray(x.transpose(0, 3, 1, 2))
    share = x.shape[0] // ranks
    xt = torch.from_numpy(x[rank * share:(rank + 1) * share])
    yt = torch.from_numpy(y[rank * share:(rank + 1) * share])
    net = torch.nn.parallel.DistributedDataParallel(net_for(model))
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    times = []
    for i in range(warmup + steps):
        t0 = time.perf_counter()
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(net(xt), yt)
        loss.backward()
        opt.step()
        loss.item()
        if i >= warmup:
            times.append((time.perf_counter() - t0) * 1e3)
    queue.put(statistics.median(times))
    dist.barrier()
    dist.destroy_process_group()


def main(model, x_path, y_path, steps, ranks=2):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    procs = [ctx.Process(target=rank_main, args=(r, ranks, port, model, x_path, y_path, steps,
                                                 queue)) for r in range(ranks)]
    for p in procs:
        p.start()
    medians = [queue.get() for _ in procs]
    for p in procs:
        p.join()
    print("%.4f" % max(medians))


if __name__ == "__main__":
    if len(sys.argv) not in (5, 6):
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]),
         int(sys.argv[5]) if len(sys.argv) == 6 else 2)
