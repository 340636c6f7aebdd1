/* STENSO synthetic benchmark synth_9. NumPy original:
 * np.sum(np.sum(A * x, axis=0)), x broadcast along the rows of A.
 * Naive C materialises A * x, sums its columns into a temporary, then sums
 * that. */
double synth_9(int n, int m, double A[n][m], double x[m]) {
  double weighted[n][m];
  double column_sums[m];
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      weighted[i][j] = A[i][j] * x[j];
  for (int j = 0; j < m; j++) {
    column_sums[j] = 0.0;
    for (int i = 0; i < n; i++)
      column_sums[j] += weighted[i][j];
  }
  double total = 0.0;
  for (int j = 0; j < m; j++)
    total += column_sums[j];
  return total;
}
