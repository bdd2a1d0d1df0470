namespace Tallyho.Client.Streams;

/// <summary>When an append returns.</summary>
public enum StreamAck
{
    /// <summary>Once the events are in the single writer's durable state (202).</summary>
    Buffered,

    /// <summary>Once the batch holding them is in the log blob (200).</summary>
    Flushed,
}

/// <summary>The server's answer to an append.</summary>
public sealed record StreamAppendResult
{
    /// <summary>The event type.</summary>
    public string Type { get; init; } = string.Empty;

    /// <summary>The partition the type resolves to.</summary>
    public string Partition { get; init; } = string.Empty;

    /// <summary>The resource (log) the type resolves to.</summary>
    public string Resource { get; init; } = string.Empty;

    /// <summary>Events newly accepted.</summary>
    public int Accepted { get; init; }

    /// <summary>Events ignored because this producer had sent them before (a retry).</summary>
    public int Duplicates { get; init; }

    /// <summary>Highest position in the writer's log this request covers (-1: none).</summary>
    public long LastIndex { get; init; }

    /// <summary>Whether every event of the request is in the log blob.</summary>
    public bool Flushed { get; init; }
}

/// <summary>How a <see cref="StreamProducer"/> numbers its events.</summary>
public sealed class StreamProducerOptions
{
    /// <summary>The producer's id (1-128 printable ASCII characters); default: a new one per producer.</summary>
    public string? ProducerId { get; set; }

    /// <summary>
    /// The first sequence number. Default: the current Unix time in milliseconds times 1000, so a producer that
    /// restarts with the same id starts above everything it sent before (at under 1000 events per millisecond).
    /// </summary>
    public long? FirstSeq { get; set; }

    /// <summary>When the buffer is full, wait for room on the server (up to its limit) instead of retrying after 429.</summary>
    public bool WaitWhenFull { get; set; }

    /// <summary>
    /// Requests in flight at once (default 4), while what they carry fits in one request (500 events); the
    /// events stay in sequence order whatever the number.
    /// </summary>
    public int MaxInFlight { get; set; } = 4;

    /// <summary>How long an append waits for others to share its request (default 5 ms, Kafka's linger.ms; zero: none).</summary>
    public TimeSpan Linger { get; set; } = TimeSpan.FromMilliseconds(5);
}

/// <summary>An event type's route: the partition and resource its events are written to.</summary>
public sealed record StreamRoute
{
    /// <summary>The event type.</summary>
    public string Type { get; init; } = string.Empty;

    /// <summary>The partition.</summary>
    public string Partition { get; init; } = string.Empty;

    /// <summary>The resource (container) its events are written to.</summary>
    public string Resource { get; init; } = string.Empty;

    /// <summary>Increases with every remap.</summary>
    public int Version { get; init; }

    /// <summary><c>table</c> (remapped) or <c>default</c>.</summary>
    public string Source { get; init; } = string.Empty;
}
