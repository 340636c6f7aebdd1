/* STENSO synthetic benchmark synth_6. NumPy original:
 * np.power(np.sqrt(A) + np.sqrt(A), 2). Naive C: as written, per element. */
#include <math.h>

void synth_6(int n, int m, double A[n][m], double out[n][m]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      out[i][j] = pow(sqrt(A[i][j]) + sqrt(A[i][j]), 2.0);
}
