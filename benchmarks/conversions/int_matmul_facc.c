/* Integer matrix product accumulated in a float local and stored back into
 * an int array (truncation toward zero on the store), flat arrays with
 * separate size parameters as real code writes them. */
void int_matmul_facc(int M, int N, int K, const int *a, const int *b, int *c)
{
    for (int i = 0; i < M; i++) {
        for (int j = 0; j < N; j++) {
            float sum = 0;
            for (int k = 0; k < K; k++)
                sum += a[i * K + k] * b[k * N + j];
            c[i * N + j] = sum;
        }
    }
}
