/* darknet's matrix_add_matrix: to += from, element-wise, both matrices
 * passed by value (they share the shape of `from`). */
typedef struct matrix {
    int rows, cols;
    float **vals;
} matrix;

void matrix_add_matrix(matrix from, matrix to)
{
    int i, j;
    for (i = 0; i < from.rows; ++i) {
        for (j = 0; j < from.cols; ++j) {
            to.vals[i][j] += from.vals[i][j];
        }
    }
}
