"""STENSO real-world benchmark vec_lerp (Table I, row vec_lerp): colour
gradient from distance (computer graphics).

Written naively, as the table's original implementation: tenslift optimize
reads this function and emits the cheapest equal program.
"""

import numpy as np


# tenslift: A: f64[k], x: f64[m], y: f64[m]
def vec_lerp(A, x, y):
    return np.stack([(x * a + (1 - a) * y) for a in A])
