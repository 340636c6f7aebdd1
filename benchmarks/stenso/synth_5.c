/* STENSO synthetic benchmark synth_5. NumPy original: np.power(np.sqrt(a), 4) + 2 * B (the paper writes a; taken as the matrix A)
 * Naive C: the expression as written, element by element. */
#include <math.h>

void synth_5(int n, int m, double A[n][m], double B[n][m], double out[n][m]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      out[i][j] = pow(sqrt(A[i][j]), 4.0) + 2.0 * B[i][j];
}
