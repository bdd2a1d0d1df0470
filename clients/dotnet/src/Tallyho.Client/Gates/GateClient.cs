using System.Globalization;
using System.Text;
using System.Text.Json;
using Tallyho.Client.Internal;
using Tallyho.Client.Operations;

namespace Tallyho.Client.Gates;

/// <summary>
/// One release gate. <see cref="WaitAsync"/> reads the gate first (a late joiner returns at once), then
/// follows it over server-sent events, resuming with <c>Last-Event-ID</c> after a drop, with jittered
/// exponential reconnects and a heartbeat timeout; when streams keep failing it falls back to long-polling,
/// and then to ETag polling. Creating, releasing and resetting take the admin key.
/// </summary>
public sealed class GateClient
{
    private readonly TallyhoHttp _http;
    private readonly GateWaitOptions _options;

    internal GateClient(TallyhoHttp http, string name, GateWaitOptions? options)
    {
        _http = http;
        Name = name;
        _options = options ?? new GateWaitOptions();
    }

    /// <summary>The gate's name.</summary>
    public string Name { get; }

    /// <summary>How the last <see cref="WaitAsync"/> learned of the release (or was following the gate when it ended).</summary>
    public GateWaitMode LastWaitMode { get; private set; }

    /// <summary>Event-stream connections the last <see cref="WaitAsync"/> opened.</summary>
    public int LastWaitConnections { get; private set; }

    /// <summary>The gate's audit log, oldest first (admin key): every create, release and reset with who, when and how.</summary>
    /// <param name="cancellationToken">Stops the listing.</param>
    /// <returns>The records, a page at a time.</returns>
    public AsyncPageable<GateAuditRecord> GetAuditAsync(CancellationToken cancellationToken = default) =>
        Lists.Of<GateAuditRecord>(_http, Path("/audit"), KeyLevel.Admin, cancellationToken);

    /// <summary>The gate's state now.</summary>
    /// <param name="cancellationToken">Cancels the request.</param>
    /// <returns>The gate.</returns>
    /// <exception cref="TallyhoException">With code <c>NotFound</c> when there is no such gate.</exception>
    public async Task<GateState> GetAsync(CancellationToken cancellationToken = default) =>
        (await ReadAsync(null, cancellationToken).ConfigureAwait(false)).Gate!;

    /// <summary>Creates the gate closed (admin key); repeating it answers the gate as it is. The gate is written when it returns.</summary>
    /// <param name="releaseAt">Release automatically at this time, if given.</param>
    /// <param name="by">Who, for the audit record.</param>
    /// <param name="note">A note for the audit record.</param>
    /// <param name="cancellationToken">Cancels the request.</param>
    /// <returns>The gate.</returns>
    public Task<GateState> CreateAsync(DateTimeOffset? releaseAt = null, string? by = null, string? note = null, CancellationToken cancellationToken = default) =>
        _http.SendJsonAsync<GateState>(
            new TallyhoRequest(HttpMethod.Put, Path()) { Body = new CommandBody(Iso(releaseAt), by, note), Key = KeyLevel.Admin, Idempotent = true },
            cancellationToken);

    /// <summary>
    /// Starts a gated durable run: it waits for the release, then performs its action. The operation is done
    /// once the run has proceeded (and its action is done) or failed; <c>await op.WaitForCompletionAsync(ct)</c>
    /// waits for that, reading every <c>Retry-After</c>. With <paramref name="runId"/>, a repeated start with the
    /// same action returns the first run.
    /// </summary>
    /// <param name="runId">Your name for the run; the app makes one when null.</param>
    /// <param name="action">What the run does once released, e.g. <c>new { type = "enqueue", payload = new { shard = 17 } }</c>; <c>none</c> when null.</param>
    /// <param name="cancellationToken">Cancels the request (not the run).</param>
    /// <returns>The run as an operation; its <see cref="Operation{T}.Id"/> resumes it (<see cref="ResumeRunOperation"/>).</returns>
    public async Task<GateRunOperation> StartRunAsync(string? runId = null, object? action = null, CancellationToken cancellationToken = default)
    {
        // Only a start with a runId may be sent twice: without one a retry could start a second run.
        using var response = await _http.SendAsync(
            new TallyhoRequest(HttpMethod.Post, Path("/runs")) { Body = new RunBody(runId, action), Idempotent = runId is not null },
            cancellationToken).ConfigureAwait(false);
        return new GateRunOperation(_http, Accepted.StatusUri(response), Accepted.RetryAfter(response, GateRunOperation.DefaultPollInterval), resumed: false);
    }

    /// <summary>A gated run's state now.</summary>
    /// <param name="runId">The run's id.</param>
    /// <param name="cancellationToken">Cancels the request.</param>
    /// <returns>The run.</returns>
    /// <exception cref="TallyhoException">With code <c>NotFound</c> when the gate has no such run.</exception>
    public Task<GateRun> GetRunAsync(string runId, CancellationToken cancellationToken = default) =>
        _http.SendJsonAsync<GateRun>(new TallyhoRequest(HttpMethod.Get, Path("/runs/" + TallyhoHttp.Segment(runId))) { Idempotent = true }, cancellationToken);

    /// <summary>The operation of a run started earlier (here or in another process), from its <see cref="Operation{T}.Id"/>; nothing is started.</summary>
    /// <param name="id">The operation's id: the run's status route.</param>
    /// <returns>The operation; it reads the run at once when waited for.</returns>
    /// <exception cref="ArgumentException">The id is not a run of this gate.</exception>
    public GateRunOperation ResumeRunOperation(string id)
    {
        if (id is null || !id.StartsWith("/api/" + Path("/runs/"), StringComparison.Ordinal))
        {
            throw new ArgumentException($"Not the id of a run of gate {Name}: {id}", nameof(id));
        }

        return new GateRunOperation(_http, id, GateRunOperation.DefaultPollInterval, resumed: true);
    }

    /// <summary>Releases the gate (admin key): every waiter proceeds, and so does every later one. Idempotent.</summary>
    /// <param name="by">Who, for the audit record.</param>
    /// <param name="note">A note for the audit record.</param>
    /// <param name="cancellationToken">Cancels the request.</param>
    /// <returns>The outcome and the gate.</returns>
    public Task<GateCommandResult> ReleaseAsync(string? by = null, string? note = null, CancellationToken cancellationToken = default) =>
        CommandAsync("/release", new CommandBody(null, by, note), cancellationToken);

    /// <summary>Closes the gate again as a new generation (admin key).</summary>
    /// <param name="releaseAt">Schedule the new generation's release, if given.</param>
    /// <param name="by">Who, for the audit record.</param>
    /// <param name="note">A note for the audit record.</param>
    /// <param name="cancellationToken">Cancels the request.</param>
    /// <returns>The outcome and the gate.</returns>
    public Task<GateCommandResult> ResetAsync(DateTimeOffset? releaseAt = null, string? by = null, string? note = null, CancellationToken cancellationToken = default) =>
        CommandAsync("/reset", new CommandBody(Iso(releaseAt), by, note), cancellationToken);

    /// <summary>
    /// Waits until the gate is released and returns its released state. Returns at once when it already is.
    /// </summary>
    /// <param name="cancellationToken">Stops waiting.</param>
    /// <returns>The released gate.</returns>
    /// <exception cref="TallyhoException">With code <c>NotFound</c> when there is no such gate.</exception>
    /// <exception cref="OperationCanceledException">The token was cancelled.</exception>
    public async Task<GateState> WaitAsync(CancellationToken cancellationToken = default)
    {
        LastWaitConnections = 0;
        LastWaitMode = GateWaitMode.ServerSentEvents;
        var first = await ReadAsync(null, cancellationToken).ConfigureAwait(false);
        if (first.Gate!.IsReleased)
        {
            return first.Gate;
        }

        var follow = new Follow(first.ETag);
        var failures = 0;
        while (failures < _options.StreamFailuresBeforeFallback)
        {
            LastWaitConnections++;
            var outcome = await StreamOnceAsync(follow, cancellationToken).ConfigureAwait(false);
            if (outcome.Released is not null)
            {
                return outcome.Released;
            }

            if (outcome.Unsupported)
            {
                break;
            }

            // A stream that delivered something and then ended (the server's time limit, a proxy) is not a failure.
            failures = outcome.Delivered ? 0 : failures + 1;
            var delay = _http.Backoff.Delay(failures, _options.ReconnectBaseDelay, _options.ReconnectMaxDelay);
            await Clock.Sleep(_http.Time, delay, cancellationToken).ConfigureAwait(false);
        }

        LastWaitMode = GateWaitMode.LongPoll;
        var released = await LongPollAsync(cancellationToken).ConfigureAwait(false);
        if (released is not null)
        {
            return released;
        }

        LastWaitMode = GateWaitMode.Polling;
        return await PollAsync(follow, cancellationToken).ConfigureAwait(false);
    }

    /// <summary>Failures no reconnect or fallback can mend: no such gate (a problem answer), a refused key, a bad request.</summary>
    private static bool IsFatal(TallyhoException ex) =>
        (ex.Code == "NotFound" && ex.Problem is not null) || ex.StatusCode is 400 or 401 or 403;

    private static string? Iso(DateTimeOffset? at) => at?.ToUniversalTime().ToString("yyyy-MM-dd'T'HH:mm:ss.fff'Z'", CultureInfo.InvariantCulture);

    private string Path(string suffix = "") => $"gates/{TallyhoHttp.Segment(Name)}{suffix}";

    private Task<GateCommandResult> CommandAsync(string action, CommandBody body, CancellationToken cancellationToken) =>
        _http.SendJsonAsync<GateCommandResult>(
            new TallyhoRequest(HttpMethod.Post, Path(action)) { Body = body, Key = KeyLevel.Admin, Idempotent = true },
            cancellationToken);

    /// <summary>GET the gate; with an ETag, a 304 answers a null gate.</summary>
    private async Task<(GateState? Gate, string? ETag)> ReadAsync(string? etag, CancellationToken cancellationToken)
    {
        var request = new TallyhoRequest(HttpMethod.Get, Path())
        {
            Idempotent = true,
            Expected = new[] { 304 },
            Headers = etag is null ? null : new Dictionary<string, string> { ["If-None-Match"] = etag },
        };
        using var response = await _http.SendAsync(request, cancellationToken).ConfigureAwait(false);
        var tag = response.Headers.ETag?.ToString() ?? etag;
        if (response.StatusCode == System.Net.HttpStatusCode.NotModified)
        {
            return (null, tag);
        }

        return (await TallyhoHttp.ReadJsonAsync<GateState>(response, cancellationToken).ConfigureAwait(false), tag);
    }

    /// <summary>One event-stream connection, read until the release, the end of the stream, a drop or silence.</summary>
    private async Task<StreamOutcome> StreamOnceAsync(Follow follow, CancellationToken cancellationToken)
    {
        var headers = new Dictionary<string, string> { ["Accept"] = "text/event-stream" };
        if (follow.LastEventId is not null)
        {
            headers["Last-Event-ID"] = follow.LastEventId;
        }

        HttpResponseMessage response;
        try
        {
            response = await _http.SendAsync(
                new TallyhoRequest(HttpMethod.Get, Path("/events")) { Headers = headers, Streaming = true, MaxRetries = 0, Idempotent = true },
                cancellationToken).ConfigureAwait(false);
        }
        catch (TallyhoException ex) when (!IsFatal(ex))
        {
            // No problem document on a 404/405/501: the host has no event stream. Anything else is worth a reconnect.
            return new StreamOutcome(null, false, ex.StatusCode is 404 or 405 or 406 or 501);
        }

        using (response)
        {
            if (response.Content.Headers.ContentType?.MediaType != "text/event-stream")
            {
                return new StreamOutcome(null, false, true);
            }

            using var silence = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
            var lastActivity = _http.Time.GetTimestamp();
            var watchdog = WatchAsync(() => lastActivity, silence);
            var delivered = false;
            try
            {
                using var stream = await response.Content.ReadAsStreamAsync(
#if NET8_0_OR_GREATER
                    cancellationToken
#endif
                    ).ConfigureAwait(false);
                using var abort = silence.Token.Register(static s => ((IDisposable)s!).Dispose(), stream);
                using var reader = new StreamReader(stream, Encoding.UTF8);
                var parser = new SseParser();
                while (true)
                {
#if NET8_0_OR_GREATER
                    var line = await reader.ReadLineAsync(silence.Token).ConfigureAwait(false);
#else
                    var line = await reader.ReadLineAsync().ConfigureAwait(false);
#endif
                    if (line is null)
                    {
                        return new StreamOutcome(null, delivered, false);
                    }

                    lastActivity = _http.Time.GetTimestamp();
                    if (parser.Feed(line) is not { } message)
                    {
                        continue;
                    }

                    if (message.Id is not null)
                    {
                        follow.LastEventId = message.Id;
                    }

                    if (message.Event is "state" or "released")
                    {
                        delivered = true;
                        var gate = JsonSerializer.Deserialize<GateState>(message.Data, Json.Options);
                        if (gate is { IsReleased: true })
                        {
                            return new StreamOutcome(gate, true, false);
                        }
                    }
                    else if (message.Event == "deleted")
                    {
                        throw new TallyhoException(404, "NotFound", $"The gate {Name} no longer exists.");
                    }
                }
            }
            catch (Exception ex) when (!cancellationToken.IsCancellationRequested && ex is IOException or ObjectDisposedException or HttpRequestException or OperationCanceledException or JsonException)
            {
                return new StreamOutcome(null, delivered, false);
            }
            finally
            {
                silence.Cancel();
                await watchdog.ConfigureAwait(false);
            }
        }
    }

    /// <summary>Cancels <paramref name="silence"/> once nothing has arrived for the heartbeat timeout.</summary>
    private async Task WatchAsync(Func<long> lastActivity, CancellationTokenSource silence)
    {
        try
        {
            while (!silence.IsCancellationRequested)
            {
                var quiet = _http.Time.GetElapsedTime(lastActivity());
                if (quiet >= _options.HeartbeatTimeout)
                {
                    silence.Cancel();
                    return;
                }

                await Clock.Sleep(_http.Time, _options.HeartbeatTimeout - quiet, silence.Token).ConfigureAwait(false);
            }
        }
        catch (OperationCanceledException)
        {
            // The stream ended first.
        }
    }

    /// <summary>Long-polls until released; null when long-polls keep failing.</summary>
    private async Task<GateState?> LongPollAsync(CancellationToken cancellationToken)
    {
        var failures = 0;
        var timeout = ((int)_options.LongPollTimeout.TotalSeconds).ToString(CultureInfo.InvariantCulture);
        while (failures < _options.LongPollFailuresBeforeFallback)
        {
            try
            {
                var result = await _http.SendJsonAsync<WaitResult>(
                    new TallyhoRequest(HttpMethod.Get, Path($"/wait?timeout={timeout}")) { Idempotent = true, MaxRetries = 0 },
                    cancellationToken).ConfigureAwait(false);
                failures = 0;
                if (result.Released && result.Gate is not null)
                {
                    return result.Gate;
                }

                continue;
            }
            catch (TallyhoException ex) when (!IsFatal(ex))
            {
                failures++;
            }

            await Clock.Sleep(_http.Time, _http.Backoff.Delay(failures, _options.ReconnectBaseDelay, _options.ReconnectMaxDelay), cancellationToken).ConfigureAwait(false);
        }

        return null;
    }

    /// <summary>The last resort: GET with If-None-Match every poll interval.</summary>
    private async Task<GateState> PollAsync(Follow follow, CancellationToken cancellationToken)
    {
        while (true)
        {
            var (gate, etag) = await ReadAsync(follow.ETag, cancellationToken).ConfigureAwait(false);
            follow.ETag = etag;
            if (gate is { IsReleased: true })
            {
                return gate;
            }

            await Clock.Sleep(_http.Time, _options.PollInterval, cancellationToken).ConfigureAwait(false);
        }
    }

    private sealed record CommandBody(string? ReleaseAt, string? By, string? Note);

    private sealed record RunBody(string? RunId, object? Action);

    private sealed record WaitResult(bool Released, bool TimedOut, GateState? Gate);

    private sealed record StreamOutcome(GateState? Released, bool Delivered, bool Unsupported);

    private sealed class Follow
    {
        public Follow(string? etag) => ETag = etag;

        public string? ETag { get; set; }

        public string? LastEventId { get; set; }
    }
}
