using Tallyho.Client.Internal;

namespace Tallyho.Client.Sequences;

/// <summary>
/// Order numbers from one sequence, unique across every process that asks. <see cref="NextAsync"/> hands
/// out numbers from a block reserved with a single <c>count: N</c> request; the next block is reserved in
/// the background when 10% of the current one is left, with at most one reservation in flight. N adapts
/// toward one reservation per <see cref="SequenceClientOptions.RefillTarget"/>. Every reservation carries an
/// <c>Idempotency-Key</c> that its retries reuse, so a lost answer never burns a second block.
/// Numbers are unique, increasing within this client, and not globally ordered; numbers a process held
/// when it stopped are never issued (gaps are expected).
/// </summary>
public sealed class SequenceClient
{
    private readonly TallyhoHttp _http;
    private readonly SequenceClientOptions _options;
    private readonly object _lock = new();
    private readonly Queue<SequenceNumber> _buffer = new();
    private Task? _reservation;
    private Pending? _pending;
    private int _blockSize;
    private int _lastBlockSize;
    private long _lastReservationAt = -1;
    private SequenceSettings? _settings;

    internal SequenceClient(TallyhoHttp http, string name, SequenceClientOptions? options)
    {
        _http = http;
        Name = name;
        _options = options ?? new SequenceClientOptions();
        if (_options.MinBlockSize < 1 || _options.MaxBlockSize > 1000 || _options.MinBlockSize > _options.MaxBlockSize)
        {
            throw new ArgumentException("Block sizes must satisfy 1 <= MinBlockSize <= MaxBlockSize <= 1000.", nameof(options));
        }

        _blockSize = Clamp(_options.InitialBlockSize);
    }

    /// <summary>The sequence's name.</summary>
    public string Name { get; }

    /// <summary>The size of the next block this client will reserve.</summary>
    public int BlockSize
    {
        get
        {
            lock (_lock)
            {
                return _blockSize;
            }
        }
    }

    /// <summary>Numbers this client holds and has not handed out.</summary>
    public int Remaining
    {
        get
        {
            lock (_lock)
            {
                return _buffer.Count;
            }
        }
    }

    /// <summary>The next number, formatted (<c>ORD-0012345-9</c>).</summary>
    /// <param name="cancellationToken">Stops this caller's wait; a reservation under way goes on for the others.</param>
    /// <returns>A number no other caller anywhere gets.</returns>
    public async ValueTask<string> NextAsync(CancellationToken cancellationToken = default) =>
        (await NextNumberAsync(cancellationToken).ConfigureAwait(false)).Formatted;

    /// <summary>The next number, raw and formatted.</summary>
    /// <param name="cancellationToken">Stops this caller's wait; a reservation under way goes on for the others.</param>
    /// <returns>A number no other caller anywhere gets.</returns>
    public async ValueTask<SequenceNumber> NextNumberAsync(CancellationToken cancellationToken = default)
    {
        while (true)
        {
            Task reservation;
            lock (_lock)
            {
                if (_buffer.Count > 0)
                {
                    var number = _buffer.Dequeue();
                    if (_buffer.Count <= Math.Floor(_lastBlockSize * _options.PrefetchFraction))
                    {
                        StartReservationLocked();
                    }

                    return number;
                }

                reservation = StartReservationLocked();
            }

            await Clock.WaitAsync(reservation, cancellationToken).ConfigureAwait(false);
        }
    }

    /// <summary>The sequence's settings and high-water mark.</summary>
    /// <param name="cancellationToken">Cancels the request.</param>
    /// <returns>The sequence.</returns>
    /// <exception cref="TallyhoException">With code <c>NotFound</c> when there is no such sequence.</exception>
    public async Task<SequenceInfo> GetAsync(CancellationToken cancellationToken = default)
    {
        var info = await _http.SendJsonAsync<SequenceInfo>(
            new TallyhoRequest(HttpMethod.Get, Path()) { Idempotent = true }, cancellationToken).ConfigureAwait(false);
        _settings = info.Settings;
        return info;
    }

    /// <summary>Creates the sequence (admin key), or confirms the settings of an existing one.</summary>
    /// <param name="settings">Settings for a new sequence; omitted ones take the server's defaults.</param>
    /// <param name="cancellationToken">Cancels the request.</param>
    /// <returns>The sequence.</returns>
    /// <exception cref="TallyhoException">With code <c>Conflict</c> when it exists with other settings.</exception>
    public async Task<SequenceInfo> CreateAsync(SequenceSettings? settings = null, CancellationToken cancellationToken = default)
    {
        var info = await _http.SendJsonAsync<SequenceInfo>(
            new TallyhoRequest(HttpMethod.Put, Path()) { Body = settings ?? new SequenceSettings(), Key = KeyLevel.Admin, Idempotent = true },
            cancellationToken).ConfigureAwait(false);
        _settings = info.Settings;
        return info;
    }

    /// <summary>
    /// Checks a typed-in number locally (prefix, digits, Damm check digit, range) against the sequence's
    /// settings, which are read from the server once and then kept.
    /// </summary>
    /// <param name="formatted">What was typed.</param>
    /// <param name="cancellationToken">Cancels the first read of the settings.</param>
    /// <returns>Valid with the number, or not valid with the reason.</returns>
    public async ValueTask<SequenceValidation> ValidateAsync(string formatted, CancellationToken cancellationToken = default)
    {
        var settings = _settings ?? (await GetAsync(cancellationToken).ConfigureAwait(false)).Settings;
        return SequenceFormat.Validate(settings, formatted);
    }

    private string Path(string suffix = "") => $"sequences/{TallyhoHttp.Segment(Name)}{suffix}";

    /// <summary>The reservation in flight, or a new one. At most one at a time.</summary>
    private Task StartReservationLocked()
    {
        if (_reservation is { IsCompleted: false })
        {
            return _reservation;
        }

        if (_pending is null)
        {
            AdaptLocked();
            _pending = new Pending(_blockSize, Guid.NewGuid().ToString("N"));
        }

        var pending = _pending;
        var reservation = ReserveAsync(pending);
        _reservation = reservation;

        // A background prefetch that fails is retried by the next caller; nobody may be awaiting it.
        _ = reservation.ContinueWith(static t => _ = t.Exception, CancellationToken.None, TaskContinuationOptions.OnlyOnFaulted, TaskScheduler.Default);
        return reservation;
    }

    private async Task ReserveAsync(Pending pending)
    {
        await Task.Yield();
        var result = await _http.SendJsonAsync<NextResult>(
            new TallyhoRequest(HttpMethod.Post, Path("/next"))
            {
                Body = new { count = pending.Count },
                IdempotencyKey = pending.Key,
                Idempotent = true,
            },
            CancellationToken.None).ConfigureAwait(false);
        lock (_lock)
        {
            // Until it succeeds, the same key and count are sent again, so a reservation whose answer was lost is not burned.
            _pending = null;
            _lastBlockSize = result.Numbers.Count;
            for (var i = 0; i < result.Numbers.Count; i++)
            {
                _buffer.Enqueue(new SequenceNumber(result.Numbers[i], result.Formatted[i]));
            }
        }
    }

    /// <summary>Doubles the block when the last one lasted under half the target, halves it when over twice.</summary>
    private void AdaptLocked()
    {
        var now = _http.Time.GetTimestamp();
        if (_lastReservationAt >= 0)
        {
            var lasted = _http.Time.GetElapsedTime(_lastReservationAt, now);
            if (lasted < TimeSpan.FromTicks(_options.RefillTarget.Ticks / 2))
            {
                _blockSize = Clamp(_blockSize * 2);
            }
            else if (lasted > TimeSpan.FromTicks(_options.RefillTarget.Ticks * 2))
            {
                _blockSize = Clamp(_blockSize / 2);
            }
        }

        _lastReservationAt = now;
    }

    private int Clamp(int size) => Math.Max(_options.MinBlockSize, Math.Min(_options.MaxBlockSize, size));

    private sealed record Pending(int Count, string Key);

    private sealed record NextResult(string Sequence, IReadOnlyList<long> Numbers, IReadOnlyList<string> Formatted);
}
