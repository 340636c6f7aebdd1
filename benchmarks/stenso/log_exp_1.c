/* STENSO real-world benchmark log_exp_1 (AI/ML: adds two Gaussian
 * probability densities). NumPy original: np.exp(np.log(A + B)).
 * Naive C: the sum, its log and the exp of that, element by element. */
#include <math.h>

void log_exp_1(int n, int m, double A[n][m], double B[n][m], double out[n][m]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++) {
      double sum = A[i][j] + B[i][j];
      double log_sum = log(sum);
      out[i][j] = exp(log_sum);
    }
}
