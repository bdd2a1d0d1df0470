namespace Tallyho.Client.Internal;

/// <summary>Delays and waits on a <see cref="TimeProvider"/>, the same on net8.0 and netstandard2.0.</summary>
internal static class Clock
{
    public static Task Sleep(TimeProvider time, TimeSpan delay, CancellationToken cancellationToken)
    {
        if (delay <= TimeSpan.Zero)
        {
            return cancellationToken.IsCancellationRequested ? Task.FromCanceled(cancellationToken) : Task.CompletedTask;
        }
#if NET8_0_OR_GREATER
        return Task.Delay(delay, time, cancellationToken);
#else
        return TimeProviderTaskExtensions.Delay(time, delay, cancellationToken);
#endif
    }

    /// <summary>Waits for <paramref name="task"/>, giving up (but leaving it running) when the token is cancelled.</summary>
    public static async Task<T> WaitAsync<T>(Task<T> task, CancellationToken cancellationToken)
    {
        if (!cancellationToken.CanBeCanceled || task.IsCompleted)
        {
            return await task.ConfigureAwait(false);
        }
#if NET8_0_OR_GREATER
        return await task.WaitAsync(cancellationToken).ConfigureAwait(false);
#else
        var cancelled = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
        using (cancellationToken.Register(static s => ((TaskCompletionSource<bool>)s!).TrySetResult(true), cancelled))
        {
            if (await Task.WhenAny(task, cancelled.Task).ConfigureAwait(false) != task)
            {
                throw new OperationCanceledException(cancellationToken);
            }
        }
        return await task.ConfigureAwait(false);
#endif
    }

    /// <summary>Waits for <paramref name="task"/>, giving up (but leaving it running) when the token is cancelled.</summary>
    public static Task WaitAsync(Task task, CancellationToken cancellationToken) =>
        WaitAsync(task.ContinueWith(static t => { t.GetAwaiter().GetResult(); return true; }, CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default), cancellationToken);
}
