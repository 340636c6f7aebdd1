"""STENSO real-world benchmark max_stack (Table I, row max_stack): stacks and
takes the element-wise maximum (computational biology).

Written naively, as the table's original implementation: tenslift optimize
reads this function and emits the cheapest equal program.
"""

import numpy as np


# tenslift: A: f64[n, m], B: f64[n, m]
def max_stack(A, B):
    return np.max(np.stack([A, B], axis=0), axis=0)
