"""STENSO real-world benchmark scale_dot (Table I, row scale_dot): matrix
product with scaling (benchmarking).

Written naively, as the table's original implementation: tenslift optimize
reads this function and emits the cheapest equal program.
"""

import numpy as np


# tenslift: a: f64, A: f64[n, k], B: f64[k, m]
def scale_dot(a, A, B):
    return np.dot(a * A, B)
