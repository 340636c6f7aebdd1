/* TI DSP library style matrix initialisation: every entry of r becomes value. */
void matinit(float *r, float value, int rows, int cols)
{
    for (int i = 0; i < rows; i++) {
        for (int j = 0; j < cols; j++)
            r[i * cols + j] = value;
    }
}
