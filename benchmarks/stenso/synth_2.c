/* STENSO synthetic benchmark synth_2. NumPy original: A + B - A - A + B * B - B
 * Naive C: the expression as written, element by element. */
void synth_2(int n, int m, double A[n][m], double B[n][m], double out[n][m]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      out[i][j] = A[i][j] + B[i][j] - A[i][j] - A[i][j] + B[i][j] * B[i][j] - B[i][j];
}
