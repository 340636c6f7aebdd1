/* Darknet-style GEMM with B transposed: C += ALPHA * A * B^T.
 * A is M x K (lda), B is N x K (ldb), C is M x N (ldc), all row-major. */
void gemm_nt(int m, int n, int k, float ALPHA,
             float *A, int lda,
             float *B, int ldb,
             float *C, int ldc)
{
    int i, j, p;
    for (i = 0; i < m; ++i) {
        for (j = 0; j < n; ++j) {
            float acc = 0;
            for (p = 0; p < k; ++p)
                acc += ALPHA * A[i * lda + p] * B[j * ldb + p];
            C[i * ldc + j] += acc;
        }
    }
}
