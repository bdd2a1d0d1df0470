using System.Text.Json;

namespace Tallyho.Client.Jobs;

/// <summary>A job's item counts.</summary>
public sealed record JobTotals
{
    /// <summary>Items in the job.</summary>
    public int Items { get; init; }

    /// <summary>Items that succeeded.</summary>
    public int Succeeded { get; init; }

    /// <summary>Items that failed for good.</summary>
    public int Failed { get; init; }

    /// <summary>Items that had no result when the job was cancelled.</summary>
    public int Cancelled { get; init; }

    /// <summary>Items not settled yet.</summary>
    public int Pending { get; init; }
}

/// <summary>A job: its state, totals and, once completed, the processor's summary.</summary>
public sealed record Job
{
    /// <summary>The job's id.</summary>
    public string Id { get; init; } = string.Empty;

    /// <summary>The processor, e.g. <c>billing</c>.</summary>
    public string Processor { get; init; } = string.Empty;

    /// <summary><c>accepted</c>, <c>running</c>, <c>cancelling</c>, <c>completed</c>, <c>completedWithFailures</c> or <c>cancelled</c>.</summary>
    public string State { get; init; } = string.Empty;

    /// <summary>0, or the number of retry-failed rounds.</summary>
    public int Round { get; init; }

    /// <summary>Item counts.</summary>
    public JobTotals Totals { get; init; } = new();

    /// <summary>The processor's summary, once completed.</summary>
    public JsonElement? Summary { get; init; }

    /// <summary>True once every item has settled (<c>completed</c>, <c>completedWithFailures</c> or <c>cancelled</c>).</summary>
    public bool IsSettled => State is "completed" or "completedWithFailures" or "cancelled";
}

/// <summary>The result of one item.</summary>
public sealed record JobResult
{
    /// <summary>The item's id.</summary>
    public string Id { get; init; } = string.Empty;

    /// <summary><c>succeeded</c>, <c>failed</c> or <c>retrying</c>.</summary>
    public string Status { get; init; } = string.Empty;

    /// <summary>What the processor produced for the item.</summary>
    public JsonElement? Output { get; init; }

    /// <summary>The failure's code, if failed.</summary>
    public string? Code { get; init; }

    /// <summary>Why it failed, if it did.</summary>
    public string? Reason { get; init; }

    /// <summary>Attempts made.</summary>
    public int Attempts { get; init; }
}

/// <summary>A failed item with its reason.</summary>
public sealed record JobFailure
{
    /// <summary>The item's id.</summary>
    public string Id { get; init; } = string.Empty;

    /// <summary>The failure's code.</summary>
    public string Code { get; init; } = string.Empty;

    /// <summary>Why it failed.</summary>
    public string Reason { get; init; } = string.Empty;

    /// <summary>Attempts made.</summary>
    public int Attempts { get; init; }
}
