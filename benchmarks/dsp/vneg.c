/* TI DSP library style vector negate: r = -x. */
void vneg(const float *x, float *r, int n)
{
    for (int i = 0; i < n; i++)
        r[i] = -x[i];
}
