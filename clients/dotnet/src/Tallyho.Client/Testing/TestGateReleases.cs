using System.Collections.Concurrent;
using Tallyho.Client.Gates;

namespace Tallyho.Client.Testing;

/// <summary>
/// A test double of <see cref="IGateReleases"/> for your app's own tests (like LaunchDarkly's TestData): gate
/// states set in memory, no network. It answers as <see cref="TallyhoClient.Releases"/> does: a gate never set,
/// or made unreachable, answers the caller's default, recorded in <see cref="Fallbacks"/>.
/// </summary>
public sealed class TestGateReleases : IGateReleases
{
    private readonly ConcurrentDictionary<string, bool> _states = new(StringComparer.Ordinal);
    private readonly ConcurrentDictionary<string, bool> _unreachable = new(StringComparer.Ordinal);
    private readonly ConcurrentQueue<GateReleaseFallback> _fallbacks = new();

    /// <summary>Creates the double with the given gate states, e.g. <c>new() { ["launch"] = true }</c>.</summary>
    /// <param name="states">Gate name to released.</param>
    public TestGateReleases(IReadOnlyDictionary<string, bool>? states = null)
    {
        foreach (var pair in states ?? new Dictionary<string, bool>())
        {
            _states[pair.Key] = pair.Value;
        }
    }

    /// <summary>Every answer that was the caller's default, in order.</summary>
    public IReadOnlyCollection<GateReleaseFallback> Fallbacks => _fallbacks.ToArray();

    /// <summary>Sets a gate's state.</summary>
    /// <param name="gate">The gate.</param>
    /// <param name="released">Released or closed.</param>
    /// <returns>This double, for chaining.</returns>
    public TestGateReleases Set(string gate, bool released)
    {
        _unreachable.TryRemove(gate, out _);
        _states[gate] = released;
        return this;
    }

    /// <summary>Releases a gate.</summary>
    /// <param name="gate">The gate.</param>
    /// <returns>This double, for chaining.</returns>
    public TestGateReleases Release(string gate) => Set(gate, true);

    /// <summary>Closes a gate.</summary>
    /// <param name="gate">The gate.</param>
    /// <returns>This double, for chaining.</returns>
    public TestGateReleases Close(string gate) => Set(gate, false);

    /// <summary>From now on the gate cannot be read (until it is set again): callers get their default.</summary>
    /// <param name="gate">The gate.</param>
    /// <returns>This double, for chaining.</returns>
    public TestGateReleases Unreachable(string gate)
    {
        _states.TryRemove(gate, out _);
        _unreachable[gate] = true;
        return this;
    }

    /// <inheritdoc />
    public Task<bool> IsReleasedAsync(string gate, bool defaultValue, CancellationToken cancellationToken = default)
    {
        if (cancellationToken.IsCancellationRequested)
        {
            return Task.FromCanceled<bool>(cancellationToken);
        }

        if (_states.TryGetValue(gate, out var released))
        {
            return Task.FromResult(released);
        }

        var why = _unreachable.ContainsKey(gate) ? "unreachable" : "never set";
        _fallbacks.Enqueue(new GateReleaseFallback(gate, defaultValue, GateReleaseFallbackSource.Default, new InvalidOperationException($"Gate {gate}: {why} (TestGateReleases).")));
        return Task.FromResult(defaultValue);
    }
}
