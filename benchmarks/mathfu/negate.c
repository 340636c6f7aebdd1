/* mathfu unary minus: out = -a. */
void negate(float *out, const float *a, int n)
{
    for (int i = 0; i < n; i++)
        out[i] = -a[i];
}
