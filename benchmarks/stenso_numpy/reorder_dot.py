"""STENSO real-world benchmark reorder_dot (Table I, row reorder_dot):
quadratic form x^T A x (network simulation).

Written naively, as the table's original implementation: tenslift optimize
reads this function and emits the cheapest equal program.
"""

import numpy as np


# tenslift: A: f64[n, n], x: f64[n]
def reorder_dot(A, x):
    return x.T @ A @ x
