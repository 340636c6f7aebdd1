"""STENSO synthetic benchmark synth_6 (Table II, row synth_6).

Written naively, as the table's original implementation: tenslift optimize
reads this function and emits the cheapest equal program.
"""

import numpy as np


# tenslift: A: f64[n, m]
def synth_6(A):
    return np.power(np.sqrt(A) + np.sqrt(A), 2)
