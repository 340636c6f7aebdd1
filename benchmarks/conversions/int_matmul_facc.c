/* Integer matrix product accumulated in a float local and stored back into
 * an int array (truncation toward zero on the store), flat arrays with
 * separate size parameters as real code writes them. */
void int_matmul_facc(int m, int n, int k, const int *a, const int *b, int *c)
{
    for (int i = 0; i < m; i++) {
        for (int j = 0; j < n; j++) {
            float sum = 0;
            for (int kk = 0; kk < k; kk++)
                sum += a[i * k + kk] * b[kk * n + j];
            c[i * n + j] = sum;
        }
    }
}
