using System.Diagnostics;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Tallyho.Client.Internal;

namespace Tallyho.Client.Jobs;

/// <summary>
/// A worker of an external processor, as a hosted service: <c>services.AddHostedService(sp =&gt; new JobWorker(tallyho,
/// "thumbnails", HandleAsync))</c>. It leases batches (long polls: an idle worker costs the server one poll loop, not
/// a request a second), hands each to the handler with a token, extends the lease while the handler runs (a heartbeat
/// at a third of the lease), and completes it with the handler's results, one per item. Items the handler leaves out
/// come back later as their next attempt; a handler that throws sends every item back as a retry with the exception's
/// message. When a heartbeat learns the lease is gone (it ran out, the job was cancelled) the handler's token is
/// cancelled and nothing is sent. Stopping drains: no new leases, the batches in hand finish and complete.
/// A lease request answered 404 (a misspelt or undeclared processor) ends the worker: <c>ExecuteTask</c> faults with a
/// <see cref="TallyhoException"/> that names the processor (a generic host stops and logs it), rather than polling in
/// silence. Errors the loop survives go to <see cref="JobWorkerOptions.OnError"/>; without one, the first of each kind
/// is logged.
/// </summary>
public sealed class JobWorker : BackgroundService
{
    private readonly TallyhoHttp _http;
    private readonly string _processor;
    private readonly Func<IReadOnlyList<LeasedItem>, CancellationToken, Task<IReadOnlyList<ItemResult>>> _handler;
    private readonly JobWorkerOptions _options;
    private readonly Action<Exception> _onError;
    private TallyhoException? _fatal;
    private long _batches;
    private long _completed;
    private long _lost;

    /// <summary>Creates a worker (it starts with the host, or with <see cref="BackgroundService.StartAsync"/>).</summary>
    /// <param name="client">The client whose keys and HTTP client the worker uses.</param>
    /// <param name="processor">The external processor's name.</param>
    /// <param name="handler">Gets each batch and a token that is cancelled when the lease is lost; answers one result per item.</param>
    /// <param name="options">Concurrency, batch size, waits, heartbeats.</param>
    public JobWorker(
        TallyhoClient client,
        string processor,
        Func<IReadOnlyList<LeasedItem>, CancellationToken, Task<IReadOnlyList<ItemResult>>> handler,
        JobWorkerOptions? options = null)
    {
        Guard.NotNull(client, nameof(client));
        _http = client.Http;
        _processor = Guard.NotEmpty(processor, nameof(processor));
        _handler = Guard.NotNull(handler, nameof(handler));
        _options = options ?? new JobWorkerOptions();
        _onError = _options.OnError ?? FirstOfKind(_options.Logger);
    }

    /// <summary>Batches leased so far.</summary>
    public long Batches => Interlocked.Read(ref _batches);

    /// <summary>Batches completed so far.</summary>
    public long Completed => Interlocked.Read(ref _completed);

    /// <summary>Batches whose lease was lost before they completed.</summary>
    public long Lost => Interlocked.Read(ref _lost);

    /// <inheritdoc />
    protected override async Task ExecuteAsync(CancellationToken stoppingToken)
    {
        using var ending = CancellationTokenSource.CreateLinkedTokenSource(stoppingToken);
        await Task.WhenAll(Enumerable.Range(0, Math.Max(1, _options.Concurrency)).Select(_ => Task.Run(() => LoopAsync(ending), CancellationToken.None))).ConfigureAwait(false);
        if (Volatile.Read(ref _fatal) is { } fatal)
        {
            throw fatal;
        }
    }

    /// <summary>The default OnError: one line per kind of error, so a broken setup shows without flooding the log.</summary>
    private static Action<Exception> FirstOfKind(ILogger? logger)
    {
        var seen = new HashSet<string>(StringComparer.Ordinal);
        return ex =>
        {
            var kind = ex is TallyhoException t ? $"{t.Code}:{t.StatusCode}" : ex.GetType().Name;
            lock (seen)
            {
                if (!seen.Add(kind))
                {
                    return;
                }
            }

            var line = $"tallyho worker: {ex.Message} (kind {kind}; later errors of this kind are not logged; set OnError to see every one)";
            if (logger is null)
            {
                Console.Error.WriteLine(line);
            }
            else
            {
#pragma warning disable CA1848, CA2254 // one line per kind of error: not a hot path, and the text is the message
                logger.LogWarning(ex, line);
#pragma warning restore CA1848, CA2254
            }
        };
    }

    private async Task LoopAsync(CancellationTokenSource ending)
    {
        var stopping = ending.Token;
        var idle = 0;
        var errors = 0;
        while (!stopping.IsCancellationRequested)
        {
            Lease? lease;
            try
            {
                lease = await TakeAsync(stopping).ConfigureAwait(false);
                errors = 0;
            }
            catch (OperationCanceledException) when (stopping.IsCancellationRequested)
            {
                return;
            }
            catch (TallyhoException ex) when (ex.StatusCode == 404)
            {
                // No such processor: polling will not heal it, so every loop ends and ExecuteTask faults naming it.
                Interlocked.CompareExchange(
                    ref _fatal,
                    new TallyhoException(
                        404,
                        ex.Code,
                        $"The worker stopped: processor '{_processor}' was not found (404). Check its name, and that it is declared (PUT /api/processors/{_processor}).",
                        problem: ex.Problem,
                        innerException: ex),
                    null);
                ending.Cancel();
                return;
            }
            catch (Exception ex)
            {
                _onError(ex);
                await PauseAsync(_http.Backoff.Delay(errors++, TimeSpan.FromMilliseconds(500), TimeSpan.FromSeconds(30)), stopping).ConfigureAwait(false);
                continue;
            }

            if (lease is null)
            {
                // The server held the request for the whole wait: back off a little more each empty answer.
                await PauseAsync(idle == 0 ? TimeSpan.Zero : TimeSpan.FromMilliseconds(Math.Min(5000, 100 * Math.Pow(2, idle))), stopping).ConfigureAwait(false);
                idle++;
                continue;
            }

            idle = 0;
            await WorkAsync(lease).ConfigureAwait(false);
        }
    }

    private async Task PauseAsync(TimeSpan delay, CancellationToken stopping)
    {
        try
        {
            await Clock.Sleep(_http.Time, delay, stopping).ConfigureAwait(false);
        }
        catch (OperationCanceledException)
        {
        }
    }

    private async Task<Lease?> TakeAsync(CancellationToken stopping)
    {
        var wait = (int)Math.Min(60, Math.Max(0, _options.Wait.TotalSeconds));
        var request = new TallyhoRequest(HttpMethod.Post, $"processors/{TallyhoHttp.Segment(_processor)}/leases")
        {
            Body = new LeaseRequest(wait, _options.BatchSize),
            Expected = new[] { 204 },
        };
        using var response = await _http.SendAsync(request, stopping).ConfigureAwait(false);
        if ((int)response.StatusCode == 204)
        {
            return null;
        }

        return await TallyhoHttp.ReadJsonAsync<Lease>(response, stopping).ConfigureAwait(false);
    }

    private async Task WorkAsync(Lease lease)
    {
        Interlocked.Increment(ref _batches);
        var leaseId = lease.LeaseId;
        using var lost = new CancellationTokenSource();
        using var beating = new CancellationTokenSource();
        var every = _options.Heartbeat ?? TimeSpan.FromSeconds(Math.Max(1, lease.LeaseSeconds / 3.0));
        var heart = Task.Run(
            async () =>
            {
                while (true)
                {
                    try
                    {
                        await Clock.Sleep(_http.Time, every, beating.Token).ConfigureAwait(false);
                        var next = await _http.SendJsonAsync<Extension>(new TallyhoRequest(HttpMethod.Post, $"leases/{TallyhoHttp.Segment(leaseId)}/extend"), beating.Token).ConfigureAwait(false);
                        Volatile.Write(ref leaseId, next.LeaseId);
                    }
                    catch (OperationCanceledException) when (beating.IsCancellationRequested)
                    {
                        return;
                    }
                    catch (TallyhoException ex) when (ex.StatusCode is 409 or 404)
                    {
                        // The lease is gone (ran out, spent, job cancelled): stop the handler.
                        _onError(ex);
                        lost.Cancel();
                        return;
                    }
                    catch (Exception ex)
                    {
                        _onError(ex);
                    }
                }
            },
            CancellationToken.None);

        IReadOnlyList<ItemResult> results;
        var activity = JobWorkerTracing.StartProcess(lease);
        try
        {
            results = await _handler(lease.Items, lost.Token).ConfigureAwait(false);
        }
        catch (Exception ex)
        {
            activity?.SetStatus(ActivityStatusCode.Error);
            activity?.SetTag("error.type", ex.GetType().FullName);
            var reason = string.IsNullOrEmpty(ex.Message) ? "The handler failed" : ex.Message;
            results = lease.Items.Select(i => ItemResult.Retry(i.Id, reason.Length > 1000 ? reason.Substring(0, 1000) : reason)).ToArray();
        }
        finally
        {
            activity?.Dispose();
            beating.Cancel();
            await heart.ConfigureAwait(false);
        }

        if (lost.IsCancellationRequested)
        {
            Interlocked.Increment(ref _lost);
            return;
        }

        try
        {
            using var _ = await _http.SendAsync(
                new TallyhoRequest(HttpMethod.Post, $"leases/{TallyhoHttp.Segment(Volatile.Read(ref leaseId))}/complete") { Body = new Completion(results) },
                CancellationToken.None).ConfigureAwait(false);
            Interlocked.Increment(ref _completed);
        }
        catch (Exception ex)
        {
            if (ex is TallyhoException { StatusCode: 409 })
            {
                Interlocked.Increment(ref _lost);
            }

            _onError(ex);
        }
    }

    private sealed record LeaseRequest(int Wait, int? MaxItems);

    private sealed record Extension(string LeaseId);

    private sealed record Completion(IReadOnlyList<ItemResult> Results);
}
