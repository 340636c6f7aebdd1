/* STENSO synthetic benchmark synth_3. NumPy original: (A + B) / np.sqrt(A + B)
 * Naive C: the expression as written, element by element. */
#include <math.h>

void synth_3(int n, int m, double A[n][m], double B[n][m], double out[n][m]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      out[i][j] = (A[i][j] + B[i][j]) / sqrt(A[i][j] + B[i][j]);
}
