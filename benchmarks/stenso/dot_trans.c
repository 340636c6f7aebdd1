/* STENSO real-world benchmark dot_trans (biomechanics: rotation matrix for
 * alignment). NumPy original: np.dot(A.T, X.T) with A (k x n), X (m x k).
 * Naive C builds both transposes explicitly, then multiplies them. */
void dot_trans(int n, int k, int m, double A[k][n], double X[m][k], double out[n][m]) {
  double At[n][k];
  double Xt[k][m];
  for (int i = 0; i < n; i++)
    for (int l = 0; l < k; l++)
      At[i][l] = A[l][i];
  for (int l = 0; l < k; l++)
    for (int j = 0; j < m; j++)
      Xt[l][j] = X[j][l];
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++) {
      out[i][j] = 0.0;
      for (int l = 0; l < k; l++)
        out[i][j] += At[i][l] * Xt[l][j];
    }
}
