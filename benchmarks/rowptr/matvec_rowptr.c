/* y = A x for a row-pointer matrix A (n x m). */
void matvec_rowptr(int n, int m, double **A, double *x, double *y)
{
    for (int i = 0; i < n; i++) {
        double sum = 0.0;
        for (int j = 0; j < m; j++)
            sum += A[i][j] * x[j];
        y[i] = sum;
    }
}
