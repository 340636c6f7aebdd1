/* STENSO real-world benchmark euclidian_dist (scientific computing: squared
 * Euclidean norm of each row). NumPy original: np.sum(np.power(A, 2), axis=-1).
 * Naive C squares into a temporary with pow, then sums each row. */
#include <math.h>

void euclidian_dist(int n, int m, double A[n][m], double out[n]) {
  double squares[n][m];
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      squares[i][j] = pow(A[i][j], 2.0);
  for (int i = 0; i < n; i++) {
    double sum = 0.0;
    for (int j = 0; j < m; j++)
      sum += squares[i][j];
    out[i] = sum;
  }
}
