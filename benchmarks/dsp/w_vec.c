/* TI DSP library style weighted vector sum: r = m * x1 + x2. */
void w_vec(const float *x1, const float *x2, float m, float *r, int n)
{
    for (int i = 0; i < n; i++)
        r[i] = m * x1[i] + x2[i];
}
