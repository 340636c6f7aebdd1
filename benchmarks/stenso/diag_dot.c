/* STENSO real-world benchmark diag_dot (astrophysics: Gaussian variance
 * reduction). NumPy original: np.diag(np.dot(A, B)).
 * Naive C: the whole product A.B goes into a local temporary, then its
 * diagonal is copied out; the off-diagonal products are wasted work. */
void diag_dot(int n, int k, double A[n][k], double B[k][n], double d[n]) {
  double product[n][n];
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      product[i][j] = 0.0;
      for (int l = 0; l < k; l++)
        product[i][j] += A[i][l] * B[l][j];
    }
  for (int i = 0; i < n; i++)
    d[i] = product[i][i];
}
