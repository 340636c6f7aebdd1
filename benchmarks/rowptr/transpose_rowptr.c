/* Out-of-place transpose of a row-pointer matrix: B (cols x rows) = A^T. */
void transpose_rowptr(int rows, int cols, double **A, double **B)
{
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++)
            B[j][i] = A[i][j];
}
