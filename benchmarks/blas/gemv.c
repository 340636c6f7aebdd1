/* BLAS level 2 gemv without scaling: y = A * x, A row-major m x n with leading dimension lda. */
void gemv(int m, int n, float *A, int lda, float *x, float *y)
{
    for (int i = 0; i < m; i++) {
        float sum = 0.0f;
        for (int j = 0; j < n; j++)
            sum += A[i * lda + j] * x[j];
        y[i] = sum;
    }
}
