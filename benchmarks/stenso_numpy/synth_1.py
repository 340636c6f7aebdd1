"""STENSO synthetic benchmark synth_1 (Table II, row synth_1).

Written naively, as the table's original implementation: tenslift optimize
reads this function and emits the cheapest equal program.
"""

import numpy as np


# tenslift: A: f64[n, m], B: f64[n, m]
def synth_1(A, B):
    return (A * B) + 3 * (A * B)
