/* UTDSP lmsfir, adaptation step: LMS coefficient update with the error already scaled by the
 * step size, coefficient += error * input. */
void lmsfir2(float *input, float *coefficient, float error, int ntaps)
{
    for (int i = 0; i < ntaps; i++)
        coefficient[i] += input[i] * error;
}
