"""The ring allreduce next to PyTorch's gloo allreduce and a plain TCP
stream, between N processes on loopback, in one run.

For each size: bench/allreduce_benchmark (graphrun's ring, float32 and fp16
on the wire, the mean); torch.distributed's gloo all_reduce of a float32
tensor (and of a float16 one) between N processes; and a plain TCP stream
between two processes (sendall of the same bytes). Bus bandwidth,
2(n-1)/n * bytes / time, GB/s; medians of --reps.

  ./bazelw build //bench:allreduce_benchmark
  /work/tfvenv/bin/python bench/allreduce_vs_gloo.py [--ranks 2] [--sizes_mb 1,16,64,256]
"""
import argparse
import os
import socket
import statistics
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(ROOT, "bazel-bin", "bench", "allreduce_benchmark")


def gloo_worker(rank, n, port, sizes_mb, reps, out, dtype_name):
    import torch  # pylint: disable=g-import-not-at-top
    import torch.distributed as dist  # pylint: disable=g-import-not-at-top
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" % port, rank=rank,
                            world_size=n)
    dtype = getattr(torch, dtype_name)
    for mb in sizes_mb:
        t = torch.ones(int(mb * (1 << 20) / 4), dtype=dtype)
        times = []
        for i in range(reps + 1):
            dist.barrier()
            t0 = time.perf_counter()
            dist.all_reduce(t)
            if i > 0:
                times.append(time.perf_counter() - t0)
        if rank == 0:
            out.put((mb, statistics.median(times)))
    dist.destroy_process_group()


def gloo(n, sizes_mb, reps, dtype_name):
    import torch.multiprocessing as mp  # pylint: disable=g-import-not-at-top
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    procs = [ctx.Process(target=gloo_worker, args=(r, n, port, sizes_mb, reps, q, dtype_name))
             for r in range(n)]
    for p in procs:
        p.start()
    got = dict(q.get() for _ in sizes_mb)
    for p in procs:
        p.join()
    return got


def tcp_stream(mb, reps):
    """Seconds to move mb MB from one process to another over loopback."""
    code = r"""
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
buf = bytearray(1 << 20)
while True:
    n = s.recv_into(buf)
    if not n: break
"""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    p = subprocess.Popen([sys.executable, "-c", code, str(srv.getsockname()[1])])
    conn, _ = srv.accept()
    data = bytes(int(mb * (1 << 20)))
    times = []
    for i in range(reps + 1):
        t0 = time.perf_counter()
        conn.sendall(data)
        if i > 0:
            times.append(time.perf_counter() - t0)
    conn.close()
    p.wait()
    srv.close()
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--sizes_mb", default="1,16,64,256")
    ap.add_argument("--reps", type=int, default=7)
    args = ap.parse_args()
    sizes = [float(s) for s in args.sizes_mb.split(",")]
    n = args.ranks
    out = subprocess.run([BENCH, "--ranks=%d" % n, "--sizes_mb=" + args.sizes_mb,
                          "--reps=%d" % args.reps], capture_output=True, text=True, check=True)
    ring = {}
    for line in out.stdout.splitlines()[1:]:
        f = line.split()
        ring[float(f[0])] = (float(f[2]), float(f[3]), float(f[4]), float(f[5]), float(f[6]),
                             float(f[7]))
    g32 = gloo(n, sizes, args.reps, "float32")
    g16 = gloo(n, sizes, args.reps, "float16")
    print("| MB | ranks | plain TCP GB/s | gloo fp32 busbw | gloo fp16 busbw | graphrun ring busbw "
          "| graphrun fp16 wire busbw | graphrun ms | graphrun fp16 ms | ring / gloo "
          "| graphrun over gloo (C++) busbw | its ms |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for mb in sizes:
        nbytes = mb * (1 << 20)
        bus = 2.0 * (n - 1) / n * nbytes
        tcp = nbytes / tcp_stream(mb, args.reps) / 1e9
        r = ring[mb]
        gb32 = bus / g32[mb] / 1e9
        gb16 = bus / g16[mb] / 1e9  # the same values as float16: as float32 bytes per second
        print("| %g | %d | %.2f | %.2f | %.2f | %.2f | %.2f | %.3f | %.3f | %.2f | %.2f | %.3f |" %
              (mb, n, tcp, gb32, gb16, r[0], r[1], r[2], r[3], r[0] / gb32, r[4], r[5]),
              flush=True)


if __name__ == "__main__":
    main()
