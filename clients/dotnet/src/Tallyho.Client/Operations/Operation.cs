using Tallyho.Client.Internal;

namespace Tallyho.Client.Operations;

/// <summary>
/// Work that goes on after the call that started it (the API's 202, docs/http-api.md#long-running-operations),
/// shaped as the Azure SDK's <c>Operation&lt;T&gt;</c>: <see cref="WaitForCompletionAsync(CancellationToken)"/>
/// reads the operation's status route every <c>Retry-After</c> until it is done (cancelling stops the
/// waiting, never the operation); <see cref="UpdateStatusAsync"/> reads it once; <see cref="Id"/> is the
/// status route, from which the client's <c>Resume…</c> methods rebuild the operation, in another process too.
/// </summary>
/// <typeparam name="T">The operation's state, as its status route answers it.</typeparam>
public abstract class Operation<T>
    where T : class
{
    private readonly TallyhoHttp _http;
    private readonly string _path;
    private bool _waitFirst;
    private T? _latest;

    private protected Operation(TallyhoHttp http, string id, TimeSpan pollInterval, bool resumed)
    {
        _http = http;
        _path = ApiPath(id);
        Id = id;
        PollInterval = pollInterval;
        _waitFirst = !resumed;
    }

    /// <summary>The operation's status route (e.g. <c>/api/jobs/…</c>): keep it to resume the operation later.</summary>
    public string Id { get; }

    /// <summary>Between reads: the server's <c>Retry-After</c> (or the operation's default, once resumed).</summary>
    public TimeSpan PollInterval { get; }

    /// <summary>Whether the operation is done (as of the last read).</summary>
    public bool HasCompleted { get; private set; }

    /// <summary>Whether a state has been read (or came with the 202).</summary>
    public bool HasValue => _latest is not null;

    /// <summary>The final state, once <see cref="HasCompleted"/>.</summary>
    /// <exception cref="InvalidOperationException">The operation has not completed.</exception>
    public T Value => HasCompleted ? _latest! : throw new InvalidOperationException($"The operation {Id} has not completed; wait for it first.");

    /// <summary>The latest state read, done or not (null before the first read, when the 202 carried none).</summary>
    public T? LatestValue => _latest;

    /// <summary>Reads the status route once (nothing once done) and returns the state.</summary>
    /// <param name="cancellationToken">Cancels the read.</param>
    /// <returns>The state.</returns>
    public async ValueTask<T> UpdateStatusAsync(CancellationToken cancellationToken = default)
    {
        if (HasCompleted)
        {
            return _latest!;
        }

        var state = await _http.SendJsonAsync<T>(new TallyhoRequest(HttpMethod.Get, _path) { Idempotent = true }, cancellationToken).ConfigureAwait(false);
        _waitFirst = false;
        Observe(state);
        return state;
    }

    /// <summary>Reads the status route every <see cref="PollInterval"/> until the operation is done.</summary>
    /// <param name="cancellationToken">Stops waiting (the operation goes on).</param>
    /// <returns>The final state.</returns>
    public ValueTask<T> WaitForCompletionAsync(CancellationToken cancellationToken = default) => WaitForCompletionAsync(PollInterval, cancellationToken);

    /// <summary>Reads the status route every <paramref name="pollInterval"/> until the operation is done.</summary>
    /// <param name="pollInterval">Between reads, instead of the server's <c>Retry-After</c>.</param>
    /// <param name="cancellationToken">Stops waiting (the operation goes on).</param>
    /// <returns>The final state.</returns>
    public async ValueTask<T> WaitForCompletionAsync(TimeSpan pollInterval, CancellationToken cancellationToken)
    {
        // A new operation waits the Retry-After before its first read; a resumed one reads at once.
        if (_waitFirst && !HasCompleted)
        {
            await Clock.Sleep(_http.Time, pollInterval, cancellationToken).ConfigureAwait(false);
        }

        var state = await UpdateStatusAsync(cancellationToken).ConfigureAwait(false);
        while (!HasCompleted)
        {
            await Clock.Sleep(_http.Time, pollInterval, cancellationToken).ConfigureAwait(false);
            state = await UpdateStatusAsync(cancellationToken).ConfigureAwait(false);
        }

        return state;
    }

    /// <summary>Whether <paramref name="state"/> is final.</summary>
    /// <param name="state">A state the status route answered.</param>
    /// <returns>True when the operation is done.</returns>
    private protected abstract bool IsDone(T state);

    private protected void Observe(T state)
    {
        _latest = state;
        HasCompleted = IsDone(state);
    }

    /// <summary>The status route below <c>api/</c>, as requests address it.</summary>
    private static string ApiPath(string id)
    {
        Guard.NotEmpty(id, nameof(id));
        if (!id.StartsWith("/api/", StringComparison.Ordinal) || id.Length == "/api/".Length)
        {
            throw new ArgumentException($"Not a status route of this API: {id}", nameof(id));
        }

        return id.Substring("/api/".Length);
    }
}
