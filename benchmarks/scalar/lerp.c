/* A loop-free function: linear interpolation between a and b at t. */
float lerp(float a, float b, float t)
{
    return a + t * (b - a);
}
