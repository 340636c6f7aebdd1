/* Darknet mult_add_into_cpu: Z += X * Y element-wise. */
void mult_add_into_cpu(int n, float *X, float *Y, float *Z)
{
    int i;
    for (i = 0; i < n; ++i)
        Z[i] += X[i] * Y[i];
}
