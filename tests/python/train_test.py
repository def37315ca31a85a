"""graphrun.train() and Session.save/restore: TensorFlow's training graphs
give TensorFlow's losses and final variables, the same losses as the
`graphrun train` CLI, and checkpoints that restore."""

import os
import select
import subprocess
import tempfile
import threading
import unittest

import numpy as np

import graphrun
from graphrun import errors

F = "tests/fixtures/training"
CLI = "tools/graphrun"


def fixture(name):
    return os.path.join(F, name)


def feed_steps(case):
    return {"x:0": np.load(fixture(case + "_x.npy")), "y:0": np.load(fixture(case + "_y.npy"))}


class TrainTest(unittest.TestCase):

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="graphrun-train-test-")

    def test_losses_and_final_variables_are_tensorflows(self):
        for case in ("mlp_adam", "mlp_adam_ref", "mlp_sgd"):
            with self.subTest(case=case):
                prefix = os.path.join(self.tmp, case, "model.ckpt")
                result = graphrun.train(fixture(case + ".pbtxt"), train="train", steps=20,
                                        restore=fixture(case + "_init.ckpt"),
                                        feed_steps=feed_steps(case), fetches=["loss"],
                                        save=prefix, progress=False)
                self.assertEqual(result.steps, 20)
                self.assertEqual(result.history["loss"].shape, (20,))
                np.testing.assert_allclose(result.losses, np.load(fixture(case + "_loss.npy")),
                                           rtol=1e-5)
                self.assertEqual(result.checkpoints, [prefix])
                with open(os.path.join(self.tmp, case, "checkpoint")) as f:
                    self.assertIn('model_checkpoint_path: "model.ckpt"', f.read())
                # A new session restored from graphrun's checkpoint holds
                # TensorFlow's final values.
                fresh = graphrun.Session(fixture(case + ".pbtxt"))
                fresh.restore(os.path.join(self.tmp, case))
                for var in ("w1", "b1", "w2", "b2"):
                    want = np.load(fixture("%s_final__mlp__%s.npy" % (case, var)))
                    read = "mlp/%s/read:0" % var if case == "mlp_adam_ref" or case == "mlp_sgd" \
                        else "mlp/%s/Read/ReadVariableOp:0" % var
                    np.testing.assert_allclose(fresh.run(read), want, rtol=1e-5, atol=1e-7)

    def test_same_losses_as_the_cli(self):
        out = os.path.join(self.tmp, "cli")
        subprocess.run([CLI, "train", fixture("mlp_adam.pbtxt"), "--restore",
                        fixture("mlp_adam_init.ckpt"), "--train", "train", "--steps", "20",
                        "--feed_steps", "x=" + fixture("mlp_adam_x.npy"),
                        "--feed_steps", "y=" + fixture("mlp_adam_y.npy"),
                        "--fetch", "loss", "--out", out, "--quiet"], check=True)
        result = graphrun.train(fixture("mlp_adam.pbtxt"), train="train", steps=20,
                                restore=fixture("mlp_adam_init.ckpt"),
                                feed_steps=feed_steps("mlp_adam"), fetches=["loss"])
        np.testing.assert_allclose(result.history["loss"], np.load(os.path.join(out, "loss.npy")),
                                   rtol=1e-6)

    def test_meta_graph_names_its_train_op_and_saver(self):
        # mlp_adam.meta: the train_op collection and the graph's own Saver.
        result = graphrun.train(fixture("mlp_adam.meta"), steps=20,
                                restore=fixture("mlp_adam_init.ckpt"),
                                feed_steps=feed_steps("mlp_adam"), fetches=["loss"],
                                save=os.path.join(self.tmp, "meta", "model.ckpt"), save_every=5)
        np.testing.assert_allclose(result.losses, np.load(fixture("mlp_adam_loss.npy")), rtol=1e-5)
        self.assertEqual([os.path.basename(c) for c in result.checkpoints],
                         ["model.ckpt-5", "model.ckpt-10", "model.ckpt-15", "model.ckpt"])
        for c in result.checkpoints:
            self.assertTrue(os.path.exists(c + ".index"), c)
        # Going on in the same session: 0 more steps, then the variables
        # still restore from the periodic checkpoint.
        result.session.restore(os.path.join(self.tmp, "meta", "model.ckpt-10"))
        loss = result.session.run("loss:0", {"x:0": feed_steps("mlp_adam")["x:0"][10],
                                             "y:0": feed_steps("mlp_adam")["y:0"][10]})
        np.testing.assert_allclose(loss, np.load(fixture("mlp_adam_loss.npy"))[10], rtol=1e-5)

    def test_periodic_checkpoints_keep_the_newest_five(self):
        d = os.path.join(self.tmp, "periodic")
        result = graphrun.train(fixture("mlp_sgd.pbtxt"), train="train", steps=20, save_every=2,
                                restore=fixture("mlp_sgd_init.ckpt"), feed_steps=feed_steps("mlp_sgd"),
                                fetches=["loss"], save=os.path.join(d, "model.ckpt"))
        want = ["model.ckpt-%d" % k for k in (10, 12, 14, 16, 18)] + ["model.ckpt"]
        self.assertEqual([os.path.basename(c) for c in result.checkpoints], want)
        left = sorted(f for f in os.listdir(d) if f.endswith(".index"))
        self.assertEqual(left, sorted(w + ".index" for w in want))
        with open(os.path.join(d, "checkpoint")) as f:
            state = f.read()
        self.assertIn('model_checkpoint_path: "model.ckpt"', state)
        self.assertNotIn("model.ckpt-8", state)

    def test_bad_training_calls_are_named(self):
        graph = fixture("mlp_adam.pbtxt")
        with self.assertRaises(errors.InvalidArgumentError) as e:
            graphrun.train(graph, steps=1, restore=fixture("mlp_adam_init.ckpt"))
        self.assertIn("train op", str(e.exception))
        with self.assertRaises(errors.NotFoundError) as e:
            graphrun.train(graph, train="no_such_op", restore=fixture("mlp_adam_init.ckpt"))
        self.assertIn("no_such_op", str(e.exception))
        with self.assertRaises(errors.InvalidArgumentError) as e:
            graphrun.train(graph, train="train", steps=30, restore=fixture("mlp_adam_init.ckpt"),
                           feed_steps=feed_steps("mlp_adam"))
        self.assertIn("x:0", str(e.exception))
        with self.assertRaises(errors.NotFoundError) as e:
            graphrun.train(graph, train="train", restore=os.path.join(self.tmp, "missing.ckpt"))
        self.assertIn("missing.ckpt", str(e.exception))
        with self.assertRaises(errors.InvalidArgumentError):
            graphrun.train(graph, train="train", init="init", restore="x")
        # A save under a file is refused before any step, naming both.
        with open(os.path.join(self.tmp, "a_file"), "w") as f:
            f.write("x")
        bad = os.path.join(self.tmp, "a_file", "model.ckpt")
        with self.assertRaises(errors.InvalidArgumentError) as e:
            graphrun.train(graph, train="train", steps=1, restore=fixture("mlp_adam_init.ckpt"),
                           feed_steps=feed_steps("mlp_adam"), save=bad)
        self.assertIn(bad, str(e.exception))
        self.assertIn("not a directory", str(e.exception))
        # A truncated checkpoint is DataLoss naming the file and the key.
        truncated = os.path.join(self.tmp, "cut.ckpt")
        with open(fixture("mlp_adam_init.ckpt.index"), "rb") as src, open(truncated + ".index", "wb") as dst:
            dst.write(src.read())
        with open(fixture("mlp_adam_init.ckpt.data-00000-of-00001"), "rb") as src, \
                open(truncated + ".data-00000-of-00001", "wb") as dst:
            dst.write(src.read()[:1000])
        with self.assertRaises(errors.DataLossError) as e:
            graphrun.train(graph, train="train", steps=1, restore=truncated,
                           feed_steps=feed_steps("mlp_adam"))
        self.assertIn("cut.ckpt.data-00000-of-00001", str(e.exception))
        with self.assertRaises(errors.OpError) as e:
            graphrun.train(graph, train="train", steps=1, restore=fixture("mlp_adam_init.ckpt"),
                           feeds={"x:0": np.zeros((16, 8), np.float32)})  # y not fed
        self.assertIn("step 0", str(e.exception))

    def test_workers_outlive_the_thread_that_started_them(self):
        made = []
        t = threading.Thread(target=lambda: made.append(
            graphrun.Session("examples/mlp.pbtxt", local_workers=1, wire_compression="none")))
        t.start()
        t.join()
        probs = made[0].run("probs:0", {"x:0": np.load("examples/mlp_x.npy")})
        np.testing.assert_allclose(probs, np.load("examples/mlp_probs_expected.npy"),
                                   rtol=1e-5, atol=1e-6)

    def test_a_cluster_of_running_workers(self):
        # Two `graphrun worker` processes started here; the session is given
        # the cluster as TensorFlow's ClusterSpec dict.
        procs, addresses = [], []
        try:
            for i in range(2):
                p = subprocess.Popen([CLI, "worker", "--listen=127.0.0.1:0", "--job=worker",
                                      "--task=%d" % i], stdout=subprocess.PIPE, text=True)
                procs.append(p)
                ready, _, _ = select.select([p.stdout], [], [], 60)
                self.assertTrue(ready, "worker %d did not say where it serves" % i)
                line = p.stdout.readline()
                self.assertIn(" serving on ", line)
                addresses.append(line.split(" serving on ")[1].split()[0])
            sess = graphrun.Session("examples/mlp.pbtxt", cluster={"worker": addresses},
                                    wire_compression="none")
            md = graphrun.RunMetadata()
            probs = sess.run("probs:0", {"x:0": np.load("examples/mlp_x.npy")}, run_metadata=md)
            np.testing.assert_allclose(probs, np.load("examples/mlp_probs_expected.npy"),
                                       rtol=1e-5, atol=1e-6)
            self.assertTrue(any(d["device"].startswith("/job:worker/") for d in md.step_stats))
            sess.close()
        finally:
            for p in procs:
                p.terminate()
                p.wait()

    def test_worker_processes_from_python(self):
        # The session's graph runs in a graphrun worker process on loopback.
        sess = graphrun.Session("examples/mlp.pbtxt", local_workers=1, wire_compression="none")
        md = graphrun.RunMetadata()
        probs = sess.run("probs:0", {"x:0": np.load("examples/mlp_x.npy")}, run_metadata=md)
        devices = {d["device"] for d in md.step_stats}
        self.assertTrue(any(d.startswith("/job:worker/replica:0/task:0") for d in devices), devices)
        np.testing.assert_allclose(probs, np.load("examples/mlp_probs_expected.npy"),
                                   rtol=1e-5, atol=1e-6)


if __name__ == "__main__":
    unittest.main()
