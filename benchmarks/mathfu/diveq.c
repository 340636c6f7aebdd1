/* mathfu vector /= vector: element-wise in-place division (divisor never zero). */
void diveq(float *a, const float *b, int n)
{
    for (int i = 0; i < n; i++)
        a[i] /= b[i];
}
