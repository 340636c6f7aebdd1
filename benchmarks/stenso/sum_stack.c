/* STENSO real-world benchmark sum_stack (computational biology: stacks and
 * sums several matrices). NumPy original:
 *   np.sum(np.stack([A, B, C], axis=0), axis=0)
 * Naive C copies the three matrices into a stacked temporary, then reduces
 * over the stacking axis. */
void sum_stack(int n, int m, double A[n][m], double B[n][m], double C[n][m], double out[n][m]) {
  double stacked[3][n][m];
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++) {
      stacked[0][i][j] = A[i][j];
      stacked[1][i][j] = B[i][j];
      stacked[2][i][j] = C[i][j];
    }
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++) {
      out[i][j] = 0.0;
      for (int s = 0; s < 3; s++)
        out[i][j] += stacked[s][i][j];
    }
}
