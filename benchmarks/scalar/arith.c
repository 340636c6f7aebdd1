/* Loop-free functions: whole-function arithmetic on scalars, and a void
 * function that writes its result through a pointer. */
int add(int b, int c)
{
    return b + c;
}

float lerp(float a, float b, float t)
{
    return a + t * (b - a);
}

void lerp_into(const float *a, const float *b, float t, float *out)
{
    out[0] = a[0] + t * (b[0] - a[0]);
}
