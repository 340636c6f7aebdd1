/* Matrix-vector product over float data with a double accumulator. */
void gemv_dacc(int m, int n, const float *A, const float *x, float *y)
{
    for (int i = 0; i < m; i++) {
        double acc = 0.0;
        for (int j = 0; j < n; j++)
            acc += (double)A[i * n + j] * x[j];
        y[i] = (float)acc;
    }
}
