/* STENSO real-world benchmark sum_diag_dot (audio processing: trace of a
 * product). NumPy original: np.sum(np.diag(np.dot(A, B))).
 * Naive C: full product into a temporary, its diagonal into another, then
 * the sum of the diagonal. */
double sum_diag_dot(int n, int k, double A[n][k], double B[k][n]) {
  double product[n][n];
  double diagonal[n];
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      product[i][j] = 0.0;
      for (int l = 0; l < k; l++)
        product[i][j] += A[i][l] * B[l][j];
    }
  for (int i = 0; i < n; i++)
    diagonal[i] = product[i][i];
  double sum = 0.0;
  for (int i = 0; i < n; i++)
    sum += diagonal[i];
  return sum;
}
