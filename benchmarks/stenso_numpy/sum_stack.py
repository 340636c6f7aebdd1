"""STENSO real-world benchmark sum_stack (Table I, row sum_stack): stacks and
sums several matrices (computational biology).

Written naively, as the table's original implementation: tenslift optimize
reads this function and emits the cheapest equal program.
"""

import numpy as np


# tenslift: A: f64[n, m], B: f64[n, m], C: f64[n, m]
def sum_stack(A, B, C):
    return np.sum(np.stack([A, B, C], axis=0), axis=0)
