/* STENSO synthetic benchmark synth_11. NumPy original: A * A * A * A * A.
 * Naive C: as written, per element. */
void synth_11(int n, int m, double A[n][m], double out[n][m]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      out[i][j] = A[i][j] * A[i][j] * A[i][j] * A[i][j] * A[i][j];
}
