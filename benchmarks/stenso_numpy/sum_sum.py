"""STENSO real-world benchmark sum_sum (Table I, row sum_sum): sums a matrix
over both axes (AI/ML).

Written naively, as the table's original implementation: tenslift optimize
reads this function and emits the cheapest equal program.
"""

import numpy as np


# tenslift: A: f64[n, m]
def sum_sum(A):
    return np.sum(np.sum(A, axis=0), axis=0)
