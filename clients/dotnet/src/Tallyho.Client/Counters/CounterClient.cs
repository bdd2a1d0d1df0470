using Tallyho.Client.Internal;

namespace Tallyho.Client.Counters;

/// <summary>
/// Counters. Increments to one counter are coalesced as a Kafka producer's records are: those made within
/// <see cref="CounterClientOptions.Linger"/> of each other, and those made while the requests in flight
/// (up to <see cref="CounterClientOptions.MaxInFlight"/>) are out, are added up and sent as one request,
/// with one <c>Idempotency-Key</c> per batch that its retries reuse, so a batch is counted exactly once.
/// Each <see cref="IncrementAsync"/> completes when the batch holding it is stored.
/// <see cref="FlushAsync"/> and <see cref="DisposeAsync"/> send what lingers at once and wait for everything.
/// </summary>
public sealed class CounterClient : IAsyncDisposable
{
    private readonly TallyhoHttp _http;
    private readonly CounterClientOptions _options;
    private readonly object _lock = new();
    private readonly Dictionary<string, Batcher<long, bool>> _counters = new(StringComparer.Ordinal);
    private long _requests;
    private bool _disposed;

    internal CounterClient(TallyhoHttp http, CounterClientOptions? options)
    {
        _http = http;
        _options = options ?? new CounterClientOptions();
    }

    /// <summary>Increment requests sent so far (one per coalesced batch, not counting retries).</summary>
    public long RequestsSent => Interlocked.Read(ref _requests);

    /// <summary>Counters with their settings, in name order (admin key); read one for its value.</summary>
    /// <param name="cancellationToken">Stops the listing.</param>
    /// <returns>The counters, a page at a time.</returns>
    public AsyncPageable<CounterInfo> ListAsync(CancellationToken cancellationToken = default) =>
        Lists.Of<CounterInfo>(_http, "counters", KeyLevel.Admin, cancellationToken);

    /// <summary>Adds <paramref name="by"/> to a counter.</summary>
    /// <param name="name">The counter.</param>
    /// <param name="by">What to add (default 1; negative for an adjustment).</param>
    /// <param name="cancellationToken">Stops this caller's wait; the increment is still sent.</param>
    /// <returns>Completes when the batch holding this increment is stored; faults if that batch failed.</returns>
    public Task IncrementAsync(string name, long by = 1, CancellationToken cancellationToken = default)
    {
        Guard.NotEmpty(name, nameof(name));
        Batcher<long, bool>? counter;
        lock (_lock)
        {
            Guard.NotDisposed(_disposed, this);
            if (!_counters.TryGetValue(name, out counter))
            {
                counter = new Batcher<long, bool>(new BatchPolicy<long, bool>
                {
                    MaxInFlight = Math.Max(1, _options.MaxInFlight),
                    Linger = _options.Linger,
                    Time = _http.Time,
                    Send = async increments =>
                    {
                        await SendSumAsync(name, increments.Sum()).ConfigureAwait(false);
                        return new bool[increments.Count];
                    },
                });
                _counters.Add(name, counter);
            }
        }

        return Clock.WaitAsync(counter.AddAsync(by), cancellationToken);
    }

    /// <summary>Sends what lingers at once and waits until every increment made so far is stored (or has failed).</summary>
    /// <param name="cancellationToken">Stops waiting.</param>
    /// <returns>Completes when no increment is pending.</returns>
    public async Task FlushAsync(CancellationToken cancellationToken = default)
    {
        Batcher<long, bool>[] counters;
        lock (_lock)
        {
            counters = _counters.Values.ToArray();
        }

        foreach (var counter in counters)
        {
            counter.FlushNow();
        }

        await Clock.WaitAsync(Task.WhenAll(counters.Select(c => c.WhenIdleAsync())), cancellationToken).ConfigureAwait(false);
    }

    /// <summary>A counter's value.</summary>
    /// <param name="name">The counter.</param>
    /// <param name="consistent">Also count hits that arrived too late for the rollup watermark (twice the storage reads).</param>
    /// <param name="cancellationToken">Cancels the request.</param>
    /// <returns>The value.</returns>
    public Task<CounterValue> GetAsync(string name, bool consistent = false, CancellationToken cancellationToken = default) =>
        _http.SendJsonAsync<CounterValue>(
            new TallyhoRequest(HttpMethod.Get, $"counters/{TallyhoHttp.Segment(name)}{(consistent ? "?consistent=true" : string.Empty)}") { Idempotent = true },
            cancellationToken);

    /// <summary>Creates a counter or changes its settings (admin key).</summary>
    /// <param name="name">The counter.</param>
    /// <param name="settings">Its settings; omitted ones take the server's defaults.</param>
    /// <param name="cancellationToken">Cancels the request.</param>
    /// <returns>A task that completes when the counter exists with these settings.</returns>
    public async Task CreateAsync(string name, CounterSettings? settings = null, CancellationToken cancellationToken = default)
    {
        using var response = await _http.SendAsync(
            new TallyhoRequest(HttpMethod.Put, $"counters/{TallyhoHttp.Segment(name)}") { Body = settings ?? new CounterSettings(), Key = KeyLevel.Admin, Idempotent = true },
            cancellationToken).ConfigureAwait(false);
    }

    /// <summary>Sends what is pending, then refuses new increments.</summary>
    /// <returns>Completes when every increment is stored (or has failed).</returns>
    public async ValueTask DisposeAsync()
    {
        lock (_lock)
        {
            _disposed = true;
        }

        try
        {
            await FlushAsync().ConfigureAwait(false);
        }
        catch (TallyhoException)
        {
            // Each failed batch has faulted the increments it held; their callers see it.
        }
    }

    private async Task SendSumAsync(string name, long sum)
    {
        while (sum != 0)
        {
            var by = Math.Max(-_options.MaxIncrement, Math.Min(_options.MaxIncrement, sum));
            Interlocked.Increment(ref _requests);
            using var response = await _http.SendAsync(
                new TallyhoRequest(HttpMethod.Post, $"counters/{TallyhoHttp.Segment(name)}/increment")
                {
                    Body = new { by },
                    IdempotencyKey = Guid.NewGuid().ToString("N"),
                    Idempotent = true,
                },
                CancellationToken.None).ConfigureAwait(false);
            sum -= by;
        }
    }
}
