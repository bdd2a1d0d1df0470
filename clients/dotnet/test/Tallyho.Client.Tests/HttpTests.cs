using Microsoft.Extensions.Time.Testing;

namespace Tallyho.Client.Tests;

public class HttpTests
{
    [Fact]
    public async Task Problem_answers_become_TallyhoException_with_the_server_code_and_issues()
    {
        var handler = new FakeHandler(_ => FakeHandler.Problem(400, "ValidationFailed", "The request body is not valid", issues: new[] { new { path = "body.count", message = "Too big" } }));
        using var client = Harness.Client(handler, new FakeTimeProvider());

        var ex = await Assert.ThrowsAsync<TallyhoException>(() => client.Sequence("orders").GetAsync());

        Assert.Equal(400, ex.StatusCode);
        Assert.Equal("ValidationFailed", ex.Code);
        Assert.Equal("GET http://tallyho.test/api/sequences/orders: The request body is not valid", ex.Message);
        Assert.Equal(new TallyhoIssue("body.count", "Too big"), Assert.Single(ex.Issues));
        Assert.False(ex.IsRetryable);
        Assert.Single(handler.Requests);
    }

    // The same table as the TypeScript client's transport test: both take the app's address with or without /api.
    [Theory]
    [InlineData("http://tallyho.test", "http://tallyho.test/api/sequences/orders")]
    [InlineData("http://tallyho.test/", "http://tallyho.test/api/sequences/orders")]
    [InlineData("http://tallyho.test/api", "http://tallyho.test/api/sequences/orders")]
    [InlineData("http://tallyho.test/api/", "http://tallyho.test/api/sequences/orders")]
    [InlineData("http://tallyho.test/tallyho", "http://tallyho.test/tallyho/api/sequences/orders")]
    [InlineData("http://tallyho.test/tallyho/api/", "http://tallyho.test/tallyho/api/sequences/orders")]
    public async Task The_base_address_reaches_the_api_with_or_without_its_prefix(string baseAddress, string expected)
    {
        var handler = new FakeHandler(_ => FakeHandler.Json(200, new { name = "orders" }));
        using var client = Harness.Client(handler, new FakeTimeProvider(), o => o.BaseAddress = new Uri(baseAddress));

        await client.Sequence("orders").GetAsync();

        Assert.Equal(expected, Assert.Single(handler.Requests).Uri.AbsoluteUri);
    }

    [Fact]
    public void A_base_address_with_a_query_is_refused()
    {
        var ex = Assert.Throws<ArgumentException>(() => new TallyhoClient(new TallyhoClientOptions { BaseAddress = new Uri("http://tallyho.test/api?code=x") }));

        Assert.Contains("query or fragment", ex.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task An_answer_that_is_not_a_problem_names_the_url_tried()
    {
        var handler = new FakeHandler(_ => new HttpResponseMessage(System.Net.HttpStatusCode.NotFound) { Content = new StringContent("Not Found") });
        using var client = Harness.Client(handler, new FakeTimeProvider(), o => o.BaseAddress = new Uri("http://tallyho.test/api/api"));

        var ex = await Assert.ThrowsAsync<TallyhoException>(() => client.Sequence("orders").GetAsync());

        Assert.Equal("Http404", ex.Code);
        Assert.Equal("GET http://tallyho.test/api/api/sequences/orders: HTTP 404 Not Found: Not Found", ex.Message);
    }

    [Fact]
    public async Task A_503_is_retried_only_after_its_Retry_After()
    {
        var time = new FakeTimeProvider();
        var calls = 0;
        var handler = new FakeHandler(_ => Interlocked.Increment(ref calls) == 1
            ? FakeHandler.Problem(503, "ConcurrencyExhausted", retryAfterSeconds: 3)
            : FakeHandler.Json(200, new { name = "hits", mode = "hits", value = 7, watermark = (string?)null, pendingHits = 7, consistent = false }));
        using var client = Harness.Client(handler, time);

        var read = client.Counters.GetAsync("hits");
        await Harness.Eventually(() => handler.Requests.Count == 1, "first try sent");
        time.Advance(TimeSpan.FromSeconds(2.9));
        await Task.Delay(50);
        Assert.Single(handler.Requests);
        Assert.False(read.IsCompleted);

        time.Advance(TimeSpan.FromSeconds(0.2));
        var value = await read.WaitAsync(TimeSpan.FromSeconds(5));

        Assert.Equal(7, value.Value);
        Assert.Equal(2, handler.Requests.Count);
    }

    [Fact]
    public async Task Retries_stop_at_MaxRetries_and_surface_the_last_problem()
    {
        var handler = new FakeHandler(_ => FakeHandler.Problem(429, "TooManyRequests", retryAfterSeconds: 1));
        var time = new FakeTimeProvider();
        using var client = Harness.Client(handler, time, o => o.MaxRetries = 2);

        var ex = await Assert.ThrowsAsync<TallyhoException>(() => Harness.Drive(time, client.Counters.GetAsync("hits"), TimeSpan.FromSeconds(1)));

        Assert.Equal("TooManyRequests", ex.Code);
        Assert.Equal(TimeSpan.FromSeconds(1), ex.RetryAfter);
        Assert.True(ex.IsRetryable);
        Assert.Equal(3, handler.Requests.Count);
    }

    [Fact]
    public async Task Keys_go_by_header_admin_operations_carry_the_admin_key_and_bodies_are_application_json()
    {
        var handler = new FakeHandler(r => r.Method == HttpMethod.Put
            ? FakeHandler.Json(201, new { name = "hits", mode = "hits", partitions = 4, safetyWindowSeconds = 60, createdAt = "x", updatedAt = "x" })
            : FakeHandler.Json(200, new { name = "hits", mode = "hits", value = 1, pendingHits = 1, consistent = true }));
        using var client = Harness.Client(handler, new FakeTimeProvider());

        await client.Counters.CreateAsync("hits");
        await client.Counters.GetAsync("hits", consistent: true);

        var (create, read) = (handler.Requests[0], handler.Requests[1]);
        Assert.Equal("admin-key", create.Header("x-functions-key"));
        Assert.Equal("application/json", create.ContentType);
        Assert.Equal("http://tallyho.test/api/counters/hits", create.Uri.ToString());
        Assert.Equal("function-key", read.Header("x-functions-key"));
        Assert.Equal("/api/counters/hits?consistent=true", read.Uri.PathAndQuery);
    }

    [Fact]
    public async Task A_lost_connection_is_retried_for_an_idempotent_request_and_reported_otherwise()
    {
        var time = new FakeTimeProvider();
        var calls = 0;
        var handler = new FakeHandler(r => Interlocked.Increment(ref calls) == 1
            ? throw new HttpRequestException("connection reset")
            : FakeHandler.Json(200, new { name = "hits", mode = "hits", value = 2, pendingHits = 0, consistent = false }));
        using var client = Harness.Client(handler, time);

        var value = await Harness.Drive(time, client.Counters.GetAsync("hits"), TimeSpan.FromMilliseconds(100));

        Assert.Equal(2, value.Value);
        Assert.Equal(2, handler.Requests.Count);

        var failing = new FakeHandler((Func<Recorded, HttpResponseMessage>)(_ => throw new HttpRequestException("refused")));
        using var other = Harness.Client(failing, time);
        var ex = await Assert.ThrowsAsync<TallyhoException>(() => other.Schedules.TriggerAsync("nightly"));
        Assert.Equal("ConnectionFailed", ex.Code);
        Assert.Single(failing.Requests);
    }
}
