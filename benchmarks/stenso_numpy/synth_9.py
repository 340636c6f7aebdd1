"""STENSO synthetic benchmark synth_9 (Table II, row synth_9).

Written naively, as the table's original implementation: tenslift optimize
reads this function and emits the cheapest equal program.
"""

import numpy as np


# tenslift: A: f64[n, m], x: f64[m]
def synth_9(A, x):
    return np.sum(np.sum(A * x, axis=0))
