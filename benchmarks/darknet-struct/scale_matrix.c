/* darknet's matrix type (src/matrix.h): rows x cols values held as an
 * array of row pointers, passed by value. scale_matrix multiplies every
 * element by a scalar, as darknet's scale_matrix does. */
typedef struct matrix {
    int rows, cols;
    float **vals;
} matrix;

void scale_matrix(matrix m, float scale)
{
    int i, j;
    for (i = 0; i < m.rows; ++i) {
        for (j = 0; j < m.cols; ++j) {
            m.vals[i][j] *= scale;
        }
    }
}
