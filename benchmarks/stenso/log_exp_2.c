/* STENSO real-world benchmark log_exp_2 (statistical computing: builds up a
 * constraint Gaussian). NumPy original: np.exp(np.log(A) - np.log(B)). */
#include <math.h>

void log_exp_2(int n, int m, double A[n][m], double B[n][m], double out[n][m]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      out[i][j] = exp(log(A[i][j]) - log(B[i][j]));
}
