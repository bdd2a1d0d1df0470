namespace Tallyho.Client.Gates;

/// <summary>
/// Whether a gate is released, for production code paths. Type your code against this interface:
/// <see cref="TallyhoClient.Releases"/> implements it with a cache, <see cref="Testing.TestGateReleases"/>
/// with states your tests set in memory.
/// </summary>
public interface IGateReleases
{
    /// <summary>Whether <paramref name="gate"/> is released; <paramref name="defaultValue"/> when that cannot be learned.</summary>
    /// <param name="gate">The gate's name.</param>
    /// <param name="defaultValue">The answer when the gate's state cannot be learned and none was seen before.</param>
    /// <param name="cancellationToken">Stops waiting (the read goes on for other callers).</param>
    /// <returns>The gate's state, the last one seen, or the default.</returns>
    Task<bool> IsReleasedAsync(string gate, bool defaultValue, CancellationToken cancellationToken = default);
}

/// <summary>Where an answer that was not the service's own came from.</summary>
public enum GateReleaseFallbackSource
{
    /// <summary>The state seen before the failure.</summary>
    LastKnown,

    /// <summary>The caller's default: no state had been seen.</summary>
    Default,
}

/// <summary>An answer of <see cref="IGateReleases.IsReleasedAsync"/> that was not the service's own.</summary>
/// <param name="Gate">The gate.</param>
/// <param name="Answer">What the call answered.</param>
/// <param name="Source">The last known state or the caller's default.</param>
/// <param name="Error">Why the state could not be learned.</param>
public sealed record GateReleaseFallback(string Gate, bool Answer, GateReleaseFallbackSource Source, Exception Error);

/// <summary>How <see cref="TallyhoClient.Releases"/> caches gate states and reports fallbacks.</summary>
public sealed class GateReleaseCacheOptions
{
    /// <summary>How long an answer is reused before the gate is read again (default 30 s).</summary>
    public TimeSpan CacheDuration { get; set; } = TimeSpan.FromSeconds(30);

    /// <summary>Timeout of one read (default 5 s); it is not retried, the next check after <see cref="CacheDuration"/> is.</summary>
    public TimeSpan Timeout { get; set; } = TimeSpan.FromSeconds(5);

    /// <summary>Told about every fallback answer. When null, fallbacks are written with <c>Trace.TraceWarning</c>.</summary>
    public Action<GateReleaseFallback>? OnFallback { get; set; }
}
