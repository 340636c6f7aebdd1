/* simpl_array array_inc: increment every element of an integer array. */
void array_inc(int *arr, int n)
{
    for (int i = 0; i < n; i++)
        arr[i] = arr[i] + 1;
}
