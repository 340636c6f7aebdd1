/* Darknet-style GEMM with both operands transposed: C += ALPHA * A^T * B^T.
 * A is K x M (lda), B is N x K (ldb), C is M x N (ldc), all row-major. */
void gemm_tt(int m, int n, int k, float ALPHA,
             float *A, int lda,
             float *B, int ldb,
             float *C, int ldc)
{
    int i, j, p;
    for (i = 0; i < m; ++i) {
        for (j = 0; j < n; ++j) {
            float acc = 0;
            for (p = 0; p < k; ++p)
                acc += ALPHA * A[i + p * lda] * B[p + j * ldb];
            C[i * ldc + j] += acc;
        }
    }
}
