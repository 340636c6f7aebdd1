/* STENSO real-world benchmark vec_lerp (computer graphics: colour gradient
 * from a distance). NumPy original: np.stack([(x*a + (1-a)*y) for a in A]).
 * Naive C: one interpolated row per weight, built in a temporary row and
 * copied into the stacked result. */
void vec_lerp(int k, int m, double A[k], double x[m], double y[m], double out[k][m]) {
  double row[m];
  for (int i = 0; i < k; i++) {
    double a = A[i];
    for (int j = 0; j < m; j++)
      row[j] = x[j] * a + (1.0 - a) * y[j];
    for (int j = 0; j < m; j++)
      out[i][j] = row[j];
  }
}
