"""STENSO synthetic benchmark synth_5 (Table II, row synth_5): the table writes
`a`; taken as the matrix A.

Written naively, as the table's original implementation: tenslift optimize
reads this function and emits the cheapest equal program.
"""

import numpy as np


# tenslift: A: f64[n, m], B: f64[n, m]
def synth_5(A, B):
    return np.power(np.sqrt(A), 4) + 2 * B
