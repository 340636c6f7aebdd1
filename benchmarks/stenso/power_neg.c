/* STENSO real-world benchmark power_neg (AI/ML: element-wise inverse).
 * NumPy original: np.power(A, -1). Naive C calls pow with exponent -1. */
#include <math.h>

void power_neg(int n, int m, double A[n][m], double out[n][m]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      out[i][j] = pow(A[i][j], -1.0);
}
