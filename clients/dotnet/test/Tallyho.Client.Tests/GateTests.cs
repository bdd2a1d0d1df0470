using System.Net;
using System.Text;
using System.Text.Json;
using Microsoft.Extensions.Time.Testing;
using Tallyho.Client.Gates;

namespace Tallyho.Client.Tests;

public class GateTests
{
    private static object Gate(string state, int generation = 1) => new
    {
        name = "launch",
        state,
        generation,
        createdAt = "2026-01-01T00:00:00Z",
        generationStartedAt = "2026-01-01T00:00:00Z",
        releasedAt = state == "released" ? "2026-01-01T00:01:00Z" : null,
        releasedBy = state == "released" ? "ops" : null,
        waiters = new { waiting = 0, registered = 0, late = 0, proceeded = 0 },
    };

    private static HttpResponseMessage GateJson(string state) => FakeHandler.Json(200, Gate(state), ("ETag", $"\"{state}-1\""));

    private static string Event(string name, string state, string id) => $"event: {name}\nid: {id}\ndata: {JsonSerializer.Serialize(Gate(state))}\n\n";

    private static HttpResponseMessage Sse(string text) => Sse(new MemoryStream(Encoding.UTF8.GetBytes(text)));

    private static HttpResponseMessage Sse(Stream stream)
    {
        var content = new StreamContent(stream);
        content.Headers.ContentType = new System.Net.Http.Headers.MediaTypeHeaderValue("text/event-stream");
        return new HttpResponseMessage(HttpStatusCode.OK) { Content = content };
    }

    private static GateWaitOptions Fast => new() { ReconnectBaseDelay = TimeSpan.FromMilliseconds(100), ReconnectMaxDelay = TimeSpan.FromSeconds(1) };

    [Fact]
    public async Task A_late_joiner_returns_at_once_from_the_first_read()
    {
        var handler = new FakeHandler(_ => GateJson("released"));
        using var client = Harness.Client(handler, new FakeTimeProvider());

        var gate = await client.Gate("launch").WaitAsync();

        Assert.True(gate.IsReleased);
        Assert.Equal("ops", gate.ReleasedBy);
        Assert.Equal("/api/gates/launch", Assert.Single(handler.Requests).Uri.AbsolutePath);
    }

    [Fact]
    public async Task Reads_first_then_follows_the_event_stream_to_the_release()
    {
        var handler = new FakeHandler(r => r.Uri.AbsolutePath.EndsWith("/events", StringComparison.Ordinal)
            ? Sse("retry: 1000\n\n" + Event("state", "closed", "\"c\"") + ": heartbeat\n\n" + Event("released", "released", "\"r\""))
            : GateJson("closed"));
        using var client = Harness.Client(handler, new FakeTimeProvider());
        var gates = client.Gate("launch");

        var gate = await gates.WaitAsync();

        Assert.True(gate.IsReleased);
        Assert.Equal(GateWaitMode.ServerSentEvents, gates.LastWaitMode);
        Assert.Equal(new[] { "/api/gates/launch", "/api/gates/launch/events" }, handler.Requests.Select(r => r.Uri.AbsolutePath));
        Assert.Equal("text/event-stream", handler.Requests[1].Header("Accept"));
    }

    [Fact]
    public async Task A_dropped_stream_is_resumed_with_Last_Event_ID_after_a_jittered_delay()
    {
        var time = new FakeTimeProvider();
        var streams = 0;
        var handler = new FakeHandler(r =>
        {
            if (!r.Uri.AbsolutePath.EndsWith("/events", StringComparison.Ordinal))
            {
                return GateJson("closed");
            }

            return Interlocked.Increment(ref streams) == 1
                ? Sse(Event("state", "closed", "\"closed-7\""))
                : Sse(Event("released", "released", "\"released-7\""));
        });
        using var client = Harness.Client(handler, time);
        var gates = client.Gate("launch", Fast);

        var wait = gates.WaitAsync();
        await Harness.Eventually(() => streams == 1, "first stream");
        await Task.Delay(50);
        Assert.False(wait.IsCompleted);
        Assert.Equal(1, streams);

        var gate = await Harness.Drive(time, wait, TimeSpan.FromMilliseconds(20));

        Assert.True(gate.IsReleased);
        Assert.Equal(2, gates.LastWaitConnections);
        var events = handler.Requests.Where(r => r.Uri.AbsolutePath.EndsWith("/events", StringComparison.Ordinal)).ToArray();
        Assert.Null(events[0].Header("Last-Event-ID"));
        Assert.Equal("\"closed-7\"", events[1].Header("Last-Event-ID"));
    }

    [Fact]
    public async Task A_silent_stream_is_abandoned_after_the_heartbeat_timeout()
    {
        var time = new FakeTimeProvider();
        var streams = 0;
        var handler = new FakeHandler(r =>
        {
            if (!r.Uri.AbsolutePath.EndsWith("/events", StringComparison.Ordinal))
            {
                return GateJson("closed");
            }

            return Interlocked.Increment(ref streams) == 1 ? Sse(new HangingStream()) : Sse(Event("released", "released", "\"r\""));
        });
        using var client = Harness.Client(handler, time);
        var options = Fast;
        options.HeartbeatTimeout = TimeSpan.FromSeconds(45);
        var wait = client.Gate("launch", options).WaitAsync();
        await Harness.Eventually(() => streams == 1, "first stream");

        time.Advance(TimeSpan.FromSeconds(44));
        await Task.Delay(100);
        Assert.Equal(1, streams);
        Assert.False(wait.IsCompleted);

        var gate = await Harness.Drive(time, wait, TimeSpan.FromSeconds(1));
        Assert.True(gate.IsReleased);
        Assert.Equal(2, streams);
    }

    [Fact]
    public async Task Without_an_event_stream_it_long_polls_and_then_polls_with_the_ETag()
    {
        var time = new FakeTimeProvider();
        var polls = 0;
        var handler = new FakeHandler(r =>
        {
            var path = r.Uri.AbsolutePath;
            if (path.EndsWith("/events", StringComparison.Ordinal) || path.EndsWith("/wait", StringComparison.Ordinal))
            {
                return new HttpResponseMessage(HttpStatusCode.NotFound) { Content = new StringContent("no such route") };
            }

            // The first read, then polls: unchanged twice (304 for the ETag sent), then released.
            var n = Interlocked.Increment(ref polls);
            if (n == 1)
            {
                return GateJson("closed");
            }

            if (n <= 3)
            {
                Assert.Equal("\"closed-1\"", r.Header("If-None-Match"));
                return new HttpResponseMessage(HttpStatusCode.NotModified);
            }

            return GateJson("released");
        });
        using var client = Harness.Client(handler, time);
        var gates = client.Gate("launch", Fast);

        var gate = await Harness.Drive(time, gates.WaitAsync(), TimeSpan.FromMilliseconds(500));

        Assert.True(gate.IsReleased);
        Assert.Equal(GateWaitMode.Polling, gates.LastWaitMode);
        Assert.Single(handler.Requests, r => r.Uri.AbsolutePath.EndsWith("/events", StringComparison.Ordinal));
        Assert.Equal(3, handler.Requests.Count(r => r.Uri.AbsolutePath.EndsWith("/wait", StringComparison.Ordinal)));
        Assert.Equal(4, polls);
    }

    [Fact]
    public async Task Long_polls_are_the_fallback_when_streams_keep_failing()
    {
        var time = new FakeTimeProvider();
        var handler = new FakeHandler(r =>
        {
            var path = r.Uri.AbsolutePath;
            if (path.EndsWith("/events", StringComparison.Ordinal))
            {
                return FakeHandler.Problem(503, "DependencyUnavailable");
            }

            return path.EndsWith("/wait", StringComparison.Ordinal)
                ? FakeHandler.Json(200, new { released = true, timedOut = false, gate = Gate("released") })
                : GateJson("closed");
        });
        using var client = Harness.Client(handler, time);
        var gates = client.Gate("launch", Fast);

        var gate = await Harness.Drive(time, gates.WaitAsync(), TimeSpan.FromMilliseconds(100));

        Assert.True(gate.IsReleased);
        Assert.Equal(GateWaitMode.LongPoll, gates.LastWaitMode);
        Assert.Equal(3, handler.Requests.Count(r => r.Uri.AbsolutePath.EndsWith("/events", StringComparison.Ordinal)));
        Assert.Equal("/api/gates/launch/wait?timeout=30", handler.Requests.Last().Uri.PathAndQuery);
    }

    [Fact]
    public async Task Release_sends_the_admin_key_and_returns_the_outcome()
    {
        var handler = new FakeHandler(_ => FakeHandler.Json(200, new { outcome = "released", gate = Gate("released") }));
        using var client = Harness.Client(handler, new FakeTimeProvider());

        var result = await client.Gate("launch").ReleaseAsync(by: "alice", note: "go");

        Assert.Equal("released", result.Outcome);
        Assert.True(result.Gate!.IsReleased);
        var request = Assert.Single(handler.Requests);
        Assert.Equal("admin-key", request.Header("x-functions-key"));
        Assert.Equal("{\"by\":\"alice\",\"note\":\"go\"}", request.Body);
    }

    [Fact]
    public async Task Waiting_on_a_missing_gate_throws_NotFound()
    {
        var handler = new FakeHandler(_ => FakeHandler.Problem(404, "NotFound", "No such gate"));
        using var client = Harness.Client(handler, new FakeTimeProvider());

        var ex = await Assert.ThrowsAsync<TallyhoException>(() => client.Gate("nope").WaitAsync());
        Assert.Equal("NotFound", ex.Code);
    }

    [Fact]
    public async Task A_refused_key_on_the_event_stream_fails_at_once_instead_of_falling_back()
    {
        var handler = new FakeHandler(r => r.Uri.AbsolutePath.EndsWith("/events", StringComparison.Ordinal)
            ? new HttpResponseMessage(HttpStatusCode.Unauthorized)
            : GateJson("closed"));
        using var client = Harness.Client(handler, new FakeTimeProvider());

        var ex = await Assert.ThrowsAsync<TallyhoException>(() => client.Gate("launch", Fast).WaitAsync());

        Assert.Equal(401, ex.StatusCode);
        Assert.Equal(2, handler.Requests.Count);
    }

    /// <summary>An event stream that never sends anything until it is cancelled or disposed.</summary>
    private sealed class HangingStream : Stream
    {
        private readonly CancellationTokenSource _disposed = new();

        public override bool CanRead => true;

        public override bool CanSeek => false;

        public override bool CanWrite => false;

        public override long Length => throw new NotSupportedException();

        public override long Position { get => throw new NotSupportedException(); set => throw new NotSupportedException(); }

        public override void Flush()
        {
        }

        public override int Read(byte[] buffer, int offset, int count) => throw new NotSupportedException();

        public override async ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
        {
            using var both = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken, _disposed.Token);
            await Task.Delay(Timeout.Infinite, both.Token);
            return 0;
        }

        public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
            ReadAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

        public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

        public override void SetLength(long value) => throw new NotSupportedException();

        public override void Write(byte[] buffer, int offset, int count) => throw new NotSupportedException();

        protected override void Dispose(bool disposing)
        {
            _disposed.Cancel();
            base.Dispose(disposing);
        }
    }
}
