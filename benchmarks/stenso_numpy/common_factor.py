"""STENSO real-world benchmark common_factor (Table I, row common_factor):
combines vectors for smoothing (augmented reality).

Written naively, as the table's original implementation: tenslift optimize
reads this function and emits the cheapest equal program.
"""

import numpy as np


# tenslift: A: f64[n, m], B: f64[n, m], C: f64[n, m]
def common_factor(A, B, C):
    return A * B + C * B
