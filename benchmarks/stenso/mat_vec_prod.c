/* STENSO real-world benchmark mat_vec_prod (optimisation: total profit per
 * item). NumPy original: np.sum(A * x, axis=1).
 * Naive C materialises the broadcast product A * x, then sums its rows. */
void mat_vec_prod(int n, int m, double A[n][m], double x[m], double out[n]) {
  double scaled[n][m];
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      scaled[i][j] = A[i][j] * x[j];
  for (int i = 0; i < n; i++) {
    out[i] = 0.0;
    for (int j = 0; j < m; j++)
      out[i] += scaled[i][j];
  }
}
