/* STENSO real-world benchmark elem_square (AI/ML: differences for an L2
 * norm). NumPy original: np.power(A, 2). Naive C calls pow for a square. */
#include <math.h>

void elem_square(int n, int m, double A[n][m], double out[n][m]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      out[i][j] = pow(A[i][j], 2.0);
}
