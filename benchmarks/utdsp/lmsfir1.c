/* UTDSP lmsfir, filtering step: the adaptive filter's output for the current delay line. */
float lmsfir1(float *input, float *coefficient, int ntaps)
{
    float sum = 0.0f;
    for (int i = 0; i < ntaps; i++)
        sum += coefficient[i] * input[i];
    return sum;
}
