namespace Tallyho.Client.Internal;

internal static class Guard
{
    public static T NotNull<T>(T? value, string name)
        where T : class => value ?? throw new ArgumentNullException(name);

    public static string NotEmpty(string? value, string name) =>
        string.IsNullOrEmpty(value) ? throw new ArgumentException("Must not be null or empty.", name) : value!;

    public static void NotDisposed(bool disposed, object instance)
    {
#if NET8_0_OR_GREATER
        ObjectDisposedException.ThrowIf(disposed, instance);
#else
        if (disposed)
        {
            throw new ObjectDisposedException(instance.GetType().Name);
        }
#endif
    }
}
