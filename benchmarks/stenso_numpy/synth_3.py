"""STENSO synthetic benchmark synth_3 (Table II, row synth_3).

Written naively, as the table's original implementation: tenslift optimize
reads this function and emits the cheapest equal program.
"""

import numpy as np


# tenslift: A: f64[n, m], B: f64[n, m]
def synth_3(A, B):
    return (A + B) / np.sqrt(A + B)
