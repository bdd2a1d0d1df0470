using System.Collections.Concurrent;
using System.Diagnostics;
using System.Text.Json;
using Tallyho.Client.Counters;
using Tallyho.Client.Gates;
using Tallyho.Client.Sequences;
using Tallyho.Client.Streams;

namespace Tallyho.Client.IntegrationTests;

/// <summary>The TypeScript client's e2e cases, against the real devhost over HTTP.</summary>
[Collection("devhost")]
public sealed class ClientTests
{
    private static readonly GateWaitOptions FastReconnect = new() { ReconnectBaseDelay = TimeSpan.FromMilliseconds(100), ReconnectMaxDelay = TimeSpan.FromSeconds(1) };
    private readonly DevhostFixture _host;

    public ClientTests(DevhostFixture host) => _host = host;

    private static string Unique(string prefix) => $"{prefix}-{Guid.NewGuid().ToString("N").Substring(0, 10)}";

    [Fact]
    public async Task Concurrent_callers_in_separate_clients_never_get_the_same_number()
    {
        var name = Unique("orders");
        await using (var admin = _host.Admin())
        {
            await admin.Sequence(name).CreateAsync(new SequenceSettings { Prefix = "ORD-", Width = 7 });
        }

        var clients = Enumerable.Range(0, 3).Select(_ => _host.Client()).ToArray();
        try
        {
            var numbers = new ConcurrentBag<SequenceNumber>();
            await Task.WhenAll(clients.SelectMany(c => Enumerable.Range(0, 6).Select(_ => Task.Run(async () =>
            {
                for (var i = 0; i < 60; i++)
                {
                    numbers.Add(await c.Sequence(name).NextNumberAsync());
                }
            }))));

            Assert.Equal(3 * 6 * 60, numbers.Count);
            Assert.Equal(numbers.Count, numbers.Select(n => n.Value).Distinct().Count());
            Assert.Equal(numbers.Count, numbers.Select(n => n.Formatted).Distinct().Count());
            var sequence = clients[0].Sequence(name);
            foreach (var number in numbers.Take(50))
            {
                Assert.Equal(new SequenceValidation(true, number.Value), await sequence.ValidateAsync(number.Formatted));
            }

            Assert.False((await sequence.ValidateAsync(numbers.First().Formatted[..^1] + "x")).Valid);
        }
        finally
        {
            foreach (var client in clients)
            {
                await client.DisposeAsync();
            }
        }
    }

    [Fact]
    public async Task A_list_longer_than_a_page_is_read_completely_through_its_pages_and_a_token_serves_only_its_list()
    {
        var prefix = Unique("paged");
        var names = Enumerable.Range(0, 7).Select(i => $"{prefix}-{i}").ToArray();
        await using var admin = _host.Admin();
        foreach (var name in names)
        {
            await admin.Gate(name).CreateAsync();
        }

        var seen = new List<string>();
        (string Token, int Before)? middle = null;
        await foreach (var page in admin.Gates.ListAsync().AsPages(pageSizeHint: 3))
        {
            Assert.InRange(page.Values.Count, 0, 3);
            seen.AddRange(page.Values.Select(g => g.Name).Where(n => n.StartsWith(prefix, StringComparison.Ordinal)));
            if (middle is null && seen.Count > 0 && seen.Count < names.Length && page.ContinuationToken is not null)
            {
                middle = (page.ContinuationToken, seen.Count);
            }
        }

        // Every gate once, in name order, and a token part-way through resumes right after it.
        Assert.Equal(names.OrderBy(n => n, StringComparer.Ordinal), seen);
        Assert.NotNull(middle);
        var rest = new List<string>();
        await foreach (var page in admin.Gates.ListAsync().AsPages(middle!.Value.Token, 3))
        {
            rest.AddRange(page.Values.Select(g => g.Name).Where(n => n.StartsWith(prefix, StringComparison.Ordinal)));
        }

        Assert.Equal(seen.Skip(middle.Value.Before), rest);
        var items = new List<string>();
        await foreach (var gate in admin.Gates.ListAsync())
        {
            if (gate.Name.StartsWith(prefix, StringComparison.Ordinal))
            {
                items.Add(gate.Name);
            }
        }

        Assert.Equal(seen, items);

        // The sequences list refuses a token of the gates list.
        var refused = await Assert.ThrowsAsync<TallyhoException>(async () =>
        {
            await foreach (var page in admin.Sequences.ListAsync().AsPages(middle.Value.Token))
            {
                Assert.Fail("a page for a token of another list");
            }
        });
        Assert.Equal(400, refused.StatusCode);
        Assert.Equal("ValidationFailed", refused.Code);
    }

    [Fact]
    public async Task A_waiter_started_before_the_release_returns_with_it_and_a_late_joiner_at_once()
    {
        var name = Unique("gate");
        await using var admin = _host.Admin();
        await using var worker = _host.Client();
        await admin.Gate(name).CreateAsync();

        var gate = worker.Gate(name, FastReconnect);
        var waiting = gate.WaitAsync();
        await Task.Delay(1000);
        Assert.False(waiting.IsCompleted);

        var release = await admin.Gate(name).ReleaseAsync(by: "dotnet-tests");
        var released = await waiting;

        Assert.Equal("released", release.Outcome);
        Assert.True(released.IsReleased);
        Assert.Equal("dotnet-tests", released.ReleasedBy);
        Assert.Equal(GateWaitMode.ServerSentEvents, gate.LastWaitMode);

        // At once: answered by the first request, without opening an event stream (no clock: a busy machine is slower, not wrong).
        var late = worker.Gate(name);
        var again = await late.WaitAsync();
        Assert.True(again.IsReleased);
        Assert.Equal(0, late.LastWaitConnections);
    }

    [Fact]
    public async Task A_waiter_whose_event_stream_is_cut_reconnects_and_still_sees_the_release()
    {
        var name = Unique("gate");
        await using var admin = _host.Admin();
        await admin.Gate(name).CreateAsync();
        using var proxy = new TcpProxy(_host.BaseAddress);
        await using var worker = _host.Client(o => o.BaseAddress = proxy.Address);

        var gate = worker.Gate(name, FastReconnect);
        var waiting = gate.WaitAsync();
        await Eventually(() => proxy.ConnectionsThatSaw("event: state") == 1, "the first stream delivered the state");
        Assert.True(proxy.CutAll() >= 1);
        await Eventually(() => proxy.ConnectionsThatSaw("event: state") == 1, "a new stream delivered the state again");
        Assert.False(waiting.IsCompleted);

        await admin.Gate(name).ReleaseAsync();
        var released = await waiting;

        Assert.True(released.IsReleased);
        Assert.True(gate.LastWaitConnections >= 2, $"connections: {gate.LastWaitConnections}");
        Assert.Equal(GateWaitMode.ServerSentEvents, gate.LastWaitMode);
    }

    [Fact]
    public async Task Coalesced_increments_count_exactly()
    {
        var name = Unique("hits");
        await using (var admin = _host.Admin())
        {
            await admin.Counters.CreateAsync(name, new CounterSettings { Mode = "hits", Partitions = 4 });
        }

        await using var client = _host.Client();
        await Task.WhenAll(Enumerable.Range(0, 400).Select(i => Task.Run(() => client.Counters.IncrementAsync(name, i % 3 == 0 ? 2 : 1))));
        await client.Counters.FlushAsync();

        var expected = Enumerable.Range(0, 400).Sum(i => i % 3 == 0 ? 2 : 1);
        var value = await client.Counters.GetAsync(name, consistent: true);
        Assert.Equal(expected, value.Value);
        Assert.InRange(client.Counters.RequestsSent, 1, 399);
    }

    [Fact]
    public async Task A_job_runs_to_completion_with_progress_and_results()
    {
        await using var client = _host.Client();
        var items = Enumerable.Range(1, 6).Select(i => new
        {
            id = $"tx-{i}",
            customerId = $"c-{i % 2}",
            amountMinor = 1000 * i,
            currency = "EUR",
            taxCategory = i == 6 ? "no-such-category" : "standard",
            occurredAt = "2026-03-01T12:00:00Z",
        }).ToArray();

        var key = Unique("job");
        var job = await client.Jobs.SubmitAsync("billing", items, key);
        var again = await client.Jobs.SubmitAsync("billing", items, key);
        Assert.Equal(job.Id, again.Id);

        var states = new List<string>();
        Tallyho.Client.Jobs.Job? last = null;
        await foreach (var progress in client.Jobs.WatchAsync(job.Id, TimeSpan.FromMilliseconds(250)))
        {
            states.Add(progress.State);
            last = progress;
        }

        Assert.NotNull(last);
        Assert.Equal("completedWithFailures", last!.State);
        Assert.Equal(5, last.Totals.Succeeded);
        Assert.Equal(1, last.Totals.Failed);
        var results = new List<string>();
        await foreach (var page in client.Jobs.GetResultsAsync(job.Id, status: "succeeded").AsPages(pageSizeHint: 2))
        {
            Assert.InRange(page.Values.Count, 0, 2);
            results.AddRange(page.Values.Select(r => r.Id));
        }

        Assert.Equal(items.Take(5).Select(i => i.id).OrderBy(x => x, StringComparer.Ordinal), results.OrderBy(x => x, StringComparer.Ordinal));
        var failures = new List<Tallyho.Client.Jobs.JobFailure>();
        await foreach (var failure in client.Jobs.GetFailuresAsync(job.Id))
        {
            failures.Add(failure);
        }

        Assert.Equal("tx-6", Assert.Single(failures).Id);
        Assert.Contains("taxCategory", failures[0].Reason, StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_stream_append_retried_after_a_lost_answer_is_not_written_twice()
    {
        var type = Unique("ledger");
        var dropper = new DropFirstAnswer(new SocketsHttpHandler());
        await using var client = _host.Client(handler: dropper);
        var producerId = Unique("dotnet-it");
        using var producer = client.StreamProducer(type, new StreamProducerOptions { ProducerId = producerId });

        var first = await producer.AppendManyAsync(new object?[] { new { n = 1 }, new { n = 2 }, new { n = 3 } }, StreamAck.Flushed);

        // The server accepted the three events (on the try whose answer was dropped, or on a try before it
        // that answered 503 under load); the retry after the drop found them all duplicates.
        Assert.Equal(1, dropper.Dropped);
        Assert.True(dropper.Sent >= 2, $"sent: {dropper.Sent}");
        Assert.Equal(0, first.Accepted);
        Assert.Equal(3, first.Duplicates);
        Assert.True(first.Flushed);

        var next = await producer.AppendAsync(new { n = 4 }, StreamAck.Flushed);
        Assert.Equal(1, next.Accepted);
        Assert.Equal(0, next.Duplicates);

        // The log itself: each of the four events exactly once, in order.
        if (_host.StorageConnection is not null)
        {
            var log = await _host.ReadStreamLogAsync(next.Partition, next.Resource);
            var ours = log.Split('\n', StringSplitOptions.RemoveEmptyEntries)
                .Select(line => JsonDocument.Parse(line).RootElement)
                .Where(line => line.GetProperty("producer").GetString() == producerId)
                .Select(line => line.GetProperty("data").GetProperty("n").GetInt32())
                .ToArray();
            Assert.Equal(new[] { 1, 2, 3, 4 }, ours);
        }
    }

    /// <summary>Waits until <paramref name="condition"/> holds, with no deadline of its own: the test run's limit is the safety net (test/e2e/dotnet-client.test.ts).</summary>
    private static async Task Eventually(Func<bool> condition, string what)
    {
        for (var polls = 1; !condition(); polls++)
        {
            // Said now and then, so the run's output tells what a test that never ends waits for.
            if (polls % 200 == 0)
            {
                Console.WriteLine($"still waiting until {what}");
            }

            await Task.Delay(50);
        }
    }

    /// <summary>
    /// Drops the first successful answer after the server gave it (the connection "reset" after it
    /// accepted). An answer before it that failed retryably — a 503 "buffered but not flushed in time"
    /// on a busy machine — is passed on, and the client retries it as it would.
    /// </summary>
    private sealed class DropFirstAnswer : DelegatingHandler
    {
        private int _sent;
        private int _dropped;

        public DropFirstAnswer(HttpMessageHandler inner)
            : base(inner)
        {
        }

        public int Sent => Volatile.Read(ref _sent);

        public int Dropped => Volatile.Read(ref _dropped);

        protected override async Task<HttpResponseMessage> SendAsync(HttpRequestMessage request, CancellationToken cancellationToken)
        {
            var response = await base.SendAsync(request, cancellationToken);
            Interlocked.Increment(ref _sent);
            if (response.IsSuccessStatusCode && Interlocked.CompareExchange(ref _dropped, 1, 0) == 0)
            {
                using var answer = JsonDocument.Parse(await response.Content.ReadAsStringAsync(cancellationToken));
                var root = answer.RootElement;
                Assert.Equal(3, root.GetProperty("accepted").GetInt32() + root.GetProperty("duplicates").GetInt32());
                response.Dispose();
                throw new HttpRequestException("The connection was reset after the server answered.");
            }

            return response;
        }
    }
}
