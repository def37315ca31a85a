"""A TensorFlow SyncReplicasOptimizer graph (2 replicas to aggregate) run by
graphrun as TensorFlow ran it (tests/fixtures/sync_replicas): per step two
threads run the two workers' train_op, each waiting in the token queue,
while the chief's sync_op takes the averaged gradients from the
accumulators, applies them and releases the workers. The workers' losses,
the variables and the global step are TensorFlow's."""

import os
import threading
import unittest

import numpy as np

import graphrun

F = "tests/fixtures/sync_replicas"


def load(name):
    return np.load(os.path.join(F, name))


class SyncReplicasTest(unittest.TestCase):

    def test_two_workers_and_the_chief(self):
        names = {}
        with open(os.path.join(F, "sync_mlp_names.txt")) as f:
            for line in f:
                key, *values = line.split()
                names[key] = values
        sess = graphrun.Session(os.path.join(F, "sync_mlp.pbtxt"))
        for op in names["init"]:
            sess.run(op)
        xs = [load("sync_mlp_x%d.npy" % r) for r in range(2)]
        ys = [load("sync_mlp_y%d.npy" % r) for r in range(2)]
        steps = xs[0].shape[0]
        losses = [[], []]
        failures = []
        for step in range(steps):
            got = [None, None]

            def worker(r, step=step, got=got):
                try:
                    got[r] = sess.run([names["train"][0], names["loss"][0]],
                                      {"x:0": xs[r][step], "y:0": ys[r][step]})[1]
                except Exception as e:  # pylint: disable=broad-except
                    failures.append(e)

            threads = [threading.Thread(target=worker, args=(r,)) for r in range(2)]
            for t in threads:
                t.start()
            sess.run(names["sync"][0], options=graphrun.RunOptions(timeout_in_ms=60000))
            for t in threads:
                t.join()
            self.assertEqual(failures, [])
            for r in range(2):
                losses[r].append(got[r])
        for r in range(2):
            np.testing.assert_allclose(losses[r], load("sync_mlp_loss%d.npy" % r), rtol=1e-5)
        np.testing.assert_allclose(sess.run("w/Read/ReadVariableOp:0"), load("sync_mlp_final__w.npy"),
                                   rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(sess.run("b/Read/ReadVariableOp:0"), load("sync_mlp_final__b.npy"),
                                   rtol=1e-5, atol=1e-7)
        self.assertEqual(sess.run("global_step/Read/ReadVariableOp:0"),
                         load("sync_mlp_final__global_step.npy"))


if __name__ == "__main__":
    unittest.main()
