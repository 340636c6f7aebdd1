/* simpl_array sum_elts: the sum of an integer array, accumulated from the last element down. */
int sum_elts(int *arr, int n)
{
    int total = 0;
    for (int i = n - 1; i >= 0; i--)
        total = total + arr[i];
    return total;
}
