"""graphrun.gpus() and select_gpus(): the inventory as the driver reports it,
the most idle GPUs chosen and claimed, and the claim seen by another
process. The GPUs are a fake inventory (placer's FakeGpuInfoSource); on this
machine's real inventory only the shape of the answer is checked."""

import os
import subprocess
import sys
import tempfile
import unittest

import graphrun
from graphrun import _state

GIB = 1 << 30
FAKE = [
    {"index": 1, "name": "gpu-b", "total_memory": 80 * GIB, "free_memory": 10 * GIB,
     "utilization_percent": 97, "other_processes": 3},
    {"index": 0, "name": "gpu-a", "total_memory": 80 * GIB, "free_memory": 79 * GIB,
     "utilization_percent": 0, "other_processes": 0},
    {"index": 2, "name": "gpu-c", "total_memory": 80 * GIB, "free_memory": 60 * GIB,
     "utilization_percent": 30, "other_processes": 1},
]


class GpusTest(unittest.TestCase):

    def setUp(self):
        self.claims = tempfile.mkdtemp(prefix="graphrun-claims-")

    def tearDown(self):
        _state.set_selection(None)

    def test_inventory_sorted_by_index_with_fields(self):
        found = graphrun.gpus(_fake=FAKE, _claims_dir=self.claims)
        self.assertEqual([g["index"] for g in found], [0, 1, 2])
        self.assertEqual(found[1]["name"], "gpu-b")
        self.assertEqual(found[1]["utilization_percent"], 97)
        self.assertEqual(found[0]["free_memory"], 79 * GIB)
        self.assertFalse(any(g["claimed"] for g in found))

    def test_this_machines_inventory(self):
        found = graphrun.gpus()
        self.assertIsInstance(found, list)
        if not found:
            self.assertNotEqual(graphrun.why_no_gpus(), "")  # says why there are none
        for g in found:
            self.assertGreater(g["total_memory"], 0)

    def test_select_takes_the_most_idle_and_claims_them(self):
        chosen, reasons = graphrun.select_gpus(2, _fake=FAKE, _claims_dir=self.claims)
        self.assertEqual(chosen, [0, 2])
        self.assertTrue(any("97%" in r for r in reasons), reasons)  # says why not GPU 1
        found = {g["index"]: g for g in graphrun.gpus(_fake=FAKE, _claims_dir=self.claims)}
        self.assertTrue(found[0]["claimed"])
        self.assertTrue(found[2]["claimed"])
        self.assertFalse(found[1]["claimed"])
        # Later sessions default to the chosen GPUs.
        self.assertEqual(_state.session_options({})["gpus"], "0,2")
        self.assertEqual(_state.session_options({"gpus": "none"})["gpus"], "none")
        # Another process asking for one idle GPU gets one nobody claimed.
        code = ("import graphrun, json, sys\n"
                "fake = json.loads(sys.argv[1])\n"
                "print(graphrun.select_gpus(1, _fake=fake, _claims_dir=sys.argv[2])[0])\n")
        import json
        out = subprocess.run([sys.executable, "-c", code, json.dumps(FAKE), self.claims],
                             check=True, capture_output=True, text=True,
                             env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
        self.assertEqual(out.stdout.strip(), "[1]")

    def test_explicit_gpus_are_taken_as_listed(self):
        chosen, _ = graphrun.select_gpus(gpus="1,0", _fake=FAKE, _claims_dir=self.claims)
        self.assertEqual(chosen, [1, 0])
        chosen, _ = graphrun.select_gpus(gpus="all", _fake=FAKE, _claims_dir=self.claims)
        self.assertEqual(sorted(chosen), [0, 1, 2])
        # A session asking for a count is not handed the selection as a list.
        self.assertNotIn("gpus", _state.session_options({"num_gpus": 1}))

    def test_too_many_gpus_is_an_error(self):
        with self.assertRaises(graphrun.errors.ResourceExhaustedError):
            graphrun.select_gpus(4, _fake=FAKE, _claims_dir=self.claims)


if __name__ == "__main__":
    unittest.main()
