/* STENSO real-world benchmark max_stack (computational biology: stacks and
 * takes the element-wise maximum). NumPy original:
 *   np.max(np.stack([A, B], axis=0), axis=0)
 * Naive C copies both matrices into a stacked temporary, then takes the
 * maximum over the stacking axis. */
void max_stack(int n, int m, double A[n][m], double B[n][m], double out[n][m]) {
  double stacked[2][n][m];
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++) {
      stacked[0][i][j] = A[i][j];
      stacked[1][i][j] = B[i][j];
    }
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++) {
      double best = stacked[0][i][j];
      for (int s = 1; s < 2; s++)
        if (stacked[s][i][j] > best)
          best = stacked[s][i][j];
      out[i][j] = best;
    }
}
