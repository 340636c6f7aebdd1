/* Darknet matrix_add_matrix: to += from, both rows x cols, stored row-major. */
void matrix_add_matrix(float *from, float *to, int rows, int cols)
{
    int i, j;
    for (i = 0; i < rows; ++i) {
        for (j = 0; j < cols; ++j)
            to[i * cols + j] += from[i * cols + j];
    }
}
