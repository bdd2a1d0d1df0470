using Microsoft.Extensions.Time.Testing;

namespace Tallyho.Client.Tests;

public class CounterTests
{
    /// <summary>The earlier design: no linger, one request in flight per counter.</summary>
    private static void OneInFlight(TallyhoClientOptions options)
    {
        options.CounterOptions.Linger = TimeSpan.Zero;
        options.CounterOptions.MaxInFlight = 1;
    }

    [Fact]
    public async Task Increments_made_while_a_request_is_in_flight_go_out_as_one_request()
    {
        var release = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
        var handler = new FakeHandler(async r =>
        {
            await release.Task;
            return FakeHandler.Json(202, new { name = "hits", by = r.Json().GetProperty("by").GetInt64() });
        });
        using var client = Harness.Client(handler, new FakeTimeProvider(), OneInFlight);
        var counters = client.Counters;

        var first = counters.IncrementAsync("hits");
        await Harness.Eventually(() => handler.Requests.Count == 1, "first increment sent at once");
        var more = Enumerable.Range(0, 9).Select(_ => counters.IncrementAsync("hits")).Append(counters.IncrementAsync("hits", 5)).ToArray();
        Assert.Single(handler.Requests);

        release.SetResult(true);
        await first;
        await Task.WhenAll(more);

        Assert.Equal(new long[] { 1, 14 }, handler.Requests.Select(r => r.Json().GetProperty("by").GetInt64()));
        Assert.Equal(2, counters.RequestsSent);
        Assert.Equal(2, handler.Requests.Select(r => r.Header("Idempotency-Key")).Distinct().Count());
    }

    [Fact]
    public async Task A_batch_retried_after_a_lost_answer_keeps_its_key_so_it_counts_once()
    {
        var time = new FakeTimeProvider();
        var calls = 0;
        var handler = new FakeHandler(r => Interlocked.Increment(ref calls) == 1
            ? throw new HttpRequestException("answer lost")
            : FakeHandler.Json(202, new { name = "hits", by = 3 }));
        using var client = Harness.Client(handler, time, OneInFlight);

        var increments = Task.WhenAll(client.Counters.IncrementAsync("hits", 3));
        await Harness.Drive(time, increments.ContinueWith(t => t.IsCompletedSuccessfully, TaskScheduler.Default), TimeSpan.FromMilliseconds(100));
        await increments;

        Assert.Equal(2, handler.Requests.Count);
        Assert.Equal(handler.Requests[0].Header("Idempotency-Key"), handler.Requests[1].Header("Idempotency-Key"));
        Assert.Equal(handler.Requests[0].Body, handler.Requests[1].Body);
    }

    [Fact]
    public async Task Sums_are_split_at_the_largest_increment_and_a_zero_sum_sends_nothing()
    {
        var release = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
        var handler = new FakeHandler(async r =>
        {
            await release.Task;
            return FakeHandler.Json(202, new { name = r.Uri.Segments[3].TrimEnd('/'), by = 0 });
        });
        using var client = Harness.Client(handler, new FakeTimeProvider(), OneInFlight);

        var first = client.Counters.IncrementAsync("big", 1);
        await Harness.Eventually(() => handler.Requests.Count == 1, "first sent");
        var big = client.Counters.IncrementAsync("big", 1_500_000);
        var zeroFirst = client.Counters.IncrementAsync("zero", 4);
        await Harness.Eventually(() => handler.Requests.Count == 2, "zero's first sent");
        var plus = client.Counters.IncrementAsync("zero", 2);
        var minus = client.Counters.IncrementAsync("zero", -2);
        release.SetResult(true);
        await Task.WhenAll(first, big, zeroFirst, plus, minus);
        await client.Counters.FlushAsync();

        var bigs = handler.Requests.Where(r => r.Uri.AbsolutePath == "/api/counters/big/increment").Select(r => r.Json().GetProperty("by").GetInt64());
        Assert.Equal(new long[] { 1, 1_000_000, 500_000 }, bigs);
        Assert.Single(handler.Requests, r => r.Uri.AbsolutePath == "/api/counters/zero/increment");
    }

    [Fact]
    public async Task The_largest_increment_is_an_option_of_the_client()
    {
        var handler = new FakeHandler(r => FakeHandler.Json(202, new { name = "hits", by = 0 }));
        using var client = Harness.Client(handler, new FakeTimeProvider(), o =>
        {
            OneInFlight(o);
            o.CounterOptions.MaxIncrement = 10;
        });

        await client.Counters.IncrementAsync("hits", 25);

        Assert.Equal(new long[] { 10, 10, 5 }, handler.Requests.Select(r => r.Json().GetProperty("by").GetInt64()));
    }

    [Fact]
    public async Task DisposeAsync_drains_pending_increments_and_then_refuses_new_ones()
    {
        var release = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
        var handler = new FakeHandler(async _ =>
        {
            await release.Task;
            return FakeHandler.Json(202, new { name = "hits", by = 1 });
        });
        var client = Harness.Client(handler, new FakeTimeProvider(), OneInFlight);
        _ = client.Counters.IncrementAsync("hits");
        await Harness.Eventually(() => handler.Requests.Count == 1, "first increment in flight");
        _ = client.Counters.IncrementAsync("hits", 2);

        var disposing = client.DisposeAsync().AsTask();
        await Task.Delay(50);
        Assert.False(disposing.IsCompleted);
        release.SetResult(true);
        await disposing;

        Assert.Equal(new long[] { 1, 2 }, handler.Requests.Select(r => r.Json().GetProperty("by").GetInt64()));
        Assert.Throws<ObjectDisposedException>(() => { _ = client.Counters.IncrementAsync("hits"); });
    }
}
