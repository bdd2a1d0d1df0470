using System.Text.RegularExpressions;
using Tallyho.Client.Counters;
using Tallyho.Client.Gates;
using Tallyho.Client.Jobs;
using Tallyho.Client.Schedules;
using Tallyho.Client.Sequences;
using Tallyho.Client.Streams;
using Tallyho.Client.Testing;

namespace Tallyho.Client.IntegrationTests;

/// <summary>
/// The examples of docs/client-dotnet.md, run against the devhost. Each <c>csharp</c> block of that page
/// must appear here verbatim (whitespace aside), so the page cannot show code that is not run.
/// </summary>
[Collection("devhost")]
public sealed class DocsExamples : IAsyncLifetime
{
    private readonly DevhostFixture _host;
    private readonly CancellationToken cancellationToken = new CancellationTokenSource(TimeSpan.FromSeconds(90)).Token;
    private readonly string functionKey = DevhostFixture.FunctionKey;
    private readonly string adminKey = DevhostFixture.AdminKey;
    private readonly string sequenceName = "docs-orders-" + Guid.NewGuid().ToString("N").Substring(0, 8);
    private readonly string gateName = "docs-gate-" + Guid.NewGuid().ToString("N").Substring(0, 8);
    private readonly string counterName = "docs-hits-" + Guid.NewGuid().ToString("N").Substring(0, 8);
    private readonly string scheduleId = "docs-nightly-" + Guid.NewGuid().ToString("N").Substring(0, 8);
    private readonly string eventType = "docs-ledger-" + Guid.NewGuid().ToString("N").Substring(0, 8);
    private readonly string batchId = "docs-batch-" + Guid.NewGuid().ToString("N");
    private readonly Uri baseAddress;
    private TallyhoClient tallyho = null!;

    public DocsExamples(DevhostFixture host)
    {
        _host = host;
        baseAddress = host.BaseAddress;
    }

    private static object[] transactions => Enumerable.Range(1, 3)
        .Select(i => (object)new { id = $"tx-{i}", customerId = "c-1", amountMinor = 100 * i, currency = "EUR", taxCategory = "standard", occurredAt = "2026-03-01T12:00:00Z" })
        .ToArray();

    public Task InitializeAsync()
    {
        var tallyho = new TallyhoClient(new TallyhoClientOptions
        {
            BaseAddress = baseAddress,
            FunctionKey = functionKey,
            AdminKey = adminKey,
        });
        this.tallyho = tallyho;
        return Task.CompletedTask;
    }

    public async Task DisposeAsync() => await tallyho.DisposeAsync();

    [Fact]
    public void Every_csharp_example_of_the_page_is_one_of_these()
    {
        var page = File.ReadAllText(Path.Combine(RepoRoot(), "docs", "client-dotnet.md"));
        var here = Normalize(File.ReadAllText(Path.Combine(RepoRoot(), "clients", "dotnet", "test", "Tallyho.Client.IntegrationTests", "DocsExamples.cs")));
        var blocks = Regex.Matches(page, "```csharp\\n(.*?)```", RegexOptions.Singleline).Select(m => m.Groups[1].Value).ToArray();

        Assert.True(blocks.Length >= 7, $"found {blocks.Length} csharp examples");
        Assert.All(blocks, block => Assert.Contains(Normalize(block), here, StringComparison.Ordinal));
    }

    [Fact]
    public async Task Sequences()
    {
        var orders = tallyho.Sequence(sequenceName);
        await orders.CreateAsync(new SequenceSettings { Prefix = "ORD-", Width = 7 });

        string orderNumber = await orders.NextAsync();                  // "ORD-0000001-3"
        SequenceValidation typed = await orders.ValidateAsync(orderNumber);
        bool valid = typed.Valid;                                       // Damm check digit, computed locally

        Assert.Equal("ORD-0000001-3", orderNumber);
        Assert.True(valid);
    }

    [Fact]
    public async Task Gates()
    {
        var gate = tallyho.Gate(gateName);
        await gate.CreateAsync();                                        // admin key

        Task<GateState> waiting = gate.WaitAsync(cancellationToken);     // a worker, before the release
        await gate.ReleaseAsync(by: "ops", note: "go");                  // admin key
        GateState released = await waiting;                              // released.IsReleased == true

        Assert.True(released.IsReleased);
        Assert.Equal("go", released.ReleaseNote);
    }

    [Fact]
    public async Task GateChecks()
    {
        await tallyho.Gate(gateName).CreateAsync();
        await tallyho.Gate(gateName).ReleaseAsync();

        IGateReleases releases = tallyho.Releases;                       // in the app
        bool newCheckout = await releases.IsReleasedAsync(gateName, defaultValue: false, cancellationToken);

        var testGates = new TestGateReleases(new Dictionary<string, bool> { ["new-checkout"] = true });   // in your tests
        bool inTest = await testGates.Close("new-checkout").IsReleasedAsync("new-checkout", defaultValue: true);   // false

        Assert.True(newCheckout);
        Assert.False(inTest);
    }

    [Fact]
    public async Task Counters()
    {
        await tallyho.Counters.CreateAsync(counterName);                 // admin key
        await Task.WhenAll(Enumerable.Range(0, 100).Select(_ => tallyho.Counters.IncrementAsync(counterName)));
        await tallyho.Counters.FlushAsync();
        CounterValue hits = await tallyho.Counters.GetAsync(counterName, consistent: true);   // hits.Value == 100

        Assert.Equal(100, hits.Value);
    }

    [Fact]
    public async Task Schedules()
    {
        Schedule nightly = await tallyho.Schedules.CreateAsync(new ScheduleRequest
        {
            Id = scheduleId,
            Cron = "0 30 2 * * *",
            TimeZone = "Europe/Amsterdam",
            Target = ScheduleTarget.GateRelease(gateName),
        });
        await tallyho.Schedules.PauseAsync(scheduleId);
        await tallyho.Schedules.ResumeAsync(scheduleId);
        await tallyho.Schedules.CancelAsync(scheduleId);

        Assert.Equal(scheduleId, nightly.Id);
        Assert.NotNull(nightly.NextFireAt);
        Assert.Equal("cancelled", (await tallyho.Schedules.GetAsync(scheduleId)).State);
    }

    [Fact]
    public async Task Jobs()
    {
        using var output = new StringWriter();
        var console = Console.Out;
        Console.SetOut(output);
        try
        {
            await RunJobExample();
        }
        finally
        {
            Console.SetOut(console);
        }

        var lines = output.ToString().Split('\n', StringSplitOptions.RemoveEmptyEntries);
        Assert.Equal("completed: 3/3", lines[^1].TrimEnd());
        Assert.DoesNotContain(lines, l => l.StartsWith("tx-", StringComparison.Ordinal));
    }

    private async Task RunJobExample()
    {
        Job job = await tallyho.Jobs.SubmitAsync("billing", transactions, idempotencyKey: batchId);
        await foreach (Job progress in tallyho.Jobs.WatchAsync(job.Id, cancellationToken: cancellationToken))
        {
            Console.WriteLine($"{progress.State}: {progress.Totals.Succeeded}/{progress.Totals.Items}");
        }

        await foreach (JobFailure failure in tallyho.Jobs.GetFailuresAsync(job.Id))
        {
            Console.WriteLine($"{failure.Id}: {failure.Reason}");
        }
    }

    [Fact]
    public async Task Workers()
    {
        var processorName = "docs-thumbs-" + Guid.NewGuid().ToString("N").Substring(0, 8);
        await tallyho.Jobs.DeclareProcessorAsync(processorName, new { type = "external", batchSize = 50 }, cancellationToken);
        Job job = await tallyho.Jobs.SubmitAsync(processorName, Enumerable.Range(1, 120).Select(i => new { id = $"img-{i}", url = $"https://example.com/{i}.jpg" }));

        var worker = new JobWorker(
            tallyho,
            processorName,
            (items, cancellationToken) => Task.FromResult<IReadOnlyList<ItemResult>>(items
                .Select(item => item.Data.TryGetProperty("url", out var url)
                    ? ItemResult.Succeeded(item.Id, new { thumbnail = url.GetString() + ".webp" })
                    : ItemResult.Failed(item.Id, "invalid", "The item has no url"))
                .ToArray()),
            new JobWorkerOptions { Concurrency = 4, BatchSize = 50 });
        await worker.StartAsync(cancellationToken); // in a generic host: builder.Services.AddHostedService(_ => worker)

        Job done = job;
        await foreach (Job progress in tallyho.Jobs.WatchAsync(job.Id, TimeSpan.FromMilliseconds(250), cancellationToken))
        {
            done = progress;
        }

        await worker.StopAsync(cancellationToken);
        Assert.Equal("completed", done.State);
        Assert.Equal(120, done.Totals.Succeeded);
        var first = await tallyho.Jobs.GetResultsAsync(job.Id).FirstAsync(cancellationToken);
        Assert.Equal("https://example.com/1.jpg.webp", first.Output?.GetProperty("thumbnail").GetString());
    }

    [Fact]
    public void Webhook_signatures()
    {
        var secret = "whsec_" + Convert.ToBase64String(Enumerable.Range(0, 32).Select(i => (byte)i).ToArray());
        var body = "{\"type\":\"tallyho.jobs.batch\",\"items\":[]}";
        var timestamp = DateTimeOffset.UtcNow.ToUnixTimeSeconds().ToString(System.Globalization.CultureInfo.InvariantCulture);
        using var hmac = new System.Security.Cryptography.HMACSHA256(Convert.FromBase64String(secret.Substring(6)));
        var signature = "v1," + Convert.ToBase64String(hmac.ComputeHash(System.Text.Encoding.UTF8.GetBytes($"msg-1.{timestamp}.{body}")));
        var headers = new Dictionary<string, string> { ["webhook-id"] = "msg-1", ["webhook-timestamp"] = timestamp, ["webhook-signature"] = signature };

        var verifier = new WebhookVerifier(secret);
        if (!verifier.IsValid(headers["webhook-id"], headers["webhook-timestamp"], headers["webhook-signature"], body))
        {
            throw new UnauthorizedAccessException("Not a push of this processor");
        }

        Assert.False(verifier.IsValid(headers["webhook-id"], headers["webhook-timestamp"], headers["webhook-signature"], body + " "));
    }

    [Fact]
    public async Task Streams()
    {
        string orderNumber = "ORD-0000001-3";
        using var ledger = tallyho.StreamProducer(eventType);
        StreamAppendResult written = await ledger.AppendAsync(new { order = orderNumber, total = 129.5 }, StreamAck.Flushed);

        Assert.Equal(1, written.Accepted);
        Assert.True(written.Flushed);
    }

    private static string Normalize(string code) => Regex.Replace(code, @"\s+", " ").Trim();

    private static string RepoRoot()
    {
        for (var dir = new DirectoryInfo(AppContext.BaseDirectory); dir is not null; dir = dir.Parent)
        {
            if (Directory.Exists(Path.Combine(dir.FullName, "docs")) && Directory.Exists(Path.Combine(dir.FullName, "clients")))
            {
                return dir.FullName;
            }
        }

        throw new InvalidOperationException("The repository root was not found.");
    }
}
