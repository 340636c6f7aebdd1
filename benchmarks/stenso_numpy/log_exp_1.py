"""STENSO real-world benchmark log_exp_1 (Table I, row log_exp_1): adds two
Gaussian probability densities (AI/ML).

Written naively, as the table's original implementation: tenslift optimize
reads this function and emits the cheapest equal program.
"""

import numpy as np


# tenslift: A: f64[n, m], B: f64[n, m]
def log_exp_1(A, B):
    return np.exp(np.log(A + B))
