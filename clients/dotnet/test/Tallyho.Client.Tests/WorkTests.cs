using Microsoft.Extensions.Time.Testing;
using Tallyho.Client.Schedules;
using Tallyho.Client.Streams;

namespace Tallyho.Client.Tests;

public class StreamTests
{
    private static HttpResponseMessage Accepted(Recorded r)
    {
        var events = r.Json().GetProperty("events").GetArrayLength();
        return FakeHandler.Json(200, new { type = "orders", partition = "p00", resource = "orders", requestId = "x", accepted = events, duplicates = 0, lastIndex = 1, ack = "flushed", flushed = true });
    }

    [Fact]
    public async Task Each_event_gets_the_producers_next_seq_and_a_retry_resends_the_same_numbers()
    {
        var time = new FakeTimeProvider();
        var calls = 0;
        var handler = new FakeHandler(r => Interlocked.Increment(ref calls) == 2 ? FakeHandler.Problem(503, "DependencyUnavailable", retryAfterSeconds: 1) : Accepted(r));
        using var client = Harness.Client(handler, time);
        using var producer = client.StreamProducer("orders", new StreamProducerOptions { ProducerId = "checkout-7", FirstSeq = 40, Linger = TimeSpan.Zero });

        var first = await producer.AppendManyAsync(new object?[] { new { order = 1 }, new { order = 2 } }, StreamAck.Flushed);
        var second = await Harness.Drive(time, producer.AppendAsync(new { order = 3 }), TimeSpan.FromMilliseconds(250));

        Assert.Equal(2, first.Accepted);
        Assert.True(second.Flushed);
        Assert.Equal(43, producer.NextSeq);
        var seqs = handler.Requests.Select(r => r.Json().GetProperty("events").EnumerateArray().Select(e => e.GetProperty("seq").GetInt64()).ToArray()).ToArray();
        Assert.Equal(new[] { 40L, 41L }, seqs[0]);
        Assert.Equal(new[] { 42L }, seqs[1]);
        Assert.Equal(new[] { 42L }, seqs[2]);
        Assert.Equal(handler.Requests[1].Body, handler.Requests[2].Body);
        Assert.Equal("/api/streams/orders/events?ack=flushed", handler.Requests[0].Uri.PathAndQuery);
        Assert.Equal("/api/streams/orders/events?ack=buffered", handler.Requests[1].Uri.PathAndQuery);
        Assert.All(handler.Requests, r => Assert.Equal("checkout-7", r.Json().GetProperty("events")[0].GetProperty("producer").GetString()));
    }

    [Fact]
    public async Task A_producer_without_a_first_seq_starts_above_anything_sent_before_by_time()
    {
        var time = new FakeTimeProvider(DateTimeOffset.FromUnixTimeMilliseconds(1_800_000_000_000));
        var handler = new FakeHandler(Accepted);
        using var client = Harness.Client(handler, time);
        using var producer = client.StreamProducer("orders", new StreamProducerOptions { Linger = TimeSpan.Zero });

        await producer.AppendAsync(null);

        Assert.StartsWith("dotnet-", producer.ProducerId, StringComparison.Ordinal);
        Assert.Equal(1_800_000_000_000_000, handler.Requests[0].Json().GetProperty("events")[0].GetProperty("seq").GetInt64());
    }
}

public class JobTests
{
    private static object Job(string state, int succeeded) => new
    {
        id = "job-1",
        processor = "billing",
        state,
        round = 0,
        totals = new { items = 3, succeeded, failed = 0, pending = 3 - succeeded },
    };

    [Fact]
    public async Task Submit_always_carries_an_Idempotency_Key_that_a_retry_reuses()
    {
        var time = new FakeTimeProvider();
        var calls = 0;
        var handler = new FakeHandler(r => Interlocked.Increment(ref calls) == 1 ? FakeHandler.Problem(503, "DependencyUnavailable", retryAfterSeconds: 1) : FakeHandler.Json(202, Job("accepted", 0)));
        using var client = Harness.Client(handler, time);

        var job = await Harness.Drive(time, client.Jobs.SubmitAsync("billing", new[] { new { id = "tx-1" } }), TimeSpan.FromMilliseconds(250));

        Assert.Equal("job-1", job.Id);
        Assert.Equal(2, handler.Requests.Count);
        Assert.NotNull(handler.Requests[0].Header("Idempotency-Key"));
        Assert.Equal(handler.Requests[0].Header("Idempotency-Key"), handler.Requests[1].Header("Idempotency-Key"));
        Assert.Equal("{\"processor\":\"billing\",\"items\":[{\"id\":\"tx-1\"}]}", handler.Requests[0].Body);
    }

    [Fact]
    public async Task Progress_yields_each_change_until_the_job_settles()
    {
        var time = new FakeTimeProvider();
        var states = new Queue<object>(new[] { Job("accepted", 0), Job("running", 1), Job("running", 1), Job("completed", 3) });
        var handler = new FakeHandler(_ => FakeHandler.Json(200, states.Dequeue()));
        using var client = Harness.Client(handler, time);

        var seen = new List<string>();
        var watch = Task.Run(async () =>
        {
            await foreach (var job in client.Jobs.WatchAsync("job-1"))
            {
                seen.Add($"{job.State}:{job.Totals.Succeeded}");
            }

            return seen.Count;
        });
        await Harness.Drive(time, watch, TimeSpan.FromMilliseconds(500));

        Assert.Equal(new[] { "accepted:0", "running:1", "completed:3" }, seen);
        Assert.Equal(4, handler.Requests.Count);
    }

    [Fact]
    public async Task Results_and_failures_follow_the_continuation_token_page_by_page()
    {
        var handler = new FakeHandler(r => r.Uri.AbsolutePath.EndsWith("/failures", StringComparison.Ordinal)
            ? FakeHandler.Json(200, new { items = new[] { new { id = "tx-9", code = "InvalidItem", reason = "amount", attempts = 1, envelope = "e", round = 0 } } })
            : r.Uri.Query.Contains("continuationToken=c2", StringComparison.Ordinal)
                ? FakeHandler.Json(200, new { items = new[] { new { id = "tx-2", status = "succeeded", attempts = 1 } } })
                : FakeHandler.Json(200, new { items = new[] { new { id = "tx-1", status = "succeeded", attempts = 1 } }, continuationToken = "c2" }));
        using var client = Harness.Client(handler, new FakeTimeProvider());

        var results = new List<string>();
        await foreach (var page in client.Jobs.GetResultsAsync("job-1", status: "succeeded").AsPages(pageSizeHint: 1))
        {
            results.AddRange(page.Values.Select(r => r.Id));
        }

        var failures = new List<string>();
        await foreach (var failure in client.Jobs.GetFailuresAsync("job-1"))
        {
            failures.Add($"{failure.Id}:{failure.Reason}");
        }

        Assert.Equal(new[] { "tx-1", "tx-2" }, results);
        Assert.Equal(new[] { "tx-9:amount" }, failures);
        Assert.Equal("?status=succeeded&maxPageSize=1", handler.Requests[0].Uri.Query);
        Assert.Equal("?status=succeeded&maxPageSize=1&continuationToken=c2", handler.Requests[1].Uri.Query);
        Assert.Equal(string.Empty, handler.Requests[2].Uri.Query);
    }

    [Fact]
    public async Task AsPages_resumes_from_a_token_and_answers_whole_pages()
    {
        var handler = new FakeHandler(r => r.Uri.Query.Contains("continuationToken=t2", StringComparison.Ordinal)
            ? FakeHandler.Json(200, new { items = new[] { new { name = "c", mode = "hits", partitions = 4, safetyWindowSeconds = 30 } }, unreadable = new[] { new { name = "bad", detail = "corrupt" } } })
            : FakeHandler.Json(200, new { items = new[] { new { name = "b", mode = "hits", partitions = 4, safetyWindowSeconds = 30 } }, unreadable = Array.Empty<object>(), continuationToken = "t2" }));
        using var client = Harness.Client(handler, new FakeTimeProvider());

        var pages = new List<Page<Tallyho.Client.Counters.CounterInfo>>();
        await foreach (var page in client.Counters.ListAsync().AsPages(continuationToken: "t1", pageSizeHint: 5))
        {
            pages.Add(page);
        }

        Assert.Equal(new[] { "b", "c" }, pages.SelectMany(p => p.Values).Select(c => c.Name));
        Assert.Equal(new string?[] { "t2", null }, pages.Select(p => p.ContinuationToken));
        Assert.Equal("bad", Assert.Single(pages[1].Unreadable).Name);
        Assert.Equal("?maxPageSize=5&continuationToken=t1", handler.Requests[0].Uri.Query);
        Assert.Equal("?maxPageSize=5&continuationToken=t2", handler.Requests[1].Uri.Query);
        Assert.Equal("admin-key", handler.Requests[0].Header("x-functions-key"));
    }
}

public class ScheduleTests
{
    private static object View(string state) => new { id = "nightly", state, overlap = "skip", target = new { type = "gateRelease", gate = "launch" }, runCount = 0, runs = Array.Empty<object>(), pendingTriggers = 0 };

    [Fact]
    public async Task Create_sends_the_definition_and_controls_send_the_admin_key()
    {
        var handler = new FakeHandler(r => r.Uri.AbsolutePath.EndsWith("/trigger", StringComparison.Ordinal)
            ? FakeHandler.Json(202, new { triggerId = "t-1", schedule = View("active") })
            : FakeHandler.Json(r.Method == HttpMethod.Post && r.Uri.AbsolutePath.StartsWith("/api/schedules", StringComparison.Ordinal) && !r.Uri.AbsolutePath.Contains("/nightly") ? 201 : 200, View(r.Uri.AbsolutePath.EndsWith("/pause", StringComparison.Ordinal) ? "paused" : "active")));
        using var client = Harness.Client(handler, new FakeTimeProvider());

        var created = await client.Schedules.CreateAsync(new ScheduleRequest
        {
            Id = "nightly",
            At = new DateTimeOffset(2027, 1, 15, 10, 0, 0, TimeSpan.FromHours(1)),
            Target = ScheduleTarget.GateRelease("launch"),
        });
        var paused = await client.Schedules.PauseAsync("nightly");
        var trigger = await client.Schedules.TriggerAsync("nightly");
        await client.Schedules.CreateAsync(new ScheduleRequest
        {
            Id = "remind",
            At = new DateTimeOffset(2027, 1, 15, 10, 0, 0, TimeSpan.FromHours(1)),
            Target = ScheduleTarget.QueueMessage("app-reminders", new { order = 1 }),
        });

        Assert.Equal("active", created.State);
        Assert.Equal("paused", paused.State);
        Assert.Equal("t-1", trigger.TriggerId);
        // A gate release is an admin action: only the admin-level twin of the create route takes it.
        Assert.Equal("/api/schedules/privileged", handler.Requests[0].Uri.AbsolutePath);
        Assert.Equal("{\"id\":\"nightly\",\"at\":\"2027-01-15T09:00:00.000Z\",\"target\":{\"type\":\"gateRelease\",\"gate\":\"launch\"}}", handler.Requests[0].Body);
        Assert.Equal("admin-key", handler.Requests[0].Header("x-functions-key"));
        Assert.Equal("admin-key", handler.Requests[1].Header("x-functions-key"));
        Assert.Equal("admin-key", handler.Requests[2].Header("x-functions-key"));
        Assert.Equal("/api/schedules", handler.Requests[3].Uri.AbsolutePath);
        Assert.Equal("function-key", handler.Requests[3].Header("x-functions-key"));
    }

    [Fact]
    public async Task Listing_follows_the_continuation_token()
    {
        var handler = new FakeHandler(r => r.Uri.Query.Contains("continuationToken=next", StringComparison.Ordinal)
            ? FakeHandler.Json(200, new { items = new[] { View("paused") }, continuationToken = (string?)null })
            : FakeHandler.Json(200, new { items = new[] { View("active") }, continuationToken = "next" }));
        using var client = Harness.Client(handler, new FakeTimeProvider());

        var states = new List<string>();
        await foreach (var schedule in client.Schedules.ListAsync())
        {
            states.Add(schedule.State);
        }

        Assert.Equal(new[] { "active", "paused" }, states);
        Assert.Equal(2, handler.Requests.Count);
    }
}
