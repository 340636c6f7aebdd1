/* simpl_array array_sum: the sum of an integer array. */
int array_sum(int *arr, int n)
{
    int sum = 0;
    for (int i = 0; i < n; i++)
        sum += arr[i];
    return sum;
}
