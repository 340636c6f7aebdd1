/* STENSO real-world benchmark scalar_sum (environmental science: weighted
 * statistical moment). NumPy original: np.sum(A * x, axis=0), x broadcast
 * along the rows of A. Naive C materialises A * x, then sums its columns. */
void scalar_sum(int n, int m, double A[n][m], double x[m], double out[m]) {
  double weighted[n][m];
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      weighted[i][j] = A[i][j] * x[j];
  for (int j = 0; j < m; j++)
    out[j] = 0.0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      out[j] += weighted[i][j];
}
