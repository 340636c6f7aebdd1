"""STENSO real-world benchmark sum_diag_dot (Table I, row sum_diag_dot): trace
of a dot product (audio processing).

Written naively, as the table's original implementation: tenslift optimize
reads this function and emits the cheapest equal program.
"""

import numpy as np


# tenslift: A: f64[n, k], B: f64[k, n]
def sum_diag_dot(A, B):
    return np.sum(np.diag(np.dot(A, B)))
