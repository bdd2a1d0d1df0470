namespace Tallyho.Client.Sequences;

/// <summary>One number of a sequence: its value and how it is written (<c>ORD-0012345-9</c>).</summary>
/// <param name="Value">The raw number.</param>
/// <param name="Formatted">Prefix, zero-padded digits and check digit, as the server formats it.</param>
public readonly record struct SequenceNumber(long Value, string Formatted)
{
    /// <summary>The formatted number.</summary>
    /// <returns><see cref="Formatted"/>.</returns>
    public override string ToString() => Formatted;
}

/// <summary>Bounds of a sequence's adaptive server-side block size.</summary>
/// <param name="Min">Smallest block (1-1,000,000).</param>
/// <param name="Max">Largest block.</param>
public sealed record BlockSizeRange(int? Min = null, int? Max = null);

/// <summary>Settings of a sequence. On creation, omitted ones take the server's defaults; they never change afterwards.</summary>
public sealed record SequenceSettings
{
    /// <summary>First number issued (default 1).</summary>
    public long? Start { get; init; }

    /// <summary>Written before the digits, as is (default none), e.g. <c>ORD-</c>.</summary>
    public string? Prefix { get; init; }

    /// <summary>Minimum digits; shorter numbers are zero-padded (default 7).</summary>
    public int? Width { get; init; }

    /// <summary>Append <c>-</c> and a Damm check digit (default true).</summary>
    public bool? CheckDigit { get; init; }

    /// <summary>Bounds of the adaptive block size the server reserves from storage.</summary>
    public BlockSizeRange? BlockSize { get; init; }

    /// <summary>The server's block size adapts toward one refill per this many seconds (default 10).</summary>
    public int? RefillTargetSeconds { get; init; }
}

/// <summary>A sequence as the server describes it.</summary>
public sealed record SequenceInfo
{
    /// <summary>The sequence's name.</summary>
    public string Sequence { get; init; } = string.Empty;

    /// <summary>Its settings, defaults filled in.</summary>
    public SequenceSettings Settings { get; init; } = new();

    /// <summary>The first number no server instance has reserved yet.</summary>
    public long HighWaterMark { get; init; }
}

/// <summary>Whether a typed-in number is a well-formed number of a sequence.</summary>
/// <param name="Valid">True when prefix, digits, check digit and range are right.</param>
/// <param name="Number">The number, when valid.</param>
/// <param name="Reason">Why it is not valid.</param>
public sealed record SequenceValidation(bool Valid, long? Number = null, string? Reason = null);

/// <summary>How a <see cref="SequenceClient"/> sizes the blocks it reserves.</summary>
public sealed class SequenceClientOptions
{
    /// <summary>The first block's size (default 10).</summary>
    public int InitialBlockSize { get; set; } = 10;

    /// <summary>The smallest block (default 1).</summary>
    public int MinBlockSize { get; set; } = 1;

    /// <summary>The largest block, at most 1000 (one request's limit; default 1000). Bounds the memory a client holds.</summary>
    public int MaxBlockSize { get; set; } = 1000;

    /// <summary>
    /// Blocks adapt toward one reservation per this interval: double when a block lasts less than half of it,
    /// halve when it lasts more than twice (default 10 s).
    /// </summary>
    public TimeSpan RefillTarget { get; set; } = TimeSpan.FromSeconds(10);

    /// <summary>The next block is reserved in the background once this fraction of the current one is left (default 0.1).</summary>
    public double PrefetchFraction { get; set; } = 0.1;
}
