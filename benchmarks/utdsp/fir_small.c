/* UTDSP fir (small variant): one output sample of an ntaps-tap FIR filter, the sum of the
 * delay-line samples times the filter coefficients. */
float fir_small(float *input, float *coefficient, int ntaps)
{
    float sum = 0.0f;
    for (int i = 0; i < ntaps; i++)
        sum += input[i] * coefficient[i];
    return sum;
}
