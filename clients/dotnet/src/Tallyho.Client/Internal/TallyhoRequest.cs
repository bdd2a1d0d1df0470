namespace Tallyho.Client.Internal;

/// <summary>Which key a request carries in <c>x-functions-key</c>.</summary>
internal enum KeyLevel
{
    Function,
    Admin,
}

/// <summary>One API call, built once and sent as many times as the retries need (same body, same Idempotency-Key).</summary>
internal sealed class TallyhoRequest
{
    public TallyhoRequest(HttpMethod method, string path)
    {
        Method = method;
        Path = path;
    }

    public HttpMethod Method { get; }

    /// <summary>Below <c>api/</c>, already escaped, e.g. <c>sequences/orders/next</c>.</summary>
    public string Path { get; }

    /// <summary>A JSON body (serialized once), or null.</summary>
    public object? Body { get; init; }

    public string? IdempotencyKey { get; init; }

    public KeyLevel Key { get; init; } = KeyLevel.Function;

    /// <summary>
    /// Whether sending the request twice does no harm (GET, PUT, DELETE, a keyed POST, a stream append),
    /// so a lost connection or a 502/504 may be retried. 429 and 503 are retried either way: the server
    /// answers them before doing anything.
    /// </summary>
    public bool Idempotent { get; init; }

    /// <summary>Statuses other than 2xx that the caller handles itself (e.g. 304, or 404 for a probe).</summary>
    public IReadOnlyCollection<int> Expected { get; init; } = Array.Empty<int>();

    public IReadOnlyDictionary<string, string>? Headers { get; init; }

    /// <summary>Return once the headers are in (for event streams).</summary>
    public bool Streaming { get; init; }

    /// <summary>Overrides the client's retry count (0: a single try).</summary>
    public int? MaxRetries { get; init; }
}
