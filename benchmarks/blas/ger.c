/* BLAS level 2 sger: rank-1 update A = A + alpha * x * y^T, A row-major with leading dimension lda. */
void ger(int m, int n, float ALPHA, float *x, float *y, float *A, int lda)
{
    for (int i = 0; i < m; i++) {
        for (int j = 0; j < n; j++)
            A[i * lda + j] += ALPHA * x[i] * y[j];
    }
}
