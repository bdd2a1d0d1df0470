namespace Tallyho.Client.Counters;

/// <summary>A counter's value as the server reads it.</summary>
public sealed record CounterValue
{
    /// <summary>The counter's name.</summary>
    public string Name { get; init; } = string.Empty;

    /// <summary><c>hits</c> or <c>sharded</c>.</summary>
    public string Mode { get; init; } = string.Empty;

    /// <summary>The value: rolled-up totals plus hits not folded yet.</summary>
    public long Value { get; init; }

    /// <summary>The newest rollup cutoff reached (ISO 8601); null before the first rollup.</summary>
    public string? Watermark { get; init; }

    /// <summary>Hit rows not yet folded into a summary.</summary>
    public long PendingHits { get; init; }

    /// <summary>Whether the read also counted late hits (<c>consistent=true</c>).</summary>
    public bool Consistent { get; init; }
}

/// <summary>A counter and its settings, as the counters list shows it.</summary>
public sealed record CounterInfo
{
    /// <summary>The counter's name.</summary>
    public string Name { get; init; } = string.Empty;

    /// <summary><c>hits</c> or <c>sharded</c>.</summary>
    public string Mode { get; init; } = string.Empty;

    /// <summary>Partitions (hits) or shards (sharded).</summary>
    public int Partitions { get; init; }

    /// <summary>How old a hit must be before a rollup folds it in.</summary>
    public int SafetyWindowSeconds { get; init; }

    /// <summary>When the counter was created (ISO 8601).</summary>
    public string CreatedAt { get; init; } = string.Empty;

    /// <summary>When its settings last changed (ISO 8601).</summary>
    public string UpdatedAt { get; init; } = string.Empty;
}

/// <summary>Settings of a counter.</summary>
public sealed record CounterSettings
{
    /// <summary><c>hits</c> (one row per increment, rolled up) or <c>sharded</c> (ETag increments on shards).</summary>
    public string? Mode { get; init; }

    /// <summary>Partitions (hits) or shards (sharded).</summary>
    public int? Partitions { get; init; }

    /// <summary>How far behind the rollup stays, for writers whose clocks lag.</summary>
    public int? SafetyWindowSeconds { get; init; }
}

/// <summary>How a <see cref="CounterClient"/> coalesces increments (set through <see cref="TallyhoClientOptions.CounterOptions"/>).</summary>
public sealed class CounterClientOptions
{
    /// <summary>The largest <c>by</c> one request carries (the server's TALLYHO_COUNTERS_MAX_INCREMENT; default 1,000,000). Larger sums are split.</summary>
    public long MaxIncrement { get; set; } = 1_000_000;

    /// <summary>Requests in flight at once per counter (default 4).</summary>
    public int MaxInFlight { get; set; } = 4;

    /// <summary>How long an increment waits for others to share its request (default 5 ms, Kafka's linger.ms; zero: none).</summary>
    public TimeSpan Linger { get; set; } = TimeSpan.FromMilliseconds(5);
}
