using System.Net;
using Microsoft.Extensions.Time.Testing;
using Tallyho.Client.Gates;
using Tallyho.Client.Testing;

namespace Tallyho.Client.Tests;

public class ReleaseTests
{
    private static HttpResponseMessage GateJson(string state) => FakeHandler.Json(
        200,
        new { name = "launch", state, generation = 1, createdAt = "2026-01-01T00:00:00Z", generationStartedAt = "2026-01-01T00:00:00Z", waiters = new { waiting = 0, registered = 0, late = 0, proceeded = 0 } },
        ("ETag", $"\"{state}\""));

    private static (TallyhoClient Client, List<GateReleaseFallback> Fallbacks) Client(FakeHandler handler, FakeTimeProvider time)
    {
        var fallbacks = new List<GateReleaseFallback>();
        var client = Harness.Client(handler, time, o => o.ReleaseCacheOptions = new GateReleaseCacheOptions
        {
            CacheDuration = TimeSpan.FromSeconds(1),
            Timeout = TimeSpan.FromMilliseconds(500),
            OnFallback = f =>
            {
                lock (fallbacks)
                {
                    fallbacks.Add(f);
                }
            },
        });
        return (client, fallbacks);
    }

    [Fact]
    public async Task Answers_from_the_cache_until_it_expires_then_revalidates_with_If_None_Match()
    {
        var state = "closed";
        var handler = new FakeHandler(r => r.Header("If-None-Match") == $"\"{state}\"" ? new HttpResponseMessage(HttpStatusCode.NotModified) : GateJson(state));
        var time = new FakeTimeProvider();
        var (client, fallbacks) = Client(handler, time);
        using var _ = client;

        Assert.False(await client.IsReleasedAsync("launch", defaultValue: true));
        state = "released";
        time.Advance(TimeSpan.FromMilliseconds(999));
        Assert.False(await client.IsReleasedAsync("launch", defaultValue: true));
        Assert.Single(handler.Requests);
        time.Advance(TimeSpan.FromMilliseconds(1));
        Assert.True(await client.IsReleasedAsync("launch", defaultValue: false));
        time.Advance(TimeSpan.FromSeconds(1));
        Assert.True(await client.IsReleasedAsync("launch", defaultValue: false));
        Assert.Equal(new string?[] { null, "\"closed\"", "\"released\"" }, handler.Requests.Select(r => r.Header("If-None-Match")));
        Assert.Empty(fallbacks);
    }

    [Fact]
    public async Task Unreachable_with_nothing_seen_answers_the_default_reports_it_and_caches_the_failure()
    {
        var handler = new FakeHandler((Func<Recorded, HttpResponseMessage>)(_ => throw new HttpRequestException("connection refused")));
        var time = new FakeTimeProvider();
        var (client, fallbacks) = Client(handler, time);
        using var _ = client;

        Assert.True(await client.IsReleasedAsync("launch", defaultValue: true));
        Assert.False(await client.IsReleasedAsync("launch", defaultValue: false));
        Assert.Single(handler.Requests);
        Assert.Equal(new[] { (GateReleaseFallbackSource.Default, true), (GateReleaseFallbackSource.Default, false) }, fallbacks.Select(f => (f.Source, f.Answer)));
        time.Advance(TimeSpan.FromSeconds(1));
        await client.IsReleasedAsync("launch", defaultValue: false);
        Assert.Equal(2, handler.Requests.Count);
    }

    [Fact]
    public async Task A_failure_after_a_state_was_seen_answers_the_last_known_state()
    {
        var up = true;
        var handler = new FakeHandler(_ => up ? GateJson("released") : FakeHandler.Problem(503, "DependencyUnavailable"));
        var time = new FakeTimeProvider();
        var (client, fallbacks) = Client(handler, time);
        using var _ = client;

        Assert.True(await client.IsReleasedAsync("launch", defaultValue: false));
        up = false;
        time.Advance(TimeSpan.FromSeconds(1));
        Assert.True(await client.IsReleasedAsync("launch", defaultValue: false));
        var fallback = Assert.Single(fallbacks);
        Assert.Equal(GateReleaseFallbackSource.LastKnown, fallback.Source);
        Assert.Equal("DependencyUnavailable", Assert.IsType<TallyhoException>(fallback.Error).Code);
    }

    [Fact]
    public async Task No_such_gate_answers_the_default_and_a_hung_read_times_out_into_it()
    {
        var handler = new FakeHandler(async r =>
        {
            if (r.Uri.AbsolutePath.EndsWith("missing", StringComparison.Ordinal))
            {
                return FakeHandler.Problem(404, "NotFound");
            }

            await Task.Delay(Timeout.Infinite, CancellationToken.None).WaitAsync(TimeSpan.FromSeconds(30));
            return GateJson("released");
        });
        var time = new FakeTimeProvider();
        var (client, fallbacks) = Client(handler, time);
        using var _ = client;

        Assert.False(await client.IsReleasedAsync("missing", defaultValue: false));
        Assert.True(await Harness.Drive(time, client.IsReleasedAsync("hung", defaultValue: true), TimeSpan.FromMilliseconds(100)));
        Assert.Equal(new[] { "NotFound", "Timeout" }, fallbacks.Select(f => Assert.IsType<TallyhoException>(f.Error).Code));
    }

    [Fact]
    public async Task Concurrent_checks_of_one_gate_share_one_read()
    {
        var answer = new TaskCompletionSource<HttpResponseMessage>(TaskCreationOptions.RunContinuationsAsynchronously);
        var handler = new FakeHandler(_ => answer.Task);
        var (client, _) = Client(handler, new FakeTimeProvider());
        using var __ = client;

        var checks = Enumerable.Range(0, 10).Select(_ => client.IsReleasedAsync("launch", defaultValue: false)).ToArray();
        await Harness.Eventually(() => handler.Requests.Count == 1, "the read was sent");
        answer.SetResult(GateJson("released"));
        Assert.All(await Task.WhenAll(checks), Assert.True);
        Assert.Single(handler.Requests);
    }

    [Fact]
    public async Task The_test_double_answers_the_states_set_and_the_default_for_gates_never_set_or_unreachable()
    {
        IGateReleases gates = new TestGateReleases(new Dictionary<string, bool> { ["launch"] = true });
        var testGates = (TestGateReleases)gates;

        Assert.True(await gates.IsReleasedAsync("launch", defaultValue: false));
        testGates.Close("launch");
        Assert.False(await gates.IsReleasedAsync("launch", defaultValue: true));
        Assert.True(await gates.IsReleasedAsync("other", defaultValue: true));
        testGates.Release("other").Unreachable("launch");
        Assert.True(await gates.IsReleasedAsync("other", defaultValue: false));
        Assert.True(await gates.IsReleasedAsync("launch", defaultValue: true));
        Assert.Equal(new[] { ("other", true), ("launch", true) }, testGates.Fallbacks.Select(f => (f.Gate, f.Answer)));
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => gates.IsReleasedAsync("launch", true, new CancellationToken(canceled: true)));
    }
}
