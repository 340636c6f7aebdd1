/* Dot product of float vectors accumulated in double. */
double dot_dacc(int n, const float *x, const float *y)
{
    double acc = 0.0;
    for (int i = 0; i < n; i++)
        acc += x[i] * y[i];
    return acc;
}
