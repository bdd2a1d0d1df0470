using Tallyho.Client.Operations;

namespace Tallyho.Client.IntegrationTests;

/// <summary>Long-running operations (the API's 202) as <see cref="Operation{T}"/>, against the host over HTTP.</summary>
[Collection("devhost")]
public sealed class OperationTests
{
    private readonly DevhostFixture _host;

    public OperationTests(DevhostFixture host) => _host = host;

    private static string Unique(string prefix) => $"{prefix}-{Guid.NewGuid().ToString("N").Substring(0, 10)}";

    [Fact]
    public async Task A_submitted_job_completes_at_the_Retry_After_interval_and_resumes_from_its_id_elsewhere()
    {
        await using var client = _host.Client();
        var operation = await client.Jobs.StartSubmitAsync("wordcount", new[] { new { id = "a", text = "one two" }, new { id = "b", text = "three" } });
        Assert.Equal(TimeSpan.FromSeconds(2), operation.PollInterval);
        Assert.StartsWith("/api/jobs/", operation.Id, StringComparison.Ordinal);
        Assert.Equal("accepted", operation.LatestValue?.State);
        Assert.False(operation.HasCompleted);
        Assert.Throws<InvalidOperationException>(() => operation.Value);

        var job = await operation.WaitForCompletionAsync();
        Assert.Equal("completed", job.State);
        Assert.Equal(2, job.Totals.Succeeded);
        Assert.True(operation.HasCompleted);
        Assert.Same(job, operation.Value);

        // Another client, from the id alone: nothing is submitted again.
        await using var other = _host.Client();
        var resumed = other.Jobs.ResumeOperation(operation.Id);
        Assert.Equal(job.Id, (await resumed.WaitForCompletionAsync()).Id);
        Assert.Throws<ArgumentException>(() => other.Jobs.ResumeOperation("/api/gates/x/runs/y"));
    }

    [Fact]
    public async Task A_cancelled_wait_leaves_the_run_waiting_and_a_resumed_operation_sees_it_proceed()
    {
        var name = Unique("lro");
        await using var admin = _host.Admin();
        var gate = admin.Gate(name);
        var created = await gate.CreateAsync(by: "dotnet");
        Assert.Equal("closed", created.State);

        var operation = await gate.StartRunAsync("w1");
        Assert.Equal(TimeSpan.FromSeconds(10), operation.PollInterval);
        Assert.Equal($"/api/gates/{name}/runs/w1", operation.Id);
        using (var cancel = new CancellationTokenSource(TimeSpan.FromMilliseconds(700)))
        {
            await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await operation.WaitForCompletionAsync(TimeSpan.FromMilliseconds(200), cancel.Token));
        }

        // The wait ended, the run did not (the cancel may have come before the first read answered).
        Assert.False(operation.HasCompleted);
        Assert.Equal("waiting", (await operation.UpdateStatusAsync()).State);
        Assert.Equal("waiting", operation.LatestValue?.State);
        Assert.Equal("waiting", (await gate.GetRunAsync("w1")).State);

        var released = await gate.ReleaseAsync(by: "dotnet");
        Assert.Equal("released", released.Outcome);
        Assert.True(released.Gate.IsReleased);

        var resumed = admin.Gate(name).ResumeRunOperation(operation.Id);
        var run = await resumed.UpdateStatusAsync();
        Assert.True(resumed.HasCompleted);
        Assert.Equal("proceeded", run.State);
        Assert.Equal("none", run.Action?.GetProperty("type").GetString());
        Assert.Throws<ArgumentException>(() => admin.Gate("other").ResumeRunOperation(operation.Id));
    }
}
