/* TI DSP library style matrix subtract: r = x - y, rows x cols row-major. */
void matsub(const float *x, const float *y, float *r, int rows, int cols)
{
    for (int i = 0; i < rows; i++) {
        for (int j = 0; j < cols; j++)
            r[i * cols + j] = x[i * cols + j] - y[i * cols + j];
    }
}
