/* TI DSP library style matrix scale: r = x * scale, rows x cols row-major. */
void matscal(const float *x, float scale, float *r, int rows, int cols)
{
    for (int i = 0; i < rows; i++) {
        for (int j = 0; j < cols; j++)
            r[i * cols + j] = x[i * cols + j] * scale;
    }
}
