"""STENSO synthetic benchmark synth_10 (Table II, row synth_10).

Written naively, as the table's original implementation: tenslift optimize
reads this function and emits the cheapest equal program.
"""

import numpy as np


# tenslift: A: f64[n, m]
def synth_10(A):
    return np.stack([x * 2 for x in A], axis=0)
