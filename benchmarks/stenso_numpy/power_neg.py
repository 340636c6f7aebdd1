"""STENSO real-world benchmark power_neg (Table I, row power_neg): element-wise
inverse (AI/ML).

Written naively, as the table's original implementation: tenslift optimize
reads this function and emits the cheapest equal program.
"""

import numpy as np


# tenslift: A: f64[n, m]
def power_neg(A):
    return np.power(A, -1)
