using Azure.Core;

namespace Tallyho.Client;

/// <summary>How a <see cref="TallyhoClient"/> reaches the Tallyho API and how hard it retries.</summary>
public sealed class TallyhoClientOptions
{
    /// <summary>
    /// The app's address, with or without the API's <c>/api</c> prefix: <c>https://tallyho.example.net</c> and
    /// <c>https://tallyho.example.net/api</c> reach the same routes (the TypeScript client's rule too). When null,
    /// the <see cref="HttpClient.BaseAddress"/> of the injected client is used, by the same rule.
    /// </summary>
    public Uri? BaseAddress { get; set; }

    /// <summary>A function key, sent as the <c>x-functions-key</c> header on function-level operations.</summary>
    public string? FunctionKey { get; set; }

    /// <summary>
    /// The admin (host master) key, sent as <c>x-functions-key</c> on admin operations: creating
    /// sequences, counters and gates, releasing and resetting gates, controlling schedules, retrying
    /// failed job items. When null, admin operations send <see cref="FunctionKey"/>.
    /// </summary>
    public string? AdminKey { get; set; }

    /// <summary>
    /// Who the client is, sent as <c>Authorization: Bearer …</c> on every request (beside a key, if any): a Microsoft
    /// Entra ID token credential such as <c>DefaultAzureCredential</c> from Azure.Identity (set <see cref="Audience"/>
    /// too), or a <see cref="TallyhoCredential"/>. Only over https, or http to this machine. The
    /// <see cref="TallyhoClient(Uri, TokenCredential, TallyhoClientOptions?)"/> constructor sets it too.
    /// </summary>
    public TokenCredential? Credential { get; set; }

    /// <summary>
    /// The Tallyho app registration tokens are asked for: its Application ID URI (<c>api://&lt;app id&gt;</c>) or its
    /// application (client) id. The scope asked for is <c>&lt;audience&gt;/.default</c>.
    /// </summary>
    public string? Audience { get; set; }

    /// <summary>The scopes asked for, in place of <c>&lt;audience&gt;/.default</c>.</summary>
    public IReadOnlyList<string>? Scopes { get; set; }

    /// <summary>How many times a request is retried after a 429, a 502/503/504 or a lost connection (default 4).</summary>
    public int MaxRetries { get; set; } = 4;

    /// <summary>The first back-off delay; it doubles with every retry, with full jitter (default 200 ms).</summary>
    public TimeSpan RetryBaseDelay { get; set; } = TimeSpan.FromMilliseconds(200);

    /// <summary>The longest delay between two tries, including one a <c>Retry-After</c> header asks for (default 30 s).</summary>
    public TimeSpan RetryMaxDelay { get; set; } = TimeSpan.FromSeconds(30);

    /// <summary>The clock behind back-off, block sizing and polling; tests pass a fake one (default <see cref="TimeProvider.System"/>).</summary>
    public TimeProvider TimeProvider { get; set; } = TimeProvider.System;

    /// <summary>How <see cref="TallyhoClient.Counters"/> batches increments.</summary>
    public Counters.CounterClientOptions CounterOptions { get; set; } = new();

    /// <summary>How <see cref="TallyhoClient.Releases"/> caches gate states and reports fallbacks.</summary>
    public Gates.GateReleaseCacheOptions ReleaseCacheOptions { get; set; } = new();

    /// <summary>Source of jitter, a value in [0, 1); tests pin it. Default: a shared random generator.</summary>
    public Func<double>? Jitter { get; set; }
}
