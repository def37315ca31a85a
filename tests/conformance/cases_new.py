"""Conformance cases for the ops added after the suite began: FFT and
complex, image, sparse and string ops."""
import numpy as np
import tensorflow as tf

from conformance_cases import SPECIAL, case, f32, f64, i32, i64, rand
