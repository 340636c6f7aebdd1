/* TI DSP library style matrix multiply: y = x1 * x2, x1 is r1 x c1, x2 is c1 x c2, row-major. */
void matmul(const float *x1, int r1, int c1, const float *x2, int c2, float *y)
{
    for (int i = 0; i < r1; i++) {
        for (int j = 0; j < c2; j++) {
            float sum = 0;
            for (int k = 0; k < c1; k++)
                sum += x1[i * c1 + k] * x2[k * c2 + j];
            y[i * c2 + j] = sum;
        }
    }
}
