"""STENSO synthetic benchmark synth_7 (Table II, row synth_7).

Written naively, as the table's original implementation: tenslift optimize
reads this function and emits the cheapest equal program.
"""

import numpy as np


# tenslift: A: f64[n, m]
def synth_7(A):
    return np.power(A, 6) / np.power(A, 4)
