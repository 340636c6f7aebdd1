/* Darknet scale_matrix: every entry of a rows x cols row-major matrix times scale. */
void scale_matrix(float *m, int rows, int cols, float scale)
{
    int i, j;
    for (i = 0; i < rows; ++i) {
        for (j = 0; j < cols; ++j)
            m[i * cols + j] *= scale;
    }
}
