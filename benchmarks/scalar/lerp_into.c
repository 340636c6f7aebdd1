/* A loop-free void function that writes its result through a pointer:
 * the interpolation of the first elements of a and b at t. */
void lerp_into(const float *a, const float *b, float t, float *out)
{
    out[0] = a[0] + t * (b[0] - a[0]);
}
