"""Conformance cases for the ops cases_core.py does not reach."""
import numpy as np
import tensorflow as tf

from conformance_cases import SPECIAL, case, f32, f64, i32, i64, rand
