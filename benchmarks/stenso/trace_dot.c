/* STENSO real-world benchmark trace_dot (computer graphics: trace of a
 * matrix product). NumPy original: np.trace(A @ B.T) with A, B (n x k).
 * Naive C transposes B, forms the full n x n product, then sums its diagonal. */
double trace_dot(int n, int k, double A[n][k], double B[n][k]) {
  double Bt[k][n];
  double product[n][n];
  for (int i = 0; i < n; i++)
    for (int l = 0; l < k; l++)
      Bt[l][i] = B[i][l];
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      product[i][j] = 0.0;
      for (int l = 0; l < k; l++)
        product[i][j] += A[i][l] * Bt[l][j];
    }
  double trace = 0.0;
  for (int i = 0; i < n; i++)
    trace += product[i][i];
  return trace;
}
