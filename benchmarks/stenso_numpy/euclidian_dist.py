"""STENSO real-world benchmark euclidian_dist (Table I, row euclidian_dist):
squared Euclidean norm of each row (scientific computing).

Written naively, as the table's original implementation: tenslift optimize
reads this function and emits the cheapest equal program.
"""

import numpy as np


# tenslift: A: f64[n, m]
def euclidian_dist(A):
    return np.sum(np.power(A, 2), axis=-1)
