using System.Collections.Concurrent;
using Microsoft.Extensions.Time.Testing;
using Tallyho.Client.Sequences;

namespace Tallyho.Client.Tests;

public class SequenceTests
{
    /// <summary>A fake sequences endpoint: hands out consecutive numbers for each count, replays by Idempotency-Key.</summary>
    private sealed class FakeSequence
    {
        private readonly ConcurrentDictionary<string, (long First, int Count)> _byKey = new();
        private long _next = 1;

        public List<int> Counts { get; } = new();

        public HttpResponseMessage Answer(Recorded request)
        {
            var count = request.Json().GetProperty("count").GetInt32();
            var key = request.Header("Idempotency-Key") ?? throw new InvalidOperationException("no key");
            var block = _byKey.GetOrAdd(key, _ =>
            {
                lock (Counts)
                {
                    Counts.Add(count);
                    var first = _next;
                    _next += count;
                    return (first, count);
                }
            });
            var numbers = Enumerable.Range(0, block.Count).Select(i => block.First + i).ToArray();
            return FakeHandler.Json(200, new { sequence = "orders", numbers, formatted = numbers.Select(n => SequenceFormat.Format(new SequenceSettings { Prefix = "ORD-" }, n)).ToArray() });
        }
    }

    [Fact]
    public async Task Numbers_come_from_one_reserved_block_until_the_prefetch_point()
    {
        var fake = new FakeSequence();
        var handler = new FakeHandler(fake.Answer);
        using var client = Harness.Client(handler, new FakeTimeProvider());
        var sequence = client.Sequence("orders", new SequenceClientOptions { InitialBlockSize = 10 });

        var first = new List<string>();
        for (var i = 0; i < 8; i++)
        {
            first.Add(await sequence.NextAsync());
        }

        Assert.Equal("ORD-0000001-" + SequenceFormat.CheckDigit("0000001"), first[0]);
        Assert.Single(handler.Requests);
        Assert.Equal("/api/sequences/orders/next", handler.Requests[0].Uri.AbsolutePath);
        Assert.Equal(10, handler.Requests[0].Json().GetProperty("count").GetInt32());

        // The 9th number leaves 1 of 10 (10%): the next block is reserved in the background.
        await sequence.NextAsync();
        await Harness.Eventually(() => handler.Requests.Count == 2, "prefetch sent at 10% left");
        await Harness.Eventually(() => sequence.Remaining > 1, "prefetched block arrived");
        Assert.Equal(2, handler.Requests.Count);
    }

    [Fact]
    public async Task Concurrent_callers_get_distinct_numbers_with_at_most_one_reservation_in_flight()
    {
        var fake = new FakeSequence();
        var inFlight = 0;
        var maxInFlight = 0;
        var handler = new FakeHandler(async r =>
        {
            var now = Interlocked.Increment(ref inFlight);
            InterlockedMax(ref maxInFlight, now);
            await Task.Delay(5);
            Interlocked.Decrement(ref inFlight);
            return fake.Answer(r);
        });
        using var client = Harness.Client(handler, new FakeTimeProvider());
        var sequence = client.Sequence("orders", new SequenceClientOptions { InitialBlockSize = 7, MaxBlockSize = 50 });

        var numbers = await Task.WhenAll(Enumerable.Range(0, 500).Select(_ => Task.Run(async () => await sequence.NextNumberAsync())));

        Assert.Equal(500, numbers.Select(n => n.Value).Distinct().Count());
        Assert.Equal(1, maxInFlight);
        Assert.All(fake.Counts, c => Assert.InRange(c, 1, 50));
    }

    [Fact]
    public async Task A_retried_reservation_reuses_its_Idempotency_Key_and_count()
    {
        var time = new FakeTimeProvider();
        var fake = new FakeSequence();
        var calls = 0;
        var handler = new FakeHandler(r => Interlocked.Increment(ref calls) switch
        {
            1 => throw new HttpRequestException("answer lost"),
            2 => FakeHandler.Problem(503, "DependencyUnavailable", retryAfterSeconds: 1),
            _ => fake.Answer(r),
        });
        using var client = Harness.Client(handler, time);

        var number = await Harness.Drive(time, client.Sequence("orders").NextNumberAsync().AsTask(), TimeSpan.FromMilliseconds(250));

        Assert.Equal(1, number.Value);
        var keys = handler.Requests.Select(r => r.Header("Idempotency-Key")).Distinct().ToArray();
        Assert.Equal(3, handler.Requests.Count);
        Assert.Single(keys);
        Assert.NotNull(keys[0]);
        Assert.Single(handler.Requests.Select(r => r.Body).Distinct());
    }

    [Fact]
    public async Task A_reservation_that_failed_for_good_is_sent_again_with_the_same_key_by_the_next_caller()
    {
        var fake = new FakeSequence();
        var calls = 0;
        var handler = new FakeHandler(r => Interlocked.Increment(ref calls) == 1 ? FakeHandler.Problem(500, "Internal") : fake.Answer(r));
        using var client = Harness.Client(handler, new FakeTimeProvider());
        var sequence = client.Sequence("orders");

        var ex = await Assert.ThrowsAsync<TallyhoException>(async () => await sequence.NextAsync());
        Assert.Equal("Internal", ex.Code);
        await sequence.NextAsync();

        Assert.Equal(2, handler.Requests.Count);
        Assert.Equal(handler.Requests[0].Header("Idempotency-Key"), handler.Requests[1].Header("Idempotency-Key"));
    }

    [Fact]
    public async Task Blocks_double_when_used_up_fast_and_halve_when_they_last_long()
    {
        var time = new FakeTimeProvider();
        var fake = new FakeSequence();
        var handler = new FakeHandler(fake.Answer);
        using var client = Harness.Client(handler, time);
        var sequence = client.Sequence("orders", new SequenceClientOptions { InitialBlockSize = 10, RefillTarget = TimeSpan.FromSeconds(10) });

        // Fast: each block is used up at once, so every reservation doubles the next one.
        for (var i = 0; i < 60; i++)
        {
            await sequence.NextAsync();
        }

        await Harness.Eventually(() => fake.Counts.Count >= 3, "three reservations");
        Assert.Equal(new[] { 10, 20, 40 }, fake.Counts.Take(3));

        // Slow: 30 s between reservations (over twice the target) halves the block.
        var before = fake.Counts.Count;
        while (fake.Counts.Count == before)
        {
            time.Advance(TimeSpan.FromSeconds(30));
            await sequence.NextAsync();
        }

        await Harness.Eventually(() => fake.Counts.Count == before + 1, "one more reservation");
        Assert.Equal(fake.Counts[before - 1] / 2, fake.Counts[before]);
    }

    private static void InterlockedMax(ref int target, int value)
    {
        int current;
        while ((current = Volatile.Read(ref target)) < value && Interlocked.CompareExchange(ref target, value, current) != current)
        {
        }
    }
}

public class SequenceFormatTests
{
    private static readonly SequenceSettings Orders = new() { Prefix = "ORD-", Width = 7, CheckDigit = true, Start = 1 };

    [Theory]
    [InlineData("572", 4)]
    [InlineData("0012345", 9)]
    [InlineData("0012346", 8)]
    [InlineData("", 0)]
    public void Damm_check_digits_match_known_values(string digits, int expected) =>
        Assert.Equal(expected, SequenceFormat.CheckDigit(digits));

    [Fact]
    public void Formats_like_the_server_and_accepts_its_own_output()
    {
        var formatted = SequenceFormat.Format(Orders, 12345);

        Assert.Equal("ORD-0012345-9", formatted);
        Assert.Equal(new SequenceValidation(true, 12345), SequenceFormat.Validate(Orders, formatted));
        Assert.Equal(new SequenceValidation(true, 12345), SequenceFormat.Validate(Orders, "ord-0012345-9"));
    }

    [Fact]
    public void Every_single_digit_error_and_adjacent_transposition_is_caught()
    {
        var digits = "0012345";
        for (var i = 0; i < digits.Length; i++)
        {
            for (var d = '0'; d <= '9'; d++)
            {
                if (d == digits[i])
                {
                    continue;
                }

                var typo = digits.Substring(0, i) + d + digits.Substring(i + 1);
                Assert.False(SequenceFormat.Validate(Orders, $"ORD-{typo}-9").Valid, typo);
            }

            if (i + 1 < digits.Length && digits[i] != digits[i + 1])
            {
                var swapped = digits.Substring(0, i) + digits[i + 1] + digits[i] + digits.Substring(i + 2);
                Assert.False(SequenceFormat.Validate(Orders, $"ORD-{swapped}-9").Valid, swapped);
            }
        }
    }

    [Theory]
    [InlineData("INV-0012345-9", "does not start with the prefix \"ORD-\"")]
    [InlineData("ORD-0012345", "has no check digit (expected \"-\" and one digit at the end)")]
    [InlineData("ORD-12345-9", "has 5 digits; numbers of this sequence have at least 7")]
    [InlineData("ORD-00012345-9", "has leading zeros beyond the width of 7")]
    [InlineData("ORD-0012345-1", "the check digit is wrong")]
    [InlineData("ORD-00a2345-9", "the number part must be digits only")]
    [InlineData("ORD-0000000-0", "is below the first number of this sequence (1)")]
    public void Invalid_numbers_get_the_servers_reasons(string text, string reason) =>
        Assert.Equal(new SequenceValidation(false, null, reason), SequenceFormat.Validate(Orders, text));
}
