"""STENSO synthetic benchmark synth_12 (Table II, row synth_12).

Written naively, as the table's original implementation: tenslift optimize
reads this function and emits the cheapest equal program.
"""

import numpy as np


# tenslift: A: f64[n, m]
def synth_12(A):
    return A + A + A + A + A
