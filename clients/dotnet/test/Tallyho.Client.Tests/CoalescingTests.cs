using System.Collections.Concurrent;
using Microsoft.Extensions.Time.Testing;
using Tallyho.Client.Streams;

namespace Tallyho.Client.Tests;

/// <summary>Coalescing in the Kafka producer's model: linger, several requests in flight, order and ack modes kept.</summary>
public class CoalescingTests
{
    private static long[] Seqs(Recorded r) => r.Json().GetProperty("events").EnumerateArray().Select(e => e.GetProperty("seq").GetInt64()).ToArray();

    private static HttpResponseMessage Answer(int accepted, string ack = "buffered") =>
        FakeHandler.Json(202, new { type = "orders", partition = "p00", resource = "orders", requestId = "x", accepted, duplicates = 0, lastIndex = 1, ack, flushed = ack == "flushed" });

    /// <summary>A server whose answers wait until the test lets each one go, in any order.</summary>
    private sealed class HeldServer
    {
        private readonly ConcurrentQueue<(Recorded Request, TaskCompletionSource<HttpResponseMessage> Answer)> _arrived = new();
        private readonly List<(Recorded Request, TaskCompletionSource<HttpResponseMessage> Answer)> _held = new();

        public HeldServer() => Handler = new FakeHandler(r =>
        {
            var answer = new TaskCompletionSource<HttpResponseMessage>(TaskCreationOptions.RunContinuationsAsynchronously);
            _arrived.Enqueue((r, answer));
            return answer.Task;
        });

        public FakeHandler Handler { get; }

        /// <summary>The requests out, in the order they arrived.</summary>
        public IReadOnlyList<(Recorded Request, TaskCompletionSource<HttpResponseMessage> Answer)> Held
        {
            get
            {
                while (_arrived.TryDequeue(out var r))
                {
                    _held.Add(r);
                }

                return _held;
            }
        }

        public void Answer(int index, Func<Recorded, HttpResponseMessage> answer)
        {
            var (request, tcs) = Held[index];
            _held.RemoveAt(index);
            tcs.SetResult(answer(request));
        }
    }

    [Fact]
    public async Task An_increment_lingers_five_ms_by_default_then_goes_with_those_made_meanwhile()
    {
        var time = new FakeTimeProvider();
        var handler = new FakeHandler(_ => FakeHandler.Json(202, new { name = "hits", by = 0 }));
        using var client = Harness.Client(handler, time);

        var first = client.Counters.IncrementAsync("hits", 1);
        time.Advance(TimeSpan.FromMilliseconds(3));
        var second = client.Counters.IncrementAsync("hits", 2);
        await Task.Delay(50);
        Assert.Empty(handler.Requests);
        time.Advance(TimeSpan.FromMilliseconds(2));
        await Task.WhenAll(first, second);
        var third = client.Counters.IncrementAsync("hits", 4);
        await client.Counters.FlushAsync();
        await third;

        Assert.Equal(new long[] { 3, 4 }, handler.Requests.Select(r => r.Json().GetProperty("by").GetInt64()));
    }

    [Fact]
    public async Task Up_to_four_increment_requests_are_out_at_once_per_counter_then_the_waiting_batch_grows()
    {
        var server = new HeldServer();
        using var client = Harness.Client(server.Handler, new FakeTimeProvider(), o => o.CounterOptions.Linger = TimeSpan.Zero);

        var done = new List<Task>();
        for (var i = 1; i <= 6; i++)
        {
            done.Add(client.Counters.IncrementAsync("hits", i));
            var sent = Math.Min(i, 4);
            await Harness.Eventually(() => server.Held.Count == sent, $"{sent} out");
        }

        done.Add(client.Counters.IncrementAsync("hits", 10));
        await Task.Delay(50);
        Assert.Equal(new long[] { 1, 2, 3, 4 }, server.Held.Select(h => h.Request.Json().GetProperty("by").GetInt64()));
        server.Answer(0, _ => FakeHandler.Json(202, new { name = "hits", by = 0 }));
        await Harness.Eventually(() => server.Held.Count == 4, "the grown batch out");
        Assert.Equal(5 + 6 + 10, server.Held[3].Request.Json().GetProperty("by").GetInt64());
        while (server.Held.Count > 0)
        {
            server.Answer(0, _ => FakeHandler.Json(202, new { name = "hits", by = 0 }));
        }

        await Task.WhenAll(done);
        Assert.Equal(5, client.Counters.RequestsSent);
    }

    [Fact]
    public async Task Each_append_request_first_resends_the_events_of_those_still_unanswered()
    {
        var server = new HeldServer();
        using var client = Harness.Client(server.Handler, new FakeTimeProvider());
        using var producer = client.StreamProducer("orders", new StreamProducerOptions { ProducerId = "p1", FirstSeq = 100, Linger = TimeSpan.Zero });

        var appended = new List<Task<StreamAppendResult>>();
        for (var n = 1; n <= 5; n++)
        {
            appended.Add(producer.AppendAsync(n));
            var sent = Math.Min(n, 4);
            await Harness.Eventually(() => server.Held.Count == sent, $"{sent} out");
        }

        Assert.Equal(new[] { "100", "100,101", "100,101,102", "100,101,102,103" }, server.Held.Select(h => string.Join(",", Seqs(h.Request))));
        server.Answer(0, _ => Answer(1));
        await Harness.Eventually(() => server.Held.Count == 4, "the fifth out");
        Assert.Equal(new long[] { 101, 102, 103, 104 }, Seqs(server.Held[3].Request));
        while (server.Held.Count > 0)
        {
            server.Answer(0, _ => Answer(1));
            await Task.Delay(1);
        }

        Assert.Equal(5, (await Task.WhenAll(appended)).Length);
    }

    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(3)]
    [InlineData(4)]
    [InlineData(5)]
    [InlineData(6)]
    public async Task Whatever_order_appends_land_in_and_whichever_are_refused_every_completed_append_is_in_the_log(int seed)
    {
        var random = new Random(seed);
        var server = new HeldServer();
        using var client = Harness.Client(server.Handler, new FakeTimeProvider());
        using var producer = client.StreamProducer("orders", new StreamProducerOptions { ProducerId = "p1", FirstSeq = 1, Linger = TimeSpan.Zero, MaxInFlight = 1 + (seed % 4) });
        var log = new List<long>();
        HttpResponseMessage Land(Recorded r)
        {
            var accepted = 0;
            foreach (var seq in Seqs(r).Where(seq => seq > (log.Count == 0 ? 0 : log[^1])))
            {
                log.Add(seq);
                accepted++;
            }

            return Answer(accepted);
        }

        var appends = new List<(Task<StreamAppendResult> Task, long[] Seqs)>();
        for (var i = 0; i < 30; i++)
        {
            var first = producer.NextSeq;
            var size = random.Next(1, 4);
            var ack = random.Next(2) == 0 ? StreamAck.Buffered : StreamAck.Flushed;
            appends.Add((producer.AppendManyAsync(Enumerable.Range(0, size).Select(n => (object?)n), ack), Enumerable.Range(0, size).Select(n => first + n).ToArray()));
            await Task.Delay(random.Next(0, 3));
            if (server.Held.Count > 0 && random.Next(3) > 0)
            {
                var refuse = random.Next(4) == 0;
                server.Answer(random.Next(server.Held.Count), r => refuse ? FakeHandler.Problem(400, "ValidationFailed") : Land(r));
            }
        }

        for (var round = 0; round < 5000 && !appends.All(a => a.Task.IsCompleted); round++)
        {
            await producer.FlushAsync().WaitAsync(TimeSpan.FromMilliseconds(20)).ContinueWith(_ => { }, TaskScheduler.Default);
            await Task.Delay(1);
            if (server.Held.Count > 0)
            {
                server.Answer(random.Next(server.Held.Count), Land);
            }
        }

        Assert.True(appends.All(a => a.Task.IsCompleted), "every append settled");
        Assert.Equal(log.OrderBy(s => s), log);
        var completed = appends.Where(a => a.Task.Status == TaskStatus.RanToCompletion).SelectMany(a => a.Seqs).ToArray();
        Assert.NotEmpty(completed);
        Assert.Empty(completed.Except(log));
    }

    [Fact]
    public async Task An_append_whose_request_failed_completes_when_a_later_one_carried_it_but_a_flushed_one_never_by_a_buffered_answer()
    {
        var server = new HeldServer();
        using var client = Harness.Client(server.Handler, new FakeTimeProvider());
        using var producer = client.StreamProducer("orders", new StreamProducerOptions { ProducerId = "p1", FirstSeq = 100, Linger = TimeSpan.Zero });

        var flushed = producer.AppendAsync("f", StreamAck.Flushed);
        await Harness.Eventually(() => server.Held.Count == 1, "flushed out");
        var first = producer.AppendAsync("b1");
        await Harness.Eventually(() => server.Held.Count == 2, "b1 out");
        var second = producer.AppendAsync("b2");
        await Harness.Eventually(() => server.Held.Count == 3, "b2 out");
        Assert.Equal(
            new[] { "/api/streams/orders/events?ack=flushed 100", "/api/streams/orders/events?ack=buffered 100,101", "/api/streams/orders/events?ack=buffered 100,101,102" },
            server.Held.Select(h => $"{h.Request.Uri.PathAndQuery} {string.Join(",", Seqs(h.Request))}"));

        server.Answer(2, _ => Answer(3));
        Assert.Equal(3, (await second).Accepted);
        server.Answer(1, _ => FakeHandler.Problem(400, "ValidationFailed"));
        server.Answer(0, _ => FakeHandler.Problem(400, "ValidationFailed"));

        Assert.Equal(3, (await first).Accepted);
        var refused = await Assert.ThrowsAsync<TallyhoException>(() => flushed);
        Assert.Equal("ValidationFailed", refused.Code);
    }

    [Fact]
    public async Task A_batch_that_would_not_fit_beside_those_out_waits_for_them_and_resends_nothing()
    {
        var server = new HeldServer();
        using var client = Harness.Client(server.Handler, new FakeTimeProvider());
        using var producer = client.StreamProducer("orders", new StreamProducerOptions { ProducerId = "p1", FirstSeq = 100, Linger = TimeSpan.Zero });

        var first = producer.AppendManyAsync(Enumerable.Range(0, 300).Select(n => (object?)n));
        await Harness.Eventually(() => server.Held.Count == 1, "first out");
        var second = producer.AppendManyAsync(Enumerable.Range(0, 300).Select(n => (object?)n));
        await Task.Delay(50);
        Assert.Single(server.Held);
        server.Answer(0, _ => Answer(300));
        await first;
        await Harness.Eventually(() => server.Held.Count == 1, "second out");
        Assert.Equal(300, Seqs(server.Held[0].Request).Length);
        Assert.Equal(400, Seqs(server.Held[0].Request)[0]);
        server.Answer(0, _ => Answer(300));
        await second;
    }
}
