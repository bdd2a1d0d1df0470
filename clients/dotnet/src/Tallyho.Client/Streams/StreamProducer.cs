using Tallyho.Client.Internal;

namespace Tallyho.Client.Streams;

/// <summary>
/// Appends events of one type as one producer. Each event gets the producer's next sequence number when
/// it is appended, and a request is retried with the same numbers, so the server recognises a retry as a
/// duplicate and writes nothing twice.
/// </summary>
/// <remarks>
/// Appends are coalesced as a Kafka producer's records are: those made within
/// <see cref="StreamProducerOptions.Linger"/> of each other share a request (one ack mode per request), and
/// up to <see cref="StreamProducerOptions.MaxInFlight"/> requests are out at once, in call order. The
/// server accepts a gap in sequence numbers, so were a later request to land first, the earlier one's
/// events would look like duplicates and be lost: every request therefore also carries, first, the events
/// of the requests before it that are not yet answered (go-back-N), and a new request goes only while all
/// that fits in one request (500 events). A request's <c>Accepted</c> and <c>Duplicates</c> count those
/// events too. An append whose own request failed completes when a later request carried its events and
/// landed with the ack it asked for (a flushed append is never completed by a buffered answer).
/// </remarks>
public sealed class StreamProducer : IDisposable
{
    /// <summary>Events per request, resent ones included.</summary>
    private const int MaxEventsPerRequest = 500;

    private readonly TallyhoHttp _http;
    private readonly bool _wait;
    private readonly Batcher<Pending, StreamAppendResult> _batcher;
    private readonly object _lock = new();
    private readonly List<Pending> _unanswered = new();
    private long _nextSeq;
    /// <summary>The events in <see cref="_unanswered"/>, read without the lock (the batcher asks under its own).</summary>
    private int _unansweredEvents;
    private bool _disposed;

    internal StreamProducer(TallyhoHttp http, string type, StreamProducerOptions? options)
    {
        _http = http;
        Type = type;
        ProducerId = options?.ProducerId ?? "dotnet-" + Guid.NewGuid().ToString("N");
        _nextSeq = options?.FirstSeq ?? http.Time.GetUtcNow().ToUnixTimeMilliseconds() * 1000;
        _wait = options?.WaitWhenFull ?? false;
        _batcher = new Batcher<Pending, StreamAppendResult>(new BatchPolicy<Pending, StreamAppendResult>
        {
            MaxInFlight = Math.Max(1, options?.MaxInFlight ?? 4),
            Linger = options?.Linger ?? TimeSpan.FromMilliseconds(5),
            Time = http.Time,
            Kind = p => p.Ack.ToString(),
            Size = p => p.Events.Length,
            MaxSize = MaxEventsPerRequest,
            Admits = size => Volatile.Read(ref _unansweredEvents) + size <= MaxEventsPerRequest,
            Send = SendAsync,
        });
    }

    /// <summary>The event type.</summary>
    public string Type { get; }

    /// <summary>This producer's id.</summary>
    public string ProducerId { get; }

    /// <summary>The sequence number the next event gets.</summary>
    public long NextSeq => Interlocked.Read(ref _nextSeq);

    /// <summary>Appends one event.</summary>
    /// <param name="data">Any JSON-serializable value.</param>
    /// <param name="ack">Return once buffered (default) or once flushed to the log.</param>
    /// <param name="cancellationToken">Stops this caller's wait; the event is still sent.</param>
    /// <returns>The answer to the request that carried the event.</returns>
    public Task<StreamAppendResult> AppendAsync(object? data, StreamAck ack = StreamAck.Buffered, CancellationToken cancellationToken = default) =>
        AppendManyAsync(new[] { data }, ack, cancellationToken);

    /// <summary>Appends events, in order, in one request (with other appends' events, before and after them).</summary>
    /// <param name="events">The events' data, each any JSON-serializable value.</param>
    /// <param name="ack">Return once buffered (default) or once flushed to the log.</param>
    /// <param name="cancellationToken">Stops this caller's wait; the events are still sent.</param>
    /// <returns>The answer to the request that carried the events.</returns>
    /// <exception cref="TallyhoException">The request carrying the events failed after its retries; their sequence numbers are not reused.</exception>
    public Task<StreamAppendResult> AppendManyAsync(IEnumerable<object?> events, StreamAck ack = StreamAck.Buffered, CancellationToken cancellationToken = default)
    {
        var data = Guard.NotNull(events, nameof(events)).ToArray();
        if (data.Length == 0)
        {
            throw new ArgumentException("Append at least one event.", nameof(events));
        }

        Task<StreamAppendResult> answered;
        lock (_lock)
        {
            Guard.NotDisposed(_disposed, this);
            var first = _nextSeq;
            Interlocked.Exchange(ref _nextSeq, first + data.Length);
            // Numbered and queued under one lock, so the queue is in sequence order.
            answered = _batcher.AddAsync(new Pending(data.Select((d, i) => new StreamEvent(ProducerId, first + i, d)).ToArray(), ack));
        }

        return Clock.WaitAsync(answered, cancellationToken);
    }

    /// <summary>Sends what lingers at once and waits until every append made so far is answered.</summary>
    /// <param name="cancellationToken">Stops waiting.</param>
    /// <returns>Completes when nothing is waiting or in flight.</returns>
    public Task FlushAsync(CancellationToken cancellationToken = default)
    {
        _batcher.FlushNow();
        return Clock.WaitAsync(_batcher.WhenIdleAsync(), cancellationToken);
    }

    /// <summary>Refuses new appends; those made already still go (<see cref="FlushAsync"/> waits for them).</summary>
    public void Dispose()
    {
        lock (_lock)
        {
            _disposed = true;
        }

        _batcher.FlushNow();
    }

    /// <summary>Keeps <see cref="_unansweredEvents"/> in step with <see cref="_unanswered"/>; under the lock.</summary>
    private void Unanswered(Func<Pending, bool> settled)
    {
        _unanswered.RemoveAll(p => settled(p));
        Volatile.Write(ref _unansweredEvents, _unanswered.Sum(p => p.Events.Length));
    }

    private static bool Covers(StreamAck given, StreamAck wanted) => given == StreamAck.Flushed || wanted == StreamAck.Buffered;

    private async Task<IReadOnlyList<StreamAppendResult>> SendAsync(IReadOnlyList<Pending> batch)
    {
        Pending[] carried;
        lock (_lock)
        {
            carried = _unanswered.ToArray();
            _unanswered.AddRange(batch);
            Unanswered(_ => false);
        }

        var ack = batch[0].Ack;
        var query = $"?ack={(ack == StreamAck.Flushed ? "flushed" : "buffered")}{(_wait ? "&wait=true" : string.Empty)}";
        StreamAppendResult answer;
        try
        {
            answer = await _http.SendJsonAsync<StreamAppendResult>(
                new TallyhoRequest(HttpMethod.Post, $"streams/{TallyhoHttp.Segment(Type)}/events{query}")
                {
                    Body = new { events = carried.Concat(batch).SelectMany(p => p.Events).ToArray() },
                    Idempotent = true,
                },
                CancellationToken.None).ConfigureAwait(false);
        }
        catch (Exception)
        {
            lock (_lock)
            {
                // Settled now: no later request needs to carry these for their order's sake.
                Unanswered(p => batch.Contains(p));
                // A later request that carried them may have landed them already, with the ack they asked for.
                if (batch.All(p => p.Landed is { } landed && Covers(landed.Ack, p.Ack)))
                {
                    return batch.Select(p => p.Landed!.Value.Answer).ToArray();
                }
            }

            throw;
        }

        lock (_lock)
        {
            // Every event of the request is in the writer's state now (accepted, or accepted before).
            foreach (var p in carried.Concat(batch))
            {
                if (p.Landed is not { } landed || Covers(ack, landed.Ack))
                {
                    p.Landed = (answer, ack);
                }
            }

            Unanswered(p => carried.Contains(p) || batch.Contains(p));
        }

        return batch.Select(_ => answer).ToArray();
    }

    private sealed class Pending
    {
        public Pending(StreamEvent[] events, StreamAck ack)
        {
            Events = events;
            Ack = ack;
        }

        public StreamEvent[] Events { get; }

        public StreamAck Ack { get; }

        /// <summary>The answer of a request that carried these events and succeeded, with that request's ack.</summary>
        public (StreamAppendResult Answer, StreamAck Ack)? Landed { get; set; }
    }

    private sealed record StreamEvent(string Producer, long Seq, object? Data);
}
