"""STENSO real-world benchmark scalar_sum (Table I, row scalar_sum): weighted
statistical moment (environmental science).

Written naively, as the table's original implementation: tenslift optimize
reads this function and emits the cheapest equal program.
"""

import numpy as np


# tenslift: A: f64[n, m], x: f64[m]
def scalar_sum(A, x):
    return np.sum(A * x, axis=0)
