/* STENSO real-world benchmark inner_prod (physics: weighted average ion
 * charge). NumPy original: np.sum(a * b) (printed as "np.sum(a, b)" in the
 * paper's table). Naive C materialises the products, then sums them. */
double inner_prod(int n, double a[n], double b[n]) {
  double products[n];
  for (int i = 0; i < n; i++)
    products[i] = a[i] * b[i];
  double sum = 0.0;
  for (int i = 0; i < n; i++)
    sum += products[i];
  return sum;
}
