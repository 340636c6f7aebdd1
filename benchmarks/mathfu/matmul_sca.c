/* mathfu matrix * scalar: out = m * s for a rows x cols row-major matrix. */
void matmul_sca(float *out, const float *m, float s, int rows, int cols)
{
    for (int i = 0; i < rows; i++) {
        for (int j = 0; j < cols; j++)
            out[i * cols + j] = m[i * cols + j] * s;
    }
}
