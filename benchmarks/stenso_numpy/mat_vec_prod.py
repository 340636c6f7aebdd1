"""STENSO real-world benchmark mat_vec_prod (Table I, row mat_vec_prod): total
profit per item (optimisation).

Written naively, as the table's original implementation: tenslift optimize
reads this function and emits the cheapest equal program.
"""

import numpy as np


# tenslift: A: f64[n, m], x: f64[m]
def mat_vec_prod(A, x):
    return np.sum(A * x, axis=1)
