using Microsoft.Extensions.Time.Testing;
using Tallyho.Client.Jobs;

namespace Tallyho.Client.Tests;

public class JobWorkerTests
{
    private static object Lease(string id, params string[] items) => new
    {
        leaseId = id,
        processor = "thumbs",
        expiresAt = "2030-01-01T00:00:00Z",
        leaseSeconds = 30,
        items = items.Select(i => new { id = i, jobId = "j1", attempt = 1, data = new { n = 3 } }).ToArray(),
        links = new { },
    };

    [Fact]
    public async Task Leases_hands_the_batch_to_the_handler_completes_with_its_results_and_drains_on_stop()
    {
        var time = new FakeTimeProvider();
        var leases = 0;
        var handler = new FakeHandler(r => r.Uri.AbsolutePath.EndsWith("/leases", StringComparison.Ordinal)
            ? Interlocked.Increment(ref leases) == 1 ? FakeHandler.Json(200, Lease("L1", "a", "b")) : new HttpResponseMessage(System.Net.HttpStatusCode.NoContent)
            : FakeHandler.Json(200, new { recorded = 2, alreadyFinal = 0, retrying = 0, jobFinished = false }));
        using var client = Harness.Client(handler, time);
        var seen = new List<string>();
        using var worker = new JobWorker(
            client,
            "thumbs",
            (items, _) =>
            {
                lock (seen)
                {
                    seen.AddRange(items.Select(i => i.Id));
                }

                return Task.FromResult<IReadOnlyList<ItemResult>>(items.Select(i => ItemResult.Succeeded(i.Id, new { square = 9 })).ToArray());
            },
            new JobWorkerOptions { BatchSize = 10, Wait = TimeSpan.FromSeconds(5) });

        await worker.StartAsync(CancellationToken.None);
        await Harness.Eventually(() => worker.Completed == 1, "the batch completed");
        await worker.StopAsync(CancellationToken.None);

        Assert.Equal(new[] { "a", "b" }, seen);
        var lease = handler.Requests[0];
        Assert.Equal("/api/processors/thumbs/leases", lease.Uri.AbsolutePath);
        Assert.Equal("{\"wait\":5,\"maxItems\":10}", lease.Body);
        var completion = handler.Requests.Single(r => r.Uri.AbsolutePath.EndsWith("/complete", StringComparison.Ordinal));
        Assert.Equal("/api/leases/L1/complete", completion.Uri.AbsolutePath);
        Assert.Equal("{\"results\":[{\"id\":\"a\",\"status\":\"succeeded\",\"output\":{\"square\":9}},{\"id\":\"b\",\"status\":\"succeeded\",\"output\":{\"square\":9}}]}", completion.Body);
    }

    [Fact]
    public async Task The_handler_runs_in_a_process_activity_whose_parent_is_the_lease_and_that_links_each_items_submission()
    {
        const string leaseTrace = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
        const string submitTrace = "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01";
        var traced = new
        {
            leaseId = "L1",
            processor = "thumbs",
            expiresAt = "2030-01-01T00:00:00Z",
            leaseSeconds = 30,
            traceparent = leaseTrace,
            items = new[] { new { id = "a", jobId = "j1", attempt = 1, data = new { n = 3 }, traceparent = submitTrace } },
            links = new { },
        };
        var stopped = new List<System.Diagnostics.Activity>();
        using var listener = new System.Diagnostics.ActivityListener
        {
            ShouldListenTo = s => s.Name == JobWorkerTracing.SourceName,
            Sample = (ref System.Diagnostics.ActivityCreationOptions<System.Diagnostics.ActivityContext> _) => System.Diagnostics.ActivitySamplingResult.AllDataAndRecorded,
            ActivityStopped = a => { lock (stopped) { stopped.Add(a); } },
        };
        System.Diagnostics.ActivitySource.AddActivityListener(listener);
        var time = new FakeTimeProvider();
        var leases = 0;
        var handler = new FakeHandler(r => r.Uri.AbsolutePath.EndsWith("/leases", StringComparison.Ordinal)
            ? Interlocked.Increment(ref leases) == 1 ? FakeHandler.Json(200, traced) : new HttpResponseMessage(System.Net.HttpStatusCode.NoContent)
            : FakeHandler.Json(200, new { recorded = 1, alreadyFinal = 0, retrying = 0, jobFinished = true }));
        using var client = Harness.Client(handler, time);
        string? current = null;
        string? itemTrace = null;
        using var worker = new JobWorker(
            client,
            "thumbs",
            (items, _) =>
            {
                current = System.Diagnostics.Activity.Current?.ParentId;
                itemTrace = items[0].Traceparent;
                return Task.FromResult<IReadOnlyList<ItemResult>>(items.Select(i => ItemResult.Succeeded(i.Id, new { })).ToArray());
            });
        await worker.StartAsync(CancellationToken.None);
        await Harness.Eventually(() => worker.Completed == 1, "the batch completed");
        await worker.StopAsync(CancellationToken.None);

        Assert.Equal(leaseTrace, current);
        Assert.Equal(submitTrace, itemTrace);
        System.Diagnostics.Activity process;
        lock (stopped)
        {
            process = Assert.Single(stopped);
        }

        Assert.Equal("process thumbs", process.DisplayName);
        Assert.Equal(System.Diagnostics.ActivityKind.Consumer, process.Kind);
        Assert.Equal("b7ad6b7169203331", process.ParentSpanId.ToHexString());
        var link = Assert.Single(process.Links);
        Assert.Equal("00f067aa0ba902b7", link.Context.SpanId.ToHexString());
        Assert.Equal("process", process.GetTagItem("messaging.operation.type"));
    }

    [Fact]
    public async Task StopAsync_cancels_the_open_lease_request()
    {
        var time = new FakeTimeProvider();
        var cancelled = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var handler = new FakeHandler(async (_, token) =>
        {
            // A long poll that never answers: only its caller's cancellation ends it.
            try
            {
                await Task.Delay(Timeout.Infinite, token);
            }
            catch (OperationCanceledException)
            {
                cancelled.TrySetResult();
                throw;
            }

            return new HttpResponseMessage(System.Net.HttpStatusCode.NoContent);
        });
        using var client = Harness.Client(handler, time);
        using var worker = new JobWorker(client, "thumbs", (_, _) => Task.FromResult<IReadOnlyList<ItemResult>>(Array.Empty<ItemResult>()), new JobWorkerOptions { Wait = TimeSpan.FromSeconds(20) });

        await worker.StartAsync(CancellationToken.None);
        await Harness.Eventually(() => handler.Requests.Count >= 1, "a lease request");
        Assert.False(cancelled.Task.IsCompleted);
        await worker.StopAsync(CancellationToken.None);

        Assert.True(cancelled.Task.IsCompleted, "the open lease request was cancelled by StopAsync");
        Assert.Single(handler.Requests);
        Assert.Equal(0, worker.Batches);
    }

    [Fact]
    public async Task A_lease_lost_under_a_heartbeat_cancels_the_handler_and_sends_nothing()
    {
        var time = new FakeTimeProvider();
        var leases = 0;
        var handler = new FakeHandler(r => r.Uri.AbsolutePath.EndsWith("/leases", StringComparison.Ordinal)
            ? Interlocked.Increment(ref leases) == 1 ? FakeHandler.Json(200, Lease("L1", "a")) : new HttpResponseMessage(System.Net.HttpStatusCode.NoContent)
            : FakeHandler.Problem(409, "Conflict", "The job was cancelled"));
        using var client = Harness.Client(handler, time);
        var cancelled = false;
        using var worker = new JobWorker(
            client,
            "thumbs",
            async (items, token) =>
            {
                try
                {
                    await Task.Delay(Timeout.Infinite, token);
                }
                catch (OperationCanceledException)
                {
                    cancelled = true;
                }

                return Array.Empty<ItemResult>();
            },
            new JobWorkerOptions { Heartbeat = TimeSpan.FromSeconds(5) });

        await worker.StartAsync(CancellationToken.None);
        await Harness.Eventually(() => handler.Requests.Count >= 1, "a lease");
        for (var i = 0; i < 50 && worker.Lost == 0; i++)
        {
            time.Advance(TimeSpan.FromSeconds(5));
            await Task.Delay(20);
        }

        await worker.StopAsync(CancellationToken.None);
        Assert.True(cancelled);
        Assert.Equal(1, worker.Lost);
        Assert.DoesNotContain(handler.Requests, r => r.Uri.AbsolutePath.EndsWith("/complete", StringComparison.Ordinal));
    }

    // Before: the 404 went to OnError (default: ignored) and the worker polled a misspelt name forever, silently.
    [Fact]
    public async Task A_404_on_the_processor_ends_the_worker_with_an_error_naming_it()
    {
        var time = new FakeTimeProvider();
        var handler = new FakeHandler(_ => FakeHandler.Problem(404, "NotFound", "No declared processor of that name"));
        using var client = Harness.Client(handler, time);
        using var worker = new JobWorker(client, "thmubs", (_, _) => Task.FromResult<IReadOnlyList<ItemResult>>(Array.Empty<ItemResult>()), new JobWorkerOptions { Concurrency = 2, OnError = _ => { } });

        await worker.StartAsync(CancellationToken.None);
        await Harness.Eventually(() => worker.ExecuteTask is { IsCompleted: true }, "the worker ended");
        var error = await Assert.ThrowsAsync<TallyhoException>(() => worker.ExecuteTask!);
        Assert.Equal(404, error.StatusCode);
        Assert.Contains("processor 'thmubs' was not found", error.Message, StringComparison.Ordinal);
        Assert.InRange(handler.Requests.Count, 1, 2); // each loop asks at most once: no retry loop behind a 404
    }

    // Before: OnError defaulted to nothing, so a worker whose every lease failed said nothing at all.
    [Fact]
    public async Task Without_OnError_the_first_error_of_each_kind_is_logged_and_its_repeats_are_not()
    {
        var time = new FakeTimeProvider();
        var leases = 0;
        var handler = new FakeHandler(r => Interlocked.Increment(ref leases) switch
        {
            <= 3 => FakeHandler.Problem(403, "Forbidden", "Not this key"),
            4 => FakeHandler.Problem(400, "ValidationFailed", "Bad wait"),
            _ => new HttpResponseMessage(System.Net.HttpStatusCode.NoContent),
        });
        using var client = Harness.Client(handler, time);
        var logger = new ListLogger();
        using var worker = new JobWorker(client, "thumbs", (_, _) => Task.FromResult<IReadOnlyList<ItemResult>>(Array.Empty<ItemResult>()), new JobWorkerOptions { Logger = logger });

        await worker.StartAsync(CancellationToken.None);
        for (var i = 0; i < 200 && Volatile.Read(ref leases) < 5; i++)
        {
            time.Advance(TimeSpan.FromSeconds(30));
            await Task.Delay(10);
        }

        await worker.StopAsync(CancellationToken.None);
        Assert.True(Volatile.Read(ref leases) >= 5);
        Assert.Equal(2, logger.Lines.Count);
        Assert.Contains("Forbidden:403", logger.Lines[0], StringComparison.Ordinal);
        Assert.Contains("ValidationFailed:400", logger.Lines[1], StringComparison.Ordinal);
    }

    private sealed class ListLogger : Microsoft.Extensions.Logging.ILogger
    {
        public List<string> Lines { get; } = new();

        public IDisposable? BeginScope<TState>(TState state)
            where TState : notnull => null;

        public bool IsEnabled(Microsoft.Extensions.Logging.LogLevel logLevel) => true;

        public void Log<TState>(Microsoft.Extensions.Logging.LogLevel logLevel, Microsoft.Extensions.Logging.EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
        {
            lock (Lines)
            {
                Lines.Add(formatter(state, exception));
            }
        }
    }
}

public class WebhookVerifierTests
{
    // The Standard Webhooks specification's published test vector
    // (https://github.com/standard-webhooks/standard-webhooks, spec/standard-webhooks.md and its libraries' tests).
    private const string Secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    private const string Id = "msg_p5jXN8AQM9LWM0D4loKWxJek";
    private const string Body = "{\"test\": 2432232314}";
    private const string Signature = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";

    private static WebhookVerifier At(long seconds) => new(Secret, new FakeTimeProvider(DateTimeOffset.FromUnixTimeSeconds(seconds)));

    [Fact]
    public void Accepts_the_specifications_test_vector_and_a_rotation_pair()
    {
        Assert.True(At(1614265330).IsValid(Id, "1614265330", Signature, Body));
        Assert.True(At(1614265330).IsValid(Id, "1614265330", "v1,AAAA " + Signature, Body));
        Assert.Equal(2432232314, At(1614265400).Verify<Dictionary<string, long>>(Id, "1614265330", Signature, Body)["test"]);
    }

    [Theory]
    [InlineData("1614265330", "{\"test\": 2432232315}", 1614265330)]
    [InlineData("1614265330", Body, 1614265631)]
    [InlineData("1614265330", Body, 1614265029)]
    [InlineData("not-a-time", Body, 1614265330)]
    public void Rejects_an_altered_body_or_a_timestamp_out_of_tolerance(string timestamp, string body, long now)
    {
        Assert.False(At(now).IsValid(Id, timestamp, Signature, body));
        Assert.Throws<UnauthorizedAccessException>(() => At(now).Verify<object>(Id, timestamp, Signature, body));
    }
}
