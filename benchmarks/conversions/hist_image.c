/* Grey-level histogram of an 8-bit image of rows x cols pixels, as image
 * code writes it: the bins are cleared, then each pixel counts once. */
void hist_image(int rows, int cols, const unsigned char img[rows][cols], unsigned int hist[256])
{
    for (int b = 0; b < 256; b++)
        hist[b] = 0;
    for (int y = 0; y < rows; y++)
        for (int x = 0; x < cols; x++)
            ++hist[img[y][x]];
}
