using System.Text.Json;
using System.Text.Json.Serialization;
using Microsoft.Extensions.Logging;

namespace Tallyho.Client.Jobs;

/// <summary>One item of a leased batch.</summary>
public sealed record LeasedItem
{
    /// <summary>The item's id, unique within its job.</summary>
    public string Id { get; init; } = string.Empty;

    /// <summary>The job it belongs to.</summary>
    public string JobId { get; init; } = string.Empty;

    /// <summary>1 for the first attempt; a retried, left-out or expired item comes back with the next.</summary>
    public int Attempt { get; init; }

    /// <summary>The item as submitted.</summary>
    public JsonElement Data { get; init; }

    /// <summary>
    /// The W3C traceparent of the job's submission, when it was traced: a link from the worker's span of the item or
    /// batch (<c>ActivityContext.Parse(item.Traceparent, null)</c>); <see cref="JobWorker"/> links it (<see cref="JobWorkerTracing"/>).
    /// </summary>
    public string? Traceparent { get; init; }
}

/// <summary>A leased batch: its items are the worker's until <see cref="ExpiresAt"/> (extended by heartbeats).</summary>
public sealed record Lease
{
    /// <summary>The lease's id; each extension answers a new one.</summary>
    public string LeaseId { get; init; } = string.Empty;

    /// <summary>The processor it is of.</summary>
    public string Processor { get; init; } = string.Empty;

    /// <summary>When the lease runs out unless extended.</summary>
    public DateTimeOffset ExpiresAt { get; init; }

    /// <summary>The processor's lease duration.</summary>
    public int LeaseSeconds { get; init; }

    /// <summary>The items.</summary>
    public IReadOnlyList<LeasedItem> Items { get; init; } = Array.Empty<LeasedItem>();

    /// <summary>
    /// The W3C traceparent of the lease (the app's receive span; null when the app does not trace): the parent of the
    /// worker's spans of the batch. <see cref="JobWorker"/> makes it so (<see cref="JobWorkerTracing"/>).
    /// </summary>
    public string? Traceparent { get; init; }
}

/// <summary>
/// The result of one leased item: <see cref="Succeeded"/> (with an output) and <see cref="Failed"/> (with a code
/// and a reason) are final; <see cref="Retry"/> brings the item back later as its next attempt, and past the
/// processor's maxAttempts it fails with that reason.
/// </summary>
public sealed record ItemResult
{
    private ItemResult(string id, string status)
    {
        Id = id;
        Status = status;
    }

    /// <summary>The item's id.</summary>
    public string Id { get; }

    /// <summary><c>succeeded</c>, <c>failed</c> or <c>retry</c>.</summary>
    public string Status { get; }

    /// <summary>The output of a succeeded item (any JSON).</summary>
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public object? Output { get; private init; }

    /// <summary>A failure's short machine-readable cause.</summary>
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? Code { get; private init; }

    /// <summary>Why it failed, or why it should be retried.</summary>
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? Reason { get; private init; }

    /// <summary>The item succeeded.</summary>
    /// <param name="id">The item's id.</param>
    /// <param name="output">What it produced (serialized as JSON), or null.</param>
    /// <returns>The result.</returns>
    public static ItemResult Succeeded(string id, object? output = null) => new(id, "succeeded") { Output = output };

    /// <summary>The item failed for good.</summary>
    /// <param name="id">The item's id.</param>
    /// <param name="code">A short cause, e.g. <c>notAnImage</c>.</param>
    /// <param name="reason">Why.</param>
    /// <returns>The result.</returns>
    public static ItemResult Failed(string id, string code, string reason) => new(id, "failed") { Code = code, Reason = reason };

    /// <summary>The item should be tried again later (counts an attempt).</summary>
    /// <param name="id">The item's id.</param>
    /// <param name="reason">Why.</param>
    /// <returns>The result.</returns>
    public static ItemResult Retry(string id, string reason) => new(id, "retry") { Reason = reason };
}

/// <summary>How a <see cref="JobWorker"/> leases and keeps its batches.</summary>
public sealed class JobWorkerOptions
{
    /// <summary>Batches in hand at once (default 1).</summary>
    public int Concurrency { get; set; } = 1;

    /// <summary>At most this many items per batch (default and ceiling: the processor's batchSize).</summary>
    public int? BatchSize { get; set; }

    /// <summary>How long one lease request waits for a batch (long poll; default 20 s, at most 60).</summary>
    public TimeSpan Wait { get; set; } = TimeSpan.FromSeconds(20);

    /// <summary>Between heartbeats (default a third of the lease).</summary>
    public TimeSpan? Heartbeat { get; set; }

    /// <summary>
    /// Errors the loop survives (a failed lease request, a refused completion). Default: the first error of each kind
    /// (exception type, status and code) is logged as a warning to <see cref="Logger"/>; its repeats are not.
    /// </summary>
    public Action<Exception>? OnError { get; set; }

    /// <summary>Where the default <see cref="OnError"/> logs (default: standard error).</summary>
    public ILogger? Logger { get; set; }
}
