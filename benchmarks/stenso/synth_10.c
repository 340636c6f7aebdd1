/* STENSO synthetic benchmark synth_10. NumPy original:
 * np.stack([x * 2 for x in A], axis=0). Naive C doubles each row of A into a
 * temporary row and copies it into the stacked result. */
void synth_10(int n, int m, double A[n][m], double out[n][m]) {
  double row[m];
  for (int i = 0; i < n; i++) {
    for (int j = 0; j < m; j++)
      row[j] = A[i][j] * 2.0;
    for (int j = 0; j < m; j++)
      out[i][j] = row[j];
  }
}
