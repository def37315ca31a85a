"""The wheel (//python:wheel): its RECORD matches its files, and unpacked as
pip unpacks it, `import graphrun` from it runs a graph, in process and over a
worker process started from the CLI the wheel carries."""

import base64
import csv
import glob
import hashlib
import io
import os
import subprocess
import sys
import tempfile
import unittest
import zipfile

WHEEL = glob.glob("python/graphrun-*.whl")


class WheelTest(unittest.TestCase):

    def test_wheel(self):
        self.assertEqual(len(WHEEL), 1, WHEEL)
        name = os.path.basename(WHEEL[0])
        self.assertTrue(name.endswith("-cp311-cp311-linux_x86_64.whl"), name)
        with zipfile.ZipFile(WHEEL[0]) as z:
            names = z.namelist()
            info = [n for n in names if n.endswith(".dist-info/WHEEL")]
            self.assertEqual(len(info), 1)
            wheel = z.read(info[0]).decode()
            self.assertIn("Tag: cp311-cp311-linux_x86_64", wheel)
            self.assertIn("Root-Is-Purelib: false", wheel)
            record = [n for n in names if n.endswith(".dist-info/RECORD")][0]
            rows = list(csv.reader(io.StringIO(z.read(record).decode())))
            self.assertEqual(sorted(r[0] for r in rows), sorted(names))
            for path, digest, size in rows:
                if path == record:
                    self.assertEqual((digest, size), ("", ""))
                    continue
                data = z.read(path)
                want = "sha256=" + base64.urlsafe_b64encode(
                    hashlib.sha256(data).digest()).decode().rstrip("=")
                self.assertEqual(digest, want, path)
                self.assertEqual(int(size), len(data), path)
            for must in ("graphrun/__init__.py", "graphrun/bin/graphrun"):
                self.assertIn(must, names)
            self.assertTrue(any(n.startswith("graphrun/_graphrun.") and n.endswith(".so")
                                for n in names))
            target = tempfile.mkdtemp(prefix="graphrun-wheel-")
            for zi in z.infolist():  # as pip: contents, then the mode bits
                z.extract(zi, target)
                mode = zi.external_attr >> 16
                if mode:
                    os.chmod(os.path.join(target, zi.filename), mode & 0o777)
        here = os.getcwd()
        code = (
            "import sys, numpy as np, graphrun\n"
            "assert graphrun.__file__.startswith(sys.argv[1]), graphrun.__file__\n"
            "x = np.load(sys.argv[2] + '/examples/mlp_x.npy')\n"
            "want = np.load(sys.argv[2] + '/examples/mlp_probs_expected.npy')\n"
            "for workers in (0, 1):\n"
            "    s = graphrun.Session(sys.argv[2] + '/examples/mlp.pbtxt', local_workers=workers)\n"
            "    np.testing.assert_allclose(s.run('probs:0', {'x:0': x}), want, rtol=1e-5, atol=1e-6)\n"
            "print('ok')\n")
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "GRAPHRUN_CLI")}
        env["PYTHONPATH"] = target
        out = subprocess.run(["/usr/bin/python3", "-c", code, target, here], cwd=target, env=env,
                             capture_output=True, text=True)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(out.stdout.strip(), "ok")


if __name__ == "__main__":
    unittest.main()
