using System.Text.Json;

namespace Tallyho.Client.Schedules;

/// <summary>What runs when a schedule fires. Build one with the factory methods.</summary>
public sealed class ScheduleTarget
{
    private ScheduleTarget(IReadOnlyDictionary<string, object?> fields) => Fields = fields;

    /// <summary>The target as the API's JSON object.</summary>
    public IReadOnlyDictionary<string, object?> Fields { get; }

    /// <summary>
    /// Whether running this target is an admin action (a gate release): such schedules are created
    /// through the admin-level route with the admin key.
    /// </summary>
    public bool IsAdminAction => Fields.TryGetValue("type", out var type) && (type as string) == "gateRelease";

    /// <summary>Release a gate.</summary>
    /// <param name="gate">The gate's name.</param>
    /// <returns>The target.</returns>
    public static ScheduleTarget GateRelease(string gate) => new(new Dictionary<string, object?> { ["type"] = "gateRelease", ["gate"] = gate });

    /// <summary>Put a message on a storage queue of the app.</summary>
    /// <param name="queue">The queue's name.</param>
    /// <param name="message">Any JSON-serializable value.</param>
    /// <returns>The target.</returns>
    public static ScheduleTarget QueueMessage(string queue, object? message) =>
        new(new Dictionary<string, object?> { ["type"] = "queueMessage", ["queue"] = queue, ["message"] = message });

    /// <summary>Call an allow-listed HTTPS webhook.</summary>
    /// <param name="url">The webhook's address.</param>
    /// <param name="payload">A JSON-serializable payload, if any.</param>
    /// <returns>The target.</returns>
    public static ScheduleTarget Webhook(string url, object? payload = null) =>
        new(new Dictionary<string, object?> { ["type"] = "webhook", ["url"] = url, ["payload"] = payload });

    /// <summary>Submit a job.</summary>
    /// <param name="processor">The job's processor, e.g. <c>billing</c>.</param>
    /// <param name="items">The items, each with a unique <c>id</c>.</param>
    /// <returns>The target.</returns>
    public static ScheduleTarget Job(string processor, IEnumerable<object> items) =>
        new(new Dictionary<string, object?> { ["type"] = "job", ["processor"] = processor, ["items"] = items.ToArray() });

    /// <summary>Send a Service Bus message.</summary>
    /// <param name="entity">The queue or topic.</param>
    /// <param name="message">Any JSON-serializable value.</param>
    /// <param name="sessionId">A session id, if any.</param>
    /// <param name="scheduledDelivery">Hand the message to Service Bus as a scheduled message (one-off schedules only).</param>
    /// <returns>The target.</returns>
    public static ScheduleTarget ServiceBus(string entity, object? message, string? sessionId = null, bool scheduledDelivery = false) =>
        new(new Dictionary<string, object?>
        {
            ["type"] = "serviceBus",
            ["entity"] = entity,
            ["message"] = message,
            ["sessionId"] = sessionId,
            ["delivery"] = scheduledDelivery ? "scheduled" : "immediate",
        });
}

/// <summary>A schedule to create: exactly one of <see cref="At"/> or <see cref="Cron"/>, and a target.</summary>
public sealed record ScheduleRequest
{
    /// <summary>Your id (generated when null). Creating the same id with the same definition again is idempotent.</summary>
    public string? Id { get; init; }

    /// <summary>Fire once at this time.</summary>
    public DateTimeOffset? At { get; init; }

    /// <summary>Fire on this six-field cron (second minute hour day month weekday).</summary>
    public string? Cron { get; init; }

    /// <summary>The IANA zone the cron is read in (default UTC).</summary>
    public string? TimeZone { get; init; }

    /// <summary>What runs.</summary>
    public ScheduleTarget? Target { get; init; }

    /// <summary><c>skip</c> (default), <c>bufferOne</c> or <c>allow</c>: a fire while a run is in progress.</summary>
    public string? Overlap { get; init; }

    /// <summary><c>none</c>, <c>once</c> (default) or <c>all</c>: fires missed while the app was down.</summary>
    public string? CatchUp { get; init; }
}

/// <summary>One run of a schedule.</summary>
public sealed record ScheduleRun
{
    /// <summary>When the fire was due (a trigger: when it was requested).</summary>
    public string At { get; init; } = string.Empty;

    /// <summary><c>scheduled</c>, <c>catchUp</c> or <c>trigger</c>.</summary>
    public string Kind { get; init; } = string.Empty;

    /// <summary><c>running</c>, <c>succeeded</c>, <c>failed</c>, <c>skipped</c> or <c>missed</c>.</summary>
    public string Outcome { get; init; } = string.Empty;

    /// <summary>Why it was skipped, missed or failed.</summary>
    public string? Reason { get; init; }

    /// <summary>The trigger that asked for this run, if any.</summary>
    public string? TriggerId { get; init; }
}

/// <summary>A schedule as the server describes it.</summary>
public sealed record Schedule
{
    /// <summary>The schedule's id.</summary>
    public string Id { get; init; } = string.Empty;

    /// <summary><c>pending</c>, <c>active</c>, <c>paused</c>, <c>cancelled</c> or <c>completed</c>.</summary>
    public string State { get; init; } = string.Empty;

    /// <summary>The next fire time (ISO 8601), if any.</summary>
    public string? NextFireAt { get; init; }

    /// <summary>The one-off time, if a one-off.</summary>
    public string? At { get; init; }

    /// <summary>The cron, if a recurrence.</summary>
    public string? Cron { get; init; }

    /// <summary>The zone of the cron.</summary>
    public string? TimeZone { get; init; }

    /// <summary>The target as the server holds it.</summary>
    public JsonElement Target { get; init; }

    /// <summary>The overlap policy.</summary>
    public string Overlap { get; init; } = string.Empty;

    /// <summary>How many runs so far.</summary>
    public int RunCount { get; init; }

    /// <summary>The newest runs, newest last.</summary>
    public IReadOnlyList<ScheduleRun> Runs { get; init; } = Array.Empty<ScheduleRun>();

    /// <summary>Triggers waiting to run.</summary>
    public int PendingTriggers { get; init; }
}

/// <summary>The answer to a trigger: its id (it shows in the schedule's runs) and the schedule.</summary>
public sealed record ScheduleTrigger
{
    /// <summary>The trigger's id.</summary>
    public string TriggerId { get; init; } = string.Empty;

    /// <summary>The schedule.</summary>
    public Schedule Schedule { get; init; } = new();
}
