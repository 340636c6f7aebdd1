/* Scales a 3-D volume held as `float ***` (planes of row pointers):
 * out[z][y][x] = a * in[z][y][x] + b. */
void scale3d_rowptr(int nz, int ny, int nx, float a, float b, float ***in, float ***out)
{
    for (int z = 0; z < nz; z++)
        for (int y = 0; y < ny; y++)
            for (int x = 0; x < nx; x++)
                out[z][y][x] = a * in[z][y][x] + b;
}
