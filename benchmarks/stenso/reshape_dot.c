/* STENSO real-world benchmark reshape_dot (kernel of a scientific
 * simulation). NumPy original:
 *   np.reshape(np.dot(np.reshape(A, (r, q, l, p)), B), (r, q, p))
 * with B a vector of length p; the final reshape requires l == p. In row-major
 * C both reshapes are views of the same memory, so A is indexed as
 * A[r][q][p][p] directly. Naive C computes the dot product into a temporary
 * and then copies it into the reshaped result. */
void reshape_dot(int r, int q, int p, double A[r][q][p][p], double B[p], double out[r][q][p]) {
  double product[r][q][p];
  for (int i = 0; i < r; i++)
    for (int j = 0; j < q; j++)
      for (int l = 0; l < p; l++) {
        product[i][j][l] = 0.0;
        for (int t = 0; t < p; t++)
          product[i][j][l] += A[i][j][l][t] * B[t];
      }
  for (int i = 0; i < r; i++)
    for (int j = 0; j < q; j++)
      for (int l = 0; l < p; l++)
        out[i][j][l] = product[i][j][l];
}
