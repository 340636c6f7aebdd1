"""STENSO synthetic benchmark synth_11 (Table II, row synth_11).

Written naively, as the table's original implementation: tenslift optimize
reads this function and emits the cheapest equal program.
"""

import numpy as np


# tenslift: A: f64[n, m]
def synth_11(A):
    return A * A * A * A * A
