"""STENSO real-world benchmark dot_trans (Table I, row dot_trans): rotation
matrix for alignment (biomechanics).

Written naively, as the table's original implementation: tenslift optimize
reads this function and emits the cheapest equal program.
"""

import numpy as np


# tenslift: A: f64[k, n], X: f64[m, k]
def dot_trans(A, X):
    return np.dot(A.T, X.T)
