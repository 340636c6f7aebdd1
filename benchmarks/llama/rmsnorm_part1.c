/* First part of llama2.c's rmsnorm: the sum of squares of the activation vector. */
float rmsnorm_part1(float *x, int size)
{
    float ss = 0.0f;
    for (int j = 0; j < size; j++)
        ss += x[j] * x[j];
    return ss;
}
