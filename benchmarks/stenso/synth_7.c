/* STENSO synthetic benchmark synth_7. NumPy original:
 * np.power(A, 6) / np.power(A, 4). Naive C: as written, per element. */
#include <math.h>

void synth_7(int n, int m, double A[n][m], double out[n][m]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      out[i][j] = pow(A[i][j], 6.0) / pow(A[i][j], 4.0);
}
