"""STENSO synthetic benchmark synth_4 (Table II, row synth_4).

Written naively, as the table's original implementation: tenslift optimize
reads this function and emits the cheapest equal program.
"""

import numpy as np


# tenslift: A: f64[n, m], B: f64[n, m]
def synth_4(A, B):
    return A + A + B - A - A - B * B
