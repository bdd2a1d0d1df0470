using Microsoft.Extensions.Time.Testing;

namespace Tallyho.Client.Tests;

public class OperationTests
{
    private static object JobView(string state) => new { id = "j1", processor = "wordcount", state, round = 0, totals = new { items = 1, succeeded = state == "completed" ? 1 : 0, failed = 0, cancelled = 0, pending = state == "completed" ? 0 : 1 } };

    [Fact]
    public async Task A_started_operation_reads_its_Location_only_after_each_Retry_After()
    {
        var time = new FakeTimeProvider();
        var reads = new Queue<string>(new[] { "running", "completed" });
        var handler = new FakeHandler(r => r.Method == HttpMethod.Post
            ? FakeHandler.Json(202, JobView("accepted"), ("Location", "/api/jobs/j1"), ("Retry-After", "3"))
            : FakeHandler.Json(200, JobView(reads.Dequeue())));
        using var client = Harness.Client(handler, time);

        var operation = await client.Jobs.StartSubmitAsync("wordcount", new[] { new { id = "a" } });
        Assert.Equal("/api/jobs/j1", operation.Id);
        Assert.Equal(TimeSpan.FromSeconds(3), operation.PollInterval);
        var waiting = operation.WaitForCompletionAsync().AsTask();

        await Task.Delay(20);
        time.Advance(TimeSpan.FromSeconds(2.9));
        await Task.Delay(20);
        Assert.Single(handler.Requests);
        time.Advance(TimeSpan.FromSeconds(0.1));
        await Harness.Eventually(() => handler.Requests.Count == 2, "the first read, at 3 s");
        Assert.False(operation.HasCompleted);
        Assert.Equal("running", operation.LatestValue?.State);

        var job = await Harness.Drive(time, waiting, TimeSpan.FromSeconds(1));
        Assert.Equal("completed", job.State);
        Assert.Equal("/api/jobs/j1", handler.Requests[^1].Uri.AbsolutePath);
        Assert.Equal(3, handler.Requests.Count);
    }

    [Fact]
    public async Task A_202_without_Location_is_an_invalid_response()
    {
        var handler = new FakeHandler(_ => FakeHandler.Json(202, JobView("accepted")));
        using var client = Harness.Client(handler, new FakeTimeProvider());
        var error = await Assert.ThrowsAsync<TallyhoException>(() => client.Jobs.StartSubmitAsync("wordcount", new[] { new { id = "a" } }));
        Assert.Equal("InvalidResponse", error.Code);
    }

    [Fact]
    public async Task StartCancelAsync_answers_the_cancelling_job_and_polls_until_it_is_cancelled()
    {
        var time = new FakeTimeProvider();
        var reads = new Queue<string>(new[] { "cancelling", "cancelled" });
        var handler = new FakeHandler(r => r.Method == HttpMethod.Delete
            ? FakeHandler.Json(202, JobView("cancelling"), ("Location", "/api/jobs/j1"), ("Retry-After", "1"))
            : FakeHandler.Json(200, JobView(reads.Dequeue())));
        using var client = Harness.Client(handler, time);

        var operation = await client.Jobs.StartCancelAsync("j1");
        Assert.Equal("/api/jobs/j1", operation.Id);
        Assert.Equal(TimeSpan.FromSeconds(1), operation.PollInterval);
        Assert.False(operation.HasCompleted);
        Assert.Equal("cancelling", operation.LatestValue?.State);

        var job = await Harness.Drive(time, operation.WaitForCompletionAsync().AsTask(), TimeSpan.FromSeconds(1));
        Assert.Equal("cancelled", job.State);
        Assert.Equal(new[] { "DELETE", "GET", "GET" }, handler.Requests.Select(r => r.Method.Method).ToArray());
    }
}
