/* mathfu vector -= vector: element-wise in-place difference. */
void subeq(float *a, const float *b, int n)
{
    for (int i = 0; i < n; i++)
        a[i] -= b[i];
}
