"""The PyTorch peer of bench/train_vs_tensorflow.py: the MLP 784-256-256-10
or the small CNN (NCHW) in PyTorch eager, Adam(lr=1e-3, fused=True),
torch.set_num_threads(2); a step is zero_grad, forward, cross-entropy on
the one-hot labels, backward, step, loss.item(). Prints the median step
time in ms over STEPS timed steps after 10 warm-up steps; exits 1 when
PyTorch is not installed.

  python bench/train_torch_peer.py mlp|cnn X.npy Y.npy STEPS
"""
import statistics
import sys
import time

import numpy as np

try:
    import torch
except ImportError:
    sys.exit(1)


def main(model, x_path, y_path, steps, warmup=10):
    torch.set_num_threads(2)
    torch.manual_seed(0)
    nn = torch.nn
    x, y = np.load(x_path), np.load(y_path)
    if model == "mlp":
        net = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                            nn.Linear(256, 10))
    else:
        net = nn.Sequential(nn.Conv2d(1, 8, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
                            nn.Conv2d(8, 16, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
                            nn.Flatten(), nn.Linear(784, 10))
        x = np.ascontiguousarray(x.transpose(0, 3, 1, 2))
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    opt = torch.optim.Adam(net.parameters(), lr=1e-3, fused=True)
    times = []
    for i in range(warmup + steps):
        t0 = time.perf_counter()
        opt.zero_grad()
        loss = nn.functional.cross_entropy(net(xt), yt)
        loss.backward()
        opt.step()
        loss.item()
        if i >= warmup:
            times.append((time.perf_counter() - t0) * 1e3)
    print("%.4f" % statistics.median(times))


if __name__ == "__main__":
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]))
