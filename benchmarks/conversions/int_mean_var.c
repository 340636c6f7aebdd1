/* Mean and variance of each row of int data, computed in float. */
void int_mean_var(int rows, int n, const int *data, float *mean, float *var)
{
    for (int r = 0; r < rows; r++) {
        int s = 0;
        for (int i = 0; i < n; i++)
            s += data[r * n + i];
        float m = (float)s / n;
        mean[r] = m;
        float acc = 0.0f;
        for (int i = 0; i < n; i++) {
            float d = data[r * n + i] - m;
            acc += d * d;
        }
        var[r] = acc / n;
    }
}
