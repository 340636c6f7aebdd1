"""STENSO real-world benchmark inner_prod (Table I, row inner_prod): weighted
average ion charge (physics); the table prints np.sum(a, b).

Written naively, as the table's original implementation: tenslift optimize
reads this function and emits the cheapest equal program.
"""

import numpy as np


# tenslift: a: f64[n], b: f64[n]
def inner_prod(a, b):
    return np.sum(a * b)
