/* STENSO synthetic benchmark synth_1. NumPy original: (A * B) + 3 * (A * B)
 * Naive C: the expression as written, element by element. */
void synth_1(int n, int m, double A[n][m], double B[n][m], double out[n][m]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      out[i][j] = (A[i][j] * B[i][j]) + 3.0 * (A[i][j] * B[i][j]);
}
