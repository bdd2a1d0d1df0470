namespace Tallyho.Client.Gates;

/// <summary>Who is waiting on a gate's current generation.</summary>
public sealed record GateWaiters
{
    /// <summary>Runs waiting now (0 once released).</summary>
    public int Waiting { get; init; }

    /// <summary>Runs registered before the release.</summary>
    public int Registered { get; init; }

    /// <summary>Runs that registered after the release and proceeded at once.</summary>
    public int Late { get; init; }

    /// <summary>Runs that reported proceeding after the release.</summary>
    public int Proceeded { get; init; }
}

/// <summary>A gate's state: closed or released, its generation, who released it and when.</summary>
public sealed record GateState
{
    /// <summary>The gate's name.</summary>
    public string Name { get; init; } = string.Empty;

    /// <summary><c>closed</c> or <c>released</c>.</summary>
    public string State { get; init; } = string.Empty;

    /// <summary>Increases with every reset; a release belongs to one generation.</summary>
    public int Generation { get; init; }

    /// <summary>When the gate was created (ISO 8601).</summary>
    public string CreatedAt { get; init; } = string.Empty;

    /// <summary>When the current generation began (ISO 8601).</summary>
    public string GenerationStartedAt { get; init; } = string.Empty;

    /// <summary>A scheduled release time, if any.</summary>
    public string? ReleaseAt { get; init; }

    /// <summary>When it was released, if it is.</summary>
    public string? ReleasedAt { get; init; }

    /// <summary>Who released it, if it is.</summary>
    public string? ReleasedBy { get; init; }

    /// <summary><c>api</c> or <c>schedule</c>, if released.</summary>
    public string? ReleaseHow { get; init; }

    /// <summary>The note given with the release.</summary>
    public string? ReleaseNote { get; init; }

    /// <summary>Waiter counts of the current generation.</summary>
    public GateWaiters Waiters { get; init; } = new();

    /// <summary>True when the current generation is released.</summary>
    public bool IsReleased => State == "released";
}

/// <summary>One record of a gate's audit log.</summary>
public sealed record GateAuditRecord
{
    /// <summary>The gate's name.</summary>
    public string Gate { get; init; } = string.Empty;

    /// <summary><c>create</c>, <c>release</c> or <c>reset</c>.</summary>
    public string Kind { get; init; } = string.Empty;

    /// <summary>The generation it belongs to.</summary>
    public int Generation { get; init; }

    /// <summary>When it happened (ISO 8601).</summary>
    public string At { get; init; } = string.Empty;

    /// <summary>Who did it.</summary>
    public string By { get; init; } = string.Empty;

    /// <summary><c>api</c> or <c>schedule</c>.</summary>
    public string How { get; init; } = string.Empty;

    /// <summary>The note given with it, if any.</summary>
    public string? Note { get; init; }

    /// <summary>When the record was written (ISO 8601).</summary>
    public string RecordedAt { get; init; } = string.Empty;
}

/// <summary>The answer to an admin command on a gate (release, reset): the command is done when it comes.</summary>
public sealed record GateCommandResult
{
    /// <summary><c>released</c>, <c>alreadyReleased</c>, <c>reset</c> or <c>alreadyReset</c>.</summary>
    public string Outcome { get; init; } = string.Empty;

    /// <summary>The gate after the command.</summary>
    public GateState Gate { get; init; } = new();

    /// <summary>Reset only: runs still waiting that moved into the new generation.</summary>
    public int Carried { get; init; }
}

/// <summary>A gated run: waiting for the release, proceeded (its action then runs) or failed.</summary>
public sealed record GateRun
{
    /// <summary>The run's id (yours, or one the app made).</summary>
    public string RunId { get; init; } = string.Empty;

    /// <summary>The gate it waits on.</summary>
    public string Gate { get; init; } = string.Empty;

    /// <summary>The run as the app names it (<c>gate:&lt;gate&gt;:run:&lt;runId&gt;</c>).</summary>
    public string Id { get; init; } = string.Empty;

    /// <summary><c>waiting</c>, <c>proceeded</c> or <c>failed</c>.</summary>
    public string State { get; init; } = string.Empty;

    /// <summary>Waiting: the generation it waits on; otherwise the generation whose release let it go.</summary>
    public int Generation { get; init; }

    /// <summary>Registered after the release, and proceeded at once.</summary>
    public bool Late { get; init; }

    /// <summary>When it registered (ISO 8601).</summary>
    public string RegisteredAt { get; init; } = string.Empty;

    /// <summary>When it proceeded; null while waiting.</summary>
    public string? ProceededAt { get; init; }

    /// <summary>The release that let it go (generation, at, by, how, note); null while waiting.</summary>
    public System.Text.Json.JsonElement? Release { get; init; }

    /// <summary>What its action did, once it did (<c>{"type":"none"}</c> at once for a run without one); null before.</summary>
    public System.Text.Json.JsonElement? Action { get; init; }

    /// <summary>When its action was done (or failed).</summary>
    public string? ActionAt { get; init; }

    /// <summary>Only when failed: the problem code and what went wrong.</summary>
    public System.Text.Json.JsonElement? Failure { get; init; }

    /// <summary>True once it has failed, or proceeded and its action is done.</summary>
    public bool IsDone => State == "failed" || (State == "proceeded" && Action is { ValueKind: not System.Text.Json.JsonValueKind.Null });
}

/// <summary>How a gate's release reached <see cref="GateClient.WaitAsync"/>.</summary>
public enum GateWaitMode
{
    /// <summary>Server-sent events (the first choice).</summary>
    ServerSentEvents,

    /// <summary>Long-poll of <c>/wait</c>, after event streams kept failing.</summary>
    LongPoll,

    /// <summary>ETag polling of the gate, after long-polls kept failing too.</summary>
    Polling,
}

/// <summary>How <see cref="GateClient.WaitAsync"/> follows a gate.</summary>
public sealed class GateWaitOptions
{
    /// <summary>First reconnect delay after a dropped event stream; doubles per failure, with jitter (default 500 ms).</summary>
    public TimeSpan ReconnectBaseDelay { get; set; } = TimeSpan.FromMilliseconds(500);

    /// <summary>The longest reconnect delay (default 30 s).</summary>
    public TimeSpan ReconnectMaxDelay { get; set; } = TimeSpan.FromSeconds(30);

    /// <summary>An event stream silent this long (no event, no heartbeat) counts as dropped (default 45 s, three heartbeats).</summary>
    public TimeSpan HeartbeatTimeout { get; set; } = TimeSpan.FromSeconds(45);

    /// <summary>Event streams that fail in a row before falling back to long-polling (default 3).</summary>
    public int StreamFailuresBeforeFallback { get; set; } = 3;

    /// <summary>How long one long-poll waits on the server (default 30 s).</summary>
    public TimeSpan LongPollTimeout { get; set; } = TimeSpan.FromSeconds(30);

    /// <summary>Long-polls that fail in a row before falling back to ETag polling (default 3).</summary>
    public int LongPollFailuresBeforeFallback { get; set; } = 3;

    /// <summary>Interval of ETag polling, the last resort (default 5 s).</summary>
    public TimeSpan PollInterval { get; set; } = TimeSpan.FromSeconds(5);
}
