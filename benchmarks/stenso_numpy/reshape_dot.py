"""STENSO real-world benchmark reshape_dot (Table I, row reshape_dot): kernel
of a scientific simulation; the final reshape needs l == p.

Written naively, as the table's original implementation: tenslift optimize
reads this function and emits the cheapest equal program.
"""

import numpy as np


# tenslift: A: f64[r, q, p, p], B: f64[p]
def reshape_dot(A, B):
    r, q, l, p = A.shape
    return np.reshape(np.dot(np.reshape(A, (r, q, l, p)), B), (r, q, p))
