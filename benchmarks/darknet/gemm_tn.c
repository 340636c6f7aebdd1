/* Darknet-style GEMM with A transposed: C += ALPHA * A^T * B.
 * A is K x M (lda), B is K x N (ldb), C is M x N (ldc), all row-major. */
void gemm_tn(int m, int n, int k, float ALPHA,
             float *A, int lda,
             float *B, int ldb,
             float *C, int ldc)
{
    int i, j, p;
    for (i = 0; i < m; ++i) {
        for (p = 0; p < k; ++p) {
            float a_scaled = ALPHA * A[p * lda + i];
            for (j = 0; j < n; ++j)
                C[i * ldc + j] += a_scaled * B[p * ldb + j];
        }
    }
}
