"""STENSO real-world benchmark elem_square (Table I, row elem_square):
differences for an L2 norm (AI/ML).

Written naively, as the table's original implementation: tenslift optimize
reads this function and emits the cheapest equal program.
"""

import numpy as np


# tenslift: A: f64[n, m]
def elem_square(A):
    return np.power(A, 2)
