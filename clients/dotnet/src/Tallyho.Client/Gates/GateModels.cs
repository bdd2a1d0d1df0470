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

/// <summary>The answer to an admin command on a gate (release, reset).</summary>
public sealed record GateCommandResult
{
    /// <summary><c>released</c>, <c>alreadyReleased</c>, <c>reset</c>, <c>alreadyReset</c>; <c>pending</c> when the server is still at it.</summary>
    public string Outcome { get; init; } = string.Empty;

    /// <summary>The gate after the command (null while pending).</summary>
    public GateState? Gate { get; init; }

    /// <summary>Reset only: runs still waiting that moved into the new generation.</summary>
    public int Carried { get; init; }
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
