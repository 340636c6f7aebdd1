"""STENSO real-world benchmark dot_trans_2 (Table I, row dot_trans_2): double
transpose of a matrix (physics simulation).

Written naively, as the table's original implementation: tenslift optimize
reads this function and emits the cheapest equal program.
"""

import numpy as np


# tenslift: A: f64[n, m]
def dot_trans_2(A):
    return np.transpose(np.transpose(A))
