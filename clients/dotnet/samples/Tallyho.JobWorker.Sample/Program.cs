// A worker of the external processor named in TALLYHO_PROCESSOR: each item carries a number `n`, and
// its result is the square. It runs as a hosted service; SIGTERM (or Ctrl+C) drains it: batches in
// hand finish and complete before the process ends.
using System.Text.Json;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Tallyho.Client;
using Tallyho.Client.Jobs;

var builder = Host.CreateApplicationBuilder(args);
builder.Logging.SetMinimumLevel(LogLevel.Warning);
var tallyho = new TallyhoClient(new TallyhoClientOptions
{
    BaseAddress = new Uri(Environment.GetEnvironmentVariable("TALLYHO_BASE_URL") ?? "http://localhost:7071"),
    FunctionKey = Environment.GetEnvironmentVariable("TALLYHO_FUNCTION_KEY"),
});
var processor = Environment.GetEnvironmentVariable("TALLYHO_PROCESSOR") ?? "squares";
var worker = new JobWorker(
    tallyho,
    processor,
    (items, cancellationToken) =>
    {
        IReadOnlyList<ItemResult> results = items
            .Select(item => item.Data.TryGetProperty("n", out var n) && n.ValueKind == JsonValueKind.Number
                ? ItemResult.Succeeded(item.Id, new { square = n.GetInt64() * n.GetInt64(), by = "dotnet", attempt = item.Attempt })
                : ItemResult.Failed(item.Id, "invalid", "The item has no number n"))
            .ToArray();
        return Task.FromResult(results);
    },
    new JobWorkerOptions { Concurrency = 2, Wait = TimeSpan.FromSeconds(5) });
builder.Services.AddHostedService(_ => worker);
using var host = builder.Build();
await host.StartAsync();
Console.WriteLine($"worker of {processor} started");
await host.WaitForShutdownAsync();
Console.WriteLine($"worker of {processor} stopped: {worker.Batches} batches, {worker.Completed} completed, {worker.Lost} lost");
