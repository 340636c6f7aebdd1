/* STENSO real-world benchmark dot_trans_2 (physics simulation: double
 * transpose of a matrix). NumPy original: np.transpose(np.transpose(A)).
 * Naive C really transposes twice, through a temporary. */
void dot_trans_2(int n, int m, double A[n][m], double out[n][m]) {
  double transposed[m][n];
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      transposed[j][i] = A[i][j];
  for (int j = 0; j < m; j++)
    for (int i = 0; i < n; i++)
      out[i][j] = transposed[j][i];
}
