"""STENSO real-world benchmark log_exp_2 (Table I, row log_exp_2): builds up a
constraint Gaussian (statistical computing).

Written naively, as the table's original implementation: tenslift optimize
reads this function and emits the cheapest equal program.
"""

import numpy as np


# tenslift: A: f64[n, m], B: f64[n, m]
def log_exp_2(A, B):
    return np.exp(np.log(A) - np.log(B))
