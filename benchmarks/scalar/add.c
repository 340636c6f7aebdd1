/* A loop-free function: the sum of two ints. */
int add(int b, int c)
{
    return b + c;
}
