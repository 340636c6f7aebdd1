/* Matrix product over row-pointer matrices, the way numerical-recipes style
 * C passes matrices: C = A * B with A (n x p), B (p x m), C (n x m), each a
 * `double **` (an array of row pointers). */
void matmul_rowptr(int n, int m, int p, double **A, double **B, double **C)
{
    int i, j, k;
    for (i = 0; i < n; i++) {
        for (j = 0; j < m; j++) {
            C[i][j] = 0.0;
            for (k = 0; k < p; k++)
                C[i][j] += A[i][k] * B[k][j];
        }
    }
}
