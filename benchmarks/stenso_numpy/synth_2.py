"""STENSO synthetic benchmark synth_2 (Table II, row synth_2).

Written naively, as the table's original implementation: tenslift optimize
reads this function and emits the cheapest equal program.
"""

import numpy as np


# tenslift: A: f64[n, m], B: f64[n, m]
def synth_2(A, B):
    return A + B - A - A + B * B - B
