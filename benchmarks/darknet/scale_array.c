/* Darknet scale_array: a *= s. */
void scale_array(float *a, int n, float s)
{
    int i;
    for (i = 0; i < n; ++i)
        a[i] *= s;
}
