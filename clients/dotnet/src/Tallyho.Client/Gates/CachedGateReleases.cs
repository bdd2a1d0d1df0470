using System.Collections.Concurrent;
using System.Diagnostics;
using System.Net;
using Tallyho.Client.Internal;

namespace Tallyho.Client.Gates;

/// <summary>
/// Cached gate checks: an answer is reused for <see cref="GateReleaseCacheOptions.CacheDuration"/>, then the
/// gate is read again with <c>If-None-Match</c> (a 304 costs almost nothing). It never throws for the service's
/// sake: when the state cannot be learned (unreachable, timed out, 5xx, no such gate) it answers the last state
/// it saw, or the caller's default when it saw none, and reports the fallback. A failed read is cached too, so
/// an outage costs one request per gate per cache period. Concurrent checks of one gate share one read; only
/// the caller's own cancellation throws.
/// </summary>
public sealed class CachedGateReleases : IGateReleases
{
    private readonly TallyhoHttp _http;
    private readonly GateReleaseCacheOptions _options;
    private readonly ConcurrentDictionary<string, Entry> _entries = new(StringComparer.Ordinal);
    private readonly ConcurrentDictionary<string, Lazy<Task<Entry>>> _reads = new(StringComparer.Ordinal);

    internal CachedGateReleases(TallyhoHttp http, GateReleaseCacheOptions? options)
    {
        _http = http;
        _options = options ?? new GateReleaseCacheOptions();
    }

    /// <inheritdoc />
    public async Task<bool> IsReleasedAsync(string gate, bool defaultValue, CancellationToken cancellationToken = default)
    {
        Guard.NotEmpty(gate, nameof(gate));
        cancellationToken.ThrowIfCancellationRequested();
        if (!_entries.TryGetValue(gate, out var entry) || _http.Time.GetElapsedTime(entry.CheckedAt) >= _options.CacheDuration)
        {
            entry = await Clock.WaitAsync(ReadOnceAsync(gate), cancellationToken).ConfigureAwait(false);
        }

        if (entry.Failure is null && entry.Released is { } released)
        {
            return released;
        }

        var fallback = entry.Released is { } known
            ? new GateReleaseFallback(gate, known, GateReleaseFallbackSource.LastKnown, entry.Failure!)
            : new GateReleaseFallback(gate, defaultValue, GateReleaseFallbackSource.Default, entry.Failure!);
        if (_options.OnFallback is { } report)
        {
            report(fallback);
        }
        else
        {
            Trace.TraceWarning($"Tallyho: gate {gate} answered {fallback.Answer} from the {(fallback.Source == GateReleaseFallbackSource.Default ? "default" : "last known state")}: {fallback.Error.Message}");
        }

        return fallback.Answer;
    }

    /// <summary>Forgets the cached answer of one gate, or of all (e.g. after the app released a gate itself).</summary>
    /// <param name="gate">The gate, or null for all.</param>
    public void Invalidate(string? gate = null)
    {
        if (gate is null)
        {
            _entries.Clear();
        }
        else
        {
            _entries.TryRemove(gate, out _);
        }
    }

    private Task<Entry> ReadOnceAsync(string gate)
    {
        var read = _reads.GetOrAdd(gate, g => new Lazy<Task<Entry>>(() => ReadAsync(g)));
        return read.Value.ContinueWith(
            t =>
            {
                // Only this read's slot: a newer read of the gate may have taken it already.
                ((ICollection<KeyValuePair<string, Lazy<Task<Entry>>>>)_reads).Remove(new KeyValuePair<string, Lazy<Task<Entry>>>(gate, read));
                return t.GetAwaiter().GetResult();
            },
            CancellationToken.None,
            TaskContinuationOptions.ExecuteSynchronously,
            TaskScheduler.Default);
    }

    private async Task<Entry> ReadAsync(string gate)
    {
        _entries.TryGetValue(gate, out var previous);
        var checkedAt = _http.Time.GetTimestamp();
        using var timeout = new CancellationTokenSource();
        using var timer = _http.Time.CreateTimer(static s => ((CancellationTokenSource)s!).Cancel(), timeout, _options.Timeout, Timeout.InfiniteTimeSpan);
        Entry entry;
        try
        {
            var request = new TallyhoRequest(HttpMethod.Get, $"gates/{TallyhoHttp.Segment(gate)}")
            {
                Idempotent = true,
                MaxRetries = 0,
                Expected = new[] { 304 },
                Headers = previous?.ETag is null ? null : new Dictionary<string, string> { ["If-None-Match"] = previous.ETag },
            };
            // WaitAsync too: a handler that ignores the token (a stuck proxy, a test double) must not hold the check.
            using var response = await Clock.WaitAsync(_http.SendAsync(request, timeout.Token), timeout.Token).ConfigureAwait(false);
            if (response.StatusCode == HttpStatusCode.NotModified && previous?.Released is { } unchanged)
            {
                entry = new Entry(unchanged, previous.ETag, checkedAt, null);
            }
            else
            {
                var state = await TallyhoHttp.ReadJsonAsync<GateState>(response, timeout.Token).ConfigureAwait(false);
                entry = new Entry(state.IsReleased, response.Headers.ETag?.ToString(), checkedAt, null);
            }
        }
        catch (OperationCanceledException ex) when (timeout.IsCancellationRequested)
        {
            entry = new Entry(previous?.Released, previous?.ETag, checkedAt, new TallyhoException(0, "Timeout", $"GET gates/{gate}: no answer within {_options.Timeout}", innerException: ex));
        }
        catch (Exception ex) when (ex is TallyhoException or HttpRequestException or IOException)
        {
            entry = new Entry(previous?.Released, previous?.ETag, checkedAt, ex);
        }

        _entries[gate] = entry;
        return entry;
    }

    private sealed record Entry(bool? Released, string? ETag, long CheckedAt, Exception? Failure);
}
