/* DSP library-style vector add with advanced pointer parameters and a
 * size parameter: the parameters themselves are walked. */
typedef int TYPE;

void vec_add_param(const TYPE *a, const TYPE *b, TYPE *c, int n)
{
    int i;
    for (i = 0; i < n; i++)
        *c++ = *a++ + *b++;
}
