"""STENSO real-world benchmark diag_dot (Table I, row diag_dot): Gaussian
variance reduction (astrophysics).

Written naively, as the table's original implementation: tenslift optimize
reads this function and emits the cheapest equal program.
"""

import numpy as np


# tenslift: A: f64[n, k], B: f64[k, n]
def diag_dot(A, B):
    return np.diag(np.dot(A, B))
