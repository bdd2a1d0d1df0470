using Tallyho.Client.Internal;

namespace Tallyho.Client.Streams;

/// <summary>
/// Appends events of one type as one producer. Each event gets the producer's next sequence number when
/// it is appended, and the request is retried with the same numbers, so the server recognises a retry as a
/// duplicate and writes nothing twice. Appends of one producer go out one at a time, in order.
/// </summary>
public sealed class StreamProducer : IDisposable
{
    private readonly TallyhoHttp _http;
    private readonly SemaphoreSlim _order = new(1, 1);
    private readonly bool _wait;
    private long _nextSeq;

    internal StreamProducer(TallyhoHttp http, string type, StreamProducerOptions? options)
    {
        _http = http;
        Type = type;
        ProducerId = options?.ProducerId ?? "dotnet-" + Guid.NewGuid().ToString("N");
        _nextSeq = options?.FirstSeq ?? http.Time.GetUtcNow().ToUnixTimeMilliseconds() * 1000;
        _wait = options?.WaitWhenFull ?? false;
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
    /// <param name="cancellationToken">Cancels the request.</param>
    /// <returns>The server's answer.</returns>
    public Task<StreamAppendResult> AppendAsync(object? data, StreamAck ack = StreamAck.Buffered, CancellationToken cancellationToken = default) =>
        AppendManyAsync(new[] { data }, ack, cancellationToken);

    /// <summary>Appends events as one request: accepted whole or not at all.</summary>
    /// <param name="events">The events' data, each any JSON-serializable value.</param>
    /// <param name="ack">Return once buffered (default) or once flushed to the log.</param>
    /// <param name="cancellationToken">Cancels the request.</param>
    /// <returns>The server's answer.</returns>
    /// <exception cref="TallyhoException">The append failed after its retries; its sequence numbers are not reused.</exception>
    public async Task<StreamAppendResult> AppendManyAsync(IEnumerable<object?> events, StreamAck ack = StreamAck.Buffered, CancellationToken cancellationToken = default)
    {
        var data = Guard.NotNull(events, nameof(events)).ToArray();
        if (data.Length == 0)
        {
            throw new ArgumentException("Append at least one event.", nameof(events));
        }

        await _order.WaitAsync(cancellationToken).ConfigureAwait(false);
        try
        {
            var first = _nextSeq;
            var batch = data.Select((d, i) => new StreamEvent(ProducerId, first + i, d)).ToArray();
            Interlocked.Exchange(ref _nextSeq, first + data.Length);
            var query = $"?ack={(ack == StreamAck.Flushed ? "flushed" : "buffered")}{(_wait ? "&wait=true" : string.Empty)}";
            return await _http.SendJsonAsync<StreamAppendResult>(
                new TallyhoRequest(HttpMethod.Post, $"streams/{TallyhoHttp.Segment(Type)}/events{query}")
                {
                    Body = new { events = batch },
                    Idempotent = true,
                },
                cancellationToken).ConfigureAwait(false);
        }
        finally
        {
            _order.Release();
        }
    }

    /// <summary>Releases the ordering lock.</summary>
    public void Dispose() => _order.Dispose();

    private sealed record StreamEvent(string Producer, long Seq, object? Data);
}
