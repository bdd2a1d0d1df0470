using System.Collections.Concurrent;
using Azure.Core;
using Tallyho.Client.Counters;
using Tallyho.Client.Callers;
using Tallyho.Client.Gates;
using Tallyho.Client.Internal;
using Tallyho.Client.Jobs;
using Tallyho.Client.Schedules;
using Tallyho.Client.Sequences;
using Tallyho.Client.Streams;

namespace Tallyho.Client;

/// <summary>
/// The Tallyho API: order numbers, counters, release gates, schedules, batched jobs and single-writer
/// streams. Keep one instance for the life of the process (it holds the sequence blocks and the counter
/// batches); it is safe to use from many threads.
/// </summary>
/// <example>
/// <code>
/// var tallyho = new TallyhoClient(new TallyhoClientOptions { BaseAddress = new Uri("https://tallyho.example.net"), FunctionKey = key });
/// string orderNumber = await tallyho.Sequence("orders").NextAsync();
/// await tallyho.Gate("launch").WaitAsync(cancellationToken);
/// </code>
/// </example>
public sealed class TallyhoClient : IAsyncDisposable, IDisposable
{
    private readonly TallyhoHttp _http;
    private readonly HttpClient? _ownedClient;
    private readonly ConcurrentDictionary<string, SequenceClient> _sequences = new(StringComparer.Ordinal);

    /// <summary>Creates a client with an <see cref="HttpClient"/> of its own.</summary>
    /// <param name="options">Where the API is and which keys to send.</param>
    public TallyhoClient(TallyhoClientOptions options)
        : this(new HttpClient { Timeout = Timeout.InfiniteTimeSpan }, options, owns: true)
    {
    }

    /// <summary>
    /// Creates a client that identifies with a credential, as Azure SDK clients are made: a Microsoft Entra ID token
    /// credential (<c>new DefaultAzureCredential()</c> from Azure.Identity, with <see cref="TallyhoClientOptions.Audience"/>)
    /// or a <see cref="TallyhoCredential"/>. It has an <see cref="HttpClient"/> of its own.
    /// </summary>
    /// <param name="baseAddress">The app's address, with or without <c>/api</c>.</param>
    /// <param name="credential">Where the bearer tokens come from.</param>
    /// <param name="options">The audience, keys (in <c>keys+entra</c> mode) and the rest.</param>
    public TallyhoClient(Uri baseAddress, TokenCredential credential, TallyhoClientOptions? options = null)
        : this(
            new HttpClient { Timeout = Timeout.InfiniteTimeSpan },
            options ?? new TallyhoClientOptions(),
            owns: true,
            Guard.NotNull(baseAddress, nameof(baseAddress)),
            Guard.NotNull(credential, nameof(credential)))
    {
    }

    /// <summary>
    /// Creates a client on an injected <see cref="HttpClient"/>, e.g. one from <c>IHttpClientFactory</c>.
    /// The caller keeps ownership of it. Its <see cref="HttpClient.Timeout"/> bounds long-polls (30 s each).
    /// </summary>
    /// <param name="httpClient">The client to send requests with.</param>
    /// <param name="options">Where the API is (else the client's BaseAddress) and which keys to send.</param>
    public TallyhoClient(HttpClient httpClient, TallyhoClientOptions? options = null)
        : this(httpClient, options ?? new TallyhoClientOptions(), owns: false)
    {
    }

    private TallyhoClient(HttpClient httpClient, TallyhoClientOptions options, bool owns, Uri? baseAddress = null, TokenCredential? credential = null)
    {
        Guard.NotNull(httpClient, nameof(httpClient));
        Guard.NotNull(options, nameof(options));
        _http = new TallyhoHttp(httpClient, options, baseAddress, credential);
        _ownedClient = owns ? httpClient : null;
        Counters = new CounterClient(_http, options.CounterOptions);
        Schedules = new ScheduleClient(_http);
        Jobs = new JobClient(_http);
        Releases = new CachedGateReleases(_http, options.ReleaseCacheOptions);
        Gates = new GatesClient(_http);
        Sequences = new SequencesClient(_http);
        Streams = new StreamsClient(_http);
        Callers = new CallersClient(_http);
    }

    /// <summary>The transport, for the client's own services (a <see cref="Jobs.JobWorker"/>).</summary>
    internal TallyhoHttp Http => _http;

    /// <summary>Counters, with increments coalesced per counter.</summary>
    public CounterClient Counters { get; }

    /// <summary>Schedules.</summary>
    public ScheduleClient Schedules { get; }

    /// <summary>Batched jobs.</summary>
    public JobClient Jobs { get; }

    /// <summary>Cached gate checks for production code paths; type your code against <see cref="IGateReleases"/>.</summary>
    public CachedGateReleases Releases { get; }

    /// <summary>Whether the gate is released, from the cache; the default when that cannot be learned (<see cref="Releases"/>).</summary>
    /// <param name="gate">The gate's name.</param>
    /// <param name="defaultValue">The answer when the state cannot be learned and none was seen before.</param>
    /// <param name="cancellationToken">Stops waiting.</param>
    /// <returns>The gate's state, the last one seen, or the default.</returns>
    public Task<bool> IsReleasedAsync(string gate, bool defaultValue, CancellationToken cancellationToken = default) =>
        Releases.IsReleasedAsync(gate, defaultValue, cancellationToken);

    /// <summary>The gates list (admin key); one gate is <see cref="Gate"/>.</summary>
    public GatesClient Gates { get; }

    /// <summary>The sequences list (admin key); one sequence's numbers are <see cref="Sequence"/>.</summary>
    public SequencesClient Sequences { get; }

    /// <summary>The stream routes list (admin key); events go through <see cref="StreamProducer"/>.</summary>
    public StreamsClient Streams { get; }

    /// <summary>Named callers' credentials (admin key), and who this client is (<see cref="CallersClient.MeAsync"/>).</summary>
    public CallersClient Callers { get; }

    /// <summary>
    /// The numbers of one sequence. The same name returns the same instance (and so the same block of numbers);
    /// options apply when the instance is first made.
    /// </summary>
    /// <param name="name">The sequence's name.</param>
    /// <param name="options">How blocks are sized.</param>
    /// <returns>The sequence's client.</returns>
    public SequenceClient Sequence(string name, SequenceClientOptions? options = null) =>
        _sequences.GetOrAdd(Guard.NotEmpty(name, nameof(name)), n => new SequenceClient(_http, n, options));

    /// <summary>One release gate.</summary>
    /// <param name="name">The gate's name.</param>
    /// <param name="options">How <see cref="GateClient.WaitAsync"/> follows the gate.</param>
    /// <returns>The gate's client.</returns>
    public GateClient Gate(string name, GateWaitOptions? options = null) => new(_http, Guard.NotEmpty(name, nameof(name)), options);

    /// <summary>A producer of events of one type, with its own id and sequence numbers.</summary>
    /// <param name="type">The event type.</param>
    /// <param name="options">The producer's id and first sequence number.</param>
    /// <returns>The producer.</returns>
    public StreamProducer StreamProducer(string type, StreamProducerOptions? options = null) =>
        new(_http, Guard.NotEmpty(type, nameof(type)), options);

    /// <summary>Sends pending counter increments, then lets go of the HTTP client if this instance made it.</summary>
    /// <returns>Completes when the increments are stored.</returns>
    public async ValueTask DisposeAsync()
    {
        await Counters.DisposeAsync().ConfigureAwait(false);
        _ownedClient?.Dispose();
    }

    /// <summary>Lets go of the HTTP client if this instance made it. Prefer <see cref="DisposeAsync"/>, which also sends pending increments.</summary>
    public void Dispose() => _ownedClient?.Dispose();
}
