"""STENSO real-world benchmark trace_dot (Table I, row trace_dot): trace of a
matrix product (computer graphics).

Written naively, as the table's original implementation: tenslift optimize
reads this function and emits the cheapest equal program.
"""

import numpy as np


# tenslift: A: f64[n, k], B: f64[n, k]
def trace_dot(A, B):
    return np.trace(A @ B.T)
