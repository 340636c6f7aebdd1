/* STENSO real-world benchmark scale_dot (benchmarking: matrix product with
 * scaling). NumPy original: np.dot(a * A, B). Naive C scales the whole
 * matrix A into a temporary before multiplying. */
void scale_dot(int n, int k, int m, double a, double A[n][k], double B[k][m],
               double out[n][m]) {
  double scaled[n][k];
  for (int i = 0; i < n; i++)
    for (int l = 0; l < k; l++)
      scaled[i][l] = a * A[i][l];
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++) {
      out[i][j] = 0.0;
      for (int l = 0; l < k; l++)
        out[i][j] += scaled[i][l] * B[l][j];
    }
}
