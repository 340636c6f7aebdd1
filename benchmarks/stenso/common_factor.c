/* STENSO real-world benchmark common_factor (augmented reality: combines
 * vectors for smoothing). NumPy original: A * B + C * B. */
void common_factor(int n, int m, double A[n][m], double B[n][m], double C[n][m],
                   double out[n][m]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      out[i][j] = A[i][j] * B[i][j] + C[i][j] * B[i][j];
}
