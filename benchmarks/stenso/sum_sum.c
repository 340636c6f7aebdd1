/* STENSO real-world benchmark sum_sum (AI/ML: sums a matrix over both
 * axes). NumPy original: np.sum(np.sum(A, axis=0), axis=0).
 * Naive C: column sums into a temporary, then the sum of those. */
double sum_sum(int n, int m, double A[n][m]) {
  double column_sums[m];
  for (int j = 0; j < m; j++)
    column_sums[j] = 0.0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      column_sums[j] += A[i][j];
  double total = 0.0;
  for (int j = 0; j < m; j++)
    total += column_sums[j];
  return total;
}
