namespace Tallyho.Client.Callers;

/// <summary>A named caller as an admin sees it: no credential.</summary>
public record NamedCaller
{
    /// <summary>Its name.</summary>
    public string Name { get; init; } = string.Empty;

    /// <summary>Its caller id, <c>cred:&lt;name&gt;</c>.</summary>
    public string Id { get; init; } = string.Empty;

    /// <summary>Its roles.</summary>
    public IReadOnlyList<string> Roles { get; init; } = [];

    /// <summary><c>active</c>, <c>expired</c> or <c>revoked</c>.</summary>
    public string State { get; init; } = string.Empty;

    /// <summary>The credential's id (not a secret).</summary>
    public string CredentialId { get; init; } = string.Empty;

    /// <summary>When it was issued.</summary>
    public DateTimeOffset IssuedAt { get; init; }

    /// <summary>When it expires; null: never.</summary>
    public DateTimeOffset? ExpiresAt { get; init; }

    /// <summary>When it was revoked; null: it was not.</summary>
    public DateTimeOffset? RevokedAt { get; init; }

    /// <summary>The caller id of the admin who issued it.</summary>
    public string IssuedBy { get; init; } = string.Empty;
}

/// <summary>A caller just issued, with its credential (shown this once).</summary>
public sealed record IssuedCaller : NamedCaller
{
    /// <summary>Send it as <c>Authorization: Bearer &lt;credential&gt;</c> (a <see cref="TallyhoCredential"/>).</summary>
    public string Credential { get; init; } = string.Empty;
}

/// <summary>What a caller holds of the pools where that is one cheap read.</summary>
public sealed record CallerHoldings
{
    /// <summary>Unfinished jobs it holds (across instances).</summary>
    public int OpenJobs { get; init; }

    /// <summary>Long polls and event streams the answering instance holds open for it.</summary>
    public int HeldRequests { get; init; }
}

/// <summary>Who the app takes the caller for.</summary>
public sealed record CallerSelf
{
    /// <summary>Its caller id.</summary>
    public string Id { get; init; } = string.Empty;

    /// <summary><c>entra</c>, <c>appService</c>, <c>credential</c>, <c>masterKey</c>, <c>sharedKey</c> or <c>anonymous</c>.</summary>
    public string Kind { get; init; } = string.Empty;

    /// <summary>A display name, where it has one.</summary>
    public string? Name { get; init; }

    /// <summary>Its roles.</summary>
    public IReadOnlyList<string> Roles { get; init; } = [];

    /// <summary>What it holds.</summary>
    public CallerHoldings Holds { get; init; } = new();
}
