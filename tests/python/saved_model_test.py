"""graphrun.load(): SavedModels TensorFlow exported, called by signature and
keyword, give TensorFlow's outputs; bad keys and dtypes are named."""

import os
import unittest

import numpy as np

import graphrun
from graphrun import errors

SM = "tests/fixtures/saved_models"


class SavedModelTest(unittest.TestCase):

    def test_keras_mlp_export_matches_tensorflow(self):
        model = graphrun.load("examples/mlp_saved_model")
        self.assertIn("serving_default", model.signatures)
        sig = model.signatures["serving_default"]
        self.assertEqual(sig.inputs["x"][0], "float")
        out = sig(x=np.load("examples/mlp_x.npy"))
        self.assertEqual(sorted(out), ["output_0"])
        np.testing.assert_allclose(out["output_0"], np.load("examples/mlp_saved_model_expected.npy"),
                                   rtol=1e-5, atol=1e-6)

    def test_signatures_of_a_keras_mlp_with_two_tags(self):
        model = graphrun.load(os.path.join(SM, "keras_mlp"))
        x = np.load(os.path.join(SM, "keras_mlp_x.npy"))
        for key in ("serving_default", "serve"):
            with self.subTest(signature=key):
                want = np.load(os.path.join(SM, "keras_mlp_%s__output_0.npy" % key))
                got = model.signatures[key](x=x)["output_0"]
                np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)

    def test_string_inputs_through_a_text_model(self):
        model = graphrun.load(os.path.join(SM, "keras_text"))
        text = np.load(os.path.join(SM, "keras_text_text.npy"), allow_pickle=False)
        want = np.load(os.path.join(SM, "keras_text_serving_default__output_0.npy"))
        got = model.signatures["serving_default"](text=text)["output_0"]
        np.testing.assert_array_equal(got, want)
        # Python str values travel as UTF-8, as TensorFlow's do.
        got = model.signatures["serving_default"](text=[str(t) for t in text.tolist()])["output_0"]
        np.testing.assert_array_equal(got, want)

    def test_bad_calls_are_named(self):
        model = graphrun.load("examples/mlp_saved_model")
        sig = model.signatures["serving_default"]
        with self.assertRaises(errors.InvalidArgumentError) as e:
            sig(y=np.zeros((2, 4), np.float32))
        self.assertIn("x", str(e.exception))  # lists the valid keys
        with self.assertRaises(errors.InvalidArgumentError):
            sig(x=np.zeros((2, 4, 1), np.float32))
        with self.assertRaises(errors.NotFoundError) as e:
            graphrun.load("examples/mlp_saved_model", tags=["train"])
        self.assertIn("serve", str(e.exception))  # lists the tag sets there are
        with self.assertRaises(errors.NotFoundError) as e:
            graphrun.load("/no/such/dir")
        self.assertIn("/no/such/dir", str(e.exception))


if __name__ == "__main__":
    unittest.main()
