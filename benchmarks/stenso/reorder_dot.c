/* STENSO real-world benchmark reorder_dot (network simulation: quadratic
 * form). NumPy original: x.T @ A @ x, evaluated left to right: the row
 * vector x^T A goes into a temporary, then it is dotted with x. */
double reorder_dot(int n, double A[n][n], double x[n]) {
  double row[n];
  for (int j = 0; j < n; j++) {
    row[j] = 0.0;
    for (int i = 0; i < n; i++)
      row[j] += x[i] * A[i][j];
  }
  double result = 0.0;
  for (int j = 0; j < n; j++)
    result += row[j] * x[j];
  return result;
}
