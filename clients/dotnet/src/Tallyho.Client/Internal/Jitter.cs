namespace Tallyho.Client.Internal;

/// <summary>Jittered exponential back-off: full jitter over base·2^attempt, capped.</summary>
internal sealed class Backoff
{
    private static readonly Random Shared = new();
    private readonly Func<double> _random;

    public Backoff(Func<double>? random) => _random = random ?? NextShared;

    public double Next() => _random();

    /// <summary>A delay in [cap/2, cap] where cap = min(max, base·2^attempt): never zero, never in lock-step.</summary>
    public TimeSpan Delay(int attempt, TimeSpan baseDelay, TimeSpan maxDelay)
    {
        var exponent = Math.Min(attempt, 20);
        var cap = Math.Min(maxDelay.TotalMilliseconds, baseDelay.TotalMilliseconds * Math.Pow(2, exponent));
        return TimeSpan.FromMilliseconds(cap / 2 + (cap / 2 * _random()));
    }

    private static double NextShared()
    {
        lock (Shared)
        {
            return Shared.NextDouble();
        }
    }
}
