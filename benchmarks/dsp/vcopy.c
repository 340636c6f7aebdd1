/* TI DSP library style vector copy: r = x. */
void vcopy(const float *x, float *r, int n)
{
    for (int i = 0; i < n; i++)
        r[i] = x[i];
}
